/*
 * hf.c - a model from a Hugging Face transformers config.json (docs/spec.md, "Hugging Face
 * config.json").
 *
 * The file's architecture (architectures[0], else model_type) picks a reader; each reader takes the
 * keys of that architecture's configuration class (transformers' configuration_*.py) with the class's
 * defaults for absent keys, and maps them onto orr_model. Every other key of the file is either on
 * the ignore list below (it cannot change time or memory: rope_theta, dropout, token ids, ...) or an
 * error naming it, as an unknown key of a YAML spec is: a key we do not know might change the shape.
 * Keys that would change the result in a way orr_model cannot express are refused with the reason.
 * The file is read whole with a size limit and parsed by jansson; nothing here aborts on input.
 */
#include "orrery/model.h"

#include "spec/yaml.h"

#include <jansson.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

/* ---- Architectures ---- */

typedef enum hf_family {
    HF_LLAMA, HF_MISTRAL, HF_QWEN2, HF_QWEN3, HF_GEMMA2, HF_GEMMA3, HF_GPT2, HF_NEOX, HF_MIXTRAL, HF_QWEN3_MOE
} hf_family;

/* One supported architecture and the defaults of its configuration class for absent keys. */
typedef struct hf_arch {
    const char *arch;       /* architectures[0] */
    const char *model_type; /* model_type, used when architectures is absent */
    hf_family fam;
    uint32_t vocab, hidden, ffn, layers, heads;
    uint32_t kv_heads;      /* 0: = heads (num_key_value_heads=None) */
    uint32_t head_dim;      /* 0: hidden / heads (head_dim=None) */
    int tied;               /* tie_word_embeddings */
    uint32_t window;        /* sliding_window (0: the class has none) */
} hf_arch;

/* Defaults from transformers' LlamaConfig, MistralConfig, Qwen2Config, Qwen3Config, Gemma2Config,
 * Gemma3TextConfig, GPT2Config (ffn 0: n_inner=None, 4 * n_embd), GPTNeoXConfig, MixtralConfig and
 * Qwen3MoeConfig (their MoE keys' defaults in read_moe). */
static const hf_arch archs[] = {
    {"LlamaForCausalLM", "llama", HF_LLAMA, 32000, 4096, 11008, 32, 32, 0, 0, 0, 0},
    {"MistralForCausalLM", "mistral", HF_MISTRAL, 32000, 4096, 14336, 32, 32, 8, 0, 0, 4096},
    {"Qwen2ForCausalLM", "qwen2", HF_QWEN2, 151936, 4096, 22016, 32, 32, 32, 0, 0, 4096},
    {"Qwen3ForCausalLM", "qwen3", HF_QWEN3, 151936, 4096, 22016, 32, 32, 32, 128, 0, 4096},
    {"Gemma2ForCausalLM", "gemma2", HF_GEMMA2, 256000, 2304, 9216, 26, 8, 4, 256, 1, 4096},
    {"Gemma3ForCausalLM", "gemma3_text", HF_GEMMA3, 262208, 2304, 9216, 26, 8, 4, 256, 1, 4096},
    {"GPT2LMHeadModel", "gpt2", HF_GPT2, 50257, 768, 0, 12, 12, 0, 0, 1, 0},
    {"GPTNeoXForCausalLM", "gpt_neox", HF_NEOX, 50432, 6144, 24576, 44, 64, 0, 0, 0, 0},
    {"MixtralForCausalLM", "mixtral", HF_MIXTRAL, 32000, 4096, 14336, 32, 32, 8, 0, 0, 0},
    {"Qwen3MoeForCausalLM", "qwen3_moe", HF_QWEN3_MOE, 151936, 2048, 6144, 24, 32, 4, 0, 0, 4096},
};
#define NARCHS (sizeof archs / sizeof archs[0])

/* Mixture-of-Experts architectures and model types without a reader (Mixtral and Qwen3-MoE have one):
 * refused by name; their models are in the catalog where Orrery has them (deepseek-v3, gpt-oss-*,
 * llama4-scout, ...). */
static const char *const moe_names[] = {
    "Qwen2MoeForCausalLM", "DeepseekV2ForCausalLM",
    "DeepseekV3ForCausalLM", "GptOssForCausalLM", "Llama4ForConditionalGeneration", "Llama4ForCausalLM",
    "PhimoeForCausalLM", "OlmoeForCausalLM", "DbrxForCausalLM", "GraniteMoeForCausalLM", "JambaForCausalLM",
    "qwen2_moe", "deepseek_v2", "deepseek_v3", "gpt_oss", "llama4", "llama4_text",
    "phimoe", "olmoe", "dbrx", "granitemoe", "jamba", NULL,
};

/* Keys that cannot change time or memory, in any supported architecture: numerics (eps, rope,
 * initialisation), dropout other than the hidden dropout (get_dropout), token ids, generation and tokenizer settings, the
 * longest context (not the training sequence: docs/spec.md), metadata. Keys starting with '_' are
 * metadata too (_name_or_path is read for the name). */
static const char *const ignored[] = {
    "architectures", "model_type", "torch_dtype", "dtype", "transformers_version", "use_cache",
    "bos_token_id", "eos_token_id", "pad_token_id", "sep_token_id", "decoder_start_token_id",
    "initializer_range", "initializer_factor", "rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon",
    "rope_theta", "rope_scaling", "rope_parameters", "rope_local_base_freq", "rotary_emb_base", "rotary_pct",
    "partial_rotary_factor", "max_position_embeddings", "n_positions", "n_ctx", "pretraining_tp",
    "attention_dropout", "hidden_dropout", "classifier_dropout", "hidden_dropout_prob", "attention_probs_dropout_prob",
    "attn_pdrop", "embd_pdrop", "resid_pdrop",
    "summary_type", "summary_use_proj", "summary_activation", "summary_proj_to_labels", "summary_first_dropout",
    "task_specific_params", "id2label", "label2id", "num_labels", "problem_type", "finetuning_task",
    "tokenizer_class", "prefix", "output_attentions", "output_hidden_states", "return_dict", "use_return_dict",
    "torchscript", "is_decoder", "tie_encoder_decoder", "chunk_size_feed_forward", "pruned_heads",
    "cache_implementation", "query_pre_attn_scalar", "attn_logit_softcapping", "final_logit_softcapping",
    "sliding_window_size", "scale_attn_weights", "scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn",
    "use_parallel_residual", "gradient_checkpointing", "auto_map", "max_length", "min_length", "do_sample",
    "early_stopping", "num_beams", "num_beam_groups", "temperature", "top_k", "top_p", "typical_p",
    "repetition_penalty", "length_penalty", "no_repeat_ngram_size", "encoder_no_repeat_ngram_size",
    "bad_words_ids", "num_return_sequences", "diversity_penalty", "forced_bos_token_id",
    "forced_eos_token_id", "remove_invalid_values", "exponential_decay_length_penalty",
    "suppress_tokens", "begin_suppress_tokens", "output_scores", "return_dict_in_generate",
    /* MoE router numerics and outputs (Mixtral, Qwen3-MoE): the aux-loss weight, jitter, whether the
     * top-k scores are renormalised, whether router logits are returned */
    "router_aux_loss_coef", "router_jitter_noise", "norm_topk_prob", "output_router_logits", NULL,
};

/* Keys refused unless absent, null, false or 0: what they would change orr_model cannot express. */
static const struct { const char *key, *why; } refused[] = {
    {"quantization_config", "a quantized checkpoint; Orrery predicts training with full-size weights in "
                            "--precision, not quantized (QLoRA-style) training"},
    {"is_encoder_decoder", "encoder-decoder models are not modelled"},
    {"add_cross_attention", "cross-attention layers are not modelled"},
    {"num_local_experts", "a Mixture-of-Experts key this architecture's reader does not take (MoE readers: Mixtral, Qwen3-MoE)"},
    {"num_experts", "a Mixture-of-Experts key this architecture's reader does not take (MoE readers: Mixtral, Qwen3-MoE)"},
    {"n_routed_experts", "a Mixture-of-Experts key this architecture's reader does not take (MoE readers: Mixtral, Qwen3-MoE)"},
    {"num_experts_per_tok", "a Mixture-of-Experts key this architecture's reader does not take (MoE readers: Mixtral, Qwen3-MoE)"},
    {"text_config", "a multimodal model; give its text model's config on its own"},
    {"vision_config", "a multimodal model; the vision tower is not modelled"},
};
#define NREFUSED (sizeof refused / sizeof refused[0])

/* ---- Reading keys ---- */

/* The file being read: its name for messages and the keys a reader has taken, so that what is left
 * over can be checked against the ignore list. */
typedef struct hf_ctx {
    const char *file;
    json_t *root;
    const char *taken[32];
    size_t ntaken;
    orr_err *err;
} hf_ctx;

/* Control characters of text from the file become '?', so a message stays one line. */
static void sanitize(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f) *s = '?';
}

/* "got ..." text for a JSON value. */
static void describe(const json_t *v, char *buf, size_t cap)
{
    if (json_is_integer(v)) snprintf(buf, cap, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v)) snprintf(buf, cap, "%g", json_real_value(v));
    else if (json_is_string(v)) snprintf(buf, cap, "\"%.40s\"", json_string_value(v));
    else if (json_is_true(v)) snprintf(buf, cap, "true");
    else if (json_is_false(v)) snprintf(buf, cap, "false");
    else if (json_is_null(v)) snprintf(buf, cap, "null");
    else if (json_is_array(v)) snprintf(buf, cap, "an array");
    else snprintf(buf, cap, "an object");
    sanitize(buf);
}

static int bad_key(hf_ctx *c, const char *key, const json_t *v, const char *expected)
{
    char got[64];
    describe(v, got, sizeof got);
    return orr_fail(c->err, "%s: %s: expected %s, got %s", c->file, key, expected, got);
}

/* The value of key, recorded as taken; NULL if absent. */
static json_t *take(hf_ctx *c, const char *key)
{
    if (c->ntaken < sizeof c->taken / sizeof c->taken[0]) c->taken[c->ntaken++] = key;
    return json_object_get(c->root, key);
}

/* An integer key in [min, UINT32_MAX]: def when absent; 0 when null and nullable (Python's None,
 * which the config classes derive from other keys). */
static int get_u32(hf_ctx *c, const char *key, uint32_t min, uint32_t def, int nullable, uint32_t *out)
{
    json_t *v = take(c, key);
    *out = def;
    if (!v) return 0;
    if (nullable && json_is_null(v)) return *out = 0, 0;
    if (!json_is_integer(v) || json_integer_value(v) < (json_int_t)min || json_integer_value(v) > UINT32_MAX)
        return bad_key(c, key, v, min ? "a positive integer below 2^32" : "a non-negative integer below 2^32");
    *out = (uint32_t)json_integer_value(v);
    return 0;
}

static int get_bool(hf_ctx *c, const char *key, int def, int *out)
{
    json_t *v = take(c, key);
    *out = def;
    if (!v) return 0;
    if (!json_is_boolean(v)) return bad_key(c, key, v, "true or false");
    *out = json_is_true(v);
    return 0;
}

/* The hidden (residual) dropout probability: the first of keys present, a number in [0, 1); 0 when
 * none is (Llama, Mistral, Qwen and Gemma configs have no such key: their recipes train without). */
static int get_dropout(hf_ctx *c, orr_model *m)
{
    static const char *const keys[] = {"hidden_dropout", "resid_pdrop", "hidden_dropout_prob"};
    m->dropout = 0;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        json_t *v = json_object_get(c->root, keys[i]);
        if (!v) continue;
        if (!json_is_number(v) || !(json_number_value(v) >= 0) || !(json_number_value(v) < 1))
            return bad_key(c, keys[i], v, "a dropout probability in [0, 1)");
        m->dropout = json_number_value(v);
        return 0;
    }
    return 0;
}

/* A string key whose value does not change the shape (an activation name): checked, not used. */
static int check_str(hf_ctx *c, const char *key)
{
    json_t *v = take(c, key);
    if (v && !json_is_string(v)) return bad_key(c, key, v, "a string");
    return 0;
}

/* ---- Sliding-window attention ---- */

/* layer_types (newer configs): a list of "full_attention" / "sliding_attention", one per layer.
 * *slides = 1 if any layer slides; unchanged when the key is absent. */
static int read_layer_types(hf_ctx *c, uint32_t layers, int *slides)
{
    json_t *v = take(c, "layer_types");
    if (!v || json_is_null(v)) return 0;
    if (!json_is_array(v) || json_array_size(v) != layers)
        return bad_key(c, "layer_types", v, "a list with one entry per layer (num_hidden_layers)");
    *slides = 0;
    for (size_t i = 0; i < json_array_size(v); i++) {
        const char *t = json_string_value(json_array_get(v, i));
        if (!t || (strcmp(t, "full_attention") && strcmp(t, "sliding_attention")))
            return bad_key(c, "layer_types", json_array_get(v, i), "\"full_attention\" or \"sliding_attention\"");
        if (strcmp(t, "sliding_attention") == 0) *slides = 1;
    }
    return 0;
}

/* The span of sliding-window attention if any layer uses it (0: none). Orrery computes full causal
 * attention; resolve refuses a sequence longer than the span, where the two differ (model.h). */
static int read_window(hf_ctx *c, const hf_arch *a, uint32_t layers, uint32_t *window)
{
    uint32_t span, max_window_layers;
    int slides = 1, use_sw;
    if (get_u32(c, "sliding_window", 1, a->window, 1, &span)) return -1;
    if (a->fam == HF_QWEN2 || a->fam == HF_QWEN3 || a->fam == HF_QWEN3_MOE) {
        /* Qwen2/3 slide only with use_sliding_window, on the layers from max_window_layers on */
        if (get_bool(c, "use_sliding_window", 0, &use_sw) ||
            get_u32(c, "max_window_layers", 0, 28, 0, &max_window_layers))
            return -1;
        slides = use_sw && max_window_layers < layers;
    }
    if (a->fam == HF_GEMMA3) {
        uint32_t pattern; /* older Gemma 3 configs: every pattern-th layer is global */
        if (get_u32(c, "sliding_window_pattern", 1, 6, 1, &pattern)) return -1;
    }
    if (read_layer_types(c, layers, &slides)) return -1;
    *window = slides ? span : 0;
    return 0;
}

/* ---- Readers ---- */

/* Common checks once the shape is read, naming the config's keys. */
static int check_shape(hf_ctx *c, orr_model *m, const char *hidden_key, const char *heads_key)
{
    if (m->kv_heads == 0) m->kv_heads = m->heads;
    if (m->head_dim == 0) {
        if (m->hidden % m->heads)
            return orr_fail(c->err, "%s: %s (%u) is not divisible by %s (%u), and head_dim is not given", c->file,
                            hidden_key, m->hidden, heads_key, m->heads);
        m->head_dim = m->hidden / m->heads;
    }
    if (m->kv_heads > m->heads || m->heads % m->kv_heads)
        return orr_fail(c->err, "%s: num_key_value_heads (%u) must divide %s (%u)", c->file, m->kv_heads, heads_key,
                        m->heads);
    orr_err e;
    if (orr_model_check(m, NULL, &e)) return orr_fail(c->err, "%s: %s", c->file, e.msg);
    return 0;
}

/* Llama and its descendants (Mistral, Qwen2/3, Gemma 2/3): RMSNorm, gated MLP (SwiGLU, or GeGLU for
 * Gemma: the same three matrices), rotary positions. */
static int read_llama_like(hf_ctx *c, const hf_arch *a, orr_model *m)
{
    int attn_bias = 0, mlp_bias = 0;
    if (get_u32(c, "hidden_size", 1, a->hidden, 0, &m->hidden) ||
        get_u32(c, "num_hidden_layers", 1, a->layers, 0, &m->layers) ||
        get_u32(c, "num_attention_heads", 1, a->heads, 0, &m->heads) ||
        get_u32(c, "num_key_value_heads", 1, a->kv_heads, 1, &m->kv_heads) ||
        get_u32(c, "head_dim", 1, a->head_dim, 1, &m->head_dim) ||
        get_u32(c, "intermediate_size", 1, a->ffn, 0, &m->ffn) ||
        get_u32(c, "vocab_size", 1, a->vocab, 0, &m->vocab) ||
        get_bool(c, "tie_word_embeddings", a->tied, &m->tied_embeddings) ||
        check_str(c, "hidden_act") || check_str(c, "hidden_activation"))
        return -1;
    if (a->fam != HF_QWEN2 && get_bool(c, "attention_bias", 0, &attn_bias)) return -1;
    if (a->fam == HF_LLAMA && get_bool(c, "mlp_bias", 0, &mlp_bias)) return -1;
    if (a->fam != HF_LLAMA && read_window(c, a, m->layers, &m->attn_window)) return -1;
    m->gated_mlp = 1;
    m->rmsnorm = 1;
    m->qk_norm = a->fam == HF_QWEN3 || a->fam == HF_QWEN3_MOE || a->fam == HF_GEMMA3; /* q_norm, k_norm */
    /* orr_model has one switch for every linear layer's bias: on if the config gives any. Qwen2's
     * bias on Q, K and V only is left out (q + 2 kv values a layer: 0.002% of Qwen2-7B). */
    m->bias = attn_bias || mlp_bias;
    return check_shape(c, m, "hidden_size", "num_attention_heads");
}

/* The MoE keys of Mixtral (num_local_experts 8, num_experts_per_tok 2, every layer MoE with experts of
 * intermediate_size) and Qwen3-MoE (num_experts 128, num_experts_per_tok 8, experts of
 * moe_intermediate_size 768, an MoE layer every decoder_sparse_step-th layer, the dense ones listed in
 * mlp_only_layers); Orrery takes a step of 1 and dense layers that are the first ones. */
static int read_moe(hf_ctx *c, const hf_arch *a, orr_model *m)
{
    if (a->fam == HF_MIXTRAL) {
        m->expert_ffn = m->ffn;
        return get_u32(c, "num_local_experts", 1, 8, 0, &m->experts) ||
               get_u32(c, "num_experts_per_tok", 1, 2, 0, &m->top_k);
    }
    uint32_t step;
    if (get_u32(c, "num_experts", 1, 128, 0, &m->experts) || get_u32(c, "num_experts_per_tok", 1, 8, 0, &m->top_k) ||
        get_u32(c, "moe_intermediate_size", 1, 768, 0, &m->expert_ffn) ||
        get_u32(c, "decoder_sparse_step", 1, 1, 0, &step))
        return -1;
    if (step != 1)
        return orr_fail(c->err, "%s: decoder_sparse_step: %u is not modelled (an MoE layer every step-th from layer "
                                "step-1); only 1, every layer", c->file, step);
    json_t *dense = take(c, "mlp_only_layers");
    if (dense && !json_is_null(dense)) {
        if (!json_is_array(dense)) return bad_key(c, "mlp_only_layers", dense, "a list of layer indices");
        for (size_t i = 0; i < json_array_size(dense); i++)
            if (!json_is_integer(json_array_get(dense, i)) || json_integer_value(json_array_get(dense, i)) != (json_int_t)i)
                return orr_fail(c->err, "%s: mlp_only_layers: only the first layers (0, 1, ...) can be dense in "
                                        "Orrery (dense_layers)", c->file);
        m->dense_layers = (uint32_t)json_array_size(dense);
    }
    return 0;
}

/* GPT-2: LayerNorm, two-matrix GeLU MLP of n_inner (None: 4 * n_embd), biases, tied head, learned
 * positions (which the generator gives every LayerNorm model). */
static int read_gpt2(hf_ctx *c, const hf_arch *a, orr_model *m)
{
    if (get_u32(c, "n_embd", 1, a->hidden, 0, &m->hidden) || get_u32(c, "n_layer", 1, a->layers, 0, &m->layers) ||
        get_u32(c, "n_head", 1, a->heads, 0, &m->heads) || get_u32(c, "n_inner", 1, 0, 1, &m->ffn) ||
        get_u32(c, "vocab_size", 1, a->vocab, 0, &m->vocab) ||
        get_bool(c, "tie_word_embeddings", a->tied, &m->tied_embeddings) || check_str(c, "activation_function"))
        return -1;
    if (m->ffn == 0) {
        if (m->hidden > UINT32_MAX / 4) return orr_fail(c->err, "%s: n_embd (%u) is too large", c->file, m->hidden);
        m->ffn = 4 * m->hidden;
    }
    m->bias = 1;
    return check_shape(c, m, "n_embd", "n_head");
}

/* GPT-NeoX (Pythia): LayerNorm, two-matrix GeLU MLP with biases, attention biases unless
 * attention_bias is false (the MLP's stay, so bias stays on), untied head by default. */
static int read_neox(hf_ctx *c, const hf_arch *a, orr_model *m)
{
    int attn_bias;
    if (get_u32(c, "hidden_size", 1, a->hidden, 0, &m->hidden) ||
        get_u32(c, "num_hidden_layers", 1, a->layers, 0, &m->layers) ||
        get_u32(c, "num_attention_heads", 1, a->heads, 0, &m->heads) ||
        get_u32(c, "intermediate_size", 1, a->ffn, 0, &m->ffn) ||
        get_u32(c, "vocab_size", 1, a->vocab, 0, &m->vocab) ||
        get_bool(c, "tie_word_embeddings", a->tied, &m->tied_embeddings) ||
        get_bool(c, "attention_bias", 1, &attn_bias) || check_str(c, "hidden_act"))
        return -1;
    m->bias = 1;
    return check_shape(c, m, "hidden_size", "num_attention_heads");
}

/* ---- The whole file ---- */

static int in_list(const char *s, const char *const *list)
{
    for (size_t i = 0; list[i]; i++)
        if (strcmp(s, list[i]) == 0) return 1;
    return 0;
}

/* One key the reader did not take: it must be ignorable, or a refused key that is off. */
static int check_key(hf_ctx *c, const char *key, const json_t *v)
{
    for (size_t i = 0; i < c->ntaken; i++)
        if (strcmp(c->taken[i], key) == 0) return 0;
    if (key[0] == '_' || in_list(key, ignored)) return 0;
    for (size_t i = 0; i < NREFUSED; i++) {
        if (strcmp(key, refused[i].key)) continue;
        if (json_is_null(v) || json_is_false(v) || (json_is_integer(v) && json_integer_value(v) == 0)) return 0;
        return orr_fail(c->err, "%s: %s: %s", c->file, key, refused[i].why);
    }
    char q[64];
    snprintf(q, sizeof q, "%.60s", key);
    sanitize(q);
    return orr_fail(c->err, "%s: unknown key \"%s\" for this architecture (not known to leave time and memory "
                            "unchanged; docs/spec.md \"Hugging Face config.json\" lists the keys read and ignored)",
                    c->file, q);
}

static int check_rest(hf_ctx *c)
{
    const char *key;
    json_t *v;
    json_object_foreach(c->root, key, v)
        if (check_key(c, key, v)) return -1;
    return 0;
}

static int unknown_arch(hf_ctx *c, const char *what, const char *name)
{
    char q[64];
    snprintf(q, sizeof q, "%.60s", name);
    sanitize(q);
    orr_buf list = {0};
    for (size_t i = 0; i < NARCHS; i++) orr_buf_printf(&list, "%s%s", i ? ", " : "", archs[i].arch);
    int rc = orr_fail(c->err, "%s: %s: unknown architecture \"%s\" (supported: %s)", c->file, what, q, list.s);
    orr_buf_free(&list);
    return rc;
}

/* The architecture from architectures[0], else model_type. */
static int find_arch(hf_ctx *c, const hf_arch **out)
{
    json_t *al = json_object_get(c->root, "architectures"), *mt = json_object_get(c->root, "model_type");
    const char *arch = NULL, *type = NULL;
    if (al && !json_is_null(al)) {
        if (!json_is_array(al) || json_array_size(al) == 0 || !json_is_string(json_array_get(al, 0)))
            return bad_key(c, "architectures", al, "a list of architecture names");
        arch = json_string_value(json_array_get(al, 0));
    }
    if (mt && !json_is_null(mt)) {
        if (!json_is_string(mt)) return bad_key(c, "model_type", mt, "a string");
        type = json_string_value(mt);
    }
    if (!arch && !type)
        return orr_fail(c->err, "%s: neither architectures nor model_type is given: cannot tell the architecture",
                        c->file);
    const char *name = arch ? arch : type;
    if (in_list(name, moe_names) || (type && in_list(type, moe_names)))
        return orr_fail(c->err, "%s: architecture %s is a Mixture-of-Experts model without a config.json reader "
                                "(readers: MixtralForCausalLM, Qwen3MoeForCausalLM; `orrery list models` has the "
                                "catalog's MoE models)", c->file, name); /* a name from the list: printable */
    if (strcmp(name, "Gemma3ForConditionalGeneration") == 0 || strcmp(name, "gemma3") == 0)
        return orr_fail(c->err, "%s: architecture %s is a vision-language model (a vision tower in front of the text "
                                "model), which Orrery does not model; for the text model alone, write its text_config "
                                "as a config.json of its own with \"architectures\": [\"Gemma3ForCausalLM\"]",
                        c->file, name);
    for (size_t i = 0; i < NARCHS; i++)
        if (strcmp(name, arch ? archs[i].arch : archs[i].model_type) == 0) return *out = &archs[i], 0;
    return unknown_arch(c, arch ? "architectures" : "model_type", name);
}

/* The last part of a path, without trailing slashes and without a ".json" ending, in buf. */
static const char *path_stem(const char *path, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s", path);
    size_t n = strlen(buf);
    while (n > 1 && buf[n - 1] == '/') buf[--n] = 0;
    if (n > 5 && strcmp(buf + n - 5, ".json") == 0) buf[n - 5] = 0;
    const char *base = strrchr(buf, '/');
    return base && base[1] ? base + 1 : buf;
}

/* The name shown in reports: _name_or_path (a hub id as given, or the last part of a local path),
 * else the directory holding config.json, else the file's name without .json. */
static void model_name(hf_ctx *c, char *out, size_t cap)
{
    json_t *np = json_object_get(c->root, "_name_or_path");
    const char *s = json_is_string(np) ? json_string_value(np) : "";
    char buf[PATH_MAX];
    if (s[0] == '/' || s[0] == '.' || s[0] == '~') {
        s = path_stem(s, buf, sizeof buf);
    } else if (!s[0]) {
        s = path_stem(c->file, buf, sizeof buf);
        char *slash = strrchr(buf, '/');
        if (strcmp(s, "config") == 0 && slash) { /* DIR/config.json: the directory's name */
            *slash = 0;
            slash = strrchr(buf, '/');
            s = slash ? slash + 1 : buf;
        }
        if (strcmp(s, ".") == 0 || strcmp(s, "..") == 0 || strcmp(s, "config") == 0) s = "";
    }
    if (!s[0]) s = "hf-model";
    size_t n = strlen(s) < cap - 1 ? strlen(s) : cap - 1; /* cut to fit orr_model.name */
    memcpy(out, s, n);
    out[n] = 0;
    sanitize(out);
}

static int from_json(hf_ctx *c, orr_model *m)
{
    const hf_arch *a = NULL;
    if (!json_is_object(c->root)) return bad_key(c, "(top level)", c->root, "a JSON object");
    if (find_arch(c, &a)) return -1;
    orr_model tmp;
    memset(&tmp, 0, sizeof tmp);
    int rc = a->fam == HF_GPT2 ? read_gpt2(c, a, &tmp) : a->fam == HF_NEOX ? read_neox(c, a, &tmp)
                                                                             : read_llama_like(c, a, &tmp);
    if (!rc && (a->fam == HF_MIXTRAL || a->fam == HF_QWEN3_MOE)) {
        orr_err e;
        rc = read_moe(c, a, &tmp);
        if (!rc && orr_model_check(&tmp, NULL, &e)) rc = orr_fail(c->err, "%s: %s", c->file, e.msg);
    }
    if (rc || get_dropout(c, &tmp) || check_rest(c)) return -1;
    model_name(c, tmp.name, sizeof tmp.name);
    tmp.seq = 0; /* max_position_embeddings is the longest context, not the training sequence */
    *m = tmp;
    return 0;
}

/* ---- Files ---- */

/* Reads a regular file of at most ORR_HF_MAX_BYTES bytes (a config.json is a few KB). */
static char *read_limited(const char *path, size_t *len, orr_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) return orr_fail(err, "%s: cannot open: %s", path, strerror(errno)), NULL;
    struct stat st;
    if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
        fclose(f);
        return orr_fail(err, "%s: not a regular file", path), NULL;
    }
    char *buf = orr_xmalloc(ORR_HF_MAX_BYTES + 1);
    size_t n = fread(buf, 1, ORR_HF_MAX_BYTES + 1, f);
    int bad = ferror(f);
    fclose(f);
    if (bad || n > ORR_HF_MAX_BYTES) {
        free(buf);
        if (bad) return orr_fail(err, "%s: read error", path), NULL;
        return orr_fail(err, "%s: larger than %u bytes; a config.json is a few kilobytes", path,
                        (unsigned)ORR_HF_MAX_BYTES), NULL;
    }
    *len = n;
    return buf;
}

int orr_model_is_hf_path(const char *arg)
{
    struct stat st;
    size_t n = strlen(arg);
    if (n > 5 && strcasecmp(arg + n - 5, ".json") == 0) return 1;
    return stat(arg, &st) == 0 && S_ISDIR(st.st_mode);
}

int orr_model_load_hf(orr_model *m, const char *path, orr_err *err)
{
    char file[PATH_MAX];
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        size_t n = strlen(path);
        const char *sep = n && path[n - 1] == '/' ? "" : "/";
        if (snprintf(file, sizeof file, "%s%sconfig.json", path, sep) >= (int)sizeof file)
            return orr_fail(err, "%.60s...: path too long", path);
        if (stat(file, &st) != 0) return orr_fail(err, "%s: no config.json in this directory", path);
    } else if (snprintf(file, sizeof file, "%s", path) >= (int)sizeof file) {
        return orr_fail(err, "%.60s...: path too long", path);
    }
    size_t len;
    char *text = read_limited(file, &len, err);
    if (!text) return -1;
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    free(text);
    if (!root) return orr_fail(err, "%s:%d: invalid JSON: %s", file, je.line, je.text);
    hf_ctx c = {.file = file, .root = root, .err = err};
    int rc = from_json(&c, m);
    json_decref(root);
    return rc;
}
