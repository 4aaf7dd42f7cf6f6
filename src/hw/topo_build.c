/*
 * topo_build.c - topologies built from a cluster (NVSwitch per node, one NIC per GPU, a
 * rail-optimised fat-tree or a 2/3-tier Clos with oversubscription) and the routing rules on top
 * of shortest-path ECMP (same-node traffic on NVLink, PXN). include/orrery/topo_build.h describes
 * the shapes.
 *
 * Node numbering: the GPU hosts first (0..gpus-1, so host index == global rank), then one
 * NVSwitch per node, then leaves, aggregation switches, spines (cores). Link rates are bytes/s per
 * direction, the raw hardware rates: protocol efficiency is applied by the network backends.
 */
#include "orrery/topo_build.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *const KIND_NAMES[ORR_TOPO_KIND_COUNT] = {"rail-fat-tree", "fat-tree", "clos3", "hpcc"};

const char *orr_topo_kind_name(orr_topo_kind k)
{
    return (unsigned)k < ORR_TOPO_KIND_COUNT ? KIND_NAMES[k] : "unknown";
}

int orr_topo_kind_parse(const char *name, orr_topo_kind *out)
{
    for (int k = 0; k < ORR_TOPO_KIND_COUNT; k++)
        if (strcasecmp(name, KIND_NAMES[k]) == 0) return *out = (orr_topo_kind)k, 0;
    if (strcasecmp(name, "rail") == 0 || strcasecmp(name, "rail-optimized") == 0)
        return *out = ORR_TOPO_RAIL_FAT_TREE, 0;
    if (strcasecmp(name, "clos") == 0 || strcasecmp(name, "clos2") == 0) return *out = ORR_TOPO_FAT_TREE, 0;
    return -1;
}

void orr_topo_spec_default(orr_topo_spec *s, const orr_cluster *c)
{
    memset(s, 0, sizeof *s);
    s->oversub = 1.0;
    if (!c || orr_topo_kind_parse(c->topology, &s->kind)) s->kind = ORR_TOPO_FAT_TREE;
    if (s->kind == ORR_TOPO_HPCC) s->kind = ORR_TOPO_FAT_TREE; /* a cluster names no file */
}

static uint32_t or_default(uint32_t v, uint32_t d) { return v ? v : d; }

/* Hosts, NVSwitches and their NVLink links. Returns the node id of the first NVSwitch. */
static void add_nodes_nvlink(orr_topo *t, const orr_gpu *g, uint32_t gpus, uint32_t gpn)
{
    for (uint32_t i = 0; i < gpus; i++) orr_topo_add_node(t, ORR_NODE_HOST);
    uint32_t nodes = (gpus + gpn - 1) / gpn;
    for (uint32_t n = 0; n < nodes; n++) {
        uint32_t nvs = orr_topo_add_node(t, ORR_NODE_NVSWITCH);
        for (uint32_t i = n * gpn; i < gpus && i < (n + 1) * gpn; i++)
            orr_topo_add_link(t, i, nvs, g->nvlink_Bps, 0, 0, ORR_TIER_NVLINK);
    }
}

/* `count` switches; returns the first id. */
static uint32_t add_switches(orr_topo *t, uint32_t count)
{
    uint32_t first = t->n_nodes;
    for (uint32_t i = 0; i < count; i++) orr_topo_add_node(t, ORR_NODE_SWITCH);
    return first;
}

/* Every switch of [a, a+na) to every switch of [b, b+nb) at rate. */
static void connect_all(orr_topo *t, uint32_t a, uint32_t na, uint32_t b, uint32_t nb, double rate, uint8_t tier)
{
    for (uint32_t i = 0; i < na; i++)
        for (uint32_t j = 0; j < nb; j++) orr_topo_add_link(t, a + i, b + j, rate, 0, 0, tier);
}

/* Rail-optimised: unit u of `unit` nodes has gpn leaves; GPU r of node n goes to leaf r of its unit. */
static void build_rail(orr_topo *t, const orr_cluster *c, uint32_t gpus, uint32_t gpn, const orr_topo_spec *s)
{
    uint32_t nodes = (gpus + gpn - 1) / gpn, unit = or_default(s->leaf_hosts, 32);
    uint32_t units = (nodes + unit - 1) / unit, spines = or_default(s->spines, 8);
    uint32_t leaf0 = add_switches(t, units * gpn);
    uint32_t spine0 = add_switches(t, spines);
    for (uint32_t i = 0; i < gpus; i++) {
        uint32_t n = i / gpn;
        orr_topo_add_link(t, i, leaf0 + (n / unit) * gpn + i % gpn, orr_cluster_gpu_nic_Bps(c), 0, 0, ORR_TIER_HOST);
    }
    double up = (double)unit * orr_cluster_gpu_nic_Bps(c) / (s->oversub * spines);
    connect_all(t, leaf0, units * gpn, spine0, spines, up, ORR_TIER_AGG);
}

/* Leaves of `ports` NIC ports filled in rank order; returns the number of leaves and their first id. */
static uint32_t add_leaves(orr_topo *t, const orr_cluster *c, uint32_t gpus, uint32_t ports, uint32_t *first)
{
    uint32_t leaves = (gpus + ports - 1) / ports;
    *first = add_switches(t, leaves);
    for (uint32_t i = 0; i < gpus; i++) orr_topo_add_link(t, i, *first + i / ports, orr_cluster_gpu_nic_Bps(c), 0, 0, ORR_TIER_HOST);
    return leaves;
}

static void build_fat_tree(orr_topo *t, const orr_cluster *c, uint32_t gpus, const orr_topo_spec *s)
{
    uint32_t ports = or_default(s->leaf_hosts, 32), spines = or_default(s->spines, 8), leaf0;
    uint32_t leaves = add_leaves(t, c, gpus, ports, &leaf0);
    uint32_t spine0 = add_switches(t, spines);
    connect_all(t, leaf0, leaves, spine0, spines, ports * orr_cluster_gpu_nic_Bps(c) / (s->oversub * spines), ORR_TIER_AGG);
}

static void build_clos3(orr_topo *t, const orr_cluster *c, uint32_t gpus, const orr_topo_spec *s)
{
    uint32_t ports = or_default(s->leaf_hosts, 32), aggs = or_default(s->spines, 8);
    uint32_t per_pod = or_default(s->pod_leaves, 8), leaf0;
    uint32_t leaves = add_leaves(t, c, gpus, ports, &leaf0);
    uint32_t pods = (leaves + per_pod - 1) / per_pod, cores = aggs;
    uint32_t agg0 = add_switches(t, pods * aggs);
    uint32_t core0 = add_switches(t, cores);
    double leaf_up = ports * orr_cluster_gpu_nic_Bps(c) / (s->oversub * aggs);
    for (uint32_t p = 0; p < pods; p++) {
        uint32_t first = p * per_pod, n = leaves - first < per_pod ? leaves - first : per_pod;
        connect_all(t, leaf0 + first, n, agg0 + p * aggs, aggs, leaf_up, ORR_TIER_AGG);
    }
    /* an aggregation switch carries per_pod leaf uplinks down; the same up, spread over the cores */
    connect_all(t, agg0, pods * aggs, core0, cores, per_pod * leaf_up / cores, ORR_TIER_CORE);
}

int orr_topo_build(orr_topo *t, const orr_gpu *g, const orr_cluster *c, uint32_t gpus,
                   const orr_topo_spec *s, orr_err *err)
{
    if (s->kind == ORR_TOPO_HPCC) {
        if (!s->path[0]) return orr_topo_init(t), orr_fail(err, "topology.path: an hpcc topology needs a file");
        if (orr_topo_read_hpcc(t, s->path, err)) return -1;
        if (t->n_hosts < gpus) {
            int rc = orr_fail(err, "%s: %u hosts, but the job has %u GPUs", s->path, t->n_hosts, gpus);
            orr_topo_free(t);
            return rc;
        }
        return 0;
    }
    orr_topo_init(t);
    if (gpus == 0) return orr_fail(err, "topology: no GPUs");
    if (!(s->oversub >= 1.0) || s->oversub > 1000)
        return orr_fail(err, "topology.oversub: expected a ratio from 1 to 1000, got %g", s->oversub);
    if (!(g->nvlink_Bps > 0) || !(orr_cluster_gpu_nic_Bps(c) > 0))
        return orr_fail(err, "topology: the GPU's NVLink and the cluster's NIC need a bandwidth");
    uint32_t gpn = or_default(c->gpus_per_node, 1);
    add_nodes_nvlink(t, g, gpus, gpn);
    switch (s->kind) {
    case ORR_TOPO_RAIL_FAT_TREE: build_rail(t, c, gpus, gpn, s); break;
    case ORR_TOPO_CLOS3: build_clos3(t, c, gpus, s); break;
    default: build_fat_tree(t, c, gpus, s); break;
    }
    t->gpus_per_server = gpn;
    char what[64];
    snprintf(what, sizeof what, "topology %s", orr_topo_kind_name(s->kind));
    if (orr_topo_finish(t, what, err)) {
        orr_topo_free(t);
        return -1;
    }
    return 0;
}

/* The first NVSwitch a and b both reach, in a's link order. The second hop is the reverse of b's
 * link to that switch (link ^ 1, topo.h), so only the two hosts' few links are scanned, not the
 * switch's, and not even those when the hosts' first NVSwitch links (nvl_up) go to one switch. */
int orr_topo_nvlink_path(const orr_topo *t, uint32_t a, uint32_t b, uint32_t links[2])
{
    uint32_t ua = t->nvl_up[a], ub = t->nvl_up[b];
    if (ua == UINT32_MAX) return 0;
    if (ub != UINT32_MAX && t->links[ua].dst == t->links[ub].dst) { /* the scan below would stop here */
        links[0] = ua;
        links[1] = ub ^ 1;
        return 2;
    }
    uint32_t na = t->host_node[a], nb = t->host_node[b];
    for (uint32_t i = t->out_start[na]; i < t->out_start[na + 1]; i++) {
        uint32_t l = t->out[i], sw = t->links[l].dst;
        if (t->kind[sw] != ORR_NODE_NVSWITCH) continue;
        for (uint32_t j = t->out_start[nb]; j < t->out_start[nb + 1]; j++)
            if (t->links[t->out[j]].dst == sw) {
                links[0] = l;
                links[1] = t->out[j] ^ 1;
                return 2;
            }
    }
    return 0;
}

int orr_topo_route(const orr_topo *t, const orr_route_opts *o, uint32_t src, uint32_t dst,
                   uint64_t flow_hash, uint32_t *links, uint32_t max)
{
    if (src >= t->n_hosts || dst >= t->n_hosts) return -1;
    if (src == dst) return 0;
    uint32_t gpn = o->gpus_per_node ? o->gpus_per_node : t->gpus_per_server;
    if (gpn > 1 && max >= 2) {
        if (src / gpn == dst / gpn) {
            int n = orr_topo_nvlink_path(t, src, dst, links);
            if (n) return n;
        } else if (o->pxn && src % gpn != dst % gpn) {
            uint32_t proxy = src / gpn * gpn + dst % gpn;
            int n = proxy < t->n_hosts ? orr_topo_nvlink_path(t, src, proxy, links) : 0;
            if (n) {
                int m = orr_topo_path(t, proxy, dst, flow_hash, o->ecmp, links + n, max - (uint32_t)n);
                return m < 0 ? -1 : n + m;
            }
        }
    }
    return orr_topo_path(t, src, dst, flow_hash, o->ecmp, links, max);
}
