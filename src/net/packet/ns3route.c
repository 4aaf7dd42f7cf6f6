/*
 * ns3route.c - ECMP as the HPCC / SimAI ns-3 simulator chooses paths, so that `orrery netsim` on
 * ns-3-format inputs puts every flow (and its ACKs) on the links ns-3 puts it on.
 *
 * What ns-3 does (read in alibaba-edu/High-Precision-Congestion-Control and aliyun/ns-3-alibabacloud;
 * re-implemented here, not copied):
 * - Routing tables (scratch/third.cc, SimAI's network_frontend/ns3/common.h: CalculateRoute,
 *   SetRoutingEntries): for every host h a breadth-first search from h; only switches are
 *   enqueued (a host is never a transit node). While node `now` is being expanded, every
 *   neighbour `next` with dist(next) == dist(now) + 1 gets `now` appended to its next hops toward
 *   h. So a node's next hops toward h are its neighbours one hop closer, in the order they were
 *   dequeued, and that order comes from how each node's neighbours are iterated: a
 *   std::map keyed by the neighbour's Ptr<Node>, i.e. by the node object's address.
 * - Addresses: hosts are small ns3::Node objects from the heap; every SwitchNode (and NVSwitchNode)
 *   of SimAI's fork holds uint32 m_bytes[1025][1025][8] (33.6 MB), above glibc's largest mmap
 *   threshold, so each is its own mmap, and Linux places each new mapping below the previous one.
 *   The iteration order is therefore hosts first (by id), then switches by decreasing node id.
 *   (The 20 switches of topo_k4 account for 672 MB of run_dcqcn.log's 688 MB peak RSS, so the
 *   reference runs were made by that fork.) The order of hosts never matters: they are not expanded.
 * - The choice (model/switch-node.cc, SwitchNode::GetOutDev / EcmpHash): the 12 bytes
 *   {sip, dip, sport | dport << 16} as three 32-bit words, hashed with MurmurHash3 (x86, 32-bit)
 *   seeded by the switch's node id; next hop = hops[hash % count]. Data packets carry the flow's
 *   (sip, dip, sport, dport); its ACKs carry (dip, sip, dport, sport). IPs are
 *   0x0b000001 + (id / 256) << 16 + (id % 256) << 8.
 * - Hosts with several uplinks choose by the queue pair's own hash (RdmaQueuePair::GetHash, ns-3's
 *   Hash32); not reproduced: such a host here chooses with the switch formula, seeded by its id.
 *   SimAI's preference for NVSwitch next hops is not reproduced either (no NVSwitch in the ns-3
 *   reference inputs).
 *
 * Tables are one breadth-first search per destination host, computed when a flow first needs it
 * and kept while their total stays under NS3_CACHE_BYTES (then recomputed per destination).
 */
#include "pkt_internal.h"

#include <stdlib.h>
#include <string.h>

#define NS3_CACHE_BYTES ((size_t)256 << 20)
#define NS3_UNSEEN UINT32_MAX

struct orr_ns3_router {
    const orr_topo *t;
    /* neighbours of each node in ns-3's iteration order (CSR), with the link to each */
    uint32_t *nb_start, *nb_node, *nb_link;
    /* per destination host: queue position of every node in its search (NS3_UNSEEN if not
     * expanded) and hop distance (NS3_UNSEEN if unreachable), [2 * n_nodes] */
    uint32_t **table;
    uint32_t *scratch;
    uint32_t scratch_host;
    size_t cached_bytes;
    uint32_t *queue;
    uint32_t *cand; /* next hops at one node (scratch) */
};

static uint32_t rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

/* MurmurHash3_x86_32 (Austin Appleby's public-domain algorithm) of three 32-bit words. */
uint32_t orr_ns3_ecmp_hash(uint32_t sip, uint32_t dip, uint16_t sport, uint16_t dport, uint32_t seed)
{
    const uint32_t words[3] = {sip, dip, (uint32_t)sport | (uint32_t)dport << 16};
    uint32_t h = seed;
    for (int i = 0; i < 3; i++) {
        uint32_t k = words[i] * 0xcc9e2d51u;
        k = rotl32(k, 15) * 0x1b873593u;
        h = rotl32(h ^ k, 13) * 5u + 0xe6546b64u;
    }
    h ^= 12u; /* length in bytes */
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

uint32_t orr_ns3_ip(uint32_t node) { return 0x0b000001u + (node / 256) * 0x10000u + (node % 256) * 0x100u; }

/* ns-3's iteration rank of a neighbour: hosts (heap objects) before switches (each its own mmap,
 * later ones at lower addresses), hosts by increasing id, switches by decreasing id. */
static uint64_t ns3_rank(const orr_topo *t, uint32_t node)
{
    return t->kind[node] == ORR_NODE_HOST ? node : ((uint64_t)1 << 32) | (UINT32_MAX - node);
}

typedef struct nb_sort {
    uint64_t rank;
    uint32_t node, link;
} nb_sort;

static int cmp_nb(const void *a, const void *b)
{
    const nb_sort *x = a, *y = b;
    if (x->rank != y->rank) return (x->rank > y->rank) - (x->rank < y->rank);
    return (x->link > y->link) - (x->link < y->link);
}

orr_ns3_router *orr_ns3_router_create(const orr_topo *t)
{
    orr_ns3_router *r = orr_xcalloc(1, sizeof *r);
    r->t = t;
    uint32_t nn = t->n_nodes;
    r->nb_start = orr_xcalloc((size_t)nn + 1, sizeof *r->nb_start);
    r->nb_node = orr_xmalloc(((size_t)t->n_links + 1) * sizeof *r->nb_node);
    r->nb_link = orr_xmalloc(((size_t)t->n_links + 1) * sizeof *r->nb_link);
    nb_sort *tmp = orr_xmalloc(((size_t)t->n_links + 1) * sizeof *tmp);
    uint32_t n = 0;
    for (uint32_t v = 0; v < nn; v++) {
        r->nb_start[v] = n;
        uint32_t m = 0;
        for (uint32_t i = t->out_start[v]; i < t->out_start[v + 1]; i++) {
            uint32_t l = t->out[i], w = t->links[l].dst;
            tmp[m++] = (nb_sort){ns3_rank(t, w), w, l};
        }
        qsort(tmp, m, sizeof *tmp, cmp_nb);
        /* One entry per neighbour: ns-3 maps a neighbour to one interface, the last link listed. */
        for (uint32_t i = 0; i < m; i++) {
            if (i + 1 < m && tmp[i + 1].node == tmp[i].node) continue;
            r->nb_node[n] = tmp[i].node;
            r->nb_link[n] = tmp[i].link;
            n++;
        }
    }
    r->nb_start[nn] = n;
    free(tmp);
    r->cand = orr_xmalloc(((size_t)t->n_links + 1) * sizeof *r->cand);
    r->table = orr_xcalloc(t->n_hosts ? t->n_hosts : 1, sizeof *r->table);
    r->scratch = orr_xmalloc(2 * ((size_t)nn + 1) * sizeof *r->scratch);
    r->scratch_host = UINT32_MAX;
    r->queue = orr_xmalloc(((size_t)nn + 1) * sizeof *r->queue);
    return r;
}

void orr_ns3_router_free(orr_ns3_router *r)
{
    if (!r) return;
    for (uint32_t h = 0; h < r->t->n_hosts; h++) free(r->table[h]);
    free(r->table);
    free(r->scratch);
    free(r->queue);
    free(r->cand);
    free(r->nb_start);
    free(r->nb_node);
    free(r->nb_link);
    free(r);
}

/* The search from host h (CalculateRoute): pos[v] = position in the queue, dis[v] = hops to h. */
static void search(orr_ns3_router *r, uint32_t h, uint32_t *pos, uint32_t *dis)
{
    const orr_topo *t = r->t;
    uint32_t nn = t->n_nodes;
    for (uint32_t v = 0; v < nn; v++) pos[v] = dis[v] = NS3_UNSEEN;
    uint32_t root = t->host_node[h], head = 0, tail = 0;
    r->queue[tail++] = root;
    pos[root] = 0;
    dis[root] = 0;
    while (head < tail) {
        uint32_t now = r->queue[head++];
        for (uint32_t i = r->nb_start[now]; i < r->nb_start[now + 1]; i++) {
            uint32_t next = r->nb_node[i];
            if (dis[next] != NS3_UNSEEN) continue;
            dis[next] = dis[now] + 1;
            if (t->kind[next] != ORR_NODE_HOST) {
                pos[next] = tail;
                r->queue[tail++] = next;
            }
        }
    }
}

static const uint32_t *table_for(orr_ns3_router *r, uint32_t h)
{
    if (r->table[h]) return r->table[h];
    if (r->scratch_host == h) return r->scratch;
    size_t bytes = 2 * (size_t)r->t->n_nodes * sizeof(uint32_t);
    uint32_t *tab;
    if (r->cached_bytes + bytes <= NS3_CACHE_BYTES) {
        tab = r->table[h] = orr_xmalloc(bytes ? bytes : 1);
        r->cached_bytes += bytes;
    } else {
        tab = r->scratch;
        r->scratch_host = h;
    }
    search(r, h, tab, tab + r->t->n_nodes);
    return tab;
}

int orr_ns3_router_path(orr_ns3_router *r, uint32_t src_host, uint32_t dst_host, uint16_t sport, uint16_t dport,
                        uint32_t *links, uint32_t max)
{
    const orr_topo *t = r->t;
    if (src_host >= t->n_hosts || dst_host >= t->n_hosts) return -1;
    const uint32_t *tab = table_for(r, dst_host);
    const uint32_t *pos = tab, *dis = tab + t->n_nodes;
    uint32_t node = t->host_node[src_host], target = t->host_node[dst_host], n = 0;
    uint32_t sip = orr_ns3_ip(node), dip = orr_ns3_ip(target);
    while (node != target) {
        if (dis[node] == NS3_UNSEEN || n >= max) return -1;
        /* next hops: neighbours expanded one hop closer, in queue order (ns-3's vector order) */
        uint32_t *best = r->cand, nbest = 0;
        for (uint32_t i = r->nb_start[node]; i < r->nb_start[node + 1]; i++) {
            uint32_t w = r->nb_node[i];
            if (pos[w] == NS3_UNSEEN || dis[w] + 1 != dis[node]) continue;
            uint32_t j = nbest++; /* insertion by queue position (a switch has few next hops) */
            while (j > 0 && pos[r->nb_node[best[j - 1]]] > pos[w]) {
                best[j] = best[j - 1];
                j--;
            }
            best[j] = i;
        }
        if (nbest == 0) return -1;
        uint32_t pick = nbest == 1 ? 0 : orr_ns3_ecmp_hash(sip, dip, sport, dport, node) % nbest;
        uint32_t l = r->nb_link[best[pick]];
        links[n++] = l;
        node = t->links[l].dst;
    }
    return (int)n;
}
