/* csv.h - the tests' short names for the library's CSV reader (include/orrery/csv.h); a missing
 * column is a test-setup error and exits. */
#ifndef ORRERY_TEST_CSV_H
#define ORRERY_TEST_CSV_H

#include <stdio.h>
#include <stdlib.h>
#include "orrery/csv.h"

typedef orr_csv csv;

static inline int csv_load(csv *t, const char *path)
{
    orr_err err;
    if (orr_csv_load(t, path, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        return -1;
    }
    return 0;
}

static inline int csv_need(const csv *t, const char *name)
{
    int c = orr_csv_col(t, name);
    if (c < 0) {
        fprintf(stderr, "%s: no column %s\n", t->path, name);
        exit(1);
    }
    return c;
}

static inline const char *csv_get(const csv *t, int row, const char *name)
{
    return t->rows[row][csv_need(t, name)];
}
static inline double csv_num(const csv *t, int row, const char *name)
{
    csv_need(t, name);
    return orr_csv_num(t, row, name);
}
static inline void csv_free(csv *t) { orr_csv_free(t); }

#endif
