/*
 * workload.c - building and checking the IR (include/orrery/workload.h).
 */
#include "orrery/workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

orr_workload *orr_workload_new(uint32_t world_size, uint32_t gpus_per_node)
{
    orr_workload *w = orr_xcalloc(1, sizeof *w);
    w->world_size = world_size;
    w->gpus_per_node = gpus_per_node ? gpus_per_node : 1;
    return w;
}

void orr_workload_free(orr_workload *w)
{
    if (!w) return;
    for (size_t i = 0; i < w->nranks; i++) free(w->ranks[i].ops);
    for (size_t i = 0; i < w->ngroups; i++) free(w->groups[i].members);
    for (size_t i = 0; i < w->nnames; i++) free(w->names[i]);
    free(w->ranks);
    free(w->groups);
    free(w->names);
    orr_map_free(&w->name_index);
    orr_map_free(&w->gpu_to_rank);
    free(w);
}

uint32_t orr_workload_add_rank(orr_workload *w, uint32_t gpu, uint32_t weight, const char *label)
{
    orr_rank r;
    memset(&r, 0, sizeof r);
    r.gpu = gpu;
    r.weight = weight ? weight : 1;
    snprintf(r.label, sizeof r.label, "%s", label ? label : "");
    ORR_PUSH(w->ranks, w->nranks, w->cap_ranks, r);
    orr_map_put(&w->gpu_to_rank, gpu, (uint32_t)(w->nranks - 1));
    return (uint32_t)(w->nranks - 1);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

uint32_t orr_workload_add_group(orr_workload *w, orr_comm_role role, const uint32_t *members,
                                uint32_t n, const char *label)
{
    orr_group g;
    memset(&g, 0, sizeof g);
    g.size = n;
    g.role = (uint8_t)role;
    g.members = orr_xmalloc((n ? n : 1) * sizeof *g.members);
    memcpy(g.members, members, n * sizeof *members);
    qsort(g.members, n, sizeof *g.members, cmp_u32);
    /* nodes spanned and the most members on one node (members sorted, so nodes are runs) */
    uint32_t nodes = 0, run = 0, best = 0, prev_node = UINT32_MAX;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t node = g.members[i] / w->gpus_per_node;
        if (node != prev_node) {
            nodes++;
            run = 0;
            prev_node = node;
        }
        if (++run > best) best = run;
    }
    g.nodes = nodes;
    g.per_node = best;
    snprintf(g.label, sizeof g.label, "%s", label ? label : "");
    ORR_PUSH(w->groups, w->ngroups, w->cap_groups, g);
    return (uint32_t)(w->ngroups - 1);
}

uint16_t orr_workload_name(orr_workload *w, const char *name)
{
    uint64_t h = orr_hash_str(name);
    /* Collisions of 64-bit FNV among a few hundred names are not a practical concern, but check. */
    uint32_t *idx = orr_map_get(&w->name_index, h);
    if (idx && strcmp(w->names[*idx], name) == 0) return (uint16_t)*idx;
    char *copy = orr_xstrdup(name);
    ORR_PUSH(w->names, w->nnames, w->cap_names, copy);
    if (!idx) orr_map_put(&w->name_index, h, (uint32_t)(w->nnames - 1));
    return (uint16_t)(w->nnames - 1);
}

orr_op *orr_rank_push(orr_rank *r, const orr_op *op)
{
    ORR_PUSH(r->ops, r->nops, r->cap, *op);
    return &r->ops[r->nops - 1];
}

int64_t orr_workload_append(orr_workload *dst, const orr_workload *src, const uint32_t *gpu_of, const char *prefix,
                            orr_err *err)
{
    if (src->sym.nimages > 1) return orr_fail(err, "workload: a job placed on a cluster must simulate every GPU (no symmetry)");
    for (size_t r = 0; r < src->nranks; r++)
        if (src->ranks[r].weight != 1 || src->ranks[r].gpu >= src->world_size)
            return orr_fail(err, "workload: rank %u of a job placed on a cluster stands for %u GPUs or lies outside its "
                                 "%u; every GPU must be simulated", src->ranks[r].gpu, src->ranks[r].weight,
                            src->world_size);
    for (uint32_t g = 0; g < src->world_size; g++)
        if (gpu_of[g] >= dst->world_size)
            return orr_fail(err, "workload: rank %u placed on GPU %u, outside the cluster's %u", g, gpu_of[g],
                            dst->world_size);
    int64_t first = (int64_t)dst->nranks;
    uint32_t gbase = (uint32_t)dst->ngroups;
    uint32_t *members = NULL;
    size_t cap = 0;
    for (size_t g = 0; g < src->ngroups; g++) {
        const orr_group *sg = &src->groups[g];
        if (sg->size > cap) {
            free(members);
            cap = sg->size;
            members = orr_xmalloc(cap * sizeof *members);
        }
        for (uint32_t i = 0; i < sg->size; i++)
            members[i] = sg->members[i] < src->world_size ? gpu_of[sg->members[i]] : dst->world_size;
        orr_workload_add_group(dst, (orr_comm_role)sg->role, members, sg->size, sg->label);
    }
    free(members);
    uint16_t *name_of = orr_xmalloc((src->nnames ? src->nnames : 1) * sizeof *name_of);
    for (size_t i = 0; i < src->nnames; i++) name_of[i] = orr_workload_name(dst, src->names[i]);
    for (size_t r = 0; r < src->nranks; r++) {
        const orr_rank *sr = &src->ranks[r];
        char label[2 * sizeof sr->label + 2]; /* add_rank cuts it to the label size */
        if (prefix && prefix[0]) snprintf(label, sizeof label, "%s %s", prefix, sr->label);
        else snprintf(label, sizeof label, "%s", sr->label);
        uint32_t ri = orr_workload_add_rank(dst, gpu_of[sr->gpu], 1, label);
        orr_rank *dr = &dst->ranks[ri];
        dr->ops = orr_xmalloc((sr->nops ? sr->nops : 1) * sizeof *dr->ops);
        dr->cap = sr->nops ? sr->nops : 1;
        dr->nops = sr->nops;
        if (sr->nops) memcpy(dr->ops, sr->ops, sr->nops * sizeof *dr->ops);
        for (size_t i = 0; i < dr->nops; i++) {
            orr_op *op = &dr->ops[i];
            if (op->name < src->nnames) op->name = name_of[op->name];
            if (op->kind == ORR_OP_COLL) op->a = op->a < src->ngroups ? op->a + gbase : UINT32_MAX;
            else if (op->kind == ORR_OP_SEND || op->kind == ORR_OP_RECV)
                op->a = op->a < src->world_size ? gpu_of[op->a] : dst->world_size;
        }
    }
    free(name_of);
    return first;
}

int64_t orr_workload_rank_of(const orr_workload *w, uint32_t gpu)
{
    uint32_t *i = orr_map_get(&w->gpu_to_rank, gpu);
    return i ? (int64_t)*i : -1;
}

uint32_t orr_sym_image(const orr_sym *s, uint32_t k, uint32_t gpu)
{
    uint32_t out = 0, stride = 1;
    for (uint32_t i = 0; i < s->ndigits; i++) {
        uint32_t r = s->radix[i], digit;
        if (r == 0) continue; /* malformed: orr_workload_finalize refuses it */
        digit = gpu % r;
        gpu /= r;
        if (s->shifted[i]) {
            digit = (digit + k % r) % r;
            k /= r;
        }
        out += digit * stride;
        stride *= r;
    }
    return out + gpu * stride; /* digits beyond the described ones stay */
}

uint32_t orr_sym_inverse(const orr_sym *s, uint32_t k)
{
    uint32_t out = 0, stride = 1;
    for (uint32_t i = 0; i < s->ndigits; i++) {
        if (!s->shifted[i] || s->radix[i] == 0) continue;
        uint32_t r = s->radix[i], digit = k % r;
        k /= r;
        out += (r - digit) % r * stride;
        stride *= r;
    }
    return out;
}

/* The symmetry must cover the world, and each simulated rank must stand for exactly its images:
 * weight = nimages, and no two simulated ranks in one orbit (same unshifted digits). */
static int check_sym(const orr_workload *w, orr_err *err)
{
    const orr_sym *s = &w->sym;
    if (s->nimages <= 1) return 0;
    uint64_t world = 1, images = 1;
    if (s->ndigits > ORR_SYM_MAX_DIGITS)
        return orr_fail(err, "workload: symmetry has %u digits (at most %d)", s->ndigits, ORR_SYM_MAX_DIGITS);
    for (uint32_t i = 0; i < s->ndigits; i++) {
        if (s->radix[i] == 0) return orr_fail(err, "workload: symmetry digit %u has radix 0", i);
        world *= s->radix[i];
        if (s->shifted[i]) images *= s->radix[i];
    }
    if (world != w->world_size || images != s->nimages)
        return orr_fail(err, "workload: symmetry describes %llu ranks and %llu images, but the job has %u ranks and "
                             "says %u images", (unsigned long long)world, (unsigned long long)images, w->world_size,
                        s->nimages);
    orr_map orbit = {0};
    int rc = 0;
    for (size_t r = 0; r < w->nranks && rc == 0; r++) {
        uint32_t g = w->ranks[r].gpu, key = 0, stride = 1;
        for (uint32_t i = 0; i < s->ndigits; i++) {
            uint32_t digit = g % s->radix[i];
            g /= s->radix[i];
            if (!s->shifted[i]) key += digit * stride;
            stride *= s->radix[i];
        }
        if (w->ranks[r].weight != s->nimages)
            rc = orr_fail(err, "workload: rank %u stands for %u GPUs, but the symmetry gives it %u images",
                          w->ranks[r].gpu, w->ranks[r].weight, s->nimages);
        else if (orr_map_get(&orbit, key))
            rc = orr_fail(err, "workload: ranks %u and %u are images of each other under the symmetry; simulate one",
                          w->ranks[*orr_map_get(&orbit, key)].gpu, w->ranks[r].gpu);
        else orr_map_put(&orbit, key, (uint32_t)r);
    }
    orr_map_free(&orbit);
    return rc;
}

int orr_workload_finalize(orr_workload *w, orr_err *err)
{
    if (check_sym(w, err) < 0) return -1;
    for (size_t g = 0; g < w->ngroups; g++) {
        orr_group *grp = &w->groups[g];
        grp->nsim = 0;
        for (uint32_t i = 0; i < grp->size; i++) {
            if (grp->members[i] >= w->world_size)
                return orr_fail(err, "workload: group %zu (%s) has member %u outside the %u ranks",
                                g, grp->label, grp->members[i], w->world_size);
            if (orr_workload_rank_of(w, grp->members[i]) >= 0) grp->nsim++;
        }
    }
    for (size_t ri = 0; ri < w->nranks; ri++) {
        orr_rank *r = &w->ranks[ri];
        uint32_t nstreams = 0, nevents = 0, nbufs = 0;
        for (size_t i = 0; i < r->nops; i++) {
            const orr_op *op = &r->ops[i];
            if (op->kind >= ORR_OP_KIND_COUNT)
                return orr_fail(err, "workload: rank %u op %zu has unknown kind %u", r->gpu, i, op->kind);
            if ((uint32_t)op->stream + 1 > nstreams) nstreams = op->stream + 1u;
            switch (op->kind) {
            case ORR_OP_EVENT_RECORD:
            case ORR_OP_STREAM_WAIT:
            case ORR_OP_EVENT_SYNC:
                if (op->a + 1 > nevents) nevents = op->a + 1;
                break;
            case ORR_OP_ALLOC:
            case ORR_OP_FREE:
                if (op->a + 1 > nbufs) nbufs = op->a + 1;
                break;
            case ORR_OP_COLL: {
                if (op->a >= w->ngroups)
                    return orr_fail(err, "workload: rank %u op %zu uses unknown group %u", r->gpu, i, op->a);
                const orr_group *grp = &w->groups[op->a];
                if (!bsearch(&r->gpu, grp->members, grp->size, sizeof(uint32_t), cmp_u32))
                    return orr_fail(err, "workload: rank %u op %zu is a collective of group %u (%s) it is not a member of",
                                    r->gpu, i, op->a, grp->label);
                if (op->cls >= ORR_COLL_COUNT)
                    return orr_fail(err, "workload: rank %u op %zu has unknown collective %u", r->gpu, i, op->cls);
                break;
            }
            case ORR_OP_SEND:
            case ORR_OP_RECV:
                if (orr_workload_rank_of(w, op->a) < 0)
                    return orr_fail(err, "workload: rank %u op %zu talks to rank %u which is not simulated",
                                    r->gpu, i, op->a);
                if (op->a == r->gpu)
                    return orr_fail(err, "workload: rank %u op %zu sends to or receives from itself", r->gpu, i);
                break;
            default:
                break;
            }
        }
        r->nstreams = nstreams ? nstreams : 1;
        r->nevents = nevents;
        r->nbufs = nbufs;
    }
    return 0;
}

static const char *const kind_names[] = {
    "kernel", "memcpy", "memset", "alloc", "free", "event_record", "stream_wait", "event_sync",
    "stream_sync", "device_sync", "collective", "send", "recv", "host"};
static const char *const class_names[] = {
    "gemm", "attention_fwd", "attention_bwd", "elementwise", "reduction", "norm", "optimizer", "other"};
static const char *const coll_names[] = {
    "all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "all_to_all"};
static const char *const dtype_names[] = {"fp32", "tf32", "bf16", "fp16", "fp8", "mxfp8", "nvfp4"};
/* mxfp8: one 1-byte E8M0 scale per 32 elements; nvfp4: one 1-byte E4M3 scale per 16 (the FP32 tensor
 * scale is negligible) */
static const double dtype_sizes[] = {4, 4, 2, 2, 1, 1 + 1.0 / 32, 0.5 + 1.0 / 16};
static const char *const role_names[] = {"none", "tp", "pp", "dp", "emb", "cp", "ep", "other"};
static const char *const phase_names[] = {"fwd", "bwd", "recompute", "optim", "other"};
static const char *const mem_names[] = {
    "parameter", "gradient", "optimizer_state", "activation", "temporary", "communication_buffer", "other"};

_Static_assert(sizeof dtype_names / sizeof dtype_names[0] == ORR_DTYPE_COUNT, "a name per orr_dtype");
_Static_assert(sizeof dtype_sizes / sizeof dtype_sizes[0] == ORR_DTYPE_COUNT, "a size per orr_dtype");

#define NAME_OF(table, i) ((size_t)(i) < sizeof(table) / sizeof(table[0]) ? table[i] : "?")
const char *orr_op_kind_name(orr_op_kind k) { return NAME_OF(kind_names, k); }
const char *orr_op_class_name(orr_op_class c) { return NAME_OF(class_names, c); }
const char *orr_coll_kind_name(orr_coll_kind c) { return NAME_OF(coll_names, c); }
const char *orr_dtype_name(orr_dtype d) { return NAME_OF(dtype_names, d); }
double orr_dtype_bytes(orr_dtype d) { return (size_t)d < sizeof dtype_sizes / sizeof dtype_sizes[0] ? dtype_sizes[d] : 2; }
const char *orr_role_name(orr_comm_role r) { return NAME_OF(role_names, r); }
const char *orr_phase_name(orr_phase p) { return NAME_OF(phase_names, p); }
const char *orr_mem_cat_name(orr_mem_cat c) { return NAME_OF(mem_names, c); }

const char *orr_workload_op_name(const orr_workload *w, size_t r, size_t i)
{
    if (r >= w->nranks || i >= w->ranks[r].nops) return "";
    uint16_t n = w->ranks[r].ops[i].name;
    return n < w->nnames ? w->names[n] : "";
}
