/*
 * flow_net.c - the flow backend behind orr_net (net.h): it builds the cluster's topology
 * (src/hw/topo_build.c), runs the max-min flow model on it (src/net/flow/flow.c) and executes
 * every collective and send as NCCL's steps (src/comm/sched.c), with link capacities derated by
 * the cluster's protocol efficiencies (NVLink links by nvlink_eff, NIC and switch links by
 * net_eff) as the analytic model derates its bandwidths, so that with no contention both backends
 * agree (tests/test_collsched.c).
 *
 * Symmetry. When the workload simulates one rank for many (workload.h, orr_sym), the executor
 * runs only the simulated ranks, but the fabric must carry every GPU's traffic. So a collective
 * is scheduled on every distinct image of its group (the member set moved by each permutation of
 * the symmetry, scheduled from the image's own members and placement, as a full simulation would
 * schedule that group), a send on every image of its (src, dst) pair, all in one DAG that
 * completes when its last image has. The flows of all images share the links, so contention is
 * the full simulation's; what is collapsed is the executor's ranks. This is exact when every
 * image takes the same time, i.e. when no image sees contention its representative does not
 * (paths that are images of each other; ECMP hashes flow ids, which differ between images, so on
 * fabrics with path choice images may collide differently): the full simulation then runs all
 * images in step, and so does this. Otherwise a collective ends with its slowest image, which the
 * simulated rank waits for (in a full simulation the faster images' ranks could run ahead until
 * they next meet the slow one). tests/test_exec.c compares the two on whole jobs.
 *
 * Mirrored servers. Most flows of a tensor-parallel job stay inside a server (TP rings over
 * NVLink), and most of those need not be simulated. When each server's NVLink links are private
 * to it (one NVSwitch per server joining exactly its GPUs, all links alike; hosts forward nothing
 * and, without PXN, no inter-server flow crosses NVLink), they carry only flows between the
 * server's own GPUs. Take the images of the symmetry that map every server onto a server keeping
 * the order of its GPUs (with tp = gpus per node: the dp shifts); they form a group, its orbits
 * partition the servers, the lowest server of each orbit is simulated and the others are mirrored.
 * The scheduler builds a collective from the order of its members and their split into servers
 * only, so such an image moves a group's schedule onto its image's schedule flow by flow; under
 * the premise above (images in step), the flows inside a mirrored server Y are then exactly the
 * images of flows inside its representative X, which see the same contention and finish at the
 * same time. So a flow inside a mirrored server is not simulated: it finishes with its preimage.
 * An image lying wholly inside a mirrored server is left out of the DAG (its preimage is another
 * image of the same collective, in the same DAG); in an image spanning servers (a group with
 * several members in each of several servers), each of its flows inside a mirrored server stops
 * moving bytes and its successors also wait for the same-index flow of the preimage image. This
 * needs, for every group image with several members in a mirrored server, one such image that
 * maps it onto another image, all its mirrored servers onto simulated ones; mirroring is used
 * only if every group of the workload passes (cfg->groups; e.g. tp < gpus per node fails it: a dp
 * group then spans servers several GPUs each and maps onto itself out of order). It removes most
 * flows (7 of 8 TP rings of GPT-3 175B on 1,024 GPUs); mirrored links report their representative's
 * statistics. Not used with PXN, an HPCC fabric, or cfg->no_mirror.
 */
#include "net_internal.h"
#include "orrery/collsched.h"
#include "orrery/flow.h"

#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

/* The distinct images of one member list: nimg sorted lists of n ranks at img_m[off...], the
 * first the list itself; with mirrored servers, per image (at join[2 * (joff + i)]) the image k
 * moving it onto the image i0 whose flows its flows inside mirrored servers wait for (k, i0), or
 * (NONE, NONE) if it has none there or no such image. */
typedef struct image_set {
    uint32_t n, nimg;
    size_t off, joff;
    int joins_known;   /* join filled in (mirror_matches) */
    int joins_ok;      /* every image that needs a preimage image has one */
} image_set;

typedef struct flow_net {
    orr_topo topo;
    orr_transport *tr;
    orr_runner *run;
    orr_sched sched, all;     /* one image's schedule; all images' */
    orr_sched_opts opts;
    uint32_t gpus, gpn;
    orr_sym sym;              /* nimages <= 1: no symmetry, every GPU simulated */
    image_set *sets;          /* per distinct member list seen */
    size_t nsets, cap_sets;
    orr_map set_index;        /* content hash of a member list -> sets index (probing by rehash) */
    uint32_t *img_m;          /* the image lists */
    size_t nimg_m, cap_img_m;
    /* mirrored servers (server_rep NULL: none) */
    uint32_t *server_rep;     /* per server: the simulated server of its orbit (itself if simulated) */
    uint32_t *server_inv;     /* per mirrored server: the image mapping it onto its representative */
    uint32_t *link_rep;       /* per link: the link whose statistics it reports */
    uint32_t nmirrored;       /* servers mirrored */
    uint64_t mirrored_flows;  /* flows not simulated because they are inside a mirrored server */
    uint64_t unmatched_flows; /* flows inside a mirrored server simulated for want of a preimage */
    uint32_t *join;           /* (k, i0) per image of every image set */
    size_t njoin, cap_join;
    /* scratch */
    uint32_t *base;           /* per image: its flows in `all`, first and end (NONE: left out) */
    size_t cap_base;
    uint32_t *redir;          /* per flow of `all`: the join point its successors wait for instead */
    size_t cap_redir;
} flow_net;

/* ---- images of a member list ---- */

static uint64_t list_hash(const uint32_t *m, uint32_t n)
{
    uint64_t h = orr_hash64(n);
    for (uint32_t i = 0; i < n; i++) h = orr_hash64(h ^ m[i]);
    return h == UINT64_MAX ? h - 1 : h;
}

/* The next key to probe after a hash collision. */
static uint64_t rehash(uint64_t key)
{
    uint64_t h = orr_hash64(key);
    return h == UINT64_MAX ? 0 : h;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* The distinct images of member list m (n ascending ranks) under the symmetry, computed once per
 * list: image k of each member, sorted; an image equal to an earlier one (shifting tp maps a tp
 * group onto itself) is dropped. */
static image_set *images_of(flow_net *f, const uint32_t *m, uint32_t n)
{
    uint64_t key = list_hash(m, n);
    for (uint32_t *p; (p = orr_map_get(&f->set_index, key)) != NULL; key = rehash(key)) {
        image_set *s = &f->sets[*p];
        if (s->n == n && memcmp(f->img_m + s->off, m, n * sizeof *m) == 0) return s;
    }
    image_set s = {n, 0, f->nimg_m, 0, 0, 0};
    orr_map seen = {0};
    for (uint32_t k = 0; k < f->sym.nimages; k++) {
        if (f->nimg_m + n > f->cap_img_m) orr_grow((void **)&f->img_m, &f->cap_img_m, f->nimg_m + n, sizeof *f->img_m);
        uint32_t *img = f->img_m + f->nimg_m;
        for (uint32_t i = 0; i < n; i++) img[i] = orr_sym_image(&f->sym, k, m[i]);
        qsort(img, n, sizeof *img, cmp_u32);
        uint64_t h = list_hash(img, n);
        int dup = 0;
        for (uint32_t *p; !dup && (p = orr_map_get(&seen, h)) != NULL;) {
            dup = memcmp(f->img_m + s.off + (size_t)*p * n, img, n * sizeof *img) == 0;
            if (!dup) h = rehash(h);
        }
        if (dup) continue;
        orr_map_put(&seen, h, s.nimg++);
        f->nimg_m += n;
    }
    orr_map_free(&seen);
    ORR_PUSH(f->sets, f->nsets, f->cap_sets, s);
    orr_map_put(&f->set_index, key, (uint32_t)(f->nsets - 1));
    return &f->sets[f->nsets - 1];
}

/* ---- mirrored servers ---- */

/* The mirrored server both ends of a flow are in, or NONE. */
static uint32_t mirrored_server(const flow_net *f, uint32_t src, uint32_t dst)
{
    if (!f->server_rep) return NONE;
    uint32_t x = src / f->gpn;
    return dst / f->gpn == x && f->server_rep[x] != x ? x : NONE;
}

/* Flows of a schedule (its join points move nothing). */
static uint64_t moving_flows(const orr_sched *s)
{
    uint64_t n = 0;
    for (size_t i = 0; i < s->nflows; i++) n += s->flows[i].bytes > 0 && s->flows[i].src != s->flows[i].dst;
    return n;
}

/* The NVLink switch of host h (its only NVSwitch neighbour) and the link to it; NONE if h has
 * none or several. */
static uint32_t nvswitch_of(const orr_topo *t, uint32_t h, uint32_t *link)
{
    uint32_t node = t->host_node[h], sw = NONE;
    for (uint32_t i = t->out_start[node]; i < t->out_start[node + 1]; i++) {
        uint32_t l = t->out[i], w = t->links[l].dst;
        if (t->kind[w] != ORR_NODE_NVSWITCH) continue;
        if (sw != NONE) return NONE;
        sw = w;
        *link = l;
    }
    return sw;
}

/* Every server's GPUs hang on one NVSwitch of their own, which joins nothing else, and all
 * these links are alike (so a map of servers maps their NVLink links onto equal links). */
static int nvlink_private(const flow_net *f)
{
    const orr_topo *t = &f->topo;
    const orr_link *first = NULL;
    for (uint32_t h = 0; h < f->gpus; h++) {
        uint32_t l = 0, l0 = 0, sw = nvswitch_of(t, h, &l), sw0 = nvswitch_of(t, h / f->gpn * f->gpn, &l0);
        if (sw == NONE || sw != sw0) return 0;
        const orr_link *up = &t->links[l], *down = &t->links[l ^ 1];
        if (!first) first = up;
        if (up->rate_Bps != first->rate_Bps || down->rate_Bps != first->rate_Bps || up->tier != first->tier ||
            down->tier != first->tier || up->delay_ps != first->delay_ps || down->delay_ps != first->delay_ps)
            return 0;
        for (uint32_t i = t->out_start[sw]; i < t->out_start[sw + 1]; i++) {
            uint32_t w = t->links[t->out[i]].dst, wh = t->node_host[w];
            if (t->kind[w] != ORR_NODE_HOST || wh >= f->gpus || wh / f->gpn != h / f->gpn) return 0;
        }
    }
    return 1;
}

/* Does image k map every server onto one server, keeping the order of its GPUs? */
static int maps_servers(const flow_net *f, uint32_t k)
{
    for (uint32_t first = 0; first < f->gpus; first += f->gpn) {
        uint32_t prev = orr_sym_image(&f->sym, k, first), to = prev / f->gpn;
        for (uint32_t h = first + 1; h < first + f->gpn && h < f->gpus; h++) {
            uint32_t img = orr_sym_image(&f->sym, k, h);
            if (img / f->gpn != to || img < prev) return 0;
            prev = img;
        }
    }
    return 1;
}

static int is_mirrored(const flow_net *f, uint32_t server) { return f->server_rep[server] != server; }

/* Fills the join entries of set is (mirroring on): for each image with several members in some
 * mirrored server, the inverse image k of the first such server must move its members, in order,
 * onto another image i0 and each of its mirrored servers with several members onto a simulated
 * server; then (k, i0). Returns whether every image that needs one has one. */
static int mirror_matches(flow_net *f, image_set *is)
{
    if (is->joins_known) return is->joins_ok;
    is->joins_known = 1;
    is->joins_ok = 1;
    if (is->n == 0) return 1;
    is->joff = f->njoin / 2;
    if (f->njoin + 2 * (size_t)is->nimg > f->cap_join)
        orr_grow((void **)&f->join, &f->cap_join, f->njoin + 2 * (size_t)is->nimg, sizeof *f->join);
    if (is->n > f->cap_redir) orr_grow((void **)&f->redir, &f->cap_redir, is->n, sizeof *f->redir);
    uint32_t *moved = f->redir; /* scratch: one member list */
    for (uint32_t i = 0; i < is->nimg; i++) {
        const uint32_t *m = f->img_m + is->off + (size_t)i * is->n;
        uint32_t *e = f->join + f->njoin + 2 * (size_t)i, k = NONE;
        e[0] = e[1] = NONE;
        if (m[0] / f->gpn == m[is->n - 1] / f->gpn) continue; /* inside one server: left out or simulated */
        for (uint32_t j = 1; j < is->n && k == NONE; j++)
            if (m[j] / f->gpn == m[j - 1] / f->gpn && is_mirrored(f, m[j] / f->gpn)) k = f->server_inv[m[j] / f->gpn];
        if (k == NONE) continue;
        int ok = 1;
        for (uint32_t j = 0; j < is->n && ok; j++) {
            moved[j] = orr_sym_image(&f->sym, k, m[j]);
            ok = j == 0 || moved[j] > moved[j - 1];
            if (ok && j > 0 && m[j] / f->gpn == m[j - 1] / f->gpn && is_mirrored(f, m[j] / f->gpn))
                ok = !is_mirrored(f, moved[j] / f->gpn);
        }
        for (uint32_t i0 = 0; ok && i0 < is->nimg; i0++)
            if (i0 != i && memcmp(f->img_m + is->off + (size_t)i0 * is->n, moved, is->n * sizeof *moved) == 0) {
                e[0] = k;
                e[1] = i0;
            }
        if (e[1] == NONE) is->joins_ok = 0;
    }
    f->njoin += 2 * (size_t)is->nimg;
    return is->joins_ok;
}

/* Decides whether to mirror servers and builds the tables: the server orbits under the images
 * that map servers onto servers in order, for each mirrored server the image back to its
 * representative, and for each NVLink link of a mirrored server the representative's link it
 * reports. Then checks every group (mirror_matches); if one fails, nothing is mirrored. */
static void mirror_init(flow_net *f, const orr_net_config *cfg)
{
    if (f->sym.nimages <= 1 || cfg->no_mirror || cfg->pxn || cfg->topo.kind == ORR_TOPO_HPCC || f->gpn < 2 ||
        !nvlink_private(f))
        return;
    uint32_t servers = (f->gpus + f->gpn - 1) / f->gpn;
    f->server_rep = orr_xmalloc(servers * sizeof *f->server_rep);
    f->server_inv = orr_xmalloc(servers * sizeof *f->server_inv);
    for (uint32_t x = 0; x < servers; x++) f->server_rep[x] = f->server_inv[x] = NONE;
    uint32_t *maps = orr_xmalloc(f->sym.nimages * sizeof *maps), nmaps = 0;
    for (uint32_t k = 0; k < f->sym.nimages; k++)
        if (maps_servers(f, k)) maps[nmaps++] = k;
    for (uint32_t x = 0; x < servers; x++) { /* maps[0] is the identity: x is its own first */
        if (f->server_rep[x] != NONE) continue;
        for (uint32_t i = 0; i < nmaps; i++) {
            uint32_t y = orr_sym_image(&f->sym, maps[i], x * f->gpn) / f->gpn;
            if (f->server_rep[y] != NONE) continue;
            f->server_rep[y] = x;
            f->server_inv[y] = orr_sym_inverse(&f->sym, maps[i]);
            if (y != x) f->nmirrored++;
        }
    }
    free(maps);
    int ok = f->nmirrored > 0;
    for (size_t g = 0; ok && g < cfg->ngroups; g++) {
        image_set *is = images_of(f, cfg->groups[g].members, cfg->groups[g].size);
        ok = mirror_matches(f, is);
    }
    if (!ok) {
        free(f->server_rep);
        free(f->server_inv);
        f->server_rep = f->server_inv = NULL;
        f->nmirrored = 0;
        for (size_t i = 0; i < f->nsets; i++) f->sets[i].joins_known = 0;
        f->njoin = 0;
        return;
    }
    f->link_rep = orr_xmalloc((f->topo.n_links ? f->topo.n_links : 1) * sizeof *f->link_rep);
    for (uint32_t l = 0; l < f->topo.n_links; l++) f->link_rep[l] = l;
    for (uint32_t h = 0; h < f->gpus; h++) {
        uint32_t y = h / f->gpn, l = 0, l0 = 0;
        if (!is_mirrored(f, y)) continue;
        nvswitch_of(&f->topo, h, &l);
        nvswitch_of(&f->topo, orr_sym_image(&f->sym, f->server_inv[y], h), &l0);
        f->link_rep[l] = l0;
        f->link_rep[l ^ 1] = l0 ^ 1;
    }
}

/* In `all` (the images of is, image i at flows [base[2i], base[2i+1]), NONE if left out), each
 * flow inside a mirrored server stops moving bytes: it becomes a join point (reached, like the
 * flow's start, after its dependencies and its delay), and its successors wait instead for a new
 * join point after it and after its preimage, the same-index flow of image i0 (mirror_matches),
 * which finishes when it would. An image without an i0 keeps its flows (counted unmatched). */
static void join_mirrored(flow_net *f, image_set *is)
{
    orr_sched *s = &f->all;
    mirror_matches(f, is);
    size_t nflows = s->nflows, nedges = s->nedges;
    if (nflows > f->cap_redir) orr_grow((void **)&f->redir, &f->cap_redir, nflows, sizeof *f->redir);
    for (size_t g = 0; g < nflows; g++) f->redir[g] = NONE;
    for (uint32_t i = 0; i < is->nimg; i++) {
        const uint32_t *e = f->join + 2 * (is->joff + i);
        uint32_t first = f->base[2 * i], end = f->base[2 * i + 1];
        for (uint32_t g = first; first != NONE && g < end; g++) {
            orr_sched_flow *fl = &s->flows[g];
            uint32_t x = fl->src / f->gpn;
            if (fl->bytes == 0 || fl->dst / f->gpn != x || !is_mirrored(f, x)) continue;
            uint32_t g0 = e[1] == NONE ? NONE : f->base[2 * e[1]] + (g - first);
            if (g0 == NONE || s->flows[g0].src != orr_sym_image(&f->sym, e[0], fl->src) ||
                s->flows[g0].dst != orr_sym_image(&f->sym, e[0], fl->dst) || s->flows[g0].bytes != fl->bytes) {
                f->unmatched_flows++; /* cannot happen after mirror_matches: kept as a check */
                continue;
            }
            fl->bytes = 0;
            f->redir[g] = g0;
            f->mirrored_flows++;
        }
    }
    for (uint32_t g = 0; g < nflows; g++) {
        if (f->redir[g] == NONE) continue;
        uint32_t g0 = f->redir[g], join = orr_sched_add(s, 0, 0, 0, 0);
        f->redir[g] = join;
        orr_sched_dep(s, g, join);
        orr_sched_dep(s, g0, join);
    }
    for (size_t e = 0; e < nedges; e++)
        if (f->redir[s->edges[e][0]] != NONE) s->edges[e][0] = f->redir[s->edges[e][0]];
}

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
    if (f->sym.nimages <= 1) {
        orr_net_run_send(n, f->run, &f->sched, src, dst, bytes, done, ctx, arg);
        return;
    }
    /* Every image of a rank is distinct (orr_sym), so the pairs are too. A pair inside a mirrored
     * server is left out: its preimage, inside the representative, is one of the pairs. */
    orr_sched_clear(&f->all);
    for (uint32_t k = 0; k < f->sym.nimages; k++) {
        uint32_t a = orr_sym_image(&f->sym, k, src), b = orr_sym_image(&f->sym, k, dst);
        orr_sched_p2p(&f->sched, n->gpu, n->cluster, a, b, bytes);
        if (mirrored_server(f, a, b) != NONE) f->mirrored_flows += moving_flows(&f->sched);
        else orr_sched_append(&f->all, &f->sched);
    }
    orr_runner_run(f->run, &f->all, done, ctx, arg);
}

static void flow_collective(orr_net *n, const orr_coll_desc *d, const uint32_t *members, orr_event_fn done,
                            void *ctx, uint64_t arg)
{
    flow_net *f = n->impl;
    if (f->sym.nimages <= 1 || !members || d->size == 0) {
        orr_net_run_collective(n, f->run, &f->sched, &f->opts, d, members, done, ctx, arg);
        return;
    }
    image_set *is = images_of(f, members, d->size);
    size_t nbase = 2 * (size_t)is->nimg;
    if (nbase > f->cap_base) orr_grow((void **)&f->base, &f->cap_base, nbase, sizeof *f->base);
    orr_sched_clear(&f->all);
    int partly_mirrored = 0;
    uint64_t local_flows = UINT64_MAX; /* flows of an image inside one server (all such alike) */
    for (uint32_t i = 0; i < is->nimg; i++) {
        const uint32_t *m = f->img_m + is->off + (size_t)i * is->n;
        int local = m[0] / f->gpn == m[is->n - 1] / f->gpn;
        f->base[2 * i] = f->base[2 * i + 1] = NONE;
        if (local && local_flows != UINT64_MAX && mirrored_server(f, m[0], m[is->n - 1]) != NONE) {
            f->mirrored_flows += local_flows; /* left out, as below, without building it */
            continue;
        }
        orr_coll_desc s = *d;
        s.nodes = s.per_node = 0;
        s = orr_net_coll_shape(n, &s, m);
        orr_sched_coll(&f->sched, n->gpu, n->cluster, &s, m, &f->opts, NULL);
        if (local) local_flows = moving_flows(&f->sched);
        if (mirrored_server(f, m[0], m[is->n - 1]) != NONE) { /* wholly inside a mirrored server */
            f->mirrored_flows += local_flows;
            continue;
        }
        f->base[2 * i] = (uint32_t)f->all.nflows;
        for (size_t j = 0; j < f->sched.nflows && f->server_rep && !partly_mirrored; j++)
            partly_mirrored = mirrored_server(f, f->sched.flows[j].src, f->sched.flows[j].dst) != NONE;
        orr_sched_append(&f->all, &f->sched);
        f->base[2 * i + 1] = (uint32_t)f->all.nflows;
    }
    if (partly_mirrored) join_mirrored(f, is);
    orr_runner_run(f->run, &f->all, done, ctx, arg);
}

static void flow_destroy(orr_net *n)
{
    flow_net *f = n->impl;
    orr_runner_free(f->run);
    f->tr->destroy(f->tr);
    orr_topo_free(&f->topo);
    orr_sched_free(&f->sched);
    orr_sched_free(&f->all);
    orr_map_free(&f->set_index);
    free(f->sets);
    free(f->img_m);
    free(f->server_rep);
    free(f->server_inv);
    free(f->link_rep);
    free(f->base);
    free(f->redir);
    free(f->join);
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
    const flow_net *f = n->impl;
    return f->link_rep && link < f->topo.n_links ? f->link_rep[link] : link;
}

static const orr_topo *flow_topo(const orr_net *n) { return ((const flow_net *)n->impl)->tr->topo; }

static void flow_sync(orr_net *n) { orr_flow_sync(((flow_net *)n->impl)->tr); }

/* A link as the whole job loads it: a mirrored server's NVLink link reports its representative's. */
static void flow_link_use(const orr_net *n, uint32_t link, orr_net_link_use *out)
{
    const orr_flow_link_stats *st = orr_flow_link_stats_of(((const flow_net *)n->impl)->tr, flow_link_rep(n, link));
    out->bytes = st->bytes;
    out->bottleneck_ps = st->saturated_ps;
}

static void flow_track_links(orr_net *n) { orr_flow_set_link_bins(((flow_net *)n->impl)->tr, n->link_bins); }

static void flow_summarise(const orr_net *n, orr_net_counters *out)
{
    orr_net_flow_counts m = orr_net_counts(n);
    out->flows = m.flows;
    out->mirrored_servers = m.mirrored_servers;
    out->mirrored_flows = m.mirrored_flows;
    out->unmatched_flows = m.unmatched_flows;
}

orr_net_flow_counts orr_net_counts(const orr_net *n)
{
    orr_net_flow_counts m = {0, 0, 0, 0};
    if (!n || n->kind != ORR_NET_FLOW) return m;
    const flow_net *f = n->impl;
    m.flows = orr_flow_get_totals(f->tr).flows + f->mirrored_flows;
    m.mirrored_servers = f->nmirrored;
    m.mirrored_flows = f->mirrored_flows;
    m.unmatched_flows = f->unmatched_flows;
    return m;
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
    f->gpus = cfg->gpus;
    f->gpn = n->cluster->gpus_per_node ? n->cluster->gpus_per_node : 1;
    if (cfg->sym && cfg->sym->nimages > 1) f->sym = *cfg->sym;
    mirror_init(f, cfg);
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
