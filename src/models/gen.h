/*
 * gen.h - internal to src/models: the framework-neutral training-workload builder (gen.c) and the
 * recipe table each framework fills (megatron.c, torchtitan.c, deepspeed.c, nanotron.c).
 *
 * The builder lays out the ranks and their groups and writes every simulated rank's op stream:
 * layer forward and backward kernels, attention, tensor/context/pipeline parallel communication,
 * the pipeline schedules, gradient buckets or per-block sharding units, the optimizer step. What
 * differs between frameworks is asked of the recipe: what a layer saves for the backward, the
 * loss's memory, the memory that lives through the iteration, context-parallel attention, and the
 * named behaviours below. A recipe never emits a schedule; the builder never names a framework.
 */
#ifndef ORRERY_MODELS_GEN_H
#define ORRERY_MODELS_GEN_H

#include "orrery/orrery.h"

enum { S_COMPUTE = 0, S_DP = 1, S_TP = 2, S_AG = 3, S_CP = 4, S_EP = 5, S_PP = 6 };
enum { TAG_FWD = 0, TAG_BWD = 1, TAG_CP_FWD = 2, TAG_CP_BWD = 3 };

typedef struct gen gen;

/* Where an op belongs: phase, layer (ORR_NO_LAYER: none), micro-batch, model chunk. */
typedef struct ctx {
    orr_phase phase;
    uint32_t layer, mb, chunk;
} ctx;

/* A framework's recipe. Hooks may not be NULL unless said. */
typedef struct recipe {
    /* Behaviours, each on or off for the framework. */
    int reduces_over_cp;      /* bucketed gradients reduced, and the optimizer sharded, over dp x cp ranks
                               * (the CP ranks hold the same weights); else over the dp ranks */
    int shards_params;        /* parameters sharded per block (units gathered before use, gradients
                               * reduce-scattered per unit); else DP gradient buckets */
    int copies_out_params;    /* sharded: each gathered parameter copied out to its own tensor */
    int unit_grads;           /* sharded: fp32 sharded gradients allocated per unit at its reduce-scatter,
                               * unsharded ones accumulated per unit over micro-batches */
    int defers_grad_sync;     /* sharded, without PP: gradient sync off but in the last micro-batch (the
                               * unsharded gradients accumulated until then); else each micro-batch
                               * reduce-scatters (with PP the pipeline schedule always defers it) */
    int eager_unless_compiled;/* eager PyTorch kernels (one per ATen op) unless options.compile */
    int te_norm;              /* eager code whose norms are Transformer Engine's fused RMSNorm (one kernel
                               * each way; NeMo AutoModel's backend rms_norm: te) */
    int rope_bf16;            /* eager rotary in the activation dtype (chunk, four products, sub, add, cat:
                               * AutoModel's _apply_rotary_emb): no fp32 copies kept, no repeat_kv (its
                               * attention backends take the GQA heads as they are) */
    int expert_bias_eager;    /* MoE experts' biases added eagerly, per local expert, then concatenated
                               * (AutoModel's GroupedExpertsDeepEP._apply_bias) */
    int loss_bf16;            /* the loss's kernels on the bf16 logits, log-softmax and nll, no transpose
                               * (AutoModel's MaskedCrossEntropy with fp32_upcast: false) */
    int per_op_sac;           /* selective recompute re-runs the unsaved ops before each backward
                               * (else it is the attention core, re-run only when unfused) */
    int sp_keeps_gathered;    /* SP without TP overlap saves the all-gathered norm outputs for the weight
                               * gradients (no backward re-gather) */
    int keeps_head_input;     /* the LM head's input is saved per micro-batch */
    int pp_keeps_outputs;     /* the last pipeline stage keeps every micro-batch's model output to the
                               * end of the step, then concatenates them */
    double pads_vocab_to;     /* vocabulary padded to a multiple of this x tp */
    int tp_overlaps_local_shard; /* SP without TP comm overlap: each all-gather feeding a GEMM runs while the
                               * GEMM computes the rows of the local shard, the other rows after it */
    int overlaps_p2p;         /* the interleaved schedule's send/recv asynchronous when options.overlap_p2p_comm
                               * (Megatron's overlap_p2p_comm: each waited for by the step that needs it) */
    int tp_bwd_allreduce_sync; /* without SP: the column-parallel backward all-reduce runs after both GEMMs on
                               * the compute stream (not overlapped with the weight gradient) */
    int moe_scores_in_act;    /* MoE: the routing scores multiply the experts' hidden activation inside a fused
                               * (compiled) activation, so no expert output is kept for the score-weighted combine */
    int moe_counts_tp_ep;     /* MoE alltoall dispatcher: the forward all-gathers the tokens per expert over a
                               * tp_ep group of its own (Megatron), not an all-to-all on the EP group (TorchTitan) */
    int fwd_prefetch_ep;      /* sharded, EP > 1: each block's pre-forward issues the next block's all-gather
                               * (explicit prefetching), so that the dispatcher's host wait does not hold it back */
    int moe_syncs_host;       /* MoE forward: the dispatcher makes the host wait for the routing's token counts
                               * (alltoall: the all-to-all's splits; DeepEP: its receive counts) */
    int64_t moe_sync_host_ps; /* ... and then runs this long in Python before its next launch (0: not measured;
                               * the wait alone is modelled) */
    int clips_always;         /* gradient clipping multiplies every fp32 gradient by the clamped coefficient,
                               * clipping or not (no host sync on the norm); else only the norm is taken */
    int keeps_root_gathered;  /* sharded: the root unit (embedding, final norm, output) stays gathered from its
                               * first all-gather of the step to the end (Megatron-FSDP's non-unit parameters) */
    double prefetch_elems;    /* sharded: the all-gathers run ahead of the compute by as many units as fit this
                               * many parameters (at least one; Megatron-FSDP's budget); 0: one unit ahead (FSDP2) */
    /* Fills what the framework decides of G: S (shard group), dist (reduce-scatter, optimizer on the
     * shard, gather after), overlap_pg, grad_B (bytes per reduced gradient element). */
    void (*setup)(gen *G);
    /* Bytes a layer keeps for its backward under recomputation rc (ORR_RECOMPUTE_NONE: all it uses). */
    double (*layer_saved_bytes)(const gen *G, orr_recompute rc);
    /* Context-parallel attention (cp > 1). */
    void (*cp_attention)(gen *G, const ctx *c, int backward);
    /* The loss's memory around the LM head: forward (after the head GEMM), backward (before the head's
     * backward GEMMs; leaves the logits gradient in G->head_tmp). */
    void (*loss_mem_fwd)(gen *G, const ctx *c);
    void (*loss_mem_bwd)(gen *G, const ctx *c);
    /* Parameters, gradients and optimizer state that live through the iteration. */
    void (*persistent_memory)(gen *G);
    /* The optimizer step's temporaries: alloc 1 before it (first buffer id in *first), 0 after. May be NULL. */
    void (*optimizer_temps)(gen *G, const ctx *cx, int alloc, uint32_t *first);
    /* The layer's own layout kernels (copies, unfused elementwise ops the builder's fused ones leave out),
     * at the start of its forward (backward 0) or backward (1). May be NULL. */
    void (*layer_extra_ops)(gen *G, const ctx *c, int backward);
    /* After each micro-batch's backward through a model chunk (its gradient bookkeeping). May be NULL. */
    void (*after_backward)(gen *G, const ctx *c);
} recipe;

/* The recipe of each modelled framework for a resolved spec (megatron.c, torchtitan.c with AutoModel's,
 * deepspeed.c, nanotron.c). */
const recipe *orr_recipe_megatron(const orr_spec *s);
const recipe *orr_recipe_torchtitan(const orr_spec *s);
const recipe *orr_recipe_deepspeed(const orr_spec *s);
const recipe *orr_recipe_nanotron(const orr_spec *s);
const recipe *orr_recipe_automodel(const orr_spec *s);
const recipe *orr_recipe_megatron_fsdp(const orr_spec *s);

typedef struct bucket {
    uint32_t chunk;
    uint32_t first_layer;             /* lowest layer (global index) whose params it holds */
    int has_embedding, has_head;
    double params;                    /* parameters per rank in the bucket */
    double gather_bytes;              /* bytes of its parameter all-gather (distributed optimizer) */
    uint32_t ag_event;                /* event recorded after its parameter all-gather */
} bucket;

struct gen {
    const orr_spec *s;
    const recipe *rp;
    orr_workload *w;
    /* shapes */
    uint32_t T, P, D, V, L;       /* tp, pp, dp, virtual stages, layers */
    uint32_t *stage_layers;       /* layers of virtual stage v = chunk*P + stage (orr_pp_split), P*V */
    uint32_t *stage_first;        /* global index of its first layer (model order), P*V */
    uint32_t C;                   /* context parallelism */
    uint32_t S;                   /* shard group size (recipe) */
    uint32_t R;                   /* ranks of the data-parallel reduction group g_dp (dp, or dp x cp with
                                   * recipe.reduces_over_cp); the distributed optimizer shards over them */
    uint32_t nmb;                 /* micro-batches per iteration */
    uint32_t nfl, fnmb, mb0;      /* pipeline schedule steps per iteration (spec lbs: 1 unless set), the
                                   * micro-batches of each, the first of the one being generated */
    double b, sq, h, a, g, hd, f, vocab;
    int sp, gated;
    int eager;                    /* eager PyTorch kernels (recipe, options.compile) */
    int dist;                     /* gradients reduce-scattered, optimizer on the shard, params gathered */
    int overlap_pg;               /* that gather overlapped with the next forward */
    uint32_t prefetch_units;      /* sharded: units the all-gathers run ahead of the compute (gen.c prefetch_units,
                                   * per rank) */
    orr_dtype dt;
    int head_gemms;               /* emitting the LM head's GEMMs: bf16 under fp8 training */
    double act_B;                 /* bytes per activation element */
    double grad_B;                /* bytes per gradient element in the DP reduction */
    double shard_B;               /* bytes per element of a sharded parameter and its sharded gradient
                                   * (recipe.unit_grads; the recipe's, 4 unless it says) */
    int plain_experts;            /* sharded recipes: the routed experts are no part of the sharding units
                                   * (never gathered or reduced; the recipe's, 0 unless it says) */
    /* the rank being generated */
    orr_rank *rk;
    size_t rank_op_cap;           /* ops this rank may hold within the op budget (gen_one_rank) */
    int over_budget;              /* it reached them: later ops land in op_sink, the job is refused */
    orr_op op_sink;
    uint32_t tp_r, pp_r, dp_r, cp_r;
    uint32_t g_tp, g_dp, g_emb, g_mp, g_cp, g_shard, g_rep;
    uint32_t seq_tp, seq_dp, seq_emb, seq_mp, seq_cp, seq_shard, seq_rep;
    uint32_t nev;
    uint32_t nbuf;                /* next buffer id for ALLOC/FREE beyond the activation buffers */
    uint32_t rank_layers;         /* layers of the current rank over all its chunks */
    uint32_t *chunk_base;         /* per chunk c: layers of this rank's chunks before c (V entries) */
    /* sharding units of the current rank: per chunk, unit 0 = root parts, 1..n = its n layers */
    uint32_t *unit_ag_ev;         /* event after the unit's all-gather (unit_id) */
    uint32_t *unit_buf;           /* its all-gather output, UINT32_MAX when not gathered or copied out */
    uint32_t *unit_cp_buf;        /* first of its unsharded parameters (copy-out), UINT32_MAX when none */
    uint32_t *unit_cp_n;          /* how many */
    uint32_t *unit_fwd_ev;        /* event after the unit's forward (frees its AG buffer) */
    uint32_t *unit_grad_buf;      /* its sharded fp32 gradients (unit_grads), from its reduce-scatter to zero_grad */
    uint32_t *unit_acc_buf;       /* its unsharded accumulated gradients (unit_grads, several micro-batches) */
    uint32_t rs_buf_pending;      /* reduce-scatter input buffer still in flight (freed at the next) */
    uint32_t head_base;           /* buffer ids head_base + mb: the loss's saved tensor per micro-batch */
    uint32_t head_tmp;            /* logits-gradient buffer between head_bwd's loss and its GEMMs */
    uint32_t head_in_base;        /* buffer ids head_in_base + mb: the LM head's saved input */
    uint32_t pp_out_base;         /* buffer ids pp_out_base + mb: the model output the last pipeline stage
                                   * keeps (pp_keeps_outputs) */
    int has_emb_group;
    /* buckets of the current rank, and per layer which bucket holds it */
    bucket *bk; size_t nbk, capbk;
    orr_map group_ids;            /* group dedup: hash(role, members) -> id */
    /* mixture of experts and MLA attention (moe.c) */
    uint32_t EP, ETP, EDP;        /* expert-parallel, expert-tensor-parallel and expert-data-parallel degrees */
    uint32_t ep_r;                /* the current rank's position in its EP group */
    uint32_t g_ep, g_etp, g_edp, seq_ep, seq_etp, seq_edp;
    uint32_t g_tpep, seq_tpep;    /* Megatron's tp_ep group (ETP x EP ranks, a communicator of its own) */
    int mla;                      /* MLA attention */
    uint32_t moe_buf_base;        /* buffer ids moe_buf_base + act_buf(c, li, mb): an MoE layer's saved tensors */
    double attn_out;              /* width of the attention output before the TP split: heads x head_dim, or
                                   * heads x v_head_dim with MLA */
};

/* ---- building blocks of gen.c that recipes use ---- */

/* Tokens of one micro-batch on this rank (the sequence split over cp ranks). */
double gen_tokens(const gen *G);
/* A memory-bound kernel on the compute stream. */
void gen_memop(gen *G, const ctx *c, const char *name, orr_op_class cls, double bytes, double flops);
/* Bytes an fp8 cast moves per element of its bf16 input under the run's --fp8-recipe (gen.c). */
double gen_fp8_cast_B(const gen *G);
/* ALLOC or FREE of buffer buf; a new buffer id (after the activation buffers); its FREE (none for UINT32_MAX). */
void gen_mem_op(gen *G, const ctx *c, orr_op_kind kind, uint8_t stream, const char *name, uint32_t buf, double bytes,
                orr_mem_cat cat);
uint32_t gen_mem_alloc(gen *G, const ctx *c, uint8_t stream, const char *name, double bytes, orr_mem_cat cat);
void gen_mem_free(gen *G, const ctx *c, uint8_t stream, uint32_t buf);
/* Events: record on a stream (returns its id), make a stream wait for one. */
uint32_t gen_record(gen *G, uint8_t stream);
void gen_wait(gen *G, uint8_t stream, uint32_t ev);
/* The host waits until event ev has been reached (a device-to-host read: .item(), .tolist(),
 * torch.cuda.Stream.synchronize()); then host work of dur_ps (the framework's Python before its next
 * launch), which the GPU waits for once its queue has drained. */
void gen_host_sync(gen *G, const ctx *c, const char *name, uint32_t ev);
void gen_host_work(gen *G, const ctx *c, const char *name, int64_t dur_ps);
/* A collective of the rank's group of the role (TP, DP, EMB, CP; else model-parallel); returns the op,
 * valid until the next op is emitted. */
orr_op *gen_coll(gen *G, const ctx *c, uint8_t stream, const char *name, orr_coll_kind kind, orr_comm_role role,
              double bytes);
/* One flash-attention kernel over q_len queries and kv_len keys with a causal fraction. */
void gen_flash_block(gen *G, const ctx *c, int backward, double q_len, double kv_len, double frac);
/* One hop around the CP ring on the CP stream (batched send and recv); the event of its arrival. */
uint32_t gen_cp_hop(gen *G, const ctx *c, uint32_t tag, double bytes);
/* Ring attention over the CP group: one block per step while K/V travel one hop. */
void gen_ring_attention(gen *G, const ctx *c, int backward);
/* What PyTorch autograd saves in a Llama-style block under recomputation rc (per rank). */
double gen_autograd_layer_bytes(const gen *G, orr_recompute rc);
/* The model output (logits of this rank's vocabulary shard): a temporary, or kept to the end of the
 * step (pp_keeps_outputs); its release. */
uint32_t gen_model_output_alloc(gen *G, const ctx *c);
int gen_pp_keeps_outputs(const gen *G);
void gen_model_output_release(gen *G, const ctx *c, uint32_t buf);
/* The eager PyTorch cross-entropy's memory (fp32 copy, saved log-softmax; nll and log-softmax
 * gradients), and the plain backward (the logits gradient, the saved tensor freed). */
void gen_loss_mem_fwd_eager(gen *G, const ctx *c);
void gen_loss_mem_bwd_eager(gen *G, const ctx *c);
void gen_loss_mem_bwd_plain(gen *G, const ctx *c);
/* Parameters of this rank (all its chunks), before any sharding; of which the embedding, final norm
 * and LM head. */
double gen_rank_params(const gen *G);
double gen_rank_root_params(const gen *G);
/* Bytes at bytes_per_param of the rank's FSDP shards (recipe.shards_params): its parameters over the
 * shard group, the routed experts' over the expert-data-parallel group. */
double gen_rank_shard_bytes(const gen *G, double bytes_per_param);
/* The rank's parameter tensors in model order, elements per rank before sharding and the size of the
 * group each is sharded over (at most cap); and how many there can be at most. */
uint32_t gen_param_tensors(const gen *G, double *out, double *shard, uint32_t cap);
uint32_t gen_param_tensor_count(const gen *G);
/* Optimizer state per parameter, bytes: fp32 master copy and Adam's moments (12 B), or what
 * Megatron-Core's precision-aware optimizer keeps. */
double gen_optim_state_B(const gen *G);
/* The recomputation of global layer `layer` on this rank: the spec's, except under TorchTitan's
 * layer-level selective AC (--selective-ac-option N), where the rank's N-th, 2N-th, ... block is
 * recomputed whole and the others are not at all. */
orr_recompute gen_layer_rc(const gen *G, uint32_t layer);
/* What recomputation rc re-runs of a Megatron layer (ORR_RCM_*): under selective the spec's
 * recompute_modules (core_attn when it names none: Megatron-Core's default); 0 otherwise and for the
 * recipes with per-op checkpointing (recipe.per_op_sac), which have no modules. */
uint32_t gen_rc_modules(const gen *G, orr_recompute rc);
/* The persistent parameter and gradient buffers (no gradient buffer when grad is 0), in that order. */
void gen_persistent_buffers(gen *G, const ctx *cx, double param, double grad);
/* A GEMM (m x k) x (k x n) on the compute stream; a batched one (batch GEMMs of that shape: a grouped
 * GEMM's groups); a GEMM with the TP collective that feeds it (kind ALLGATHER, with SP) or consumes it
 * (the g operator's all-reduce or reduce-scatter). */
void gen_gemm(gen *G, const ctx *c, const char *name, double m, double n, double k);
void gen_bgemm(gen *G, const ctx *c, const char *name, double m, double n, double k, double batch);
void gen_gemm_tp(gen *G, const ctx *c, const char *gname, double m, double n, double k, const char *cname,
                 orr_coll_kind kind);
/* The g operator's forward collective: reduce-scatter with SP, else all-reduce. */
orr_coll_kind gen_g_fwd_kind(const gen *G);
/* The communicator of the given members (deduplicated by role and members); a collective on it. */
uint32_t gen_group(gen *G, orr_comm_role role, const uint32_t *m, uint32_t n, const char *label);
/* A communicator of its own over the members (tag > 0 tells it from gen_group's and from other tags'):
 * what a framework gets when it creates a second process group over the same ranks, whose
 * collectives do not queue behind the first one's. */
uint32_t gen_group_own(gen *G, orr_comm_role role, const uint32_t *m, uint32_t n, const char *label, uint32_t tag);
orr_op *gen_coll_group(gen *G, const ctx *c, uint8_t stream, const char *name, orr_coll_kind kind, orr_comm_role role,
                       uint32_t group, uint32_t *seq, double bytes);
/* Tokens of one micro-batch each rank holds outside the TP regions (split over TP with SP). */
double gen_local_tokens(const gen *G);

/* ---- mixture of experts and MLA attention (moe.c) ----
 * gen.c asks: the degrees and widths (moe_setup, from gen_shapes), the EP/ETP/EDP groups of the rank
 * (moe_groups, from rank_groups), whether a layer is an MoE layer, its MLP (moe_mlp in place of the
 * dense MLP), its parameters per rank, its saved bytes beyond a dense layer's, the expert gradients'
 * reduction over the expert-data-parallel group (after the last micro-batch's backward of the
 * layer), MLA's projections in place of the QKV GEMM, and sliding-window attention. */
void moe_setup(gen *G);
void moe_groups(gen *G);
int moe_is_moe_layer(const gen *G, uint32_t layer);
void moe_mlp(gen *G, const ctx *c, int backward);
/* Parameters of layer `layer` per rank reduced (or sharded) over the data-parallel group (all but the routed
 * experts); the routed experts' parameters per rank of one MoE layer (0 for a dense layer). */
double moe_layer_dense_params_local(const gen *G, uint32_t layer);
double moe_layer_expert_params_local(const gen *G, uint32_t layer);
/* Routed-expert parameters of the current rank over all its layers. */
double moe_rank_expert_params(const gen *G);
/* Of what the recipe says a layer keeps for its backward under recomputation rc, the dense MLP's
 * part, which an MoE layer does not keep (0 for a dense layer or under full recomputation); what an
 * MoE layer keeps instead under rc (the pre-MLP norm's output, the routed tokens' GEMM inputs and
 * outputs, scores, shared experts), allocated after its forward as buffer buf unless under full
 * recomputation, freed after its backward. */
double moe_layer_dense_mlp_bytes(const gen *G, uint32_t layer, orr_recompute rc);
double moe_layer_saved_bytes(const gen *G, uint32_t layer, orr_recompute rc);
void moe_save_activations(gen *G, const ctx *c, uint32_t buf);
void moe_free_activations(gen *G, const ctx *c, uint32_t buf);
/* Before an MoE layer's backward, what Megatron's recompute_modules m re-run of it: the whole layer
 * (moe), or the experts' activation (moe_act) and the shared experts (shared_experts). */
void moe_module_recompute(gen *G, const ctx *c, uint32_t m);
void moe_expert_grad_reduce(gen *G, const ctx *c);
void mla_qkv(gen *G, const ctx *c, int backward);
/* MLA's up projections of the queries and of the keys/values (forward), which mla_up_proj recomputes. */
void mla_up_proj(gen *G, const ctx *c);
/* Model FLOPs of an MoE model's iteration (the MFU convention of docs/models.md "MoE"). */
double moe_model_flops(const gen *G, double gbs);
/* The fraction of the s x s score blocks a windowed layer computes (0: a full-attention layer). */
double moe_window_fraction(const gen *G, uint32_t layer);

#endif
