/*
 * orrery - the command-line front door.
 *
 *   orrery predict [SPEC.yaml] [FLAGS]   predict one training iteration (docs/spec.md)
 *   orrery list gpus|models|clusters     print the catalogs
 *   orrery validate [DIR] [--set NAME]    predict the published rows of DIR (data/validation), every table
 *                                         or those named
 *   orrery netsim TOPO FLOWS CONFIG [--out DIR]   packet-level RDMA simulation of a flow list (docs/netsim.md)
 *   orrery emulate [FLAGS] -- CMD ...     run an unmodified CUDA/NCCL program with no GPU and predict it
 *                                         (docs/emulate.md)
 *   orrery search [SPEC.yaml] [FLAGS]     predict every configuration of a space and rank them (docs/spec.md)
 *   orrery calibrate [SPEC.yaml] [FLAGS]  fit a hardware profile on a user's measurements (docs/calibrate.md)
 *
 * User errors print one line "orrery: ..." naming the file, field or flag, and exit 2.
 */
#include "orrery/orrery.h"
#include "orrery/calibrate.h"
#include "orrery/emulate.h"
#include "orrery/hw.h"
#include "orrery/model.h"
#include "orrery/packet.h"
#include "orrery/progress.h"
#include "orrery/search.h"
#include "orrery/validate.h"
#include "version.h"
#if ORRERY_HAVE_MPI
#include "orrery_mpi.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>
#include <time.h>

/* The subcommands, each with its one-line synopsis; `orrery help` prints them. */
static const struct { const char *name, *synopsis, *what; } commands[] = {
    {"predict", "orrery predict [SPEC.yaml] [FLAGS]",
     "predict one training iteration; --model NAME|FILE.yaml|config.json|HF_DIR (docs/spec.md)"},
    {"emulate", "orrery emulate [FLAGS] -- CMD [ARGS]",
     "run an unmodified CUDA/NCCL or PyTorch program with no GPU and predict it (docs/emulate.md)"},
    {"search", "orrery search [SPEC.yaml] [FLAGS]",
     "predict a space of configurations (--tp 1,2,4 --pp 1..8 ...) and rank them (docs/spec.md \"Search\")"},
    {"netsim", "orrery netsim TOPO FLOWS CONFIG [--out DIR] [--json] [--quiet] [--no-accel] [--no-memo] [--memo FILE] [--ss-theta X] [--ss-window N]",
     "packet-level RDMA simulation of a flow list, HPCC ns-3 formats (docs/netsim.md)"},
    {"calibrate", "orrery calibrate [SPEC.yaml] [FLAGS]",
     "fit a profile of your GPU and cluster on nccl-tests output and measured step times (docs/calibrate.md)"},
    {"validate", "orrery validate [DIR] [--set NAME]...",
     "predict the published rows (default: " ORRERY_DEFAULT_VALIDATION_DIR "); --set NAME: only that table (--set list names them)"},
    {"list", "orrery list gpus|models|clusters", "print the catalogs"},
    {"help", "orrery help [COMMAND]", "this text, or every flag of COMMAND (also: orrery COMMAND --help)"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static int usage(FILE *f)
{
    fputs("Orrery predicts how a distributed training job behaves on a GPU cluster.\n\ncommands:\n", f);
    for (size_t i = 0; i < NCOMMANDS; i++) fprintf(f, "  %-46s %s\n", commands[i].synopsis, commands[i].what);
    fputs("\n  orrery --version                               version, git commit, JSON schema version\n"
          "exit status: 0 done (an OOM verdict is a result: see the report's \"oom\"), 1 the emulated program failed,\n"
          "2 a usage or input error (one line on stderr naming the file, field or flag)\n", f);
    return f == stderr ? ORR_EXIT_USAGE : 0;
}

/* An unknown command: the nearest names and every command, exit 2. */
static int unknown_command(const char *where, const char *cmd)
{
    const char *names[NCOMMANDS];
    orr_buf all = {0};
    for (size_t k = 0; k < NCOMMANDS; k++) {
        names[k] = commands[k].name;
        orr_buf_printf(&all, "%s%s", k ? ", " : "", names[k]);
    }
    char hint[160];
    orr_did_you_mean(cmd, names, NCOMMANDS, hint, sizeof hint);
    fprintf(stderr, "orrery: %sunknown command \"%s\" (%sexpected %s)\n", where, cmd, hint, all.s);
    orr_buf_free(&all);
    return ORR_EXIT_USAGE;
}

/* `orrery help COMMAND` and `orrery COMMAND --help`: the synopsis and every flag, from the table the
 * parser reads (src/spec/flags.c). */
static void calibrate_flags_help(void);

static int help(const char *command)
{
    size_t i = 0;
    while (i < NCOMMANDS && strcmp(commands[i].name, command) != 0) i++;
    if (i == NCOMMANDS) return unknown_command("help: ", command);
    printf("usage: %s\n%s\n", commands[i].synopsis, commands[i].what);
    orr_buf b = {0};
    if (orr_flags_help(command, &b) == 0) {
        printf("\nflags (a value is given as --flag V or --flag=V):\n");
        fwrite(b.s, 1, b.n, stdout);
        if (strcmp(command, "predict") == 0)
            printf("\nEvery flag overrides the spec file's key of the same name (docs/spec.md lists both).\n");
    } else if (strcmp(command, "search") == 0) {
        orr_search_flags_help(&b);
        printf("\nflags of the space and the search (a value is given as --flag V or --flag=V):\n");
        fwrite(b.s, 1, b.n, stdout);
        printf("\nEvery other flag of predict (orrery help predict) sets the base job: --model, --gpu, --gpus and --gbs\n"
               "are required; a flag of the space left out means its default rule (docs/spec.md \"Search\").\n");
    } else if (strcmp(command, "calibrate") == 0) {
        calibrate_flags_help();
    } else if (strcmp(command, "netsim") == 0) {
        printf("\nflags:\n  %-38s %s\n  %-38s %s\n  %-38s %s\n", "--out DIR",
               "write the FCT and PFC outputs into DIR [default: as the config names them]", "--json",
               "print the result as JSON, every finished flow included (docs/netsim.md)", "--quiet",
               "no progress line on stderr (there is none when stderr is not a terminal)");
    }
    orr_buf_free(&b);
    return 0;
}

static int version(void)
{
    printf("orrery %s (commit %s), JSON schema %d\n", ORRERY_VERSION, ORRERY_GIT_COMMIT, ORR_JSON_SCHEMA_VERSION);
    return 0;
}

/* "--help" or "-h" among a subcommand's arguments (before an emulated command's "--"). */
static int wants_help(int argc, char **argv)
{
    for (int i = 0; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return 1;
    return 0;
}

static int fail(const orr_err *err)
{
    fprintf(stderr, "orrery: %s\n", err->msg);
    return ORR_EXIT_USAGE;
}

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A spec with jobs: (docs/spec.md "jobs"): each job alone and all together on one cluster. */
static int predict_jobs(const orr_spec *s)
{
    orr_err err = {{0}};
    if (s->html_path[0]) {
        fprintf(stderr, "orrery: --html %s: not available for a spec with jobs: (the report is of one job: predict "
                        "that job's spec; --trace FILE draws the shared run)\n", s->html_path);
        return ORR_EXIT_USAGE;
    }
    double t0 = wall_s();
    orr_jobs_prediction p;
    if (orr_predict_jobs(s, &p, &err) < 0) return fail(&err);
    double wall = wall_s() - t0;
    if (s->trace_path[0] && orr_report_trace(s->trace_path, p.w, &p.x, &err) < 0) {
        orr_jobs_prediction_free(&p);
        return fail(&err);
    }
    orr_buf out = {0};
    if (s->json) {
        orr_report_jobs_json(&p.report, &out);
    } else {
        orr_report_jobs_text(&p.report, &out);
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        orr_buf_printf(&out, "simulated in %.3f s wall, peak RSS %.1f MiB\n", wall, (double)ru.ru_maxrss / 1024.0);
        if (s->trace_path[0])
            orr_buf_printf(&out, "trace of the shared run written to %s (open in ui.perfetto.dev)\n", s->trace_path);
    }
    fwrite(out.s, 1, out.n, stdout);
    orr_buf_free(&out);
    orr_jobs_prediction_free(&p);
    return 0;
}

static int cmd_predict(int argc, char **argv)
{
    orr_spec s;
    orr_err err = {{0}};
    orr_spec_init(&s);
    int i = 0;
    if (argc > 0 && argv[0][0] != '-') {
        if (orr_spec_load_file(&s, argv[0], &err) < 0) return fail(&err);
        i = 1;
    }
    if (orr_spec_apply_flags(&s, argc - i, argv + i, &err) < 0 || orr_spec_resolve(&s, &err) < 0) {
        orr_spec_free(&s);
        return fail(&err);
    }
    orr_progress prog; /* one updating line on a terminal while it runs (--quiet: none) */
    orr_progress_init(&prog, stderr, isatty(STDERR_FILENO) && !s.quiet, "predict");
    s.progress = &prog;
    if (s.njobs) {
        int rc = predict_jobs(&s);
        orr_spec_free(&s);
        return rc;
    }

    double t0 = wall_s();
    orr_prediction p;
    if (orr_predict(&s, &p, &err) < 0) return fail(&err);
    double wall = wall_s() - t0;
    orr_fit_fixes fixes; /* out of memory: the settings that would make it fit */
    orr_err fix_err = {{0}};
    if (p.r.mem.oom && orr_search_fixes(i ? argv[0] : NULL, NULL, argc - i, argv + i, &s, &fixes, &fix_err) == 0)
        p.info.fixes = &fixes;

    if ((s.trace_path[0] && orr_report_trace(s.trace_path, p.w, &p.x, &err) < 0) ||
        (s.html_path[0] && orr_report_html(s.html_path, &p.r, p.w, &p.x, &p.info, &err) < 0)) {
        orr_prediction_free(&p);
        return fail(&err);
    }
    orr_buf out = {0};
    if (s.json) {
        orr_report_json(&p.r, p.w, &p.info, &out);
    } else {
        orr_report_text(&p.r, p.w, &p.info, &out);
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        if (s.profile.path[0])
            orr_buf_printf(&out, "profile %s applied over the catalog's GPU and cluster (docs/calibrate.md)\n",
                           s.profile.path);
        orr_buf_printf(&out, "simulated in %.3f s wall, peak RSS %.1f MiB\n", wall, (double)ru.ru_maxrss / 1024.0);
        if (s.trace_path[0]) orr_buf_printf(&out, "trace written to %s (open in ui.perfetto.dev)\n", s.trace_path);
        if (s.html_path[0]) orr_buf_printf(&out, "HTML report written to %s\n", s.html_path);
    }
    fwrite(out.s, 1, out.n, stdout);
    orr_buf_free(&out);
    orr_prediction_free(&p);
    return 0;
}

/* The ranks of `mpirun -n P orrery search` (1 when started alone): under mpirun without MPI built
 * in, an error rather than P searches printing over each other. */
static int search_ranks(orr_search_ranks *k, int *mpi, orr_err *err)
{
    *mpi = 0;
#if ORRERY_HAVE_MPI
    *mpi = orr_mpi_begin(k);
#else
    (void)k;
    const char *n = getenv("OMPI_COMM_WORLD_SIZE");
    if (n && atoi(n) > 1)
        return orr_fail(err, "search: started by mpirun with %s ranks, but this orrery was built without MPI "
                             "(CMake found no MPI: install libopenmpi-dev and rebuild, or use -j N)", n);
#endif
    (void)err;
    return 0;
}

/* Writes the CSV of every trial and prints the report (rank 0 only under MPI). */
static int search_output(const orr_search_result *r, const orr_search_opts *o, orr_err *err)
{
    orr_buf out = {0};
    int rc = orr_search_write_files(r, o, err);
    if (o->json) orr_search_json(r, o, &out);
    else orr_search_text(r, o, &out);
    if (!rc) fwrite(out.s, 1, out.n, stdout);
    orr_buf_free(&out);
    return rc;
}

/* `orrery search`: the space, the ranked table (or JSON) and optionally a CSV of every trial. */
static int cmd_search(int argc, char **argv)
{
    orr_search_opts o;
    orr_search_result r;
    orr_err err = {{0}};
    if (orr_search_parse(&o, argc, argv, &err) < 0) {
        orr_search_opts_free(&o);
        return fail(&err);
    }
    orr_search_ranks ranks = {0, 1, NULL, NULL};
    int mpi;
    if (search_ranks(&ranks, &mpi, &err)) {
        orr_search_opts_free(&o);
        return fail(&err);
    }
    if (mpi) o.ranks = &ranks;
    int quiet = 0; /* predict's --quiet, among the base flags */
    for (int i = 0; i < argc; i++) quiet |= strcmp(argv[i], "--quiet") == 0;
    orr_progress prog;
    orr_progress_init(&prog, stderr, isatty(STDERR_FILENO) && !quiet && ranks.rank == 0, "search");
    o.progress = &prog;
    int rc = orr_search_run(&o, &r, &err);
    if (rc == 0) {
        if (ranks.rank == 0) rc = search_output(&r, &o, &err);
        orr_search_result_free(&r);
    }
    orr_search_opts_free(&o);
#if ORRERY_HAVE_MPI
    if (mpi && rc) fprintf(stderr, "orrery: rank %u of %u: %s\n", ranks.rank, ranks.size, err.msg);
    if (mpi) orr_mpi_end(rc != 0);
#endif
    return rc ? fail(&err) : 0;
}

/* `orrery calibrate`'s own flags (docs/calibrate.md); every other flag is predict's and sets the
 * hardware and the job the measurements ran. */
static const struct { const char *name, *value, *help; } calib_flags[] = {
    {"--nccl", "FILE", "nccl-tests output (all_reduce_perf, all_gather_perf, ...: their stdout); repeatable"},
    {"--steps", "FILE", "a CSV of runs: predict flags as columns (tp, gbs, ...), step_ms or step_s; repeatable"},
    {"--megatron-log", "FILE", "a Megatron-LM log of the job the spec and flags give (elapsed time per iteration); "
                               "repeatable"},
    {"--out", "FILE", "write the profile there too [default: only to stdout, which is a profile file as a whole]"},
};
#define NCALIB_FLAGS (sizeof calib_flags / sizeof calib_flags[0])

static void calibrate_flags_help(void)
{
    printf("\nflags (a value is given as --flag V or --flag=V):\n");
    for (size_t i = 0; i < NCALIB_FLAGS; i++) {
        char use[64];
        snprintf(use, sizeof use, "%s %s", calib_flags[i].name, calib_flags[i].value);
        printf("  %-38s %s\n", use, calib_flags[i].help);
    }
    printf("\nEvery other flag of predict (orrery help predict) sets the hardware measured (--gpu, --cluster, ...)\n"
           "and the job of a --megatron-log, and is the base of every --steps run.\n");
}

/* Splits calibrate's arguments: its own flags into the three lists and out, the rest (predict's)
 * into rest. */
static int calibrate_args(int argc, char **argv, const char **lists[3], int nlist[3], const char **out, char **rest,
                          int *nrest, orr_err *err)
{
    for (int i = 0; i < argc; i++) {
        const char *eq = strchr(argv[i], '=');
        size_t len = eq ? (size_t)(eq - argv[i]) : strlen(argv[i]);
        size_t k = 0;
        while (k < NCALIB_FLAGS && !(strlen(calib_flags[k].name) == len && strncmp(calib_flags[k].name, argv[i], len) == 0))
            k++;
        if (k == NCALIB_FLAGS) {
            rest[(*nrest)++] = argv[i];
            continue;
        }
        const char *val = eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
        if (!val || !*val) return orr_fail(err, "%s: missing value (a file)", calib_flags[k].name);
        if (k < 3) lists[k][nlist[k]++] = val;
        else *out = val;
    }
    return 0;
}

/* Writes text to path, failing with a message naming it. */
static int write_text(const char *path, const orr_buf *text, orr_err *err)
{
    FILE *f = fopen(path, "w");
    if (!f) return orr_fail(err, "--out %s: cannot write: %s", path, strerror(errno));
    size_t wrote = text->n ? fwrite(text->s, 1, text->n, f) : 0;
    int bad = wrote != text->n;
    if (fclose(f) || bad) return orr_fail(err, "--out %s: cannot write: %s", path, strerror(errno ? errno : EIO));
    return 0;
}

/* The measurements into nccl and steps, on base (the spec and predict's flags). */
static int calibrate_inputs(const orr_spec *base, const char **lists[3], const int nlist[3], orr_nccl_rows *nccl,
                            orr_step_rows *steps, orr_err *err)
{
    for (int i = 0; i < nlist[0]; i++)
        if (orr_nccl_tests_load(nccl, lists[0][i], err)) return -1;
    for (int i = 0; i < nlist[1]; i++)
        if (orr_steps_csv_load(steps, lists[1][i], base, err)) return -1;
    for (int i = 0; i < nlist[2]; i++)
        if (orr_megatron_log_load(steps, lists[2][i], base, err)) return -1;
    return 0;
}

static int cmd_calibrate(int argc, char **argv)
{
    orr_spec base;
    orr_err err = {{0}};
    orr_spec_init(&base);
    int i = 0, nrest = 0, nlist[3] = {0, 0, 0}, rc = -1;
    if (argc > 0 && argv[0][0] != '-') {
        if (orr_spec_load_file(&base, argv[0], &err) < 0) return fail(&err);
        i = 1;
    }
    const char **lists[3], *out = NULL;
    char **rest = orr_xcalloc((size_t)argc + 1, sizeof *rest);
    for (int k = 0; k < 3; k++) lists[k] = orr_xcalloc((size_t)argc + 1, sizeof *lists[k]);
    orr_nccl_rows nccl = {0};
    orr_step_rows steps = {0};
    orr_calib_result res = {0};
    orr_buf text = {0};
    orr_spec hw;
    if (calibrate_args(argc - i, argv + i, lists, nlist, &out, rest, &nrest, &err) ||
        orr_spec_apply_flags(&base, nrest, rest, &err))
        goto done;
    if (base.njobs) {
        orr_fail(&err, "calibrate: a spec with jobs: is not one job and its hardware");
        goto done;
    }
    hw = base;
    if (orr_spec_resolve_hardware(&hw, NULL, &err) || calibrate_inputs(&base, lists, nlist, &nccl, &steps, &err) ||
        orr_calibrate(&hw, &nccl, &steps, &res, &err))
        goto done;
    orr_calibrate_report(&res, &text);
    rc = out ? write_text(out, &text, &err) : 0; /* the file first: a failure leaves stdout empty */
    if (rc == 0) fwrite(text.s, 1, text.n, stdout);
    if (rc == 0 && out) printf("# written to %s\n", out);
done:
    orr_buf_free(&text);
    orr_calib_result_free(&res);
    orr_nccl_rows_free(&nccl);
    orr_step_rows_free(&steps);
    orr_spec_free(&base);
    free(rest);
    for (int k = 0; k < 3; k++) free(lists[k]);
    return rc ? fail(&err) : 0;
}

static int cmd_list(int argc, char **argv)
{
    if (argc != 1) {
        fprintf(stderr, "orrery: list: expected one of gpus, models, clusters\n");
        return ORR_EXIT_USAGE;
    }
    if (strcmp(argv[0], "gpus") == 0) {
        printf("%-20s %5s %9s %9s %9s %10s %10s %10s %10s\n", "gpu", "SMs", "HBM GiB", "HBM TB/s", "L2 MiB",
               "NVLink GB/s", "bf16 TF/s", "fp8 TF/s", "fp4 TF/s");
        for (size_t k = 0; k < orr_catalog_gpu_count(); k++) {
            const orr_gpu *g = orr_catalog_gpu_at(k);
            printf("%-20s %5u %9.1f %9.2f %9.1f %10.0f %10.1f %10.1f %10.1f\n", g->name, g->sms,
                   (double)g->hbm_bytes / (1024.0 * 1024 * 1024), g->hbm_Bps / 1e12,
                   (double)g->l2_bytes / (1024.0 * 1024), g->nvlink_Bps / 1e9, g->peak_flops[ORR_BF16] / 1e12,
                   g->peak_flops[ORR_FP8] / 1e12, g->peak_flops[ORR_NVFP4] / 1e12);
        }
        puts("(NVLink GB/s per direction; TF/s dense)");
    } else if (strcmp(argv[0], "models") == 0) {
        printf("%-18s %6s %6s %6s %4s %6s %7s %6s %-7s %-4s %-8s %9s %9s\n", "model", "layers", "hidden", "heads", "kv",
               "ffn", "vocab", "seq", "mlp", "attn", "experts", "params", "active");
        for (size_t k = 0; k < orr_catalog_model_count(); k++) {
            const orr_model *m = orr_catalog_model_at(k);
            char ex[16] = "-";
            if (m->experts) snprintf(ex, sizeof ex, "%u/%u%s", m->top_k, m->experts, m->shared_experts ? "+s" : "");
            printf("%-18s %6u %6u %6u %4u %6u %7u %6u %-7s %-4s %-8s %8.2fB %8.2fB\n", m->name, m->layers, m->hidden,
                   m->heads, m->kv_heads, m->ffn, m->vocab, m->seq, m->gated_mlp ? "swiglu" : "gelu",
                   orr_model_attn_kind_name(m), ex, orr_model_params(m) / 1e9, orr_model_active_params(m) / 1e9);
        }
        puts("(experts: top_k/routed, +s: with shared experts; active: parameters one token uses)");
    } else if (strcmp(argv[0], "clusters") == 0) {
        printf("%-16s %13s %12s %-16s\n", "cluster", "GPUs/node", "NIC Gb/s", "topology");
        for (size_t k = 0; k < orr_catalog_cluster_count(); k++) {
            const orr_cluster *c = orr_catalog_cluster_at(k);
            printf("%-16s %13u %12.0f %-16s\n", c->name, c->gpus_per_node, c->nic_Bps * 8 / 1e9, c->topology);
        }
    } else {
        fprintf(stderr, "orrery: list: unknown catalog \"%s\" (expected gpus, models or clusters)\n", argv[0]);
        return ORR_EXIT_USAGE;
    }
    return 0;
}

/* What `orrery validate --set` selects: the tables (orr_valid_set), then the two kernel sections. */
#define VALID_ATTENTION ORR_VALID_SET_COUNT
#define VALID_KERNELS (ORR_VALID_SET_COUNT + 1)
#define VALID_SECTIONS (ORR_VALID_SET_COUNT + 2)

static const char *valid_section_name(int i)
{
    return i < ORR_VALID_SET_COUNT ? orr_valid_set_name((orr_valid_set)i) : i == VALID_ATTENTION ? "attention-shape"
                                                                                                  : "kernels-h100";
}

static int cmd_validate(int argc, char **argv)
{
    const char *dir = ORRERY_DEFAULT_VALIDATION_DIR;
    int want[VALID_SECTIONS] = {0}, named = 0, ndirs = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--set") != 0) {
            if (argv[i][0] == '-' || ndirs++ > 0) {
                fprintf(stderr, "orrery: validate: unexpected argument \"%s\" (expected [DIR] [--set NAME]...)\n",
                        argv[i]);
                return ORR_EXIT_USAGE;
            }
            dir = argv[i];
            continue;
        }
        if (i + 1 == argc) {
            fprintf(stderr, "orrery: validate: --set: expected a table's name after it (--set list names them)\n");
            return ORR_EXIT_USAGE;
        }
        const char *name = argv[++i];
        int sec = 0;
        while (sec < VALID_SECTIONS && strcmp(name, valid_section_name(sec)) != 0) sec++;
        if (sec == VALID_SECTIONS) { /* "list", or not a name: the names */
            int list = strcmp(name, "list") == 0;
            FILE *f = list ? stdout : stderr;
            if (!list) fprintf(f, "orrery: validate: --set \"%s\": expected one of", name);
            for (int j = 0; j < VALID_SECTIONS; j++)
                fprintf(f, list ? "%s\n" : j + 1 < VALID_SECTIONS ? " %s" : " %s\n", valid_section_name(j));
            return list ? 0 : ORR_EXIT_USAGE;
        }
        want[sec] = named = 1;
    }
    if (!named)
        for (int j = 0; j < VALID_SECTIONS; j++) want[j] = 1;
    for (int set = 0; set < ORR_VALID_SET_COUNT; set++) {
        if (!want[set]) continue;
        orr_valid_table t;
        orr_err err = {{0}};
        if (orr_validate((orr_valid_set)set, dir, &t, &err) < 0) return fail(&err);
        orr_buf b = {0};
        orr_valid_table_print(&t, &b);
        fwrite(b.s, 1, b.n, stdout);
        fputc('\n', stdout);
        orr_buf_free(&b);
        orr_valid_table_free(&t);
    }
    orr_err err = {{0}};
    if (want[VALID_ATTENTION]) {
        orr_valid_kernels k;
        if (orr_validate_attention_shape(dir, &k, &err) < 0) return fail(&err);
        orr_buf b = {0};
        orr_valid_kernels_print(&k, &b);
        fwrite(b.s, 1, b.n, stdout);
        orr_buf_free(&b);
        orr_valid_kernels_free(&k);
    }
    if (want[VALID_KERNELS]) {
        orr_valid_measured m;
        if (orr_validate_measured(dir, 0, &m, &err) < 0) return fail(&err);
        orr_buf mb = {0};
        for (int j = 0; j < VALID_KERNELS; j++) /* a blank line after what was printed before */
            if (want[j]) {
                orr_buf_printf(&mb, "\n");
                break;
            }
        orr_valid_measured_print(&m, &mb);
        fwrite(mb.s, 1, mb.n, stdout);
        orr_buf_free(&mb);
    }
    return 0;
}

/* Writes text to dir/basename(path) (dir: --out, else the current directory). A path from the
 * config file never chooses the directory: a config's "../x" or "/etc/x" lands in --out as "x"
 * (docs/netsim.md "Where"); only the command line's --out places files elsewhere. */
static int write_output(const char *dir, const char *path, const char *fallback, const orr_buf *text, FILE *say,
                        orr_err *err)
{
    const char *name = path[0] ? path : fallback;
    const char *slash = strrchr(name, '/'), *base = slash ? slash + 1 : name;
    if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
        return orr_fail(err, "%s: not a file name (FCT_OUTPUT_FILE / PFC_OUTPUT_FILE name a file)", name);
    char full[1024];
    if (snprintf(full, sizeof full, "%s/%s", dir ? dir : ".", base) >= (int)sizeof full)
        return orr_fail(err, "--out %s: path too long", dir ? dir : ".");
    FILE *f = fopen(full, "w");
    if (!f) return orr_fail(err, "%s: cannot write output file: %s", full, strerror(errno));
    size_t wrote = text->n ? fwrite(text->s, 1, text->n, f) : 0;
    int werr = wrote != text->n ? errno : 0;
    if (fclose(f) || werr)
        return orr_fail(err, "%s: cannot write output file: %s", full, strerror(werr ? werr : errno));
    fprintf(say, "wrote %s\n", full);
    return 0;
}

/* netsim's Wormhole flags (docs/netsim.md "Wormhole acceleration"): --no-accel, --ss-theta X,
 * --ss-window N. Returns 1 if argv[*i] was one (consuming its value), 0 if not, -1 on a bad value. */
static int netsim_accel_flag(int argc, char **argv, int *i, int *no_accel, double *theta, uint32_t *window)
{
    const char *a = argv[*i];
    if (strcmp(a, "--no-accel") == 0) return *no_accel = 1, 1;
    if (strcmp(a, "--no-memo") == 0) return *no_accel = *no_accel ? *no_accel : 2, 1;
    int is_theta = strcmp(a, "--ss-theta") == 0, is_window = strcmp(a, "--ss-window") == 0;
    if (!is_theta && !is_window) return 0;
    if (*i + 1 >= argc) {
        fprintf(stderr, "orrery: netsim: %s needs a value (%s)\n", a,
                is_theta ? "a fraction in (0, 1), e.g. 0.05" : "a count of rate samples, e.g. 2000");
        return -1;
    }
    const char *v = argv[++*i];
    char *end;
    errno = 0;
    if (is_theta) {
        double x = strtod(v, &end);
        if (*v == 0 || *end || errno || !(x > 0 && x < 1)) {
            fprintf(stderr, "orrery: netsim: --ss-theta %s: expected a fraction in (0, 1), e.g. 0.05\n", v);
            return -1;
        }
        *theta = x;
    } else {
        unsigned long long x = strtoull(v, &end, 10);
        if (*v == 0 || *v == '-' || *end || errno || x < ORR_SS_WINDOW_MIN || x > ORR_SS_WINDOW_MAX) {
            fprintf(stderr, "orrery: netsim: --ss-window %s: expected a count of rate samples from %u to %u\n", v,
                    ORR_SS_WINDOW_MIN, ORR_SS_WINDOW_MAX);
            return -1;
        }
        *window = (uint32_t)x;
    }
    return 1;
}

static int cmd_netsim(int argc, char **argv)
{
    const char *pos[3], *out_dir = NULL, *memo_path = NULL;
    int npos = 0, quiet = 0, no_accel = 0, json = 0, k; /* no_accel: 1 --no-accel, 2 --no-memo */
    double theta = ORR_SS_THETA_DEFAULT;
    uint32_t window = ORR_SS_WINDOW_DEFAULT;
    for (int i = 0; i < argc; i++) {
        if ((k = netsim_accel_flag(argc, argv, &i, &no_accel, &theta, &window)) != 0) {
            if (k < 0) return ORR_EXIT_USAGE;
        } else if (strcmp(argv[i], "--quiet") == 0) {
            quiet = 1;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "--out") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "orrery: netsim: --out needs a directory\n");
                return ORR_EXIT_USAGE;
            }
            out_dir = argv[++i];
        } else if (strcmp(argv[i], "--memo") == 0) {
            if (i + 1 >= argc || !argv[i + 1][0] || strlen(argv[i + 1]) >= sizeof((orr_packet_config *)0)->memo_path) {
                fprintf(stderr, "orrery: netsim: --memo needs a file name (the SQLite file of the memo, under 512 bytes)\n");
                return ORR_EXIT_USAGE;
            }
            memo_path = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "orrery: netsim: unknown flag %s (expected --out DIR, --json, --quiet, --no-accel, --no-memo, --memo FILE, "
                            "--ss-theta X or --ss-window N)\n", argv[i]);
            return ORR_EXIT_USAGE;
        } else if (npos < 3) {
            pos[npos++] = argv[i];
        } else {
            fprintf(stderr, "orrery: netsim: too many arguments (expected TOPO FLOWS CONFIG)\n");
            return ORR_EXIT_USAGE;
        }
    }
    if (npos != 3) {
        fprintf(stderr, "orrery: netsim: expected TOPO FLOWS CONFIG [--out DIR]\n");
        return ORR_EXIT_USAGE;
    }
    orr_err err = {{0}};
    orr_packet_config cfg;
    orr_packet_config_default(&cfg);
    orr_buf warn = {0};
    int rc = orr_packet_config_read(&cfg, pos[2], &warn, &err);
    if (warn.n) fwrite(warn.s, 1, warn.n, stderr);
    orr_buf_free(&warn);
    if (rc) return fail(&err);
    cfg.accel = no_accel != 1;
    cfg.memo = no_accel == 0;
    if (memo_path) {
        if (!cfg.memo) {
            fprintf(stderr, "orrery: netsim: --memo %s: the memo is off (--no-accel or --no-memo)\n", memo_path);
            return ORR_EXIT_USAGE;
        }
        snprintf(cfg.memo_path, sizeof cfg.memo_path, "%s", memo_path);
    }
    cfg.ss_theta = theta;
    cfg.ss_window = window;
    orr_topo t;
    if (orr_topo_read_hpcc(&t, pos[0], &err)) return fail(&err);
    orr_netsim_result r;
    orr_progress prog;
    orr_progress_init(&prog, stderr, isatty(STDERR_FILENO) && !quiet, "netsim");
    cfg.progress = &prog;
    rc = orr_netsim_run_with(&t, &cfg, pos[1], &r, &err);
    orr_topo_free(&t);
    if (rc) return fail(&err);
    orr_buf out = {0};
    if (json) orr_netsim_json(&r, &cfg, &out);
    else orr_netsim_summary(&r, &cfg, &out);
    fwrite(out.s, 1, out.n, stdout);
    orr_buf_free(&out);
    FILE *say = json ? stderr : stdout; /* "wrote FILE" lines: not inside the JSON document */
    if (out_dir || cfg.fct_output[0]) rc = write_output(out_dir, cfg.fct_output, "fct.txt", &r.fct_text, say, &err);
    if (!rc && (out_dir || cfg.pfc_output[0]))
        rc = write_output(out_dir, cfg.pfc_output, "pfc.txt", &r.pfc_text, say, &err);
    orr_netsim_result_free(&r);
    return rc ? fail(&err) : 0;
}

/* Removes a directory of traces this run made (files only: the emulator writes no subdirectories). */
static void remove_trace_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char path[1200];
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    closedir(d);
    rmdir(dir);
}

/* --live's second run (docs/emulate.md "Live time"): the first run's whole timeline simulated, the
 * time of every event record written for the emulator, and the program run again in a directory of
 * its own, its event timings those times; then its records checked against the first run's. */
static int emulate_live(char **cmd, orr_emu_run_opts ro, const orr_emu_opts *eo, const orr_spec *s,
                        uint64_t device_bytes, orr_err *err)
{
    char dir[] = "/tmp/orrery-live-XXXXXX";
    if (!mkdtemp(dir)) return orr_fail(err, "--live: cannot make a directory under /tmp for the second run");
    char path[64];
    snprintf(path, sizeof path, "%s/live-times.txt", dir);
    uint64_t records = 0;
    orr_buf routing = {0};
    int rc = orr_emu_routing(s->emu.routing, &routing, err);
    if (rc == 0) rc = orr_emu_live_write(eo, &s->gpu, &s->cluster, s->launch_ps, device_bytes, path, &records, err);
    if (rc == 0) {
        ro.routing = routing.s;
        ro.trace_dir = dir;
        ro.stdout_to_null = 0;
        ro.live_times = path;
        int status = 0;
        rc = orr_emu_run(cmd, &ro, &status, err);
        if (rc == 0 && status != 0)
            rc = orr_fail(err, "--live: the second run of %s exited with status %d; no prediction", cmd[0], status);
        if (rc == 0) {
            orr_emu_opts e2 = *eo;
            e2.trace_dir = dir;
            e2.progress = NULL;
            rc = orr_emu_live_check(&e2, &s->gpu, &s->cluster, path, err);
        }
    }
    orr_buf_free(&routing);
    remove_trace_dir(dir);
    return rc;
}

static int cmd_emulate(int argc, char **argv)
{
    int dash = 0;
    while (dash < argc && strcmp(argv[dash], "--") != 0) dash++;
    if (dash >= argc - 1) {
        fprintf(stderr, "orrery: emulate: expected -- CMD [ARGS] after the flags (e.g. orrery emulate --gpus 4 -- "
                        "torchrun --nproc-per-node 4 train.py)\n");
        return ORR_EXIT_USAGE;
    }
    /* our own flags and the hardware and output flags of predict's table (src/spec/flags.c) */
    orr_spec s;
    orr_err err = {{0}};
    orr_spec_init(&s);
    if (orr_spec_apply_emulate_flags(&s, dash, argv, &err) < 0) return fail(&err);
    orr_emu_opts eo = {.dedup = !s.emu.no_dedup, .no_host_time = s.emu.no_host_time, .tokens = s.emu.tokens,
                       .kernel_db = s.emu.kernel_db[0] ? s.emu.kernel_db : NULL};
    const char *trace_dir = s.emu.trace_dir[0] ? s.emu.trace_dir : NULL;
    const char *lib_dir = s.emu.lib_dir[0] ? s.emu.lib_dir : NULL;
    int profile = s.emu.profile == 1 ? ORR_EMU_PROFILE : s.emu.profile == 2 ? ORR_EMU_PROFILE_EMULATED : ORR_EMU_EMULATE;
    if (profile && !eo.kernel_db) {
        fprintf(stderr, "orrery: emulate: --profile: give --kernel-db FILE, the SQLite database the measured kernel "
                        "times go to\n");
        return ORR_EXIT_USAGE;
    }
    if (profile && s.emu.live) {
        fprintf(stderr, "orrery: emulate: --live: not with --profile or --profile-on-emulator (a profiled run "
                        "measures kernels and predicts nothing)\n");
        return ORR_EXIT_USAGE;
    }
    uint32_t gpn = s.cluster.gpus_per_node;
    int rc;
    if (orr_spec_resolve_hardware(&s, orr_catalog_default_gpu(), &err) < 0) return fail(&err);
    uint64_t device_bytes = s.mem_capacity_bytes ? s.mem_capacity_bytes : s.gpu.hbm_bytes;
    uint64_t visible = device_bytes > s.gpu.runtime_reserved_bytes ? device_bytes - s.gpu.runtime_reserved_bytes : 0;

    char tmp[] = "/tmp/orrery-emu-XXXXXX";
    int made = 0;
    if (trace_dir) {
        mkdir(trace_dir, 0777);
        struct stat st;
        if (stat(trace_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
            fprintf(stderr, "orrery: emulate: --trace-dir %s: not a directory and cannot be made\n", trace_dir);
            return ORR_EXIT_USAGE;
        }
        DIR *d = opendir(trace_dir);
        struct dirent *e;
        int old = 0;
        while (d && (e = readdir(d)))
            if (strncmp(e->d_name, "trace-", 6) == 0 || strncmp(e->d_name, "split-", 6) == 0 ||
                strncmp(e->d_name, "prof-", 5) == 0)
                old = 1;
        if (d) closedir(d);
        if (old) {
            fprintf(stderr, "orrery: emulate: --trace-dir %s: holds traces of an earlier run (give an empty or new "
                            "directory)\n", trace_dir);
            return ORR_EXIT_USAGE;
        }
    } else {
        if (!mkdtemp(tmp)) {
            fprintf(stderr, "orrery: emulate: cannot make a trace directory under /tmp\n");
            return ORR_EXIT_USAGE;
        }
        trace_dir = tmp;
        made = 1;
    }
    orr_buf routing = {0};
    if (orr_emu_routing(s.emu.routing, &routing, &err) < 0) {
        orr_buf_free(&routing);
        if (made) remove_trace_dir(trace_dir);
        return fail(&err);
    }
    /* the program sees the GPUs of its node, or fewer when the job is smaller (--gpus) */
    uint32_t devices = s.gpus && s.gpus < s.cluster.gpus_per_node ? s.gpus : s.cluster.gpus_per_node;
    orr_emu_run_opts ro = {.lib_dir = lib_dir, .routing = routing.s, .trace_dir = trace_dir, .mem_bytes = visible,
                           .total_bytes = s.mem_capacity_bytes, .devices = devices, .gpu = &s.gpu, .profile = profile,
                           .stdout_to_stderr = s.json, .stdout_to_null = s.emu.live,
                           .live_times = s.emu.live ? "" : NULL};
    int status = 0;
    double t0 = wall_s();
    int run_rc = orr_emu_run(argv + dash + 1, &ro, &status, &err);
    if (run_rc < 0) {
        orr_buf_free(&routing);
        if (made) remove_trace_dir(trace_dir);
        return fail(&err);
    }
    double run_wall = wall_s() - t0;
    if (status != 0) {
        orr_buf stubs = {0};
        if (profile != ORR_EMU_PROFILE && orr_emu_unimplemented_calls(trace_dir, &stubs))
            fprintf(stderr, "orrery: emulate: the program called entry points the emulator does not implement: %s\n",
                    stubs.s);
        orr_buf_free(&stubs);
        fprintf(stderr, "orrery: emulate: %s exited with status %d under %s; no %s (traces %s)\n", argv[dash + 1], status,
                profile == ORR_EMU_PROFILE ? "the profiler" : "emulation", profile ? "profile" : "prediction",
                made ? "removed" : "kept");
        orr_buf_free(&routing);
        if (made) remove_trace_dir(trace_dir);
        return 1;
    }
    /* A PyTorch program's own host time: from a second run without the hook, whose dispatch mode
     * costs the host more than it can take off (docs/emulate.md "Host time") */
    char host_dir[] = "/tmp/orrery-emu-host-XXXXXX";
    int host_made = 0;
    double host_wall = 0;
    if (!profile && !s.emu.no_host_time && !s.emu.live && orr_emu_traces_tagged(trace_dir)) {
        host_made = mkdtemp(host_dir) != NULL;
        orr_emu_run_opts ro2 = ro;
        ro2.trace_dir = host_dir;
        ro2.quiet = 1;
        ro2.no_torch_hook = 1;
        /* without the hook the values it reads back are zeros, and a program that waits on one
         * could wait for ever: stopped past four times the first run's wall time (at least a minute) */
        ro2.limit_s = 4 * run_wall > 60 ? 4 * run_wall : 60;
        orr_err err2 = {{0}};
        int status2 = 0;
        double t2 = wall_s();
        if (!host_made)
            snprintf(err2.msg, sizeof err2.msg, "had no trace directory under /tmp");
        else if (orr_emu_run(argv + dash + 1, &ro2, &status2, &err2) == 0 && status2 == -1)
            snprintf(err2.msg, sizeof err2.msg, "still running after %.0f s (four times the first run's wall, at least "
                                                "60 s): stopped (without the hook the values it reads back are zeros, "
                                                "which a program can wait on)", ro2.limit_s);
        else if (status2 != 0 && !err2.msg[0])
            snprintf(err2.msg, sizeof err2.msg, "exited with status %d (without the hook the values it reads back "
                                                "are zeros, which a program that checks them can stop on)", status2);
        host_wall = wall_s() - t2;
        if (err2.msg[0])
            fprintf(stderr, "orrery: emulate: warning: the second run without the PyTorch hook (for the program's own "
                            "host time): %s; the host time is the hooked run's\n", err2.msg);
        else
            eo.host_dir = host_dir;
    }
    orr_buf_free(&routing);
    if (profile) { /* the program ran on the libraries for its times: store them, predict nothing */
        orr_emu_profile_stats ps;
        rc = orr_emu_profile_store(trace_dir, s.gpu.name, eo.kernel_db, &ps, &err);
        if (made) remove_trace_dir(trace_dir);
        if (rc < 0) return fail(&err);
        printf("profiled %llu kernel launches of %llu kernels (name, grid, block) in %.3f s: %llu median times stored "
               "in %s for %s%s\n", (unsigned long long)ps.launches, (unsigned long long)ps.kernels, run_wall,
               (unsigned long long)ps.stored, eo.kernel_db, s.gpu.name,
               ps.stored < ps.kernels ? " (the others had no device time: run under the emulator)" : "");
        return 0;
    }
    orr_progress prog;
    orr_progress_init(&prog, stderr, isatty(STDERR_FILENO) && !s.quiet, "emulate");
    eo.progress = &prog;
    eo.trace_dir = trace_dir;
    eo.gpus = s.gpus;
    eo.gpus_per_node = gpn;
    orr_prediction p;
    orr_emu_info info;
    t0 = wall_s();
    rc = orr_emulate_predict(&eo, &s.gpu, &s.cluster, s.launch_ps, device_bytes, &p, &info, &err);
    if (rc == 0 && s.emu.live && emulate_live(argv + dash + 1, ro, &eo, &s, device_bytes, &err) < 0) {
        orr_prediction_free(&p);
        rc = -1;
    }
    double wall = wall_s() - t0;
    if (made) remove_trace_dir(trace_dir);
    if (host_made) remove_trace_dir(host_dir);
    if (rc < 0) {
        orr_emu_info_free(&info);
        return fail(&err);
    }
    if ((s.trace_path[0] && orr_report_trace(s.trace_path, p.w, &p.x, &err) < 0) ||
        (s.html_path[0] && orr_report_html(s.html_path, &p.r, p.w, &p.x, &p.info, &err) < 0)) {
        orr_prediction_free(&p);
        orr_emu_info_free(&info);
        return fail(&err);
    }
    orr_buf out = {0};
    if (s.json) {
        orr_report_json(&p.r, p.w, &p.info, &out);
    } else {
        orr_report_text(&p.r, p.w, &p.info, &out);
        char used[64];
        if (info.host_processes == info.processes)
            snprintf(used, sizeof used, "%u process%s used a GPU", info.processes, info.processes == 1 ? "" : "es");
        else /* a process drove several devices: a rank each */
            snprintf(used, sizeof used, "%u process%s used %u GPUs", info.host_processes,
                     info.host_processes == 1 ? "" : "es", info.processes);
        orr_buf_printf(&out, "emulation: %s (%u other%s ignored), %u simulated; %llu kernels "
                             "(%llu tagged, %llu cuBLAS GEMMs, %llu cuDNN ops, %llu from the kernel database, %llu timed from launch "
                             "geometry only), %llu collectives, %llu send/recv, %llu copies\n",
                       used, info.ignored, info.ignored == 1 ? "" : "s",
                       info.simulated, (unsigned long long)info.kernels, (unsigned long long)info.kernels_tagged,
                       (unsigned long long)info.kernels_gemm, (unsigned long long)info.kernels_lib,
                       (unsigned long long)info.kernels_db,
                       (unsigned long long)info.kernels_geometry, (unsigned long long)info.collectives,
                       (unsigned long long)info.p2p, (unsigned long long)info.copies);
        if (info.iterations >= 2)
            orr_buf_printf(&out, "iteration: the last of %u marked iterations (optimizer steps) is predicted\n",
                           info.iterations);
        else
            orr_buf_printf(&out, "iteration: the whole program is predicted (%u iteration marks; the PyTorch hook "
                                 "marks each optimizer step, two or more select the last iteration)\n", info.iterations);
        if (eo.host_dir && info.host_rerun_differ == 0)
            orr_buf_printf(&out, "host time: the program's own, from a second run without the PyTorch hook (%u "
                                 "process%s)\n", info.host_rerun, info.host_rerun == 1 ? "" : "es");
        else if (eo.host_dir && info.host_rerun_error[0])
            orr_buf_printf(&out, "host time: the hooked run's (the second run's traces could not be read: %s)\n",
                           info.host_rerun_error);
        else if (eo.host_dir)
            orr_buf_printf(&out, "host time: from a second run without the PyTorch hook for %u process%s; the hooked "
                                 "run's for %u whose calls differed there (a path that depends on values read back)\n",
                           info.host_rerun, info.host_rerun == 1 ? "" : "es", info.host_rerun_differ);
        if (info.oom)
            orr_buf_printf(&out, "the program's allocation of %llu bytes on rank %u did not fit (%llu of %llu bytes in "
                                 "use): it got cudaErrorMemoryAllocation\n",
                           (unsigned long long)info.oom_bytes, info.oom_rank, (unsigned long long)info.oom_used_bytes,
                           (unsigned long long)visible);
        if (eo.host_dir)
            orr_buf_printf(&out, "program ran in %.3f s wall under emulation, %.3f s more without the PyTorch hook; "
                                 "collated and simulated in %.3f s\n", run_wall, host_wall, wall);
        else
            orr_buf_printf(&out, "program ran in %.3f s wall under emulation; collated and simulated in %.3f s\n",
                           run_wall, wall);
        if (s.html_path[0]) orr_buf_printf(&out, "HTML report written to %s\n", s.html_path);
    }
    fwrite(out.s, 1, out.n, stdout);
    orr_buf_free(&out);
    orr_prediction_free(&p);
    orr_emu_info_free(&info);
    return 0;
}

/* The command's exit status, unless its output could not be written (a full disk, a closed pipe):
 * then the reason and exit 1, never a silent loss. */
static int flushed(int rc)
{
    if (fflush(stdout) == 0 && !ferror(stdout)) return rc;
    fprintf(stderr, "orrery: cannot write the output: %s\n", strerror(errno ? errno : EIO));
    return rc ? rc : 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) return usage(stderr);
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) return usage(stdout);
    if (strcmp(cmd, "help") == 0) return argc > 2 ? help(argv[2]) : usage(stdout);
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) return version();
    static int (*const run[])(int, char **) = {cmd_predict, cmd_emulate, cmd_search, cmd_netsim, cmd_calibrate,
                                               cmd_validate, cmd_list};
    for (size_t i = 0; i < sizeof run / sizeof run[0]; i++)
        if (strcmp(cmd, commands[i].name) == 0)
            return flushed(wants_help(argc - 2, argv + 2) ? help(cmd) : run[i](argc - 2, argv + 2));
    return unknown_command("", cmd);
}
