/*
 * model.h - transformer architectures (catalog in data/models.yaml, or a custom one in a spec or a
 * model file) and the closed-form counts used by the generator and its tests.
 */
#ifndef ORRERY_MODEL_H
#define ORRERY_MODEL_H

#include <stdint.h>
#include "orrery/core.h"

typedef struct orr_model {
    char name[48];
    uint32_t layers;
    uint32_t hidden;
    uint32_t heads;
    uint32_t kv_heads;     /* == heads for MHA; fewer for GQA */
    uint32_t head_dim;     /* hidden / heads unless given */
    uint32_t ffn;          /* FFN hidden size */
    uint32_t vocab;
    uint32_t seq;          /* default sequence length */
    int gated_mlp;         /* 1: SwiGLU (three FFN matrices), 0: GeLU MLP (two) */
    int tied_embeddings;   /* 1: LM head shares the input embedding */
    int rmsnorm;           /* 1: RMSNorm, 0: LayerNorm */
    int bias;              /* 1: linear layers have biases (GPT), 0: none (Llama) */
    double dropout;        /* hidden dropout probability of the training recipe (0: none, so no
                            * dropout masks are kept for the backward) */
    /* Tokens a sliding-window attention layer sees (0: no such layers). Only Hugging Face configs
     * set it (Mistral, Gemma 2/3, Qwen with use_sliding_window). The generator computes full causal
     * attention on every layer, which is the same only while seq <= attn_window, so resolve refuses
     * a longer seq rather than overstate those layers' attention time. */
    uint32_t attn_window;
    /* Sliding-window attention on some layers only (gpt-oss): every layer i with
     * i % window_pattern != window_pattern - 1 attends to the last window_tokens keys, the others
     * to all (gpt-oss: window 128, pattern 2, so even layers are windowed). 0: none. */
    uint32_t window_tokens, window_pattern;
    int attn_sinks;        /* learned attention-sink logits per head (gpt-oss): heads params per layer */
    int qk_norm;           /* an RMSNorm on each head's query and key before rotary (Qwen3, Gemma 3):
                            * 2 head_dim params per layer */
    /* Attention kind (docs/models.md): ORR_ATTN_KIND_MHA / GQA (kv_heads decide the shapes) or MLA,
     * DeepSeek's multi-head latent attention with its own dimensions below. */
    int attn_kind;
    uint32_t q_lora_rank;  /* MLA: rank of the query down-projection (0: queries projected directly) */
    uint32_t kv_lora_rank; /* MLA: rank of the joint key/value compression */
    uint32_t qk_nope_dim;  /* MLA: per-head query/key dimension without rotary */
    uint32_t qk_rope_dim;  /* MLA: per-head query/key dimension with rotary (the key part shared by heads) */
    uint32_t v_head_dim;   /* MLA: per-head value dimension */
    /* Mixture of experts (docs/models.md "MoE"; experts 0: a dense model). A layer i is an MoE
     * layer when i >= dense_layers and i % moe_layer_freq == 0 (Megatron-LM's --moe-layer-freq);
     * its MLP is replaced by a router over `experts` routed experts, top_k of which each token
     * visits, each an MLP of width expert_ffn (gated as mlp: says), plus shared_experts always-on
     * experts of width shared_expert_ffn each. Dense layers use ffn. */
    uint32_t experts, top_k, expert_ffn;
    uint32_t shared_experts, shared_expert_ffn;
    /* Group-limited routing (DeepSeek-V3's n_group / topk_group; Megatron-Core's
     * --moe-router-num-groups / --moe-router-group-topk): the experts form router_groups contiguous
     * groups, a token first picks router_group_topk groups, then its top_k experts among theirs.
     * 0: none (top_k of all the experts). */
    uint32_t router_groups, router_group_topk;
    uint32_t dense_layers;   /* the first dense_layers layers are dense (DeepSeek's first_k_dense) */
    uint32_t moe_layer_freq; /* every moe_layer_freq-th layer is MoE (1 or 0: every layer) */
    uint32_t mtp_layers;     /* DeepSeek-V3 multi-token prediction modules (counted in parameters only) */
} orr_model;

enum { ORR_ATTN_KIND_MHA, ORR_ATTN_KIND_GQA, ORR_ATTN_KIND_MLA };

int orr_catalog_model(const char *name, orr_model *out, orr_err *err);
size_t orr_catalog_model_count(void);
const orr_model *orr_catalog_model_at(size_t i);
/* Aliases of entry i joined by ", " ("" if none; NULL if i is out of range), for `orrery list`. */
const char *orr_catalog_model_aliases(size_t i);

/* A Hugging Face transformers config.json (docs/spec.md "Hugging Face config.json"): path is the
 * file or a directory holding config.json. Fills m (seq left 0: the training sequence length is not
 * in the file) or fails naming the file and the key. Reads at most ORR_HF_MAX_BYTES. */
#define ORR_HF_MAX_BYTES (4u << 20)
int orr_model_load_hf(orr_model *m, const char *path, orr_err *err);
/* 1 if a --model argument or `model:` string names a config.json: it ends in .json or is a directory. */
int orr_model_is_hf_path(const char *arg);

/* Parameters of the whole model (embeddings counted once when tied). */
double orr_model_params(const orr_model *m);
/* "mla", else "gqa" (kv_heads < heads) or "mha". */
const char *orr_model_attn_kind_name(const orr_model *m);
/* Parameters of one dense transformer layer (MLA attention when the model has it). */
double orr_model_layer_params(const orr_model *m);
/* Parameters of the attention block of one layer (projections, MLA norms, sinks, biases). */
double orr_model_attn_params(const orr_model *m);
/* 1 if layer i (0-based) is an MoE layer. */
int orr_model_layer_is_moe(const orr_model *m, uint32_t layer);
/* MoE layers of the model. */
uint32_t orr_model_moe_layers(const orr_model *m);
/* Parameters of one routed expert (an MLP of width expert_ffn), of the shared experts together, and
 * of the router (hidden x experts). */
double orr_model_expert_params(const orr_model *m);
double orr_model_shared_expert_params(const orr_model *m);
double orr_model_router_params(const orr_model *m);
/* Parameters of layer i: a dense layer, or attention + router + all experts + shared experts. */
double orr_model_layer_params_at(const orr_model *m, uint32_t layer);
/* Parameters one token uses (the MFU convention for MoE, docs/models.md): every routed expert
 * replaced by top_k of them; embeddings counted as in orr_model_params. */
double orr_model_active_params(const orr_model *m);
/* Round-robin routing (options.moe_routing, src/models/moe.c): the mean number of parts (ranks,
 * nodes; each holding experts/parts contiguous experts) a token's top_k experts lie on. */
double orr_moe_round_robin_parts(uint32_t experts, uint32_t top_k, uint32_t parts);

#endif
