/*
 * topo.c - topology graph, shortest-path ECMP routing, and the HPCC/SimAI topology reader.
 *
 * Routing tables are hop distances from every node to every host, computed by one breadth-first
 * search per host over the (symmetric) link graph. A node's next hops toward a host are its
 * outgoing links whose far end is one hop closer; they are listed in link-id order, so the ECMP
 * choice (flow hash mixed with the node id, modulo the count) is deterministic.
 */
#include "orrery/topo.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Routing tables above this many entries (2 bytes each) are refused: 128M entries = 256 MiB. */

/* Hops from node to host. The table is kept host by host (t->dist, topo.h): the ECMP scan reads
 * one destination's distances at a node's neighbours, which are near in it (switch ids of one
 * tier are consecutive), where node-by-node rows put each neighbour a whole row apart. */
static inline uint16_t dist_at(const orr_topo *t, uint32_t node, uint32_t host)
{
    return t->dist[(size_t)host * t->n_nodes + node];
}

/* Is w, a neighbour of a node `here` hops from host dst, a next hop toward it? One hop closer, and
 * a host only if it is dst (paths do not pass through hosts). */
static inline int next_hop(const orr_topo *t, uint32_t w, uint32_t dst, uint16_t here)
{
    return dist_at(t, w, dst) == here - 1 && !(t->kind[w] == ORR_NODE_HOST && t->node_host[w] != dst);
}

void orr_topo_init(orr_topo *t)
{
    memset(t, 0, sizeof *t);
    t->gpus_per_server = 1;
}

void orr_topo_free(orr_topo *t)
{
    free(t->kind);
    free(t->node_host);
    free(t->host_node);
    free(t->links);
    free(t->out_start);
    free(t->out);
    free(t->dist);
    free(t->nvl_up);
    orr_topo_init(t);
}

uint32_t orr_topo_add_node(orr_topo *t, orr_node_kind kind)
{
    uint32_t id = t->n_nodes;
    if (id >= t->cap_nodes) {
        size_t cap = t->cap_nodes;
        orr_grow((void **)&t->kind, &cap, id + 1, sizeof *t->kind);
        cap = t->cap_nodes;
        orr_grow((void **)&t->node_host, &cap, id + 1, sizeof *t->node_host);
        t->cap_nodes = cap;
    }
    t->kind[id] = (uint8_t)kind;
    t->node_host[id] = UINT32_MAX;
    t->n_nodes++;
    t->finished = 0;
    return id;
}

uint32_t orr_topo_add_link(orr_topo *t, uint32_t a, uint32_t b, double rate_Bps, int64_t delay_ps,
                           double error_rate, uint8_t tier)
{
    uint32_t id = t->n_links;
    if (id + 2 > t->cap_links) orr_grow((void **)&t->links, &t->cap_links, id + 2, sizeof *t->links);
    t->links[id] = (orr_link){a, b, rate_Bps, delay_ps, error_rate, tier};
    t->links[id + 1] = (orr_link){b, a, rate_Bps, delay_ps, error_rate, tier};
    t->n_links += 2;
    t->finished = 0;
    return id;
}

int orr_topo_finish(orr_topo *t, const char *what, orr_err *err)
{
    free(t->out_start);
    free(t->out);
    free(t->dist);
    free(t->host_node);
    free(t->nvl_up);
    t->out_start = t->out = t->host_node = t->nvl_up = NULL;
    t->dist = NULL;

    uint32_t hosts = 0;
    for (uint32_t v = 0; v < t->n_nodes; v++)
        if (t->kind[v] == ORR_NODE_HOST) hosts++;
    if (hosts == 0) return orr_fail(err, "%s: topology has no hosts", what);
    t->n_hosts = hosts;
    t->host_node = orr_xmalloc((size_t)hosts * sizeof *t->host_node);
    hosts = 0;
    for (uint32_t v = 0; v < t->n_nodes; v++) {
        if (t->kind[v] == ORR_NODE_HOST) {
            t->node_host[v] = hosts;
            t->host_node[hosts++] = v;
        } else {
            t->node_host[v] = UINT32_MAX;
        }
    }
    for (uint32_t l = 0; l < t->n_links; l++) {
        const orr_link *k = &t->links[l];
        if (k->src >= t->n_nodes || k->dst >= t->n_nodes)
            return orr_fail(err, "%s: link %u joins node %u and %u but there are %u nodes", what,
                            l / 2, k->src, k->dst, t->n_nodes);
        if (!(k->rate_Bps > 0)) return orr_fail(err, "%s: link %u has no bandwidth", what, l / 2);
    }

    /* CSR of outgoing links, in link-id order. */
    t->out_start = orr_xcalloc((size_t)t->n_nodes + 1, sizeof *t->out_start);
    t->out = orr_xmalloc((size_t)(t->n_links ? t->n_links : 1) * sizeof *t->out);
    for (uint32_t l = 0; l < t->n_links; l++) t->out_start[t->links[l].src + 1]++;
    for (uint32_t v = 0; v < t->n_nodes; v++) t->out_start[v + 1] += t->out_start[v];
    uint32_t *fill = orr_xmalloc((size_t)t->n_nodes * sizeof *fill);
    memcpy(fill, t->out_start, (size_t)t->n_nodes * sizeof *fill);
    for (uint32_t l = 0; l < t->n_links; l++) t->out[fill[t->links[l].src]++] = l;
    free(fill);
    t->nvl_up = orr_xmalloc((size_t)hosts * sizeof *t->nvl_up);
    for (uint32_t h = 0; h < hosts; h++) {
        uint32_t v = t->host_node[h];
        t->nvl_up[h] = UINT32_MAX;
        for (uint32_t i = t->out_start[v]; i < t->out_start[v + 1]; i++)
            if (t->kind[t->links[t->out[i]].dst] == ORR_NODE_NVSWITCH) {
                t->nvl_up[h] = t->out[i];
                break;
            }
    }

    /* Hop distances by BFS from every host (links are symmetric, so distance to = distance from). */
    uint64_t entries = (uint64_t)t->n_nodes * t->n_hosts;
    if (entries > ORR_TOPO_MAX_DIST_ENTRIES)
        return orr_fail(err, "%s: %u nodes x %u hosts is too large for routing tables (limit %llu entries)",
                        what, t->n_nodes, t->n_hosts, (unsigned long long)ORR_TOPO_MAX_DIST_ENTRIES);
    t->dist = orr_xmalloc((size_t)entries * sizeof *t->dist);
    uint32_t *queue = orr_xmalloc((size_t)t->n_nodes * sizeof *queue);
    uint16_t *d = orr_xmalloc((size_t)t->n_nodes * sizeof *d);
    for (uint32_t h = 0; h < t->n_hosts; h++) {
        for (uint32_t v = 0; v < t->n_nodes; v++) d[v] = UINT16_MAX;
        uint32_t head = 0, tail = 0, root = t->host_node[h];
        d[root] = 0;
        queue[tail++] = root;
        while (head < tail) {
            uint32_t v = queue[head++];
            /* Paths do not pass through hosts: a host forwards nothing (its links are endpoints). */
            if (v != root && t->kind[v] == ORR_NODE_HOST) continue;
            for (uint32_t i = t->out_start[v]; i < t->out_start[v + 1]; i++) {
                uint32_t w = t->links[t->out[i]].dst;
                if (d[w] == UINT16_MAX) {
                    d[w] = (uint16_t)(d[v] + 1);
                    queue[tail++] = w;
                }
            }
        }
        memcpy(t->dist + (size_t)h * t->n_nodes, d, (size_t)t->n_nodes * sizeof *d);
    }
    free(queue);
    free(d);
    for (uint32_t b = 0; b < t->n_hosts; b++)
        for (uint32_t a = 0; a < t->n_hosts; a++)
            if (dist_at(t, t->host_node[a], b) == UINT16_MAX)
                return orr_fail(err, "%s: host node %u cannot reach host node %u", what,
                                t->host_node[a], t->host_node[b]);
    t->finished = 1;
    return 0;
}

uint32_t orr_topo_next_hops(const orr_topo *t, uint32_t node, uint32_t dst_host, uint32_t *links,
                            uint32_t max)
{
    if (node >= t->n_nodes || dst_host >= t->n_hosts) return 0;
    uint16_t here = dist_at(t, node, dst_host);
    if (here == 0 || here == UINT16_MAX) return 0;
    uint32_t n = 0;
    for (uint32_t i = t->out_start[node]; i < t->out_start[node + 1] && n < max; i++) {
        uint32_t l = t->out[i];
        if (next_hop(t, t->links[l].dst, dst_host, here)) links[n++] = l;
    }
    return n;
}

uint32_t orr_topo_ecmp(const orr_topo *t, uint32_t node, uint32_t dst_host, uint64_t flow_hash)
{
    uint16_t here = dist_at(t, node, dst_host);
    if (here == 0 || here == UINT16_MAX) return UINT32_MAX;
    /* One pass keeps the first ECMP_KEEP next hops; a node with more scans again for the pick. */
    enum { ECMP_KEEP = 64 };
    uint32_t keep[ECMP_KEEP], count = 0;
    for (uint32_t i = t->out_start[node]; i < t->out_start[node + 1]; i++) {
        uint32_t l = t->out[i];
        if (next_hop(t, t->links[l].dst, dst_host, here)) {
            if (count < ECMP_KEEP) keep[count] = l;
            count++;
        }
    }
    if (count == 0) return UINT32_MAX;
    uint32_t pick = (uint32_t)(orr_hash64(flow_hash ^ ((uint64_t)node << 32)) % count);
    if (pick < ECMP_KEEP) return keep[pick];
    for (uint32_t i = t->out_start[node]; i < t->out_start[node + 1]; i++) {
        uint32_t l = t->out[i];
        if (next_hop(t, t->links[l].dst, dst_host, here) && pick-- == 0) return l;
    }
    return UINT32_MAX;
}

int orr_topo_path(const orr_topo *t, uint32_t src_host, uint32_t dst_host, uint64_t flow_hash,
                  int ecmp, uint32_t *links, uint32_t max)
{
    if (src_host >= t->n_hosts || dst_host >= t->n_hosts) return -1;
    uint32_t node = t->host_node[src_host], n = 0;
    while (node != t->host_node[dst_host]) {
        uint32_t l;
        if (ecmp) {
            l = orr_topo_ecmp(t, node, dst_host, flow_hash);
        } else {
            uint32_t first;
            l = orr_topo_next_hops(t, node, dst_host, &first, 1) ? first : UINT32_MAX;
        }
        if (l == UINT32_MAX || n >= max) return -1;
        links[n++] = l;
        node = t->links[l].dst;
    }
    return (int)n;
}

/* ---- units ---- */

/* Splits "100Gbps" into 100 and "Gbps"; returns -1 if no number. */
static int number_unit(const char *s, double *v, const char **unit)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    if (end == s || errno || !isfinite(*v) || *v < 0) return -1;
    *unit = end;
    return 0;
}

int orr_parse_rate_Bps(const char *s, double *out)
{
    double v;
    const char *u;
    if (!s || number_unit(s, &v, &u)) return -1;
    static const struct { const char *unit; double mul; } units[] = {
        {"Tbps", 1e12 / 8}, {"Tb/s", 1e12 / 8}, {"Gbps", 1e9 / 8}, {"Gb/s", 1e9 / 8},
        {"Mbps", 1e6 / 8},  {"Mb/s", 1e6 / 8},  {"Kbps", 1e3 / 8}, {"kbps", 1e3 / 8},
        {"bps", 1.0 / 8},   {"TBps", 1e12},     {"GBps", 1e9},     {"GB/s", 1e9},
        {"MBps", 1e6},      {"MB/s", 1e6},      {"Bps", 1},
    };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcmp(u, units[i].unit) == 0) {
            *out = v * units[i].mul;
            return *out > 0 ? 0 : -1;
        }
    return -1;
}

int orr_parse_delay_ps(const char *s, int64_t *out)
{
    double v;
    const char *u;
    if (!s || number_unit(s, &v, &u)) return -1;
    static const struct { const char *unit; double mul; } units[] = {
        {"s", 1e12}, {"ms", 1e9}, {"us", 1e6}, {"ns", 1e3}, {"ps", 1},
    };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcmp(u, units[i].unit) == 0) {
            double ps = v * units[i].mul;
            if (ps > 1e18) return -1;
            *out = (int64_t)llround(ps);
            return 0;
        }
    return -1;
}

/* ---- HPCC / SimAI topology text ---- */

typedef struct tok_reader {
    const char *p;
    const char *path;
    int line;
} tok_reader;

/* Next whitespace-separated token on the current line into buf; 0 if the line has no more. */
static int next_tok(tok_reader *r, char *buf, size_t cap)
{
    while (*r->p == ' ' || *r->p == '\t' || *r->p == '\r') r->p++;
    if (*r->p == '\0' || *r->p == '\n') return 0;
    size_t n = 0;
    while (*r->p && !isspace((unsigned char)*r->p)) {
        if (n + 1 < cap) buf[n++] = *r->p;
        r->p++;
    }
    buf[n] = '\0';
    return 1;
}

/* Moves to the start of the next non-blank line; 0 at end of input. */
static int next_line(tok_reader *r, int first)
{
    if (!first) {
        while (*r->p && *r->p != '\n') r->p++;
        if (*r->p == '\n') {
            r->p++;
            r->line++;
        }
    }
    for (;;) {
        const char *q = r->p;
        while (*q == ' ' || *q == '\t' || *q == '\r') q++;
        if (*q == '\0') return 0;
        if (*q != '\n') return 1;
        r->p = q + 1;
        r->line++;
    }
}

static int parse_u32(const char *s, uint32_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || *end || errno || v > UINT32_MAX || s[0] == '-') return -1;
    *out = (uint32_t)v;
    return 0;
}

static int parse_hpcc(orr_topo *t, const char *text, const char *path, orr_err *err)
{
    tok_reader r = {text, path, 1};
    char tok[8][64];
    if (!next_line(&r, 1)) return orr_fail(err, "%s: empty topology file", path);
    int nt = 0;
    while (nt < 8 && next_tok(&r, tok[nt], sizeof tok[nt])) nt++;
    uint32_t node_num, gps = 1, nvs = 0, sw, link_num;
    if (nt == 3) {
        if (parse_u32(tok[0], &node_num) || parse_u32(tok[1], &sw) || parse_u32(tok[2], &link_num))
            return orr_fail(err, "%s:%d: header: expected 'node_num switch_num link_num' as integers", path, r.line);
    } else if (nt == 6) {
        if (parse_u32(tok[0], &node_num) || parse_u32(tok[1], &gps) || parse_u32(tok[2], &nvs) ||
            parse_u32(tok[3], &sw) || parse_u32(tok[4], &link_num))
            return orr_fail(err, "%s:%d: header: expected 'node_num gpus_per_server nvswitch_num switch_num link_num gpu_type' with integers",
                            path, r.line);
    } else {
        return orr_fail(err, "%s:%d: header: expected 6 fields 'node_num gpus_per_server nvswitch_num switch_num link_num gpu_type' (or 3), got %d",
                        path, r.line, nt);
    }
    if (node_num == 0 || node_num > 50000000u)
        return orr_fail(err, "%s:%d: header: node_num %u out of range", path, r.line, node_num);
    if ((uint64_t)nvs + sw > node_num)
        return orr_fail(err, "%s:%d: header: %u switches but %u nodes", path, r.line, nvs + sw, node_num);
    t->gpus_per_server = gps ? gps : 1;
    for (uint32_t i = 0; i < node_num; i++) orr_topo_add_node(t, ORR_NODE_HOST);

    /* Switch ids: may wrap over several lines. */
    uint32_t need = nvs + sw, got = 0;
    if (need) next_line(&r, 0);
    while (got < need) {
        char b[64];
        if (!next_tok(&r, b, sizeof b)) {
            if (!next_line(&r, 0))
                return orr_fail(err, "%s:%d: switch ids: expected %u ids, found %u", path, r.line, need, got);
            continue;
        }
        uint32_t id;
        if (parse_u32(b, &id) || id >= node_num)
            return orr_fail(err, "%s:%d: switch ids: '%s' is not a node id below %u", path, r.line, b, node_num);
        t->kind[id] = got < nvs ? ORR_NODE_NVSWITCH : ORR_NODE_SWITCH;
        got++;
    }
    for (uint32_t i = 0; i < link_num; i++) {
        if (!next_line(&r, 0))
            return orr_fail(err, "%s:%d: links: expected %u links, found %u", path, r.line, link_num, i);
        int n = 0;
        while (n < 6 && next_tok(&r, tok[n], sizeof tok[n])) n++;
        if (n < 4)
            return orr_fail(err, "%s:%d: link: expected 'src dst rate delay error_rate', got %d fields", path, r.line, n);
        uint32_t a, b;
        double rate;
        int64_t delay;
        double er = 0;
        if (parse_u32(tok[0], &a) || a >= node_num)
            return orr_fail(err, "%s:%d: link src: '%s' is not a node id below %u", path, r.line, tok[0], node_num);
        if (parse_u32(tok[1], &b) || b >= node_num || b == a)
            return orr_fail(err, "%s:%d: link dst: '%s' is not a node id below %u other than src", path, r.line, tok[1], node_num);
        if (orr_parse_rate_Bps(tok[2], &rate))
            return orr_fail(err, "%s:%d: link rate: '%s' is not a rate like 100Gbps", path, r.line, tok[2]);
        if (!(rate >= ORR_LINK_RATE_MIN_Bps && rate <= ORR_LINK_RATE_MAX_Bps)) /* 1e40Gbps overflowed the engine */
            return orr_fail(err, "%s:%d: link rate: '%s' is outside 1Mbps to 100Tbps", path, r.line, tok[2]);
        if (orr_parse_delay_ps(tok[3], &delay))
            return orr_fail(err, "%s:%d: link delay: '%s' is not a delay like 0.001ms or 1us", path, r.line, tok[3]);
        if (n >= 5) {
            char *end;
            er = strtod(tok[4], &end);
            if (end == tok[4] || *end || !(er >= 0 && er < 1))
                return orr_fail(err, "%s:%d: link error_rate: '%s' is not a probability in [0,1)", path, r.line, tok[4]);
        }
        uint8_t tier = ORR_TIER_AGG;
        int ka = t->kind[a], kb = t->kind[b];
        if (ka == ORR_NODE_NVSWITCH || kb == ORR_NODE_NVSWITCH) tier = ORR_TIER_NVLINK;
        else if (ka == ORR_NODE_HOST || kb == ORR_NODE_HOST) tier = ORR_TIER_HOST;
        orr_topo_add_link(t, a, b, rate, delay, er, tier);
    }
    return orr_topo_finish(t, path, err);
}

int orr_topo_parse_hpcc(orr_topo *t, const char *text, const char *path, orr_err *err)
{
    orr_topo_init(t);
    int rc = parse_hpcc(t, text, path, err);
    if (rc) orr_topo_free(t);
    return rc;
}

int orr_topo_read_hpcc(orr_topo *t, const char *path, orr_err *err)
{
    char *text = orr_read_file(path, NULL, err);
    if (!text) {
        orr_topo_init(t);
        return -1;
    }
    int rc = orr_topo_parse_hpcc(t, text, path, err);
    free(text);
    return rc;
}
