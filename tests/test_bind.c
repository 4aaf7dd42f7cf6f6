/*
 * Tests of the entry points for other languages (src/api/bind.c, include/orrery/bind.h): a
 * prediction from flags, from a spec file and from YAML text gives the report `orrery predict
 * --json` writes; errors come back as the command line's message; the catalogs; and eight
 * predictions (and eight errors) in threads at once give byte for byte what they give one after
 * another (under `make test-san` with ASan+UBSan too).
 */
#include "check.h"
#include "orrery/bind.h"
#include "orrery/orrery.h"

#include <pthread.h>
#include <string.h>

#define SRC ORRERY_SOURCE_DIR

/* One request: flags only (argv NULL-terminated), spec path or text optional. */
typedef struct request {
    const char *path, *text;
    const char *argv[16];
    char *json, *err; /* results */
    int rc;
} request;

static int argc_of(const request *q)
{
    int n = 0;
    while (q->argv[n]) n++;
    return n;
}

static void run(request *q)
{
    q->rc = orr_predict_json(q->path, q->text, argc_of(q), q->argv, &q->json, &q->err);
}

static void *run_thread(void *arg)
{
    run(arg);
    return NULL;
}

static void clear(request *q)
{
    orr_bind_free(q->json);
    orr_bind_free(q->err);
    q->json = q->err = NULL;
}

/* The report of `orrery predict` for the same inputs, built here the way tools/orrery.c does. */
static char *reference(const char *path, int argc, const char *const *argv)
{
    orr_spec s;
    orr_err err = {{0}};
    orr_spec_init(&s);
    char *args[16];
    for (int i = 0; i < argc; i++) args[i] = (char *)argv[i];
    if ((path && orr_spec_load_file(&s, path, &err)) || orr_spec_apply_flags(&s, argc, args, &err) ||
        orr_spec_resolve(&s, &err)) {
        fprintf(stderr, "reference: %s\n", err.msg);
        orr_spec_free(&s);
        return NULL;
    }
    orr_prediction p;
    orr_buf b = {0};
    if (orr_predict(&s, &p, &err) == 0) {
        orr_report_json(&p.r, p.w, &p.info, &b);
        orr_prediction_free(&p);
    }
    orr_spec_free(&s);
    return b.s;
}

static void test_predict(void)
{
    request q = {.argv = {"--model", "llama3-8b", "--gpu", "H100-SXM", "--gpus", "16", "--tp", "4", "--pp", "2",
                          "--gbs", "16", NULL}};
    run(&q);
    CHECK_MSG(q.rc == 0 && q.json && !q.err, "%s", q.err ? q.err : "");
    char *ref = reference(NULL, argc_of(&q), q.argv);
    CHECK(ref && q.json && strcmp(ref, q.json) == 0);
    free(ref);
    clear(&q);

    /* a spec file, and the same spec as text, with a flag over it */
    const char *path = SRC "/examples/gpt3_13b_256_h100.yaml";
    request f = {.path = path, .argv = {"--pp", "4", NULL}};
    run(&f);
    ref = reference(path, 2, f.argv);
    CHECK_MSG(f.rc == 0 && ref && strcmp(ref, f.json) == 0, "%s", f.err ? f.err : "");
    orr_err err = {{0}};
    size_t len = 0;
    char *text = orr_read_file(path, &len, &err);
    request t = {.text = text, .argv = {"--pp=4", NULL}};
    run(&t);
    CHECK_MSG(t.rc == 0 && f.json && t.json && strcmp(f.json, t.json) == 0, "%s", t.err ? t.err : "");
    free(text);
    free(ref);
    clear(&f);
    clear(&t);
}

static void test_errors(void)
{
    request q = {.argv = {"--model", "lama3-70b", "--gpu", "H100-SXM", "--gpus", "8", NULL}};
    run(&q);
    CHECK(q.rc == -1 && !q.json && q.err && strstr(q.err, "unknown model \"lama3-70b\" (did you mean llama3-70b"));
    clear(&q);
    request y = {.text = "model: llama3-8b\nparallel:\n  tp: eight\n"};
    run(&y);
    CHECK_MSG(y.rc == -1 && y.err && strstr(y.err, "spec:3: parallel.tp: expected a positive integer, got \"eight\""),
              "%s", y.err ? y.err : "(none)");
    clear(&y);
    request both = {.path = "a.yaml", .text = "gpus: 8"};
    run(&both);
    CHECK(both.rc == -1 && both.err && strstr(both.err, "not both"));
    clear(&both);
    request missing = {.path = "/nonexistent/spec.yaml"};
    run(&missing);
    CHECK(missing.rc == -1 && missing.err && strstr(missing.err, "/nonexistent/spec.yaml"));
    clear(&missing);
    char *js = NULL, *msg = NULL;
    CHECK(orr_predict_json(NULL, NULL, -1, NULL, &js, &msg) == -1 && !js && msg);
    orr_bind_free(msg);
}

static void test_catalogs(void)
{
    const char *which[] = {"models", "gpus", "clusters"};
    const char *has[] = {"\"name\": \"llama3-70b\"", "\"name\": \"H100-SXM5-80GB\"", "\"name\": \"dgx-h100\""};
    for (int i = 0; i < 3; i++) {
        char *js = NULL, *msg = NULL;
        CHECK(orr_catalog_json(which[i], &js, &msg) == 0 && js && !msg);
        CHECK_MSG(js && js[0] == '[' && strstr(js, has[i]), "%s", which[i]);
        orr_bind_free(js);
    }
    char *js = NULL, *msg = NULL;
    CHECK(orr_catalog_json("gpu", &js, &msg) == -1 && !js && msg && strstr(msg, "unknown catalog \"gpu\""));
    orr_bind_free(msg);
    CHECK(orr_bind_abi() == ORR_BIND_ABI && strchr(orr_bind_version(), '.'));
}

/* Eight different predictions and eight errors, all at once in threads, against the same one by one. */
static void test_threads(void)
{
    enum { N = 8 };
    static const char *const tps[N] = {"1", "2", "4", "8", "2", "4", "1", "8"};
    static const char *const pps[N] = {"1", "2", "2", "1", "4", "4", "2", "2"};
    request seq[N], par[N], bad[N];
    char gpus[N][8];
    for (int i = 0; i < N; i++) {
        snprintf(gpus[i], sizeof gpus[i], "%d", 16);
        request q = {.argv = {"--model", i % 2 ? "llama3-8b" : "gpt3-1.3b", "--gpu", "H100-SXM", "--gpus", gpus[i],
                              "--tp", tps[i], "--pp", pps[i], "--gbs", "32", NULL}};
        seq[i] = par[i] = q;
        request b = {.argv = {"--model", i % 2 ? "nope" : "llama3-8b", "--gpu", "H100-SXM", "--tp", i % 2 ? "1" : "3",
                              "--gpus", "16", NULL}};
        bad[i] = b;
        run(&seq[i]);
        CHECK_MSG(seq[i].rc == 0, "%d: %s", i, seq[i].err ? seq[i].err : "");
    }
    pthread_t th[2 * N];
    for (int i = 0; i < N; i++) {
        CHECK(pthread_create(&th[i], NULL, run_thread, &par[i]) == 0);
        CHECK(pthread_create(&th[N + i], NULL, run_thread, &bad[i]) == 0);
    }
    for (int i = 0; i < 2 * N; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < N; i++) {
        CHECK_MSG(par[i].rc == 0 && seq[i].json && par[i].json && strcmp(seq[i].json, par[i].json) == 0,
                  "thread %d differs from the sequential run", i);
        CHECK_MSG(bad[i].rc == -1 && bad[i].err &&
                      strstr(bad[i].err, i % 2 ? "unknown model \"nope\"" : "divisible by tp*cp*pp (3*1*1 = 3)"),
                  "thread %d: %s", i, bad[i].err ? bad[i].err : "(no error)");
        clear(&seq[i]);
        clear(&par[i]);
        clear(&bad[i]);
    }
}

int main(void)
{
    test_predict();
    test_errors();
    test_catalogs();
    test_threads();
    return check_done();
}
