/*
 * orrery - the command-line front door.
 *
 *   orrery predict [SPEC.yaml] [FLAGS]   predict one training iteration (docs/spec.md)
 *   orrery list gpus|models|clusters     print the catalogs
 *   orrery validate [DIR]                 predict the published Megatron rows of DIR (shared/validation)
 *
 * User errors print one line "orrery: ..." naming the file, field or flag, and exit 2.
 */
#include "orrery/orrery.h"
#include "orrery/hw.h"
#include "orrery/model.h"
#include "orrery/validate.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static int usage(FILE *f)
{
    fputs("usage: orrery predict [SPEC.yaml] [--model NAME|FILE --gpu NAME --gpus N --tp N --pp N ...]\n"
          "       orrery list gpus|models|clusters\n"
          "       orrery validate [DIR]   (DIR: shared/validation; default " ORRERY_DEFAULT_VALIDATION_DIR ")\n"
          "flags and the spec format: docs/spec.md\n", f);
    return f == stderr ? ORR_EXIT_USAGE : 0;
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
    if (orr_spec_apply_flags(&s, argc - i, argv + i, &err) < 0) return fail(&err);
    if (orr_spec_resolve(&s, &err) < 0) return fail(&err);

    double t0 = wall_s();
    orr_prediction p;
    if (orr_predict(&s, &p, &err) < 0) return fail(&err);
    double wall = wall_s() - t0;

    if (s.trace_path[0] && orr_report_trace(s.trace_path, p.w, &p.x, &err) < 0) {
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
        orr_buf_printf(&out, "simulated in %.3f s wall, peak RSS %.1f MiB\n", wall, (double)ru.ru_maxrss / 1024.0);
        if (s.trace_path[0]) orr_buf_printf(&out, "trace written to %s (open in ui.perfetto.dev)\n", s.trace_path);
    }
    fwrite(out.s, 1, out.n, stdout);
    orr_buf_free(&out);
    orr_prediction_free(&p);
    return 0;
}

static int cmd_list(int argc, char **argv)
{
    if (argc != 1) {
        fprintf(stderr, "orrery: list: expected one of gpus, models, clusters\n");
        return ORR_EXIT_USAGE;
    }
    if (strcmp(argv[0], "gpus") == 0) {
        printf("%-20s %5s %9s %9s %9s %10s %10s %10s\n", "gpu", "SMs", "HBM GiB", "HBM TB/s", "L2 MiB",
               "NVLink GB/s", "bf16 TF/s", "fp8 TF/s");
        for (size_t k = 0; k < orr_catalog_gpu_count(); k++) {
            const orr_gpu *g = orr_catalog_gpu_at(k);
            printf("%-20s %5u %9.1f %9.2f %9.1f %10.0f %10.1f %10.1f\n", g->name, g->sms,
                   (double)g->hbm_bytes / (1024.0 * 1024 * 1024), g->hbm_Bps / 1e12,
                   (double)g->l2_bytes / (1024.0 * 1024), g->nvlink_Bps / 1e9, g->peak_flops[ORR_BF16] / 1e12,
                   g->peak_flops[ORR_FP8] / 1e12);
        }
        puts("(NVLink GB/s per direction; TF/s dense)");
    } else if (strcmp(argv[0], "models") == 0) {
        printf("%-18s %6s %6s %6s %4s %6s %7s %6s %-7s %8s\n", "model", "layers", "hidden", "heads", "kv", "ffn",
               "vocab", "seq", "mlp", "params");
        for (size_t k = 0; k < orr_catalog_model_count(); k++) {
            const orr_model *m = orr_catalog_model_at(k);
            printf("%-18s %6u %6u %6u %4u %6u %7u %6u %-7s %7.2fB\n", m->name, m->layers, m->hidden, m->heads,
                   m->kv_heads, m->ffn, m->vocab, m->seq, m->gated_mlp ? "swiglu" : "gelu",
                   orr_model_params(m) / 1e9);
        }
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

static int cmd_validate(int argc, char **argv)
{
    if (argc > 1) {
        fprintf(stderr, "orrery: validate: expected at most one argument, the shared/validation folder\n");
        return ORR_EXIT_USAGE;
    }
    const char *dir = argc == 1 ? argv[0] : ORRERY_DEFAULT_VALIDATION_DIR;
    for (int set = 0; set < ORR_VALID_SET_COUNT; set++) {
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
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) return usage(stderr);
    if (strcmp(argv[1], "predict") == 0) return cmd_predict(argc - 2, argv + 2);
    if (strcmp(argv[1], "list") == 0) return cmd_list(argc - 2, argv + 2);
    if (strcmp(argv[1], "validate") == 0) return cmd_validate(argc - 2, argv + 2);
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0)
        return usage(stdout);
    fprintf(stderr, "orrery: unknown command \"%s\" (expected predict, list or validate)\n", argv[1]);
    return ORR_EXIT_USAGE;
}
