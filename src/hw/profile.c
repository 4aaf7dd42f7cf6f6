/*
 * profile.c - calibration profiles (hw.h, docs/calibrate.md): a few GPU and cluster fields that
 * `orrery calibrate` fitted on a user's measurements, over the catalog entries they were fitted
 * from. A profile file reads
 *
 *     orrery_profile: 1
 *     gpu:     {base: H100-SXM5-80GB, gemm_eff: 0.71, attn_fwd_eff: 0.52, attn_bwd_eff: 0.43}
 *     cluster: {base: dgx-h100, nvlink_eff: 0.58, coll_base_us: 6.4}
 *
 * with the keys, units and ranges of data/gpus.yaml and data/clusters.yaml (the field tables of
 * src/hw/catalog.c: one home for what a key means). The spec's resolve applies it through
 * orr_hw_profile_apply, the one place a profile changes a job's hardware.
 */
#include "orrery/hw.h"

#include "spec/yaml.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Bytes of the member a field sets (for copying and comparing it whatever its type). */
static size_t member_size(const orr_yfield *f)
{
    switch (f->type) {
    case ORR_YF_U32: return sizeof(uint32_t);
    case ORR_YF_BOOL:
    case ORR_YF_CHOICE: return sizeof(int);
    case ORR_YF_STR: return f->size;
    case ORR_YF_DOUBLE: return sizeof(double);
    case ORR_YF_U64: return sizeof(uint64_t);
    case ORR_YF_I64: return sizeof(int64_t);
    }
    return 0;
}

/* Whether two members of field f hold the same value (doubles: to 1e-12, so that a value written in
 * the file's unit and read back is the same). */
static int same_member(const orr_yfield *f, const char *a, const char *b)
{
    if (f->type != ORR_YF_DOUBLE) return memcmp(a, b, member_size(f)) == 0;
    double x, y;
    memcpy(&x, a, sizeof x);
    memcpy(&y, b, sizeof y);
    return fabs(x - y) <= 1e-12 * fmax(fabs(x), fabs(y));
}

static const char *part_name(int is_gpu) { return is_gpu ? "gpu" : "cluster"; }

/* The catalog entry `name` of the part into out (an orr_gpu or orr_cluster). */
static int catalog_entry(int is_gpu, const char *name, void *out, orr_err *err)
{
    return is_gpu ? orr_catalog_gpu(name, out, err) : orr_catalog_cluster(name, out, err);
}

int orr_hw_profile_init(orr_hw_profile *p, const char *gpu, const char *cluster, orr_err *err)
{
    memset(p, 0, sizeof *p);
    if (gpu && catalog_entry(1, gpu, &p->gpu, err)) return -1;
    if (cluster && catalog_entry(0, cluster, &p->cluster, err)) return -1;
    p->has_gpu = gpu != NULL;
    p->has_cluster = cluster != NULL;
    return 0;
}

int orr_hw_profile_mark(orr_hw_profile *p, int is_gpu, const char *key)
{
    size_t n;
    const orr_yfield *f = orr_hw_field_table(is_gpu, &n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(f[i].key, key) == 0) {
            *(is_gpu ? &p->gpu_set : &p->cluster_set) |= 1ull << i;
            return 0;
        }
    return -1;
}

/* Takes the fields of hw (an orr_gpu or orr_cluster) that differ from the catalog's into the part. */
static void take_part(orr_hw_profile *p, int is_gpu, const void *hw)
{
    union { orr_gpu g; orr_cluster c; } cat;
    orr_err e;
    const char *name = is_gpu ? p->gpu.name : p->cluster.name;
    if (catalog_entry(is_gpu, name, &cat, &e)) return;
    size_t nf;
    const orr_yfield *f = orr_hw_field_table(is_gpu, &nf);
    char *dst = is_gpu ? (char *)&p->gpu : (char *)&p->cluster;
    for (size_t i = 0; i < nf; i++) {
        size_t off = f[i].offset, sz = member_size(&f[i]);
        int alias = 0; /* hbm_gb after hbm_gib, nvlink_gbps after nvlink_bidir_GBps: one key per member */
        for (size_t j = 0; j < i; j++) alias |= f[j].offset == off;
        if (alias || same_member(&f[i], (const char *)hw + off, (const char *)&cat + off)) continue;
        memcpy(dst + off, (const char *)hw + off, sz);
        *(is_gpu ? &p->gpu_set : &p->cluster_set) |= 1ull << i;
    }
    if (is_gpu) orr_gpu_fill_peaks(&p->gpu);
}

void orr_hw_profile_take_changes(orr_hw_profile *p, const orr_gpu *g, const orr_cluster *c)
{
    if (p->has_gpu && g) take_part(p, 1, g);
    if (p->has_cluster && c) take_part(p, 0, c);
}

/* One part, gpu: or cluster:, a mapping with base: NAME and fields of the part's table. */
static int read_part(orr_hw_profile *p, int is_gpu, const orr_ynode *n, orr_err *err)
{
    static const char *const extra[] = {"base", NULL};
    size_t nf;
    const orr_yfield *f = orr_hw_field_table(is_gpu, &nf);
    if (orr_y_check_keys(n, f, nf, extra, err)) return -1;
    const orr_ynode *base = orr_y_get(n, "base");
    if (!base)
        return orr_y_fail(n, err, "missing key base (the catalog %s the profile was measured on; see `orrery list "
                                  "%ss`)", is_gpu ? "GPU" : "node type", is_gpu ? "gpu" : "cluster");
    char name[128];
    orr_err e;
    if (orr_y_str(base, name, sizeof name, err)) return -1;
    if (catalog_entry(is_gpu, name, is_gpu ? (void *)&p->gpu : (void *)&p->cluster, &e))
        return orr_y_fail(base, err, "%s", e.msg);
    if (is_gpu && orr_y_get(n, "hbm_gib") && orr_y_get(n, "hbm_gb"))
        return orr_y_fail(orr_y_get(n, "hbm_gb"), err, "give hbm_gib or hbm_gb, not both");
    if (is_gpu && orr_y_get(n, "nvlink_bidir_GBps") && orr_y_get(n, "nvlink_gbps"))
        return orr_y_fail(orr_y_get(n, "nvlink_gbps"), err, "give nvlink_bidir_GBps or nvlink_gbps, not both");
    if (orr_y_apply_fields(is_gpu ? (void *)&p->gpu : (void *)&p->cluster, f, nf, n, err)) return -1;
    if (is_gpu) orr_gpu_fill_peaks(&p->gpu);
    for (const orr_ynode *c = n->first; c; c = c->next) orr_hw_profile_mark(p, is_gpu, c->key);
    *(is_gpu ? &p->has_gpu : &p->has_cluster) = 1;
    return 0;
}

static int read_profile(orr_hw_profile *p, const orr_ynode *root, orr_err *err)
{
    static const char *const keys[] = {"orrery_profile", "gpu", "cluster", NULL};
    if (orr_y_check_keys(root, NULL, 0, keys, err)) return -1;
    const orr_ynode *v = orr_y_get(root, "orrery_profile"), *n;
    uint64_t version;
    if (!v)
        return orr_y_fail(root, err, "missing key orrery_profile (the format's version, %d: a profile is what "
                                     "`orrery calibrate` writes, docs/calibrate.md)", ORR_PROFILE_VERSION);
    if (orr_y_uint(v, 1, 1000000, &version, err)) return -1;
    if (version != ORR_PROFILE_VERSION)
        return orr_y_fail(v, err, "version %llu is not one this orrery reads (%d)", (unsigned long long)version,
                          ORR_PROFILE_VERSION);
    if ((n = orr_y_get(root, "gpu")) && read_part(p, 1, n, err)) return -1;
    if ((n = orr_y_get(root, "cluster")) && read_part(p, 0, n, err)) return -1;
    if (!p->has_gpu && !p->has_cluster)
        return orr_y_fail(root, err, "expected a gpu: or a cluster: part (or both), each with base: NAME");
    return 0;
}

int orr_hw_profile_parse(orr_hw_profile *p, const char *name, const char *text, size_t len, orr_err *err)
{
    memset(p, 0, sizeof *p);
    orr_ydoc doc;
    if (orr_yaml_parse(&doc, name, text, len, err)) return -1;
    int rc = doc.root ? read_profile(p, doc.root, err)
                      : orr_fail(err, "%s: empty profile (expected orrery_profile: %d and gpu: / cluster: parts)", name,
                                 ORR_PROFILE_VERSION);
    orr_yaml_free(&doc);
    if (rc == 0 && strlen(name) >= sizeof p->path)
        rc = orr_fail(err, "%s: path longer than %zu characters", name, sizeof p->path - 1);
    if (rc) {
        memset(p, 0, sizeof *p);
        return -1;
    }
    strcpy(p->path, name);
    return 0;
}

int orr_hw_profile_load(orr_hw_profile *p, const char *path, orr_err *err)
{
    size_t len = 0;
    char *text = orr_read_file(path, &len, err);
    if (!text) return -1;
    int rc = orr_hw_profile_parse(p, path, text, len, err);
    free(text);
    return rc;
}

/* One part over the job's GPU or cluster (dst): its set fields, unless the spec or a flag changed
 * the same field from the catalog (then an error: two values, neither obviously meant). */
static int apply_part(const orr_hw_profile *p, int is_gpu, void *dst, orr_err *err)
{
    char file[sizeof p->path + 2] = ""; /* "FILE " or nothing, for "profile FILE: ..." */
    if (p->path[0]) snprintf(file, sizeof file, " %s", p->path);
    const char *pname = is_gpu ? p->gpu.name : p->cluster.name, *jname = is_gpu ? ((orr_gpu *)dst)->name
                                                                                : ((orr_cluster *)dst)->name;
    if (strcasecmp(pname, jname) != 0)
        return orr_fail(err, "profile%s: %s.base is %s, but the job's %s is %s (a profile holds what was "
                             "measured on that hardware: calibrate one for %s, or leave the profile out)", file,
                        part_name(is_gpu), pname, is_gpu ? "GPU" : "cluster", jname, jname);
    union { orr_gpu g; orr_cluster c; } cat;
    if (catalog_entry(is_gpu, pname, &cat, err)) return -1;
    size_t nf;
    const orr_yfield *f = orr_hw_field_table(is_gpu, &nf);
    uint64_t set = is_gpu ? p->gpu_set : p->cluster_set;
    const char *src = is_gpu ? (const char *)&p->gpu : (const char *)&p->cluster;
    for (size_t i = 0; i < nf; i++) {
        if (!(set >> i & 1)) continue;
        size_t off = f[i].offset, sz = member_size(&f[i]);
        char *cur = (char *)dst + off;
        if (same_member(&f[i], cur, src + off)) continue; /* already so (a spec resolved twice) */
        if (!same_member(&f[i], cur, (const char *)&cat + off))
            return orr_fail(err, "profile%s: %s.%s: the profile sets it, and the spec or a flag changed it from the "
                                 "catalog's value too; keep one of the two", file, part_name(is_gpu), f[i].key);
        memcpy(cur, src + off, sz);
    }
    if (is_gpu) orr_gpu_fill_peaks(dst);
    return 0;
}

int orr_hw_profile_apply(const orr_hw_profile *p, orr_gpu *g, orr_cluster *c, orr_err *err)
{
    if (p->has_gpu && apply_part(p, 1, g, err)) return -1;
    if (p->has_cluster && apply_part(p, 0, c, err)) return -1;
    return 0;
}

/* One set key of a part in the file's unit. */
static void write_field(const orr_yfield *f, const char *obj, orr_buf *out)
{
    const char *m = obj + f->offset;
    double d;
    uint32_t u32;
    uint64_t u64;
    int64_t i64;
    int b;
    char q[80];
    switch (f->type) {
    case ORR_YF_U32: memcpy(&u32, m, sizeof u32); orr_buf_printf(out, "  %s: %u\n", f->key, u32); return;
    case ORR_YF_BOOL:
    case ORR_YF_CHOICE:
        memcpy(&b, m, sizeof b);
        if (f->type == ORR_YF_BOOL) orr_buf_printf(out, "  %s: %s\n", f->key, b ? "true" : "false");
        else orr_buf_printf(out, "  %s: %s\n", f->key, f->choices[b]);
        return;
    case ORR_YF_STR: orr_quote(m, q, sizeof q); orr_buf_printf(out, "  %s: %s\n", f->key, q); return;
    case ORR_YF_DOUBLE: memcpy(&d, m, sizeof d); break;
    case ORR_YF_U64: memcpy(&u64, m, sizeof u64); d = (double)u64; break;
    case ORR_YF_I64: memcpy(&i64, m, sizeof i64); d = (double)i64; break;
    }
    /* the shortest text that reads back as the same number */
    char num[40];
    for (int digits = 6; digits <= 17; digits++) {
        snprintf(num, sizeof num, "%.*g", digits, d / f->scale);
        if (strtod(num, NULL) == d / f->scale) break;
    }
    orr_buf_printf(out, "  %s: %s\n", f->key, num);
}

static void write_part(const orr_hw_profile *p, int is_gpu, orr_buf *out)
{
    size_t nf;
    const orr_yfield *f = orr_hw_field_table(is_gpu, &nf);
    uint64_t set = is_gpu ? p->gpu_set : p->cluster_set;
    const char *obj = is_gpu ? (const char *)&p->gpu : (const char *)&p->cluster;
    orr_buf_printf(out, "%s:\n  base: %s\n", part_name(is_gpu), is_gpu ? p->gpu.name : p->cluster.name);
    for (size_t i = 0; i < nf; i++)
        if (set >> i & 1) write_field(&f[i], obj, out);
}

void orr_hw_profile_yaml(const orr_hw_profile *p, orr_buf *out)
{
    orr_buf_printf(out, "orrery_profile: %d\n", ORR_PROFILE_VERSION);
    if (p->has_gpu) write_part(p, 1, out);
    if (p->has_cluster) write_part(p, 0, out);
}
