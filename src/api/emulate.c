/*
 * emulate.c - the pipeline behind `orrery emulate -- CMD`: run the program with the emulation
 * libraries preloaded (one trace per process in a trace directory), collate the traces into a
 * workload (src/emu/collate.c), then estimate, execute and report exactly as `orrery predict`
 * does.
 *
 * The program sees the configured GPU's memory minus what the CUDA context and NCCL keep outside
 * the framework's allocator (gpu.runtime_reserved_gib), so cudaMemGetInfo and the out-of-memory
 * point match what PyTorch would see. The memory tracker runs in raw mode: a program's cudaMalloc
 * calls already are the segments of its own caching allocator, so modelling another one on top
 * would count it twice.
 */
#define _GNU_SOURCE
#include "orrery/orrery.h"
#include "orrery/emulate.h"
#include "orrery/estimate.h"
#include "orrery/csv.h"
#include "spec/yaml.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#ifndef ORRERY_EMU_LIB_DIR
#define ORRERY_EMU_LIB_DIR "emu"
#endif

const char *orr_emu_default_lib_dir(void) { return ORRERY_EMU_LIB_DIR; }

/* The libraries to preload, core first: every library a CUDA program or a PyTorch build links
 * against, so that each reference resolves to the stand-in whatever the program's RPATH says. */
static const char *const shim_files[] = {
    "liborrery_emu.so", "libcudart.so.13",   "libcudart.so.12",    "libcublas.so.13",   "libcublas.so.12",
    "libcublasLt.so.12", "libnccl.so.2",     "libcuda.so.1",       "libnvidia-ml.so.1", "libcudnn.so.9",
    "libcufft.so.11",   "libcurand.so.10",   "libcusolver.so.11",  "libcusparse.so.12", "libcusparseLt.so.0",
    "libcufile.so.0",   "libcupti.so.12",    "libnvrtc.so.12",     "libnvshmem_host.so.3"};

#ifndef ORRERY_EMU_PY_DIR
#define ORRERY_EMU_PY_DIR "python/orrery_emu"
#endif

/* The emulated program while orr_emu_run waits for it, and the handler that passes it a signal. */
static volatile pid_t child_pid;

static void forward_signal(int sig)
{
    if (child_pid > 0) kill(child_pid, sig);
}

static char *env_entry(const char *name, const char *value)
{
    char *s = orr_xmalloc(strlen(name) + strlen(value) + 2);
    sprintf(s, "%s=%s", name, value);
    return s;
}

int orr_emu_routing(const char *value, orr_buf *out, orr_err *err)
{
    double d;
    if (!value || !*value || strcasecmp(value, "balanced") == 0) {
        orr_buf_puts(out, "balanced");
        return 0;
    }
    if (orr_parse_num(value, &d) == 0) {
        if (!(d >= 1) || d > 1e6)
            return orr_fail(err, "--moe-imbalance %s: expected balanced, a number from 1 up or a CSV file", value);
        orr_buf_printf(out, "%.17g", d);
        return 0;
    }
    orr_csv t;
    orr_err e;
    if (orr_csv_load(&t, value, &e))
        return orr_fail(err, "--moe-imbalance: %s (expected balanced, a number or a CSV file)", e.msg);
    int rc = 0, col = orr_csv_col(&t, "tokens");
    size_t n = t.nrows > 0 ? t.nrows - 1 : 0;
    if (col < 0 || n < 2)
        rc = orr_fail(err, "--moe-imbalance %s: expected a CSV with a header row `tokens` and one row per expert (at "
                           "least 2)", value);
    for (size_t i = 0; !rc && i < n; i++) {
        const char *cell = t.rows[i + 1][col];
        if (orr_parse_num(cell, &d) || !(d >= 0) || d > 1e15)
            rc = orr_fail(err, "--moe-imbalance %s: row %zu: tokens must be a number >= 0, got \"%.20s\"", value, i + 2,
                          cell);
        else orr_buf_printf(out, "%s%.17g", i ? "," : "", d);
    }
    orr_csv_free(&t);
    return rc;
}

int orr_emu_run(char *const argv[], const orr_emu_run_opts *o, int *status, orr_err *err)
{
    if (!argv || !argv[0]) return orr_fail(err, "emulate: no command after --");
    if (!o->trace_dir || !*o->trace_dir) return orr_fail(err, "emulate: no trace directory given");
    const char *lib = o->lib_dir && *o->lib_dir ? o->lib_dir : ORRERY_EMU_LIB_DIR;
    orr_buf preload = {0};
    /* the profiler first (in front of what follows); the emulation libraries unless on the real ones */
    static const char *const prof_files[] = {"liborrery_prof13.so", "liborrery_prof12.so"};
    size_t nprof = o->profile ? 2 : 0, nshim = o->profile == ORR_EMU_PROFILE ? 0 : sizeof shim_files / sizeof shim_files[0];
    for (size_t i = 0; i < nprof + nshim; i++) {
        char path[1200];
        snprintf(path, sizeof path, "%s/%s", lib, i < nprof ? prof_files[i] : shim_files[i - nprof]);
        struct stat st;
        if (stat(path, &st) != 0) {
            orr_buf_free(&preload);
            return orr_fail(err, "emulate: emulation library %s is missing (build the project, or give --lib-dir)",
                            path);
        }
        orr_buf_printf(&preload, "%s%s", i ? ":" : "", path);
    }
    if (!o->gpu) {
        orr_buf_free(&preload);
        return orr_fail(err, "emulate: no GPU given (the caller resolves --gpu or the catalog's default)");
    }
    int cc = (int)(o->gpu->compute_capability * 10 + 0.5); /* data/gpus.yaml: 9.0 -> 90 */
    /* the environment: ours first, then everything of the caller's except what we set */
    static const char *const ours[] = {"LD_PRELOAD", "LD_LIBRARY_PATH", "ORRERY_EMU_DIR", "ORRERY_EMU_MEM_BYTES",
                                       "ORRERY_EMU_DEVICES", "ORRERY_EMU_GPU", "ORRERY_EMU_SMS", "ORRERY_EMU_CC",
                                       "ORRERY_EMU_L2_BYTES", "ORRERY_EMU_ROUTING", "ORRERY_EMU_TOTAL_BYTES",
                                       "ORRERY_EMU_TDP_W", "PYTHONPATH", "ORRERY_EMU_LIVE", "TRITON_LIBCUDA_PATH",
                                       "ORRERY_EMU_TORCH_HOOK"};
    size_t n = 0;
    while (environ[n]) n++;
    char **env = orr_xcalloc(n + 20, sizeof *env);
    size_t k = 0;
    char num[32];
    env[k++] = env_entry("LD_PRELOAD", preload.s);
    const char *llp = getenv("LD_LIBRARY_PATH");
    orr_buf lp = {0}; /* on the real libraries the caller's path stays as it is */
    orr_buf_printf(&lp, "%s%s%s", o->profile == ORR_EMU_PROFILE ? "" : lib,
                   llp && *llp && o->profile != ORR_EMU_PROFILE ? ":" : "", llp && *llp ? llp : "");
    env[k++] = env_entry("LD_LIBRARY_PATH", lp.s);
    env[k++] = env_entry("ORRERY_EMU_DIR", o->trace_dir);
    /* Triton links its launcher against the driver in this directory (libcuda.so, the stand-in's
     * link-time name): the emulation's, unless on the real libraries */
    const char *tlp = getenv("TRITON_LIBCUDA_PATH");
    if (o->profile != ORR_EMU_PROFILE) env[k++] = env_entry("TRITON_LIBCUDA_PATH", lib);
    else if (tlp) env[k++] = env_entry("TRITON_LIBCUDA_PATH", tlp);
    snprintf(num, sizeof num, "%llu", (unsigned long long)o->mem_bytes);
    env[k++] = env_entry("ORRERY_EMU_MEM_BYTES", num);
    uint64_t total = o->total_bytes ? o->total_bytes : o->gpu->device_bytes ? o->gpu->device_bytes : o->gpu->hbm_bytes;
    snprintf(num, sizeof num, "%llu", (unsigned long long)(total > o->mem_bytes ? total : o->mem_bytes));
    env[k++] = env_entry("ORRERY_EMU_TOTAL_BYTES", num);
    snprintf(num, sizeof num, "%.0f", o->gpu->tdp_w);
    env[k++] = env_entry("ORRERY_EMU_TDP_W", num);
    snprintf(num, sizeof num, "%u", o->devices ? o->devices : 1);
    env[k++] = env_entry("ORRERY_EMU_DEVICES", num);
    env[k++] = env_entry("ORRERY_EMU_GPU", o->gpu->name);
    snprintf(num, sizeof num, "%u", o->gpu->sms);
    env[k++] = env_entry("ORRERY_EMU_SMS", num);
    snprintf(num, sizeof num, "%llu", (unsigned long long)o->gpu->l2_bytes);
    env[k++] = env_entry("ORRERY_EMU_L2_BYTES", num);
    snprintf(num, sizeof num, "%d", cc);
    env[k++] = env_entry("ORRERY_EMU_CC", num);
    env[k++] = env_entry("ORRERY_EMU_ROUTING", o->routing && *o->routing ? o->routing : "balanced");
    if (o->live_times) env[k++] = env_entry("ORRERY_EMU_LIVE", o->live_times); /* "": the first run */
    const char *hook = getenv("ORRERY_EMU_TORCH_HOOK"); /* the caller's, unless this run goes without */
    if (o->no_torch_hook || hook) env[k++] = env_entry("ORRERY_EMU_TORCH_HOOK", o->no_torch_hook ? "0" : hook);
    /* the PyTorch hook (python/orrery_emu), ahead of the caller's Python path */
    const char *pp = getenv("PYTHONPATH");
    orr_buf py = {0};
    orr_buf_printf(&py, "%s%s%s", ORRERY_EMU_PY_DIR, pp && *pp ? ":" : "", pp && *pp ? pp : "");
    env[k++] = env_entry("PYTHONPATH", py.s);
    size_t first_caller = k;
    for (size_t i = 0; i < n; i++) {
        int skip = 0;
        for (size_t j = 0; j < sizeof ours / sizeof ours[0]; j++) {
            size_t l = strlen(ours[j]);
            if (strncmp(environ[i], ours[j], l) == 0 && environ[i][l] == '=') skip = 1;
        }
        if (!skip) env[k++] = environ[i];
    }
    env[k] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (o->limit_s > 0) setpgid(0, 0); /* its own group: a stop at the limit reaches its children too */
        if (o->stdout_to_stderr) dup2(2, 1);
        if (o->stdout_to_null || o->quiet) {
            int fd = open("/dev/null", O_WRONLY);
            if (fd >= 0) dup2(fd, 1), close(fd);
        }
        if (o->quiet) {
            int fd = open("/dev/null", O_WRONLY);
            if (fd >= 0) dup2(fd, 2), close(fd);
        }
        execvpe(argv[0], argv, env);
        fprintf(stderr, "emulate: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int rc = 0;
    if (pid < 0) {
        rc = orr_fail(err, "emulate: cannot start %s: %s", argv[0], strerror(errno));
    } else {
        int st = 0;
        /* A signal meant to stop the run (Ctrl-C, kill) is passed to the program, and the run ends
         * through the ordinary path, so the caller removes its temporary trace directory. */
        struct sigaction fwd = {.sa_handler = forward_signal}, old_int, old_term, old_hup;
        sigemptyset(&fwd.sa_mask);
        child_pid = pid;
        sigaction(SIGINT, &fwd, &old_int);
        sigaction(SIGTERM, &fwd, &old_term);
        sigaction(SIGHUP, &fwd, &old_hup);
        int stopped = 0;
        if (o->limit_s > 0) { /* polled: past the limit, TERM to its group, KILL 5 s later */
            setpgid(pid, pid); /* as the child does: whichever runs first */
            struct timespec t0, now, tick = {0, 20 * 1000 * 1000};
            clock_gettime(CLOCK_MONOTONIC, &t0);
            pid_t r;
            while ((r = waitpid(pid, &st, WNOHANG)) == 0 || (r < 0 && errno == EINTR)) {
                clock_gettime(CLOCK_MONOTONIC, &now);
                double dt = (double)(now.tv_sec - t0.tv_sec) + 1e-9 * (double)(now.tv_nsec - t0.tv_nsec);
                if (dt > o->limit_s && stopped == 0) {
                    kill(-pid, SIGTERM);
                    stopped = 1;
                } else if (dt > o->limit_s + 5 && stopped == 1) {
                    kill(-pid, SIGKILL);
                    stopped = 2;
                }
                nanosleep(&tick, NULL);
            }
        } else {
            while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
            }
        }
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        sigaction(SIGHUP, &old_hup, NULL);
        child_pid = 0;
        *status = stopped ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
        if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
            rc = orr_fail(err, "emulate: cannot run %s (not found or not executable)", argv[0]);
    }
    for (size_t i = 0; i < first_caller; i++) free(env[i]);
    free(env);
    orr_buf_free(&preload);
    orr_buf_free(&lp);
    orr_buf_free(&py);
    return rc;
}

typedef struct prof_row {
    char *key;      /* "name grid block" */
    int64_t ns;
} prof_row;

static int by_key_then_ns(const void *a, const void *b)
{
    const prof_row *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : (x->ns > y->ns) - (x->ns < y->ns);
}

int orr_emu_profile_store(const char *trace_dir, const char *gpu, const char *db, orr_emu_profile_stats *st,
                          orr_err *err)
{
    memset(st, 0, sizeof *st);
    DIR *d = opendir(trace_dir);
    if (!d) return orr_fail(err, "orrery emulate --profile: cannot read %s: %s", trace_dir, strerror(errno));
    prof_row *rows = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        if (strncmp(e->d_name, "prof-", 5) != 0) continue;
        char path[1200];
        snprintf(path, sizeof path, "%s/%s", trace_dir, e->d_name);
        size_t len;
        char *text = orr_read_file(path, &len, err);
        if (!text) {
            rc = -1;
            break;
        }
        size_t line = 0;
        char *save = NULL;
        for (char *l = strtok_r(text, "\n", &save); l && rc == 0; l = strtok_r(NULL, "\n", &save)) {
            line++;
            char name[512];
            unsigned g[3], b[3];
            double ns;
            if (sscanf(l, "K %511s %u %u %u %u %u %u %lf", name, &g[0], &g[1], &g[2], &b[0], &b[1], &b[2], &ns) != 8 ||
                !(ns >= 0) || ns > 1e15) {
                rc = orr_fail(err, "profile %s line %zu: expected K <kernel> <grid x y z> <block x y z> <ns>", path, line);
                break;
            }
            orr_buf key = {0};
            orr_buf_printf(&key, "%s %u %u %u %u %u %u", name, g[0], g[1], g[2], b[0], b[1], b[2]);
            prof_row r = {key.s, (int64_t)llround(ns)};
            ORR_PUSH(rows, n, cap, r);
        }
        free(text);
    }
    closedir(d);
    st->launches = n;
    if (rc == 0) qsort(rows, n, sizeof *rows, by_key_then_ns);
    for (size_t i = 0; rc == 0 && i < n;) {
        size_t j = i;
        while (j < n && strcmp(rows[j].key, rows[i].key) == 0) j++;
        st->kernels++;
        int64_t med_ns = rows[i + (j - i) / 2].ns; /* the median launch (the upper one of an even count) */
        if (med_ns > 0) {
            char name[512];
            unsigned g[3], b[3];
            sscanf(rows[i].key, "%511s %u %u %u %u %u %u", name, &g[0], &g[1], &g[2], &b[0], &b[1], &b[2]);
            if (orr_kdb_put(db, gpu, name, g, b, med_ns * ORR_PS_PER_NS, "profile", err) < 0) rc = -1;
            else st->stored++;
        }
        i = j;
    }
    for (size_t i = 0; i < n; i++) free(rows[i].key);
    free(rows);
    return rc;
}

/* Estimates and runs a collated workload as `orrery emulate` predicts it (the analytic network, the
 * launch cost and queue, the capacity the program saw). */
static int emu_execute(const orr_emu_opts *eo, orr_workload *w, const orr_gpu *g, const orr_cluster *c,
                       int64_t launch_ps, uint64_t device_bytes, orr_exec_result *x, orr_err *err)
{
    orr_estimate_workload(w, g);
    uint64_t cap = device_bytes > g->runtime_reserved_bytes ? device_bytes - g->runtime_reserved_bytes : 0;
    orr_exec_opts opts = {.net = ORR_NET_ANALYTIC, .launch_ps = launch_ps,
                          .launch_queue_depth = ORR_LAUNCH_QUEUE_DEPTH, .mem_capacity_bytes = cap, .mem_caching = 0,
                          .progress = eo->progress};
    orr_cluster cl = *c;
    if (eo->gpus_per_node) cl.gpus_per_node = eo->gpus_per_node;
    return orr_execute(w, g, &cl, &opts, x, err);
}

int orr_emulate_predict(const orr_emu_opts *eo, const orr_gpu *g, const orr_cluster *c, int64_t launch_ps,
                        uint64_t device_bytes, orr_prediction *p, orr_emu_info *info, orr_err *err)
{
    memset(p, 0, sizeof *p);
    p->w = orr_emu_collate(eo, g, c, info, err);
    if (!p->w) return -1;
    orr_cluster cl = *c;
    if (eo->gpus_per_node) cl.gpus_per_node = eo->gpus_per_node;
    if (emu_execute(eo, p->w, g, c, launch_ps, device_bytes, &p->x, err) < 0) {
        orr_prediction_free(p);
        return -1;
    }
    snprintf(p->title, sizeof p->title, "emulated program on %u x %s (%u process%s, %u simulated)", info->processes,
             g->name, info->host_processes, info->host_processes == 1 ? "" : "es", info->simulated);
    /* the processes whose host time has the PyTorch hook's cost in it: all that ran under the hook
     * (operator tags) but those that took theirs from the second run (collate.c host_from_rerun) */
    int hooked = !eo->no_host_time && info->kernels_tagged > 0;
    orr_buf_puts(&p->config_json, "{\"front_end\": \"emulate\", \"gpu\": ");
    orr_json_str(&p->config_json, g->name);
    orr_buf_puts(&p->config_json, ", \"cluster\": ");
    orr_json_str(&p->config_json, c->name);
    orr_buf_printf(&p->config_json,
                   ", \"gpus\": %u, \"gpus_per_node\": %u, \"simulated_ranks\": %u, \"kernels\": %llu, "
                   "\"kernels_tagged\": %llu, \"kernels_gemm\": %llu, \"kernels_cudnn\": %llu, \"kernels_db\": %llu, \"kernels_geometry\": %llu, "
                   "\"collectives\": %llu, \"p2p\": %llu, \"p2p_bytes\": %llu, \"alltoall_bytes\": %llu, "
                   "\"program_oom\": %s, \"iteration_marks\": %u, "
                   "\"iteration\": \"%s\", \"host_time\": \"%s\", \"host_time_second_run\": %u, "
                   "\"host_time_hooked_run\": %u, \"entry_points\": {",
                   info->processes, cl.gpus_per_node, info->simulated, (unsigned long long)info->kernels,
                   (unsigned long long)info->kernels_tagged, (unsigned long long)info->kernels_gemm,
                   (unsigned long long)info->kernels_lib,
                   (unsigned long long)info->kernels_db, (unsigned long long)info->kernels_geometry,
                   (unsigned long long)info->collectives, (unsigned long long)info->p2p,
                   (unsigned long long)info->p2p_bytes, (unsigned long long)info->alltoall_bytes, info->oom ? "true" : "false",
                   info->iterations, info->iterations >= 2 ? "last" : "whole program",
                   eo->no_host_time ? "dropped"
                   : !hooked ? "measured" /* no operator tags: no hook in the host time */
                   : !info->host_rerun ? "hooked run"
                   : info->host_rerun < info->host_processes ? "mixed" : "second run",
                   info->host_rerun, hooked ? info->host_processes - info->host_rerun : 0);
    for (size_t i = 0; i < info->napis; i++) { /* every entry point the program called, and how often */
        orr_buf_puts(&p->config_json, i ? ", " : "");
        orr_json_str(&p->config_json, info->apis[i].name);
        orr_buf_printf(&p->config_json, ": %llu", (unsigned long long)info->apis[i].calls);
    }
    orr_buf_puts(&p->config_json, "}}");
    p->info.title = p->title;
    p->info.gpu_name = g->name;
    p->info.peak_flops_per_gpu = g->peak_flops[ORR_BF16];
    p->info.config_json = p->config_json.s;
    p->info.device_bytes = device_bytes;
    p->info.runtime_reserved_bytes = g->runtime_reserved_bytes;
    p->info.caching_allocator = 0;
    if (orr_result_build(&p->r, p->w, &p->x, &p->info, err) < 0) {
        orr_prediction_free(p);
        return -1;
    }
    return 0;
}

/* ---- --live: the simulated time of every event record, for a second run (docs/emulate.md "Live time") ---- */

/* The "N <rank> <device> <records>" lines of a live-collated workload: per rank and device, the
 * number of the last event record the program made there. */
static void live_counts(const orr_workload *w, const orr_emu_info *info, orr_buf *out)
{
    for (size_t r = 0; r < w->nranks; r++) {
        uint32_t last[64] = {0};
        const orr_rank *rk = &w->ranks[r];
        for (size_t i = 0; i < rk->nops; i++) {
            const orr_op *op = &rk->ops[i];
            if (op->kind != ORR_OP_EVENT_RECORD || !op->seq || op->dims[0] < 1 || op->dims[0] > 64) continue;
            if (op->seq > last[op->dims[0] - 1]) last[op->dims[0] - 1] = op->seq;
        }
        for (uint32_t d = 0; d < 64; d++)
            if (last[d]) orr_buf_printf(out, "N %ld %u %u\n", info->rank_env[r], d, last[d]);
    }
}

static orr_workload *live_collate(const orr_emu_opts *eo, const orr_gpu *g, const orr_cluster *c, orr_emu_info *info,
                                  orr_err *err)
{
    orr_emu_opts o = *eo;
    o.live = 1;
    o.dedup = 0;
    orr_workload *w = orr_emu_collate(&o, g, c, info, err);
    if (!w) return NULL;
    /* the second run finds its times by RANK: two processes must not share one (nor both lack it) */
    for (size_t i = 0; i < w->nranks; i++)
        for (size_t j = 0; j < i; j++)
            if (info->rank_env[i] == info->rank_env[j] && info->rank_pid[i] != info->rank_pid[j]) {
                char what[48];
                if (info->rank_env[i] < 0) snprintf(what, sizeof what, "no RANK environment variable");
                else snprintf(what, sizeof what, "RANK=%ld", info->rank_env[i]);
                orr_fail(err, "--live: processes %ld and %ld both have %s: the second run matches a process to its "
                              "event times by RANK, so each process that uses a GPU needs its own (as torchrun sets)",
                         info->rank_pid[j], info->rank_pid[i], what);
                orr_workload_free(w);
                return NULL;
            }
    return w;
}

int orr_emu_live_write(const orr_emu_opts *eo, const orr_gpu *g, const orr_cluster *c, int64_t launch_ps,
                       uint64_t device_bytes, const char *path, uint64_t *records, orr_err *err)
{
    *records = 0;
    orr_emu_info info;
    orr_workload *w = live_collate(eo, g, c, &info, err);
    if (!w) {
        orr_emu_info_free(&info);
        return -1;
    }
    orr_exec_result x;
    memset(&x, 0, sizeof x);
    int rc = emu_execute(eo, w, g, c, launch_ps, device_bytes, &x, err);
    if (rc == 0) {
        orr_buf b = {0};
        orr_buf_puts(&b, "orrery-live 1\n");
        live_counts(w, &info, &b);
        for (size_t r = 0; r < w->nranks; r++) {
            const orr_rank *rk = &w->ranks[r];
            for (size_t i = 0; i < rk->nops; i++) {
                const orr_op *op = &rk->ops[i];
                if (op->kind != ORR_OP_EVENT_RECORD || !op->seq || op->dims[0] < 1 || op->dims[0] > 64) continue;
                orr_buf_printf(&b, "E %ld %u %u %lld %u\n", info.rank_env[r], op->dims[0] - 1, op->seq,
                               (long long)x.ranks[r].t[i].end_ps, op->stream);
                (*records)++;
            }
        }
        FILE *f = fopen(path, "w");
        if (!f || fwrite(b.s, 1, b.n, f) != b.n) rc = orr_fail(err, "--live: cannot write %s: %s", path, strerror(errno));
        if (f && fclose(f) != 0 && rc == 0) rc = orr_fail(err, "--live: cannot write %s: %s", path, strerror(errno));
        orr_buf_free(&b);
    }
    orr_exec_result_free(&x);
    orr_workload_free(w);
    orr_emu_info_free(&info);
    return rc;
}

int orr_emu_live_check(const orr_emu_opts *eo, const orr_gpu *g, const orr_cluster *c, const char *path,
                       orr_err *err)
{
    size_t len;
    char *text = orr_read_file(path, &len, err);
    if (!text) return -1;
    orr_buf want = {0}, got = {0};
    for (char *l = text; *l;) { /* the first run's N lines */
        char *e = strchr(l, '\n');
        size_t n = e ? (size_t)(e - l) + 1 : strlen(l);
        if (l[0] == 'N' && l[1] == ' ') orr_buf_printf(&want, "%.*s", (int)n, l);
        l += n;
    }
    free(text);
    orr_emu_info info;
    orr_workload *w = live_collate(eo, g, c, &info, err);
    int rc = w ? 0 : -1;
    if (w) {
        live_counts(w, &info, &got);
        if (strcmp(want.s ? want.s : "", got.s ? got.s : "") != 0) {
            for (size_t i = 0; i < want.n; i++) if (want.s[i] == '\n') want.s[i] = ';';
            for (size_t i = 0; i < got.n; i++) if (got.s[i] == '\n') got.s[i] = ';';
            rc = orr_fail(err, "--live: the program's event records differ between runs (records per "
                               "process and device, as N <RANK> <device> <records>: first run \"%.120s\", second "
                               "\"%.120s\"); --live needs a program "
                               "whose sequence of event records is the same in every run",
                          want.s ? want.s : "", got.s ? got.s : "");
        }
        orr_workload_free(w);
    }
    orr_emu_info_free(&info);
    orr_buf_free(&want);
    orr_buf_free(&got);
    return rc;
}
