/* spec_text.h - the tests' way to make a resolved spec from YAML text and a line of flags (split at
 * spaces, as a shell would split them without quotes). */
#ifndef ORRERY_TEST_SPEC_TEXT_H
#define ORRERY_TEST_SPEC_TEXT_H

#include <stdio.h>
#include <string.h>
#include "orrery/spec.h"

/* orr_spec_init, the YAML (named `name` in messages), the flags, orr_spec_resolve; -1 with err set
 * at the first step that fails. */
static inline int spec_from_text(orr_spec *s, const char *name, const char *yaml, const char *flags, orr_err *err)
{
    orr_spec_init(s);
    if (orr_spec_load_text(s, name, yaml, strlen(yaml), err)) return -1;
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", flags);
    char *argv[96];
    int argc = 0;
    for (char *t = strtok(buf, " "); t && argc < 96; t = strtok(NULL, " ")) argv[argc++] = t;
    if (orr_spec_apply_flags(s, argc, argv, err)) return -1;
    return orr_spec_resolve(s, err);
}

/* The median of v[0..n) (sorted in place); 0 for none. */
static int spec_text_cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
static inline double median_of(double *v, int n)
{
    if (n == 0) return 0;
    qsort(v, (size_t)n, sizeof *v, spec_text_cmp_d);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif
