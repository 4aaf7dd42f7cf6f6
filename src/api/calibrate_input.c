/*
 * calibrate_input.c - the measurements `orrery calibrate` reads (calibrate.h, docs/calibrate.md):
 * nccl-tests output, a CSV of runs with their measured step times, and Megatron-LM training logs.
 *
 * nccl-tests (github.com/NVIDIA/nccl-tests, src/util.cu) prints its header as '#' lines: the
 * program ("# Collective test starting: all_reduce_perf", 2.14 and later), one line per rank
 * ("#  Rank  0 Group  0 Pid 1234 on node01 device  0 [0000:19:00] NVIDIA H100 80GB HBM3"), and the
 * column names ("#  size  count  type  redop  root  time  algbw  busbw  #wrong  time ..."); then one
 * row per message size, out-of-place results before in-place ones. The column names say where the
 * two times are (older versions have no root column; -I adds per-iteration columns; -T adds a
 * timestamp), the rank lines give the ranks and, by their distinct host names, the nodes. Anything
 * else in the file (ssh warnings, "NCCL version ...", NCCL_DEBUG lines) is not a row: a row is a
 * line whose first word is a whole number.
 */
#include "orrery/calibrate.h"
#include "orrery/csv.h"

#include "spec/yaml.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define LINE_MAX_CHARS 4096   /* longer lines are not nccl-tests' own: skipped, or an error for a row */
#define MAX_WORDS 64

/* ---- nccl-tests ---- */

/* The nccl-tests programs Orrery models, longest names first (all_reduce before reduce). */
static const struct { const char *name, *alt; orr_coll_kind kind; } programs[] = {
    {"reduce_scatter", "reducescatter", ORR_COLL_REDUCESCATTER},
    {"all_reduce", "allreduce", ORR_COLL_ALLREDUCE},
    {"all_gather", "allgather", ORR_COLL_ALLGATHER},
    {"alltoall", "all_to_all", ORR_COLL_ALLTOALL},
    {"broadcast", "bcast", ORR_COLL_BROADCAST},
    {"reduce", "reduce", ORR_COLL_REDUCE},
};
#define NPROGRAMS (sizeof programs / sizeof programs[0])

/* The collective a program or file name names; -1 if none (alltoallv, gather, scatter, sendrecv and
 * hypercube have no model here: none of the names above is in theirs but alltoall in alltoallv). */
static int program_kind(const char *s)
{
    if (strstr(s, "alltoallv")) return -1;
    for (size_t i = 0; i < NPROGRAMS; i++)
        if (strstr(s, programs[i].name) || strstr(s, programs[i].alt)) return (int)programs[i].kind;
    return -1;
}

/* What the parser knows at a point of the file. */
typedef struct nccl_state {
    const char *file;
    int kind;                  /* the collective (-1: not known yet) */
    int from_header;           /* kind came from a "Collective test starting" line */
    uint64_t *hosts;           /* hash of each rank line's host name */
    uint32_t ranks;
    int rows_since_devices;    /* result rows since the last "# Using devices" */
    int t_oop, t_ip, wrong;    /* word index of the out-of-place time, in-place time (-1: none), #wrong */
} nccl_state;

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Distinct hosts among the rank lines seen. */
static uint32_t count_nodes(const nccl_state *st)
{
    uint64_t *h = orr_xmalloc((st->ranks ? st->ranks : 1) * sizeof *h);
    memcpy(h, st->hosts, st->ranks * sizeof *h);
    qsort(h, st->ranks, sizeof *h, cmp_u64);
    uint32_t n = st->ranks ? 1 : 0;
    for (uint32_t i = 1; i < st->ranks; i++) n += h[i] != h[i - 1];
    free(h);
    return n;
}

/* Splits line (modified) into at most MAX_WORDS words; returns their count. */
static int split_words(char *line, char **w)
{
    int n = 0;
    for (char *p = line; *p && n < MAX_WORDS;) {
        while (*p == ' ' || *p == '\t' || *p == '\r') p++;
        if (!*p) break;
        w[n++] = p;
        while (*p && *p != ' ' && *p != '\t' && *p != '\r') p++;
        if (*p) *p++ = 0;
    }
    return n;
}

static int all_digits(const char *s)
{
    if (!*s) return 0;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s)) return 0;
    return 1;
}

/* A '#' line: the program, a rank, the start of the device list, or the column names. */
static int header_line(nccl_state *st, char **w, int n, const char *where, orr_err *err)
{
    if (n >= 4 && strcmp(w[0], "Collective") == 0 && strcmp(w[1], "test") == 0 && strcmp(w[2], "starting:") == 0) {
        st->kind = program_kind(w[3]);
        st->from_header = 1;
        if (st->kind < 0)
            return orr_fail(err, "%s: %s: no model of this collective (calibrate reads all_reduce_perf, "
                                 "all_gather_perf, reduce_scatter_perf, alltoall_perf, broadcast_perf, reduce_perf)",
                            where, w[3]);
        return 0;
    }
    if (n >= 2 && strcmp(w[0], "Using") == 0 && strcmp(w[1], "devices") == 0) {
        if (st->rows_since_devices) st->ranks = 0; /* a second run in the same file */
        st->rows_since_devices = 0;
        return 0;
    }
    if (n >= 2 && strcmp(w[0], "Rank") == 0 && all_digits(w[1])) {
        int on = 2;
        while (on < n - 1 && strcmp(w[on], "on") != 0) on++;
        if (on >= n - 1) return orr_fail(err, "%s: a rank line without \"on HOST\"", where);
        if (st->ranks >= ORR_CALIB_MAX_RANKS)
            return orr_fail(err, "%s: more than %d ranks in one run", where, ORR_CALIB_MAX_RANKS);
        if (!st->hosts) st->hosts = orr_xmalloc(ORR_CALIB_MAX_RANKS * sizeof *st->hosts);
        st->hosts[st->ranks++] = orr_hash_str(w[on + 1]);
        return 0;
    }
    if (n >= 2 && strcmp(w[0], "size") == 0 && strcmp(w[1], "count") == 0) {
        st->t_oop = st->t_ip = st->wrong = -1;
        for (int i = 2; i < n; i++) {
            int is_time = strcmp(w[i], "time") == 0 || strcmp(w[i], "cputime") == 0;
            if (is_time && st->t_oop < 0) st->t_oop = i;
            else if (is_time && st->t_ip < 0) st->t_ip = i;
            else if (strcmp(w[i], "#wrong") == 0 && st->wrong < 0) st->wrong = i;
        }
        if (st->t_oop < 0) return orr_fail(err, "%s: column names without a time column", where);
    }
    return 0;
}

/* A result row: size, count, type, ..., the times. */
static int result_row(orr_nccl_rows *t, nccl_state *st, char **w, int n, const char *where, orr_err *err)
{
    int need = (st->t_ip > st->t_oop ? st->t_ip : st->t_oop) + 1;
    if (n < need)
        return orr_fail(err, "%s: a result row of %d words, expected at least %d (size count type ... time algbw "
                             "busbw #wrong, out-of-place then in-place)", where, n, need);
    uint64_t bytes;
    double oop, ip = 0;
    if (orr_parse_u64(w[0], &bytes)) return orr_fail(err, "%s: size %s: expected a number of bytes", where, w[0]);
    if (orr_parse_num(w[st->t_oop], &oop) || !(oop > 0) || (st->t_ip >= 0 && (orr_parse_num(w[st->t_ip], &ip) || !(ip > 0))))
        return orr_fail(err, "%s: expected times in microseconds (above 0) in columns %d and %d", where, st->t_oop + 1,
                        st->t_ip + 1);
    if (st->wrong >= 0 && st->wrong < n && strcmp(w[st->wrong], "0") != 0 && strcmp(w[st->wrong], "N/A") != 0)
        return orr_fail(err, "%s: #wrong is %s: nccl-tests found wrong results in this row; measure again or delete "
                             "the row", where, w[st->wrong]);
    st->rows_since_devices++;
    if (bytes == 0) return 0; /* all_gather's sizes below one element per rank */
    if (st->kind < 0)
        return orr_fail(err, "%s: which collective? the file has no \"# Collective test starting: NAME\" line (nccl-tests "
                             "2.14 and later print it) and its name says none of all_reduce, all_gather, "
                             "reduce_scatter, alltoall, broadcast, reduce: add the line or rename the file", where);
    if (st->ranks == 0)
        return orr_fail(err, "%s: no \"#  Rank N ... on HOST\" lines before the results: the ranks and nodes of the run "
                             "are not known", where);
    uint32_t nodes = count_nodes(st);
    if (st->ranks % nodes)
        return orr_fail(err, "%s: %u ranks on %u hosts: not the same number on every node", where, st->ranks, nodes);
    if (t->n >= ORR_CALIB_MAX_NCCL_ROWS)
        return orr_fail(err, "%s: more than %d nccl-tests rows in all", where, ORR_CALIB_MAX_NCCL_ROWS);
    if (t->n == t->cap) orr_grow((void **)&t->v, &t->cap, t->n + 1, sizeof *t->v);
    orr_nccl_row *r = &t->v[t->n++];
    memset(r, 0, sizeof *r);
    r->kind = (orr_coll_kind)st->kind;
    r->ranks = st->ranks;
    r->nodes = nodes;
    r->bytes = bytes;
    r->time_us = st->t_ip >= 0 && ip < oop ? ip : oop;
    snprintf(r->where, sizeof r->where, "%s", where);
    return 0;
}

int orr_nccl_tests_parse(orr_nccl_rows *t, const char *name, const char *text, size_t len, orr_err *err)
{
    nccl_state st = {.file = name, .t_oop = 5, .t_ip = 9, .wrong = 8};
    const char *base = strrchr(name, '/');
    st.kind = program_kind(base ? base + 1 : name);
    size_t before = t->n;
    char line[LINE_MAX_CHARS + 1], *w[MAX_WORDS], where[160];
    int rc = 0, lineno = 0;
    for (size_t i = 0; i < len && rc == 0;) {
        size_t e = i;
        while (e < len && text[e] != '\n') e++;
        lineno++;
        size_t n = e - i;
        snprintf(where, sizeof where, "%s:%d", name, lineno);
        int comment = n > 0 && text[i] == '#';
        if (n <= LINE_MAX_CHARS && !memchr(text + i, 0, n)) {
            memcpy(line, text + i, n);
            line[n] = 0;
            int nw = split_words(line + comment, w);
            if (comment) rc = header_line(&st, w, nw, where, err);
            else if (nw > 0 && all_digits(w[0])) rc = result_row(t, &st, w, nw, where, err);
        } else if (!comment && n > 0 && isdigit((unsigned char)text[i])) {
            rc = orr_fail(err, "%s: a line of more than %d characters where a result row was expected", where,
                          LINE_MAX_CHARS);
        }
        i = e + 1;
    }
    free(st.hosts);
    if (rc == 0 && t->n == before)
        rc = orr_fail(err, "%s: no nccl-tests result rows (lines of size, count, type, ... times, as all_reduce_perf "
                           "prints them)", name);
    if (rc) t->n = before;
    return rc;
}

int orr_nccl_tests_load(orr_nccl_rows *t, const char *path, orr_err *err)
{
    size_t len;
    char *text = orr_read_file(path, &len, err);
    if (!text) return -1;
    int rc = orr_nccl_tests_parse(t, path, text, len, err);
    free(text);
    return rc;
}

void orr_nccl_rows_free(orr_nccl_rows *t)
{
    free(t->v);
    memset(t, 0, sizeof *t);
}

/* ---- Step times ---- */

static orr_step_row *new_step(orr_step_rows *t, const orr_spec *base, const char *where, orr_err *err)
{
    if (t->n >= ORR_CALIB_MAX_STEPS) {
        orr_fail(err, "%s: more than %d measured step times in all (each is predicted at every step of the fit)",
                 where, ORR_CALIB_MAX_STEPS);
        return NULL;
    }
    if (t->n == t->cap) orr_grow((void **)&t->v, &t->cap, t->n + 1, sizeof *t->v);
    orr_step_row *r = &t->v[t->n++];
    r->spec = *base;
    snprintf(r->where, sizeof r->where, "%s", where);
    return r;
}

/* A cell without the spaces around it, into buf. */
static const char *trimmed(const char *s, char *buf, size_t cap)
{
    while (*s == ' ' || *s == '\t') s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r')) n--;
    if (n >= cap) n = cap - 1;
    memcpy(buf, s, n);
    buf[n] = 0;
    return buf;
}

/* Whether "--col" is an on/off flag of predict (1), takes a value (0), or is none (-1). */
static int flag_kind(const char *flag)
{
    orr_flag_info f;
    for (size_t i = 0; orr_flag_info_at(i, &f) == 0; i++)
        if (f.predict && strcmp(f.name, flag) == 0) return f.expects ? 0 : 1;
    return -1;
}

/* The flag one cell of column col stands for into arg ("" for none: an empty cell, or false for an
 * on/off flag without a --no- form); -1 on a bad on/off value. */
static int cell_flag(const char *col, const char *cell, char *arg, size_t cap, const char *where, orr_err *err)
{
    arg[0] = 0;
    if (!cell[0]) return 0;
    char flag[80];
    snprintf(flag, sizeof flag, "--%s", col);
    if (flag_kind(flag) != 1) {
        if ((size_t)snprintf(arg, cap, "%s=%s", flag, cell) >= cap)
            return orr_fail(err, "%s: column %s: value longer than %zu characters", where, col, cap - 64);
        return 0;
    }
    int on;
    if (strcasecmp(cell, "true") == 0 || strcasecmp(cell, "yes") == 0 || strcasecmp(cell, "on") == 0 ||
        strcmp(cell, "1") == 0)
        on = 1;
    else if (strcasecmp(cell, "false") == 0 || strcasecmp(cell, "no") == 0 || strcasecmp(cell, "off") == 0 ||
             strcmp(cell, "0") == 0)
        on = 0;
    else {
        char q[80];
        orr_quote(cell, q, sizeof q);
        return orr_fail(err, "%s: column %s (an on/off flag): expected true or false, got %s", where, col, q);
    }
    char no[88];
    snprintf(no, sizeof no, "--no-%s", col);
    if (on) snprintf(arg, cap, "%s", flag);
    else if (flag_kind(no) == 1) snprintf(arg, cap, "%s", no);
    return 0;
}

/* One run of the CSV: base, the row's flags over it, and its measured time. */
static int csv_run(orr_step_rows *t, const orr_csv *c, int r, const orr_spec *base, int time_col, double time_scale,
                   orr_err *err)
{
    char where[400], cell[512], name[64] = "";
    int name_col = orr_csv_col(c, "name");
    if (name_col >= 0) trimmed(c->rows[r][name_col], name, sizeof name);
    snprintf(where, sizeof where, "%s row %d%s%s%s", c->path, r, name[0] ? " (" : "", name, name[0] ? ")" : "");
    double v;
    trimmed(c->rows[r][time_col], cell, sizeof cell);
    if (orr_parse_num(cell, &v) || !(v > 0) || v * time_scale > 1e6)
        return orr_fail(err, "%s: %s: expected a time above 0 (at most 1e6 s), got \"%s\"", where, c->rows[0][time_col],
                        cell);
    orr_step_row *row = new_step(t, base, where, err);
    if (!row) return -1;
    row->step_s = v * time_scale;
    char **argv = orr_xcalloc((size_t)c->ncols, sizeof *argv);
    int argc = 0, rc = 0;
    for (int k = 0; k < c->ncols && rc == 0; k++) {
        if (k == time_col || k == name_col) continue;
        char col[64], arg[600];
        trimmed(c->rows[0][k], col, sizeof col);
        trimmed(c->rows[r][k], cell, sizeof cell);
        rc = cell_flag(col, cell, arg, sizeof arg, where, err);
        if (rc == 0 && arg[0]) argv[argc++] = orr_xstrdup(arg);
    }
    orr_err e;
    if (rc == 0 && orr_spec_apply_flags(&row->spec, argc, argv, &e)) rc = orr_fail(err, "%s: %s", where, e.msg);
    for (int k = 0; k < argc; k++) free(argv[k]);
    free(argv);
    if (rc) t->n--;
    return rc;
}

int orr_steps_csv_load(orr_step_rows *t, const char *path, const orr_spec *base, orr_err *err)
{
    orr_csv c;
    if (orr_csv_load(&c, path, err)) return -1;
    int ms = orr_csv_col(&c, "step_ms"), s = orr_csv_col(&c, "step_s"), rc = 0;
    size_t before = t->n;
    if ((ms >= 0) == (s >= 0))
        rc = orr_fail(err, "%s: expected one column step_ms or step_s (the measured iteration time), got %s", path,
                      ms >= 0 ? "both" : "neither");
    else if (c.nrows < 2)
        rc = orr_fail(err, "%s: no runs (a header, then one run per row)", path);
    for (int r = 1; r < c.nrows && rc == 0; r++) rc = csv_run(t, &c, r, base, ms >= 0 ? ms : s, ms >= 0 ? 1e-3 : 1, err);
    orr_csv_free(&c);
    if (rc) t->n = before;
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define MEGATRON_MARK "elapsed time per iteration (ms):"
#define MEGATRON_MAX_VALUES 1000000

int orr_megatron_log_parse(const char *name, const char *text, size_t len, double *step_s, size_t *nvalues,
                           orr_err *err)
{
    const size_t mlen = strlen(MEGATRON_MARK);
    double *v = NULL;
    size_t n = 0, cap = 0;
    int line = 1, rc = 0;
    for (size_t i = 0; i + mlen <= len && rc == 0; i++) {
        if (text[i] == '\n') line++;
        if (text[i] != 'e' || memcmp(text + i, MEGATRON_MARK, mlen) != 0) continue;
        size_t p = i + mlen, k = 0;
        char num[40];
        while (p < len && text[p] == ' ') p++;
        while (p < len && k < sizeof num - 1 && text[p] && (isdigit((unsigned char)text[p]) || strchr(".eE+-", text[p])))
            num[k++] = text[p++];
        num[k] = 0;
        double ms;
        if (orr_parse_num(num, &ms) || !(ms > 0) || ms > 1e9)
            rc = orr_fail(err, "%s:%d: \"" MEGATRON_MARK "\" followed by no time in ms", name, line);
        else if (n == MEGATRON_MAX_VALUES)
            rc = orr_fail(err, "%s:%d: more than %d iteration times", name, line, MEGATRON_MAX_VALUES);
        else {
            if (n == cap) orr_grow((void **)&v, &cap, n + 1, sizeof *v);
            v[n++] = ms;
        }
        i = p - 1;
    }
    if (rc == 0 && n == 0)
        rc = orr_fail(err, "%s: no \"" MEGATRON_MARK " X\" line (Megatron-LM prints one every --log-interval "
                           "iterations)", name);
    if (rc == 0) {
        size_t skip = n > 1; /* the first interval includes start-up and warm-up */
        qsort(v + skip, n - skip, sizeof *v, cmp_double);
        size_t m = n - skip;
        double med = m % 2 ? v[skip + m / 2] : 0.5 * (v[skip + m / 2 - 1] + v[skip + m / 2]);
        *step_s = med / 1e3;
        *nvalues = n;
    }
    free(v);
    return rc;
}

int orr_megatron_log_load(orr_step_rows *t, const char *path, const orr_spec *base, orr_err *err)
{
    size_t len, n;
    double step_s;
    char *text = orr_read_file(path, &len, err);
    if (!text) return -1;
    int rc = orr_megatron_log_parse(path, text, len, &step_s, &n, err);
    free(text);
    if (rc) return -1;
    char where[400];
    size_t used = n > 1 ? n - 1 : n;
    snprintf(where, sizeof where, "median of %zu iteration time%s in %.300s", used, used == 1 ? "" : "s", path);
    orr_step_row *r = new_step(t, base, where, err);
    if (!r) return -1;
    r->step_s = step_s;
    return 0;
}

void orr_step_rows_free(orr_step_rows *t)
{
    free(t->v);
    memset(t, 0, sizeof *t);
}
