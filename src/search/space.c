/*
 * space.c - the search space: the base job, each axis's values (a list given, or its default rule,
 * which may read the axes before it), the enumeration of every trial in a fixed order, and the spec
 * of one trial built as predict builds one (flags over the base, then resolve).
 */
#include "search/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int search_base_init(const orr_search_opts *o, search_base *b, orr_err *err)
{
    memset(b, 0, sizeof *b);
    orr_spec_init(&b->s);
    if (o->spec_text ? orr_spec_load_text(&b->s, "spec", o->spec_text, strlen(o->spec_text), err)
                     : o->spec_path && orr_spec_load_file(&b->s, o->spec_path, err))
        return -1;
    if (b->s.njobs) {
        orr_spec_free(&b->s);
        return orr_fail(err, "%s: a spec with jobs: cannot be searched (search one job at a time)",
                        o->spec_text ? "spec" : o->spec_path);
    }
    for (int i = 0; i < o->base_argc; i++)
        if (strcmp(o->base_argv[i], "--dp") == 0 || strncmp(o->base_argv[i], "--dp=", 5) == 0)
            return orr_fail(err, "--dp: not a search flag (each trial derives dp = gpus/(tp*cp*pp) from --gpus)");
    if (orr_spec_apply_flags(&b->s, o->base_argc, o->base_argv, err)) return -1;
    if (!o->ax[ORR_AX_GPUS].given && !b->s.gpus)
        return orr_fail(err, "--gpus: required by search (the GPUs the configurations share, or a list of counts)");
    return search_base_finish(b, o->ax[ORR_AX_GPUS].given ? o->ax[ORR_AX_GPUS].v[0] : 0, err);
}

int search_base_finish(search_base *b, uint32_t gpus, orr_err *err)
{
    if (!b->s.model.name[0]) return orr_fail(err, "--model: required (a catalog name, a YAML model file or a config.json)");
    if (!b->s.gbs) return orr_fail(err, "--gbs: required by search (the global batch size, sequences per iteration)");
    b->s.quiet = 1;
    b->s.json = 0;
    b->s.dp = 0;
    orr_spec hw = b->s;
    if (gpus) hw.gpus = gpus;
    if (orr_spec_resolve_hardware(&hw, NULL, err)) return -1;
    b->gpn = hw.cluster.gpus_per_node;
    b->layers = b->s.model.layers;
    b->seq = b->s.seq ? b->s.seq : b->s.model.seq;
    b->gbs = b->s.gbs;
    return 0;
}

/* Divisors of n that are at most max, ascending. */
static uint32_t divisors(uint32_t n, uint32_t max, uint32_t *out)
{
    uint32_t k = 0;
    for (uint32_t d = 1; d <= n && d <= max && k < ORR_SEARCH_MAX_VALUES; d++)
        if (n % d == 0) out[k++] = d;
    return k;
}

/* The default rule of a numeric axis, given the axes before it (cur). */
static uint32_t default_parallel(const search_base *b, int ax, int is_auto, const uint32_t *cur, uint32_t *out)
{
    uint32_t gpus = cur[ORR_AX_GPUS], tp = cur[ORR_AX_TP], pp = cur[ORR_AX_PP], cp = cur[ORR_AX_CP], k = 0;
    switch (ax) {
    case ORR_AX_TP: return divisors(gpus, b->gpn, out);
    case ORR_AX_PP: return gpus % tp ? (out[0] = 1, 1) : divisors(gpus / tp, b->layers, out);
    case ORR_AX_CP:
        if (!is_auto || gpus % ((uint64_t)tp * pp)) return out[0] = 1, 1;
        uint32_t all[ORR_SEARCH_MAX_VALUES], n = divisors(gpus / (tp * pp), UINT32_MAX, all);
        for (uint32_t i = 0; i < n; i++) /* those with seq divisible by 2*cp (and cp 1) */
            if (all[i] == 1 || b->seq % (2 * all[i]) == 0) out[k++] = all[i];
        return k;
    case ORR_AX_EP: { /* Megatron-Core folds etp x ep over the tp*cp*dp = gpus/pp GPUs of a stage;
                       * TorchTitan carves ep out of dp_shard x cp = gpus/(tp*pp) */
        orr_framework fw = (orr_framework)cur[ORR_AX_FRAMEWORK];
        uint32_t experts = b->s.model.experts;
        uint32_t etp = orr_fw_fsdp2(fw) ? 1 : orr_spec_etp_for(&b->s, fw, tp); /* as resolve_moe takes it */
        uint64_t split = orr_fw_fsdp2(fw) ? (uint64_t)tp * pp : pp;
        if (!experts || gpus % split) return out[0] = 1, 1;
        uint32_t stage = (uint32_t)(gpus / split);
        for (uint32_t e = 1; e <= experts && k < ORR_SEARCH_MAX_VALUES; e++)
            if (experts % e == 0 && stage % ((uint64_t)e * etp) == 0) out[k++] = e;
        return k ? k : (out[0] = 1, 1);
    }
    case ORR_AX_VPP:
        out[k++] = 1;
        if (is_auto && pp > 1)
            for (uint32_t v = 2; (uint64_t)pp * v <= b->layers && k < ORR_SEARCH_MAX_VALUES; v++)
                if (b->layers % (pp * v) == 0) out[k++] = v;
        return k;
    case ORR_AX_MBS: {
        uint64_t mp = (uint64_t)tp * pp * cp;
        if (gpus % mp || b->gbs % (gpus / mp)) return out[0] = 1, 1;
        uint32_t per_replica = b->gbs / (uint32_t)(gpus / mp);
        for (uint32_t m = 1; m <= per_replica && k < ORR_SEARCH_MAX_VALUES; m *= 2)
            if (per_replica % m == 0) out[k++] = m;
        return k;
    }
    }
    return 0;
}

/* The values of axis ax for the trial whose earlier axes are cur. */
static uint32_t axis_values(const orr_search_opts *o, const search_base *b, int ax, const uint32_t *cur, uint32_t *out)
{
    const orr_axis_values *a = &o->ax[ax];
    orr_framework fw = (orr_framework)cur[ORR_AX_FRAMEWORK];
    if (ax == ORR_AX_ZERO && fw != ORR_FW_DEEPSPEED) return out[0] = 0, 1;
    if (ax == ORR_AX_FSDP && !orr_fw_fsdp2(fw)) return out[0] = 0, 1;
    if (ax == ORR_AX_DIST_OPT && fw != ORR_FW_MEGATRON) return out[0] = 0, 1;
    if (a->given && !a->is_auto) {
        memcpy(out, a->v, a->n * sizeof *out);
        return a->n;
    }
    uint64_t mp = (uint64_t)cur[ORR_AX_TP] * cur[ORR_AX_PP] * cur[ORR_AX_CP], gpus = cur[ORR_AX_GPUS];
    switch (ax) {
    case ORR_AX_GPUS: return out[0] = b->s.gpus, 1;
    case ORR_AX_FRAMEWORK: return out[0] = b->s.framework, 1;
    case ORR_AX_RECOMPUTE: return out[0] = ORR_RECOMPUTE_NONE, out[1] = ORR_RECOMPUTE_SELECTIVE, out[2] = ORR_RECOMPUTE_FULL, 3;
    case ORR_AX_ZERO: return out[0] = 1, out[1] = 2, out[2] = 3, 3;
    case ORR_AX_FSDP: /* 0: full shard (resolve makes it dp); auto: every divisor of dp (HSDP) */
        if (!a->is_auto || gpus % mp) return out[0] = 0, 1;
        return divisors((uint32_t)(gpus / mp), UINT32_MAX, out);
    case ORR_AX_DIST_OPT: return out[0] = 1, 1;
    case ORR_AX_SP: return out[0] = cur[ORR_AX_TP] > 1 && fw != ORR_FW_DEEPSPEED, 1;
    }
    return default_parallel(b, ax, a->is_auto, cur, out);
}

typedef struct enum_ctx {
    const orr_search_opts *o;
    const search_base *b;
    orr_trial *t;
    uint32_t n, cap;
    int over;
} enum_ctx;

/* Depth-first over the axes in order: every combination, the last axis varying fastest. */
static void enum_level(enum_ctx *c, int ax, uint32_t *cur)
{
    if (c->over) return;
    if (ax == ORR_AX_COUNT) {
        if (c->n == ORR_SEARCH_MAX_TRIALS) {
            c->over = 1;
            return;
        }
        if (c->n == c->cap) {
            c->cap = c->cap ? 2 * c->cap : 256;
            c->t = orr_xrealloc(c->t, c->cap * sizeof *c->t);
        }
        orr_trial *t = &c->t[c->n];
        memset(t, 0, sizeof *t);
        t->index = c->n++;
        memcpy(t->v, cur, sizeof t->v);
        t->status = ORR_TRIAL_PENDING;
        return;
    }
    uint32_t vals[ORR_SEARCH_MAX_VALUES];
    uint32_t n = axis_values(c->o, c->b, ax, cur, vals);
    for (uint32_t i = 0; i < n && !c->over; i++) {
        cur[ax] = vals[i];
        enum_level(c, ax + 1, cur);
    }
}

int search_enumerate(const orr_search_opts *o, const search_base *b, orr_trial **out, uint32_t *n, orr_err *err)
{
    enum_ctx c = {o, b, NULL, 0, 0, 0};
    uint32_t cur[ORR_AX_COUNT] = {0};
    enum_level(&c, 0, cur);
    if (c.over) {
        free(c.t);
        return orr_fail(err, "search: the space has more than %d trials (the limit); narrow it with lists, e.g. "
                             "--tp 4,8 --mbs 1,2 --recompute none", ORR_SEARCH_MAX_TRIALS);
    }
    *out = c.t;
    *n = c.n;
    return 0;
}

/* Appends "--flag" and, if val, its value to argv. */
static void add_arg(char **argv, int *argc, const char *flag, const char *val)
{
    argv[(*argc)++] = (char *)flag;
    if (val) argv[(*argc)++] = (char *)val;
}

int search_trial_spec(const search_base *b, const orr_trial *t, const char *net, orr_spec *s, orr_err *err)
{
    *s = b->s;
    s->tp = s->pp = s->cp = s->ep = s->vpp = s->mbs = 1;
    s->fsdp = s->zero = 0;
    s->sp = s->dist_opt = 0;
    s->recompute = ORR_RECOMPUTE_NONE;
    char num[7][16], gpus[16], *argv[32];
    int argc = 0;
    snprintf(gpus, sizeof gpus, "%u", t->v[ORR_AX_GPUS]);
    add_arg(argv, &argc, "--gpus", gpus);
    const int nums[] = {ORR_AX_TP, ORR_AX_PP, ORR_AX_CP, ORR_AX_EP, ORR_AX_VPP, ORR_AX_MBS, ORR_AX_ZERO};
    const char *names[] = {"--tp", "--pp", "--cp", "--ep", "--vpp", "--mbs", "--zero"};
    add_arg(argv, &argc, "--framework", orr_framework_name((orr_framework)t->v[ORR_AX_FRAMEWORK]));
    for (int k = 0; k < 7; k++) {
        if (nums[k] == ORR_AX_ZERO && t->v[ORR_AX_FRAMEWORK] != ORR_FW_DEEPSPEED) continue;
        snprintf(num[k], sizeof num[k], "%u", t->v[nums[k]]);
        add_arg(argv, &argc, names[k], num[k]);
    }
    char fsdp[16];
    if (t->v[ORR_AX_FSDP]) {
        snprintf(fsdp, sizeof fsdp, "%u", t->v[ORR_AX_FSDP]);
        add_arg(argv, &argc, "--fsdp", fsdp);
    }
    add_arg(argv, &argc, "--recompute", orr_recompute_name((orr_recompute)t->v[ORR_AX_RECOMPUTE]));
    add_arg(argv, &argc, t->v[ORR_AX_SP] ? "--sp" : "--no-sp", NULL);
    add_arg(argv, &argc, t->v[ORR_AX_DIST_OPT] ? "--dist-opt" : "--no-dist-opt", NULL);
    if (net) add_arg(argv, &argc, "--net", net);
    if (orr_spec_apply_flags(s, argc, argv, err)) return -1;
    /* the job's --recompute-modules hold for the trials that recompute selectively under Megatron */
    if (s->recompute != ORR_RECOMPUTE_SELECTIVE || !orr_fw_megatron(s->framework)) s->recompute_modules = 0;
    /* and its --selective-ac-option for those under TorchTitan */
    if (s->recompute != ORR_RECOMPUTE_SELECTIVE || s->framework != ORR_FW_TORCHTITAN) s->sac_every = 0;
    return orr_spec_resolve(s, err);
}

const char *search_reason_key(const char *msg)
{
    if (strstr(msg, "framework") || strstr(msg, "not supported") || strstr(msg, "not modelled")) return "framework";
    if (strstr(msg, "virtual stage") || strstr(msg, "layers")) return "pipeline";
    if (strstr(msg, "divisible") || strstr(msg, "must equal") || strstr(msg, "must divide") || strstr(msg, "multiple of"))
        return "divisibility";
    return "other";
}
