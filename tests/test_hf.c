/*
 * Tests of the Hugging Face config.json reader (src/spec/hf.c, docs/spec.md "Hugging Face
 * config.json"): the real configs under tests/hf give the catalog's shapes exactly, each supported
 * architecture maps its keys (and transformers' defaults for absent ones) as documented, the spec
 * file and the flags take a config, and hostile input fails with one line naming the file and the
 * key, never a crash (the suite also runs under ASan/UBSan).
 */
#include "check.h"
#include "orrery/spec.h"
#include "spec/yaml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HF_DIR ORRERY_SOURCE_DIR "/tests/hf/"

static char tmpdir[64];

/* Writes text to tmpdir/name; returns the path (static, one per call site use). */
static const char *write_file(const char *name, const char *text, size_t len)
{
    static char path[4][256];
    static int slot;
    char *p = path[slot++ % 4];
    snprintf(p, 256, "%s/%s", tmpdir, name);
    FILE *f = fopen(p, "wb");
    if (!f || fwrite(text, 1, len, f) != len) {
        perror(p);
        exit(2);
    }
    fclose(f);
    return p;
}

static const char *write_json(const char *text) { return write_file("t.json", text, strlen(text)); }

/* Loading must fail, with a message holding every one of the given fragments. */
static void expect_fail(const char *path, const char *want1, const char *want2)
{
    orr_model m;
    orr_err err = {{0}};
    int rc = orr_model_load_hf(&m, path, &err);
    CHECK_MSG(rc == -1, "%s loaded but should fail (%s)", path, want1);
    CHECK_MSG(strstr(err.msg, want1) != NULL, "message \"%s\" lacks \"%s\"", err.msg, want1);
    if (want2) CHECK_MSG(strstr(err.msg, want2) != NULL, "message \"%s\" lacks \"%s\"", err.msg, want2);
    CHECK_MSG(strchr(err.msg, '\n') == NULL, "message is not one line: %s", err.msg);
}

static void expect_json_fail(const char *text, const char *want1, const char *want2)
{
    expect_fail(write_json(text), want1, want2);
}

static int load(const char *path, orr_model *m)
{
    orr_err err;
    memset(m, 0xab, sizeof *m); /* every field must be written */
    if (orr_model_load_hf(m, path, &err) == 0) return 0;
    fprintf(stderr, "%s: unexpected error: %s\n", path, err.msg);
    return -1;
}

/* The shape fields, all of them (name, seq and attn_window differ by design). */
static int same_shape(const orr_model *a, const orr_model *b)
{
    return a->layers == b->layers && a->hidden == b->hidden && a->heads == b->heads && a->kv_heads == b->kv_heads &&
           a->head_dim == b->head_dim && a->ffn == b->ffn && a->vocab == b->vocab && a->gated_mlp == b->gated_mlp &&
           a->tied_embeddings == b->tied_embeddings && a->rmsnorm == b->rmsnorm && a->bias == b->bias &&
           a->experts == b->experts && a->top_k == b->top_k && a->expert_ffn == b->expert_ffn &&
           a->shared_experts == b->shared_experts && a->dense_layers == b->dense_layers;
}

/* The catalog's Llama entries and their published config.json files agree on every shape field. */
static void test_catalog_models(void)
{
    static const char *const names[] = {"llama2-7b", "llama2-13b", "llama2-70b", "llama3-8b", "llama3-70b",
                                        "llama3-405b", "mixtral-8x7b", "qwen3-30b-a3b"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[256];
        orr_model hf, cat;
        orr_err err;
        snprintf(path, sizeof path, HF_DIR "%s/config.json", names[i]);
        CHECK(load(path, &hf) == 0);
        CHECK(orr_catalog_model(names[i], &cat, &err) == 0);
        CHECK_MSG(same_shape(&hf, &cat), "%s: config.json and catalog differ", names[i]);
        CHECK(hf.seq == 0 && hf.attn_window == 0);
        CHECK_EQ_I64(orr_model_params(&hf), orr_model_params(&cat));
    }
    orr_model m;
    CHECK(load(HF_DIR "llama2-7b", &m) == 0); /* a directory holding config.json */
    CHECK(strcmp(m.name, "meta-llama/Llama-2-7b-hf") == 0); /* _name_or_path */
    CHECK(load(HF_DIR "llama3-8b/", &m) == 0);
    CHECK(strcmp(m.name, "llama3-8b") == 0); /* no _name_or_path: the directory's name */
}

typedef struct expect {
    const char *dir;
    uint32_t layers, hidden, heads, kv_heads, head_dim, ffn, vocab;
    int gated, tied, rmsnorm, bias;
    uint32_t window;
} expect;

/* One config of each other architecture, every field checked. */
static void test_mappings(void)
{
    static const expect cases[] = {
        {"gpt2", 12, 768, 12, 12, 64, 3072, 50257, 0, 1, 0, 1, 0},             /* n_inner null: 4 * n_embd */
        {"mistral-7b", 32, 4096, 32, 8, 128, 14336, 32000, 1, 0, 1, 0, 4096},   /* sliding_window 4096 */
        {"qwen2-7b", 28, 3584, 28, 4, 128, 18944, 152064, 1, 0, 1, 0, 0},       /* use_sliding_window false */
        {"qwen3-8b", 36, 4096, 32, 8, 128, 12288, 151936, 1, 0, 1, 0, 0},       /* head_dim given */
        {"gemma2-2b", 26, 2304, 8, 4, 256, 9216, 256000, 1, 1, 1, 0, 4096},     /* head_dim != hidden/heads, tied */
        {"pythia-1.4b", 24, 2048, 16, 16, 128, 8192, 50304, 0, 0, 0, 1, 0},     /* NeoX: biases, untied */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const expect *e = &cases[i];
        char path[256];
        orr_model m;
        snprintf(path, sizeof path, HF_DIR "%s/config.json", e->dir);
        if (load(path, &m)) {
            CHECK_MSG(0, "%s did not load", e->dir);
            continue;
        }
        CHECK_MSG(m.layers == e->layers && m.hidden == e->hidden && m.heads == e->heads && m.kv_heads == e->kv_heads &&
                      m.head_dim == e->head_dim && m.ffn == e->ffn && m.vocab == e->vocab,
                  "%s: shape %u %u %u %u %u %u %u", e->dir, m.layers, m.hidden, m.heads, m.kv_heads, m.head_dim,
                  m.ffn, m.vocab);
        CHECK_MSG(m.gated_mlp == e->gated && m.tied_embeddings == e->tied && m.rmsnorm == e->rmsnorm &&
                      m.bias == e->bias && m.attn_window == e->window && m.seq == 0,
                  "%s: gated %d tied %d rmsnorm %d bias %d window %u seq %u", e->dir, m.gated_mlp,
                  m.tied_embeddings, m.rmsnorm, m.bias, m.attn_window, m.seq);
        CHECK_MSG(strcmp(m.name, e->dir) == 0, "%s: name %s", e->dir, m.name);
    }
    /* GPT-2 equals the GPT-style model file of the same shape (docs/spec.md defaults) */
    orr_model hf, yaml;
    orr_err err;
    static const char gpt2_yaml[] = "name: gpt2\nlayers: 12\nhidden: 768\nheads: 12\nvocab: 50257\n";
    const char *y = write_file("gpt2.yaml", gpt2_yaml, strlen(gpt2_yaml));
    CHECK(load(HF_DIR "gpt2/config.json", &hf) == 0);
    CHECK(orr_model_load_file(&yaml, y, &err) == 0);
    CHECK(same_shape(&hf, &yaml) && strcmp(hf.name, yaml.name) == 0);
}

/* Absent keys take the defaults of transformers' configuration classes. */
static void test_defaults(void)
{
    orr_model m;
    CHECK(load(write_json("{\"architectures\": [\"LlamaForCausalLM\"]}"), &m) == 0);
    CHECK(m.layers == 32 && m.hidden == 4096 && m.heads == 32 && m.kv_heads == 32 && m.head_dim == 128 &&
          m.ffn == 11008 && m.vocab == 32000 && !m.tied_embeddings && !m.bias && m.gated_mlp && m.rmsnorm);
    CHECK(strcmp(m.name, "t") == 0); /* the file's name without .json */
    CHECK(load(write_json("{\"model_type\": \"gemma3_text\", \"_name_or_path\": \"/ckpt/run7/\"}"), &m) == 0);
    CHECK(m.vocab == 262208 && m.head_dim == 256 && m.kv_heads == 4 && m.tied_embeddings && m.attn_window == 4096);
    CHECK(strcmp(m.name, "run7") == 0); /* a local _name_or_path: its last part */
    CHECK(load(write_json("{\"model_type\": \"gpt_neox\"}"), &m) == 0);
    CHECK(m.hidden == 6144 && m.ffn == 24576 && m.layers == 44 && m.vocab == 50432 && m.bias && !m.tied_embeddings);
    CHECK(load(write_json("{\"model_type\": \"mistral\", \"sliding_window\": null}"), &m) == 0);
    CHECK(m.attn_window == 0 && m.kv_heads == 8 && m.ffn == 14336);
    CHECK(load(write_json("{\"model_type\": \"qwen2\", \"use_sliding_window\": true, \"max_window_layers\": 4, "
                          "\"sliding_window\": 2048}"), &m) == 0);
    CHECK(m.attn_window == 2048 && m.bias == 0);
    CHECK(load(write_json("{\"model_type\": \"qwen3\", \"num_hidden_layers\": 2, \"layer_types\": "
                          "[\"full_attention\", \"full_attention\"], \"use_sliding_window\": true, "
                          "\"max_window_layers\": 1}"), &m) == 0);
    CHECK(m.attn_window == 0 && m.head_dim == 128); /* layer_types decides */
    CHECK(load(write_json("{\"model_type\": \"llama\", \"attention_bias\": true, \"num_key_value_heads\": null, "
                          "\"head_dim\": null}"), &m) == 0);
    CHECK(m.bias == 1 && m.kv_heads == 32 && m.head_dim == 128);
    CHECK(load(write_json("{\"model_type\": \"gpt2\", \"n_embd\": 1600, \"n_head\": 25, \"n_layer\": 48, "
                          "\"n_inner\": 5000, \"tie_word_embeddings\": false}"), &m) == 0);
    CHECK(m.ffn == 5000 && m.head_dim == 64 && !m.tied_embeddings);
}

/* Architectures that are refused, each with its reason. */
static void test_refused(void)
{
    expect_json_fail("{\"architectures\": [\"DeepseekV3ForCausalLM\"], \"n_routed_experts\": 256}",
                     "t.json: architecture DeepseekV3ForCausalLM is a Mixture-of-Experts model without a config.json "
                     "reader", NULL);
    expect_json_fail("{\"architectures\": [\"Qwen3MoeForCausalLM\"], \"decoder_sparse_step\": 2}",
                     "t.json: decoder_sparse_step: 2 is not modelled", NULL);
    expect_json_fail("{\"architectures\": [\"Qwen3MoeForCausalLM\"], \"mlp_only_layers\": [3]}",
                     "t.json: mlp_only_layers: only the first layers", NULL);
    expect_json_fail("{\"architectures\": [\"MixtralForCausalLM\"], \"num_experts_per_tok\": 9}",
                     "t.json: top_k (9) must be at most experts (8)", NULL);
    static const char *const moe[] = {"Qwen2MoeForCausalLM", "DeepseekV2ForCausalLM",
                                      "DeepseekV3ForCausalLM", "GptOssForCausalLM", "Llama4ForConditionalGeneration"};
    for (size_t i = 0; i < sizeof moe / sizeof moe[0]; i++) {
        char text[128];
        snprintf(text, sizeof text, "{\"architectures\": [\"%s\"]}", moe[i]);
        expect_json_fail(text, "Mixture-of-Experts", moe[i]);
    }
    expect_json_fail("{\"model_type\": \"deepseek_v3\"}", "deepseek_v3 is a Mixture-of-Experts model", NULL);
    expect_json_fail("{\"model_type\": \"llama\", \"num_local_experts\": 8}", "num_local_experts: a Mixture-of-Experts",
                     NULL);
    expect_json_fail("{\"architectures\": [\"Gemma3ForConditionalGeneration\"], \"text_config\": {}}",
                     "vision-language model", "Gemma3ForCausalLM");
    expect_json_fail("{\"architectures\": [\"BertForMaskedLM\"]}", "unknown architecture \"BertForMaskedLM\"",
                     "supported: LlamaForCausalLM, MistralForCausalLM");
    expect_json_fail("{\"model_type\": \"t5\"}", "model_type: unknown architecture \"t5\"", NULL);
    expect_json_fail("{\"hidden_size\": 4096}", "neither architectures nor model_type", NULL);
    expect_json_fail("{\"model_type\": \"llama\", \"quantization_config\": {\"bits\": 4}}", "quantization_config:",
                     "quantized");
    expect_json_fail("{\"model_type\": \"gpt2\", \"add_cross_attention\": true}", "add_cross_attention:", NULL);
    orr_model m; /* off is fine */
    CHECK(load(write_json("{\"model_type\": \"gpt2\", \"add_cross_attention\": false, \"_commit_hash\": 1}"), &m) == 0);
    /* an unknown key is an error naming it; so is a key of another architecture */
    expect_json_fail("{\"model_type\": \"llama\", \"frobnicate\": 1}", "t.json: unknown key \"frobnicate\"", NULL);
    expect_json_fail("{\"model_type\": \"llama\", \"sliding_window\": 4096}", "unknown key \"sliding_window\"", NULL);
    expect_json_fail("{\"model_type\": \"llama\", \"n_embd\": 4096}", "unknown key \"n_embd\"", NULL);
    expect_json_fail("{\"model_type\": \"llama\", \"k\\u0001ey\": 1}", "unknown key \"k?ey\"", NULL);
}

/* Hostile input: one line naming the file and the key, no crash. */
static void test_hostile(void)
{
    expect_json_fail("[1, 2]", "t.json: (top level): expected a JSON object, got an array", NULL);
    expect_json_fail("\"llama\"", "t.json:", "invalid JSON"); /* jansson wants an object or array at the top */
    expect_json_fail("{\"model_type\": \"llama\", ", "t.json:1: invalid JSON", NULL);
    expect_json_fail("", "invalid JSON", NULL);
    expect_json_fail("{\"model_type\": \"llama\", \"model_type\": \"gpt2\"}", "invalid JSON", "duplicate");
    expect_json_fail("{\"model_type\": \"llama\", \"hidden_size\": -4096}", "t.json: hidden_size: expected a positive "
                     "integer below 2^32, got -4096", NULL);
    expect_json_fail("{\"model_type\": \"llama\", \"hidden_size\": 0}", "hidden_size: expected a positive", NULL);
    expect_json_fail("{\"model_type\": \"llama\", \"hidden_size\": 4294967296}", "hidden_size:", "got 4294967296");
    expect_json_fail("{\"model_type\": \"llama\", \"hidden_size\": 100000000000000000000000}", "invalid JSON", NULL);
    expect_json_fail("{\"model_type\": \"llama\", \"hidden_size\": 4096.0}", "hidden_size:", "got 4096");
    expect_json_fail("{\"model_type\": \"llama\", \"hidden_size\": 1e400}", "invalid JSON", NULL);
    expect_json_fail("{\"model_type\": \"llama\", \"num_hidden_layers\": \"32\"}", "num_hidden_layers:", "got \"32\"");
    expect_json_fail("{\"model_type\": \"llama\", \"num_hidden_layers\": null}", "num_hidden_layers:", "got null");
    expect_json_fail("{\"model_type\": \"llama\", \"tie_word_embeddings\": 1}", "tie_word_embeddings: expected true or "
                     "false, got 1", NULL);
    expect_json_fail("{\"model_type\": \"llama\", \"hidden_act\": [\"silu\"]}", "hidden_act: expected a string", NULL);
    expect_json_fail("{\"architectures\": \"LlamaForCausalLM\"}", "architectures: expected a list", NULL);
    expect_json_fail("{\"architectures\": [7]}", "architectures: expected a list", NULL);
    expect_json_fail("{\"architectures\": [\"\\u001b[31mEvil\"]}", "unknown architecture \"?[31mEvil\"", NULL);
    expect_json_fail("{\"model_type\": \"llama\", \"num_key_value_heads\": 5}",
                     "num_key_value_heads (5) must divide num_attention_heads (32)", NULL);
    expect_json_fail("{\"model_type\": \"llama\", \"hidden_size\": 4000, \"num_attention_heads\": 3}",
                     "hidden_size (4000) is not divisible by num_attention_heads (3)", NULL);
    expect_json_fail("{\"model_type\": \"llama\", \"head_dim\": 4294967295}", "head_dim (4294967295) * heads (32) is "
                     "too large", NULL);
    expect_json_fail("{\"model_type\": \"gpt2\", \"n_embd\": 2000000000, \"n_head\": 1}", "n_embd (2000000000) is "
                     "too large", NULL);
    expect_json_fail("{\"model_type\": \"gemma2\", \"layer_types\": [\"full_attention\"]}", "layer_types: expected a "
                     "list with one entry per layer", NULL);
    expect_json_fail("{\"model_type\": \"gemma2\", \"num_hidden_layers\": 1, \"layer_types\": [\"local\"]}",
                     "layer_types: expected \"full_attention\" or \"sliding_attention\"", NULL);
    /* deep nesting is jansson's to refuse, without recursion trouble */
    static char deep[20000];
    size_t n = 0;
    n += (size_t)snprintf(deep, sizeof deep, "{\"model_type\": \"llama\", \"rope_scaling\": ");
    while (n < 9000) deep[n++] = '[';
    deep[n] = 0;
    expect_json_fail(deep, "invalid JSON", NULL);
    /* a file too large is refused before it is parsed */
    size_t big = ORR_HF_MAX_BYTES + 10;
    char *text = malloc(big);
    memset(text, ' ', big);
    text[0] = '{';
    text[big - 1] = '}';
    expect_fail(write_file("big.json", text, big), "big.json: larger than 4194304 bytes", NULL);
    free(text);
    expect_fail("/dev/null", "/dev/null: not a regular file", NULL);
    expect_fail(ORRERY_SOURCE_DIR "/tests/hf/no-such/config.json", "cannot open", NULL);
    expect_fail(ORRERY_SOURCE_DIR "/tests", "tests: no config.json in this directory", NULL);
}

/* The spec's model: and --model take a config; seq must then be given, and fit a sliding window. */
static void test_spec(void)
{
    char text[512];
    orr_spec s;
    orr_err err;
    snprintf(text, sizeof text, "model: %sllama3-8b/config.json\ngpu: H100\ngpus: 8\ntraining: {seq: 4096}\n", HF_DIR);
    const char *path = write_file("spec.yaml", text, strlen(text));
    orr_spec_init(&s);
    CHECK(orr_spec_load_file(&s, path, &err) == 0 && orr_spec_resolve(&s, &err) == 0);
    CHECK(s.model.layers == 32 && s.seq == 4096 && strcmp(s.model.name, "llama3-8b") == 0);
    orr_spec_free(&s);
    snprintf(text, sizeof text, "model: {base: %sgemma2-2b, layers: 4}\ngpu: H100\ngpus: 8\n", HF_DIR);
    path = write_file("spec.yaml", text, strlen(text));
    orr_spec_init(&s);
    CHECK(orr_spec_load_file(&s, path, &err) == 0);
    CHECK(s.model.layers == 4 && s.model.head_dim == 256 && s.model.attn_window == 4096);
    CHECK(orr_spec_resolve(&s, &err) == -1 && strstr(err.msg, "--seq (training.seq): not given") &&
          strstr(err.msg, "max_position_embeddings"));
    s.seq = 8192;
    CHECK(orr_spec_resolve(&s, &err) == -1 && strstr(err.msg, "sliding attention window") &&
          strstr(err.msg, "--seq 4096 or less"));
    s.seq = 4096;
    CHECK(orr_spec_resolve(&s, &err) == 0);
    orr_spec_free(&s);
    /* a bad config in a spec: the spec's line and field, then the config's file and key */
    const char *bad = write_json("{\"model_type\": \"llama\", \"vocab_size\": -1}");
    snprintf(text, sizeof text, "gpu: H100\nmodel: %s\n", bad);
    path = write_file("spec.yaml", text, strlen(text));
    orr_spec_init(&s);
    CHECK(orr_spec_load_file(&s, path, &err) == -1);
    CHECK_MSG(strstr(err.msg, "spec.yaml:2: model: ") && strstr(err.msg, "t.json: vocab_size:"), "%s", err.msg);
    /* --model DIR */
    char *argv[] = {"--model", HF_DIR "qwen3-8b", "--seq", "2048"};
    orr_spec_init(&s);
    CHECK(orr_spec_apply_flags(&s, 4, argv, &err) == 0 && s.model.layers == 36 && s.seq == 2048);
    char *argv2[] = {"--model", "no/such/config.json"};
    CHECK(orr_spec_apply_flags(&s, 2, argv2, &err) == -1 && strstr(err.msg, "no/such/config.json: cannot open"));
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/orr_test_hf_XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 2;
    }
    test_catalog_models();
    test_mappings();
    test_defaults();
    test_refused();
    test_hostile();
    test_spec();
    static const char *const files[] = {"t.json", "big.json", "gpt2.yaml", "spec.yaml"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char p[256];
        snprintf(p, sizeof p, "%s/%s", tmpdir, files[i]);
        unlink(p);
    }
    rmdir(tmpdir);
    return check_done();
}
