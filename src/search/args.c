/*
 * args.c - `orrery search`'s command line: its own flags, the axes (predict's parallel and training
 * flags, each taking a list), and every other flag handed to predict's parser as the base job.
 * The table below is the one home of the search's flags: `orrery help search` prints it and
 * tests/cli_help.sh checks it against docs/spec.md.
 */
#include "orrery/search.h"

#include "spec/yaml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { S_STRATEGY = ORR_AX_COUNT, S_BUDGET, S_SEED, S_JOBS, S_OBJECTIVE, S_PRICE, S_TOP, S_JSON, S_CSV, S_NO_PRUNE,
       S_NO_SP, S_NO_DIST_OPT, S_TRACE, S_NO_TIME_BOUND, S_TOKENS, S_REFINE, S_NET, S_HTML, S_COUNT };

#define NUMS "comma-separated positive integers or ranges A..B, or auto"
#define ONOFF "on, off or both (on,off), or auto"

/* One flag: its name, what it sets (an axis or one of the S_ ids), what its value must be (NULL: none;
 * "opt:" an optional value), its default in words, and one line of meaning. */
typedef struct sflag { const char *name; int id; const char *expects, *def, *help; } sflag;

static const sflag sflags[] = {
    /* the space */
    {"--gpus", ORR_AX_GPUS, "comma-separated positive integers or ranges A..B", "required (or the spec's gpus)",
     "GPU counts the configurations split; a list ranks them all and prints the Pareto front"},
    {"--framework", ORR_AX_FRAMEWORK, "comma-separated megatron, torchtitan, deepspeed, or any", "the spec's (megatron)",
     "frameworks to compare; any = megatron,torchtitan,deepspeed"},
    {"--tp", ORR_AX_TP, NUMS, "auto: divisors of gpus up to gpus-per-node", "tensor-parallel degrees"},
    {"--pp", ORR_AX_PP, NUMS, "auto: divisors of gpus/tp up to the layers", "pipeline-parallel degrees"},
    {"--cp", ORR_AX_CP, NUMS, "1 (auto: divisors of gpus/(tp*pp) with seq divisible by 2*cp)",
     "context-parallel degrees"},
    {"--ep", ORR_AX_EP, NUMS, "1 for a dense model; MoE: the divisors of the experts that divide gpus/pp (with --etp; torchtitan: gpus/(tp*pp))",
     "expert-parallel degrees (MoE models)"},
    {"--vpp", ORR_AX_VPP, NUMS, "1 (auto: every v with pp*v dividing the layers, v > 1 only with pp > 1)",
     "virtual pipeline stages per rank"},
    {"--mbs", ORR_AX_MBS, NUMS, "auto: powers of two dividing gbs/dp", "micro-batch sizes, sequences"},
    {"--recompute", ORR_AX_RECOMPUTE, "comma-separated none, selective, full, or auto", "auto: all three",
     "activation recomputation"},
    {"--zero", ORR_AX_ZERO, "comma-separated stages 1, 2, 3, or auto", "auto: 1,2,3", "deepspeed: ZeRO stages"},
    {"--fsdp", ORR_AX_FSDP, NUMS, "full shard, fsdp = dp (auto: every divisor of dp, HSDP)",
     "torchtitan: FSDP2 shard degrees"},
    {"--dist-opt", ORR_AX_DIST_OPT, "opt:" ONOFF, "on", "megatron: distributed optimizer (bare flag: on)"},
    {"--no-dist-opt", S_NO_DIST_OPT, NULL, NULL, "megatron: no distributed optimizer"},
    {"--sp", ORR_AX_SP, "opt:" ONOFF, "auto: on when tp > 1 (megatron, torchtitan)",
     "sequence parallelism (bare flag: on)"},
    {"--no-sp", S_NO_SP, NULL, NULL, "no sequence parallelism"},
    /* the search */
    {"--strategy", S_STRATEGY, "exhaustive, random or cmaes", "exhaustive",
     "how trials are chosen: every candidate, a random sample, or CMA-ES's samples"},
    {"--budget", S_BUDGET, "a positive integer", "required with random and cmaes", "random, cmaes: simulations at most"},
    {"--seed", S_SEED, "a non-negative integer", "1", "random, cmaes: the generator's seed"},
    {"-j", S_JOBS, "a positive integer up to 256", "1", "worker processes simulating trials"},
    {"--jobs", S_JOBS, "a positive integer up to 256", "1", "the long name of -j"},
    {"--objective", S_OBJECTIVE, "time, cost or mfu", "time", "what ranks the trials"},
    {"--price-per-gpu-hour", S_PRICE, "a positive number of US dollars", "none",
     "cost of one GPU for one hour, USD (cost_usd per iteration)"},
    {"--tokens", S_TOKENS, "a positive number of tokens (e.g. 2e12)", "none",
     "tokens to train: each trial's time (and, with a price, cost) to train them"},
    {"--refine", S_REFINE, "a positive integer", "none", "re-simulate the best K with --net flow or packet"},
    {"--net", S_NET, "analytic, flow or packet", "analytic",
     "the network model: with --refine, of the re-simulation only; else of every trial"},
    {"--top", S_TOP, "a positive integer", "10", "rows of the ranked table"},
    {"--json", S_JSON, NULL, "text", "print the search as JSON (docs/json.md)"},
    {"--csv", S_CSV, "an output file path", "none", "write every trial to a CSV file"},
    {"--html", S_HTML, "an output file path", "none",
     "write a self-contained HTML report: TP x PP heatmap, Pareto front, best trials (docs/report.md)"},
    {"--no-prune", S_NO_PRUNE, NULL, "pruning on", "simulate every valid trial (no bound, no memo)"},
    {"--no-time-bound", S_NO_TIME_BOUND, NULL, "on", "keep the trials the time lower bound would prune (checks it)"},
    {"--trace", S_TRACE, NULL, NULL, NULL}, /* refused: a trace is of one prediction */
};
#define NSFLAGS (sizeof sflags / sizeof sflags[0])

static const sflag *find_sflag(const char *arg, size_t len)
{
    for (size_t i = 0; i < NSFLAGS; i++)
        if (strlen(sflags[i].name) == len && strncmp(sflags[i].name, arg, len) == 0) return &sflags[i];
    return NULL;
}

static int bad(const sflag *f, const char *val, orr_err *err)
{
    char q[120];
    orr_quote(val, q, sizeof q);
    const char *e = strncmp(f->expects, "opt:", 4) == 0 ? f->expects + 4 : f->expects;
    return orr_fail(err, "%s: expected %s, got %s", f->name, e, q);
}

static int push(orr_axis_values *a, const sflag *f, uint32_t v, orr_err *err)
{
    if (a->n == ORR_SEARCH_MAX_VALUES)
        return orr_fail(err, "%s: more than %d values (narrow the list)", f->name, ORR_SEARCH_MAX_VALUES);
    a->v[a->n++] = v;
    return 0;
}

/* One item of a list as an axis value (a number, or the axis's word), or -1. */
static int word_value(int axis, const char *w, uint32_t *out)
{
    if (axis == ORR_AX_RECOMPUTE) {
        for (uint32_t r = ORR_RECOMPUTE_NONE; r <= ORR_RECOMPUTE_FULL; r++)
            if (strcasecmp(w, orr_recompute_name((orr_recompute)r)) == 0) return *out = r, 0;
        return -1;
    }
    if (axis == ORR_AX_SP || axis == ORR_AX_DIST_OPT) {
        if (strcasecmp(w, "on") == 0) return *out = 1, 0;
        if (strcasecmp(w, "off") == 0) return *out = 0, 0;
        return -1;
    }
    uint64_t v;
    if (orr_parse_u64(w, &v) || v > UINT32_MAX) return -1;
    if (axis == ORR_AX_ZERO ? v > 3 : v == 0) return -1;
    *out = (uint32_t)v;
    return 0;
}

/* Adds the frameworks of one item ("any": the three modelled ones). */
static int framework_item(orr_axis_values *a, const sflag *f, const char *w, const char *val, orr_err *err)
{
    if (strcasecmp(w, "any") == 0 || strcasecmp(w, "auto") == 0) {
        static const orr_framework all[] = {ORR_FW_MEGATRON, ORR_FW_TORCHTITAN, ORR_FW_DEEPSPEED};
        for (size_t k = 0; k < 3; k++)
            if (push(a, f, all[k], err)) return -1;
        return 0;
    }
    orr_framework fw;
    if (orr_framework_parse(w, &fw)) return bad(f, val, err);
    return push(a, f, fw, err);
}

/* One item of a list: auto, a value, or a range A..B of numbers. */
static int list_item(orr_axis_values *a, const sflag *f, const char *w, const char *val, orr_err *err)
{
    if (f->id == ORR_AX_FRAMEWORK) return framework_item(a, f, w, val, err);
    if (strcasecmp(w, "auto") == 0 && f->id != ORR_AX_GPUS) return a->is_auto = 1, 0;
    const char *dots = strstr(w, "..");
    uint32_t lo, hi;
    if (!dots || f->id == ORR_AX_RECOMPUTE || f->id == ORR_AX_SP || f->id == ORR_AX_DIST_OPT) {
        if (word_value(f->id, w, &lo)) return bad(f, val, err);
        return push(a, f, lo, err);
    }
    char left[24];
    size_t n = (size_t)(dots - w);
    if (n == 0 || n >= sizeof left) return bad(f, val, err);
    memcpy(left, w, n);
    left[n] = 0;
    if (word_value(f->id, left, &lo) || word_value(f->id, dots + 2, &hi) || hi < lo) return bad(f, val, err);
    if ((uint64_t)hi - lo >= ORR_SEARCH_MAX_VALUES)
        return orr_fail(err, "%s: the range %s has more than %d values (narrow it)", f->name, w, ORR_SEARCH_MAX_VALUES);
    for (uint32_t x = lo; x <= hi; x++)
        if (push(a, f, x, err)) return -1;
    return 0;
}

/* A comma-separated list of items into an axis (given once: a second flag for an axis is an error). */
static int parse_list(orr_axis_values *a, const sflag *f, const char *val, orr_err *err)
{
    if (a->given) return orr_fail(err, "%s: given twice (give one list, e.g. %s 1,2,4)", f->name, f->name);
    a->given = 1;
    char buf[512];
    if (strlen(val) >= sizeof buf) return orr_fail(err, "%s: the list is longer than %zu characters", f->name, sizeof buf - 1);
    strcpy(buf, val);
    char *save = NULL;
    int items = 0;
    for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save), items++)
        if (list_item(a, f, w, val, err)) return -1;
    if (!items || val[strlen(val) - 1] == ',' || val[0] == ',') return bad(f, val, err);
    return 0;
}

/* A search flag's own value (not an axis). */
static int apply_own(orr_search_opts *o, const sflag *f, const char *val, orr_err *err)
{
    uint64_t u;
    double d;
    switch (f->id) {
    case S_STRATEGY:
        if (strcasecmp(val, "exhaustive") == 0) o->strategy = ORR_STRATEGY_EXHAUSTIVE;
        else if (strcasecmp(val, "random") == 0) o->strategy = ORR_STRATEGY_RANDOM;
        else if (strcasecmp(val, "cmaes") == 0 || strcasecmp(val, "cma-es") == 0) o->strategy = ORR_STRATEGY_CMAES;
        else return bad(f, val, err);
        return 0;
    case S_BUDGET:
        if (orr_parse_u64(val, &u) || u == 0 || u > ORR_SEARCH_MAX_TRIALS) return bad(f, val, err);
        return o->budget = (uint32_t)u, 0;
    case S_SEED:
        if (orr_parse_u64(val, &u)) return bad(f, val, err);
        return o->seed = u, 0;
    case S_JOBS:
        if (orr_parse_u64(val, &u) || u == 0 || u > ORR_SEARCH_MAX_JOBS) return bad(f, val, err);
        return o->jobs = (uint32_t)u, 0;
    case S_OBJECTIVE:
        if (strcasecmp(val, "time") == 0) o->objective = ORR_OBJ_TIME;
        else if (strcasecmp(val, "cost") == 0) o->objective = ORR_OBJ_COST;
        else if (strcasecmp(val, "mfu") == 0) o->objective = ORR_OBJ_MFU;
        else return bad(f, val, err);
        return 0;
    case S_PRICE:
        if (orr_parse_num(val, &d) || !(d > 0) || d > 1e6) return bad(f, val, err);
        return o->price_per_gpu_hour = d, 0;
    case S_TOKENS:
        if (orr_parse_num(val, &d) || !(d >= 1) || d > 1e18) return bad(f, val, err);
        return o->tokens = d, 0;
    case S_REFINE:
        if (orr_parse_u64(val, &u) || u == 0 || u > 1000) return bad(f, val, err);
        return o->refine = (uint32_t)u, 0;
    case S_NET: {
        orr_net_kind k;
        if (orr_net_kind_parse(val, &k)) return bad(f, val, err);
        snprintf(o->refine_net, sizeof o->refine_net, "%s", orr_net_kind_name(k));
        return 0;
    }
    case S_TOP:
        if (orr_parse_u64(val, &u) || u == 0 || u > ORR_SEARCH_MAX_TRIALS) return bad(f, val, err);
        return o->top = (uint32_t)u, 0;
    case S_CSV:
    case S_HTML: {
        char *dst = f->id == S_CSV ? o->csv_path : o->html_path;
        if (strlen(val) >= sizeof o->csv_path) return orr_fail(err, "%s: path longer than %zu characters", f->name,
                                                               sizeof o->csv_path - 1);
        strcpy(dst, val);
        return 0;
    }
    case S_JSON: return o->json = 1, 0;
    case S_NO_PRUNE: return o->no_prune = 1, 0;
    case S_NO_TIME_BOUND: return o->no_time_bound = 1, 0;
    case S_NO_SP: return parse_list(&o->ax[ORR_AX_SP], find_sflag("--sp", 4), "off", err);
    case S_NO_DIST_OPT:
        return parse_list(&o->ax[ORR_AX_DIST_OPT], find_sflag("--dist-opt", 10), "off", err);
    case S_TRACE:
        return orr_fail(err, "--trace: not available in search (a trace is of one prediction: run orrery predict with "
                             "the configuration you want to see)");
    }
    return orr_fail(err, "%s: internal error: flag without a handler", f->name);
}

/* The value of flag f at argv[*i] ("--f=V" or "--f V"); NULL if it takes none (or an optional one
 * is absent). */
static const char *flag_value(const sflag *f, int argc, char **argv, int *i, const char *eq, orr_err *err, int *fail)
{
    *fail = 0;
    if (!f->expects) {
        if (eq) *fail = orr_fail(err, "%s takes no value", f->name);
        return NULL;
    }
    int optional = strncmp(f->expects, "opt:", 4) == 0;
    if (eq) return eq + 1;
    if (*i + 1 < argc && argv[*i + 1][0] != '-') return argv[++*i];
    if (!optional) *fail = orr_fail(err, "%s: missing value (%s)", f->name, f->expects);
    return NULL;
}

/* A `search:` entry's value as a command-line value: a scalar as written (true/false as on/off for
 * the on/off axes), a list of scalars joined by commas. */
static int yaml_value(const sflag *f, const orr_ynode *n, char *val, size_t cap, orr_err *err)
{
    int onoff = f->id == ORR_AX_SP || f->id == ORR_AX_DIST_OPT;
    size_t len = 0;
    val[0] = 0;
    const orr_ynode *item = n->kind == ORR_YSEQ ? n->first : n;
    if (n->kind == ORR_YMAP || (n->kind == ORR_YSEQ && !n->first))
        return orr_y_fail(n, err, "expected a value or a list of values (e.g. [1, 2, 4])");
    for (; item; item = n->kind == ORR_YSEQ ? item->next : NULL) {
        if (item->kind != ORR_YSCALAR || strlen(item->str) != item->len)
            return orr_y_fail(item, err, "expected a value, got a list or a mapping");
        const char *w = item->str;
        if (onoff && strcasecmp(w, "true") == 0) w = "on";
        if (onoff && strcasecmp(w, "false") == 0) w = "off";
        int k = snprintf(val + len, cap - len, "%s%s", len ? "," : "", w);
        if (k < 0 || (size_t)k >= cap - len) return orr_y_fail(n, err, "the list is longer than %zu characters", cap - 1);
        len += (size_t)k;
    }
    return 0;
}

/* One entry of the spec's `search:` mapping, unless the command line gave that flag (it wins). */
static int spec_entry(orr_search_opts *o, const unsigned char *seen, const orr_ynode *n, orr_err *err)
{
    char name[64], val[512];
    snprintf(name, sizeof name, "--%s", n->key);
    for (char *c = name; *c; c++)
        if (*c == '_') *c = '-';
    const sflag *f = find_sflag(name, strlen(name));
    if (!f || !f->help || f->id == S_JSON || f->id == S_CSV || f->id == S_HTML || f->id == S_NO_PRUNE || f->id == S_NO_TIME_BOUND ||
        f->id == S_NO_SP || f->id == S_NO_DIST_OPT)
        return orr_y_fail(n, err, "not a search setting (expected gpus, framework, tp, pp, cp, ep, vpp, mbs, recompute, "
                                  "zero, fsdp, dist_opt, sp, strategy, budget, seed, jobs, objective, "
                                  "price_per_gpu_hour, tokens, refine, net or top; output flags stay on the command "
                                  "line)");
    if (f->id < ORR_AX_COUNT ? o->ax[f->id].given : seen[f->id]) return 0;
    if (yaml_value(f, n, val, sizeof val, err)) return -1;
    orr_err e = {{0}};
    int rc = f->id < ORR_AX_COUNT ? parse_list(&o->ax[f->id], f, val, &e) : apply_own(o, f, val, &e);
    return rc ? orr_y_fail(n, err, "%s", e.msg) : 0;
}

/* The space and settings written under the spec's `search:` key (docs/spec.md "Search"). */
static int spec_section(orr_search_opts *o, const unsigned char *seen, orr_err *err)
{
    orr_ydoc doc;
    if (o->spec_text ? orr_yaml_parse(&doc, "spec", o->spec_text, strlen(o->spec_text), err)
                     : orr_yaml_load_file(&doc, o->spec_path, err))
        return -1;
    const orr_ynode *sec = doc.root && doc.root->kind == ORR_YMAP ? orr_y_get(doc.root, "search") : NULL;
    int rc = 0;
    if (sec && sec->kind != ORR_YMAP)
        rc = orr_y_fail(sec, err, "expected a mapping of search settings (e.g. tp: [1, 2, 4], strategy: cmaes)");
    for (const orr_ynode *n = sec && rc == 0 ? sec->first : NULL; n && rc == 0; n = n->next) rc = spec_entry(o, seen, n, err);
    orr_yaml_free(&doc);
    return rc;
}

static int parse(orr_search_opts *o, const char *spec_text, int argc, char **argv, orr_err *err)
{
    unsigned char seen[S_COUNT] = {0}; /* the settings the command line gave (they win over the spec's) */
    memset(o, 0, sizeof *o);
    o->spec_text = spec_text;
    o->seed = 1;
    o->jobs = 1;
    o->top = 10;
    o->base_argv = orr_xmalloc((size_t)(argc + 2) * sizeof *o->base_argv); /* + --net V (below) */
    int i = 0;
    if (!spec_text && argc > 0 && argv[0][0] != '-') o->spec_path = argv[i++];
    for (; i < argc; i++) {
        const char *arg = argv[i], *eq = strchr(arg, '=');
        size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
        const sflag *f = find_sflag(arg, len);
        if (!f) { /* predict's: the base job (its parser checks it) */
            o->base_argv[o->base_argc++] = argv[i];
            continue;
        }
        int fail;
        seen[f->id] = 1;
        const char *val = flag_value(f, argc, argv, &i, eq, err, &fail);
        if (fail) return -1;
        if (val && !*val) return orr_fail(err, "%s: missing value (%s)", f->name, f->expects);
        if (f->id < ORR_AX_COUNT) {
            if (parse_list(&o->ax[f->id], f, val ? val : "on", err)) return -1;
        } else if (apply_own(o, f, val, err)) {
            return -1;
        }
    }
    if ((o->spec_path || o->spec_text) && spec_section(o, seen, err)) return -1;
    if (o->strategy != ORR_STRATEGY_EXHAUSTIVE && !o->budget)
        return orr_fail(err, "--strategy %s: give --budget N, the most trials to simulate",
                        o->strategy == ORR_STRATEGY_RANDOM ? "random" : "cmaes");
    if (o->strategy == ORR_STRATEGY_EXHAUSTIVE && o->budget)
        return orr_fail(err, "--budget: only with --strategy random or cmaes (exhaustive simulates every valid trial)");
    if (o->refine && (!o->refine_net[0] || strcmp(o->refine_net, "analytic") == 0))
        return orr_fail(err, "--refine %u: give --net flow or --net packet, the finer network to re-simulate with",
                        o->refine);
    if (!o->refine && o->refine_net[0]) { /* --net without --refine: predict's flag, for every trial */
        static const char *const flag = "--net";
        o->base_argv[o->base_argc++] = (char *)flag;
        o->base_argv[o->base_argc++] = o->refine_net;
    }
    if (o->objective == ORR_OBJ_COST && !(o->price_per_gpu_hour > 0))
        return orr_fail(err, "--objective cost: give --price-per-gpu-hour USD, the price of one GPU for one hour");
    return 0;
}

int orr_search_parse(orr_search_opts *o, int argc, char **argv, orr_err *err) { return parse(o, NULL, argc, argv, err); }

int orr_search_parse_text(orr_search_opts *o, const char *spec_text, int argc, char **argv, orr_err *err)
{
    return parse(o, spec_text, argc, argv, err);
}

void orr_search_opts_free(orr_search_opts *o)
{
    free(o->base_argv);
    o->base_argv = NULL;
    o->base_argc = 0;
}

void orr_search_flags_help(orr_buf *out)
{
    for (size_t i = 0; i < NSFLAGS; i++) {
        const sflag *f = &sflags[i];
        if (!f->help) continue;
        const char *e = f->expects && strncmp(f->expects, "opt:", 4) == 0 ? f->expects + 4 : f->expects;
        char use[64];
        snprintf(use, sizeof use, "%s%s", f->name, !e ? "" : f->id < ORR_AX_COUNT ? " LIST" : strstr(e, "path") ? " FILE"
                                                                                   : strstr(e, "number") || strstr(e, "integer") ? " N"
                                                                                   : " X");
        orr_buf_printf(out, "  %-38s %s", use, f->help);
        if (e) orr_buf_printf(out, "; %s", e);
        if (f->def) orr_buf_printf(out, " [default: %s]", f->def);
        orr_buf_puts(out, "\n");
    }
}
