/*
 * flags.c - command-line flags that set or override the fields of a spec (docs/spec.md, "Flags").
 *
 * Every flag is in the table below with what its value must be. A value is given as `--tp 8` or
 * `--tp=8`; on/off flags take no value (`--sp`, `--no-sp`). Numbers are parsed strictly: the whole
 * value must be the number, counts must be positive and fit in 32 bits. Like the spec file, flags only
 * record values; the rules that relate them are checked by orr_spec_resolve.
 */
#include "orrery/spec.h"

#include "spec/yaml.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

typedef enum flag_id {
    F_MODEL, F_GPU, F_CLUSTER, F_GPUS, F_GPUS_PER_NODE, F_TP, F_PP, F_DP, F_VPP, F_SP, F_NO_SP,
    F_MBS, F_GBS, F_SEQ, F_RECOMPUTE, F_DIST_OPT, F_NO_DIST_OPT, F_PRECISION, F_JSON, F_TRACE,
    F_TP_COMM_OVERLAP, F_NO_TP_COMM_OVERLAP, F_NO_SYMMETRY, F_LAUNCH_US, F_ATTENTION,
    F_CP, F_FSDP, F_ZERO, F_RESHARD, F_NO_RESHARD, F_FP8_AG, F_COMPILE, F_NO_COMPILE, F_COMPILE_LOSS, F_NO_COMPILE_LOSS, F_MEM_CAPACITY,
    F_CACHING, F_NO_CACHING,
    F_NET, F_TOPOLOGY,
    F_TOPOLOGY_FILE, F_OVERSUB, F_PXN, F_NO_PXN, F_CC, F_PACKET_PAYLOAD,
    F_PP_FIRST, F_PP_LAST, F_PP_LAYERS, F_FRAMEWORK
} flag_id;

typedef struct flag_def {
    const char *name;
    flag_id id;
    const char *expects;   /* what the value must be; NULL for flags without a value */
} flag_def;

#define COUNT "a positive integer"
static const flag_def flags[] = {
    {"--framework", F_FRAMEWORK, "megatron, megatron-fsdp, torchtitan, deepspeed or nanotron"},
    {"--model", F_MODEL, "a catalog model name or a YAML model file"},
    {"--gpu", F_GPU, "a catalog GPU name"},
    {"--cluster", F_CLUSTER, "a catalog cluster name"},
    {"--gpus", F_GPUS, COUNT},
    {"--gpus-per-node", F_GPUS_PER_NODE, COUNT},
    {"--tp", F_TP, COUNT},
    {"--pp", F_PP, COUNT},
    {"--dp", F_DP, COUNT},
    {"--vpp", F_VPP, COUNT},
    {"--decoder-first-pipeline-num-layers", F_PP_FIRST, COUNT},
    {"--decoder-last-pipeline-num-layers", F_PP_LAST, COUNT},
    {"--num-layers-in-first-pipeline-stage", F_PP_FIRST, COUNT}, /* Megatron-Core's later names */
    {"--num-layers-in-last-pipeline-stage", F_PP_LAST, COUNT},
    {"--pp-layers", F_PP_LAYERS, "comma-separated positive layer counts, one per virtual pipeline stage"},
    {"--sp", F_SP, NULL},
    {"--no-sp", F_NO_SP, NULL},
    {"--mbs", F_MBS, COUNT},
    {"--gbs", F_GBS, COUNT},
    {"--seq", F_SEQ, COUNT},
    {"--recompute", F_RECOMPUTE, "none, selective or full"},
    {"--dist-opt", F_DIST_OPT, NULL},
    {"--no-dist-opt", F_NO_DIST_OPT, NULL},
    {"--precision", F_PRECISION, "bf16, fp16 or fp8"},
    {"--json", F_JSON, NULL},
    {"--trace", F_TRACE, "an output file path"},
    {"--tp-comm-overlap", F_TP_COMM_OVERLAP, NULL},
    {"--no-tp-comm-overlap", F_NO_TP_COMM_OVERLAP, NULL},
    {"--no-symmetry", F_NO_SYMMETRY, NULL},
    {"--launch-us", F_LAUNCH_US, "a non-negative number of microseconds"},
    {"--attention", F_ATTENTION, "flash or unfused"},
    {"--cp", F_CP, COUNT},
    {"--fsdp", F_FSDP, COUNT},
    {"--zero", F_ZERO, "0, 1, 2 or 3"},
    {"--reshard-after-forward", F_RESHARD, NULL},
    {"--no-reshard-after-forward", F_NO_RESHARD, NULL},
    {"--fp8-allgather", F_FP8_AG, NULL},
    {"--compile", F_COMPILE, NULL},
    {"--no-compile", F_NO_COMPILE, NULL},
    {"--compile-loss", F_COMPILE_LOSS, NULL},
    {"--no-compile-loss", F_NO_COMPILE_LOSS, NULL},
    {"--async-tp", F_TP_COMM_OVERLAP, NULL},
    {"--mem-capacity", F_MEM_CAPACITY, "a memory size like 80GiB, 96GB or 81920MiB"},
    {"--caching-allocator", F_CACHING, NULL},
    {"--no-caching-allocator", F_NO_CACHING, NULL},
    {"--net", F_NET, "analytic, flow or packet"},
    {"--topology", F_TOPOLOGY, "rail-fat-tree, fat-tree, clos3 or hpcc"},
    {"--topology-file", F_TOPOLOGY_FILE, "an HPCC/SimAI topology file"},
    {"--oversub", F_OVERSUB, "a ratio from 1 to 1000"},
    {"--pxn", F_PXN, NULL},
    {"--no-pxn", F_NO_PXN, NULL},
    {"--cc", F_CC, "dcqcn, hpcc, timely or dctcp"},
    {"--packet-payload", F_PACKET_PAYLOAD, "a payload size in bytes from 256 to 16777216"},
};
#define NFLAGS (sizeof flags / sizeof flags[0])

static const flag_def *find_flag(const char *arg, size_t len)
{
    for (size_t i = 0; i < NFLAGS; i++)
        if (strlen(flags[i].name) == len && strncmp(flags[i].name, arg, len) == 0) return &flags[i];
    return NULL;
}

static int bad_value(const flag_def *f, const char *val, orr_err *err)
{
    char q[80];
    orr_quote(val, q, sizeof q);
    return orr_fail(err, "%s: expected %s, got %s", f->name, f->expects, q);
}

static int parse_count(const flag_def *f, const char *val, uint32_t *out, orr_err *err)
{
    uint64_t v;
    if (orr_parse_u64(val, &v) || v == 0 || v > UINT32_MAX) return bad_value(f, val, err);
    *out = (uint32_t)v;
    return 0;
}

/* --pp-layers 15,16,...: one positive count per virtual stage, in model order. */
static int parse_pp_layers(const flag_def *f, const char *val, orr_spec *s, orr_err *err)
{
    uint32_t k = 0;
    const char *p = val;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char num[24];
        uint64_t v;
        if (len == 0 || len >= sizeof num) return bad_value(f, val, err);
        memcpy(num, p, len);
        num[len] = 0;
        if (orr_parse_u64(num, &v) || v == 0 || v > UINT32_MAX) return bad_value(f, val, err);
        if (k == ORR_PP_LAYERS_MAX)
            return orr_fail(err, "%s: more than %d layer counts", f->name, ORR_PP_LAYERS_MAX);
        s->pp_layers[k++] = (uint32_t)v;
        if (!comma) break;
        p = comma + 1;
    }
    s->npp_layers = k;
    return 0;
}

/* --model takes a file if it names one, or looks like one (so a typo in a path is not reported as
 * an unknown model). */
static int looks_like_file(const char *val)
{
    struct stat st;
    size_t n = strlen(val);
    if (stat(val, &st) == 0 && S_ISREG(st.st_mode)) return 1;
    return (n > 5 && strcasecmp(val + n - 5, ".yaml") == 0) || (n > 4 && strcasecmp(val + n - 4, ".yml") == 0);
}

/* A catalog lookup whose error is prefixed with the flag. */
static int flag_lookup(const flag_def *f, int rc, const orr_err *e, orr_err *err)
{
    if (rc) return orr_fail(err, "%s: %s", f->name, e->msg);
    return 0;
}

static int unknown_flag(const char *arg, size_t len, orr_err *err)
{
    char name[64], q[80];
    snprintf(name, sizeof name, "%.*s", (int)(len < 60 ? len : 60), arg);
    orr_quote(name, q, sizeof q);
    orr_buf list = {0};
    for (size_t i = 0; i < NFLAGS; i++) orr_buf_printf(&list, "%s%s", i ? " " : "", flags[i].name);
    int rc = orr_fail(err, "unknown flag %s (known: %s)", q, list.s);
    orr_buf_free(&list);
    return rc;
}

/* Applies one flag with its value (NULL for on/off flags). gpn receives --gpus-per-node. */
static int apply_flag(orr_spec *s, const flag_def *f, const char *val, uint32_t *gpn, orr_err *err)
{
    orr_err e;
    double d;
    switch (f->id) {
    case F_FRAMEWORK:
        if (orr_framework_parse(val, &s->framework)) return bad_value(f, val, err);
        s->framework_set = 1;
        return 0;
    case F_MODEL:
        if (looks_like_file(val)) return orr_model_load_file(&s->model, val, err);
        return flag_lookup(f, orr_catalog_model(val, &s->model, &e), &e, err);
    case F_GPU: return flag_lookup(f, orr_catalog_gpu(val, &s->gpu, &e), &e, err);
    case F_CLUSTER: return flag_lookup(f, orr_catalog_cluster(val, &s->cluster, &e), &e, err);
    case F_GPUS: return parse_count(f, val, &s->gpus, err);
    case F_GPUS_PER_NODE: return parse_count(f, val, gpn, err);
    case F_TP: return parse_count(f, val, &s->tp, err);
    case F_PP: return parse_count(f, val, &s->pp, err);
    case F_DP: return parse_count(f, val, &s->dp, err);
    case F_VPP: return parse_count(f, val, &s->vpp, err);
    case F_PP_FIRST: return parse_count(f, val, &s->pp_first_layers, err);
    case F_PP_LAST: return parse_count(f, val, &s->pp_last_layers, err);
    case F_PP_LAYERS: return parse_pp_layers(f, val, s, err);
    case F_MBS: return parse_count(f, val, &s->mbs, err);
    case F_GBS: return parse_count(f, val, &s->gbs, err);
    case F_SEQ: return parse_count(f, val, &s->seq, err);
    case F_SP: s->sp = 1; return 0;
    case F_NO_SP: s->sp = 0; return 0;
    case F_DIST_OPT: s->dist_opt = 1; return 0;
    case F_NO_DIST_OPT: s->dist_opt = 0; return 0;
    case F_JSON: s->json = 1; return 0;
    case F_TP_COMM_OVERLAP: s->tp_comm_overlap = 1; return 0;
    case F_NO_TP_COMM_OVERLAP: s->tp_comm_overlap = 0; return 0;
    case F_NO_SYMMETRY: s->symmetry = 0; return 0;
    case F_RECOMPUTE:
        for (int r = ORR_RECOMPUTE_NONE; r <= ORR_RECOMPUTE_FULL; r++)
            if (strcasecmp(val, orr_recompute_name((orr_recompute)r)) == 0) return s->recompute = (orr_recompute)r, 0;
        return bad_value(f, val, err);
    case F_ATTENTION:
        if (strcasecmp(val, "flash") == 0) s->attention = ORR_ATTN_FLASH;
        else if (strcasecmp(val, "unfused") == 0) s->attention = ORR_ATTN_UNFUSED;
        else return bad_value(f, val, err);
        return 0;
    case F_PRECISION:
        if (strcasecmp(val, "bf16") == 0) s->precision = ORR_BF16;
        else if (strcasecmp(val, "fp16") == 0) s->precision = ORR_FP16;
        else if (strcasecmp(val, "fp8") == 0) s->precision = ORR_FP8;
        else return bad_value(f, val, err);
        return 0;
    case F_TRACE:
        if (strlen(val) >= sizeof s->trace_path)
            return orr_fail(err, "%s: path longer than %zu characters", f->name, sizeof s->trace_path - 1);
        strcpy(s->trace_path, val);
        return 0;
    case F_CP: return parse_count(f, val, &s->cp, err);
    case F_FSDP: return parse_count(f, val, &s->fsdp, err);
    case F_ZERO: {
        uint64_t z;
        if (orr_parse_u64(val, &z) || z > 3) return bad_value(f, val, err);
        s->zero = (uint32_t)z;
        return 0;
    }
    case F_RESHARD: s->reshard_after_forward = 1; return 0;
    case F_NO_RESHARD: s->reshard_after_forward = 0; return 0;
    case F_FP8_AG: s->fp8_allgather = 1; return 0;
    case F_COMPILE: s->compile = 1; return 0;
    case F_NO_COMPILE: s->compile = 0; return 0;
    case F_COMPILE_LOSS: s->compile_loss = 1; return 0;
    case F_NO_COMPILE_LOSS: s->compile_loss = 0; return 0;
    case F_CACHING: s->caching_allocator = 1; return 0;
    case F_NO_CACHING: s->caching_allocator = 0; return 0;
    case F_MEM_CAPACITY: {
        static const struct { const char *unit; double mul; } units[] = {
            {"GiB", 1073741824.0}, {"GB", 1e9}, {"MiB", 1048576.0}, {"MB", 1e6}, {"TiB", 1099511627776.0}};
        size_t n = strlen(val);
        for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
            size_t k = strlen(units[u].unit);
            if (n <= k || strcmp(val + n - k, units[u].unit) != 0) continue;
            char num[64];
            if (n - k >= sizeof num) break;
            memcpy(num, val, n - k);
            num[n - k] = 0;
            if (orr_parse_num(num, &d) || !(d > 0) || d * units[u].mul > 1e15) break;
            s->mem_capacity_bytes = (uint64_t)(d * units[u].mul + 0.5);
            return 0;
        }
        return bad_value(f, val, err);
    }
    case F_NET: return orr_net_kind_parse(val, &s->net) ? bad_value(f, val, err) : 0;
    case F_TOPOLOGY:
        if (orr_topo_kind_parse(val, &s->topo.kind)) return bad_value(f, val, err);
        s->topology_set = 1;
        return 0;
    case F_TOPOLOGY_FILE:
        if (strlen(val) >= sizeof s->topo.path)
            return orr_fail(err, "%s: path longer than %zu characters", f->name, sizeof s->topo.path - 1);
        strcpy(s->topo.path, val);
        if (!s->topology_set) s->topo.kind = ORR_TOPO_HPCC;
        s->topology_set = 1;
        return 0;
    case F_OVERSUB:
        if (orr_parse_num(val, &d) || !(d >= 1) || d > 1000) return bad_value(f, val, err);
        s->topo.oversub = d;
        return 0;
    case F_PXN: s->pxn = 1; return 0;
    case F_CC:
        return orr_cc_parse(val, &s->cc) ? bad_value(f, val, err) : 0;
    case F_PACKET_PAYLOAD: {
        uint64_t v;
        if (orr_parse_u64(val, &v) || v < ORR_PACKET_PAYLOAD_MIN || v > ORR_PACKET_PAYLOAD_MAX)
            return bad_value(f, val, err);
        s->packet_payload_bytes = (uint32_t)v;
        return 0;
    }
    case F_NO_PXN: s->pxn = 0; return 0;
    case F_LAUNCH_US:
        if (orr_parse_num(val, &d) || d < 0 || d > 1e6) return bad_value(f, val, err);
        s->launch_ps = (int64_t)(d * ORR_PS_PER_US + 0.5);
        return 0;
    }
    return orr_fail(err, "%s: internal error: flag without a handler", f->name);
}

/* With jobs: (docs/spec.md "jobs") flags set only what the jobs share: the hardware, the cluster's
 * GPU count, the network, the run-wide options and the output. */
static int shared_flag(flag_id id)
{
    switch (id) {
    case F_GPU: case F_CLUSTER: case F_GPUS: case F_GPUS_PER_NODE: case F_JSON: case F_TRACE: case F_NO_SYMMETRY:
    case F_LAUNCH_US: case F_MEM_CAPACITY: case F_CACHING: case F_NO_CACHING: case F_NET: case F_TOPOLOGY:
    case F_TOPOLOGY_FILE: case F_OVERSUB: case F_PXN: case F_NO_PXN: case F_CC: case F_PACKET_PAYLOAD:
        return 1;
    default:
        return 0;
    }
}

/* job: s is one job of a multi-job spec; the flags that are the top level's own (the cluster's GPU
 * count, the output) are left to it. */
static int apply_flags_to(orr_spec *s, int argc, char **argv, int job, orr_err *err)
{
    uint32_t gpn = 0;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (!arg || strncmp(arg, "--", 2) != 0) {
            char q[80];
            orr_quote(arg ? arg : "", q, sizeof q);
            return orr_fail(err, "unexpected argument %s (flags start with --)", q);
        }
        const char *eq = strchr(arg, '=');
        size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
        const flag_def *f = find_flag(arg, len);
        if (!f) return unknown_flag(arg, len, err);
        const char *val = NULL;
        if (f->expects) {
            if (eq) val = eq + 1;
            else if (i + 1 < argc && argv[i + 1] && strncmp(argv[i + 1], "--", 2) != 0) val = argv[++i];
            if (!val || !*val) return orr_fail(err, "%s: missing value (%s)", f->name, f->expects);
        } else if (eq) {
            return orr_fail(err, "%s takes no value", f->name);
        }
        if (!job && s->njobs && !shared_flag(f->id)) {
            orr_buf list = {0};
            for (size_t k = 0; k < NFLAGS; k++)
                if (shared_flag(flags[k].id)) orr_buf_printf(&list, "%s%s", list.n ? " " : "", flags[k].name);
            int rc = orr_fail(err, "%s: the spec has jobs:, so this is set per job in the spec file (jobs[].*); "
                                   "flags may set only what the jobs share: %s", f->name, list.s);
            orr_buf_free(&list);
            return rc;
        }
        if (job && (f->id == F_GPUS || f->id == F_JSON || f->id == F_TRACE)) continue;
        if (apply_flag(s, f, val, &gpn, err)) return -1;
    }
    /* --gpus-per-node applies to the cluster in effect after all the flags, whatever their order. If
     * none is named yet, it is kept in the unnamed cluster for resolve to apply to the default. */
    if (gpn) s->cluster.gpus_per_node = gpn;
    return 0;
}

int orr_spec_apply_flags(orr_spec *s, int argc, char **argv, orr_err *err)
{
    if (apply_flags_to(s, argc, argv, 0, err)) return -1;
    for (uint32_t j = 0; j < s->njobs; j++)
        if (apply_flags_to(&s->jobs[j].s, argc, argv, 1, err)) return -1;
    return 0;
}
