/*
 * net.c - the network backend factory and the functions of net.h that dispatch through a
 * backend's table.
 *
 * A backend is the small table of function pointers in net.h: send bytes between two GPUs, run a
 * collective among a group, destroy, and (topology backends) its link statistics and counters.
 * Each backend lives in its own file: analytic_net.c (closed forms, no contention), flow_net.c
 * (NCCL's steps on a max-min flow model), packet_net.c (the same with the inter-node flows on the
 * packet engine, src/net/packet); both run a collapsed workload's traffic on every GPU through
 * images.c. Callers ask a backend what it can do (caps) rather than branching on its kind.
 */
#include "net_internal.h"
#include "orrery/collsched.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Fills nodes and per_node of d from the members (ascending global ranks, as orr_group keeps
 * them) when the caller left them 0. */
orr_coll_desc orr_net_coll_shape(const orr_net *n, const orr_coll_desc *d, const uint32_t *members)
{
    orr_coll_desc s = *d;
    if ((s.nodes && s.per_node) || !members || s.size == 0 || n->cluster->gpus_per_node == 0)
        return s;
    uint32_t nodes = 0, per_node = 0, run = 0, last = UINT32_MAX;
    for (uint32_t i = 0; i < s.size; i++) {
        uint32_t node = orr_node_of(n->cluster, members[i]);
        if (node != last) {
            nodes++;
            run = 0;
            last = node;
        }
        if (++run > per_node) per_node = run;
    }
    if (!s.nodes) s.nodes = nodes;
    if (!s.per_node) s.per_node = per_node;
    return s;
}

/* ---- what the topology backends (flow, packet) share ---- */

void orr_net_run_send(orr_net *n, orr_runner *run, orr_sched *sched, uint32_t src, uint32_t dst, uint64_t bytes,
                      orr_event_fn done, void *ctx, uint64_t arg)
{
    orr_sched_p2p(sched, n->gpu, n->cluster, src, dst, bytes);
    orr_runner_run(run, sched, done, ctx, arg);
}

void orr_net_run_collective(orr_net *n, orr_runner *run, orr_sched *sched, const orr_sched_opts *opts,
                            const orr_coll_desc *d, const uint32_t *members, orr_event_fn done, void *ctx,
                            uint64_t arg)
{
    orr_coll_desc s = orr_net_coll_shape(n, d, members);
    orr_sched_coll(sched, n->gpu, n->cluster, &s, members, opts, NULL);
    orr_runner_run(run, sched, done, ctx, arg);
}

/* ---- the table's statistics entries ---- */

const orr_topo *orr_net_topo(const orr_net *n) { return n && n->topo ? n->topo(n) : NULL; }

void orr_net_sync(orr_net *n)
{
    if (n && n->sync) n->sync(n);
}

void orr_net_link_use_get(const orr_net *n, uint32_t link, orr_net_link_use *out)
{
    memset(out, 0, sizeof *out);
    const orr_topo *t = orr_net_topo(n);
    if (!t || link >= t->n_links || !n->link_use) return;
    n->link_use(n, link, out);
}

void orr_net_track_links(orr_net *n)
{
    const orr_topo *t = orr_net_topo(n);
    if (!t || n->link_bins || !n->track_links) return;
    n->link_bins = orr_link_bins_new(t->n_links);
    n->track_links(n);
}

const double *orr_net_link_windows(const orr_net *n, uint32_t link, int64_t *width_ps)
{
    if (!n || !n->link_bins) return NULL;
    *width_ps = n->link_bins->width_ps;
    return orr_link_bins_of(n->link_bins, n->link_rep ? n->link_rep(n, link) : link);
}

void orr_net_summarise(const orr_net *n, orr_net_counters *out)
{
    memset(out, 0, sizeof *out);
    if (n && n->summarise) n->summarise(n, out);
}

uint64_t orr_net_flows(const orr_net *n)
{
    orr_net_counters c;
    orr_net_summarise(n, &c);
    return c.flows;
}

/* The backends: how to make one and what it can do (one home for both). */
static const struct {
    int (*init)(orr_net *n, const orr_net_config *cfg, orr_err *err);
    unsigned caps;
} backends[ORR_NET_KIND_COUNT] = {
    [ORR_NET_ANALYTIC] = {orr_analytic_net_init, 0},
    [ORR_NET_FLOW] = {orr_flow_net_init, ORR_NET_CAP_LINKS | ORR_NET_CAP_SYMMETRY},
    [ORR_NET_PACKET] = {orr_packet_net_init, ORR_NET_CAP_LINKS | ORR_NET_CAP_SYMMETRY | ORR_NET_CAP_PACKETS},
};

orr_net *orr_net_create_cfg(orr_net_kind kind, orr_engine *e, const orr_gpu *g, const orr_cluster *c,
                            const orr_net_config *cfg, orr_err *err)
{
    if (!e || !g || !c) {
        orr_fail(err, "network backend %s: needs an engine, a GPU and a cluster", orr_net_kind_name(kind));
        return NULL;
    }
    if ((unsigned)kind >= ORR_NET_KIND_COUNT) {
        orr_fail(err, "network backend kind %d is not implemented (known: analytic, flow, packet)", (int)kind);
        return NULL;
    }
    orr_net *n = orr_xcalloc(1, sizeof *n);
    n->kind = kind;
    n->engine = e;
    n->gpu = g;
    n->cluster = c;
    n->caps = backends[kind].caps;
    if (backends[kind].init(n, cfg, err)) {
        free(n);
        return NULL;
    }
    return n;
}

unsigned orr_net_kind_caps(orr_net_kind kind) { return (unsigned)kind < ORR_NET_KIND_COUNT ? backends[kind].caps : 0; }

void orr_net_config_default(orr_net_config *cfg, const orr_cluster *c)
{
    memset(cfg, 0, sizeof *cfg);
    orr_topo_spec_default(&cfg->topo, c);
}

orr_net *orr_net_create_for(orr_net_kind kind, orr_engine *e, const orr_gpu *g, const orr_cluster *c,
                            const orr_net_config *cfg_in, const orr_workload *w, orr_err *err)
{
    orr_net_config cfg;
    if (cfg_in) cfg = *cfg_in;
    else orr_net_config_default(&cfg, c);
    if (cfg.gpus < w->world_size) cfg.gpus = w->world_size;
    unsigned caps = orr_net_kind_caps(kind);
    /* A collapsed rank is fine under a backend that replays its traffic on the GPUs it stands for,
     * when the workload says which (its images, src/net/images.c); a backend with a fabric but
     * without that would miss their flows. The analytic backend has no fabric to miss them on. */
    cfg.sym = (caps & ORR_NET_CAP_SYMMETRY) && w->sym.nimages > 1 ? &w->sym : NULL;
    cfg.groups = w->groups;
    cfg.ngroups = w->ngroups;
    cfg.workload = w;
    const char *name = orr_net_kind_name(kind);
    for (size_t r = 0; (caps & ORR_NET_CAP_LINKS) && !cfg.sym && r < w->nranks; r++) {
        if (w->ranks[r].weight <= 1) continue;
        if (caps & ORR_NET_CAP_SYMMETRY)
            orr_fail(err, "--net %s: rank %u stands for %u GPUs (symmetry), but the workload does not say which "
                          "(no orr_sym), so the %s backend cannot replay their traffic; run with --no-symmetry",
                     name, w->ranks[r].gpu, w->ranks[r].weight, name);
        else
            orr_fail(err, "--net %s: rank %u stands for %u GPUs (symmetry), but the %s backend needs every GPU "
                          "simulated to see their traffic; run with --no-symmetry",
                     name, w->ranks[r].gpu, w->ranks[r].weight, name);
        return NULL;
    }
    return orr_net_create_cfg(kind, e, g, c, &cfg, err);
}

orr_net *orr_net_create(orr_net_kind kind, orr_engine *e, const orr_gpu *g, const orr_cluster *c,
                        orr_err *err)
{
    return orr_net_create_cfg(kind, e, g, c, NULL, err);
}

int orr_net_kind_parse(const char *name, orr_net_kind *out)
{
    for (int k = 0; k < ORR_NET_KIND_COUNT; k++)
        if (strcasecmp(name, orr_net_kind_name((orr_net_kind)k)) == 0) return *out = (orr_net_kind)k, 0;
    return -1;
}

void orr_net_destroy(orr_net *n)
{
    if (!n) return;
    orr_link_bins_free(n->link_bins); /* the backend's models only point at it */
    if (n->destroy) n->destroy(n);
    else free(n);
}

const char *orr_net_kind_name(orr_net_kind k)
{
    switch (k) {
    case ORR_NET_ANALYTIC: return "analytic";
    case ORR_NET_FLOW: return "flow";
    case ORR_NET_PACKET: return "packet";
    default: return "unknown";
    }
}
