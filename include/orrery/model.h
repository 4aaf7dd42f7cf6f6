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
} orr_model;

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
/* Parameters of one transformer layer. */
double orr_model_layer_params(const orr_model *m);

#endif
