/*
 * Tests of the spec layer: the YAML tree loader, the GPU/cluster/model catalogs and parameter counts,
 * spec files, command-line flags, resolve's derivations, and bad input of every kind (each must fail
 * with a one-line message naming the field or flag, and nothing may crash under ASan/UBSan).
 */
#include "check.h"
#include "orrery/spec.h"
#include "spec/yaml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- helpers ---- */

/* Writes len bytes of text to a new temporary file; returns its path (a static buffer per slot). */
static const char *write_temp_n(const char *text, size_t len)
{
    static char paths[4][64];
    static int slot;
    char *path = paths[slot++ % 4];
    snprintf(path, 64, "/tmp/orr_test_spec_XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0) {
        perror("mkstemp");
        exit(2);
    }
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w <= 0) {
            perror("write");
            exit(2);
        }
        off += (size_t)w;
    }
    close(fd);
    return path;
}

static const char *write_temp(const char *text) { return write_temp_n(text, strlen(text)); }

/* Loads a spec from text into a fresh spec; the path it used is left in *path_out if asked. */
static int load_text(orr_spec *s, const char *text, orr_err *err, char *path_out)
{
    const char *path = write_temp(text);
    if (path_out) strcpy(path_out, path);
    orr_spec_init(s);
    int rc = orr_spec_load_file(s, path, err);
    unlink(path);
    return rc;
}

static int flags_of(orr_spec *s, orr_err *err, const char *const *args)
{
    char *argv[64];
    int argc = 0;
    while (args[argc] && argc < 63) {
        argv[argc] = (char *)args[argc];
        argc++;
    }
    return orr_spec_apply_flags(s, argc, argv, err);
}

/* Resolve with flags only (no spec file). */
static int resolve_flags(orr_spec *s, orr_err *err, const char *const *args)
{
    orr_spec_init(s);
    err->msg[0] = 0;
    if (flags_of(s, err, args)) return -1;
    return orr_spec_resolve(s, err);
}

/* rc must be a failure whose message contains every one of the given substrings. */
#define EXPECT_FAIL(rc, err, ...)                                                                   \
    do {                                                                                            \
        const char *subs_[] = {__VA_ARGS__, NULL};                                                  \
        int ok_ = (rc) != 0;                                                                        \
        for (int i_ = 0; subs_[i_]; i_++) ok_ = ok_ && strstr((err).msg, subs_[i_]) != NULL;        \
        ok_ = ok_ && strchr((err).msg, '\n') == NULL;                                               \
        CHECK_MSG(ok_, "rc=%d msg=[%s]", (int)(rc), (err).msg);                                     \
    } while (0)

#define EXPECT_OK(rc, err) CHECK_MSG((rc) == 0, "unexpected failure: %s", (err).msg)

/* ---- YAML tree ---- */

static void test_yaml_tree(void)
{
    orr_ydoc d;
    orr_err err;
    const char *text = "a: 1\nb:\n  c: [x, 'y', \"z\"]\n  d: {e: true}\n# comment\n";
    EXPECT_OK(orr_yaml_parse(&d, "t.yaml", text, strlen(text), &err), err);
    CHECK(d.root && d.root->kind == ORR_YMAP && d.root->n == 2);
    const orr_ynode *b = orr_y_get(d.root, "b");
    const orr_ynode *c = orr_y_get(b, "c");
    CHECK(c && c->kind == ORR_YSEQ && c->n == 3 && c->line == 3);
    CHECK(c && strcmp(c->last->str, "z") == 0 && !c->last->plain && c->first->plain);
    char path[64];
    orr_y_path(c->first->next, path, sizeof path);
    CHECK(strcmp(path, "b.c[1]") == 0);
    uint32_t u = 0;
    EXPECT_OK(orr_y_u32(orr_y_get(d.root, "a"), 1, &u, &err), err);
    CHECK_EQ_I64(u, 1);
    int bv = 0;
    EXPECT_OK(orr_y_bool(orr_y_get(orr_y_get(b, "d"), "e"), &bv, &err), err);
    CHECK_EQ_I64(bv, 1);
    /* Typed accessors name the file, the line and the path. */
    EXPECT_FAIL(orr_y_u32(c, 1, &u, &err), err, "t.yaml:3: b.c: expected a positive integer, got a sequence");
    EXPECT_FAIL(orr_y_bool(c->first, &bv, &err), err, "t.yaml:3: b.c[0]: expected true or false, got \"x\"");
    orr_yaml_free(&d);

    /* Empty documents have no root. */
    EXPECT_OK(orr_yaml_parse(&d, "e.yaml", "", 0, &err), err);
    CHECK(d.root == NULL);
    orr_yaml_free(&d);
    EXPECT_OK(orr_yaml_parse(&d, "e.yaml", "# only a comment\n---\n", 21, &err), err);
    CHECK(d.root == NULL);
    orr_yaml_free(&d);

    /* Strict numbers. */
    uint64_t v;
    double x;
    CHECK(orr_parse_u64("42", &v) == 0 && v == 42);
    CHECK(orr_parse_u64("+7", &v) == 0 && v == 7);
    CHECK(orr_parse_u64("18446744073709551615", &v) == 0 && v == UINT64_MAX);
    CHECK(orr_parse_u64("18446744073709551616", &v) != 0);
    CHECK(orr_parse_u64("8x", &v) != 0 && orr_parse_u64(" 8", &v) != 0 && orr_parse_u64("-1", &v) != 0);
    CHECK(orr_parse_u64("", &v) != 0 && orr_parse_u64("+", &v) != 0 && orr_parse_u64("0x10", &v) != 0);
    CHECK(orr_parse_num("2.5", &x) == 0 && x == 2.5);
    CHECK(orr_parse_num("4e7", &x) == 0 && x == 4e7);
    CHECK(orr_parse_num("inf", &x) != 0 && orr_parse_num("nan", &x) != 0 && orr_parse_num("0x1p3", &x) != 0);
    CHECK(orr_parse_num("1e999", &x) != 0 && orr_parse_num("1.5.", &x) != 0 && orr_parse_num("", &x) != 0);

    char q[80];
    orr_quote("a\"b\nc", q, sizeof q);
    CHECK(strcmp(q, "\"a\\\"b\\x0ac\"") == 0);
}

/* ---- catalogs ---- */

static void test_catalogs(void)
{
    orr_gpu g;
    orr_cluster c;
    orr_model m;
    orr_err err;

    CHECK_EQ_I64(orr_catalog_gpu_count(), 11);
    EXPECT_OK(orr_catalog_gpu("a100", &g, &err), err);
    CHECK(strcmp(g.name, "A100-SXM4-80GB") == 0);
    CHECK_EQ_I64(g.sms, 108);
    CHECK_EQ_I64(g.hbm_bytes, 80ULL << 30);
    CHECK_REL(g.hbm_Bps, 2.039e12, 1e-12);
    CHECK_EQ_I64(g.l2_bytes, 40ULL << 20);
    CHECK_REL(g.nvlink_Bps, 300e9, 1e-12);
    CHECK_REL(g.peak_flops[ORR_BF16], 312e12, 1e-12);
    CHECK_REL(g.peak_flops[ORR_FP32], 19.5e12, 1e-12);
    CHECK(g.peak_flops[ORR_FP8] == 0);
    CHECK_EQ_I64(g.gemm_tile_m, 128);
    CHECK_EQ_I64(g.gemm_tile_n, 128);
    CHECK_EQ_I64(g.kernel_min_ps, 2 * ORR_PS_PER_US);
    CHECK(g.gemm_eff > 0.5 && g.gemm_eff <= 1.0); /* fitted; docs/models.md */

    EXPECT_OK(orr_catalog_gpu("h100", &g, &err), err);
    CHECK(strcmp(g.name, "H100-SXM5-80GB") == 0);
    CHECK_EQ_I64(g.sms, 132);
    CHECK_REL(g.peak_flops[ORR_FP8], 1978.9e12, 1e-12);
    CHECK_REL(g.nvlink_Bps, 450e9, 1e-12);
    CHECK_EQ_I64(g.gemm_tile_n, 256);
    EXPECT_OK(orr_catalog_gpu("A100-40GB", &g, &err), err);
    CHECK(strcmp(g.name, "A100-SXM4-40GB") == 0 && g.hbm_bytes == 40ULL << 30);
    EXPECT_OK(orr_catalog_gpu("h800", &g, &err), err);
    CHECK_REL(g.nvlink_Bps, 200e9, 1e-12);
    EXPECT_OK(orr_catalog_gpu("H200", &g, &err), err);
    CHECK_EQ_I64(g.hbm_bytes, 141ULL << 30);
    EXPECT_OK(orr_catalog_gpu("b200-hgx", &g, &err), err);
    CHECK(strcmp(g.name, "B200") == 0 && g.hbm_bytes == 192000000000ULL);
    CHECK_REL(g.peak_flops[ORR_BF16], 2250e12, 1e-12);
    EXPECT_OK(orr_catalog_gpu("A800", &g, &err), err);
    CHECK(strcmp(orr_catalog_gpu_default_cluster("a800"), "dgx-a100") == 0);
    CHECK(strcmp(orr_catalog_gpu_default_cluster("H800"), "dgx-h100") == 0);
    CHECK(strcmp(orr_catalog_gpu_default_cluster("H200"), "hgx-h200") == 0);
    CHECK(strcmp(orr_catalog_gpu_default_cluster("B200"), "dgx-b200") == 0);
    CHECK(orr_catalog_gpu_default_cluster("nope") == NULL);
    CHECK(strcmp(orr_catalog_gpu_aliases(1), "A100-80GB, A100") == 0);
    CHECK(orr_catalog_gpu_at(11) == NULL && orr_catalog_gpu_aliases(99) == NULL);

    EXPECT_FAIL(orr_catalog_gpu("X900", &g, &err), err, "unknown GPU \"X900\" (known: A100-SXM4-40GB, ",
                "GB300)");

    CHECK_EQ_I64(orr_catalog_cluster_count(), 8);
    EXPECT_OK(orr_catalog_cluster("Selene", &c, &err), err);
    CHECK(strcmp(c.name, "dgx-a100") == 0 && c.gpus_per_node == 8);
    CHECK_REL(c.nic_Bps, 25e9, 1e-12);
    CHECK(strcmp(c.topology, "rail-fat-tree") == 0);
    CHECK_EQ_I64(c.net_lat_ps, 3500000);
    CHECK_EQ_I64(c.coll_base_ps, 8 * ORR_PS_PER_US);
    CHECK_REL(c.nvlink_eff, 0.80, 1e-12);
    EXPECT_OK(orr_catalog_cluster("aws-p5-efa", &c, &err), err);
    CHECK_REL(c.nic_Bps, 50e9, 1e-12);
    CHECK(strcmp(orr_catalog_cluster_default_gpu("aws-p5-efa"), "H100-SXM5-80GB") == 0);
    EXPECT_FAIL(orr_catalog_cluster("dgx-z", &c, &err), err, "unknown cluster \"dgx-z\"", "dgx-h100");

    CHECK_EQ_I64(orr_catalog_model_count(), 43);
    EXPECT_OK(orr_catalog_model("LLAMA3.1-8B", &m, &err), err);
    CHECK(strcmp(m.name, "llama3-8b") == 0);
    CHECK(m.kv_heads == 8 && m.head_dim == 128 && m.gated_mlp && m.rmsnorm && !m.bias && !m.tied_embeddings);
    EXPECT_OK(orr_catalog_model("gpt3-175b", &m, &err), err);
    CHECK(m.layers == 96 && m.hidden == 12288 && m.heads == 96 && m.kv_heads == 96 && m.head_dim == 128);
    CHECK(m.ffn == 49152 && m.vocab == 50257 && m.seq == 2048 && !m.gated_mlp && m.tied_embeddings && m.bias);
    EXPECT_OK(orr_catalog_model("mcore-gpt-462b", &m, &err), err);
    CHECK(m.layers == 112 && m.hidden == 18432 && m.heads == 144 && m.vocab == 131072 && m.seq == 4096);
    EXPECT_OK(orr_catalog_model("selene-gpt-1t", &m, &err), err);
    CHECK(m.layers == 128 && m.hidden == 25600 && m.heads == 160 && m.vocab == 51200);
    EXPECT_FAIL(orr_catalog_model("gpt5", &m, &err), err, "unknown model \"gpt5\" (all 43: `orrery list models`)");
    EXPECT_FAIL(orr_catalog_model("llama3-7b", &m, &err), err, "(did you mean llama2-7b, llama3-8b or llama3-70b?");
    CHECK(strlen(err.msg) < sizeof err.msg - 1); /* the list was shortened, not cut */

    /* Every catalog model is self-consistent and has a default sequence length. */
    for (size_t i = 0; i < orr_catalog_model_count(); i++) {
        const orr_model *mm = orr_catalog_model_at(i);
        CHECK(orr_model_check(mm, mm->name, &err) == 0 && mm->seq > 0);
        /* heads x head_dim is the model width but where the published shapes say otherwise: MLA (its
         * own head dimensions), Qwen3 and gpt-oss (head_dim 128 and 64 given explicitly) */
        int own_heads = mm->attn_kind == ORR_ATTN_KIND_MLA || strncmp(mm->name, "qwen3", 5) == 0 ||
                        strncmp(mm->name, "gpt-oss", 7) == 0;
        CHECK_MSG(own_heads || (uint64_t)mm->heads * mm->head_dim == mm->hidden, "%s", mm->name);
    }
}

static void test_params(void)
{
    orr_model m;
    orr_err err;
    struct { const char *name; double params; double tol; } cases[] = {
        {"gpt3-175b", 174.6e9, 0.01},      /* GPT-3 paper: 175B; 174.6B without position embeddings */
        {"llama3-8b", 8030261248.0, 0},    /* exact count of the released weights */
        {"llama2-7b", 6738415616.0, 0},    /* exact count of the released weights */
        {"llama2-70b", 68.98e9, 0.01},
        {"llama3-70b", 70.55e9, 0.01},
        {"llama3.1-405b", 405.85e9, 0.01},
        {"selene-gpt-145b", 145.6e9, 0.01}, /* the Megatron table's own counts */
        {"selene-gpt-1t", 1008.0e9, 0.01},
        {"gpt3-13b", 12.85e9, 0.01},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        EXPECT_OK(orr_catalog_model(cases[i].name, &m, &err), err);
        if (cases[i].tol == 0) CHECK_EQ_I64((long long)orr_model_params(&m), (long long)cases[i].params);
        else CHECK_REL(orr_model_params(&m), cases[i].params, cases[i].tol);
    }
    /* GPT layer: 12h^2 + 13h. */
    EXPECT_OK(orr_catalog_model("gpt3-175b", &m, &err), err);
    double h = m.hidden;
    CHECK_REL(orr_model_layer_params(&m), 12 * h * h + 13 * h, 1e-15);
}

/* ---- spec files, flags and resolve ---- */

static const char *full_spec =
    "# GPT-3 175B on 1024 A100s (Megatron-LM README example)\n"
    "framework: megatron\n"
    "model: gpt3-175b\n"
    "gpu: A100-SXM4-80GB\n"
    "cluster: dgx-a100\n"
    "gpus: 1024\n"
    "parallel: {tp: 8, pp: 16, vpp: 1, sp: true, dist_opt: false}\n"
    "training:\n"
    "  mbs: 1\n"
    "  gbs: 1536\n"
    "  seq: 2048\n"
    "  recompute: full\n"
    "  precision: fp16\n"
    "options: {overlap_grad_reduce: true, overlap_param_gather: false, tp_comm_overlap: false,\n"
    "          bucket_params: 4e7, launch_us: 4.5, symmetry: yes}\n";

static void test_spec_file(void)
{
    orr_spec s;
    orr_err err;
    EXPECT_OK(load_text(&s, full_spec, &err, NULL), err);
    EXPECT_OK(orr_spec_resolve(&s, &err), err);
    CHECK(strcmp(s.model.name, "gpt3-175b") == 0 && strcmp(s.gpu.name, "A100-SXM4-80GB") == 0);
    CHECK(s.framework == ORR_FW_MEGATRON && s.framework_set);
    CHECK(strcmp(s.cluster.name, "dgx-a100") == 0);
    CHECK(s.gpus == 1024 && s.tp == 8 && s.pp == 16 && s.dp == 8 && s.vpp == 1);
    CHECK(s.mbs == 1 && s.gbs == 1536 && s.seq == 2048 && s.sp == 1 && s.dist_opt == 0);
    CHECK(s.recompute == ORR_RECOMPUTE_FULL && s.precision == ORR_FP16);
    CHECK(s.overlap_grad_reduce == 1 && s.overlap_param_gather == 0 && s.tp_comm_overlap == 0 && s.symmetry == 1);
    CHECK(s.bucket_params == 4e7 && s.launch_ps == 4500000);
    CHECK(strstr(s.spec_path, "/tmp/orr_test_spec_") == s.spec_path);
    CHECK(strcmp(orr_recompute_name(s.recompute), "full") == 0);

    /* Flags override the file, in either form. */
    EXPECT_OK(load_text(&s, full_spec, &err, NULL), err);
    const char *args[] = {"--tp", "4", "--pp=8", "--gbs=2048", "--precision", "bf16", "--no-sp",
                          "--recompute=selective",
                          "--json", "--trace", "out.json", "--launch-us", "2.5", "--dist-opt", "--no-symmetry",
                          "--tp-comm-overlap", "--gpu", "h100", NULL};
    EXPECT_OK(flags_of(&s, &err, args), err);
    EXPECT_OK(orr_spec_resolve(&s, &err), err);
    CHECK(s.tp == 4 && s.pp == 8 && s.dp == 32 && s.gbs == 2048 && s.precision == ORR_BF16 && s.sp == 0);
    CHECK(s.recompute == ORR_RECOMPUTE_SELECTIVE && s.json == 1 && strcmp(s.trace_path, "out.json") == 0);
    CHECK(s.launch_ps == 2500000 && s.dist_opt == 1 && s.symmetry == 0 && s.tp_comm_overlap == 1);
    CHECK(strcmp(s.gpu.name, "H100-SXM5-80GB") == 0 && strcmp(s.cluster.name, "dgx-a100") == 0);
    CHECK(s.bucket_params == 4e7);
}

static void test_defaults_and_derivations(void)
{
    orr_spec s;
    orr_err err;

    orr_spec_init(&s);
    CHECK(s.tp == 1 && s.pp == 1 && s.vpp == 1 && s.mbs == 1 && s.dp == 0 && s.gpus == 0);
    CHECK(s.precision == ORR_BF16 && s.recompute == ORR_RECOMPUTE_NONE && s.sp == 0 && s.dist_opt == 0);
    CHECK(s.overlap_grad_reduce == 1 && s.overlap_param_gather == 1 && s.tp_comm_overlap == 0);
    CHECK(s.launch_ps == 5 * ORR_PS_PER_US && s.symmetry == 1 && s.bucket_params == 0);

    /* The cluster follows the GPU; seq follows the model; dp from gpus; gbs = mbs * dp. */
    EXPECT_OK(load_text(&s, "model: llama3-8b\ngpu: H100\ngpus: 16\n", &err, NULL), err);
    EXPECT_OK(orr_spec_resolve(&s, &err), err);
    CHECK(strcmp(s.cluster.name, "dgx-h100") == 0 && s.cluster.gpus_per_node == 8);
    CHECK(s.seq == 8192 && s.dp == 16 && s.gbs == 16 && s.bucket_params == 40e6);

    /* Megatron's bucket: max(40M, 1M * dp). */
    const char *a1[] = {"--model", "gpt3-1.3b", "--gpu", "B200", "--gpus", "64", NULL};
    EXPECT_OK(resolve_flags(&s, &err, a1), err);
    CHECK(s.dp == 64 && s.bucket_params == 64e6 && strcmp(s.cluster.name, "dgx-b200") == 0);

    /* The GPU follows the cluster. */
    EXPECT_OK(load_text(&s, "model: llama3-8b\ncluster: aws-p5-efa\ngpus: 8\n", &err, NULL), err);
    EXPECT_OK(orr_spec_resolve(&s, &err), err);
    CHECK(strcmp(s.gpu.name, "H100-SXM5-80GB") == 0);

    /* gpus from tp * pp * dp. */
    const char *a2[] = {"--model", "llama2-7b", "--gpu", "a100", "--tp", "2", "--dp", "4", NULL};
    EXPECT_OK(resolve_flags(&s, &err, a2), err);
    CHECK(s.gpus == 8 && s.dp == 4 && s.seq == 4096);

    /* --gpus-per-node applies whatever the order, and to a defaulted cluster too. */
    const char *a3[] = {"--gpus-per-node", "4", "--cluster", "dgx-a100", "--model", "gpt3-125m", "--gpus", "12", NULL};
    EXPECT_OK(resolve_flags(&s, &err, a3), err);
    CHECK(s.cluster.gpus_per_node == 4 && strcmp(s.gpu.name, "A100-SXM4-80GB") == 0);
    const char *a4[] = {"--gpus-per-node=2", "--gpu", "H200", "--model", "gpt3-125m", "--gpus", "6", NULL};
    EXPECT_OK(resolve_flags(&s, &err, a4), err);
    CHECK(s.cluster.gpus_per_node == 2 && strcmp(s.cluster.name, "hgx-h200") == 0);

    /* Interleaved pipeline that satisfies Megatron's rules. */
    const char *a5[] = {"--model", "gpt3-175b", "--gpu", "A100", "--gpus", "1024", "--tp", "8", "--pp", "16",
                        "--vpp", "3", "--gbs", "1536", "--sp", NULL};
    EXPECT_OK(resolve_flags(&s, &err, a5), err);
    CHECK(s.dp == 8 && s.vpp == 3);

    /* fp8 on a GPU that has it. */
    const char *a6[] = {"--model", "llama3-70b", "--gpu", "H100", "--gpus", "64", "--tp", "8",
                        "--precision", "fp8", NULL};
    EXPECT_OK(resolve_flags(&s, &err, a6), err);
    CHECK(s.precision == ORR_FP8);
}

static void test_overrides(void)
{
    orr_spec s;
    orr_err err;
    EXPECT_OK(load_text(&s,
                        "model: {base: llama3-8b, layers: 16}\n"
                        "gpu: {base: H100, hbm_gb: 96, hbm_TBps: 2.4, tdp_w: 500}\n"
                        "cluster: {base: dgx-h100, nic_gbps: 200, gpus_per_node: 4, name: half-h100}\n"
                        "gpus: 8\n",
                        &err, NULL),
              err);
    EXPECT_OK(orr_spec_resolve(&s, &err), err);
    CHECK(s.model.layers == 16 && s.model.hidden == 4096 && s.model.kv_heads == 8 && s.model.ffn == 14336);
    CHECK(strcmp(s.model.name, "llama3-8b") == 0);
    CHECK(s.gpu.hbm_bytes == 96000000000ULL && s.gpu.hbm_Bps == 2.4e12 && s.gpu.tdp_w == 500 && s.gpu.sms == 132);
    CHECK(strcmp(s.cluster.name, "half-h100") == 0 && s.cluster.gpus_per_node == 4);
    CHECK_REL(s.cluster.nic_Bps, 25e9, 1e-12);

    /* Changing heads re-derives head_dim; GQA's kv_heads is kept. */
    EXPECT_OK(load_text(&s, "model: {base: llama3-8b, heads: 16}\n", &err, NULL), err);
    CHECK(s.model.heads == 16 && s.model.head_dim == 256 && s.model.kv_heads == 8);
    /* ...and an MHA model stays MHA. */
    EXPECT_OK(load_text(&s, "model: {base: gpt3-125m, heads: 6}\n", &err, NULL), err);
    CHECK(s.model.heads == 6 && s.model.kv_heads == 6 && s.model.head_dim == 128);

    /* A custom architecture: GPT-style defaults. */
    EXPECT_OK(load_text(&s, "model:\n  name: tiny\n  layers: 4\n  hidden: 512\n  heads: 8\n  vocab: 1000\n  seq: 128\n",
                        &err, NULL),
              err);
    CHECK(strcmp(s.model.name, "tiny") == 0 && s.model.ffn == 2048 && s.model.kv_heads == 8 &&
          s.model.head_dim == 64 && !s.model.gated_mlp && s.model.tied_embeddings && s.model.bias &&
          !s.model.rmsnorm);
    EXPECT_OK(load_text(&s,
                        "model: {layers: 2, hidden: 256, heads: 4, kv_heads: 2, ffn: 688, vocab: 100, mlp: swiglu,"
                        " norm: rmsnorm, bias: false, tied_embeddings: false}\n"
                        "gpu: H100\ngpus: 2\ntraining: {seq: 64}\n",
                        &err, NULL),
              err);
    EXPECT_OK(orr_spec_resolve(&s, &err), err);
    CHECK(s.model.gated_mlp && s.model.rmsnorm && !s.model.bias && s.seq == 64 && s.dp == 2);

    /* A model file given to --model. */
    const char *path = write_temp("base: llama2-7b\nlayers: 8\nseq: 1024\n");
    orr_spec_init(&s);
    const char *args[] = {"--model", path, "--gpu", "A100", "--gpus", "8", NULL};
    EXPECT_OK(flags_of(&s, &err, args), err);
    EXPECT_OK(orr_spec_resolve(&s, &err), err);
    CHECK(s.model.layers == 8 && s.seq == 1024 && s.model.hidden == 4096);
    unlink(path);
    orr_model m;
    EXPECT_FAIL(orr_model_load_file(&m, "/nonexistent/model.yaml", &err), err, "/nonexistent/model.yaml",
                "cannot open");
    path = write_temp("# nothing\n");
    EXPECT_FAIL(orr_model_load_file(&m, path, &err), err, path, "empty model file");
    unlink(path);
}

/* ---- bad input ---- */

static void test_bad_spec_files(void)
{
    orr_spec s;
    orr_err err;
    char path[64], want[160];

    /* The message form of the docs: file:line: path: expected ..., got ... */
    int rc = load_text(&s, "model: gpt3-175b\nparallel:\n  tp: eight\n", &err, path);
    snprintf(want, sizeof want, "%s:3: parallel.tp: expected a positive integer, got \"eight\"", path);
    CHECK_MSG(rc != 0 && strcmp(err.msg, want) == 0, "msg=[%s]", err.msg);

    rc = load_text(&s, "model: gpt3-175b\ngpu: X900\n", &err, path);
    EXPECT_FAIL(rc, err, path, ":2: gpu: unknown GPU \"X900\" (known: A100-SXM4-40GB");
    rc = load_text(&s, "model: gpt-17\n", &err, NULL);
    EXPECT_FAIL(rc, err, ":1: model: unknown model \"gpt-17\"");
    rc = load_text(&s, "cluster: dgx-z100\n", &err, NULL);
    EXPECT_FAIL(rc, err, ":1: cluster: unknown cluster \"dgx-z100\"");
    rc = load_text(&s, "model: gpt3-175b\nparallel: {tp: 8, tpp: 2}\n", &err, NULL);
    EXPECT_FAIL(rc, err, ":2: parallel.tpp: unknown key (did you mean tp, pp or vpp? allowed: pp_layers, tp, pp, dp, vpp, sp, dist_opt, cp, ");
    rc = load_text(&s, "model: gpt3-175b\nparallel: {pp: 4, pp_layers: [24, x, 24, 24]}\n", &err, NULL);
    EXPECT_FAIL(rc, err, ":2: parallel.pp_layers[1]: expected");
    rc = load_text(&s, "model: gpt3-175b\nparallel: {pp: 4, pp_layers: 96}\n", &err, NULL);
    EXPECT_FAIL(rc, err, ":2: parallel.pp_layers: expected a list of 1 to 1024 layer counts");
    rc = load_text(&s, "model: gpt3-175b\nparallel: {pp: 4, pp_layers: [24, 0, 24, 24]}\n", &err, NULL);
    EXPECT_FAIL(rc, err, ":2: parallel.pp_layers[1]: expected");
    rc = load_text(&s, "model: gpt3-175b\nparallel: {pp: 4, decoder_first_pipeline_num_layers: 0}\n", &err, NULL);
    EXPECT_FAIL(rc, err, ":2: parallel.decoder_first_pipeline_num_layers: expected");
    rc = load_text(&s, "modle: gpt3-175b\n", &err, NULL);
    EXPECT_FAIL(rc, err, "modle: unknown key (did you mean model? allowed: framework, model, gpu, cluster, profile, gpus, "
                         "parallel, training, options, network, jobs, search)");
    rc = load_text(&s, "model: [gpt3\ngpu: H100\n", &err, path);
    EXPECT_FAIL(rc, err, path, "invalid YAML");
    rc = load_text(&s, "model: gpt3-175b\n  gpu: H100\n", &err, NULL);
    EXPECT_FAIL(rc, err, ":2: invalid YAML");
    rc = load_text(&s, "parallel: {tp: [8]}\n", &err, NULL);
    EXPECT_FAIL(rc, err, ":1: parallel.tp: expected a positive integer, got a sequence");
    rc = load_text(&s, "parallel:\n  tp:\n", &err, NULL);
    EXPECT_FAIL(rc, err, ":2: parallel.tp: expected a positive integer, got nothing");
    rc = load_text(&s, "parallel: {tp: 0}\n", &err, NULL);
    EXPECT_FAIL(rc, err, "parallel.tp: expected a positive integer, got \"0\"");
    rc = load_text(&s, "parallel: {tp: 5000000000}\n", &err, NULL);
    EXPECT_FAIL(rc, err, "parallel.tp: expected a positive integer of at most 4294967295");
    rc = load_text(&s, "parallel: {sp: maybe}\n", &err, NULL);
    EXPECT_FAIL(rc, err, "parallel.sp: expected true or false, got \"maybe\"");
    rc = load_text(&s, "training: {recompute: some}\n", &err, NULL);
    EXPECT_FAIL(rc, err, "training.recompute: expected one of none|selective|full, got \"some\"");
    rc = load_text(&s, "training: {recompute: selective, recompute_modules: layernorm}\n", &err, NULL);
    EXPECT_FAIL(rc, err, ":1: training.recompute_modules: expected a list of Megatron-Core recompute modules (of "
                         "core_attn,layernorm,moe_act,mlp,moe,shared_experts,mla_up_proj)");
    rc = load_text(&s, "training: {recompute: selective, recompute_modules: [layernorm, act]}\n", &err, NULL);
    EXPECT_FAIL(rc, err, "training.recompute_modules[1]: expected one of core_attn,layernorm");
    rc = load_text(&s, "training: {recompute: selective, recompute_modules: [mlp, mlp]}\n", &err, NULL);
    EXPECT_FAIL(rc, err, "training.recompute_modules[1]: mlp is listed twice");
    rc = load_text(&s, "training: {recompute: selective, recompute_modules: [moe_act, layernorm]}\n", &err, NULL);
    CHECK(rc == 0 && s.recompute_modules == (ORR_RCM_MOE_ACT | ORR_RCM_LAYERNORM));
    rc = load_text(&s, "training: {precision: fp4}\n", &err, NULL);
    EXPECT_FAIL(rc, err, "training.precision: expected one of bf16|fp16|fp8");
    rc = load_text(&s, "options: {data_parallel_sharding_strategy: zero2}\n", &err, NULL);
    EXPECT_FAIL(rc, err, "options.data_parallel_sharding_strategy: expected one of "
                         "optim_grads_params|no_shard|optim|optim_grads");
    rc = load_text(&s, "training: {precision: fp8, fp8_recipe: per-block}\n", &err, NULL);
    EXPECT_FAIL(rc, err, "training.fp8_recipe: expected one of tensorwise|delayed|rowwise|blockwise");
    rc = load_text(&s, "parallel: 8\n", &err, NULL);
    EXPECT_FAIL(rc, err, "parallel: expected a mapping");
    rc = load_text(&s, "- model\n- gpu\n", &err, NULL);
    EXPECT_FAIL(rc, err, "expected a mapping");
    rc = load_text(&s, "model: gpt3-175b\nmodel: llama3-8b\n", &err, NULL);
    EXPECT_FAIL(rc, err, ":2: model: duplicate key (first at line 1)");
    rc = load_text(&s, "parallel: {tp: 2, pp: 2, tp: 4}\n", &err, NULL);
    EXPECT_FAIL(rc, err, "parallel.tp: duplicate key");
    rc = load_text(&s, "x: &a 1\nmodel: *a\n", &err, NULL);
    EXPECT_FAIL(rc, err, ":2: aliases (*\"a\") are not supported");
    rc = load_text(&s, "model: gpt3-175b\n---\nmodel: llama3-8b\n", &err, NULL);
    EXPECT_FAIL(rc, err, ":2: only one YAML document");
    rc = load_text(&s, "? [a, b]\n: 1\n", &err, NULL);
    EXPECT_FAIL(rc, err, "mapping keys must be plain strings");
    rc = load_text(&s, "gpu: {base: H100, gemm_eff: 1.5}\n", &err, NULL);
    EXPECT_FAIL(rc, err, "gpu.gemm_eff: expected a number in (0, 1], got \"1.5\"");
    rc = load_text(&s, "gpu: {base: H100, hbm_TBps: fast}\n", &err, NULL);
    EXPECT_FAIL(rc, err, "gpu.hbm_TBps: expected a number in (0, 1000], got \"fast\"");
    rc = load_text(&s, "gpu: {hbm_gb: 96}\n", &err, NULL);
    EXPECT_FAIL(rc, err, ":1: gpu: missing key base");
    rc = load_text(&s, "gpu: {base: H100, hbm_gb: 96, hbm_gib: 90}\n", &err, NULL);
    EXPECT_FAIL(rc, err, "gpu.hbm_gb: give hbm_gib or hbm_gb, not both");
    rc = load_text(&s, "gpu: {base: H100, hbm: 96}\n", &err, NULL);
    EXPECT_FAIL(rc, err, "gpu.hbm: unknown key (did you mean hbm_gib, hbm_gb or hbm_TBps? allowed: base, name, sms, compute_capability, hbm_gib");
    rc = load_text(&s, "gpu: [H100]\n", &err, NULL);
    EXPECT_FAIL(rc, err, "gpu: expected a GPU name or a mapping with base: NAME");
    rc = load_text(&s, "model: {layers: 4, hidden: 512}\n", &err, NULL);
    EXPECT_FAIL(rc, err, "model: missing key heads");
    rc = load_text(&s, "model: {layers: 4, hidden: 512, heads: 8, kv_heads: 3, vocab: 10}\n", &err, NULL);
    EXPECT_FAIL(rc, err, "model: kv_heads (3) must divide heads (8)");
    rc = load_text(&s, "model: {layers: 4, hidden: 500, heads: 8, vocab: 10}\n", &err, NULL);
    EXPECT_FAIL(rc, err, "model: hidden (500) is not divisible by heads (8): give head_dim");
    rc = load_text(&s, "model: {layers: 4, hidden: 512, heads: 8, vocab: 10, mlp: swiglu}\n", &err, NULL);
    EXPECT_FAIL(rc, err, "model: missing key ffn (required with mlp: swiglu)");
    rc = load_text(&s, "model: {base: llama3-8b, mlp: relu}\n", &err, NULL);
    EXPECT_FAIL(rc, err, "model.mlp: expected one of gelu|swiglu, got \"relu\"");
    rc = load_text(&s, "options: {launch_us: -1}\n", &err, NULL);
    EXPECT_FAIL(rc, err, "options.launch_us: expected a number in [0, 1e+06], got \"-1\"");
    rc = load_text(&s, "model: \"gpt3\\0-175b\"\n", &err, NULL);
    EXPECT_FAIL(rc, err, "model: expected a non-empty string, got a string with a NUL character");
    rc = load_text(&s, "model: \"x\\ny\"\n", &err, NULL);
    EXPECT_FAIL(rc, err, "model: expected a one-line string");
    rc = load_text(&s, "model: \xff\xfe\n", &err, NULL);
    EXPECT_FAIL(rc, err, "invalid YAML");
    orr_spec_init(&s);
    EXPECT_FAIL(orr_spec_load_file(&s, "/nonexistent/spec.yaml", &err), err, "/nonexistent/spec.yaml: cannot open");
}

static void test_bad_flags(void)
{
    orr_spec s;
    orr_err err;
    orr_spec_init(&s);
#define FLAGS_FAIL(...)                                      \
    do {                                                     \
        const char *a_[] = {__VA_ARGS__, NULL};              \
        orr_spec_init(&s);                                   \
        err.msg[0] = 0;                                      \
        rc_ = flags_of(&s, &err, a_);                        \
    } while (0)
    int rc_;
    FLAGS_FAIL("--tp");
    EXPECT_FAIL(rc_, err, "--tp: missing value (a positive integer)");
    FLAGS_FAIL("--tp", "--pp", "2");
    EXPECT_FAIL(rc_, err, "--tp: missing value");
    FLAGS_FAIL("--tp=");
    EXPECT_FAIL(rc_, err, "--tp: missing value");
    FLAGS_FAIL("--tp", "0");
    EXPECT_FAIL(rc_, err, "--tp: expected a positive integer, got \"0\"");
    FLAGS_FAIL("--tp", "abc");
    EXPECT_FAIL(rc_, err, "--tp: expected a positive integer, got \"abc\"");
    FLAGS_FAIL("--tp=8x");
    EXPECT_FAIL(rc_, err, "--tp: expected a positive integer, got \"8x\"");
    FLAGS_FAIL("--pp", "-2");
    EXPECT_FAIL(rc_, err, "--pp: expected a positive integer, got \"-2\"");
    FLAGS_FAIL("--gpus", "99999999999999999999999");
    EXPECT_FAIL(rc_, err, "--gpus: expected a positive integer");
    FLAGS_FAIL("--gbs", "4294967296");
    EXPECT_FAIL(rc_, err, "--gbs: expected a positive integer");
    FLAGS_FAIL("--recompute", "bogus");
    EXPECT_FAIL(rc_, err, "--recompute: expected none, selective or full, got \"bogus\"");
    FLAGS_FAIL("--recompute-modules", "layernorm,,moe_act");
    EXPECT_FAIL(rc_, err, "--recompute-modules: expected comma-separated core_attn, layernorm, moe_act, mlp, moe, "
                          "shared_experts, mla_up_proj, got \"layernorm,,moe_act\"");
    FLAGS_FAIL("--recompute-modules", "moe,moe");
    EXPECT_FAIL(rc_, err, "--recompute-modules: moe is listed twice");
    FLAGS_FAIL("--precision", "int4");
    EXPECT_FAIL(rc_, err, "--precision: expected bf16, fp16, fp8, mxfp8 or nvfp4");
    FLAGS_FAIL("--launch-us", "soon");
    EXPECT_FAIL(rc_, err, "--launch-us: expected a non-negative number of microseconds");
    FLAGS_FAIL("--launch-us", "-1");
    EXPECT_FAIL(rc_, err, "--launch-us");
    FLAGS_FAIL("--tpp", "8");
    EXPECT_FAIL(rc_, err, "unknown flag \"--tpp\" (did you mean --tp, --pp or --vpp? every flag: `orrery predict --help`)");
    FLAGS_FAIL("--sp=1");
    EXPECT_FAIL(rc_, err, "--sp takes no value");
    FLAGS_FAIL("spec.yaml");
    EXPECT_FAIL(rc_, err, "unexpected argument \"spec.yaml\"");
    FLAGS_FAIL("--gpu", "X900");
    EXPECT_FAIL(rc_, err, "--gpu: unknown GPU \"X900\" (known: A100-SXM4-40GB");
    FLAGS_FAIL("--model", "gpt5");
    EXPECT_FAIL(rc_, err, "--model: unknown model \"gpt5\"");
    FLAGS_FAIL("--cluster", "nowhere");
    EXPECT_FAIL(rc_, err, "--cluster: unknown cluster \"nowhere\"");
    FLAGS_FAIL("--model", "/nonexistent/m.yaml");
    EXPECT_FAIL(rc_, err, "/nonexistent/m.yaml: cannot open");
    char longpath[400];
    memset(longpath, 'x', sizeof longpath - 1);
    longpath[sizeof longpath - 1] = 0;
    FLAGS_FAIL("--trace", longpath);
    EXPECT_FAIL(rc_, err, "--trace: path longer than 255 characters");
#undef FLAGS_FAIL
}

/* Resolves flags only into s; the result in rc_ (both declared by the caller). */
#define RESOLVE_FAIL(...)                                    \
    do {                                                     \
        const char *a_[] = {__VA_ARGS__, NULL};              \
        rc_ = resolve_flags(&s, &err, a_);                   \
    } while (0)

/* framework: chosen explicitly (default megatron); another framework's options are errors naming
 * both; the names not modelled are refused, never predicted as another framework. */
static void test_framework(void)
{
    orr_spec s;
    orr_err err;
    for (int f = 0; f < ORR_FW_COUNT; f++) {
        orr_framework back;
        CHECK(orr_framework_parse(orr_framework_name((orr_framework)f), &back) == 0 && back == (orr_framework)f);
    }
    const char *dflt[] = {"--model", "llama3-8b", "--gpu", "H100", "--gpus", "8", NULL};
    EXPECT_OK(resolve_flags(&s, &err, dflt), err);
    CHECK(s.framework == ORR_FW_MEGATRON && !s.framework_set && s.fsdp == 0);
    /* TorchTitan without --fsdp shards over all the data parallelism the replicas leave (-1) */
    const char *titan[] = {"--framework", "TorchTitan", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "32",
                           "--tp", "2", "--dp", "2", NULL};
    EXPECT_OK(resolve_flags(&s, &err, titan), err);
    CHECK(s.framework == ORR_FW_TORCHTITAN && s.fsdp == 8 && s.dp_replicate == 2 && s.dp == 16);
    EXPECT_OK(load_text(&s, "framework: deepspeed\nmodel: llama3-8b\ngpu: H100\ngpus: 8\nparallel: {zero: 3}\n",
                        &err, NULL), err);
    EXPECT_OK(orr_spec_resolve(&s, &err), err);
    CHECK(s.framework == ORR_FW_DEEPSPEED && s.zero == 3);
    int rc = load_text(&s, "framework: titan\nmodel: llama3-8b\n", &err, NULL);
    EXPECT_FAIL(rc, err, ":1: framework: expected one of megatron|megatron-fsdp|torchtitan|deepspeed|nanotron|automodel");
    int rc_;
    RESOLVE_FAIL("--framework", "jax");
    EXPECT_FAIL(rc_, err, "--framework: expected megatron, megatron-fsdp, torchtitan, deepspeed, nanotron or automodel, got \"jax\"");
    RESOLVE_FAIL("--model", "llama3-8b", "--gpu", "H100", "--gpus", "8", "--fsdp", "8");
    EXPECT_FAIL(rc_, err, "--fsdp 8 (parallel.fsdp) with framework megatron (the default): --fsdp is TorchTitan's "
                          "FSDP2 (framework: torchtitan, --framework torchtitan)");
    RESOLVE_FAIL("--framework", "megatron", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "8", "--zero", "1");
    EXPECT_FAIL(rc_, err, "--zero 1 (parallel.zero) with framework megatron: --zero is DeepSpeed's ZeRO (framework: "
                          "deepspeed");
    RESOLVE_FAIL("--framework", "torchtitan", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "8", "--dist-opt");
    EXPECT_FAIL(rc_, err, "--dist-opt (parallel.dist_opt) with framework torchtitan: --dist-opt is Megatron-LM's "
                          "distributed optimizer (framework: megatron");
    RESOLVE_FAIL("--framework", "deepspeed", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "8", "--zero", "3",
                 "--compile");
    EXPECT_FAIL(rc_, err, "--compile (options.compile) with framework deepspeed:", "(framework: torchtitan");
    RESOLVE_FAIL("--model", "llama3-8b", "--gpu", "H100", "--gpus", "8", "--no-compile-loss");
    EXPECT_FAIL(rc_, err, "--no-compile-loss (options.compile_loss) with framework megatron (the default):");
    RESOLVE_FAIL("--model", "llama3-8b", "--gpu", "H100", "--gpus", "8", "--no-reshard-after-forward");
    EXPECT_FAIL(rc_, err, "--no-reshard-after-forward (parallel.reshard_after_forward) with framework megatron");
    RESOLVE_FAIL("--framework", "megatron", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "8", "--precision",
                 "fp8", "--fp8-allgather");
    EXPECT_FAIL(rc_, err, "--fp8-allgather (parallel.fp8_allgather) with framework megatron:");
    RESOLVE_FAIL("--framework", "deepspeed", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "8");
    EXPECT_FAIL(rc_, err, "framework deepspeed: give the ZeRO stage, --zero 1, 2 or 3 (parallel.zero)");
    RESOLVE_FAIL("--framework", "deepspeed", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "8", "--zero", "1",
                 "--pp", "2", "--vpp", "2");
    EXPECT_FAIL(rc_, err, "--vpp 2 (parallel.vpp) with framework deepspeed: DeepSpeed's pipeline engine has no "
                          "interleaved schedule");
    /* Megatron-FSDP: Megatron's options, the distributed optimizer implied, MoE with its parallel folding;
     * without PP and without the combined 1F1B schedule */
    RESOLVE_FAIL("--framework", "megatron-fsdp", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "16", "--tp", "2",
                 "--sp", "--tp-comm-overlap", "--grad-reduce-in-bf16");
    CHECK_MSG(rc_ == 0 && s.dist_opt == 1, "megatron-fsdp: %s", err.msg);
    RESOLVE_FAIL("--framework", "megatron-fsdp", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "8",
                 "--data-parallel-sharding-strategy", "optim_grads");
    EXPECT_FAIL(rc_, err, "--data-parallel-sharding-strategy optim_grads (options.data_parallel_sharding_strategy): "
                          "not modelled");
    RESOLVE_FAIL("--framework", "megatron", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "8",
                 "--data-parallel-sharding-strategy", "optim");
    EXPECT_FAIL(rc_, err, "--data-parallel-sharding-strategy (options.data_parallel_sharding_strategy) with framework "
                          "megatron: Megatron-FSDP's sharding");
    RESOLVE_FAIL("--framework", "megatron-fsdp", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "8",
                 "--data-parallel-sharding-strategy", "zero3");
    EXPECT_FAIL(rc_, err, "--data-parallel-sharding-strategy: expected no_shard, optim, optim_grads or "
                          "optim_grads_params, got \"zero3\"");
    RESOLVE_FAIL("--framework", "megatron-fsdp", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "8", "--pp", "2");
    EXPECT_FAIL(rc_, err, "--pp 2 (parallel.pp) with framework megatron-fsdp: Megatron-FSDP with pipeline "
                          "parallelism is not modelled");
    RESOLVE_FAIL("--framework", "megatron-fsdp", "--model", "mixtral-8x7b", "--gpu", "H100", "--gpus", "16", "--ep", "8");
    CHECK_MSG(rc_ == 0 && s.edp == 2, "megatron-fsdp with experts: %s", err.msg);
    RESOLVE_FAIL("--framework", "megatron-fsdp", "--model", "mixtral-8x7b", "--gpu", "H100", "--gpus", "16", "--ep", "8",
                 "--overlap-moe-expert-parallel-comm");
    EXPECT_FAIL(rc_, err, "--overlap-moe-expert-parallel-comm (options.overlap_moe_expert_parallel_comm) with framework "
                          "megatron-fsdp: not modelled");
    RESOLVE_FAIL("--framework", "megatron-fsdp", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "8", "--fsdp", "8");
    EXPECT_FAIL(rc_, err, "--fsdp 8 (parallel.fsdp) with framework megatron-fsdp: --fsdp is TorchTitan's FSDP2");
    RESOLVE_FAIL("--framework", "nanotron", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "8", "--cp", "2");
    EXPECT_FAIL(rc_, err, "--cp 2 (parallel.cp) with framework nanotron: nanotron's ring attention is not modelled");
    RESOLVE_FAIL("--framework", "nanotron", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "8", "--zero", "3");
    EXPECT_FAIL(rc_, err, "--zero 3 (parallel.zero) with framework nanotron: nanotron's ZeroDistributedOptimizer is "
                          "ZeRO stage 1 only");
}

static void test_bad_resolve(void)
{
    orr_spec s;
    orr_err err;
    int rc_;
    /* Megatron-Core's account_for_embedding/loss_in_pipeline_split: 94 layers + 2 over 32 x 3 virtual
     * stages, one each, the first and the last none */
    RESOLVE_FAIL("--model", "qwen3-235b-a22b", "--gpu", "H100", "--gpus", "256", "--tp", "2", "--sp", "--pp", "32",
                 "--vpp", "3", "--ep", "8", "--etp", "1", "--gbs", "2048", "--account-for-embedding-in-pipeline-split",
                 "--account-for-loss-in-pipeline-split");
    CHECK_MSG(rc_ == 0, "%s", err.msg);
    if (rc_ == 0) {
        uint32_t split[96];
        CHECK(orr_pp_split(&s, split, &err) == 0);
        uint32_t sum = 0, ones = 0;
        for (int v = 0; v < 96; v++) sum += split[v], ones += split[v] == 1;
        CHECK(split[0] == 0 && split[95] == 0 && sum == 94 && ones == 94);
    }
    RESOLVE_FAIL("--model", "llama3-8b", "--gpu", "H100", "--gpus", "8", "--pp", "4",
                 "--account-for-embedding-in-pipeline-split");
    EXPECT_FAIL(rc_, err, "--account-for-embedding-in-pipeline-split (parallel.account_for_embedding_in_pipeline_split): "
                          "the model's 32 layers + 1 (33) must be divisible by --pp 4");
    RESOLVE_FAIL("--model", "llama3-8b", "--gpu", "H100", "--gpus", "8", "--pp", "2", "--vpp", "4", "--gbs", "16",
                 "--account-for-embedding-in-pipeline-split", "--account-for-loss-in-pipeline-split");
    EXPECT_FAIL(rc_, err, "each pipeline rank's 17 layers (the embedding and loss counted) must be divisible by --vpp 4");
    RESOLVE_FAIL("--model", "llama3-8b", "--gpu", "H100", "--gpus", "8", "--pp", "2", "--pp-layers", "15,16",
                 "--account-for-loss-in-pipeline-split");
    EXPECT_FAIL(rc_, err, "not with --pp-layers or --decoder-first/last-pipeline-num-layers");
    RESOLVE_FAIL("--framework", "torchtitan", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "8", "--pp", "2",
                 "--account-for-loss-in-pipeline-split");
    EXPECT_FAIL(rc_, err, "--account-for-loss-in-pipeline-split (parallel.account_for_loss_in_pipeline_split) with",
                "--framework megatron");
    RESOLVE_FAIL("--model", "llama3-8b", "--gpu", "H100", "--gpus", "8", "--expandable-segments",
                 "--no-caching-allocator");
    EXPECT_FAIL(rc_, err, "--expandable-segments (options.expandable_segments) with --no-caching-allocator");
    rc_ = load_text(&s, "model: llama3-8b\noptions: {expandable_segments: true}\n", &err, NULL);
    CHECK(rc_ == 0 && s.expandable_segments == 1);
    /* Megatron-Core's recompute_modules: selective only, Megatron only, its own checks */
    RESOLVE_FAIL("--model", "qwen3-30b-a3b", "--gpu", "H100", "--gpus", "8", "--ep", "8", "--recompute-modules",
                 "layernorm,moe_act");
    EXPECT_FAIL(rc_, err, "--recompute-modules (training.recompute_modules) with --recompute none (training.recompute): "
                          "Megatron-Core applies recompute_modules under recompute_granularity selective only");
    RESOLVE_FAIL("--framework", "torchtitan", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "8", "--recompute",
                 "selective", "--recompute-modules", "mlp");
    EXPECT_FAIL(rc_, err, "--recompute-modules (training.recompute_modules) with", "--framework megatron");
    RESOLVE_FAIL("--model", "llama3-8b", "--gpu", "H100", "--gpus", "8", "--recompute", "selective",
                 "--recompute-modules", "moe_act");
    EXPECT_FAIL(rc_, err, "--recompute-modules (training.recompute_modules) moe_act: model llama3-8b has no experts");
    RESOLVE_FAIL("--model", "qwen3-30b-a3b", "--gpu", "H100", "--gpus", "8", "--ep", "8", "--recompute", "selective",
                 "--recompute-modules", "mla_up_proj");
    EXPECT_FAIL(rc_, err, "mla_up_proj: model qwen3-30b-a3b has no multi-latent attention");
    RESOLVE_FAIL("--model", "qwen3-30b-a3b", "--gpu", "H100", "--gpus", "8", "--ep", "8", "--recompute", "selective",
                 "--recompute-modules", "moe", "--overlap-moe-expert-parallel-comm");
    EXPECT_FAIL(rc_, err, "moe with --overlap-moe-expert-parallel-comm", "Megatron-Core requires moe out of");
    RESOLVE_FAIL("--model", "deepseek-v3", "--gpu", "H100", "--gpus", "64", "--pp", "8", "--ep", "8", "--recompute",
                 "selective", "--recompute-modules", "shared_experts", "--moe-shared-expert-overlap");
    EXPECT_FAIL(rc_, err, "shared_experts with --moe-shared-expert-overlap");
    RESOLVE_FAIL("--model", "llama3-8b", "--gpu", "H100", "--gpus", "8", "--recompute", "selective");
    CHECK(rc_ == 0 && s.recompute_modules == ORR_RCM_CORE_ATTN); /* Megatron-Core's default */
    RESOLVE_FAIL("--model", "gpt3-175b", "--gpu", "A100", "--gpus", "40", "--tp", "5");
    EXPECT_FAIL(rc_, err, "--tp 5 (parallel.tp): the model's heads (96) must be divisible by tp");
    RESOLVE_FAIL("--model", "llama3-8b", "--gpu", "H100", "--gpus", "16", "--tp", "16");
    EXPECT_FAIL(rc_, err, "--tp 16 (parallel.tp): the model's kv_heads (8 query groups) must be divisible by tp");
    /* uneven pipeline splits: TorchTitan's rule by default, Megatron's first/last, or a list */
    RESOLVE_FAIL("--model", "gpt3-175b", "--gpu", "A100", "--gpus", "40", "--tp", "8", "--pp", "5");
    CHECK_MSG(rc_ == 0, "--pp 5 on 96 layers: %s", err.msg);
    RESOLVE_FAIL("--model", "gpt3-175b", "--gpu", "A100", "--gpus", "512", "--tp", "8", "--pp", "64", "--vpp", "2",
                 "--gbs", "64");
    EXPECT_FAIL(rc_, err, "--pp 64 --vpp 2 (parallel.pp, parallel.vpp): pp*vpp = 128 virtual stages, more than the "
                          "model's 96 layers");
    RESOLVE_FAIL("--model", "gpt3-175b", "--gpu", "A100", "--gpus", "32", "--tp", "8", "--pp", "4",
                 "--decoder-first-pipeline-num-layers", "23");
    EXPECT_FAIL(rc_, err, "--decoder-first-pipeline-num-layers (parallel.decoder_first_pipeline_num_layers): the "
                          "remaining layers (73) must be divisible by the remaining pipeline stages (3)");
    RESOLVE_FAIL("--model", "gpt3-175b", "--gpu", "A100", "--gpus", "8", "--tp", "8",
                 "--decoder-last-pipeline-num-layers", "4");
    EXPECT_FAIL(rc_, err, "--decoder-last-pipeline-num-layers (parallel.decoder_last_pipeline_num_layers): an uneven "
                          "first or last pipeline stage needs --pp > 1");
    RESOLVE_FAIL("--model", "gpt3-175b", "--gpu", "A100", "--gpus", "32", "--tp", "8", "--pp", "4", "--vpp", "2",
                 "--gbs", "8", "--decoder-first-pipeline-num-layers", "21", "--num-layers-in-last-pipeline-stage", "21");
    EXPECT_FAIL(rc_, err, "--decoder-first-pipeline-num-layers/--decoder-last-pipeline-num-layers: pipeline stage 0 "
                          "holds 21 layers, which must be divisible by --vpp 2");
    RESOLVE_FAIL("--model", "gpt3-175b", "--gpu", "A100", "--gpus", "16", "--tp", "8", "--pp", "2",
                 "--decoder-first-pipeline-num-layers", "40", "--decoder-last-pipeline-num-layers", "40");
    EXPECT_FAIL(rc_, err, "with --pp 2 the first and last stages must hold all 96 layers, not 80");
    RESOLVE_FAIL("--model", "gpt3-175b", "--gpu", "A100", "--gpus", "16", "--tp", "8", "--pp", "2",
                 "--decoder-first-pipeline-num-layers", "90", "--decoder-last-pipeline-num-layers", "40");
    EXPECT_FAIL(rc_, err, "the first and last stages' layers (90 + 40) exceed the model's layers (96)");
    RESOLVE_FAIL("--model", "gpt3-175b", "--gpu", "A100", "--gpus", "32", "--tp", "8", "--pp", "4", "--pp-layers",
                 "24,24,24");
    EXPECT_FAIL(rc_, err, "--pp-layers (parallel.pp_layers): expected pp*vpp = 4 layer counts (one per virtual "
                          "stage, in model order), got 3");
    RESOLVE_FAIL("--model", "gpt3-175b", "--gpu", "A100", "--gpus", "32", "--tp", "8", "--pp", "4", "--pp-layers",
                 "24,24,24,23");
    EXPECT_FAIL(rc_, err, "--pp-layers (parallel.pp_layers): the counts add up to 95 layers, but the model has 96");
    RESOLVE_FAIL("--model", "gpt3-175b", "--gpu", "A100", "--gpus", "32", "--tp", "8", "--pp", "4", "--pp-layers",
                 "24,24,24,24", "--decoder-first-pipeline-num-layers", "24");
    EXPECT_FAIL(rc_, err, "--pp-layers (parallel.pp_layers): give either the layers of every stage or "
                          "--decoder-first/last-pipeline-num-layers, not both");
    RESOLVE_FAIL("--model", "gpt3-175b", "--gpu", "A100", "--gpus", "32", "--tp", "8", "--pp", "4", "--pp-layers",
                 "24,,24");
    EXPECT_FAIL(rc_, err, "--pp-layers: expected comma-separated positive layer counts, one per virtual pipeline "
                          "stage, got \"24,,24\"");
    RESOLVE_FAIL("--model", "gpt3-175b", "--gpu", "A100", "--gpus", "32", "--tp", "8", "--pp", "4", "--pp-layers",
                 "0,32,32,32");
    EXPECT_FAIL(rc_, err, "--pp-layers: expected comma-separated positive layer counts");
    RESOLVE_FAIL("--model", "gpt3-175b", "--gpu", "A100", "--gpus", "32", "--tp", "8", "--pp", "4", "--vpp", "5",
                 "--gbs", "4");
    CHECK_MSG(rc_ == 0, "--pp 4 --vpp 5 on 96 layers: %s", err.msg);
    RESOLVE_FAIL("--model", "gpt3-175b", "--gpu", "A100", "--gpus", "8", "--tp", "8", "--vpp", "2");
    EXPECT_FAIL(rc_, err, "--vpp 2 (parallel.vpp): virtual stages need --pp > 1");
    RESOLVE_FAIL("--model", "gpt3-175b", "--gpu", "A100", "--gpus", "64", "--tp", "8", "--pp", "4", "--vpp", "2",
                 "--gbs", "6");
    EXPECT_FAIL(rc_, err, "--vpp 2", "micro-batches of a schedule (gbs/(mbs*dp) = 3) must be divisible by pp (4)");
    RESOLVE_FAIL("--model", "gpt3-175b", "--gpu", "A100", "--gpus", "64", "--tp", "8", "--pp", "2", "--dp", "2");
    EXPECT_FAIL(rc_, err, "--gpus 64 (gpus): must equal tp*cp*pp*dp (8*1*2*2 = 32)");
    RESOLVE_FAIL("--model", "gpt3-175b", "--gpu", "A100", "--gpus", "100", "--tp", "8");
    EXPECT_FAIL(rc_, err, "--gpus 100 (gpus): must be divisible by tp*cp*pp (8*1*1 = 8)");
    /* sharding and context parallelism: one line naming the flag */
    RESOLVE_FAIL("--model", "llama3-8b", "--gpu", "H100", "--gpus", "8", "--cp", "3");
    EXPECT_FAIL(rc_, err, "--gpus 8 (gpus): must be divisible by tp*cp*pp (1*3*1 = 3)");
    RESOLVE_FAIL("--model", "llama3-8b", "--gpu", "H100", "--gpus", "8", "--cp", "8", "--seq", "8200");
    EXPECT_FAIL(rc_, err, "--cp 8 (parallel.cp): seq (8200) must be divisible by 2*cp (16)");
    RESOLVE_FAIL("--framework", "torchtitan", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "24", "--fsdp", "16");
    EXPECT_FAIL(rc_, err, "--fsdp 16 (parallel.fsdp): must divide the data-parallel degree gpus/(tp*cp*pp) = 24");
    RESOLVE_FAIL("--framework", "deepspeed", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "16", "--pp", "2",
                 "--zero", "3");
    EXPECT_FAIL(rc_, err, "--zero 3 (parallel.zero): ZeRO-3 with pipeline parallelism (--pp 2) is not supported");
    RESOLVE_FAIL("--framework", "torchtitan", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "16", "--fsdp", "8",
                 "--zero", "2");
    EXPECT_FAIL(rc_, err, "--zero 2 (parallel.zero) with framework torchtitan: --zero is DeepSpeed's ZeRO "
                          "(framework: deepspeed");
    RESOLVE_FAIL("--framework", "torchtitan", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "8", "--fsdp", "8",
                 "--fp8-allgather");
    EXPECT_FAIL(rc_, err, "--fp8-allgather (parallel.fp8_allgather): needs --precision fp8");
    /* --fp8-recipe: fp8 only, each recipe where its framework has it, on a GPU with its rates measured */
    RESOLVE_FAIL("--model", "llama3-8b", "--gpu", "H100", "--gpus", "8", "--fp8-recipe", "blockwise");
    EXPECT_FAIL(rc_, err, "--fp8-recipe blockwise (training.fp8_recipe): needs --precision fp8");
    RESOLVE_FAIL("--model", "llama3-8b", "--gpu", "H100", "--gpus", "8", "--precision", "fp8", "--fp8-recipe", "rowwise");
    EXPECT_FAIL(rc_, err, "--fp8-recipe rowwise (training.fp8_recipe): rowwise scaling is torchao's", "not megatron's");
    RESOLVE_FAIL("--framework", "torchtitan", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "8", "--fsdp", "8",
                 "--precision", "fp8", "--fp8-recipe", "blockwise");
    EXPECT_FAIL(rc_, err, "--fp8-recipe blockwise (training.fp8_recipe): blockwise scaling is Transformer Engine's",
                "not torchtitan's");
    RESOLVE_FAIL("--framework", "torchtitan", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "8", "--fsdp", "8",
                 "--precision", "fp8", "--fp8-recipe", "delayed");
    EXPECT_FAIL(rc_, err, "--fp8-recipe delayed (training.fp8_recipe): delayed scaling is Transformer Engine's");
    RESOLVE_FAIL("--model", "llama3-8b", "--gpu", "B200", "--gpus", "8", "--precision", "fp8", "--fp8-recipe",
                 "blockwise");
    EXPECT_FAIL(rc_, err, "--fp8-recipe blockwise (training.fp8_recipe): no blockwise fp8 GEMM rates measured for GPU "
                          "B200");
    RESOLVE_FAIL("--model", "llama3-8b", "--gpu", "H100", "--gpus", "8", "--precision", "fp8", "--fp8-recipe", "mx");
    EXPECT_FAIL(rc_, err, "--fp8-recipe: expected tensorwise, delayed, rowwise or blockwise");
    {
        orr_spec ok;
        const char *ov[] = {"--model", "llama3-8b", "--gpu", "H100", "--gpus", "8", "--precision", "fp8",
                            "--fp8-recipe", "blockwise", NULL};
        orr_spec_init(&ok);
        CHECK(orr_spec_apply_flags(&ok, 10, (char **)ov, &err) == 0 && orr_spec_resolve(&ok, &err) == 0);
        CHECK(ok.fp8_recipe == ORR_FP8_BLOCKWISE);
        orr_spec_free(&ok);
    }
    /* --attention cudnn: on a GPU with cuDNN's attention rate measured, without dropout, not under nanotron */
    RESOLVE_FAIL("--model", "llama3-8b", "--gpu", "A100", "--gpus", "8", "--attention", "cudnn");
    EXPECT_FAIL(rc_, err, "--attention cudnn (options.attention): no cuDNN fused-attention rate measured for GPU "
                          "A100-SXM4-80GB");
    RESOLVE_FAIL("--model", "gpt3-13b", "--gpu", "H100", "--gpus", "8", "--attention", "cudnn");
    EXPECT_FAIL(rc_, err, "--attention cudnn (options.attention) with dropout 0.1 (model.dropout)");
    RESOLVE_FAIL("--framework", "nanotron", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "8", "--attention",
                 "cudnn");
    EXPECT_FAIL(rc_, err, "--attention cudnn (options.attention) with framework nanotron");
    RESOLVE_FAIL("--model", "llama3-8b", "--gpu", "H100", "--gpus", "8", "--attention", "fa3");
    EXPECT_FAIL(rc_, err, "--attention: expected flash, cudnn or unfused");
    {
        orr_spec ok;
        const char *ov[] = {"--model", "llama3-8b", "--gpu", "H100", "--gpus", "8", "--attention", "cudnn", NULL};
        orr_spec_init(&ok);
        CHECK(orr_spec_apply_flags(&ok, 8, (char **)ov, &err) == 0 && orr_spec_resolve(&ok, &err) == 0);
        CHECK(ok.attention == ORR_ATTN_CUDNN);
        CHECK(strcmp(orr_attention_name(ok.attention), "cudnn") == 0);
        orr_spec_free(&ok);
    }
    RESOLVE_FAIL("--model", "llama3-8b", "--gpu", "H100", "--mem-capacity", "80 parsecs");
    EXPECT_FAIL(rc_, err, "--mem-capacity: expected a memory size like 80GiB, 96GB or 81920MiB");
    RESOLVE_FAIL("--model", "llama3-8b", "--gpu", "H100", "--zero", "4");
    EXPECT_FAIL(rc_, err, "--zero: expected 0, 1, 2 or 3");
    RESOLVE_FAIL("--model", "gpt3-175b", "--gpu", "A100", "--gpus", "64", "--tp", "8", "--mbs", "2", "--gbs", "20");
    EXPECT_FAIL(rc_, err, "--gbs 20 (training.gbs): must be divisible by mbs*dp (2*8 = 16)");
    RESOLVE_FAIL("--model", "gpt3-175b", "--gpu", "A100", "--gpus", "8", "--sp");
    EXPECT_FAIL(rc_, err, "--sp (parallel.sp): sequence parallelism requires --tp > 1");
    RESOLVE_FAIL("--model", "gpt3-175b", "--gpu", "A100", "--gpus", "8", "--tp", "8", "--sp", "--seq", "1001");
    EXPECT_FAIL(rc_, err, "--sp (parallel.sp): seq (1001) must be divisible by tp (8)");
    RESOLVE_FAIL("--model", "gpt3-175b", "--gpu", "A100", "--gpus", "8", "--precision", "fp8");
    EXPECT_FAIL(rc_, err, "--precision fp8 (training.precision): GPU A100-SXM4-80GB has no fp8 tensor cores");
    RESOLVE_FAIL("--model", "gpt3-175b", "--gpu", "A100", "--gpus", "12");
    EXPECT_FAIL(rc_, err, "--gpus 12 (gpus): must be a multiple of --gpus-per-node (8");
    RESOLVE_FAIL("--gpu", "A100", "--gpus", "8");
    EXPECT_FAIL(rc_, err, "model: not given");
    RESOLVE_FAIL("--model", "gpt3-175b", "--gpus", "8");
    EXPECT_FAIL(rc_, err, "gpu: not given");
    RESOLVE_FAIL("--model", "gpt3-175b", "--gpu", "A100");
    EXPECT_FAIL(rc_, err, "--gpus (gpus): not given");
    /* A renamed custom GPU has no default node type. */
    int rc = load_text(&s, "model: gpt3-125m\ngpu: {base: H100, name: my-gpu}\ngpus: 8\n", &err, NULL);
    EXPECT_OK(rc, err);
    EXPECT_FAIL(orr_spec_resolve(&s, &err), err, "cluster: not given, and GPU \"my-gpu\" has no default node type");
    /* A custom model without seq needs training.seq. */
    rc = load_text(&s, "model: {layers: 2, hidden: 64, heads: 2, vocab: 10}\ngpu: H100\ngpus: 1\n", &err, NULL);
    EXPECT_OK(rc, err);
    EXPECT_FAIL(orr_spec_resolve(&s, &err), err,
                "--seq (training.seq): not given, and model custom has no default seq");
}

/* ---- robustness: nothing crashes, whatever the input ---- */

static void test_robustness(void)
{
    orr_ydoc d;
    orr_err err;
    enum { DEEP = 100000 };
    char *buf = malloc(DEEP * 2 + 16);

    /* Deep nesting, flow and block. */
    memset(buf, '[', DEEP);
    CHECK(orr_yaml_parse(&d, "deep.yaml", buf, DEEP, &err) != 0);
    CHECK_MSG(strstr(err.msg, "nesting deeper than 64 levels") != NULL, "%s", err.msg);
    size_t o = 0;
    for (int i = 0; i < 200; i++) {
        for (int j = 0; j < i; j++) buf[o++] = ' ';
        buf[o++] = 'k';
        buf[o++] = ':';
        buf[o++] = '\n';
    }
    CHECK(orr_yaml_parse(&d, "deep.yaml", buf, o, &err) != 0);
    memset(buf, '{', DEEP);
    CHECK(orr_yaml_parse(&d, "deep.yaml", buf, DEEP, &err) != 0);

    /* A wide document: many keys, then a duplicate at the end. */
    orr_buf b = {0};
    for (int i = 0; i < 50000; i++) orr_buf_printf(&b, "k%d: %d\n", i, i);
    EXPECT_OK(orr_yaml_parse(&d, "wide.yaml", b.s, b.n, &err), err);
    CHECK(d.root && d.root->n == 50000);
    orr_yaml_free(&d);
    orr_spec s;
    const char *path = write_temp_n(b.s, b.n);
    orr_spec_init(&s);
    EXPECT_FAIL(orr_spec_load_file(&s, path, &err), err, ":1: k0: unknown key");
    unlink(path);
    orr_buf_printf(&b, "k123: 0\n");
    EXPECT_FAIL(orr_yaml_parse(&d, "wide.yaml", b.s, b.n, &err), err,
                "wide.yaml:50001: k123: duplicate key (first at line 124)");
    orr_buf_free(&b);

    /* Too many values. */
    for (int i = 0; i < 1100000; i++) orr_buf_puts(&b, i ? ",1" : "[1");
    orr_buf_puts(&b, "]");
    EXPECT_FAIL(orr_yaml_parse(&d, "big.yaml", b.s, b.n, &err), err, "document too large");
    orr_buf_free(&b);

    /* Random bytes and mutations of a valid spec: only errors, never a crash or a leak. */
    uint64_t x = 42;
    size_t n = strlen(full_spec);
    int parsed = 0;
    for (int it = 0; it < 3000; it++) {
        memcpy(buf, full_spec, n);
        size_t len = n;
        int edits = 1 + (int)((x = orr_hash64(x)) % 4);
        for (int e = 0; e < edits; e++) {
            x = orr_hash64(x);
            size_t at = (size_t)(x % len);
            switch ((x >> 32) % 4) {
            case 0: buf[at] = (char)(x >> 40); break;                         /* any byte */
            case 1: buf[at] = "{}[]:,-#&*!|>'\"%@`\n \t0"[(x >> 40) % 23]; break; /* YAML syntax */
            case 2: len = at + 1; break;                                       /* truncate */
            case 3: memmove(buf + at + 1, buf + at, len - at); buf[at] = ' '; len++; break;
            }
        }
        if (orr_yaml_parse(&d, "fuzz.yaml", buf, len, &err) == 0) {
            parsed++;
            orr_yaml_free(&d);
        }
        if (it % 10 == 0) { /* the whole spec path too, through a file */
            path = write_temp_n(buf, len);
            orr_spec_init(&s);
            if (orr_spec_load_file(&s, path, &err) == 0) (void)orr_spec_resolve(&s, &err);
            unlink(path);
        }
    }
    CHECK(parsed > 0);
    for (int it = 0; it < 500; it++) {
        size_t len = 1 + (size_t)((x = orr_hash64(x)) % 200);
        for (size_t i = 0; i < len; i++) buf[i] = (char)((x = orr_hash64(x)) >> 56);
        if (orr_yaml_parse(&d, "noise.yaml", buf, len, &err) == 0) orr_yaml_free(&d);
    }
    free(buf);
    CHECK(1);
}

/* The network section and flags: backend, fabric, symmetry left on under --net flow and forced off
 * under --net packet, errors. */
static void test_network(void)
{
    orr_spec s;
    orr_err err;
    EXPECT_OK(load_text(&s, "model: gpt3-1.3b\ngpu: H100\ngpus: 16\n"
                            "network: {backend: flow, topology: clos3, oversub: 4, spines: 2, leaf_hosts: 16, "
                            "pod_leaves: 4, pxn: true}\n",
                        &err, NULL),
              err);
    EXPECT_OK(orr_spec_resolve(&s, &err), err);
    CHECK(s.net == ORR_NET_FLOW && s.topo.kind == ORR_TOPO_CLOS3 && s.topo.oversub == 4 && s.topo.spines == 2);
    CHECK(s.topo.leaf_hosts == 16 && s.topo.pod_leaves == 4 && s.pxn == 1);
    CHECK(s.symmetry == 1); /* kept under the flow backend, which replays every GPU's traffic */
    /* defaults: analytic, the cluster's topology */
    EXPECT_OK(load_text(&s, "model: gpt3-1.3b\ngpu: H100\ngpus: 16\n", &err, NULL), err);
    EXPECT_OK(orr_spec_resolve(&s, &err), err);
    CHECK(s.net == ORR_NET_ANALYTIC && s.topo.kind == ORR_TOPO_RAIL_FAT_TREE && s.topo.oversub == 1 && s.symmetry == 1);
    const char *args[] = {"--net", "flow", "--topology", "fat-tree", "--oversub=2.5", "--pxn", NULL};
    EXPECT_OK(flags_of(&s, &err, args), err);
    EXPECT_OK(orr_spec_resolve(&s, &err), err);
    CHECK(s.net == ORR_NET_FLOW && s.topo.kind == ORR_TOPO_FAT_TREE && s.topo.oversub == 2.5 && s.pxn == 1);
    const char *bad1[] = {"--net", "packets", NULL};
    EXPECT_FAIL(flags_of(&s, &err, bad1), err, "--net: expected analytic, flow or packet, got \"packets\"");
    const char *bad2[] = {"--oversub", "0.5", NULL};
    EXPECT_FAIL(flags_of(&s, &err, bad2), err, "--oversub: expected a ratio from 1 to 1000");
    const char *bad3[] = {"--topology", "torus", NULL};
    EXPECT_FAIL(flags_of(&s, &err, bad3), err, "--topology: expected rail-fat-tree");
    EXPECT_OK(load_text(&s, "model: gpt3-1.3b\ngpu: H100\ngpus: 16\nnetwork: {topology: hpcc}\n", &err, NULL), err);
    EXPECT_FAIL(orr_spec_resolve(&s, &err), err, "needs --topology-file (network.topology_file)");
    EXPECT_FAIL(load_text(&s, "model: gpt3-1.3b\nnetwork: {backend: packets}\n", &err, NULL), err, "network.backend");
    /* the packet backend: spec keys and flags, symmetry kept (src/net/images.c), PXN refused */
    EXPECT_OK(load_text(&s, "model: gpt3-1.3b\ngpu: H100\ngpus: 16\n"
                            "network: {backend: packet, cc: hpcc, packet_payload_bytes: 4096, oversub: 2}\n",
                        &err, NULL),
              err);
    EXPECT_OK(orr_spec_resolve(&s, &err), err);
    CHECK(s.net == ORR_NET_PACKET && s.cc == ORR_CC_HPCC && s.packet_payload_bytes == 4096 && s.symmetry == 1);
    EXPECT_OK(load_text(&s, "model: gpt3-1.3b\ngpu: H100\ngpus: 16\n", &err, NULL), err);
    CHECK(s.cc == ORR_CC_DCQCN && s.packet_payload_bytes == ORR_NET_PACKET_PAYLOAD_DEFAULT);
    const char *pk[] = {"--net", "packet", "--cc", "TIMELY", "--packet-payload", "1024", NULL};
    EXPECT_OK(flags_of(&s, &err, pk), err);
    EXPECT_OK(orr_spec_resolve(&s, &err), err);
    CHECK(s.net == ORR_NET_PACKET && s.cc == ORR_CC_TIMELY && s.packet_payload_bytes == 1024 && s.symmetry == 1);
    const char *pk_pxn[] = {"--net", "packet", "--pxn", NULL};
    EXPECT_OK(flags_of(&s, &err, pk_pxn), err);
    EXPECT_FAIL(orr_spec_resolve(&s, &err), err, "--pxn (network.pxn): not supported by --net packet");
    const char *bad4[] = {"--cc", "reno", NULL};
    EXPECT_FAIL(flags_of(&s, &err, bad4), err, "--cc: expected dcqcn, hpcc, timely or dctcp, got \"reno\"");
    const char *bad5[] = {"--packet-payload", "100", NULL};
    EXPECT_FAIL(flags_of(&s, &err, bad5), err, "--packet-payload: expected a payload size in bytes from 256");
    EXPECT_FAIL(load_text(&s, "model: gpt3-1.3b\nnetwork: {cc: bbr}\n", &err, NULL), err, "network.cc");
    EXPECT_FAIL(load_text(&s, "model: gpt3-1.3b\nnetwork: {packet_payload_bytes: 100000000}\n", &err, NULL), err,
                "network.packet_payload_bytes");
    EXPECT_FAIL(load_text(&s, "model: gpt3-1.3b\nnetwork: {oversub: 0.5}\n", &err, NULL), err, "network.oversub");
    EXPECT_FAIL(load_text(&s, "model: gpt3-1.3b\nnetwork: {spine: 2}\n", &err, NULL), err, "network.spine: unknown key");
}

/* --nic-gbps, --nics-per-node, --nvlink-gbps and --cluster FILE: the same fields as the YAML keys,
 * applied over the GPU and cluster in effect after every flag, whatever their order. */
static void test_hw_flags(void)
{
    orr_spec s;
    orr_err err = {{0}};
    const char *a[] = {"--nic-gbps", "100", "--nvlink-gbps=1000", "--nics-per-node", "2", "--model", "llama3-8b",
                       "--cluster", "dgx-h100", "--gpus", "16", NULL};
    orr_spec_init(&s);
    EXPECT_OK(flags_of(&s, &err, a), err);
    EXPECT_OK(orr_spec_resolve(&s, &err), err);
    CHECK(s.cluster.nic_Bps == 100e9 / 8 && s.cluster.nics_per_node == 2 && s.gpu.nvlink_Bps == 1000e9 / 8);
    CHECK(orr_cluster_gpu_nic_Bps(&s.cluster) == 100e9 / 8 * 2 / 8); /* 2 NICs shared by 8 GPUs */
    orr_cluster one = s.cluster;
    one.nics_per_node = 0;
    CHECK(orr_cluster_gpu_nic_Bps(&one) == 100e9 / 8);

    /* a cluster file: fields over a base, the flag still over the file */
    char path[64];
    snprintf(path, sizeof path, "%s.yaml", write_temp(""));
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs("base: dgx-h100\nname: my-pod\nnic_gbps: 200\nnics_per_node: 4\n", f);
    fclose(f);
    const char *b[] = {"--model", "llama3-8b", "--gpu", "H100", "--gpus", "8", "--cluster", path, "--nvlink-gbps", "2000", NULL};
    orr_spec_init(&s);
    EXPECT_OK(flags_of(&s, &err, b), err);
    EXPECT_OK(orr_spec_resolve(&s, &err), err);
    CHECK(strcmp(s.cluster.name, "my-pod") == 0 && s.cluster.nic_Bps == 200e9 / 8 && s.cluster.nics_per_node == 4);
    CHECK(strcmp(s.gpu.name, "H100-SXM5-80GB") == 0 && s.gpu.nvlink_Bps == 2000e9 / 8);
    unlink(path);

    /* a NIC per node that outnumbers the GPUs; rates out of range */
    const char *c[] = {"--model", "llama3-8b", "--gpu", "H100", "--nics-per-node", "9", NULL};
    orr_spec_init(&s);
    EXPECT_OK(flags_of(&s, &err, c), err);
    EXPECT_FAIL(orr_spec_resolve(&s, &err), err, "--nics-per-node 9 (cluster.nics_per_node): more NICs than GPUs");
    const char *d[] = {"--nic-gbps", "0", NULL};
    orr_spec_init(&s);
    EXPECT_FAIL(flags_of(&s, &err, d), err, "--nic-gbps: expected a rate in Gb/s, above 0 up to 1e7, got \"0\"");
    const char *e[] = {"--cluster", "/nonexistent/c.yaml", NULL};
    orr_spec_init(&s);
    EXPECT_FAIL(flags_of(&s, &err, e), err, "/nonexistent/c.yaml");
}

int main(void)
{
    test_yaml_tree();
    test_network();
    test_catalogs();
    test_params();
    test_spec_file();
    test_defaults_and_derivations();
    test_overrides();
    test_bad_spec_files();
    test_bad_flags();
    test_bad_resolve();
    test_framework();
    test_robustness();
    test_hw_flags();
    return check_done();
}
