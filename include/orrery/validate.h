/*
 * validate.h - predictions of the published training measurements in data/validation, row by
 * row, with the configuration read from the csv and what the source leaves unstated assumed the
 * same way for every row (listed in each table's `assumptions`). Used by `orrery validate` and by
 * tests/test_valid_megatron.c, which holds the errors to the tolerances.
 */
#ifndef ORRERY_VALIDATE_H
#define ORRERY_VALIDATE_H

#include <stddef.h>
#include <stdint.h>
#include "orrery/core.h"

typedef enum orr_valid_set {
    ORR_VALID_MEGATRON_H100, /* megatron_lm_h100_weak_scaling.csv: Megatron-Core r0.8, H100 */
    ORR_VALID_SELENE_A100,   /* megatron_lm_a100_selene.csv, April-2021 rows: Megatron on A100 */
    ORR_VALID_SET_COUNT
} orr_valid_set;

typedef struct orr_valid_row {
    char model[48];
    uint32_t tp, pp, dp, gpus, gbs, mbs;
    double published_tflops;  /* TFLOP/s per GPU as published */
    double predicted_tflops;  /* from the predicted iteration time, in the source's FLOP convention */
    double error;             /* (predicted - published) / published */
    double iteration_s;       /* predicted */
    double peak_gib;          /* predicted peak reserved memory per GPU, GiB */
    int oom;                  /* the assumed configuration does not fit the GPU (an assumption is wrong) */
} orr_valid_row;

typedef struct orr_valid_table {
    const char *title;
    const char *convention;   /* the FLOP formula used to turn time into TFLOP/s */
    const char *assumptions;  /* what the source does not state, assumed for every row */
    orr_valid_row *rows;
    size_t n;
    double median_abs_error;
} orr_valid_table;

/* Predicts every row of the set; dir is the data/validation folder. */
int orr_validate(orr_valid_set set, const char *dir, orr_valid_table *out, orr_err *err);
void orr_valid_table_free(orr_valid_table *t);
/* A text table with units: one line per row, then the median. */
void orr_valid_table_print(const orr_valid_table *t, orr_buf *out);

#endif
