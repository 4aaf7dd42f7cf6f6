/*
 * csv.h - a small CSV reader (RFC 4180 quoting, a header row, fields by column name) for the
 * published measurements Orrery validates against. The whole file is read into memory.
 */
#ifndef ORRERY_CSV_H
#define ORRERY_CSV_H

#include "orrery/core.h"

typedef struct orr_csv {
    char ***rows;   /* rows[r][c]; row 0 is the header; every row has ncols cells */
    int nrows, ncols;
    char path[256];
} orr_csv;

/* Reads path; -1 with a message naming it if it cannot be read or has no header. */
int orr_csv_load(orr_csv *t, const char *path, orr_err *err);
/* Column index of a header name, or -1. */
int orr_csv_col(const orr_csv *t, const char *name);
/* Cell (row >= 1) of a named column; "" if the column is absent. */
const char *orr_csv_get(const orr_csv *t, int row, const char *name);
/* The leading number of a cell ("8 (assumed)" reads 8); 0 if none. */
double orr_csv_num(const orr_csv *t, int row, const char *name);
void orr_csv_free(orr_csv *t);

#endif
