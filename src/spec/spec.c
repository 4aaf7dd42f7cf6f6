/*
 * spec.c - a prediction request: defaults, the YAML spec file, model files, and resolve (derive what
 * was left out, then check every divisibility and range rule). The command-line flags that override
 * a spec are in flags.c; the keys and flags are documented in docs/spec.md.
 *
 * The order of use is: orr_spec_init, orr_spec_load_file (optional), orr_spec_apply_flags
 * (optional), orr_spec_resolve. Loading and flags only record what was asked; every rule that
 * relates two values (tp divides heads, gpus = tp*pp*dp, ...) is checked in resolve, once all the
 * values are known, so a flag may fix what a spec file got wrong.
 */
#include "orrery/spec.h"

#include "orrery/csv.h"
#include "spec/yaml.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void orr_spec_init(orr_spec *s)
{
    memset(s, 0, sizeof *s);
    s->tp = 1;
    s->pp = 1;
    s->vpp = 1;
    s->mbs = 1;
    s->recompute = ORR_RECOMPUTE_NONE;
    s->precision = ORR_BF16;
    s->overlap_grad_reduce = 1;
    s->overlap_param_gather = 1;
    s->tp_comm_overlap = 0;
    s->overlap_p2p_comm = 1;
    s->bias_activation_fusion = 1;
    s->async_tp_allreduce = 1;
    s->bucket_params = 0; /* resolve: max(40e6, 1e6 * dp), Megatron's default */
    s->launch_ps = 5 * ORR_PS_PER_US;
    s->variability = ORR_VARIABILITY_DEFAULT;
    s->variability_seed = 1;
    s->packet_seed = 1;
    s->symmetry = 1;
    s->net = ORR_NET_ANALYTIC;
    s->cc = ORR_CC_DCQCN;
    s->packet_payload_bytes = ORR_NET_PACKET_PAYLOAD_DEFAULT;
    orr_topo_spec_default(&s->topo, NULL);
    s->cp = 1;
    s->ep = 1;
    s->etp = 1; /* until resolve: etp_given or the framework's default */
    s->moe_imbalance = 1.0;
    s->reshard_after_forward = -1; /* not given: orr_spec_reshard_after_forward */
    s->caching_allocator = 1;
    s->compile_loss = -1; /* not given: orr_spec_compile_loss */
}

void orr_spec_free(orr_spec *s)
{
    for (uint32_t i = 0; i < s->njobs; i++) {
        free(s->jobs[i].nodes);
        free(s->jobs[i].gpu_of);
    }
    free(s->jobs);
    s->jobs = NULL;
    s->njobs = 0;
}

uint64_t orr_spec_alloc_capacity(const orr_spec *s)
{
    uint64_t cap = s->mem_capacity_bytes ? s->mem_capacity_bytes : s->gpu.hbm_bytes;
    return cap > s->gpu.runtime_reserved_bytes ? cap - s->gpu.runtime_reserved_bytes : 1;
}

int orr_spec_reshard_after_forward(const orr_spec *s)
{
    return s->reshard_after_forward >= 0 ? s->reshard_after_forward : s->pp == 1;
}

uint32_t orr_spec_etp_for(const orr_spec *s, orr_framework fw, uint32_t tp)
{
    if (s->etp_given) return s->etp_given;
    return s->model.experts && orr_fw_megatron(fw) ? tp : 1;
}

int orr_spec_compile_loss(const orr_spec *s) { return s->compile_loss >= 0 ? s->compile_loss : s->compile; }

const char *orr_attention_name(orr_attention a)
{
    return a == ORR_ATTN_UNFUSED ? "unfused" : a == ORR_ATTN_CUDNN ? "cudnn" : "flash";
}
const char *orr_moe_dispatcher_name(orr_moe_dispatcher d)
{
    return d == ORR_MOE_ALLGATHER ? "allgather" : d == ORR_MOE_DEEPEP ? "deepep" : "alltoall";
}
const char *orr_moe_routing_name(orr_moe_routing r)
{
    return r == ORR_MOE_ROUTE_ROUND_ROBIN ? "round-robin" : "random";
}

static const char *const fp8_recipe_names[] = {"tensorwise", "delayed", "rowwise", "blockwise"}; /* by orr_fp8_recipe */
#define NFP8_RECIPES (sizeof fp8_recipe_names / sizeof fp8_recipe_names[0])

const char *orr_fp8_recipe_name(orr_fp8_recipe r)
{
    return (unsigned)r < NFP8_RECIPES ? fp8_recipe_names[r] : "unknown";
}

static const char *const fsdp_strategy_names[] = {"optim_grads_params", "no_shard", "optim", "optim_grads"};
#define NFSDP_STRATEGIES (sizeof fsdp_strategy_names / sizeof fsdp_strategy_names[0])

const char *orr_fsdp_strategy_name(orr_fsdp_strategy x)
{
    return (unsigned)x < NFSDP_STRATEGIES ? fsdp_strategy_names[x] : "unknown";
}

static const char *const recompute_module_names[ORR_RCM_COUNT] = {
    "core_attn", "layernorm", "moe_act", "mlp", "moe", "shared_experts", "mla_up_proj"};

void orr_recompute_modules_format(uint32_t set, char *buf, size_t cap)
{
    size_t n = 0;
    if (cap) buf[0] = 0;
    for (unsigned i = 0; i < ORR_RCM_COUNT && cap; i++) {
        if (!(set & (1u << i))) continue;
        int w = snprintf(buf + n, cap - n, "%s%s", n ? "," : "", recompute_module_names[i]);
        if (w < 0 || (size_t)w >= cap - n) break;
        n += (size_t)w;
    }
}

int orr_recompute_module_parse(const char *name, uint32_t *bit)
{
    for (unsigned i = 0; i < ORR_RCM_COUNT; i++)
        if (strcmp(name, recompute_module_names[i]) == 0) return *bit = 1u << i, 0;
    return -1;
}

const char *orr_recompute_name(orr_recompute r)
{
    switch (r) {
    case ORR_RECOMPUTE_NONE: return "none";
    case ORR_RECOMPUTE_SELECTIVE: return "selective";
    case ORR_RECOMPUTE_FULL: return "full";
    }
    return "unknown";
}

static const char *const framework_names[ORR_FW_COUNT] = {"megatron", "megatron-fsdp", "torchtitan", "deepspeed",
                                                          "nanotron", "automodel"};

const char *orr_framework_name(orr_framework f)
{
    return (unsigned)f < ORR_FW_COUNT ? framework_names[f] : "unknown";
}

int orr_framework_parse(const char *name, orr_framework *out)
{
    for (int f = 0; f < ORR_FW_COUNT; f++)
        if (strcasecmp(name, framework_names[f]) == 0) return *out = (orr_framework)f, 0;
    return -1;
}

/* Megatron-LM's --main-params-dtype, --exp-avg-dtype, --exp-avg-sq-dtype and --main-grads-dtype: the
 * dtypes each accepts (megatron/training/arguments.py) as bits of orr_dtype. */
static const struct {
    const char *key, *flag, *choices;
    unsigned allowed;
} opt_states[ORR_OPT_STATES] = {
    [ORR_OPT_MAIN_PARAMS] = {"main_params_dtype", "--main-params-dtype", "fp32 or fp16", 1u << ORR_FP32 | 1u << ORR_FP16},
    [ORR_OPT_EXP_AVG] = {"exp_avg_dtype", "--exp-avg-dtype", "fp32, fp16, bf16 or fp8",
                         1u << ORR_FP32 | 1u << ORR_FP16 | 1u << ORR_BF16 | 1u << ORR_FP8},
    [ORR_OPT_EXP_AVG_SQ] = {"exp_avg_sq_dtype", "--exp-avg-sq-dtype", "fp32, fp16, bf16 or fp8",
                            1u << ORR_FP32 | 1u << ORR_FP16 | 1u << ORR_BF16 | 1u << ORR_FP8},
    [ORR_OPT_MAIN_GRADS] = {"main_grads_dtype", "--main-grads-dtype", "fp32 or bf16", 1u << ORR_FP32 | 1u << ORR_BF16},
};

const char *orr_opt_state_key(orr_opt_state st) { return (unsigned)st < ORR_OPT_STATES ? opt_states[st].key : "?"; }
const char *orr_opt_state_choices(orr_opt_state st)
{
    return (unsigned)st < ORR_OPT_STATES ? opt_states[st].choices : "?";
}

int orr_opt_dtype_parse(orr_opt_state st, const char *name, orr_dtype *out)
{
    if ((unsigned)st >= ORR_OPT_STATES) return -1;
    for (int d = 0; d < ORR_DTYPE_COUNT; d++)
        if ((opt_states[st].allowed >> d & 1u) && strcasecmp(name, orr_dtype_name((orr_dtype)d)) == 0)
            return *out = (orr_dtype)d, 0;
    return -1;
}

/* ---- The spec file ---- */

#define SF(k, t, m) {.key = k, .type = t, .offset = offsetof(orr_spec, m), .min = 1}

static const orr_yfield parallel_fields[] = {
    SF("tp", ORR_YF_U32, tp), SF("pp", ORR_YF_U32, pp), SF("dp", ORR_YF_U32, dp), SF("vpp", ORR_YF_U32, vpp),
    SF("sp", ORR_YF_BOOL, sp), SF("dist_opt", ORR_YF_BOOL, dist_opt), SF("cp", ORR_YF_U32, cp),
    SF("fsdp", ORR_YF_U32, fsdp), SF("ep", ORR_YF_U32, ep), SF("etp", ORR_YF_U32, etp_given),
    {.key = "zero", .type = ORR_YF_U32, .offset = offsetof(orr_spec, zero), .min = 0, .max = 3},
    SF("reshard_after_forward", ORR_YF_BOOL, reshard_after_forward), SF("fp8_allgather", ORR_YF_BOOL, fp8_allgather),
    SF("bf16_params", ORR_YF_BOOL, bf16_params), SF("plain_experts", ORR_YF_BOOL, plain_experts),
    SF("decoder_first_pipeline_num_layers", ORR_YF_U32, pp_first_layers),
    SF("decoder_last_pipeline_num_layers", ORR_YF_U32, pp_last_layers),
    SF("account_for_embedding_in_pipeline_split", ORR_YF_BOOL, pp_account_embedding),
    SF("account_for_loss_in_pipeline_split", ORR_YF_BOOL, pp_account_loss),
};
/* parallel: keys read by hand in apply_section */
static const char *const parallel_lists[] = {"pp_layers", NULL};

static const orr_yfield training_fields[] = {
    SF("mbs", ORR_YF_U32, mbs), SF("gbs", ORR_YF_U32, gbs), SF("seq", ORR_YF_U32, seq), SF("lbs", ORR_YF_U32, lbs),
};
/* training: keys that are enums, read by hand in apply_section */
static const char *const training_enums[] = {"recompute", "recompute_modules", "selective_ac_option", "precision",
                                             "fp8_recipe", NULL};
/* options: keys that are enums */
static const char *const options_enums[] = {"attention",          "moe_dispatcher",   "moe_routing",
                                            "data_parallel_sharding_strategy", "main_params_dtype", "exp_avg_dtype",
                                            "exp_avg_sq_dtype",   "main_grads_dtype", NULL};
static const char *const dispatcher_names[] = {"alltoall", "allgather", "deepep"};
static const char *const routing_names[] = {"random", "round-robin"}; /* index = orr_moe_routing */

static const orr_yfield options_fields[] = {
    SF("overlap_grad_reduce", ORR_YF_BOOL, overlap_grad_reduce),
    SF("overlap_param_gather", ORR_YF_BOOL, overlap_param_gather),
    SF("tp_comm_overlap", ORR_YF_BOOL, tp_comm_overlap),
    SF("overlap_p2p_comm", ORR_YF_BOOL, overlap_p2p_comm),
    SF("bias_activation_fusion", ORR_YF_BOOL, bias_activation_fusion),
    SF("async_tensor_model_parallel_allreduce", ORR_YF_BOOL, async_tp_allreduce),
    SF("grad_reduce_in_bf16", ORR_YF_BOOL, grad_reduce_bf16),
    SF("fp8_param_gather", ORR_YF_BOOL, fp8_param_gather),
    SF("use_precision_aware_optimizer", ORR_YF_BOOL, precision_aware_opt),
    SF("symmetry", ORR_YF_BOOL, symmetry),
    SF("compile", ORR_YF_BOOL, compile),
    SF("compile_loss", ORR_YF_BOOL, compile_loss),
    SF("caching_allocator", ORR_YF_BOOL, caching_allocator),
    SF("expandable_segments", ORR_YF_BOOL, expandable_segments),
    SF("moe_shared_expert_overlap", ORR_YF_BOOL, moe_shared_expert_overlap),
    SF("overlap_moe_expert_parallel_comm", ORR_YF_BOOL, moe_a2a_overlap),
    {.key = "moe_capacity_factor", .type = ORR_YF_DOUBLE, .offset = offsetof(orr_spec, moe_capacity_factor),
     .scale = 1, .min = 0, .max = 1000, .open_min = 1},
    {.key = "moe_imbalance", .type = ORR_YF_DOUBLE, .offset = offsetof(orr_spec, moe_imbalance), .scale = 1,
     .min = 1, .max = 1e6},
    {.key = "moe_imbalance_file", .type = ORR_YF_STR, .offset = offsetof(orr_spec, moe_load_file),
     .size = sizeof(((orr_spec *)0)->moe_load_file)},
    {.key = "mem_capacity_gib", .type = ORR_YF_U64, .offset = offsetof(orr_spec, mem_capacity_bytes),
     .scale = 1073741824.0, .min = 0.001, .max = 1e6},
    /* 0 = Megatron's default, derived in resolve */
    {.key = "bucket_params", .type = ORR_YF_DOUBLE, .offset = offsetof(orr_spec, bucket_params), .scale = 1,
     .min = 0, .max = 1e15},
    {.key = "launch_us", .type = ORR_YF_I64, .offset = offsetof(orr_spec, launch_ps), .scale = 1e6, .min = 0,
     .max = 1e6},
    {.key = "variability", .type = ORR_YF_DOUBLE, .offset = offsetof(orr_spec, variability), .scale = 1, .min = 0,
     .max = ORR_VARIABILITY_MAX},
    {.key = "variability_seed", .type = ORR_YF_U64, .offset = offsetof(orr_spec, variability_seed), .scale = 1,
     .min = 0, .max = 1e18},
};

#define N(a) (sizeof a / sizeof a[0])

#define TF(k, t, m, lo) {.key = k, .type = t, .offset = offsetof(orr_spec, topo) + offsetof(orr_topo_spec, m), .min = lo}
static const orr_yfield network_fields[] = {
    {.key = "oversub", .type = ORR_YF_DOUBLE, .offset = offsetof(orr_spec, topo) + offsetof(orr_topo_spec, oversub),
     .scale = 1, .min = 1, .max = 1000},
    TF("leaf_hosts", ORR_YF_U32, leaf_hosts, 1), TF("spines", ORR_YF_U32, spines, 1),
    TF("pod_leaves", ORR_YF_U32, pod_leaves, 1),
    {.key = "topology_file", .type = ORR_YF_STR, .offset = offsetof(orr_spec, topo) + offsetof(orr_topo_spec, path),
     .size = sizeof(((orr_topo_spec *)0)->path)},
    SF("pxn", ORR_YF_BOOL, pxn),
    {.key = "packet_payload_bytes", .type = ORR_YF_U32, .offset = offsetof(orr_spec, packet_payload_bytes),
     .min = ORR_PACKET_PAYLOAD_MIN, .max = ORR_PACKET_PAYLOAD_MAX},
};
static const char *const network_enums[] = {"backend", "topology", "cc", NULL};

static const char *const recompute_names[] = {"none", "selective", "full"};
static const char *const attention_names[] = {"flash", "unfused", "cudnn"}; /* orr_attention order */
static const char *const precision_names[] = {"bf16", "fp16", "fp8", "mxfp8", "nvfp4"};
static const orr_dtype precision_dtypes[] = {ORR_BF16, ORR_FP16, ORR_FP8, ORR_MXFP8, ORR_NVFP4};
#define NPRECISIONS (sizeof precision_dtypes / sizeof precision_dtypes[0])

/* parallel.pp_layers: a list of positive layer counts, one per virtual stage in model order. */
static int read_pp_layers(orr_spec *s, const orr_ynode *n, orr_err *err)
{
    if (n->kind != ORR_YSEQ || n->n == 0 || n->n > ORR_PP_LAYERS_MAX) {
        char got[96];
        orr_y_describe(n, got, sizeof got);
        return orr_y_fail(n, err, "expected a list of 1 to %d layer counts (one per virtual pipeline stage), got %s",
                          ORR_PP_LAYERS_MAX, got);
    }
    uint32_t k = 0;
    for (const orr_ynode *c = n->first; c; c = c->next)
        if (orr_y_u32(c, 1, &s->pp_layers[k++], err)) return -1;
    s->npp_layers = k;
    return 0;
}

/* training.recompute_modules: a list of Megatron-Core's module names, each at most once. */
static int read_recompute_modules(orr_spec *s, const orr_ynode *n, orr_err *err)
{
    char names[160];
    orr_recompute_modules_format((1u << ORR_RCM_COUNT) - 1, names, sizeof names);
    if (n->kind != ORR_YSEQ || n->n == 0) {
        char got[96];
        orr_y_describe(n, got, sizeof got);
        return orr_y_fail(n, err, "expected a list of Megatron-Core recompute modules (of %s), got %s", names, got);
    }
    uint32_t set = 0, bit;
    for (const orr_ynode *c = n->first; c; c = c->next) {
        if (c->kind != ORR_YSCALAR || strlen(c->str) != c->len || orr_recompute_module_parse(c->str, &bit))
            return orr_y_fail(c, err, "expected one of %s", names);
        if (set & bit) return orr_y_fail(c, err, "%s is listed twice", c->str);
        set |= bit;
    }
    s->recompute_modules = set;
    return 0;
}

/* options.main_params_dtype and the other precision-aware optimizer dtypes; 0 for another key. */
static int read_opt_dtype(orr_spec *s, const orr_ynode *n, orr_err *err)
{
    for (int st = 0; st < ORR_OPT_STATES; st++) {
        if (strcmp(n->key, orr_opt_state_key((orr_opt_state)st)) != 0) continue;
        if (n->kind != ORR_YSCALAR || strlen(n->str) != n->len ||
            orr_opt_dtype_parse((orr_opt_state)st, n->str, &s->opt_dtype[st]))
            return orr_y_fail(n, err, "expected %s", orr_opt_state_choices((orr_opt_state)st));
        return 0;
    }
    return 0;
}

/* training.selective_ac_option: TorchTitan's "op" or a positive integer N (every N-th block). */
static int read_sac_option(orr_spec *s, const orr_ynode *n, orr_err *err)
{
    if (n->kind == ORR_YSCALAR && strlen(n->str) == n->len && strcasecmp(n->str, "op") == 0) return s->sac_every = 0, 0;
    char *end = NULL;
    unsigned long v = n->kind == ORR_YSCALAR && strlen(n->str) == n->len && n->str[0] >= '1' && n->str[0] <= '9'
                          ? strtoul(n->str, &end, 10)
                          : 0;
    if (!end || *end || v > UINT32_MAX) return orr_y_fail(n, err, "expected op or a positive integer");
    s->sac_every = (uint32_t)v;
    return 0;
}

/* Reads one of the sections parallel:, training:, options: (extra: keys read by hand, or NULL) */
static int apply_section(orr_spec *s, const orr_ynode *sec, const orr_yfield *f, size_t nf,
                         const char *const *extra, orr_err *err)
{
    if (orr_y_check_keys(sec, f, nf, extra, err)) return -1;
    for (const orr_ynode *c = sec->first; c; c = c->next) {
        int idx;
        if (strcmp(c->key, "recompute") == 0) {
            if (orr_y_choice(c, recompute_names, 3, &idx, err)) return -1;
            s->recompute = (orr_recompute)idx;
        } else if (strcmp(c->key, "recompute_modules") == 0) {
            if (read_recompute_modules(s, c, err)) return -1;
        } else if (strcmp(c->key, "selective_ac_option") == 0) {
            if (read_sac_option(s, c, err)) return -1;
        } else if (read_opt_dtype(s, c, err)) {
            return -1;
        } else if (strcmp(c->key, "attention") == 0) {
            if (orr_y_choice(c, attention_names, 3, &idx, err)) return -1;
            s->attention = (orr_attention)idx;
        } else if (strcmp(c->key, "moe_dispatcher") == 0) {
            if (orr_y_choice(c, dispatcher_names, 3, &idx, err)) return -1;
            s->moe_dispatcher = (orr_moe_dispatcher)idx;
        } else if (strcmp(c->key, "moe_routing") == 0) {
            if (orr_y_choice(c, routing_names, 2, &idx, err)) return -1;
            s->moe_routing = (orr_moe_routing)idx;
        } else if (strcmp(c->key, "backend") == 0) {
            static const char *const nets[] = {"analytic", "flow", "packet"};
            if (orr_y_choice(c, nets, 3, &idx, err)) return -1;
            s->net = (orr_net_kind)idx;
        } else if (strcmp(c->key, "cc") == 0) {
            static const char *const ccs[] = {"dcqcn", "hpcc", "timely", "dctcp"};
            static const orr_cc cc_of[] = {ORR_CC_DCQCN, ORR_CC_HPCC, ORR_CC_TIMELY, ORR_CC_DCTCP};
            if (orr_y_choice(c, ccs, 4, &idx, err)) return -1;
            s->cc = cc_of[idx];
        } else if (strcmp(c->key, "topology") == 0) {
            static const char *const kinds[] = {"rail-fat-tree", "fat-tree", "clos3", "hpcc"};
            if (orr_y_choice(c, kinds, 4, &idx, err)) return -1;
            s->topo.kind = (orr_topo_kind)idx;
            s->topology_set = 1;
        } else if (strcmp(c->key, "precision") == 0) {
            if (orr_y_choice(c, precision_names, NPRECISIONS, &idx, err)) return -1;
            s->precision = precision_dtypes[idx];
        } else if (strcmp(c->key, "data_parallel_sharding_strategy") == 0) {
            if (orr_y_choice(c, fsdp_strategy_names, NFSDP_STRATEGIES, &idx, err)) return -1;
            s->fsdp_strategy = (orr_fsdp_strategy)idx;
            s->fsdp_strategy_set = 1;
        } else if (strcmp(c->key, "fp8_recipe") == 0) {
            if (orr_y_choice(c, fp8_recipe_names, NFP8_RECIPES, &idx, err)) return -1;
            s->fp8_recipe = (orr_fp8_recipe)idx;
            s->fp8_recipe_set = 1;
        } else if (strcmp(c->key, "pp_layers") == 0) {
            if (read_pp_layers(s, c, err)) return -1;
        }
    }
    return orr_y_apply_fields(s, f, nf, sec, err);
}

/* ---- jobs: several jobs on one cluster (docs/spec.md "jobs") ---- */

static const char *const job_keys[] = {"name", "framework", "model", "gpus", "parallel", "training", "options",
                                       "first_gpu", "nodes", NULL};
/* Options the executor applies to the whole run, so every job of a multi-job spec shares them. */
static const char *const run_options[] = {"launch_us", "symmetry", "caching_allocator", "expandable_segments",
                                          "mem_capacity_gib", "variability", "variability_seed", NULL};

static int apply_sections(orr_spec *s, const orr_ynode *map, orr_err *err)
{
    const orr_ynode *n;
    int idx;
    if ((n = orr_y_get(map, "framework"))) {
        if (orr_y_choice(n, framework_names, ORR_FW_COUNT, &idx, err)) return -1;
        s->framework = (orr_framework)idx;
        s->framework_set = 1;
    }
    if ((n = orr_y_get(map, "gpus")) && orr_y_u32(n, 1, &s->gpus, err)) return -1;
    if ((n = orr_y_get(map, "parallel")) &&
        apply_section(s, n, parallel_fields, N(parallel_fields), parallel_lists, err))
        return -1;
    if ((n = orr_y_get(map, "training")) &&
        apply_section(s, n, training_fields, N(training_fields), training_enums, err))
        return -1;
    if ((n = orr_y_get(map, "options")) && apply_section(s, n, options_fields, N(options_fields), options_enums, err))
        return -1;
    return 0;
}

/* One entry of jobs:, on top of the top level's keys (its defaults). */
static int apply_job(const orr_spec *top, orr_job *j, const orr_ynode *e, size_t idx, orr_err *err)
{
    if (orr_y_check_keys(e, NULL, 0, job_keys, err)) return -1;
    j->s = *top;
    j->s.njobs = 0;
    j->s.jobs = NULL;
    j->s.gpus = 0; /* the top level's gpus is the cluster's */
    j->line = e->line;
    snprintf(j->name, sizeof j->name, "job%zu", idx);
    const orr_ynode *n, *opt = orr_y_get(e, "options");
    if ((n = orr_y_get(e, "name"))) {
        if (orr_y_str(n, j->name, sizeof j->name, err)) return -1;
        if (!j->name[0]) return orr_y_fail(n, err, "expected a non-empty name");
    }
    if (opt && opt->kind == ORR_YMAP)
        for (const orr_ynode *c = opt->first; c; c = c->next)
            for (size_t k = 0; run_options[k]; k++)
                if (strcmp(c->key, run_options[k]) == 0)
                    return orr_y_fail(c, err, "applies to the whole run, not to one job: set it in the top-level "
                                              "options:");
    if ((n = orr_y_get(e, "model")) && orr_model_from_yaml(&j->s.model, n, err)) return -1;
    if (apply_sections(&j->s, e, err)) return -1;
    const orr_ynode *fg = orr_y_get(e, "first_gpu"), *nodes = orr_y_get(e, "nodes");
    if (fg && nodes) return orr_y_fail(nodes, err, "give first_gpu or nodes, not both");
    if (fg) {
        uint64_t v;
        if (orr_y_uint(fg, 0, UINT32_MAX - 1, &v, err)) return -1;
        j->first_gpu = (uint32_t)v;
        j->first_gpu_set = 1;
        j->placement_line = fg->line;
    }
    if (nodes) {
        j->placement_line = nodes->line;
        if (nodes->kind != ORR_YSEQ || nodes->n == 0 || nodes->n > ORR_JOB_NODES_MAX) {
            char got[96];
            orr_y_describe(nodes, got, sizeof got);
            return orr_y_fail(nodes, err, "expected a list of 1 to %d node indices, got %s", ORR_JOB_NODES_MAX, got);
        }
        j->nodes = orr_xmalloc(nodes->n * sizeof *j->nodes);
        for (const orr_ynode *c = nodes->first; c; c = c->next) {
            uint64_t v;
            if (orr_y_uint(c, 0, UINT32_MAX - 1, &v, err)) return -1;
            j->nodes[j->nnodes++] = (uint32_t)v;
        }
    }
    return 0;
}

static int apply_jobs(orr_spec *s, const orr_ynode *list, orr_err *err)
{
    if (list->kind != ORR_YSEQ || list->n == 0 || list->n > ORR_JOBS_MAX) {
        char got[96];
        orr_y_describe(list, got, sizeof got);
        return orr_y_fail(list, err, "expected a list of 1 to %d job mappings, got %s", ORR_JOBS_MAX, got);
    }
    s->jobs = orr_xcalloc(list->n, sizeof *s->jobs);
    size_t i = 0;
    for (const orr_ynode *e = list->first; e; e = e->next, i++) {
        s->njobs = (uint32_t)i + 1; /* so orr_spec_free sees what this entry allocated */
        if (apply_job(s, &s->jobs[i], e, i, err)) return -1;
        for (size_t k = 0; k < i; k++)
            if (strcmp(s->jobs[k].name, s->jobs[i].name) == 0) {
                const orr_ynode *nm = orr_y_get(e, "name");
                return orr_y_fail(nm ? nm : e, err, "job name \"%s\" is also the name of jobs[%zu]; names must differ",
                                  s->jobs[i].name, k);
            }
    }
    return 0;
}

/* profile: FILE, a calibration profile (docs/calibrate.md), relative to the current directory as
 * topology_file is; its errors are placed at the key. */
static int read_profile_key(orr_spec *s, const orr_ynode *n, orr_err *err)
{
    char path[sizeof s->profile.path];
    orr_err e;
    if (orr_y_str(n, path, sizeof path, err)) return -1;
    if (orr_hw_profile_load(&s->profile, path, &e)) return orr_y_fail(n, err, "%s", e.msg);
    return 0;
}

static int apply_spec(orr_spec *s, const orr_ynode *root, orr_err *err)
{
    /* search: the space `orrery search` reads (src/search/args.c); a prediction leaves it alone */
    static const char *const top[] = {"framework", "model", "gpu", "cluster", "profile", "gpus", "parallel",
                                      "training", "options", "network", "jobs", "search", NULL};
    const orr_ynode *n;
    if (orr_y_check_keys(root, NULL, 0, top, err)) return -1;
    if ((n = orr_y_get(root, "profile")) && read_profile_key(s, n, err)) return -1;
    if ((n = orr_y_get(root, "model")) && orr_model_from_yaml(&s->model, n, err)) return -1;
    if ((n = orr_y_get(root, "gpu")) && orr_gpu_from_yaml(&s->gpu, n, err)) return -1;
    if ((n = orr_y_get(root, "cluster")) && orr_cluster_from_yaml(&s->cluster, n, err)) return -1;
    if (apply_sections(s, root, err)) return -1;
    if ((n = orr_y_get(root, "network")) && apply_section(s, n, network_fields, N(network_fields), network_enums, err))
        return -1;
    if ((n = orr_y_get(root, "jobs")) && apply_jobs(s, n, err)) return -1;
    return 0;
}

/* A spec held in memory (the Python package's YAML strings and dicts, and the text of a spec file);
 * name stands for the file in messages ("spec:3: parallel.tp: ..."). */
int orr_spec_load_text(orr_spec *s, const char *name, const char *text, size_t len, orr_err *err)
{
    orr_ydoc doc;
    if (orr_yaml_parse(&doc, name, text, len, err)) return -1;
    snprintf(s->spec_path, sizeof s->spec_path, "%s", name);
    int rc = doc.root ? apply_spec(s, doc.root, err) : 0;
    orr_yaml_free(&doc);
    if (rc) orr_spec_free(s);
    return rc;
}

int orr_spec_load_file(orr_spec *s, const char *path, orr_err *err)
{
    size_t len = 0;
    char *text = orr_read_file(path, &len, err);
    if (!text) return -1;
    int rc = orr_spec_load_text(s, path, text, len, err);
    free(text);
    return rc;
}

int orr_model_load_file(orr_model *m, const char *path, orr_err *err)
{
    orr_ydoc doc;
    if (orr_yaml_load_file(&doc, path, err)) return -1;
    int rc = doc.root ? orr_model_from_yaml(m, doc.root, err)
                      : orr_fail(err, "%s: empty model file (expected a mapping of model fields)", path);
    orr_yaml_free(&doc);
    return rc;
}

/* ---- Resolve ---- */

/* Fills GPU and cluster: the GPU may come from the cluster, the cluster from the GPU; then the
 * calibration profile (--profile, profile:) and the hardware flags (--nic-gbps, --nics-per-node,
 * --nvlink-gbps) over both. */
int orr_spec_resolve_hardware(orr_spec *s, const char *default_gpu, orr_err *err)
{
    if (!s->gpu.name[0]) {
        const char *g = s->cluster.name[0] ? orr_catalog_cluster_default_gpu(s->cluster.name) : NULL;
        if (!g) g = default_gpu;
        if (!g)
            return orr_fail(err, "gpu: not given (write `gpu: NAME` in the spec or pass --gpu NAME; "
                                 "see `orrery list gpus`)");
        if (orr_catalog_gpu(g, &s->gpu, err)) return -1;
    }
    if (!s->cluster.name[0]) {
        uint32_t gpn = s->cluster.gpus_per_node; /* --gpus-per-node given with no cluster */
        const char *c = orr_catalog_gpu_default_cluster(s->gpu.name);
        if (!c)
            return orr_fail(err, "cluster: not given, and GPU \"%s\" has no default node type (pass --cluster "
                                 "NAME; see `orrery list clusters`)", s->gpu.name);
        if (orr_catalog_cluster(c, &s->cluster, err)) return -1;
        if (gpn) s->cluster.gpus_per_node = gpn;
    }
    if (orr_hw_profile_apply(&s->profile, &s->gpu, &s->cluster, err)) return -1;
    if (s->hw_flags.nic_gbps > 0) s->cluster.nic_Bps = s->hw_flags.nic_gbps * 1e9 / 8;
    if (s->hw_flags.nics_per_node) s->cluster.nics_per_node = s->hw_flags.nics_per_node;
    if (s->hw_flags.nvlink_gbps > 0) s->gpu.nvlink_Bps = s->hw_flags.nvlink_gbps * 1e9 / 8;
    if (s->cluster.gpus_per_node == 0)
        return orr_fail(err, "--gpus-per-node (cluster.gpus_per_node): must be a positive integer");
    if (s->cluster.nics_per_node > s->cluster.gpus_per_node)
        return orr_fail(err, "--nics-per-node %u (cluster.nics_per_node): more NICs than GPUs per node (%u) is not "
                             "modelled (each GPU drives at most one NIC)", s->cluster.nics_per_node,
                        s->cluster.gpus_per_node);
    if (!(s->cluster.nic_Bps > 0)) return orr_fail(err, "cluster.nic_gbps: must be positive");
    if (!(s->gpu.nvlink_Bps > 0)) return orr_fail(err, "gpu.nvlink_bidir_GBps: must be positive");
    if (!(s->gpu.hbm_Bps > 0) || s->gpu.hbm_bytes == 0)
        return orr_fail(err, "gpu.hbm_TBps, gpu.hbm_gib: must be positive");
    return 0;
}

static int resolve_hardware(orr_spec *s, orr_err *err)
{
    if (!s->model.name[0])
        return orr_fail(err, "model: not given (write `model: NAME` in the spec or pass --model NAME; "
                             "see `orrery list models`)");
    if (orr_model_check(&s->model, "model", err)) return -1;
    return orr_spec_resolve_hardware(s, NULL, err);
}

/* ---- The framework (one place for the rules that tie options to it) ---- */

/* "framework megatron" or "framework megatron (the default)". */
static const char *framework_said(const orr_spec *s, char *buf, size_t cap)
{
    snprintf(buf, cap, "framework %s%s", orr_framework_name(s->framework), s->framework_set ? "" : " (the default)");
    return buf;
}

/* An option of framework `owner` given under another one: "OPT with framework X: WHAT (framework: Y)". */
static const char a2a_overlap_opt[] = "--overlap-moe-expert-parallel-comm (options.overlap_moe_expert_parallel_comm)";

static int foreign_option(const orr_spec *s, orr_framework owner, const char *opt, const char *what, orr_err *err)
{
    char fw[64];
    return orr_fail(err, "%s with %s: %s (framework: %s, --framework %s)", opt, framework_said(s, fw, sizeof fw), what,
                    orr_framework_name(owner), orr_framework_name(owner));
}

/* What a framework's model does not cover is refused, never predicted as something else. Megatron-FSDP
 * is modelled as Megatron-LM's own default for it (--data-parallel-sharding-strategy optim_grads_params,
 * version 1) without pipeline parallelism (no example or test of Megatron-LM runs it with PP) and
 * without the combined 1F1B schedule (resolve_moe_a2a_overlap). */
static int resolve_unmodelled(const orr_spec *s, orr_err *err)
{
    if ((unsigned)s->framework >= ORR_FW_COUNT) return orr_fail(err, "framework: unknown framework %d", (int)s->framework);
    if (s->framework == ORR_FW_MEGATRON_FSDP && s->pp > 1)
        return orr_fail(err, "--pp %u (parallel.pp) with framework megatron-fsdp: Megatron-FSDP with pipeline parallelism "
                             "is not modelled (the nearest: framework megatron with --dist-opt)", s->pp);
    return 0;
}

/* Options that belong to one framework are errors under another, naming both. */
static int resolve_foreign_options(orr_spec *s, orr_err *err)
{
    char opt[64];
    orr_framework fw = s->framework;
    if (s->fsdp && !orr_fw_fsdp2(fw)) {
        snprintf(opt, sizeof opt, "--fsdp %u (parallel.fsdp)", s->fsdp);
        return foreign_option(s, ORR_FW_TORCHTITAN, opt, "--fsdp is TorchTitan's FSDP2", err);
    }
    if (s->zero && fw != ORR_FW_DEEPSPEED && fw != ORR_FW_NANOTRON) {
        snprintf(opt, sizeof opt, "--zero %u (parallel.zero)", s->zero);
        return foreign_option(s, ORR_FW_DEEPSPEED, opt, "--zero is DeepSpeed's ZeRO", err);
    }
    if (s->dist_opt && !orr_fw_megatron(fw))
        return foreign_option(s, ORR_FW_MEGATRON, "--dist-opt (parallel.dist_opt)",
                              "--dist-opt is Megatron-LM's distributed optimizer", err);
    if ((s->pp_account_embedding || s->pp_account_loss) && !orr_fw_megatron(fw)) {
        const char *o = s->pp_account_embedding
                            ? "--account-for-embedding-in-pipeline-split (parallel.account_for_embedding_in_pipeline_split)"
                            : "--account-for-loss-in-pipeline-split (parallel.account_for_loss_in_pipeline_split)";
        return foreign_option(s, ORR_FW_MEGATRON, o, "Megatron-Core's pipeline split", err);
    }
    if (s->grad_reduce_bf16 && !orr_fw_megatron(fw))
        return foreign_option(s, ORR_FW_MEGATRON, "--grad-reduce-in-bf16 (options.grad_reduce_in_bf16)",
                              "Megatron-LM's gradient buffer in bf16", err);
    if (s->fp8_param_gather && !orr_fw_megatron(fw))
        return foreign_option(s, ORR_FW_MEGATRON, "--fp8-param-gather (options.fp8_param_gather)",
                              "Megatron-LM's parameters kept in FP8", err);
    if (!s->async_tp_allreduce && !orr_fw_megatron(fw))
        return foreign_option(s, ORR_FW_MEGATRON,
                              "--no-async-tensor-model-parallel-allreduce (options.async_tensor_model_parallel_allreduce)",
                              "Megatron-LM's column-parallel backward all-reduce", err);
    if (!s->bias_activation_fusion && !orr_fw_megatron(fw))
        return foreign_option(s, ORR_FW_MEGATRON, "--no-bias-activation-fusion (options.bias_activation_fusion)",
                              "Megatron's eager activation path", err);
    if (s->moe_a2a_overlap && !orr_fw_megatron(fw))
        return foreign_option(s, ORR_FW_MEGATRON, a2a_overlap_opt, "Megatron-Core's combined 1F1B schedule", err);
    if (s->fsdp_strategy_set && fw != ORR_FW_MEGATRON_FSDP)
        return foreign_option(s, ORR_FW_MEGATRON_FSDP, "--data-parallel-sharding-strategy "
                              "(options.data_parallel_sharding_strategy)", "Megatron-FSDP's sharding", err);
    if (fw == ORR_FW_MEGATRON_FSDP && s->fsdp_strategy == ORR_FSDP_OPTIM_GRADS)
        return orr_fail(err, "--data-parallel-sharding-strategy optim_grads (options.data_parallel_sharding_strategy): "
                             "not modelled (optim_grads_params, optim and no_shard are)");
    if ((unsigned)s->fsdp_strategy >= NFSDP_STRATEGIES)
        return orr_fail(err, "--data-parallel-sharding-strategy (options.data_parallel_sharding_strategy): expected "
                             "no_shard, optim, optim_grads or optim_grads_params");
    if (fw == ORR_FW_MEGATRON_FSDP) s->dist_opt = 1; /* Megatron-FSDP forces --use-distributed-optimizer */
    for (int st = 0; st < ORR_OPT_STATES && !s->precision_aware_opt; st++)
        if (s->opt_dtype[st] != ORR_FP32)
            return orr_fail(err, "%s %s (options.%s): can only be fp32 without --use-precision-aware-optimizer "
                                 "(Megatron-Core's OptimizerConfig)", opt_states[st].flag,
                            orr_dtype_name(s->opt_dtype[st]), opt_states[st].key);
    if (s->precision_aware_opt && fw != ORR_FW_MEGATRON)
        return orr_fail(err, "--use-precision-aware-optimizer (options.use_precision_aware_optimizer) with %s: "
                             "modelled with framework megatron's distributed optimizer only",
                        orr_framework_name(fw));
    if (s->precision_aware_opt && !s->dist_opt)
        return orr_fail(err, "--use-precision-aware-optimizer (options.use_precision_aware_optimizer): needs "
                             "--dist-opt (Megatron-Core supports it with the distributed optimizer only)");
    if (s->fp8_param_gather && (s->precision != ORR_FP8 || !s->dist_opt))
        return orr_fail(err, "--fp8-param-gather (options.fp8_param_gather): needs --precision fp8 and --dist-opt "
                             "(Megatron-LM gathers FP8 parameters from the distributed optimizer's shards)");
    if (fw == ORR_FW_TORCHTITAN) return 0;
    if (s->sac_every)
        return foreign_option(s, ORR_FW_TORCHTITAN, "--selective-ac-option N (training.selective_ac_option)",
                              "layer-level selective activation checkpointing is TorchTitan's", err);
    if (fw == ORR_FW_AUTOMODEL) {
        /* AutoModel compiles only its fused expert activation (always modelled so); the model itself is not
         * torch.compile-d by its benchmark recipes. */
        if (s->compile || s->compile_loss >= 0)
            return orr_fail(err, "%s with framework automodel: NeMo AutoModel's recipes do not torch.compile the "
                                 "model or the loss (only its fused expert activation, modelled as such); --compile is "
                                 "TorchTitan's per-block compile (framework: torchtitan)",
                            s->compile ? "--compile (options.compile)" : "--compile-loss (options.compile_loss)");
        return 0;
    }
    static const char *const what = "FSDP2 and torch.compile are modelled as TorchTitan applies them";
    if (s->reshard_after_forward >= 0)
        return foreign_option(s, ORR_FW_TORCHTITAN, s->reshard_after_forward ? "--reshard-after-forward "
                              "(parallel.reshard_after_forward)" : "--no-reshard-after-forward (parallel.reshard_after_forward)",
                              what, err);
    if (s->fp8_allgather)
        return foreign_option(s, ORR_FW_TORCHTITAN, "--fp8-allgather (parallel.fp8_allgather)", what, err);
    if (s->bf16_params)
        return foreign_option(s, ORR_FW_TORCHTITAN, "--bf16-params (parallel.bf16_params)", what, err);
    if (s->plain_experts)
        return foreign_option(s, ORR_FW_TORCHTITAN, "--plain-experts (parallel.plain_experts)", what, err);
    if (s->compile) return foreign_option(s, ORR_FW_TORCHTITAN, "--compile (options.compile)", what, err);
    if (s->compile_loss >= 0)
        return foreign_option(s, ORR_FW_TORCHTITAN, s->compile_loss ? "--compile-loss (options.compile_loss)"
                                                                     : "--no-compile-loss (options.compile_loss)", what, err);
    return 0;
}

/* The framework's own requirements and defaults: DeepSpeed needs its ZeRO stage and has no
 * interleaved schedule; TorchTitan shards over all the data parallelism the replicas leave
 * (data_parallel_shard_degree -1) when --fsdp is not given. Runs before resolve_sizes. */
static int resolve_framework(orr_spec *s, orr_err *err)
{
    if (resolve_unmodelled(s, err) || resolve_foreign_options(s, err)) return -1;
    if (s->framework == ORR_FW_DEEPSPEED && s->zero == 0)
        return orr_fail(err, "framework deepspeed: give the ZeRO stage, --zero 1, 2 or 3 (parallel.zero); stage 0 "
                             "(plain data parallelism) is not modelled");
    if (s->framework == ORR_FW_DEEPSPEED && s->vpp > 1)
        return orr_fail(err, "--vpp %u (parallel.vpp) with framework deepspeed: DeepSpeed's pipeline engine has no "
                             "interleaved schedule (virtual stages are Megatron-LM's and TorchTitan's)", s->vpp);
    if (orr_fw_fsdp2(s->framework) && !s->fsdp) {
        uint64_t rest = (uint64_t)s->tp * s->pp * s->cp * (s->dp ? s->dp : 1);
        s->fsdp = rest && s->gpus && s->gpus % rest == 0 ? (uint32_t)(s->gpus / rest) : 1;
    }
    if (s->framework == ORR_FW_AUTOMODEL) {
        /* NeMo AutoModel (components/moe/parallelizer.py, models' from_config at 89e3a9f): the model is
         * built in bf16 (torch_dtype "auto"), and routed experts whose ep_shard mesh has one rank are
         * left out of FSDP2 (ignored_params); both are what --bf16-params and --plain-experts say. */
        s->bf16_params = 1;
        s->plain_experts = 1;
        if (s->tp > 1)
            return orr_fail(err, "--tp %u (parallel.tp) with framework automodel: not modelled (AutoModel's "
                                 "MaskedCrossEntropy gathers vocabulary-sharded logits with full_tensor(); its TP "
                                 "plans are not in the recipe); the nearest is framework torchtitan", s->tp);
    }
    return 0;
}

/* What nanotron's Llama training (src/models/nanotron.c) can run, checked once sizes and the model
 * are known: its optimizer.zero_stage is 0 or 1; its model (models/llama.py) has RMSNorm, a gated MLP
 * and no biases; bf16 with fp32 gradient accumulation; its own TP overlap only; no interleaved
 * schedule, context parallelism or selective recompute in the recipe. */
static int resolve_nanotron(const orr_spec *s, orr_err *err)
{
    if (s->framework != ORR_FW_NANOTRON) return 0;
    if (s->zero > 1)
        return orr_fail(err, "--zero %u (parallel.zero) with framework nanotron: nanotron's ZeroDistributedOptimizer "
                             "is ZeRO stage 1 only (optimizer.zero_stage: 0 or 1)", s->zero);
    if (!s->model.rmsnorm || !s->model.gated_mlp || s->model.bias)
        return orr_fail(err, "model %s with framework nanotron: the recipe follows nanotron's Llama (RMSNorm, gated "
                             "MLP, no biases); this model has %s", s->model.name,
                        !s->model.rmsnorm ? "LayerNorm" : !s->model.gated_mlp ? "an ungated MLP" : "biases");
    if (s->precision != ORR_BF16)
        return orr_fail(err, "--precision (training.precision) with framework nanotron: only bf16 is modelled "
                             "(model.dtype bfloat16 with accumulate_grad_in_fp32, as its benchmark config)");
    if (s->cp > 1)
        return orr_fail(err, "--cp %u (parallel.cp) with framework nanotron: nanotron's ring attention is not "
                             "modelled", s->cp);
    if (s->vpp > 1)
        return orr_fail(err, "--vpp %u (parallel.vpp) with framework nanotron: its pipeline engines (afab, 1f1b) "
                             "have no interleaved schedule", s->vpp);
    if (s->recompute == ORR_RECOMPUTE_SELECTIVE)
        return orr_fail(err, "--recompute selective (training.recompute) with framework nanotron: nanotron "
                             "recomputes whole layers (recompute_layer: --recompute full) or nothing");
    if (s->tp_comm_overlap)
        return orr_fail(err, "--tp-comm-overlap (options.tp_comm_overlap) with framework nanotron: nanotron's own "
                             "overlap (the async linears of tp_mode REDUCE_SCATTER) comes with --sp");
    if (s->attention != ORR_ATTN_FLASH)
        return orr_fail(err, "--attention %s (options.attention) with framework nanotron: its Llama runs "
                             "flash-attn (flash_attn_varlen_func)", orr_attention_name(s->attention));
    return 0;
}

/* The bounds that keep one prediction's time and memory finite (docs/spec.md "Limits"): a sequence
 * of at most ORR_SEQ_MAX tokens, a micro-batch of at most ORR_MICROBATCH_TOKENS_MAX tokens (beyond,
 * the int64 picosecond clock of one kernel could overflow), and at most ORR_MICROBATCHES_MAX
 * micro-batches per iteration (each is a few hundred ops per layer on every simulated rank). */
static int resolve_limits(const orr_spec *s, orr_err *err)
{
    if (s->seq > ORR_SEQ_MAX)
        return orr_fail(err, "--seq %u (training.seq): at most %u tokens (docs/spec.md \"Limits\")", s->seq,
                        (unsigned)ORR_SEQ_MAX);
    if ((uint64_t)s->mbs * s->seq > ORR_MICROBATCH_TOKENS_MAX)
        return orr_fail(err, "--mbs %u (training.mbs) x --seq %u: at most %llu tokens per micro-batch (docs/spec.md "
                             "\"Limits\")", s->mbs, s->seq, (unsigned long long)ORR_MICROBATCH_TOKENS_MAX);
    uint64_t nmb = s->gbs / ((uint64_t)s->mbs * s->dp);
    if (nmb > ORR_MICROBATCHES_MAX)
        return orr_fail(err, "--gbs %u (training.gbs): %llu micro-batches per iteration (gbs/(mbs*dp)); at most %u "
                             "are simulated (docs/spec.md \"Limits\"): raise --mbs or lower --gbs", s->gbs,
                        (unsigned long long)nmb, (unsigned)ORR_MICROBATCHES_MAX);
    return 0;
}

/* Derives seq, dp, gpus and gbs, and checks their ranges and products. */
static int resolve_sizes(orr_spec *s, orr_err *err)
{
    if (!s->seq) s->seq = s->model.seq;
    if (!s->seq)
        return orr_fail(err, "--seq (training.seq): not given, and model %s has no default seq (a model from a "
                             "Hugging Face config.json never has one: its max_position_embeddings is the longest "
                             "context, not the training sequence length)", s->model.name);
    if (s->model.attn_window && s->seq > s->model.attn_window)
        return orr_fail(err, "--seq %u (training.seq): longer than the sliding attention window of model %s (%u "
                             "tokens, sliding_window of its config.json); Orrery computes full causal attention on "
                             "every layer, which would overstate the windowed layers' time: use --seq %u or less",
                        s->seq, s->model.name, s->model.attn_window, s->model.attn_window);
    struct { const char *flag, *key; uint32_t v; } pos[] = {
        {"--tp", "parallel.tp", s->tp}, {"--pp", "parallel.pp", s->pp}, {"--vpp", "parallel.vpp", s->vpp},
        {"--mbs", "training.mbs", s->mbs}, {"--cp", "parallel.cp", s->cp},
    };
    for (size_t i = 0; i < N(pos); i++)
        if (pos[i].v == 0) return orr_fail(err, "%s (%s): must be a positive integer", pos[i].flag, pos[i].key);
    /* model-parallel ranks per data-parallel replica: tp x cp x pp; with FSDP, dp given is the HSDP
     * replicate degree and the data parallelism is fsdp x replicate */
    uint64_t mp = (uint64_t)s->tp * s->pp * s->cp, shard = s->fsdp ? s->fsdp : 1;
    if (s->dp == 0) {
        if (s->gpus == 0)
            return orr_fail(err, "--gpus (gpus): not given (give the number of GPUs, or --dp with --tp and --pp)");
        if (s->gpus % (mp * shard)) {
            if (s->fsdp && s->gpus % mp == 0)
                return orr_fail(err, "--fsdp %u (parallel.fsdp): must divide the data-parallel degree gpus/(tp*cp*pp) = %llu",
                                s->fsdp, (unsigned long long)(s->gpus / mp));
            return orr_fail(err, "--gpus %u (gpus): must be divisible by tp*cp*pp (%u*%u*%u = %llu) to derive dp",
                            s->gpus, s->tp, s->cp, s->pp, (unsigned long long)mp);
        }
        s->dp = (uint32_t)(s->gpus / (mp * shard));
    }
    if ((uint64_t)s->dp * shard > UINT32_MAX) return orr_fail(err, "--dp/--fsdp: dp*fsdp is too large");
    s->dp_replicate = s->dp;
    s->dp = (uint32_t)(s->dp * shard);
    uint64_t world = mp * s->dp;
    if (s->gpus == 0) {
        if (world > UINT32_MAX)
            return orr_fail(err, "--tp/--pp/--dp: tp*pp*dp (%llu) is too large", (unsigned long long)world);
        s->gpus = (uint32_t)world;
    }
    if (world != s->gpus) {
        if (s->fsdp)
            return orr_fail(err, "--gpus %u (gpus): must equal tp*cp*pp*fsdp*dp (%u*%u*%u*%u*%u = %llu)", s->gpus, s->tp,
                            s->cp, s->pp, s->fsdp, s->dp_replicate, (unsigned long long)world);
        return orr_fail(err, "--gpus %u (gpus): must equal tp*cp*pp*dp (%u*%u*%u*%u = %llu)", s->gpus, s->tp, s->cp,
                        s->pp, s->dp, (unsigned long long)world);
    }
    uint32_t gpn = s->cluster.gpus_per_node;
    if (s->gpus > gpn && s->gpus % gpn)
        return orr_fail(err, "--gpus %u (gpus): must be a multiple of --gpus-per-node (%u, cluster.gpus_per_node) "
                             "or fewer than it (a job that uses N GPUs of each node or NVLink domain: --gpus-per-node "
                             "N)", s->gpus, gpn);
    uint64_t per_step = (uint64_t)s->mbs * s->dp;
    if (s->gbs == 0) {
        if (per_step > UINT32_MAX) return orr_fail(err, "--mbs %u (training.mbs): mbs*dp is too large", s->mbs);
        s->gbs = (uint32_t)per_step; /* Megatron's default: one micro-batch per data-parallel rank */
    }
    if (s->gbs % per_step)
        return orr_fail(err, "--gbs %u (training.gbs): must be divisible by mbs*dp (%u*%u = %llu)", s->gbs, s->mbs,
                        s->dp, (unsigned long long)per_step);
    if (s->lbs) {
        uint32_t per_dp = s->gbs / s->dp;
        if (!orr_fw_fsdp2(s->framework))
            return orr_fail(err, "--lbs %u (training.lbs) with framework %s: only the FSDP2 frameworks (torchtitan, "
                                 "automodel) run a batch as several pipeline schedule steps; %s runs gbs/dp in one",
                            s->lbs, orr_framework_name(s->framework), orr_framework_name(s->framework));
        if (s->pp == 1)
            return orr_fail(err, "--lbs %u (training.lbs): a local batch size other than gbs/dp only changes a "
                                 "pipeline's schedule steps; it needs --pp > 1", s->lbs);
        if (s->lbs % s->mbs || per_dp % s->lbs)
            return orr_fail(err, "--lbs %u (training.lbs): must be a multiple of mbs (%u) and divide gbs/dp (%u)",
                            s->lbs, s->mbs, per_dp);
    }
    return resolve_limits(s, err);
}

/* ---- The split of the layers over the pipeline stages ---- */

/* Megatron-LM's get_num_layers_to_build with --decoder-first/last-pipeline-num-layers: pipeline
 * rank 0 (pp-1) holds `first` (`last`) layers, the other ranks the rest in equal parts (an error if
 * they do not divide), and each rank's layers are split evenly over its vpp model chunks (an error
 * if they do not divide). Fills the layers of pipeline rank p, per chunk, into per_rank[p]. */
static int megatron_first_last(const orr_spec *s, uint32_t *per_rank, orr_err *err)
{
    uint32_t P = s->pp, L = s->model.layers, first = s->pp_first_layers, last = s->pp_last_layers;
    const char *fl = first && last ? "--decoder-first-pipeline-num-layers/--decoder-last-pipeline-num-layers"
                     : first      ? "--decoder-first-pipeline-num-layers (parallel.decoder_first_pipeline_num_layers)"
                                  : "--decoder-last-pipeline-num-layers (parallel.decoder_last_pipeline_num_layers)";
    if (P < 2) return orr_fail(err, "%s: an uneven first or last pipeline stage needs --pp > 1", fl);
    if ((uint64_t)first + last > L)
        return orr_fail(err, "%s: the first and last stages' layers (%u + %u) exceed the model's layers (%u)", fl, first,
                        last, L);
    uint32_t rest = L - first - last, left = P - (first ? 1 : 0) - (last ? 1 : 0);
    if (left == 0 && rest)
        return orr_fail(err, "%s: with --pp %u the first and last stages must hold all %u layers, not %u", fl, P, L,
                        first + last);
    if (left && rest % left)
        return orr_fail(err, "%s: the remaining layers (%u) must be divisible by the remaining pipeline stages (%u), "
                             "as Megatron-LM requires", fl, rest, left);
    for (uint32_t p = 0; p < P; p++) {
        uint32_t n = p == 0 && first ? first : p == P - 1 && last ? last : rest / left;
        if (n < s->vpp)
            return orr_fail(err, "%s: pipeline stage %u would hold %u layers; each of its %u model chunks needs at "
                                 "least one", fl, p, n, s->vpp);
        if (n % s->vpp)
            return orr_fail(err, "%s: pipeline stage %u holds %u layers, which must be divisible by --vpp %u (its model "
                                 "chunks are equal, as in Megatron-LM)", fl, p, n, s->vpp);
        per_rank[p] = n / s->vpp;
    }
    return 0;
}

/* Megatron-Core's account_for_embedding/loss_in_pipeline_split (TransformerConfig.__post_init__ and
 * get_num_layers_to_build): the embedding and the loss each take one layer's place, layers + e + l
 * must be divisible by pp and each rank's share by vpp; every virtual stage then holds that share / vpp,
 * less one in the first (the embedding) and in the last (the loss). */
static int megatron_account_for(const orr_spec *s, uint32_t *out, orr_err *err)
{
    uint32_t P = s->pp ? s->pp : 1, V = s->vpp ? s->vpp : 1, e = s->pp_account_embedding != 0,
             l = s->pp_account_loss != 0;
    uint64_t n = (uint64_t)s->model.layers + e + l, S = (uint64_t)P * V;
    const char *opt = e && l ? "--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split"
                      : e ? "--account-for-embedding-in-pipeline-split (parallel.account_for_embedding_in_pipeline_split)"
                          : "--account-for-loss-in-pipeline-split (parallel.account_for_loss_in_pipeline_split)";
    if (s->npp_layers || s->pp_first_layers || s->pp_last_layers)
        return orr_fail(err, "%s: not with --pp-layers or --decoder-first/last-pipeline-num-layers (Megatron-Core "
                             "refuses the combination)", opt);
    if (n % P)
        return orr_fail(err, "%s: the model's %u layers + %u (%llu) must be divisible by --pp %u, as Megatron-Core "
                             "requires", opt, s->model.layers, e + l, (unsigned long long)n, P);
    if ((n / P) % V)
        return orr_fail(err, "%s: each pipeline rank's %llu layers (the embedding and loss counted) must be divisible "
                             "by --vpp %u, as Megatron-Core requires", opt, (unsigned long long)(n / P), V);
    uint32_t per = (uint32_t)(n / S);
    for (uint64_t v = 0; v < S; v++) out[v] = per - (v == 0 ? e : 0) - (v == S - 1 ? l : 0);
    return 0;
}

int orr_pp_split(const orr_spec *s, uint32_t *out, orr_err *err)
{
    uint32_t P = s->pp ? s->pp : 1, V = s->vpp ? s->vpp : 1, L = s->model.layers;
    uint64_t S = (uint64_t)P * V;
    if (s->npp_layers && (s->pp_first_layers || s->pp_last_layers))
        return orr_fail(err, "--pp-layers (parallel.pp_layers): give either the layers of every stage or "
                             "--decoder-first/last-pipeline-num-layers, not both");
    if (s->pp_account_embedding || s->pp_account_loss) return megatron_account_for(s, out, err);
    if (s->npp_layers) {
        if (s->npp_layers != S)
            return orr_fail(err, "--pp-layers (parallel.pp_layers): expected pp*vpp = %llu layer counts (one per "
                                 "virtual stage, in model order), got %u", (unsigned long long)S, s->npp_layers);
        uint64_t sum = 0;
        for (uint32_t v = 0; v < S; v++) {
            if (s->pp_layers[v] == 0)
                return orr_fail(err, "--pp-layers (parallel.pp_layers): virtual stage %u has 0 layers; every stage "
                                     "needs at least one", v);
            sum += s->pp_layers[v];
            out[v] = s->pp_layers[v];
        }
        if (sum != L)
            return orr_fail(err, "--pp-layers (parallel.pp_layers): the counts add up to %llu layers, but the model "
                                 "has %u", (unsigned long long)sum, L);
        return 0;
    }
    if (s->pp_first_layers || s->pp_last_layers) {
        if (megatron_first_last(s, out, err)) return -1;
        for (uint32_t c = V; c-- > 0;) /* spread the per-rank counts over the chunks: v = c*P + p */
            for (uint32_t p = 0; p < P; p++) out[c * P + p] = out[p];
        return 0;
    }
    if (S > L)
        return orr_fail(err, "--pp %u --vpp %u (parallel.pp, parallel.vpp): pp*vpp = %llu virtual stages, more than "
                             "the model's %u layers", P, V, (unsigned long long)S, L);
    /* TorchTitan's generate_split_points: stage 0 gets base layers, each of the next L % S stages
     * base + 1, the rest (the last stage among them) base */
    uint32_t base = (uint32_t)(L / S), extra = (uint32_t)(L % S);
    for (uint32_t v = 0; v < S; v++) out[v] = base + (v >= 1 && v <= extra ? 1 : 0);
    return 0;
}

/* Checks the rules that tie parallelism to the model's shape (Megatron-LM's argument checks). */
static int resolve_parallel(orr_spec *s, orr_err *err)
{
    const orr_model *m = &s->model;
    if (m->heads % s->tp)
        return orr_fail(err, "--tp %u (parallel.tp): the model's heads (%u) must be divisible by tp", s->tp, m->heads);
    if (m->kv_heads % s->tp)
        return orr_fail(err, "--tp %u (parallel.tp): the model's kv_heads (%u query groups) must be divisible by tp",
                        s->tp, m->kv_heads);
    if (m->ffn % s->tp)
        return orr_fail(err, "--tp %u (parallel.tp): the model's ffn (%u) must be divisible by tp", s->tp, m->ffn);
    if ((uint64_t)s->pp * s->vpp > UINT32_MAX)
        return orr_fail(err, "--pp %u --vpp %u (parallel.pp, parallel.vpp): pp*vpp is too large", s->pp, s->vpp);
    uint32_t *split = orr_xmalloc((size_t)s->pp * s->vpp * sizeof *split);
    int rc = orr_pp_split(s, split, err);
    free(split);
    if (rc) return -1;
    if (s->vpp > 1) {
        uint32_t nmb = (s->lbs ? s->lbs : s->gbs / s->dp) / s->mbs;
        if (s->pp == 1) return orr_fail(err, "--vpp %u (parallel.vpp): virtual stages need --pp > 1", s->vpp);
        if (nmb % s->pp)
            return orr_fail(err, "--vpp %u (parallel.vpp): with virtual stages the number of micro-batches of a "
                                 "schedule (%s = %u) must be divisible by pp (%u)", s->vpp,
                            s->lbs ? "lbs/mbs" : "gbs/(mbs*dp)", nmb, s->pp);
    }
    if (s->sp && s->tp == 1) return orr_fail(err, "--sp (parallel.sp): sequence parallelism requires --tp > 1");
    if (s->sp && s->seq % s->tp)
        return orr_fail(err, "--sp (parallel.sp): seq (%u) must be divisible by tp (%u)", s->seq, s->tp);
    return 0;
}

static int cmp_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

/* --moe-imbalance FILE: a CSV with a `tokens` column, one row per EP rank, positive numbers; kept
 * relative to their mean, most loaded first. */
static int resolve_moe_loads(orr_spec *s, orr_err *err)
{
    s->nmoe_loads = 0;
    if (!s->moe_load_file[0]) return 0;
    orr_csv t;
    if (orr_csv_load(&t, s->moe_load_file, err)) return -1;
    int rc = 0, col = orr_csv_col(&t, "tokens");
    uint32_t n = t.nrows > 0 ? (uint32_t)t.nrows - 1 : 0;
    if (col < 0) rc = orr_fail(err, "--moe-imbalance %s: no column `tokens` (expected a CSV with a header row "
                                    "`tokens` and one row per expert-parallel rank)", s->moe_load_file);
    else if (n != s->ep || n > ORR_MOE_LOADS_MAX)
        rc = orr_fail(err, "--moe-imbalance %s: %u rows of tokens, expected one per expert-parallel rank (--ep %u, at "
                           "most %d)", s->moe_load_file, n, s->ep, ORR_MOE_LOADS_MAX);
    double sum = 0;
    for (uint32_t i = 0; !rc && i < n; i++) {
        const char *cell = t.rows[i + 1][col];
        double v;
        if (orr_parse_num(cell, &v) || !(v > 0) || v > 1e15)
            rc = orr_fail(err, "--moe-imbalance %s: row %u: tokens must be a positive number, got \"%.20s\"",
                          s->moe_load_file, i + 2, cell);
        else s->moe_loads[i] = v, sum += v;
    }
    orr_csv_free(&t);
    if (rc) return -1;
    for (uint32_t i = 0; i < n; i++) s->moe_loads[i] *= n / sum;
    qsort(s->moe_loads, n, sizeof s->moe_loads[0], cmp_desc);
    s->nmoe_loads = n;
    s->moe_imbalance = s->moe_loads[0];
    return 0;
}

/* How an error names the etp: the flag given, or resolve_moe's default. */
static const char *etp_named(const orr_spec *s, char *buf, size_t cap)
{
    if (s->etp_given) snprintf(buf, cap, "--etp %u (parallel.etp)", s->etp);
    else snprintf(buf, cap, "etp %u (not given: Megatron-Core's default, the tp; --etp 1 keeps each expert whole)", s->etp);
    return buf;
}

/* The checks both MoE layouts share, once ep and etp fit: expert and shared-expert widths, the load
 * file and imbalance, MLA without CP. */
static int resolve_moe_common(orr_spec *s, orr_err *err)
{
    const orr_model *m = &s->model;
    if (m->experts % s->ep)
        return orr_fail(err, "--ep %u (parallel.ep): the model's experts (%u) must be divisible by ep", s->ep, m->experts);
    char en[128];
    if (m->expert_ffn % s->etp)
        return orr_fail(err, "%s: the model's expert_ffn (%u) must be divisible by etp", etp_named(s, en, sizeof en),
                        m->expert_ffn);
    if (m->shared_expert_ffn % s->tp)
        return orr_fail(err, "--tp %u (parallel.tp): the model's shared_expert_ffn (%u) must be divisible by tp", s->tp,
                        m->shared_expert_ffn);
    if (resolve_moe_loads(s, err)) return -1;
    if (s->moe_imbalance > s->ep)
        return orr_fail(err, "--moe-imbalance %g (options.moe_imbalance): the most loaded of %u expert-parallel ranks "
                             "can receive at most %u x the average (all the tokens)", s->moe_imbalance, s->ep, s->ep);
    if (s->moe_routing == ORR_MOE_ROUTE_ROUND_ROBIN && (s->moe_imbalance > 1 || s->moe_load_file[0]))
        return orr_fail(err, "--moe-routing round-robin (options.moe_routing) with --moe-imbalance "
                             "(options.moe_imbalance): round-robin routing loads every expert equally");
    if (m->attn_kind == ORR_ATTN_KIND_MLA && s->cp > 1)
        return orr_fail(err, "--cp %u (parallel.cp): context parallelism with MLA attention is not modelled", s->cp);
    return 0;
}

/* TorchTitan's FSDP2 + EP (torchtitan/distributed/parallel_dims.py): the EP mesh is carved out of
 * dp_shard x cp (dp_shard_in_ep x cp), the experts fully_shard-ed over the rest, dp_shard_mod_ep;
 * s->edp is that experts' FSDP degree, fsdp*cp/ep. Expert tensor parallelism (etp) and TP of the MoE
 * layers are not modelled. */
static int resolve_moe_fsdp(orr_spec *s, orr_err *err)
{
    uint64_t shard = (uint64_t)s->fsdp * s->cp;
    const char *fw = orr_framework_name(s->framework);
    if (s->etp > 1)
        return orr_fail(err, "--etp %u (parallel.etp) with framework %s: expert tensor parallelism under "
                             "FSDP2 + EP is not modelled (use --etp 1)", s->etp, fw);
    if (s->tp > 1)
        return orr_fail(err, "--tp %u (parallel.tp) with framework %s and an MoE model: tensor parallelism of "
                             "the MoE layers under FSDP2 + EP is not modelled (use --tp 1)", s->tp, fw);
    if (shard % s->ep)
        return orr_fail(err, "--ep %u (parallel.ep) with framework %s: ep must divide fsdp*cp = %u*%u = %llu "
                             "(the EP mesh is carved out of dp_shard x cp)", s->ep, fw, s->fsdp, s->cp,
                        (unsigned long long)shard);
    if (resolve_moe_common(s, err)) return -1;
    s->edp = (uint32_t)(shard / s->ep);
    return 0;
}

/* Megatron-Core's checks of overlap_moe_expert_parallel_comm (TransformerConfig.__post_init__). */
static int resolve_moe_a2a_overlap(const orr_spec *s, orr_err *err)
{
    const char *opt = a2a_overlap_opt;
    if (!s->moe_a2a_overlap) return 0;
    if (!s->model.experts) return orr_fail(err, "%s: model %s has no experts", opt, s->model.name);
    if (s->ep <= 1) return orr_fail(err, "%s: needs expert parallelism (--ep > 1)", opt);
    if (s->moe_dispatcher == ORR_MOE_ALLGATHER)
        return orr_fail(err, "%s: needs --moe-dispatcher alltoall or deepep (Megatron's alltoall or flex dispatcher)",
                        opt);
    if (s->recompute == ORR_RECOMPUTE_FULL)
        return orr_fail(err, "%s with --recompute full: Megatron-Core requires full recomputation off", opt);
    if (s->moe_shared_expert_overlap)
        return orr_fail(err, "%s with --moe-shared-expert-overlap: Megatron-Core requires the shared-expert overlap off",
                        opt);
    if (s->pp > 1 && s->vpp <= 1)
        return orr_fail(err, "%s with --pp %u: needs virtual pipeline stages (--vpp > 1) when pp > 1", opt, s->pp);
    if (s->framework == ORR_FW_MEGATRON_FSDP)
        return orr_fail(err, "%s with framework megatron-fsdp: not modelled (the combined schedule is modelled with "
                             "framework megatron's distributed optimizer)", opt);
    return 0;
}

/* Mixture of experts: Megatron-Core's parallel folding (the expert layout etp x ep x edp over the
 * tp x cp x dp GPUs of each pipeline stage) and its argument checks. */
static int resolve_moe(orr_spec *s, orr_err *err)
{
    const orr_model *m = &s->model;
    /* Megatron-Core's --expert-tensor-parallel-size defaults to None, which TransformerConfig turns
     * into tensor_model_parallel_size (megatron/training/arguments.py, _add_moe_args): the experts
     * are split like the dense layers unless told otherwise. TorchTitan and AutoModel do not split
     * them (resolve_moe_fsdp refuses etp > 1). */
    s->etp = orr_spec_etp_for(s, s->framework, s->tp);
    uint64_t stage = (uint64_t)s->tp * s->cp * s->dp, ex = (uint64_t)s->ep * s->etp;
    s->edp = 0;
    if (!m->experts) {
        if (ex > 1)
            return orr_fail(err, "--ep %u --etp %u (parallel.ep, parallel.etp): model %s has no experts (expert "
                                 "parallelism needs an MoE model)", s->ep, s->etp, m->name);
        if (s->moe_imbalance > 1 || s->moe_capacity_factor > 0 || s->moe_load_file[0] || s->moe_routing)
            return orr_fail(err, "--moe-imbalance/--moe-capacity-factor/--moe-routing (options.moe_*): model %s has "
                                 "no experts",
                            m->name);
        return resolve_moe_a2a_overlap(s, err);
    }
    if (!orr_fw_megatron(s->framework) && !orr_fw_fsdp2(s->framework))
        return orr_fail(err, "--framework %s with model %s: mixture-of-experts models are modelled with --framework "
                             "megatron, torchtitan or automodel (FSDP2 + EP) only (%s's expert parallelism is not "
                             "modelled yet)", orr_framework_name(s->framework), m->name, orr_framework_name(s->framework));
    if (orr_fw_fsdp2(s->framework)) return resolve_moe_fsdp(s, err);
    char en[128];
    if (stage % ex)
        return orr_fail(err, "--ep %u (parallel.ep) with %s: ep*etp (%llu) must divide the GPUs of a pipeline stage, "
                             "tp*cp*dp = %u*%u*%u = %llu (Megatron-Core folds the experts' etp x ep x edp over them)",
                        s->ep, etp_named(s, en, sizeof en), (unsigned long long)ex, s->tp, s->cp, s->dp,
                        (unsigned long long)stage);
    if (s->tp > 1 && !s->sp)
        return orr_fail(err, "--tp %u (parallel.tp): an MoE model with tensor parallelism needs --sp (Megatron-Core "
                             "requires sequence parallelism for MoE with tp > 1)", s->tp);
    if (resolve_moe_common(s, err)) return -1;
    s->edp = (uint32_t)(stage / ex);
    return resolve_moe_a2a_overlap(s, err);
}

/* Sharding recipes (FSDP2, ZeRO; which framework owns them is resolve_framework's) and context
 * parallelism. */
static int resolve_sharding(orr_spec *s, orr_err *err)
{
    if (s->cp > 1 && s->seq % (2 * s->cp))
        return orr_fail(err, "--cp %u (parallel.cp): seq (%u) must be divisible by 2*cp (%u), for the causal load "
                             "balancing that splits the sequence into 2*cp chunks", s->cp, s->seq, 2 * s->cp);
    if (s->cp > 1 && s->sp && (s->seq / s->cp) % s->tp)
        return orr_fail(err, "--cp %u (parallel.cp): seq/cp (%u) must be divisible by tp (%u) with sequence parallelism",
                        s->cp, s->seq / s->cp, s->tp);
    if (s->zero == 3 && s->pp > 1)
        return orr_fail(err, "--zero 3 (parallel.zero): ZeRO-3 with pipeline parallelism (--pp %u) is not supported "
                             "(DeepSpeed's pipeline engine allows ZeRO stages 0 and 1 only)", s->pp);
    if (s->zero == 2 && s->pp > 1)
        return orr_fail(err, "--zero 2 (parallel.zero): ZeRO-2 with pipeline parallelism (--pp %u) is not supported "
                             "(DeepSpeed's pipeline engine allows ZeRO stages 0 and 1 only)", s->pp);
    if (s->fp8_allgather && s->precision != ORR_FP8)
        return orr_fail(err, "--fp8-allgather (parallel.fp8_allgather): needs --precision fp8 (float8 training)");
    return 0;
}

/* The fabric defaults to the cluster's topology. Symmetry stays as asked: the flow and packet
 * backends replay each collective and send of a collapsed rank on every GPU it stands for, so the
 * fabric carries the whole job's traffic (src/net/images.c, docs/spec.md "network"). */
static int resolve_network(orr_spec *s, orr_err *err)
{
    if (!s->topology_set) {
        orr_topo_spec t;
        orr_topo_spec_default(&t, &s->cluster);
        s->topo.kind = t.kind;
    }
    if (s->topo.kind == ORR_TOPO_HPCC && !s->topo.path[0])
        return orr_fail(err, "--topology hpcc (network.topology): needs --topology-file (network.topology_file)");
    if (!(s->topo.oversub >= 1)) return orr_fail(err, "--oversub (network.oversub): must be at least 1");
    if (s->net == ORR_NET_PACKET && s->pxn)
        return orr_fail(err, "--pxn (network.pxn): not supported by --net packet (the packet engine routes every flow "
                             "by shortest path); use --net flow for PXN");
    /* refused before the workload of every GPU is built (65,536 GPUs took 32 s and 2.1 GB to fail) */
    if (s->net != ORR_NET_ANALYTIC && (uint64_t)s->gpus * s->gpus > ORR_TOPO_MAX_DIST_ENTRIES)
        return orr_fail(err, "--gpus %u with --net %s: a fabric of this many GPUs needs routing tables of over %llu "
                             "entries (docs/spec.md \"Limits\"); use --net analytic", s->gpus, orr_net_kind_name(s->net),
                        (unsigned long long)ORR_TOPO_MAX_DIST_ENTRIES);
    return 0;
}

static int resolve_jobs(orr_spec *s, orr_err *err);

/* The training precision is one of precision_dtypes and the GPU has tensor cores for it. */
static int check_precision(const orr_spec *s, orr_err *err)
{
    size_t i = 0;
    while (i < NPRECISIONS && precision_dtypes[i] != s->precision) i++;
    if (i == NPRECISIONS)
        return orr_fail(err, "--precision (training.precision): expected bf16, fp16, fp8, mxfp8 or nvfp4");
    if (s->gpu.peak_flops[s->precision] > 0) return 0;
    const char *p = precision_names[i];
    const orr_gpu *g = &s->gpu;
    if (s->precision == ORR_MXFP8 && g->peak_flops[ORR_FP8] > 0)
        return orr_fail(err, "--precision mxfp8 (training.precision): GPU %s cannot run mxfp8: block-scaled (MX) "
                             "FP8 needs Blackwell tensor cores (compute capability 10.0 or later; %s has %.1f); "
                             "use --precision fp8 (per-tensor scaling)", g->name, g->name, g->compute_capability);
    if (s->precision == ORR_NVFP4)
        return orr_fail(err, "--precision nvfp4 (training.precision): GPU %s has no FP4 tensor cores (fp4_tflops is "
                             "0; NVFP4 needs Blackwell, compute capability 10.0 or later)", g->name);
    return orr_fail(err, "--precision %s (training.precision): GPU %s has no %s tensor cores (peak %s TFLOP/s is 0)",
                    p, g->name, p, p);
}

/* --fp8-recipe: fp8 training only; each recipe where its framework has it (Transformer Engine's delayed
 * and blockwise scaling for Megatron-LM, torchao's rowwise for TorchTitan and NeMo AutoModel, per-tensor
 * everywhere), on a GPU whose GEMM rate under that scaling was measured (data/gpus.yaml). */
static int check_fp8_recipe(const orr_spec *s, orr_err *err)
{
    const char *name = orr_fp8_recipe_name(s->fp8_recipe);
    if ((unsigned)s->fp8_recipe >= NFP8_RECIPES)
        return orr_fail(err, "--fp8-recipe (training.fp8_recipe): expected tensorwise, delayed, rowwise or blockwise");
    if (s->fp8_recipe_set && s->precision != ORR_FP8)
        return orr_fail(err, "--fp8-recipe %s (training.fp8_recipe): needs --precision fp8 (the recipe scales fp8 GEMMs; "
                             "mxfp8 and nvfp4 have their own block scales)", name);
    if (s->precision != ORR_FP8) return 0;
    int te = orr_fw_megatron(s->framework);
    int torchao = s->framework == ORR_FW_TORCHTITAN || s->framework == ORR_FW_AUTOMODEL;
    const orr_gpu *g = &s->gpu;
    switch (s->fp8_recipe) {
    case ORR_FP8_TENSORWISE: return 0;
    case ORR_FP8_DELAYED:
        if (te) return 0;
        return orr_fail(err, "--fp8-recipe delayed (training.fp8_recipe): delayed scaling is Transformer Engine's "
                             "(framework megatron or megatron-fsdp), not %s's; use tensorwise",
                        orr_framework_name(s->framework));
    case ORR_FP8_ROWWISE:
        if (!torchao)
            return orr_fail(err, "--fp8-recipe rowwise (training.fp8_recipe): rowwise scaling is torchao's (framework "
                                 "torchtitan or automodel), not %s's; Transformer Engine's fine-grained recipe is "
                                 "blockwise", orr_framework_name(s->framework));
        if (!(g->fp8_rowwise_rate > 0))
            return orr_fail(err, "--fp8-recipe rowwise (training.fp8_recipe): no rowwise fp8 GEMM rate measured for GPU "
                                 "%s (fp8_rowwise_rate in data/gpus.yaml or a --profile)", g->name);
        return 0;
    case ORR_FP8_BLOCKWISE:
        if (!te)
            return orr_fail(err, "--fp8-recipe blockwise (training.fp8_recipe): blockwise scaling is Transformer "
                                 "Engine's Float8BlockScaling (framework megatron or megatron-fsdp), not %s's",
                            orr_framework_name(s->framework));
        if (!(g->fp8_block_rate > 0 && g->fp8_block_1d_rate > 0))
            return orr_fail(err, "--fp8-recipe blockwise (training.fp8_recipe): no blockwise fp8 GEMM rates measured "
                                 "for GPU %s (fp8_block_rate and fp8_block_1d_rate in data/gpus.yaml or a --profile)",
                            g->name);
        return 0;
    }
    return 0;
}

/* --attention cudnn: cuDNN's fused attention needs its rate measured on the GPU (attn_cudnn_*_eff). */
static int check_attention(const orr_spec *s, orr_err *err)
{
    const orr_gpu *g = &s->gpu;
    if (s->attention != ORR_ATTN_CUDNN) return 0;
    if (s->model.dropout > 0)
        return orr_fail(err, "--attention cudnn (options.attention) with dropout %g (model.dropout): cuDNN's attention "
                             "with dropout runs at about half its rate (data/validation/measured/h100_2026-11-26/"
                             "attention.csv), which is not modelled; use flash, or a model with dropout 0",
                        s->model.dropout);
    if (g->attn_cudnn_fwd_eff > 0 && g->attn_cudnn_bwd_eff > 0) return 0;
    return orr_fail(err, "--attention cudnn (options.attention): no cuDNN fused-attention rate measured for GPU %s "
                         "(attn_cudnn_fwd_eff and attn_cudnn_bwd_eff in data/gpus.yaml or a --profile); use flash",
                    g->name);
}

/* Megatron-Core's recompute_modules, with its own checks (TransformerConfig.__post_init__): under
 * --recompute selective only; moe_act needs experts (its grouped GEMMs), mla_up_proj MLA;
 * shared_experts not with the shared-expert overlap, moe not with the combined 1F1B all-to-all
 * overlap. Modules the model has nothing for (mlp on an all-MoE model, moe on a dense one) are no-ops,
 * as in Megatron. Not given: core_attn, Megatron's default. */
static int resolve_recompute_modules(orr_spec *s, orr_err *err)
{
    static const char opt[] = "--recompute-modules (training.recompute_modules)";
    uint32_t m = s->recompute_modules;
    if (m && !orr_fw_megatron(s->framework))
        return foreign_option(s, ORR_FW_MEGATRON, opt, "Megatron-Core's selective recompute", err);
    if (m && s->recompute != ORR_RECOMPUTE_SELECTIVE)
        return orr_fail(err, "%s with --recompute %s (training.recompute): Megatron-Core applies recompute_modules "
                             "under recompute_granularity selective only (--recompute selective)",
                        opt, orr_recompute_name(s->recompute));
    if (m >> ORR_RCM_COUNT) return orr_fail(err, "%s: unknown module bits 0x%x", opt, (unsigned)m);
    if ((m & ORR_RCM_MOE_ACT) && !s->model.experts)
        return orr_fail(err, "%s moe_act: model %s has no experts", opt, s->model.name);
    if ((m & ORR_RCM_MLA_UP_PROJ) && s->model.attn_kind != ORR_ATTN_KIND_MLA)
        return orr_fail(err, "%s mla_up_proj: model %s has no multi-latent attention", opt, s->model.name);
    if ((m & ORR_RCM_SHARED_EXPERTS) && s->model.shared_experts && s->moe_shared_expert_overlap)
        return orr_fail(err, "%s shared_experts with --moe-shared-expert-overlap: Megatron-Core cannot recompute the "
                             "shared experts while they overlap the dispatch", opt);
    if ((m & ORR_RCM_MOE) && s->moe_a2a_overlap)
        return orr_fail(err, "%s moe with %s: Megatron-Core requires moe out of recompute_modules", opt,
                        a2a_overlap_opt);
    if (!m && s->recompute == ORR_RECOMPUTE_SELECTIVE && orr_fw_megatron(s->framework))
        s->recompute_modules = ORR_RCM_CORE_ATTN;
    if (s->sac_every && s->recompute != ORR_RECOMPUTE_SELECTIVE)
        return orr_fail(err, "--selective-ac-option %u (training.selective_ac_option) with --recompute %s "
                             "(training.recompute): TorchTitan reads the option in mode selective only",
                        s->sac_every, orr_recompute_name(s->recompute));
    return 0;
}

int orr_spec_resolve(orr_spec *s, orr_err *err)
{
    if (s->njobs) return resolve_jobs(s, err);
    if (resolve_framework(s, err) || resolve_hardware(s, err) || resolve_sizes(s, err) || resolve_parallel(s, err) ||
        resolve_sharding(s, err) || resolve_moe(s, err))
        return -1;
    if (check_precision(s, err) || check_fp8_recipe(s, err) || check_attention(s, err)) return -1;
    if ((unsigned)s->recompute > ORR_RECOMPUTE_FULL)
        return orr_fail(err, "--recompute (training.recompute): expected none, selective or full");
    if (resolve_recompute_modules(s, err) || resolve_nanotron(s, err)) return -1;
    if (s->expandable_segments && !s->caching_allocator)
        return orr_fail(err, "--expandable-segments (options.expandable_segments) with --no-caching-allocator: expandable "
                             "segments are a mode of PyTorch's caching allocator");
    if (s->launch_ps < 0) return orr_fail(err, "--launch-us (options.launch_us): must not be negative");
    if (!(s->bucket_params > 0) && s->framework == ORR_FW_NANOTRON) {
        s->bucket_params = 25.0 * 1024 * 1024 / 2.0; /* DDP's bucket_cap_mb 25 (model.ddp_bucket_cap_mb) of bf16 */
    } else if (!(s->bucket_params > 0)) {
        double by_dp = 1e6 * s->dp;
        s->bucket_params = by_dp > 40e6 ? by_dp : 40e6;
    }
    return resolve_network(s, err);
}

/* ---- Resolve a multi-job spec ---- */

/* "FILE:LINE: jobs[i] ("name"): message" (the line when known). */
static int job_fail(const orr_spec *s, size_t i, int line, orr_err *err, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int job_fail(const orr_spec *s, size_t i, int line, orr_err *err, const char *fmt, ...)
{
    char msg[400], where[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const char *file = s->spec_path[0] ? s->spec_path : "spec";
    if (line > 0) snprintf(where, sizeof where, "%s:%d: ", file, line);
    else snprintf(where, sizeof where, "%s: ", file);
    return orr_fail(err, "%sjobs[%zu] (\"%s\"): %s", where, i, s->jobs[i].name, msg);
}

typedef struct gpu_owner { uint32_t gpu, job; } gpu_owner;

static int cmp_owner(const void *a, const void *b)
{
    const gpu_owner *x = a, *y = b;
    if (x->gpu != y->gpu) return x->gpu < y->gpu ? -1 : 1;
    return (x->job > y->job) - (x->job < y->job);
}

/* Where job i's ranks run: gpu_of[k] = global GPU of its rank k. next is the first GPU after the
 * previous job (the default placement packs jobs in list order). */
static int place_job(orr_spec *s, size_t i, uint32_t gpn, uint64_t *next, orr_err *err)
{
    orr_job *j = &s->jobs[i];
    uint32_t n = j->s.gpus;
    j->gpu_of = orr_xmalloc((size_t)n * sizeof *j->gpu_of);
    if (j->nnodes) {
        uint64_t held = (uint64_t)j->nnodes * gpn;
        if (n >= gpn && held != n)
            return job_fail(s, i, j->placement_line, err, "nodes: %u nodes of %u GPUs (cluster.gpus_per_node) hold "
                            "%llu GPUs, but the job has %u (gpus); list %u nodes", j->nnodes, gpn,
                            (unsigned long long)held, n, n / gpn);
        if (n < gpn && j->nnodes != 1)
            return job_fail(s, i, j->placement_line, err, "nodes: the job has %u GPUs, fewer than a node's %u: list one "
                            "node", n, gpn);
        for (uint32_t k = 0; k < n; k++) {
            uint64_t g = (uint64_t)j->nodes[k / gpn] * gpn + k % gpn;
            if (g >= UINT32_MAX)
                return job_fail(s, i, j->placement_line, err, "nodes: node %u is beyond the largest cluster",
                                j->nodes[k / gpn]);
            j->gpu_of[k] = (uint32_t)g;
        }
    } else {
        uint64_t start = j->first_gpu_set ? j->first_gpu : *next;
        int whole = n >= gpn, spills = !whole && start % gpn + n > gpn;
        if (j->first_gpu_set && whole && start % gpn)
            return job_fail(s, i, j->placement_line, err, "first_gpu: %llu is not the first GPU of a node; a job of "
                            "%u GPUs takes whole nodes, so first_gpu must be a multiple of gpus_per_node (%u)",
                            (unsigned long long)start, n, gpn);
        if (j->first_gpu_set && spills)
            return job_fail(s, i, j->placement_line, err, "first_gpu: a job of %u GPUs, fewer than a node's %u, must "
                            "lie within one node, but GPUs %llu..%llu span two", n, gpn,
                            (unsigned long long)start, (unsigned long long)(start + n - 1));
        if ((whole && start % gpn) || spills) start += gpn - start % gpn; /* packed: the next node that fits */
        if (start + n > UINT32_MAX)
            return job_fail(s, i, j->placement_line, err, "first_gpu: GPUs %llu.. are beyond the largest cluster",
                            (unsigned long long)start);
        for (uint32_t k = 0; k < n; k++) j->gpu_of[k] = (uint32_t)(start + k);
    }
    uint64_t end = 0;
    for (uint32_t k = 0; k < n; k++)
        if (j->gpu_of[k] + 1ull > end) end = j->gpu_of[k] + 1ull;
    *next = end;
    return 0;
}

/* Each job on its own (orr_spec_resolve), then what they share: the hardware, the network, the
 * cluster's GPU count, and placements that fit and do not overlap. */
static int resolve_jobs(orr_spec *s, orr_err *err)
{
    for (size_t i = 0; i < s->njobs; i++) {
        orr_job *j = &s->jobs[i];
        orr_err e;
        /* One run holds every job, and the symmetry of one job is no symmetry of the whole: every
         * GPU is simulated (docs/spec.md "jobs"). */
        j->s.symmetry = 0;
        if (orr_spec_resolve(&j->s, &e)) return job_fail(s, i, j->line, err, "%s", e.msg);
    }
    const orr_spec *j0 = &s->jobs[0].s;
    if (j0->net == ORR_NET_PACKET)
        return orr_fail(err, "--net packet (network.backend): not supported with jobs: (%s); use --net flow for "
                             "jobs that share the fabric, or --net analytic", s->spec_path[0] ? s->spec_path : "spec");
    uint32_t gpn = j0->cluster.gpus_per_node;
    uint64_t next = 0, end = 0, total = 0;
    for (size_t i = 0; i < s->njobs; i++) {
        if (place_job(s, i, gpn, &next, err)) return -1;
        if (next > end) end = next;
        total += s->jobs[i].s.gpus;
    }
    if (s->gpus == 0) {
        uint64_t world = (end + gpn - 1) / gpn * gpn;
        if (world > UINT32_MAX) return orr_fail(err, "jobs: the jobs need more than 2^32 GPUs");
        s->gpus = (uint32_t)world;
    } else if (s->gpus > gpn && s->gpus % gpn) {
        return orr_fail(err, "--gpus %u (gpus): with jobs: the cluster's GPUs, which must be a multiple of "
                             "--gpus-per-node (%u, cluster.gpus_per_node) or fewer than it", s->gpus, gpn);
    }
    gpu_owner *own = orr_xmalloc((size_t)total * sizeof *own);
    size_t m = 0;
    for (size_t i = 0; i < s->njobs; i++)
        for (uint32_t k = 0; k < s->jobs[i].s.gpus; k++) own[m++] = (gpu_owner){s->jobs[i].gpu_of[k], (uint32_t)i};
    qsort(own, m, sizeof *own, cmp_owner);
    int rc = 0;
    for (size_t k = 0; k < m && rc == 0; k++) {
        const orr_job *j = &s->jobs[own[k].job];
        if (own[k].gpu >= s->gpus)
            rc = job_fail(s, own[k].job, j->placement_line ? j->placement_line : j->line, err,
                          "uses GPU %u, but the cluster has %u GPUs (gpus: %u; give a larger gpus or place the "
                          "job lower)", own[k].gpu, s->gpus, s->gpus);
        else if (k > 0 && own[k].gpu == own[k - 1].gpu)
            rc = job_fail(s, own[k].job, j->placement_line ? j->placement_line : j->line, err,
                          "GPU %u is also used by jobs[%u] (\"%s\"); jobs must not overlap", own[k].gpu,
                          own[k - 1].job, s->jobs[own[k - 1].job].name);
    }
    free(own);
    if (rc) return -1;
    /* The shared keys, as every job resolved them. */
    s->gpu = j0->gpu;
    s->cluster = j0->cluster;
    s->topo = j0->topo;
    s->net = j0->net;
    s->symmetry = 0;
    return 0;
}
