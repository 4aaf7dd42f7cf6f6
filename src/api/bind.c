/*
 * bind.c - the entry points for other languages (bind.h): `orrery predict --json` and `orrery list`
 * as functions from strings to JSON text. The Python package (python/orrery) calls them in-process.
 *
 * Nothing here keeps state between calls: each request has its own spec, workload and buffers, so
 * calls from several threads run side by side (bind.h says why the rest of the library allows it).
 */
#include "orrery/bind.h"
#include "orrery/orrery.h"
#include "orrery/packet.h"
#include "orrery/search.h"
#include "orrery/topo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int orr_bind_abi(void) { return ORR_BIND_ABI; }

const char *orr_bind_version(void) { return ORRERY_LIB_VERSION; }

void orr_bind_free(char *s) { free(s); }

/* Hands a finished buffer to the caller as a NUL-terminated malloc'd string. */
static char *take(orr_buf *b)
{
    if (!b->s) return orr_xstrdup("");
    char *s = b->s;
    memset(b, 0, sizeof *b);
    return s;
}

/* Sets *err_out to err's message and returns -1. */
static int give_err(const orr_err *err, char **err_out)
{
    if (err_out) *err_out = orr_xstrdup(err->msg);
    return -1;
}

/* The report of a resolved spec with jobs: (each job alone and all of them together). */
static int predict_jobs_json(const orr_spec *s, orr_buf *out, orr_err *err)
{
    orr_jobs_prediction p;
    if (orr_predict_jobs(s, &p, err) < 0) return -1;
    int rc = 0;
    if (s->trace_path[0]) rc = orr_report_trace(s->trace_path, p.w, &p.x, err);
    if (rc == 0) orr_report_jobs_json(&p.report, out);
    orr_jobs_prediction_free(&p);
    return rc;
}

/* The report of a resolved single-job spec. It is written before the spec is freed: the report
 * info points into it (the GPU's name). */
static int predict_one_json(const orr_spec *s, const char *spec_path, const char *spec_text, int argc, char **argv,
                            orr_buf *out, orr_err *err)
{
    orr_prediction p;
    if (orr_predict(s, &p, err) < 0) return -1;
    orr_fit_fixes fixes; /* out of memory: the settings that would make it fit */
    orr_err fix_err = {{0}};
    if (p.r.mem.oom && orr_search_fixes(spec_path, spec_text, argc, argv, s, &fixes, &fix_err) == 0) p.info.fixes = &fixes;
    int rc = 0;
    if (s->trace_path[0]) rc = orr_report_trace(s->trace_path, p.w, &p.x, err);
    if (rc == 0) orr_report_json(&p.r, p.w, &p.info, out);
    orr_prediction_free(&p);
    return rc;
}

int orr_predict_json(const char *spec_path, const char *spec_text, int argc, const char *const *argv,
                     char **json_out, char **err_out)
{
    orr_err err = {{0}};
    if (json_out) *json_out = NULL;
    if (err_out) *err_out = NULL;
    if (!json_out || argc < 0 || (argc > 0 && !argv)) {
        orr_fail(&err, "orr_predict_json: bad arguments (json_out NULL, or argc %d with argv %s)", argc,
                 argv ? "given" : "NULL");
        return give_err(&err, err_out);
    }
    if (spec_path && spec_text) {
        orr_fail(&err, "give a spec file or a spec text, not both");
        return give_err(&err, err_out);
    }
    orr_spec *s = orr_xmalloc(sizeof *s); /* large (the pp_layers table): not on a thread's stack */
    orr_spec_init(s);
    int rc = 0;
    if (spec_path) rc = orr_spec_load_file(s, spec_path, &err);
    else if (spec_text) rc = orr_spec_load_text(s, "spec", spec_text, strlen(spec_text), &err);
    /* the parser takes char **: hand it copies, so the caller's strings stay untouched */
    char **args = orr_xcalloc((size_t)argc + 1, sizeof *args);
    for (int i = 0; i < argc; i++) args[i] = orr_xstrdup(argv[i] ? argv[i] : "");
    if (rc == 0) rc = orr_spec_apply_flags(s, argc, args, &err);
    if (rc == 0) rc = orr_spec_resolve(s, &err);
    orr_buf out = {0};
    if (rc == 0) {
        s->progress = NULL; /* no progress line: the caller is a program */
        rc = s->njobs ? predict_jobs_json(s, &out, &err) : predict_one_json(s, spec_path, spec_text, argc, args, &out, &err);
    }
    for (int i = 0; i < argc; i++) free(args[i]);
    free(args);
    orr_spec_free(s);
    free(s);
    if (rc < 0) {
        orr_buf_free(&out);
        return give_err(&err, err_out);
    }
    *json_out = take(&out);
    return 0;
}

/* ---- Search ---- */

int orr_search_json_run(const char *spec_path, const char *spec_text, int argc, const char *const *argv,
                        char **json_out, char **err_out)
{
    orr_err err = {{0}};
    if (json_out) *json_out = NULL;
    if (err_out) *err_out = NULL;
    if (!json_out || argc < 0 || (argc > 0 && !argv)) {
        orr_fail(&err, "orr_search_json_run: bad arguments (json_out NULL, or argc %d with argv %s)", argc,
                 argv ? "given" : "NULL");
        return give_err(&err, err_out);
    }
    if (spec_path && spec_text) {
        orr_fail(&err, "give a spec file or a spec text, not both");
        return give_err(&err, err_out);
    }
    /* the spec path goes first, as on the command line; the parser takes char **: copies */
    int n = argc + (spec_path ? 1 : 0);
    char **args = orr_xcalloc((size_t)n + 1, sizeof *args);
    int k = 0;
    if (spec_path) args[k++] = orr_xstrdup(spec_path);
    for (int i = 0; i < argc; i++) args[k++] = orr_xstrdup(argv[i] ? argv[i] : "");
    orr_search_opts o;
    orr_search_result r;
    int rc = spec_text ? orr_search_parse_text(&o, spec_text, n, args, &err) : orr_search_parse(&o, n, args, &err);
    orr_buf out = {0};
    if (rc == 0 && (rc = orr_search_run(&o, &r, &err)) == 0) {
        rc = orr_search_write_files(&r, &o, &err);
        if (rc == 0) orr_search_json(&r, &o, &out);
        orr_search_result_free(&r);
    }
    orr_search_opts_free(&o);
    for (int i = 0; i < n; i++) free(args[i]);
    free(args);
    if (rc < 0) {
        orr_buf_free(&out);
        return give_err(&err, err_out);
    }
    *json_out = take(&out);
    return 0;
}

/* ---- Packet-level network simulation ---- */

int orr_netsim_json_run(const char *topo_path, const char *flows_path, const char *config_path, int no_accel,
                        char **json_out, char **err_out)
{
    orr_err err = {{0}};
    if (json_out) *json_out = NULL;
    if (err_out) *err_out = NULL;
    if (!json_out || !topo_path || !flows_path || !config_path) {
        orr_fail(&err, "orr_netsim_json_run: give the topology, flow and config files (and json_out)");
        return give_err(&err, err_out);
    }
    orr_packet_config cfg;
    orr_packet_config_default(&cfg);
    orr_buf warn = {0}; /* the command line prints them; here the JSON is the answer */
    int rc = orr_packet_config_read(&cfg, config_path, &warn, &err);
    orr_buf_free(&warn);
    orr_topo t;
    if (rc == 0) rc = orr_topo_read_hpcc(&t, topo_path, &err);
    if (rc < 0) return give_err(&err, err_out);
    cfg.accel = !no_accel;
    orr_netsim_result r;
    rc = orr_netsim_run_with(&t, &cfg, flows_path, &r, &err);
    orr_topo_free(&t);
    if (rc < 0) return give_err(&err, err_out);
    orr_buf out = {0};
    orr_netsim_json(&r, &cfg, &out);
    orr_netsim_result_free(&r);
    *json_out = take(&out);
    return 0;
}

/* ---- Catalogs ---- */

/* `"key": ` after the first member of an object. */
static void key(orr_buf *b, const char *name)
{
    orr_buf_puts(b, ", ");
    orr_json_str(b, name);
    orr_buf_puts(b, ": ");
}

static void key_num(orr_buf *b, const char *name, double v)
{
    key(b, name);
    orr_json_num(b, v);
}

static void key_u64(orr_buf *b, const char *name, uint64_t v)
{
    key(b, name);
    orr_buf_printf(b, "%llu", (unsigned long long)v);
}

static void key_str(orr_buf *b, const char *name, const char *v)
{
    key(b, name);
    if (v) orr_json_str(b, v);
    else orr_buf_puts(b, "null");
}

static void key_bool(orr_buf *b, const char *name, int v)
{
    key(b, name);
    orr_buf_puts(b, v ? "true" : "false");
}

/* Starts an entry: `{"name": NAME, "aliases": [..]` from the catalog's ", "-joined alias text. */
static void entry_start(orr_buf *b, size_t i, const char *name, const char *aliases)
{
    orr_buf_puts(b, i ? ",\n  {\"name\": " : "\n  {\"name\": ");
    orr_json_str(b, name);
    orr_buf_puts(b, ", \"aliases\": [");
    const char *p = aliases ? aliases : "";
    for (int first = 1; *p; first = 0) {
        size_t n = strcspn(p, ",");
        char one[128];
        snprintf(one, sizeof one, "%.*s", (int)(n < sizeof one ? n : sizeof one - 1), p);
        if (!first) orr_buf_puts(b, ", ");
        orr_json_str(b, one);
        p += n;
        while (*p == ',' || *p == ' ') p++;
    }
    orr_buf_puts(b, "]");
}

static void gpus_json(orr_buf *b)
{
    for (size_t i = 0; i < orr_catalog_gpu_count(); i++) {
        const orr_gpu *g = orr_catalog_gpu_at(i);
        entry_start(b, i, g->name, orr_catalog_gpu_aliases(i));
        key_u64(b, "sms", g->sms);
        key_num(b, "compute_capability", g->compute_capability);
        key_u64(b, "hbm_bytes", g->hbm_bytes);
        key_num(b, "hbm_bytes_per_s", g->hbm_Bps);
        key_u64(b, "l2_bytes", g->l2_bytes);
        key_num(b, "nvlink_bytes_per_s", g->nvlink_Bps);
        key(b, "peak_flops");
        for (int d = 0; d < ORR_DTYPE_COUNT; d++) {
            orr_buf_puts(b, d ? ", " : "{");
            orr_json_str(b, orr_dtype_name((orr_dtype)d));
            orr_buf_puts(b, ": ");
            orr_json_num(b, g->peak_flops[d]);
        }
        orr_buf_puts(b, "}");
        key_num(b, "tdp_w", g->tdp_w);
        key_u64(b, "runtime_reserved_bytes", g->runtime_reserved_bytes);
        key_str(b, "default_cluster", orr_catalog_gpu_default_cluster(g->name));
        const char *def = orr_catalog_default_gpu();
        key_bool(b, "default", def && strcmp(g->name, def) == 0);
        orr_buf_puts(b, "}");
    }
}

static void models_json(orr_buf *b)
{
    for (size_t i = 0; i < orr_catalog_model_count(); i++) {
        const orr_model *m = orr_catalog_model_at(i);
        entry_start(b, i, m->name, orr_catalog_model_aliases(i));
        key_u64(b, "layers", m->layers);
        key_u64(b, "hidden", m->hidden);
        key_u64(b, "heads", m->heads);
        key_u64(b, "kv_heads", m->kv_heads);
        key_u64(b, "head_dim", m->head_dim);
        key_u64(b, "ffn", m->ffn);
        key_u64(b, "vocab", m->vocab);
        key_u64(b, "seq", m->seq);
        key_str(b, "mlp", m->gated_mlp ? "swiglu" : "gelu");
        key_str(b, "norm", m->rmsnorm ? "rmsnorm" : "layernorm");
        key_bool(b, "bias", m->bias);
        key_bool(b, "tied_embeddings", m->tied_embeddings);
        key_num(b, "params", orr_model_params(m));
        orr_buf_puts(b, "}");
    }
}

static void clusters_json(orr_buf *b)
{
    for (size_t i = 0; i < orr_catalog_cluster_count(); i++) {
        const orr_cluster *c = orr_catalog_cluster_at(i);
        entry_start(b, i, c->name, orr_catalog_cluster_aliases(i));
        key_u64(b, "gpus_per_node", c->gpus_per_node);
        key_num(b, "nic_bytes_per_s", c->nic_Bps);
        key_u64(b, "nics_per_node", c->nics_per_node ? c->nics_per_node : c->gpus_per_node);
        key_str(b, "topology", c->topology);
        key_bool(b, "nvls", c->nvls);
        key_str(b, "gpu", orr_catalog_cluster_default_gpu(c->name));
        orr_buf_puts(b, "}");
    }
}

int orr_catalog_json(const char *which, char **json_out, char **err_out)
{
    orr_err err = {{0}};
    if (json_out) *json_out = NULL;
    if (err_out) *err_out = NULL;
    if (!json_out) {
        orr_fail(&err, "orr_catalog_json: json_out is NULL");
        return give_err(&err, err_out);
    }
    static const char *const names[] = {"models", "gpus", "clusters"};
    int k = 0;
    while (k < 3 && (!which || strcmp(which, names[k]) != 0)) k++;
    if (k == 3) {
        orr_fail(&err, "unknown catalog \"%s\" (expected models, gpus or clusters)", which ? which : "");
        return give_err(&err, err_out);
    }
    orr_buf b = {0};
    orr_buf_puts(&b, "[");
    if (k == 0) models_json(&b);
    else if (k == 1) gpus_json(&b);
    else clusters_json(&b);
    orr_buf_puts(&b, "\n]\n");
    *json_out = take(&b);
    return 0;
}
