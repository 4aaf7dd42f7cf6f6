/*
 * flow_net.c - the flow backend behind orr_net (net.h): it builds the cluster's topology
 * (src/hw/topo_build.c), runs the max-min flow model on it (src/net/flow/flow.c) and executes
 * every collective and send as NCCL's steps (src/comm/sched.c), with link capacities derated by
 * the cluster's protocol efficiencies (NVLink links by nvlink_eff, NIC and switch links by
 * net_eff) as the analytic model derates its bandwidths, so that with no contention both backends
 * agree (tests/test_collsched.c).
 *
 * With a collapsed workload (symmetry), collectives and sends run on every GPU's images, and
 * flows inside mirrored servers are left out: src/net/images.c.
 */
#include "net_internal.h"
#include "orrery/collsched.h"
#include "orrery/flow.h"

#include <stdlib.h>
#include <string.h>

typedef struct flow_net {
    orr_topo topo;
    orr_transport *tr;
    orr_runner *run;
    orr_sched sched;          /* scratch */
    orr_sched_opts opts;
    orr_net_images *im;       /* NULL: no symmetry, every GPU simulated */
} flow_net;

/* ---- the backend ---- */

orr_transport *orr_net_flow_model(const orr_net *n, const orr_topo *topo, const orr_route_opts *route)
{
    orr_flow_opts o;
    memset(&o, 0, sizeof o);
    o.tier_scale[ORR_TIER_NVLINK] = n->cluster->nvlink_eff;
    for (int t = ORR_TIER_HOST; t < ORR_TIER_COUNT; t++) o.tier_scale[t] = n->cluster->net_eff;
    o.route = *route;
    return orr_flow_create(n->engine, topo, &o);
}

static void flow_send(orr_net *n, uint32_t src, uint32_t dst, uint64_t bytes, orr_event_fn done, void *ctx,
                      uint64_t arg)
{
    flow_net *f = n->impl;
    if (f->im) orr_net_images_send(f->im, n, f->run, src, dst, bytes, done, ctx, arg);
    else orr_net_run_send(n, f->run, &f->sched, src, dst, bytes, done, ctx, arg);
}

static void flow_collective(orr_net *n, const orr_coll_desc *d, const uint32_t *members, orr_event_fn done,
                            void *ctx, uint64_t arg)
{
    flow_net *f = n->impl;
    if (f->im) orr_net_images_collective(f->im, n, f->run, &f->opts, d, members, done, ctx, arg);
    else orr_net_run_collective(n, f->run, &f->sched, &f->opts, d, members, done, ctx, arg);
}

static void flow_destroy(orr_net *n)
{
    flow_net *f = n->impl;
    orr_runner_free(f->run);
    f->tr->destroy(f->tr);
    orr_net_images_free(f->im);
    orr_topo_free(&f->topo);
    orr_sched_free(&f->sched);
    free(f);
    free(n);
}

/* ---- statistics ---- */

orr_transport *orr_net_transport(const orr_net *n)
{
    return n && n->kind == ORR_NET_FLOW ? ((flow_net *)n->impl)->tr : NULL;
}

static uint32_t flow_link_rep(const orr_net *n, uint32_t link)
{
    return orr_net_images_link_rep(((const flow_net *)n->impl)->im, link);
}

static const orr_topo *flow_topo(const orr_net *n) { return ((const flow_net *)n->impl)->tr->topo; }

static void flow_sync(orr_net *n) { orr_flow_sync(((flow_net *)n->impl)->tr); }

/* A link as the whole job loads it: a mirrored server's NVLink link reports its representative's. */
static void flow_link_use(const orr_net *n, uint32_t link, orr_net_link_use *out)
{
    const flow_net *f = n->impl;
    if (orr_net_images_link_use(f->im, link, out)) return; /* a rotated server's */
    const orr_flow_link_stats *st = orr_flow_link_stats_of(f->tr, flow_link_rep(n, link));
    out->bytes = st->bytes;
    out->bottleneck_ps = st->saturated_ps;
}

static void flow_track_links(orr_net *n)
{
    flow_net *f = n->impl;
    orr_net_images_no_rotation(f->im);
    orr_flow_set_link_bins(f->tr, n->link_bins);
}

static void flow_summarise(const orr_net *n, orr_net_counters *out)
{
    const flow_net *f = n->impl;
    out->flows = orr_flow_get_totals(f->tr).flows;
    orr_net_images_count(f->im, out);
}

int orr_flow_net_init(orr_net *n, const orr_net_config *cfg, orr_err *err)
{
    if (!cfg || cfg->gpus == 0)
        return orr_fail(err, "network backend flow: needs the job's GPU count and topology");
    flow_net *f = orr_xcalloc(1, sizeof *f);
    if (orr_topo_build(&f->topo, n->gpu, n->cluster, cfg->gpus, &cfg->topo, err)) {
        free(f);
        return -1;
    }
    orr_route_opts route = {.ecmp = 1, .pxn = cfg->pxn, .gpus_per_node = n->cluster->gpus_per_node};
    f->tr = orr_net_flow_model(n, &f->topo, &route);
    f->run = orr_runner_create(f->tr);
    f->opts.gpus_per_node = n->cluster->gpus_per_node;
    f->opts.max_flows = cfg->max_flows;
    f->im = orr_net_images_new(&f->topo, n->gpu, n->cluster, f->tr, cfg);
    n->impl = f;
    n->send = flow_send;
    n->collective = flow_collective;
    n->destroy = flow_destroy;
    n->topo = flow_topo;
    n->sync = flow_sync;
    n->link_use = flow_link_use;
    n->track_links = flow_track_links;
    n->link_rep = flow_link_rep;
    n->summarise = flow_summarise;
    return 0;
}
