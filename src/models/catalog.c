/*
 * catalog.c - the model catalog (data/models.yaml), the reader of a spec's `model:` value (a catalog
 * name or a Hugging Face config.json (src/spec/hf.c), overrides of either, or a custom architecture),
 * and the closed-form parameter counts of a transformer.
 *
 * The catalog is compiled into the library (cmake/embed.cmake) and parsed once, on first use. The
 * field table below is shared by the catalog and the spec, so a key means the same in both.
 */
#include "orrery/model.h"

#include "spec/yaml.h"

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const mlp_names[] = {"gelu", "swiglu", NULL};       /* index = gated_mlp */
static const char *const norm_names[] = {"layernorm", "rmsnorm", NULL}; /* index = rmsnorm */
static const char *const attn_kind_names[] = {"mha", "gqa", "mla", NULL}; /* index = ORR_ATTN_KIND_* */

#define MF(k, m) {.key = k, .type = ORR_YF_U32, .offset = offsetof(orr_model, m), .min = 1}
#define MZ(k, m) {.key = k, .type = ORR_YF_U32, .offset = offsetof(orr_model, m), .min = 0}

static const orr_yfield model_fields[] = {
    MF("layers", layers),
    MF("hidden", hidden),
    MF("heads", heads),
    MF("kv_heads", kv_heads),
    MF("head_dim", head_dim),
    MF("ffn", ffn),
    MF("vocab", vocab),
    MF("seq", seq),
    {.key = "mlp", .type = ORR_YF_CHOICE, .offset = offsetof(orr_model, gated_mlp), .choices = mlp_names},
    {.key = "tied_embeddings", .type = ORR_YF_BOOL, .offset = offsetof(orr_model, tied_embeddings)},
    {.key = "norm", .type = ORR_YF_CHOICE, .offset = offsetof(orr_model, rmsnorm), .choices = norm_names},
    {.key = "bias", .type = ORR_YF_BOOL, .offset = offsetof(orr_model, bias)},
    {.key = "dropout", .type = ORR_YF_DOUBLE, .offset = offsetof(orr_model, dropout), .scale = 1, .min = 0, .max = 0.99},
    /* attention variants */
    {.key = "attention", .type = ORR_YF_CHOICE, .offset = offsetof(orr_model, attn_kind), .choices = attn_kind_names},
    MZ("q_lora_rank", q_lora_rank), MF("kv_lora_rank", kv_lora_rank), MF("qk_nope_dim", qk_nope_dim),
    MF("qk_rope_dim", qk_rope_dim), MF("v_head_dim", v_head_dim),
    MF("sliding_window", window_tokens), MF("sliding_window_pattern", window_pattern),
    {.key = "attention_sinks", .type = ORR_YF_BOOL, .offset = offsetof(orr_model, attn_sinks)},
    {.key = "qk_norm", .type = ORR_YF_BOOL, .offset = offsetof(orr_model, qk_norm)},
    /* mixture of experts */
    MZ("experts", experts), MF("top_k", top_k), MF("expert_ffn", expert_ffn), MZ("shared_experts", shared_experts),
    MF("shared_expert_ffn", shared_expert_ffn), MZ("dense_layers", dense_layers), MF("moe_layer_freq", moe_layer_freq),
    MZ("mtp_layers", mtp_layers), MZ("router_groups", router_groups), MZ("router_group_topk", router_group_topk),
};
#define NMODEL_FIELDS (sizeof model_fields / sizeof model_fields[0])

/* ---- Parameter counts ---- */

/* An MLP of width f: SwiGLU gate, up, down (3 h f) or GeLU up, down (2 h f), with biases. */
static double mlp_params(const orr_model *m, double f)
{
    double h = m->hidden;
    return (m->gated_mlp ? 3 : 2) * h * f + (m->bias ? (m->gated_mlp ? 2 * f : f) + h : 0);
}

/* Attention: Q, K, V and output projections (GQA: fewer K/V heads), or MLA's down-projections,
 * their RMSNorms and up-projections (DeepSeek-V2 paper section 2.1.2); biases of Q, K, V and the
 * output; one sink logit per head. */
double orr_model_attn_params(const orr_model *m)
{
    double h = m->hidden, a = m->heads;
    if (m->attn_kind == ORR_ATTN_KIND_MLA) {
        double qk = m->qk_nope_dim + m->qk_rope_dim;
        double q = m->q_lora_rank ? h * m->q_lora_rank + m->q_lora_rank + m->q_lora_rank * a * qk : h * a * qk;
        double kv = h * (m->kv_lora_rank + m->qk_rope_dim) + m->kv_lora_rank +
                    m->kv_lora_rank * a * ((double)m->qk_nope_dim + m->v_head_dim);
        return q + kv + a * m->v_head_dim * h;
    }
    double q = a * m->head_dim;                    /* query (and attention output) width */
    double kv = (double)m->kv_heads * m->head_dim; /* key and value width each (GQA: fewer heads) */
    double p = h * q + 2 * h * kv + q * h;
    if (m->bias) p += (q + 2 * kv) + h;
    if (m->attn_sinks) p += a;
    if (m->qk_norm) p += 2.0 * m->head_dim;
    return p;
}

static double norms_params(const orr_model *m) { return m->rmsnorm ? 2.0 * m->hidden : 4.0 * m->hidden; }

const char *orr_model_attn_kind_name(const orr_model *m)
{
    if (m->attn_kind == ORR_ATTN_KIND_MLA) return "mla";
    return m->kv_heads < m->heads ? "gqa" : "mha";
}

double orr_model_layer_params(const orr_model *m)
{
    return orr_model_attn_params(m) + mlp_params(m, m->ffn) + norms_params(m);
}

int orr_model_layer_is_moe(const orr_model *m, uint32_t layer)
{
    uint32_t freq = m->moe_layer_freq ? m->moe_layer_freq : 1;
    return m->experts > 0 && layer >= m->dense_layers && layer % freq == 0;
}

uint32_t orr_model_moe_layers(const orr_model *m)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->layers; i++) n += (uint32_t)orr_model_layer_is_moe(m, i);
    return n;
}

double orr_model_expert_params(const orr_model *m) { return mlp_params(m, m->expert_ffn); }
double orr_model_shared_expert_params(const orr_model *m) { return m->shared_experts * mlp_params(m, m->shared_expert_ffn); }
/* The router's linear layer (gpt-oss's has a bias per expert). */
double orr_model_router_params(const orr_model *m) { return (double)m->experts * (m->hidden + (m->bias ? 1 : 0)); }

double orr_model_layer_params_at(const orr_model *m, uint32_t layer)
{
    if (!orr_model_layer_is_moe(m, layer)) return orr_model_layer_params(m);
    return orr_model_attn_params(m) + norms_params(m) + orr_model_router_params(m) + orr_model_shared_expert_params(m) +
           (double)m->experts * orr_model_expert_params(m);
}

static double embed_params(const orr_model *m)
{
    double h = m->hidden;
    double embed = (double)m->vocab * h * (m->tied_embeddings ? 1 : 2);
    double final_norm = m->rmsnorm ? h : 2 * h;
    return embed + final_norm;
}

double orr_model_params(const orr_model *m)
{
    double p = 0;
    if (m->experts == 0) p = m->layers * orr_model_layer_params(m);
    else
        for (uint32_t i = 0; i < m->layers; i++) p += orr_model_layer_params_at(m, i);
    /* a DeepSeek-V3 MTP module: two norms, a 2h x h projection and one (MoE) layer; it shares the
     * embedding and output head */
    p += m->mtp_layers * (orr_model_layer_params_at(m, m->layers - 1) + 2.0 * m->hidden * m->hidden + 2.0 * m->hidden);
    return p + embed_params(m);
}

double orr_model_active_params(const orr_model *m)
{
    double routed = (double)(m->experts > m->top_k ? m->experts - m->top_k : 0) * orr_model_expert_params(m);
    return orr_model_params(m) - (orr_model_moe_layers(m) + m->mtp_layers) * routed;
}

/* ---- Consistency ---- */

/* The attention-kind and MoE fields: all or none of each set, in range. */
static int check_variants(const orr_model *m, const char *p, const char *dot, orr_err *err)
{
    if (m->attn_kind == ORR_ATTN_KIND_MLA && (!m->kv_lora_rank || !m->qk_nope_dim || !m->qk_rope_dim || !m->v_head_dim))
        return orr_fail(err, "%s%sattention: mla needs kv_lora_rank, qk_nope_dim, qk_rope_dim and v_head_dim", p, dot);
    if (m->attn_kind != ORR_ATTN_KIND_MLA && (m->q_lora_rank || m->kv_lora_rank || m->qk_nope_dim || m->qk_rope_dim || m->v_head_dim))
        return orr_fail(err, "%s%sq_lora_rank/kv_lora_rank/qk_nope_dim/qk_rope_dim/v_head_dim: only with attention: mla", p, dot);
    if (m->attn_kind == ORR_ATTN_KIND_MLA && m->qk_norm)
        return orr_fail(err, "%s%sqk_norm: not with attention: mla (its latent norms are part of mla)", p, dot);
    if (!m->window_tokens != !m->window_pattern)
        return orr_fail(err, "%s%ssliding_window and sliding_window_pattern go together", p, dot);
    if (m->window_pattern == 1)
        return orr_fail(err, "%s%ssliding_window_pattern must be at least 2 (every layer windowed: use a model "
                             "without full-attention layers)", p, dot);
    if (!m->experts) {
        if (m->top_k || m->expert_ffn || m->shared_experts || m->shared_expert_ffn || m->dense_layers || m->mtp_layers ||
            m->router_groups || m->router_group_topk)
            return orr_fail(err, "%s%stop_k/expert_ffn/shared_experts/shared_expert_ffn/dense_layers/mtp_layers/"
                                 "router_groups/router_group_topk: only "
                                 "with experts (the number of routed experts)", p, dot);
        return 0;
    }
    if (!m->top_k || !m->expert_ffn)
        return orr_fail(err, "%s%sexperts (%u): an MoE model needs top_k and expert_ffn", p, dot, m->experts);
    if (m->top_k > m->experts)
        return orr_fail(err, "%s%stop_k (%u) must be at most experts (%u)", p, dot, m->top_k, m->experts);
    if (!m->shared_experts != !m->shared_expert_ffn)
        return orr_fail(err, "%s%sshared_experts and shared_expert_ffn go together", p, dot);
    if (m->dense_layers >= m->layers)
        return orr_fail(err, "%s%sdense_layers (%u) must be fewer than layers (%u)", p, dot, m->dense_layers, m->layers);
    if (orr_model_moe_layers(m) == 0)
        return orr_fail(err, "%s%smoe_layer_freq (%u): no layer would be an MoE layer", p, dot, m->moe_layer_freq);
    if (!m->router_groups != !m->router_group_topk)
        return orr_fail(err, "%s%srouter_groups and router_group_topk go together", p, dot);
    if (m->router_groups && (m->router_groups < 2 || m->experts % m->router_groups))
        return orr_fail(err, "%s%srouter_groups (%u) must be at least 2 and divide experts (%u)", p, dot,
                        m->router_groups, m->experts);
    if (m->router_groups && (m->router_group_topk > m->router_groups ||
                             (uint64_t)m->router_group_topk * (m->experts / m->router_groups) < m->top_k))
        return orr_fail(err, "%s%srouter_group_topk (%u) must be at most router_groups (%u) and its groups must hold "
                             "top_k (%u) experts", p, dot, m->router_group_topk, m->router_groups, m->top_k);
    return 0;
}

int orr_model_check(const orr_model *m, const char *prefix, orr_err *err)
{
    const char *p = prefix ? prefix : "", *dot = prefix ? "." : "";
    struct { const char *key; uint32_t v; } pos[] = {
        {"layers", m->layers}, {"hidden", m->hidden}, {"heads", m->heads}, {"kv_heads", m->kv_heads},
        {"head_dim", m->head_dim}, {"ffn", m->ffn}, {"vocab", m->vocab},
    };
    for (size_t i = 0; i < sizeof pos / sizeof pos[0]; i++)
        if (pos[i].v == 0) return orr_fail(err, "%s%s%s: must be a positive integer", p, dot, pos[i].key);
    if (m->kv_heads > m->heads || m->heads % m->kv_heads)
        return orr_fail(err, "%s%skv_heads (%u) must divide heads (%u)", p, dot, m->kv_heads, m->heads);
    if ((uint64_t)m->heads * m->head_dim > UINT32_MAX)
        return orr_fail(err, "%s%shead_dim (%u) * heads (%u) is too large", p, dot, m->head_dim, m->heads);
    return check_variants(m, p, dot, err);
}

/* ---- The catalog, loaded once ---- */

typedef struct model_entry {
    orr_model model;
    const orr_ynode *aliases;
    const char *alias_text;
} model_entry;

static struct {
    pthread_once_t once;
    orr_ydoc doc;      /* kept for the life of the process: entries point into it */
    model_entry *models;
    size_t n;
    const char **names;
} cat = {.once = PTHREAD_ONCE_INIT};

/* Fills what a mapping may leave out: kv_heads (= heads), head_dim (= hidden / heads) and, for a GeLU
 * MLP, ffn (= 4 * hidden). base_kv_was_mha says the base model (if any) had kv_heads == heads. */
static int derive_fields(orr_model *m, const orr_ynode *map, int has_base, int base_kv_was_mha, orr_err *err)
{
    /* attention: mha | gqa only name what kv_heads says (checked below); mla has its own shapes */
    const orr_ynode *kind = orr_y_get(map, "attention");
    if (kind && m->attn_kind == ORR_ATTN_KIND_MLA && !orr_y_get(map, "kv_heads")) m->kv_heads = m->heads;
    int heads_given = orr_y_get(map, "heads") != NULL, hidden_given = orr_y_get(map, "hidden") != NULL;
    if (!orr_y_get(map, "kv_heads") && (!has_base || (heads_given && base_kv_was_mha))) m->kv_heads = m->heads;
    if (!orr_y_get(map, "head_dim") && (!has_base || heads_given || hidden_given)) {
        if (m->heads == 0 || m->hidden % m->heads)
            return orr_y_fail(map, err, "hidden (%u) is not divisible by heads (%u): give head_dim", m->hidden,
                              m->heads);
        m->head_dim = m->hidden / m->heads;
    }
    if (!has_base && !orr_y_get(map, "ffn")) {
        if (m->gated_mlp) return orr_y_fail(map, err, "missing key ffn (required with mlp: swiglu)");
        if (m->hidden > UINT32_MAX / 4) return orr_y_fail(map, err, "hidden (%u) is too large", m->hidden);
        m->ffn = 4 * m->hidden;
    }
    if (kind && m->attn_kind == ORR_ATTN_KIND_GQA && m->kv_heads >= m->heads)
        return orr_y_fail(kind, err, "attention: gqa needs kv_heads (%u) fewer than heads (%u)", m->kv_heads, m->heads);
    if (kind && m->attn_kind == ORR_ATTN_KIND_MHA && m->kv_heads != m->heads)
        return orr_y_fail(kind, err, "attention: mha needs kv_heads (%u) equal to heads (%u); say gqa", m->kv_heads,
                          m->heads);
    if (m->attn_kind != ORR_ATTN_KIND_MLA) m->attn_kind = m->kv_heads < m->heads ? ORR_ATTN_KIND_GQA : ORR_ATTN_KIND_MHA;
    return 0;
}

static void load_catalog(void)
{
    static const char *const extra[] = {"aliases", NULL};
    static const char *const optional[] = {"kv_heads", "head_dim", "attention", "q_lora_rank", "kv_lora_rank",
        "qk_nope_dim", "qk_rope_dim", "v_head_dim", "sliding_window", "sliding_window_pattern", "attention_sinks",
        "qk_norm", "experts", "top_k", "expert_ffn", "shared_experts", "shared_expert_ffn", "dense_layers",
        "moe_layer_freq", "mtp_layers", "router_groups", "router_group_topk", NULL};
    orr_embedded_doc("models.yaml", &cat.doc);
    size_t n = cat.doc.root->n;
    cat.models = orr_xcalloc(n, sizeof *cat.models);
    cat.names = orr_xcalloc(n, sizeof *cat.names);
    const orr_ynode **aliases = orr_xcalloc(n, sizeof *aliases);
    orr_err e;
    for (const orr_ynode *x = cat.doc.root->first; x; x = x->next) {
        model_entry *me = &cat.models[cat.n];
        orr_model *m = &me->model;
        if (orr_y_check_keys(x, model_fields, NMODEL_FIELDS, extra, &e)) orr_catalog_bug("%s", e.msg);
        orr_catalog_require(x, model_fields, NMODEL_FIELDS, optional);
        if (strlen(x->key) >= sizeof m->name) orr_catalog_bug("data/models.yaml:%d: name too long", x->line);
        strcpy(m->name, x->key);
        if (orr_y_apply_fields(m, model_fields, NMODEL_FIELDS, x, &e) || derive_fields(m, x, 0, 1, &e) ||
            orr_model_check(m, x->key, &e))
            orr_catalog_bug("data/models.yaml:%d: %s", x->line, e.msg);
        me->alias_text = orr_catalog_aliases(&cat.doc, x, &me->aliases);
        orr_catalog_check_names(x, me->aliases, cat.names, aliases, cat.n);
        cat.names[cat.n] = m->name;
        aliases[cat.n] = me->aliases;
        cat.n++;
    }
    free(aliases);
}

static void ensure_loaded(void) { pthread_once(&cat.once, load_catalog); }

int orr_catalog_model(const char *name, orr_model *out, orr_err *err)
{
    ensure_loaded();
    for (size_t i = 0; name && i < cat.n; i++) {
        if (orr_name_matches(name, cat.models[i].model.name, cat.models[i].aliases)) {
            *out = cat.models[i].model;
            return 0;
        }
    }
    return orr_fail_unknown(err, "model", name ? name : "", cat.names, cat.n, "orrery list models");
}

size_t orr_catalog_model_count(void)
{
    ensure_loaded();
    return cat.n;
}

const orr_model *orr_catalog_model_at(size_t i)
{
    ensure_loaded();
    return i < cat.n ? &cat.models[i].model : NULL;
}

const char *orr_catalog_model_aliases(size_t i)
{
    ensure_loaded();
    return i < cat.n ? cat.models[i].alias_text : NULL;
}

/* ---- The spec's `model:` ---- */

/* A catalog name, or a Hugging Face config.json (or its directory), relative to the current
 * directory as topology_file is. */
static int lookup_named(const orr_ynode *n, orr_model *m, orr_err *err)
{
    char name[1024];
    orr_err e;
    if (orr_y_str(n, name, sizeof name, err)) return -1;
    int rc = orr_model_is_hf_path(name) ? orr_model_load_hf(m, name, &e) : orr_catalog_model(name, m, &e);
    if (rc) return orr_y_fail(n, err, "%s", e.msg);
    return 0;
}

int orr_model_from_yaml(orr_model *m, const orr_ynode *n, orr_err *err)
{
    static const char *const extra[] = {"base", "name", NULL};
    static const char *const required[] = {"layers", "hidden", "heads", "vocab", NULL};
    if (n && n->kind == ORR_YSCALAR) return lookup_named(n, m, err);
    if (!n || n->kind != ORR_YMAP) {
        char got[80];
        orr_y_describe(n, got, sizeof got);
        return orr_y_fail(n, err, "expected a model name or a mapping of model fields, got %s", got);
    }
    if (orr_y_check_keys(n, model_fields, NMODEL_FIELDS, extra, err)) return -1;
    const orr_ynode *base = orr_y_get(n, "base");
    orr_model tmp;
    memset(&tmp, 0, sizeof tmp);
    if (base) {
        if (lookup_named(base, &tmp, err)) return -1;
    } else {
        /* A custom architecture: GPT-style unless said otherwise (docs/spec.md). */
        for (size_t i = 0; required[i]; i++)
            if (!orr_y_get(n, required[i]))
                return orr_y_fail(n, err, "missing key %s (a custom model needs layers, hidden, heads and vocab, "
                                          "or base: NAME to start from a catalog model)", required[i]);
        snprintf(tmp.name, sizeof tmp.name, "custom");
        tmp.tied_embeddings = 1;
        tmp.bias = 1;
        tmp.dropout = 0.1; /* Megatron-LM's --hidden-dropout default */
    }
    int base_mha = tmp.kv_heads == tmp.heads;
    if (orr_y_apply_fields(&tmp, model_fields, NMODEL_FIELDS, n, err)) return -1;
    if (derive_fields(&tmp, n, base != NULL, base_mha, err)) return -1;
    const orr_ynode *name = orr_y_get(n, "name");
    if (name && orr_y_str(name, tmp.name, sizeof tmp.name, err)) return -1;
    orr_err e;
    if (orr_model_check(&tmp, NULL, &e)) return orr_y_fail(n, err, "%s", e.msg);
    *m = tmp;
    return 0;
}
