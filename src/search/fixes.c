/*
 * fixes.c - when predict finds a job out of memory, the settings that would make it fit (issue 21,
 * part 7): a local search around the job. Its neighbourhood doubles TP, PP or (MoE) EP, drops virtual
 * stages, halves the micro-batch (or takes 1), recomputes more, and shards more (the distributed
 * optimizer, a higher ZeRO stage, full FSDP2 sharding, sequence parallelism), every combination of
 * those; the GPU count, framework and CP stay. Configurations are tried by how many settings they
 * change, one first: the first round with any that fits ends the search, and the fastest of it
 * are the fixes. The memory lower bound (bound.c) rejects a configuration without simulating it;
 * the rest are predicted with the analytic network (memory does not depend on the network model).
 */
#include "search/internal.h"
#include "orrery/orrery.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIX_MAX_CHANGES 3       /* a fix changes at most this many settings */
#define FIX_MAX_SIMULATIONS 48  /* predictions at most (each is a full one of the job) */

/* One configuration of the neighbourhood once resolved. */
typedef struct fix_cand {
    uint32_t trial;
    uint32_t changes;
    char flags[160];
} fix_cand;

/* Adds v to the list out[0..*n) unless it is there. */
static void add_value(uint32_t *out, uint32_t *n, uint32_t v)
{
    for (uint32_t i = 0; i < *n; i++)
        if (out[i] == v) return;
    out[(*n)++] = v;
}

/* The neighbourhood of a resolved job as the search's axis lists. */
static void neighbourhood(const orr_spec *cur, const search_base *b, orr_search_opts *o)
{
    memset(o, 0, sizeof *o);
    for (int ax = 0; ax < ORR_AX_COUNT; ax++) o->ax[ax].given = 1;
    orr_axis_values *a = o->ax;
    add_value(a[ORR_AX_GPUS].v, &a[ORR_AX_GPUS].n, cur->gpus);
    add_value(a[ORR_AX_FRAMEWORK].v, &a[ORR_AX_FRAMEWORK].n, (uint32_t)cur->framework);
    add_value(a[ORR_AX_TP].v, &a[ORR_AX_TP].n, cur->tp);
    if (2 * cur->tp <= b->gpn) add_value(a[ORR_AX_TP].v, &a[ORR_AX_TP].n, 2 * cur->tp);
    add_value(a[ORR_AX_PP].v, &a[ORR_AX_PP].n, cur->pp);
    if (2 * cur->pp <= b->layers) add_value(a[ORR_AX_PP].v, &a[ORR_AX_PP].n, 2 * cur->pp);
    add_value(a[ORR_AX_CP].v, &a[ORR_AX_CP].n, cur->cp);
    add_value(a[ORR_AX_EP].v, &a[ORR_AX_EP].n, cur->ep);
    if (cur->model.experts) add_value(a[ORR_AX_EP].v, &a[ORR_AX_EP].n, 2 * cur->ep);
    add_value(a[ORR_AX_VPP].v, &a[ORR_AX_VPP].n, cur->vpp);
    add_value(a[ORR_AX_VPP].v, &a[ORR_AX_VPP].n, 1);
    add_value(a[ORR_AX_MBS].v, &a[ORR_AX_MBS].n, cur->mbs);
    add_value(a[ORR_AX_MBS].v, &a[ORR_AX_MBS].n, cur->mbs > 1 ? cur->mbs / 2 : 1);
    add_value(a[ORR_AX_MBS].v, &a[ORR_AX_MBS].n, 1);
    for (uint32_t r = cur->recompute; r <= ORR_RECOMPUTE_FULL; r++)
        add_value(a[ORR_AX_RECOMPUTE].v, &a[ORR_AX_RECOMPUTE].n, r);
    /* the framework's own sharding axis; the others have the single value 0 (as in a search) */
    add_value(a[ORR_AX_ZERO].v, &a[ORR_AX_ZERO].n, 0);
    add_value(a[ORR_AX_FSDP].v, &a[ORR_AX_FSDP].n, 0);
    add_value(a[ORR_AX_DIST_OPT].v, &a[ORR_AX_DIST_OPT].n, 0);
    if (cur->framework == ORR_FW_DEEPSPEED) {
        a[ORR_AX_ZERO].n = 0;
        for (uint32_t z = cur->zero ? cur->zero : 1; z <= 3; z++) add_value(a[ORR_AX_ZERO].v, &a[ORR_AX_ZERO].n, z);
    } else if (orr_fw_fsdp2(cur->framework) && cur->fsdp && cur->fsdp < cur->dp) {
        add_value(a[ORR_AX_FSDP].v, &a[ORR_AX_FSDP].n, cur->fsdp); /* HSDP: and full sharding (0) */
    } else if (cur->framework == ORR_FW_MEGATRON) {
        a[ORR_AX_DIST_OPT].n = 0;
        add_value(a[ORR_AX_DIST_OPT].v, &a[ORR_AX_DIST_OPT].n, cur->dist_opt != 0);
        add_value(a[ORR_AX_DIST_OPT].v, &a[ORR_AX_DIST_OPT].n, 1);
    }
    add_value(a[ORR_AX_SP].v, &a[ORR_AX_SP].n, cur->sp != 0);
    if (cur->framework != ORR_FW_DEEPSPEED) add_value(a[ORR_AX_SP].v, &a[ORR_AX_SP].n, 1);
}

/* Appends one changed setting to a fix's flags. */
/* Appends a flag to c's; counted: one changed setting (else implied by another, or kept). */
static void put_flag_as(fix_cand *c, int counted, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void put_flag_as(fix_cand *c, int counted, const char *fmt, ...)
{
    size_t n = strlen(c->flags);
    va_list ap;
    va_start(ap, fmt);
    if (n && n + 1 < sizeof c->flags) c->flags[n++] = ' ', c->flags[n] = 0;
    vsnprintf(c->flags + n, sizeof c->flags - n, fmt, ap);
    va_end(ap);
    c->changes += counted != 0;
}
#define put_flag(c, ...) put_flag_as(c, 1, __VA_ARGS__)

/* The settings of resolved spec s that differ from the job's, as predict's flags. */
static void diff(const orr_spec *cur, const orr_spec *s, fix_cand *c)
{
    c->flags[0] = 0;
    c->changes = 0;
    if (s->tp != cur->tp) put_flag(c, "--tp %u", s->tp);
    if (s->pp != cur->pp) put_flag(c, "--pp %u", s->pp);
    if (s->ep != cur->ep) put_flag(c, "--ep %u", s->ep);
    if (s->vpp != cur->vpp) put_flag(c, "--vpp %u", s->vpp);
    if (s->mbs != cur->mbs) put_flag(c, "--mbs %u", s->mbs);
    if (s->recompute != cur->recompute) put_flag(c, "--recompute %s", orr_recompute_name(s->recompute));
    if (s->sac_every != cur->sac_every) /* leaving TorchTitan's layer SAC: part of the recompute change */
        put_flag_as(c, 0, "--selective-ac-option op");
    if (s->zero != cur->zero) put_flag(c, "--zero %u", s->zero);
    if (orr_fw_fsdp2(s->framework) && s->fsdp != cur->fsdp) put_flag(c, "--fsdp %u", s->fsdp);
    if (!s->dist_opt != !cur->dist_opt) put_flag(c, s->dist_opt ? "--dist-opt" : "--no-dist-opt");
    if (!s->sp != !cur->sp) put_flag(c, s->sp ? "--sp" : "--no-sp");
}

static int cmp_fix(const void *pa, const void *pb)
{
    const orr_fit_fix *a = pa, *b = pb;
    if (a->iteration_s != b->iteration_s) return a->iteration_s < b->iteration_s ? -1 : 1;
    return strcmp(a->flags, b->flags);
}

int orr_search_fixes(const char *spec_path, const char *spec_text, int argc, char **argv, const orr_spec *cur,
                     orr_fit_fixes *out, orr_err *err)
{
    memset(out, 0, sizeof *out);
    search_base b;
    memset(&b, 0, sizeof b);
    orr_spec_init(&b.s);
    int rc = 0;
    if (spec_path) rc = orr_spec_load_file(&b.s, spec_path, err);
    else if (spec_text) rc = orr_spec_load_text(&b.s, "spec", spec_text, strlen(spec_text), err);
    if (rc == 0) rc = orr_spec_apply_flags(&b.s, argc, argv, err);
    /* the job's global batch when it took predict's default (mbs*dp): kept by every candidate, and named
     * in its flags, since with another mbs or dp the default would be another batch */
    int name_gbs = rc == 0 && !b.s.gbs;
    if (name_gbs) b.s.gbs = cur->gbs;
    if (rc == 0) rc = search_base_finish(&b, cur->gpus, err);
    orr_search_opts o;
    orr_trial *t = NULL;
    uint32_t nt = 0;
    if (rc == 0) {
        neighbourhood(cur, &b, &o);
        rc = search_enumerate(&o, &b, &t, &nt, err);
    }
    if (rc < 0) {
        orr_spec_free(&b.s);
        return -1;
    }
    /* resolve each, once: its changes and flags; drop the job itself, the invalid, the duplicates
     * and those the memory lower bound proves cannot fit */
    fix_cand *c = orr_xmalloc((nt ? nt : 1) * sizeof *c);
    uint32_t nc = 0;
    for (uint32_t i = 0; i < nt; i++) {
        orr_spec s;
        orr_err e = {{0}};
        if (search_trial_spec(&b, &t[i], "analytic", &s, &e)) continue;
        fix_cand *k = &c[nc];
        k->trial = i;
        diff(cur, &s, k);
        if (name_gbs) put_flag_as(k, 0, "--gbs %u", cur->gbs); /* kept, not changed */
        int dup = k->changes == 0 || k->changes > FIX_MAX_CHANGES;
        for (uint32_t j = 0; j < nc && !dup; j++) dup = strcmp(c[j].flags, k->flags) == 0;
        if (!dup && orr_search_memory_lower_bound(&s) <= orr_spec_alloc_capacity(&s)) nc++;
    }
    out->searched = 1;
    out->max_changes = FIX_MAX_CHANGES;
    orr_fit_fix fits[FIX_MAX_SIMULATIONS];
    uint32_t nfits = 0;
    for (uint32_t k = 1; k <= FIX_MAX_CHANGES && !nfits && out->tried < FIX_MAX_SIMULATIONS; k++)
        for (uint32_t i = 0; i < nc && out->tried < FIX_MAX_SIMULATIONS; i++) {
            if (c[i].changes != k) continue;
            orr_spec s;
            orr_err e = {{0}};
            if (search_trial_spec(&b, &t[c[i].trial], "analytic", &s, &e)) continue;
            s.progress = NULL;
            orr_prediction p;
            if (orr_predict_headline(&s, &p, &e) < 0) continue; /* e.g. a schedule the model refuses */
            out->tried++;
            if (!p.r.mem.oom) {
                orr_fit_fix *f = &fits[nfits++];
                snprintf(f->flags, sizeof f->flags, "%s", c[i].flags);
                f->changes = k;
                f->iteration_s = p.r.iteration_s;
                f->peak_bytes = p.r.mem.peak_reserved_bytes;
            }
            orr_prediction_free(&p);
        }
    qsort(fits, nfits, sizeof *fits, cmp_fix);
    out->n = nfits < ORR_FIT_FIXES_MAX ? nfits : ORR_FIT_FIXES_MAX;
    memcpy(out->fix, fits, out->n * sizeof *fits);
    free(c);
    free(t);
    orr_spec_free(&b.s);
    return 0;
}
