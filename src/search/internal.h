/*
 * internal.h - what the search module's files share: the base job and the spec of one trial.
 */
#ifndef ORRERY_SEARCH_INTERNAL_H
#define ORRERY_SEARCH_INTERNAL_H

#include "orrery/search.h"

/* The base job (spec file + predict's flags) and what the axes' default rules read from it. */
typedef struct search_base {
    orr_spec s;
    uint32_t gpus, gpn, layers, seq, gbs;
} search_base;

int search_base_init(const orr_search_opts *o, search_base *b, orr_err *err);
/* Every trial of the space in enumeration order (heap; *n of them), or an error when the space is
 * larger than ORR_SEARCH_MAX_TRIALS. */
int search_enumerate(const orr_search_opts *o, const search_base *b, orr_trial **out, uint32_t *n, orr_err *err);
/* The resolved spec of a trial: the base with the trial's axis values applied as flags. */
int search_trial_spec(const search_base *b, const orr_trial *t, orr_spec *s, orr_err *err);
/* The short key of a resolve error message: divisibility, framework, pipeline or other. */
const char *search_reason_key(const char *msg);

#endif
