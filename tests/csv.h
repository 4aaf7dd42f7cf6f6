/*
 * csv.h - a small CSV reader for the validation tests: RFC 4180 quoting, a header row, fields by
 * column name. Whole file in memory; fine for the few-kB files of shared/validation.
 */
#ifndef ORRERY_TEST_CSV_H
#define ORRERY_TEST_CSV_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct csv {
    char ***rows;   /* rows[r][c], row 0 is the header */
    int nrows, ncols;
} csv;

static int csv_load(csv *t, const char *path)
{
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    size_t k;
    while ((k = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += k;
        if (n + 1 >= cap) buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    buf[n] = 0;
    int rcap = 0;
    char **row = NULL;
    int ncell = 0, ccap = 0;
    char *cell = malloc(n + 1);
    size_t cl = 0;
    int inq = 0;
    for (size_t i = 0; i <= n; i++) {
        char c = buf[i];
        if (inq) {
            if (c == '"' && buf[i + 1] == '"') { cell[cl++] = '"'; i++; }
            else if (c == '"') inq = 0;
            else if (c) cell[cl++] = c;
            continue;
        }
        if (c == '"') { inq = 1; continue; }
        if (c == ',' || c == '\n' || c == 0) {
            if (c == 0 && ncell == 0 && cl == 0) break;
            cell[cl] = 0;
            if (ncell == ccap) row = realloc(row, sizeof(char *) * (size_t)(ccap = ccap ? 2 * ccap : 16));
            row[ncell++] = strdup(cell);
            cl = 0;
            if (c != ',') {
                if (t->nrows == rcap) t->rows = realloc(t->rows, sizeof(char **) * (size_t)(rcap = rcap ? 2 * rcap : 16));
                t->rows[t->nrows++] = row;
                if (t->nrows == 1) t->ncols = ncell;
                if (ncell < t->ncols) { /* pad short rows */
                    row = realloc(row, sizeof(char *) * (size_t)t->ncols);
                    while (ncell < t->ncols) row[ncell++] = strdup("");
                }
                row = NULL;
                ncell = ccap = 0;
                if (c == 0) break;
            }
        } else if (c != '\r') {
            cell[cl++] = c;
        }
    }
    free(row);
    free(cell);
    free(buf);
    return t->nrows > 0 ? 0 : -1;
}

static int csv_col(const csv *t, const char *name)
{
    for (int c = 0; c < t->ncols; c++)
        if (strcmp(t->rows[0][c], name) == 0) return c;
    fprintf(stderr, "csv: no column %s\n", name);
    exit(1);
}

static const char *csv_get(const csv *t, int row, const char *name) { return t->rows[row][csv_col(t, name)]; }
static double csv_num(const csv *t, int row, const char *name) { return atof(csv_get(t, row, name)); }

static void csv_free(csv *t)
{
    for (int r = 0; r < t->nrows; r++) {
        for (int c = 0; c < t->ncols; c++) free(t->rows[r][c]);
        free(t->rows[r]);
    }
    free(t->rows);
    memset(t, 0, sizeof *t);
}

#endif
