/*
 * nccl.c - NCCL's collective algorithms as closed forms (the analytic backend's cost model).
 *
 * Each algorithm reduces to three sums at NCCL's Simple protocol: the latency of its NVLink hops
 * (nvlink_lat each), of its network hops (net_lat each), and the transfer time of its busiest
 * link (bytes / achieved bandwidth: nvlink_Bps x nvlink_eff within a node, nic_Bps x net_eff per
 * NIC across nodes). A collective's time is then
 *
 *     coll_base + min over protocols p of
 *         nvlink_latency x nvlink_lat_frac[p] + net_latency x net_lat_frac[p] + transfer / bw_frac[p]
 *
 * the alpha-beta form of NCCL's own tuner (src/graph/tuning.cc: base latency + hops x hardware
 * latency + bytes / bus bandwidth, per algorithm and protocol) and of Moye's white-box model
 * (§5.3, eqs. 2-5) with its chunk rounds folded into the bandwidth term. docs/models.md has every
 * formula, the calibration against data/validation and the per-row errors.
 *
 * Algorithms (n ranks over N nodes, k = ranks per node, S = bytes in NCCL's convention):
 *   ring  all-reduce 2 passes round the ring, 2(n-1)/n x S per link; all-gather, reduce-scatter
 *         one pass, (n-1)/n x S; broadcast/reduce a pipelined chain, S; all-to-all pairwise, each
 *         GPU's cross-node share over its own NIC, the rest over NVLink. Of a pass's n-1 hops,
 *         N-1 cross nodes. NCCL builds one ring per NIC, each entering and leaving every node
 *         once, so across nodes the ring's bus bandwidth is the node's k NICs together.
 *   tree  all-reduce only (NCCL's double binary tree between nodes, a chain inside each node):
 *         2 ceil(log2 N) network and 2(k-1) NVLink hops; each node's NICs carry 2(N-1)/N x S,
 *         each GPU's NVLink 2S. Other collectives have no tree in NCCL: the ring.
 *   hier  intra-node phase(s) on NVLink rings and an inter-node phase of k parallel rings, one
 *         per NIC, over S/k (all-reduce: reduce-scatter, all-reduce, all-gather).
 *   nvls  all-reduce only, where the cluster has NVLink SHARP (NVSwitch 3+): the switch reduces
 *         (multimem load-reduce) and multicasts (multimem store), so each GPU's NVLink carries S
 *         each way instead of a ring's 2(n-1)/n x S. Across nodes NCCL's NVLS-tree: NVLS inside
 *         each node, pipelined with the tree between nodes (the tree's network load and hops).
 *         Simple protocol only, with its own fixed latency (nvls_lat) and no per-hop NVLink
 *         latency. Other collectives: the ring.
 */
#include "orrery/comm.h"

#include <math.h>
#include <string.h>

/* NCCL's protocols. bw_frac: payload fraction of the link bandwidth (LL sends 4 bytes of data
 * with each 4-byte flag, LL128 120 of every 128 bytes). nvlink_lat_frac, net_lat_frac: per-step
 * latency relative to Simple's, the ratios of NCCL's tuning.cc hardware latencies for rings
 * (NVLink: LL 0.6, LL128 1.9, Simple 3.4 us; network: LL 2.7, LL128 4.0, Simple 14 us). The
 * cluster's nvlink_lat_ps and net_lat_ps are Simple's per-step latencies. */
typedef struct proto_model {
    const char *name;
    double bw_frac;
    double nvlink_lat_frac;
    double net_lat_frac;
} proto_model;

static const proto_model PROTOCOLS[] = {
    {"LL", 0.5, 0.6 / 3.4, 2.7 / 14.0},
    {"LL128", 120.0 / 128.0, 1.9 / 3.4, 4.0 / 14.0},
    {"Simple", 1.0, 1.0, 1.0},
};
#define NPROTOCOLS (sizeof PROTOCOLS / sizeof PROTOCOLS[0])

/* Longest time any collective or transfer is reported to take (about 11.6 days): what a link
 * of zero bandwidth gives, so sums of such times cannot overflow. */
#define COMM_MAX_PS (ORR_PS_PER_S * 1000000LL)

/* The parts of an algorithm's time, in seconds, at the Simple protocol: the sums of its steps'
 * latencies on NVLink and on the network, the network plugin's latency over the same network
 * steps (the same for every protocol: NCCL adds the plugin's latencyInter to hwLat[NET][p]), and
 * the transfer time of its busiest link. */
typedef struct coll_cost {
    double nvlink_latency_s;
    double net_latency_s;
    double net_plugin_latency_s;
    double transfer_s;
    double fixed_latency_s; /* the same at every protocol (NVLS's) */
    int simple_only;        /* NCCL runs the algorithm at the Simple protocol only (NVLS) */
} coll_cost;

/* Shape of a communicator after defaults: n ranks on `nodes` nodes, `per_node` on each. */
typedef struct comm_shape {
    uint32_t n, nodes, per_node;
} comm_shape;

static double ps_to_s(int64_t ps) { return (double)ps / (double)ORR_PS_PER_S; }

static int64_t s_to_ps(double s)
{
    if (!(s > 0)) return 0;
    double ps = s * (double)ORR_PS_PER_S;
    return ps >= (double)COMM_MAX_PS ? COMM_MAX_PS : (int64_t)llround(ps);
}

static double min_d(double a, double b) { return a < b ? a : b; }
static double max_d(double a, double b) { return a > b ? a : b; }

/* Seconds to move bytes at Bps; infinite for a link of no bandwidth. */
static double transfer_seconds(double bytes, double Bps)
{
    if (bytes <= 0) return 0;
    return Bps > 0 ? bytes / Bps : INFINITY;
}

/* Achieved NVLink bandwidth of one GPU, per direction, bytes/s. */
static double nvlink_bus_Bps(const orr_gpu *g, const orr_cluster *c)
{
    return g->nvlink_Bps * c->nvlink_eff;
}

/* Achieved bandwidth of one GPU's NIC, per direction, bytes/s. */
static double nic_bus_Bps(const orr_cluster *c) { return orr_cluster_gpu_nic_Bps(c) * c->net_eff; }

/* Bus bandwidth of a ring over the shape: NVLink inside one node; across nodes the ring leaves
 * each node once per channel, and NCCL spreads the k channels over the node's k NICs, so each
 * GPU is the exit of one channel (its send goes to its NIC) and forwards over NVLink in the other
 * k-1: the bottleneck is the smaller of one GPU's NVLink carrying (k-1)/k of the ring's bytes
 * and the k NICs together. */
static double ring_bus_bandwidth_Bps(const orr_gpu *g, const orr_cluster *c, comm_shape sh)
{
    if (sh.nodes <= 1) return nvlink_bus_Bps(g, c);
    double net = sh.per_node * nic_bus_Bps(c);
    if (sh.per_node <= 1) return net;
    return min_d(nvlink_bus_Bps(g, c) * sh.per_node / (sh.per_node - 1), net);
}

/* The latency of a ring's steps: a chunk goes once round the ring per pass (twice for
 * all-reduce), each hop after the previous one, so the latency is the sum over its hops; of
 * `steps` hops, `inter_steps` cross a node boundary (NCCL's tuner counts them the same way). */
static void add_ring_latency(coll_cost *cost, const orr_cluster *c, double steps, double inter_steps)
{
    cost->nvlink_latency_s += (steps - inter_steps) * ps_to_s(c->nvlink_lat_ps);
    cost->net_latency_s += inter_steps * ps_to_s(c->net_lat_ps);
    cost->net_plugin_latency_s += inter_steps * ps_to_s(c->net_plugin_lat_ps);
}

/* Passes round the ring of collective k: 2 for all-reduce (reduce-scatter then all-gather),
 * 1 otherwise. Each pass is n-1 hops, nodes-1 of them between nodes. */
static double ring_passes(orr_coll_kind k) { return k == ORR_COLL_ALLREDUCE ? 2.0 : 1.0; }

/* Bytes each link of a ring carries, for S bytes in NCCL's convention. */
static double ring_link_bytes(orr_coll_kind k, uint32_t n, double S)
{
    switch (k) {
    case ORR_COLL_ALLREDUCE: return 2.0 * (n - 1) / n * S;
    case ORR_COLL_ALLGATHER:
    case ORR_COLL_REDUCESCATTER: return (double)(n - 1) / n * S;
    default: return S; /* broadcast, reduce: the whole buffer flows down the chain */
    }
}

/* All-to-all: n-1 pairwise exchanges posted together; a GPU's S/n slices for the other k-1 GPUs
 * of its node go over NVLink, those for the n-k GPUs elsewhere over its own NIC, concurrently.
 * Latency: one step per peer on NVLink and one per remote node on the network (the sends to the
 * GPUs of one remote node leave together), as a ring pass counts them. */
static coll_cost alltoall_cost(const orr_gpu *g, const orr_cluster *c, comm_shape sh, double S)
{
    coll_cost cost = {0, 0, 0, 0, 0, 0};
    double intra = transfer_seconds(S * (sh.per_node - 1) / sh.n, nvlink_bus_Bps(g, c));
    double inter = transfer_seconds(S * (sh.n - sh.per_node) / sh.n, nic_bus_Bps(c));
    add_ring_latency(&cost, c, (sh.per_node - 1) + (sh.nodes - 1), sh.nodes - 1);
    cost.transfer_s = max_d(intra, inter);
    return cost;
}

static coll_cost ring_cost(const orr_gpu *g, const orr_cluster *c, orr_coll_kind k, comm_shape sh,
                           double S)
{
    coll_cost cost = {0, 0, 0, 0, 0, 0};
    if (sh.n <= 1) return cost;
    if (k == ORR_COLL_ALLTOALL) return alltoall_cost(g, c, sh, S);
    double passes = ring_passes(k);
    add_ring_latency(&cost, c, passes * (sh.n - 1), passes * (sh.nodes - 1));
    cost.transfer_s = transfer_seconds(ring_link_bytes(k, sh.n, S), ring_bus_bandwidth_Bps(g, c, sh));
    return cost;
}

static uint32_t ceil_log2(uint32_t x)
{
    uint32_t l = 0;
    while (l < 32 && (1ull << l) < x) l++;
    return l;
}

/* NCCL's double binary tree for all-reduce: reduce up and broadcast down, pipelined, so the
 * time is the latency of both passes plus the busiest of NVLink (2S per GPU along the chain) and
 * the node's NICs (2(N-1)/N x S per node over its k NICs). Other collectives: the ring. */
static coll_cost tree_cost(const orr_gpu *g, const orr_cluster *c, orr_coll_kind k, comm_shape sh,
                           double S)
{
    if (k != ORR_COLL_ALLREDUCE || sh.n <= 1) return ring_cost(g, c, k, sh, S);
    coll_cost cost = {0, 0, 0, 0, 0, 0};
    double intra_s = sh.per_node > 1 ? transfer_seconds(2.0 * S, nvlink_bus_Bps(g, c)) : 0;
    double inter_s = 0;
    if (sh.nodes > 1)
        inter_s = transfer_seconds(2.0 * (sh.nodes - 1) / sh.nodes * S, sh.per_node * nic_bus_Bps(c));
    cost.net_latency_s = 2.0 * ceil_log2(sh.nodes) * ps_to_s(c->net_lat_ps);
    cost.net_plugin_latency_s = 2.0 * ceil_log2(sh.nodes) * ps_to_s(c->net_plugin_lat_ps);
    cost.nvlink_latency_s = 2.0 * (sh.per_node - 1) * ps_to_s(c->nvlink_lat_ps);
    cost.transfer_s = max_d(intra_s, inter_s);
    return cost;
}

/* NVLS all-reduce: inside a node the switch reduces and multicasts, so each GPU sends its S bytes
 * once into the switch and receives the S reduced bytes once (NVLS); across nodes (NVLS-tree) the
 * node's reduced data goes up and down NCCL's tree between nodes, pipelined with the in-switch
 * part, so the time is the busier of the two plus the tree's network hops. Only where the
 * cluster has NVLS and a node holds more than one rank; otherwise the ring. */
static coll_cost nvls_cost(const orr_gpu *g, const orr_cluster *c, orr_coll_kind k, comm_shape sh, double S)
{
    if (k != ORR_COLL_ALLREDUCE || !c->nvls || sh.per_node <= 1) return ring_cost(g, c, k, sh, S);
    coll_cost cost = {0, 0, 0, 0, 0, 1};
    double intra_s = transfer_seconds(S, nvlink_bus_Bps(g, c));
    double inter_s = 0;
    if (sh.nodes > 1)
        inter_s = transfer_seconds(2.0 * (sh.nodes - 1) / sh.nodes * S, sh.per_node * nic_bus_Bps(c));
    cost.net_latency_s = 2.0 * ceil_log2(sh.nodes) * ps_to_s(c->net_lat_ps);
    cost.net_plugin_latency_s = 2.0 * ceil_log2(sh.nodes) * ps_to_s(c->net_plugin_lat_ps);
    cost.fixed_latency_s = ps_to_s(c->nvls_lat_ps);
    cost.transfer_s = max_d(intra_s, inter_s);
    return cost;
}

static coll_cost add_cost(coll_cost a, coll_cost b)
{
    a.nvlink_latency_s += b.nvlink_latency_s;
    a.net_latency_s += b.net_latency_s;
    a.net_plugin_latency_s += b.net_plugin_latency_s;
    a.transfer_s += b.transfer_s;
    a.fixed_latency_s += b.fixed_latency_s;
    a.simple_only |= b.simple_only;
    return a;
}

/* Hierarchical: phases on the k GPUs of a node (NVLink ring) and on the N GPUs of one rail (one
 * per node, k such rings in parallel, each over its own NIC), run one after the other. */
static coll_cost hier_cost(const orr_gpu *g, const orr_cluster *c, orr_coll_kind k, comm_shape sh,
                           double S)
{
    if (sh.nodes <= 1 || sh.per_node <= 1 || k == ORR_COLL_ALLTOALL) return ring_cost(g, c, k, sh, S);
    comm_shape node = {sh.per_node, 1, sh.per_node};
    comm_shape rail = {sh.nodes, sh.nodes, 1};
    double slice = S / sh.per_node;
    switch (k) {
    case ORR_COLL_ALLREDUCE:
        return add_cost(add_cost(ring_cost(g, c, ORR_COLL_REDUCESCATTER, node, S),
                                 ring_cost(g, c, ORR_COLL_ALLREDUCE, rail, slice)),
                        ring_cost(g, c, ORR_COLL_ALLGATHER, node, S));
    case ORR_COLL_ALLGATHER:
    case ORR_COLL_REDUCESCATTER:
        return add_cost(ring_cost(g, c, k, rail, slice), ring_cost(g, c, k, node, S));
    default: /* broadcast, reduce: across the nodes, then inside each */
        return add_cost(ring_cost(g, c, k, rail, S), ring_cost(g, c, k, node, S));
    }
}

/* Fastest protocol for a cost, in seconds:
 *   coll_base + NVLink latency x nvlink_lat_frac + network latency x net_lat_frac
 *             + network plugin latency + fixed latency + transfer / bw_frac
 * (Simple only where the algorithm has no other protocol);
 * its index into PROTOCOLS goes to *proto and its latency part (seconds) to *latency_s. */
static double best_protocol_parts(const orr_cluster *c, coll_cost cost, size_t *proto, double *latency_s)
{
    double best = INFINITY;
    for (size_t p = cost.simple_only ? NPROTOCOLS - 1 : 0; p < NPROTOCOLS; p++) {
        const proto_model *pm = &PROTOCOLS[p];
        double lat = cost.nvlink_latency_s * pm->nvlink_lat_frac + cost.net_latency_s * pm->net_lat_frac +
                     cost.net_plugin_latency_s + cost.fixed_latency_s;
        double t = lat + cost.transfer_s / pm->bw_frac;
        if (t < best) {
            best = t;
            *proto = p;
            *latency_s = lat;
        }
    }
    return ps_to_s(c->coll_base_ps) + best;
}

static double best_protocol_seconds(const orr_cluster *c, coll_cost cost)
{
    size_t p = 0;
    double lat = 0;
    return best_protocol_parts(c, cost, &p, &lat);
}

/* The descriptor's shape with defaults: nodes in 1..n, per_node ceil(n / nodes) when not given. */
static comm_shape shape_of(const orr_coll_desc *d)
{
    comm_shape sh;
    sh.n = d->size;
    sh.nodes = d->nodes == 0 ? 1 : d->nodes > d->size ? d->size : d->nodes;
    sh.per_node = d->per_node ? d->per_node : (sh.n + sh.nodes - 1) / sh.nodes;
    if (sh.per_node > sh.n) sh.per_node = sh.n;
    return sh;
}

/* The cost parts of algorithm a (RING, TREE or HIER) for d (not trivial). */
static coll_cost algo_cost(const orr_gpu *g, const orr_cluster *c, const orr_coll_desc *d, orr_coll_algo a)
{
    comm_shape sh = shape_of(d);
    double S = (double)d->bytes;
    switch (a) {
    case ORR_ALGO_TREE: return tree_cost(g, c, d->kind, sh, S);
    case ORR_ALGO_HIER: return hier_cost(g, c, d->kind, sh, S);
    case ORR_ALGO_NVLS: return nvls_cost(g, c, d->kind, sh, S);
    default: return ring_cost(g, c, d->kind, sh, S);
    }
}

/* Time of algorithm a (RING, TREE or HIER) in seconds; 0 for a trivial collective. */
static double algo_seconds(const orr_gpu *g, const orr_cluster *c, const orr_coll_desc *d,
                           orr_coll_algo a)
{
    if (d->size <= 1 || d->bytes == 0) return 0;
    return best_protocol_seconds(c, algo_cost(g, c, d, a));
}

int64_t orr_comm_ring_ps(const orr_gpu *g, const orr_cluster *c, const orr_coll_desc *d)
{
    return s_to_ps(algo_seconds(g, c, d, ORR_ALGO_RING));
}

int64_t orr_comm_tree_ps(const orr_gpu *g, const orr_cluster *c, const orr_coll_desc *d)
{
    return s_to_ps(algo_seconds(g, c, d, ORR_ALGO_TREE));
}

int64_t orr_comm_hier_ps(const orr_gpu *g, const orr_cluster *c, const orr_coll_desc *d)
{
    return s_to_ps(algo_seconds(g, c, d, ORR_ALGO_HIER));
}

int64_t orr_comm_nvls_ps(const orr_gpu *g, const orr_cluster *c, const orr_coll_desc *d)
{
    return s_to_ps(algo_seconds(g, c, d, ORR_ALGO_NVLS));
}

/*
 * AUTO picks as NCCL's tuner does: the fastest of the algorithms NCCL has for the collective.
 * All-reduce: ring, tree, hierarchical (standing for NCCL's CollNet-chain family, intra-node
 * reduction around an inter-node exchange) and, where the cluster has NVLS, NVLS / NVLS-tree.
 * All-gather, reduce-scatter, broadcast, reduce, all-to-all: the ring (NCCL's NVLS all-gather and
 * reduce-scatter load each GPU's NVLink with the same (n-1)/n x S as the ring, so they add
 * nothing to model); TREE, HIER and NVLS asked for explicitly are still computed (NVLS for an
 * all-reduce only, else the ring). Ties go to the ring.
 */
int64_t orr_comm_coll_ps(const orr_gpu *g, const orr_cluster *c, const orr_coll_desc *d,
                         orr_coll_algo *chosen)
{
    orr_coll_algo best_algo = ORR_ALGO_RING;
    int64_t best;
    if (d->algo == ORR_ALGO_TREE || d->algo == ORR_ALGO_HIER || d->algo == ORR_ALGO_NVLS) {
        best_algo = d->algo;
        best = s_to_ps(algo_seconds(g, c, d, d->algo));
    } else {
        best = s_to_ps(algo_seconds(g, c, d, ORR_ALGO_RING));
        if (d->algo == ORR_ALGO_AUTO && d->kind == ORR_COLL_ALLREDUCE) {
            for (int a = ORR_ALGO_TREE; a <= ORR_ALGO_NVLS; a++) {
                int64_t t = s_to_ps(algo_seconds(g, c, d, (orr_coll_algo)a));
                if (t < best) {
                    best = t;
                    best_algo = (orr_coll_algo)a;
                }
            }
        }
    }
    if (chosen) *chosen = best_algo;
    return best;
}

int64_t orr_comm_plan(const orr_gpu *g, const orr_cluster *c, const orr_coll_desc *d, orr_coll_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    plan->total_ps = orr_comm_coll_ps(g, c, d, &plan->algo);
    plan->proto_name = PROTOCOLS[NPROTOCOLS - 1].name;
    plan->bw_frac = 1.0;
    if (d->size <= 1 || d->bytes == 0) return 0;
    size_t p = NPROTOCOLS - 1;
    double lat = 0;
    best_protocol_parts(c, algo_cost(g, c, d, plan->algo), &p, &lat);
    plan->proto_name = PROTOCOLS[p].name;
    plan->bw_frac = PROTOCOLS[p].bw_frac;
    plan->base_ps = c->coll_base_ps;
    plan->latency_ps = s_to_ps(lat);
    return plan->total_ps;
}

int64_t orr_comm_p2p_ps(const orr_gpu *g, const orr_cluster *c, uint32_t src, uint32_t dst,
                        uint64_t bytes)
{
    int same_node = c->gpus_per_node == 0 || orr_node_of(c, src) == orr_node_of(c, dst);
    double t = ps_to_s(c->p2p_base_ps);
    if (same_node) t += transfer_seconds((double)bytes, nvlink_bus_Bps(g, c));
    else t += ps_to_s(c->net_lat_ps + c->net_plugin_lat_ps) + transfer_seconds((double)bytes, nic_bus_Bps(c));
    return s_to_ps(t);
}

double orr_comm_busbw_factor(orr_coll_kind k, uint32_t n)
{
    if (n == 0) return 0;
    switch (k) {
    case ORR_COLL_ALLREDUCE: return 2.0 * (n - 1) / n;
    case ORR_COLL_ALLGATHER:
    case ORR_COLL_REDUCESCATTER:
    case ORR_COLL_ALLTOALL: return (double)(n - 1) / n;
    case ORR_COLL_BROADCAST:
    case ORR_COLL_REDUCE: return 1.0;
    default: return 1.0;
    }
}

const char *orr_coll_algo_name(orr_coll_algo a)
{
    switch (a) {
    case ORR_ALGO_AUTO: return "auto";
    case ORR_ALGO_RING: return "ring";
    case ORR_ALGO_TREE: return "tree";
    case ORR_ALGO_HIER: return "hier";
    case ORR_ALGO_NVLS: return "nvls";
    default: return "unknown";
    }
}
