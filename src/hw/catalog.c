/*
 * catalog.c - the GPU and node-type catalogs (data/gpus.yaml, data/clusters.yaml) and the readers
 * that turn a spec's `gpu:` / `cluster:` value into an orr_gpu / orr_cluster.
 *
 * The data files are compiled into the library (cmake/embed.cmake) and parsed once, on first use.
 * Each file is a mapping from canonical name to fields; the field tables below say which key sets
 * which member and how the file's unit (GB/s, TFLOP/s, us, ...) converts to the struct's (bytes/s,
 * FLOP/s, ps). The same tables read the overrides of a spec ({base: H100, hbm_gb: 96}), so a key
 * means the same thing in both places (docs/spec.md).
 */
#include "orrery/hw.h"

#include "spec/yaml.h"

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define GIB 1073741824.0
#define MIB 1048576.0

/* ---- Field tables ---- */

#define GF(k, t, m, sc, lo, open, hi) \
    {.key = k, .type = t, .offset = offsetof(orr_gpu, m), .scale = sc, .min = lo, .open_min = open, .max = hi}

static const orr_yfield gpu_fields[] = {
    GF("sms", ORR_YF_U32, sms, 1, 1, 0, 100000),
    GF("compute_capability", ORR_YF_DOUBLE, compute_capability, 1, 7, 0, 20),
    GF("hbm_gib", ORR_YF_U64, hbm_bytes, GIB, 0, 1, 1e6),
    GF("hbm_gb", ORR_YF_U64, hbm_bytes, 1e9, 0, 1, 1e6),
    GF("device_mib", ORR_YF_U64, device_bytes, MIB, 0, 1, 1e8),
    GF("hbm_TBps", ORR_YF_DOUBLE, hbm_Bps, 1e12, 0, 1, 1e3),
    GF("l2_mib", ORR_YF_U64, l2_bytes, MIB, 0, 1, 1e6),
    GF("nvlink_bidir_GBps", ORR_YF_DOUBLE, nvlink_Bps, 0.5e9, 0, 1, 1e6),
    GF("nvlink_gbps", ORR_YF_DOUBLE, nvlink_Bps, 1e9 / 8, 0, 1, 1e7), /* per direction, Gb/s (--nvlink-gbps) */
    GF("tdp_w", ORR_YF_DOUBLE, tdp_w, 1, 0, 1, 1e6),
    GF("fp32_tflops", ORR_YF_DOUBLE, peak_flops[ORR_FP32], 1e12, 0, 1, 1e6),
    GF("tf32_tflops", ORR_YF_DOUBLE, peak_flops[ORR_TF32], 1e12, 0, 0, 1e6),
    GF("bf16_tflops", ORR_YF_DOUBLE, peak_flops[ORR_BF16], 1e12, 0, 0, 1e6),
    GF("fp16_tflops", ORR_YF_DOUBLE, peak_flops[ORR_FP16], 1e12, 0, 0, 1e6),
    GF("fp8_tflops", ORR_YF_DOUBLE, peak_flops[ORR_FP8], 1e12, 0, 0, 1e6),
    GF("fp4_tflops", ORR_YF_DOUBLE, peak_flops[ORR_NVFP4], 1e12, 0, 0, 1e6),
    GF("gemm_eff", ORR_YF_DOUBLE, gemm_eff, 1, 0, 1, 1),
    GF("attn_fwd_eff", ORR_YF_DOUBLE, attn_fwd_eff, 1, 0, 1, 1),
    GF("attn_bwd_eff", ORR_YF_DOUBLE, attn_bwd_eff, 1, 0, 1, 1),
    GF("attn_cudnn_fwd_eff", ORR_YF_DOUBLE, attn_cudnn_fwd_eff, 1, 0, 0, 1),
    GF("attn_cudnn_bwd_eff", ORR_YF_DOUBLE, attn_cudnn_bwd_eff, 1, 0, 0, 1),
    GF("mem_eff", ORR_YF_DOUBLE, mem_eff, 1, 0, 1, 1),
    GF("gemm_tile_m", ORR_YF_U32, gemm_tile_m, 1, 1, 0, 4096),
    GF("gemm_tile_n", ORR_YF_U32, gemm_tile_n, 1, 1, 0, 4096),
    GF("gemm_k_overhead", ORR_YF_DOUBLE, gemm_k_overhead, 1, 0, 0, 1e6),
    GF("kernel_min_us", ORR_YF_I64, kernel_min_ps, 1e6, 0, 0, 1e6),
    GF("overlap_slowdown", ORR_YF_DOUBLE, overlap_slowdown, 1, 0, 0, 100),
    GF("nccl_gemm_slowdown", ORR_YF_DOUBLE, nccl_gemm_slowdown, 1, 0, 0, 100),
    GF("deepep_gemm_slowdown", ORR_YF_DOUBLE, deepep_gemm_slowdown, 1, 0, 0, 100),
    GF("fp8_rowwise_rate", ORR_YF_DOUBLE, fp8_rowwise_rate, 1, 0, 0, 1),
    GF("fp8_block_rate", ORR_YF_DOUBLE, fp8_block_rate, 1, 0, 0, 1),
    GF("fp8_block_1d_rate", ORR_YF_DOUBLE, fp8_block_1d_rate, 1, 0, 0, 1),
    GF("runtime_reserved_gib", ORR_YF_U64, runtime_reserved_bytes, GIB, 0, 0, 1e4),
};
#define NGPU_FIELDS (sizeof gpu_fields / sizeof gpu_fields[0])

#define CF(k, t, m, sc, lo, open, hi) \
    {.key = k, .type = t, .offset = offsetof(orr_cluster, m), .scale = sc, .min = lo, .open_min = open, .max = hi}

static const orr_yfield cluster_fields[] = {
    CF("gpus_per_node", ORR_YF_U32, gpus_per_node, 1, 1, 0, 1e6),
    CF("nic_gbps", ORR_YF_DOUBLE, nic_Bps, 1e9 / 8, 0, 1, 1e7),
    CF("nics_per_node", ORR_YF_U32, nics_per_node, 1, 1, 0, 1e6), /* 0 (absent): one per GPU */
    {.key = "topology", .type = ORR_YF_STR, .offset = offsetof(orr_cluster, topology),
     .size = sizeof ((orr_cluster *)0)->topology},
    CF("nvlink_eff", ORR_YF_DOUBLE, nvlink_eff, 1, 0, 1, 1),
    CF("net_eff", ORR_YF_DOUBLE, net_eff, 1, 0, 1, 1),
    CF("nvlink_lat_us", ORR_YF_I64, nvlink_lat_ps, 1e6, 0, 0, 1e6),
    CF("net_lat_us", ORR_YF_I64, net_lat_ps, 1e6, 0, 0, 1e6),
    CF("net_plugin_lat_us", ORR_YF_I64, net_plugin_lat_ps, 1e6, 0, 0, 1e6),
    CF("coll_base_us", ORR_YF_I64, coll_base_ps, 1e6, 0, 0, 1e6),
    {.key = "nvls", .type = ORR_YF_BOOL, .offset = offsetof(orr_cluster, nvls)},
    CF("nvls_lat_us", ORR_YF_I64, nvls_lat_ps, 1e6, 0, 0, 1e6),
    CF("p2p_base_us", ORR_YF_I64, p2p_base_ps, 1e6, 0, 0, 1e6),
};
#define NCLUSTER_FIELDS (sizeof cluster_fields / sizeof cluster_fields[0])

/* A profile marks its keys in a 64-bit set (src/hw/profile.c). */
_Static_assert(NGPU_FIELDS <= 64 && NCLUSTER_FIELDS <= 64, "more keys than a profile's uint64_t set holds");

const orr_yfield *orr_hw_field_table(int is_gpu, size_t *n)
{
    *n = is_gpu ? NGPU_FIELDS : NCLUSTER_FIELDS;
    return is_gpu ? gpu_fields : cluster_fields;
}

/* The peaks no key sets: block-scaled FP8 (MXFP8) runs at the FP8 rate on tensor cores that take MX
 * scales, Blackwell's (compute capability 10.0+) and any GPU with FP4; elsewhere it is 0 (refused by
 * --precision mxfp8). The one place the mapping lives: every catalog entry and every override of a
 * spec or --gpu file passes here after its fields are read. */
void orr_gpu_fill_peaks(orr_gpu *g)
{
    int mx = g->compute_capability >= 10.0 || g->peak_flops[ORR_NVFP4] > 0;
    g->peak_flops[ORR_MXFP8] = mx ? g->peak_flops[ORR_FP8] : 0;
}

/* ---- The catalogs, loaded once ---- */

typedef struct gpu_entry {
    orr_gpu gpu;
    const orr_ynode *aliases;   /* scalar or sequence, or NULL */
    const char *alias_text;     /* aliases joined by ", " */
    const char *cluster;        /* default node type */
} gpu_entry;

typedef struct cluster_entry {
    orr_cluster cluster;
    const orr_ynode *aliases;
    const char *alias_text;
    const char *gpu;            /* the GPU this node type ships with */
} cluster_entry;

static struct {
    pthread_once_t once;
    orr_ydoc gpu_doc, cluster_doc;  /* kept for the life of the process: entries point into them */
    gpu_entry *gpus;
    size_t ngpus;
    const char *default_gpu;        /* the entry with default: true */
    const char **gpu_names;
    cluster_entry *clusters;
    size_t nclusters;
    const char **cluster_names;
} hw = {.once = PTHREAD_ONCE_INIT};

/* The scalar value of a required key of a catalog entry (the default cluster of a GPU, ...). */
static const char *entry_name(const orr_ynode *entry, const char *key)
{
    const orr_ynode *v = orr_y_get(entry, key);
    if (!v || v->kind != ORR_YSCALAR || v->len == 0) {
        orr_err e;
        orr_y_fail(entry, &e, "%s: expected a name", key);
        orr_catalog_bug("%s", e.msg);
    }
    return v->str;
}

static void load_gpus(void)
{
    static const char *const extra[] = {"aliases", "cluster", "default", NULL};
    static const char *const optional[] = {"hbm_gib", "hbm_gb", "device_mib", "nvlink_gbps", NULL};
    orr_ydoc *doc = &hw.gpu_doc;
    orr_embedded_doc("gpus.yaml", doc);
    size_t n = doc->root->n;
    hw.gpus = orr_xcalloc(n, sizeof *hw.gpus);
    hw.gpu_names = orr_xcalloc(n, sizeof *hw.gpu_names);
    const orr_ynode **aliases = orr_xcalloc(n, sizeof *aliases);
    orr_err e;
    for (const orr_ynode *x = doc->root->first; x; x = x->next) {
        gpu_entry *g = &hw.gpus[hw.ngpus];
        if (orr_y_check_keys(x, gpu_fields, NGPU_FIELDS, extra, &e)) orr_catalog_bug("%s", e.msg);
        orr_catalog_require(x, gpu_fields, NGPU_FIELDS, optional);
        if (!orr_y_get(x, "hbm_gib") == !orr_y_get(x, "hbm_gb"))
            orr_catalog_bug("data/gpus.yaml:%d: %s: needs exactly one of hbm_gib, hbm_gb", x->line, x->key);
        if (strlen(x->key) >= sizeof g->gpu.name) orr_catalog_bug("data/gpus.yaml:%d: name too long", x->line);
        strcpy(g->gpu.name, x->key);
        if (orr_y_apply_fields(&g->gpu, gpu_fields, NGPU_FIELDS, x, &e)) orr_catalog_bug("%s", e.msg);
        orr_gpu_fill_peaks(&g->gpu);
        g->alias_text = orr_catalog_aliases(doc, x, &g->aliases);
        g->cluster = entry_name(x, "cluster");
        const orr_ynode *def = orr_y_get(x, "default");
        if (def && (def->kind != ORR_YSCALAR || strcmp(def->str, "true") != 0 || hw.default_gpu))
            orr_catalog_bug("data/gpus.yaml:%d: default: true on exactly one entry", def->line);
        if (def) hw.default_gpu = g->gpu.name;
        orr_catalog_check_names(x, g->aliases, hw.gpu_names, aliases, hw.ngpus);
        hw.gpu_names[hw.ngpus] = g->gpu.name;
        aliases[hw.ngpus] = g->aliases;
        hw.ngpus++;
    }
    free(aliases);
    if (!hw.default_gpu) orr_catalog_bug("data/gpus.yaml: no entry has default: true");
}

static void load_clusters(void)
{
    static const char *const extra[] = {"aliases", "gpu", NULL};
    static const char *const cluster_optional[] = {"nics_per_node", NULL};
    orr_ydoc *doc = &hw.cluster_doc;
    orr_embedded_doc("clusters.yaml", doc);
    size_t n = doc->root->n;
    hw.clusters = orr_xcalloc(n, sizeof *hw.clusters);
    hw.cluster_names = orr_xcalloc(n, sizeof *hw.cluster_names);
    const orr_ynode **aliases = orr_xcalloc(n, sizeof *aliases);
    orr_err e;
    for (const orr_ynode *x = doc->root->first; x; x = x->next) {
        cluster_entry *c = &hw.clusters[hw.nclusters];
        if (orr_y_check_keys(x, cluster_fields, NCLUSTER_FIELDS, extra, &e)) orr_catalog_bug("%s", e.msg);
        orr_catalog_require(x, cluster_fields, NCLUSTER_FIELDS, cluster_optional);
        if (strlen(x->key) >= sizeof c->cluster.name) orr_catalog_bug("data/clusters.yaml:%d: name too long", x->line);
        strcpy(c->cluster.name, x->key);
        if (orr_y_apply_fields(&c->cluster, cluster_fields, NCLUSTER_FIELDS, x, &e)) orr_catalog_bug("%s", e.msg);
        c->alias_text = orr_catalog_aliases(doc, x, &c->aliases);
        c->gpu = entry_name(x, "gpu");
        orr_catalog_check_names(x, c->aliases, hw.cluster_names, aliases, hw.nclusters);
        hw.cluster_names[hw.nclusters] = c->cluster.name;
        aliases[hw.nclusters] = c->aliases;
        hw.nclusters++;
    }
    free(aliases);
}

static const gpu_entry *find_gpu(const char *name)
{
    for (size_t i = 0; i < hw.ngpus; i++)
        if (orr_name_matches(name, hw.gpus[i].gpu.name, hw.gpus[i].aliases)) return &hw.gpus[i];
    return NULL;
}

static const cluster_entry *find_cluster(const char *name)
{
    for (size_t i = 0; i < hw.nclusters; i++)
        if (orr_name_matches(name, hw.clusters[i].cluster.name, hw.clusters[i].aliases)) return &hw.clusters[i];
    return NULL;
}

/* Parses both files and checks that the defaults they name for each other exist. */
static void load_all(void)
{
    load_gpus();
    load_clusters();
    for (size_t i = 0; i < hw.ngpus; i++)
        if (!find_cluster(hw.gpus[i].cluster))
            orr_catalog_bug("data/gpus.yaml: %s: cluster %s is not in data/clusters.yaml", hw.gpus[i].gpu.name,
                            hw.gpus[i].cluster);
    for (size_t i = 0; i < hw.nclusters; i++)
        if (!find_gpu(hw.clusters[i].gpu))
            orr_catalog_bug("data/clusters.yaml: %s: gpu %s is not in data/gpus.yaml", hw.clusters[i].cluster.name,
                            hw.clusters[i].gpu);
}

static void ensure_loaded(void) { pthread_once(&hw.once, load_all); }

/* ---- Public lookups ---- */

int orr_catalog_gpu(const char *name, orr_gpu *out, orr_err *err)
{
    ensure_loaded();
    const gpu_entry *g = name ? find_gpu(name) : NULL;
    if (!g) return orr_fail_unknown(err, "GPU", name ? name : "", hw.gpu_names, hw.ngpus, "orrery list gpus");
    *out = g->gpu;
    return 0;
}

int orr_catalog_cluster(const char *name, orr_cluster *out, orr_err *err)
{
    ensure_loaded();
    const cluster_entry *c = name ? find_cluster(name) : NULL;
    if (!c)
        return orr_fail_unknown(err, "cluster", name ? name : "", hw.cluster_names, hw.nclusters,
                                "orrery list clusters");
    *out = c->cluster;
    return 0;
}

size_t orr_catalog_gpu_count(void)
{
    ensure_loaded();
    return hw.ngpus;
}

const orr_gpu *orr_catalog_gpu_at(size_t i)
{
    ensure_loaded();
    return i < hw.ngpus ? &hw.gpus[i].gpu : NULL;
}

const char *orr_catalog_gpu_aliases(size_t i)
{
    ensure_loaded();
    return i < hw.ngpus ? hw.gpus[i].alias_text : NULL;
}

const char *orr_catalog_gpu_default_cluster(const char *gpu)
{
    ensure_loaded();
    const gpu_entry *g = gpu ? find_gpu(gpu) : NULL;
    return g ? g->cluster : NULL;
}

const char *orr_catalog_default_gpu(void)
{
    ensure_loaded();
    return hw.default_gpu;
}

size_t orr_catalog_cluster_count(void)
{
    ensure_loaded();
    return hw.nclusters;
}

const orr_cluster *orr_catalog_cluster_at(size_t i)
{
    ensure_loaded();
    return i < hw.nclusters ? &hw.clusters[i].cluster : NULL;
}

const char *orr_catalog_cluster_aliases(size_t i)
{
    ensure_loaded();
    return i < hw.nclusters ? hw.clusters[i].alias_text : NULL;
}

const char *orr_catalog_cluster_default_gpu(const char *cluster)
{
    ensure_loaded();
    const cluster_entry *c = cluster ? find_cluster(cluster) : NULL;
    return c ? c->gpu : NULL;
}

/* ---- Readers for the spec ---- */

/* A catalog lookup from a scalar node, with the error placed at the node. */
static int lookup_named(const orr_ynode *n, int is_gpu, void *out, orr_err *err)
{
    char name[128];
    orr_err e;
    if (orr_y_str(n, name, sizeof name, err)) return -1;
    int rc = is_gpu ? orr_catalog_gpu(name, out, &e) : orr_catalog_cluster(name, out, &e);
    if (rc) return orr_y_fail(n, err, "%s", e.msg);
    return 0;
}

/* The common shape of `gpu:` and `cluster:`: a name, or {base: NAME, overrides...}. */
static int hw_from_yaml(void *out, int is_gpu, const orr_ynode *n, orr_err *err)
{
    static const char *const extra[] = {"base", "name", NULL};
    const orr_yfield *fields = is_gpu ? gpu_fields : cluster_fields;
    size_t nfields = is_gpu ? NGPU_FIELDS : NCLUSTER_FIELDS;
    const char *what = is_gpu ? "GPU" : "cluster";
    if (n && n->kind == ORR_YSCALAR) return lookup_named(n, is_gpu, out, err);
    if (!n || n->kind != ORR_YMAP) {
        char got[80];
        orr_y_describe(n, got, sizeof got);
        return orr_y_fail(n, err, "expected a %s name or a mapping with base: NAME and fields to change, got %s",
                          what, got);
    }
    if (orr_y_check_keys(n, fields, nfields, extra, err)) return -1;
    const orr_ynode *base = orr_y_get(n, "base");
    if (!base)
        return orr_y_fail(n, err, "missing key base (the catalog %s to start from; see `orrery list %s`)", what,
                          is_gpu ? "gpus" : "clusters");
    if (lookup_named(base, is_gpu, out, err)) return -1;
    if (is_gpu && orr_y_get(n, "hbm_gib") && orr_y_get(n, "hbm_gb"))
        return orr_y_fail(orr_y_get(n, "hbm_gb"), err, "give hbm_gib or hbm_gb, not both");
    if (is_gpu && orr_y_get(n, "nvlink_bidir_GBps") && orr_y_get(n, "nvlink_gbps"))
        return orr_y_fail(orr_y_get(n, "nvlink_gbps"), err, "give nvlink_bidir_GBps or nvlink_gbps, not both");
    if (orr_y_apply_fields(out, fields, nfields, n, err)) return -1;
    if (is_gpu) orr_gpu_fill_peaks(out);
    const orr_ynode *name = orr_y_get(n, "name");
    if (name) {
        char *dst = is_gpu ? ((orr_gpu *)out)->name : ((orr_cluster *)out)->name;
        size_t cap = is_gpu ? sizeof ((orr_gpu *)out)->name : sizeof ((orr_cluster *)out)->name;
        if (orr_y_str(name, dst, cap, err)) return -1;
    }
    return 0;
}

int orr_gpu_from_yaml(orr_gpu *g, const orr_ynode *n, orr_err *err) { return hw_from_yaml(g, 1, n, err); }

int orr_cluster_from_yaml(orr_cluster *c, const orr_ynode *n, orr_err *err) { return hw_from_yaml(c, 0, n, err); }
