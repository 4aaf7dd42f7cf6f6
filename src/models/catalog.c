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

#define MF(k, m) {.key = k, .type = ORR_YF_U32, .offset = offsetof(orr_model, m), .min = 1}

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
};
#define NMODEL_FIELDS (sizeof model_fields / sizeof model_fields[0])

/* ---- Parameter counts ---- */

double orr_model_layer_params(const orr_model *m)
{
    double h = m->hidden, f = m->ffn;
    double q = (double)m->heads * m->head_dim;     /* query (and attention output) width */
    double kv = (double)m->kv_heads * m->head_dim; /* key and value width each (GQA: fewer heads) */
    double attn = h * q + 2 * h * kv + q * h;      /* Q, K, V and output projections */
    double mlp = (m->gated_mlp ? 3 : 2) * h * f;   /* SwiGLU: gate, up, down; GeLU: up, down */
    double norms = m->rmsnorm ? 2 * h : 4 * h;     /* two norms; LayerNorm has a bias too */
    double bias = 0;
    if (m->bias) bias = (q + 2 * kv) + h + (m->gated_mlp ? 2 * f : f) + h;
    return attn + mlp + norms + bias;
}

double orr_model_params(const orr_model *m)
{
    double h = m->hidden;
    double embed = (double)m->vocab * h * (m->tied_embeddings ? 1 : 2);
    double final_norm = m->rmsnorm ? h : 2 * h;
    return m->layers * orr_model_layer_params(m) + embed + final_norm;
}

/* ---- Consistency ---- */

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
    return 0;
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
    return 0;
}

static void load_catalog(void)
{
    static const char *const extra[] = {"aliases", NULL};
    static const char *const optional[] = {"kv_heads", "head_dim", NULL};
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
