/*
 * csv.c - the CSV reader of include/orrery/csv.h.
 */
#include "orrery/csv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void push_row(orr_csv *t, char **row, int ncell, size_t *cap)
{
    if ((size_t)t->nrows == *cap) {
        *cap = *cap ? 2 * *cap : 16;
        t->rows = orr_xrealloc(t->rows, *cap * sizeof *t->rows);
    }
    t->rows[t->nrows++] = row;
    (void)ncell;
}

int orr_csv_load(orr_csv *t, const char *path, orr_err *err)
{
    memset(t, 0, sizeof *t);
    snprintf(t->path, sizeof t->path, "%s", path);
    size_t n = 0;
    char *buf = orr_read_file(path, &n, err);
    if (!buf) return -1;
    size_t rcap = 0;
    char **row = NULL;
    size_t ncell = 0, ccap = 0, cl = 0;
    char *cell = orr_xmalloc(n + 1);
    int inq = 0;
    for (size_t i = 0; i <= n; i++) {
        char c = i < n ? buf[i] : 0;
        if (inq) {
            if (c == '"' && i + 1 < n && buf[i + 1] == '"') cell[cl++] = '"', i++;
            else if (c == '"') inq = 0;
            else if (c) cell[cl++] = c;
            else inq = 0; /* unterminated quote at end of file: close it */
            if (c) continue;
        }
        if (c == '"' && cl == 0) {
            inq = 1;
            continue;
        }
        if (c == ',' || c == '\n' || c == 0) {
            if (c == 0 && ncell == 0 && cl == 0) break;
            cell[cl] = 0;
            ORR_PUSH(row, ncell, ccap, orr_xstrdup(cell));
            cl = 0;
            if (c == ',') continue;
            if (t->nrows == 0) t->ncols = (int)ncell;
            while (ncell < (size_t)t->ncols) ORR_PUSH(row, ncell, ccap, orr_xstrdup(""));
            while (ncell > (size_t)t->ncols) free(row[--ncell]); /* extra cells are dropped */
            push_row(t, row, (int)ncell, &rcap);
            row = NULL;
            ncell = ccap = 0;
            if (c == 0) break;
        } else if (c != '\r') {
            cell[cl++] = c;
        }
    }
    free(row);
    free(cell);
    free(buf);
    if (t->nrows == 0 || t->ncols == 0) {
        orr_csv_free(t);
        return orr_fail(err, "%s: empty CSV file (expected a header row)", path);
    }
    return 0;
}

int orr_csv_col(const orr_csv *t, const char *name)
{
    for (int c = 0; c < t->ncols; c++)
        if (strcmp(t->rows[0][c], name) == 0) return c;
    return -1;
}

const char *orr_csv_get(const orr_csv *t, int row, const char *name)
{
    int c = orr_csv_col(t, name);
    return c < 0 || row <= 0 || row >= t->nrows ? "" : t->rows[row][c];
}

double orr_csv_num(const orr_csv *t, int row, const char *name)
{
    return strtod(orr_csv_get(t, row, name), NULL);
}

void orr_csv_free(orr_csv *t)
{
    for (int r = 0; r < t->nrows; r++) {
        for (int c = 0; c < t->ncols; c++) free(t->rows[r][c]);
        free(t->rows[r]);
    }
    free(t->rows);
    memset(t, 0, sizeof *t);
}
