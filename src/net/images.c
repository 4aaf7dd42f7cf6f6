/*
 * images.c - a collapsed workload's traffic on every GPU it stands for: what a topology backend
 * with ORR_NET_CAP_SYMMETRY (flow_net.c, packet_net.c) runs its collectives and sends through.
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
 *
 * Rotated servers. Inside a simulated server the same argument holds for the rotation of its
 * GPUs (GPU q -> q + 1 modulo the server's size), when every flow inside a server belongs to a
 * ring over exactly that server (a collective whose schedule the rotation maps onto itself,
 * orr_sched.rotation_invariant) and nothing else runs there: every group of the job has one
 * member in each server it spans or is one whole server, the collectives on whole servers are
 * all-gathers, reduce-scatters and all-reduces the tuner runs as rings, and no send (of any
 * image) stays inside a server (rotation_init). Such a collective starts for all its members at
 * once (the executor starts it when the last joins), so the flows of one orbit (a flow and its
 * rotations) start together with equal bytes; every NVLink link of the server carries exactly
 * one flow of each orbit, up links and down links alike, so max-min fair sharing gives every flow
 * of an orbit the same rate, and they finish together. So only the flows leaving the server's
 * first GPU are simulated (its up link carries one flow of every orbit, as each link does; the
 * down links carry fewer, which constrains nothing more: links are alike and the up link is as
 * loaded as any); the others finish with them (rotate_reduce: their successors wait for their
 * representative instead, and the runner numbers them as if they had started with it, so the
 * numbers of later flows, which ECMP hashes, stay as they were but for flows starting in the same
 * picosecond). 7 of 8 flows of a TP 8 ring. Every NVLink link of such a server
 * reports the first GPU's up link's bytes (each carries what it carries); the time a down link
 * is a bottleneck is the sum over the server's down links' (the fair share marks one link per
 * flow, the lower id of its two, and a representative marks for its whole orbit): per link it
 * can differ from a run without rotation (the ring's wrap-around flow marks a down link where
 * the others mark up links), summed over the server's links it is the same. NVLS and all-to-all
 * are rotation-invariant too, with the same rates, but their flows share links, and which of
 * them the fair share marks depends on link ids, not on orbits: not rotated, so the statistics
 * stay exact. Not used with cfg->no_rotate, or where mirroring is not (cfg->no_mirror, PXN,
 * HPCC). tests/test_symflow.c compares with cfg->no_rotate.
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

struct orr_net_images {
    const orr_topo *topo;     /* the backend's */
    uint32_t gpus, gpn;
    orr_sym sym;              /* nimages > 1 */
    orr_sched one, all;       /* one image's schedule; all images' */
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
    /* rotated servers (rotate 0: none) */
    int rotate;
    uint64_t rotated_flows;   /* flows not simulated because they are rotations of simulated ones */
    uint32_t *down;           /* with rotate: per GPU, its NVLink down link (bottleneck sums) */
    orr_sched rot;            /* a rotated collective's reduced schedule */
    uint32_t *rscratch;
    size_t cap_rscratch;
    /* scratch */
    uint32_t *base;           /* per image: its flows in `all`, first and end (NONE: left out) */
    size_t cap_base;
    uint32_t *redir;          /* per flow of `all`: the join point its successors wait for instead */
    size_t cap_redir;
};

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
static image_set *images_of(orr_net_images *im, const uint32_t *m, uint32_t n)
{
    uint64_t key = list_hash(m, n);
    for (uint32_t *p; (p = orr_map_get(&im->set_index, key)) != NULL; key = rehash(key)) {
        image_set *s = &im->sets[*p];
        if (s->n == n && memcmp(im->img_m + s->off, m, n * sizeof *m) == 0) return s;
    }
    image_set s = {n, 0, im->nimg_m, 0, 0, 0};
    orr_map seen = {0};
    for (uint32_t k = 0; k < im->sym.nimages; k++) {
        if (im->nimg_m + n > im->cap_img_m) orr_grow((void **)&im->img_m, &im->cap_img_m, im->nimg_m + n, sizeof *im->img_m);
        uint32_t *img = im->img_m + im->nimg_m;
        for (uint32_t i = 0; i < n; i++) img[i] = orr_sym_image(&im->sym, k, m[i]);
        qsort(img, n, sizeof *img, cmp_u32);
        uint64_t h = list_hash(img, n);
        int dup = 0;
        for (uint32_t *p; !dup && (p = orr_map_get(&seen, h)) != NULL;) {
            dup = memcmp(im->img_m + s.off + (size_t)*p * n, img, n * sizeof *img) == 0;
            if (!dup) h = rehash(h);
        }
        if (dup) continue;
        orr_map_put(&seen, h, s.nimg++);
        im->nimg_m += n;
    }
    orr_map_free(&seen);
    ORR_PUSH(im->sets, im->nsets, im->cap_sets, s);
    orr_map_put(&im->set_index, key, (uint32_t)(im->nsets - 1));
    return &im->sets[im->nsets - 1];
}

/* ---- mirrored servers ---- */

/* The mirrored server both ends of a flow are in, or NONE. */
static uint32_t mirrored_server(const orr_net_images *im, uint32_t src, uint32_t dst)
{
    if (!im->server_rep) return NONE;
    uint32_t x = src / im->gpn;
    return dst / im->gpn == x && im->server_rep[x] != x ? x : NONE;
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
static int nvlink_private(const orr_net_images *im)
{
    const orr_topo *t = im->topo;
    const orr_link *first = NULL;
    for (uint32_t h = 0; h < im->gpus; h++) {
        uint32_t l = 0, l0 = 0, sw = nvswitch_of(t, h, &l), sw0 = nvswitch_of(t, h / im->gpn * im->gpn, &l0);
        if (sw == NONE || sw != sw0) return 0;
        const orr_link *up = &t->links[l], *down = &t->links[l ^ 1];
        if (!first) first = up;
        if (up->rate_Bps != first->rate_Bps || down->rate_Bps != first->rate_Bps || up->tier != first->tier ||
            down->tier != first->tier || up->delay_ps != first->delay_ps || down->delay_ps != first->delay_ps)
            return 0;
        for (uint32_t i = t->out_start[sw]; i < t->out_start[sw + 1]; i++) {
            uint32_t w = t->links[t->out[i]].dst, wh = t->node_host[w];
            if (t->kind[w] != ORR_NODE_HOST || wh >= im->gpus || wh / im->gpn != h / im->gpn) return 0;
        }
    }
    return 1;
}

/* Does image k map every server onto one server, keeping the order of its GPUs? */
static int maps_servers(const orr_net_images *im, uint32_t k)
{
    for (uint32_t first = 0; first < im->gpus; first += im->gpn) {
        uint32_t prev = orr_sym_image(&im->sym, k, first), to = prev / im->gpn;
        for (uint32_t h = first + 1; h < first + im->gpn && h < im->gpus; h++) {
            uint32_t img = orr_sym_image(&im->sym, k, h);
            if (img / im->gpn != to || img < prev) return 0;
            prev = img;
        }
    }
    return 1;
}

static int is_mirrored(const orr_net_images *im, uint32_t server) { return im->server_rep[server] != server; }

/* Fills the join entries of set is (mirroring on): for each image with several members in some
 * mirrored server, the inverse image k of the first such server must move its members, in order,
 * onto another image i0 and each of its mirrored servers with several members onto a simulated
 * server; then (k, i0). Returns whether every image that needs one has one. */
static int mirror_matches(orr_net_images *im, image_set *is)
{
    if (is->joins_known) return is->joins_ok;
    is->joins_known = 1;
    is->joins_ok = 1;
    if (is->n == 0) return 1;
    is->joff = im->njoin / 2;
    if (im->njoin + 2 * (size_t)is->nimg > im->cap_join)
        orr_grow((void **)&im->join, &im->cap_join, im->njoin + 2 * (size_t)is->nimg, sizeof *im->join);
    if (is->n > im->cap_redir) orr_grow((void **)&im->redir, &im->cap_redir, is->n, sizeof *im->redir);
    uint32_t *moved = im->redir; /* scratch: one member list */
    for (uint32_t i = 0; i < is->nimg; i++) {
        const uint32_t *m = im->img_m + is->off + (size_t)i * is->n;
        uint32_t *e = im->join + im->njoin + 2 * (size_t)i, k = NONE;
        e[0] = e[1] = NONE;
        if (m[0] / im->gpn == m[is->n - 1] / im->gpn) continue; /* inside one server: left out or simulated */
        for (uint32_t j = 1; j < is->n && k == NONE; j++)
            if (m[j] / im->gpn == m[j - 1] / im->gpn && is_mirrored(im, m[j] / im->gpn)) k = im->server_inv[m[j] / im->gpn];
        if (k == NONE) continue;
        int ok = 1;
        for (uint32_t j = 0; j < is->n && ok; j++) {
            moved[j] = orr_sym_image(&im->sym, k, m[j]);
            ok = j == 0 || moved[j] > moved[j - 1];
            if (ok && j > 0 && m[j] / im->gpn == m[j - 1] / im->gpn && is_mirrored(im, m[j] / im->gpn))
                ok = !is_mirrored(im, moved[j] / im->gpn);
        }
        for (uint32_t i0 = 0; ok && i0 < is->nimg; i0++)
            if (i0 != i && memcmp(im->img_m + is->off + (size_t)i0 * is->n, moved, is->n * sizeof *moved) == 0) {
                e[0] = k;
                e[1] = i0;
            }
        if (e[1] == NONE) is->joins_ok = 0;
    }
    im->njoin += 2 * (size_t)is->nimg;
    return is->joins_ok;
}

/* Decides whether to mirror servers and builds the tables: the server orbits under the images
 * that map servers onto servers in order, for each mirrored server the image back to its
 * representative, and for each NVLink link of a mirrored server the representative's link it
 * reports. Then checks every group (mirror_matches); if one fails, nothing is mirrored. */
static void mirror_init(orr_net_images *im, const orr_net_config *cfg)
{
    if (im->sym.nimages <= 1 || cfg->no_mirror || cfg->pxn || cfg->topo.kind == ORR_TOPO_HPCC || im->gpn < 2 ||
        !nvlink_private(im))
        return;
    uint32_t servers = (im->gpus + im->gpn - 1) / im->gpn;
    im->server_rep = orr_xmalloc(servers * sizeof *im->server_rep);
    im->server_inv = orr_xmalloc(servers * sizeof *im->server_inv);
    for (uint32_t x = 0; x < servers; x++) im->server_rep[x] = im->server_inv[x] = NONE;
    uint32_t *maps = orr_xmalloc(im->sym.nimages * sizeof *maps), nmaps = 0;
    for (uint32_t k = 0; k < im->sym.nimages; k++)
        if (maps_servers(im, k)) maps[nmaps++] = k;
    for (uint32_t x = 0; x < servers; x++) { /* maps[0] is the identity: x is its own first */
        if (im->server_rep[x] != NONE) continue;
        for (uint32_t i = 0; i < nmaps; i++) {
            uint32_t y = orr_sym_image(&im->sym, maps[i], x * im->gpn) / im->gpn;
            if (im->server_rep[y] != NONE) continue;
            im->server_rep[y] = x;
            im->server_inv[y] = orr_sym_inverse(&im->sym, maps[i]);
            if (y != x) im->nmirrored++;
        }
    }
    free(maps);
    int ok = im->nmirrored > 0;
    for (size_t g = 0; ok && g < cfg->ngroups; g++) {
        image_set *is = images_of(im, cfg->groups[g].members, cfg->groups[g].size);
        ok = mirror_matches(im, is);
    }
    if (!ok) {
        free(im->server_rep);
        free(im->server_inv);
        im->server_rep = im->server_inv = NULL;
        im->nmirrored = 0;
        for (size_t i = 0; i < im->nsets; i++) im->sets[i].joins_known = 0;
        im->njoin = 0;
        return;
    }
    im->link_rep = orr_xmalloc((im->topo->n_links ? im->topo->n_links : 1) * sizeof *im->link_rep);
    for (uint32_t l = 0; l < im->topo->n_links; l++) im->link_rep[l] = l;
    for (uint32_t h = 0; h < im->gpus; h++) {
        uint32_t y = h / im->gpn, l = 0, l0 = 0;
        if (!is_mirrored(im, y)) continue;
        nvswitch_of(im->topo, h, &l);
        nvswitch_of(im->topo, orr_sym_image(&im->sym, im->server_inv[y], h), &l0);
        im->link_rep[l] = l0;
        im->link_rep[l ^ 1] = l0 ^ 1;
    }
}

/* In `all` (the images of is, image i at flows [base[2i], base[2i+1]), NONE if left out), each
 * flow inside a mirrored server stops moving bytes: it becomes a join point (reached, like the
 * flow's start, after its dependencies and its delay), and its successors wait instead for a new
 * join point after it and after its preimage, the same-index flow of image i0 (mirror_matches),
 * which finishes when it would. An image without an i0 keeps its flows (counted unmatched). */
static void join_mirrored(orr_net_images *im, image_set *is)
{
    orr_sched *s = &im->all;
    mirror_matches(im, is);
    size_t nflows = s->nflows, nedges = s->nedges;
    if (nflows > im->cap_redir) orr_grow((void **)&im->redir, &im->cap_redir, nflows, sizeof *im->redir);
    for (size_t g = 0; g < nflows; g++) im->redir[g] = NONE;
    for (uint32_t i = 0; i < is->nimg; i++) {
        const uint32_t *e = im->join + 2 * (is->joff + i);
        uint32_t first = im->base[2 * i], end = im->base[2 * i + 1];
        for (uint32_t g = first; first != NONE && g < end; g++) {
            orr_sched_flow *fl = &s->flows[g];
            uint32_t x = fl->src / im->gpn;
            if (fl->bytes == 0 || fl->dst / im->gpn != x || !is_mirrored(im, x)) continue;
            uint32_t g0 = e[1] == NONE ? NONE : im->base[2 * e[1]] + (g - first);
            if (g0 == NONE || s->flows[g0].src != orr_sym_image(&im->sym, e[0], fl->src) ||
                s->flows[g0].dst != orr_sym_image(&im->sym, e[0], fl->dst) || s->flows[g0].bytes != fl->bytes) {
                im->unmatched_flows++; /* cannot happen after mirror_matches: kept as a check */
                continue;
            }
            fl->bytes = 0;
            im->redir[g] = g0;
            im->mirrored_flows++;
        }
    }
    for (uint32_t g = 0; g < nflows; g++) {
        if (im->redir[g] == NONE) continue;
        uint32_t g0 = im->redir[g], join = orr_sched_add(s, 0, 0, 0, 0);
        im->redir[g] = join;
        orr_sched_dep(s, g, join);
        orr_sched_dep(s, g0, join);
    }
    for (size_t e = 0; e < nedges; e++)
        if (im->redir[s->edges[e][0]] != NONE) s->edges[e][0] = im->redir[s->edges[e][0]];
}

/* ---- rotated servers ---- */

/* Is member list m (n ascending ranks) one whole server? */
static int whole_server(const orr_net_images *im, const uint32_t *m, uint32_t n)
{
    return n == im->gpn && m[0] % im->gpn == 0 && m[n - 1] == m[0] + n - 1;
}

/* Does some image of member list m (n) hold several GPUs of one server? Sets *bad if one does
 * without being a whole server. */
static int in_a_server(orr_net_images *im, const uint32_t *m, uint32_t n, int *bad)
{
    image_set *is = images_of(im, m, n);
    int any = 0;
    for (uint32_t i = 0; i < is->nimg; i++) {
        const uint32_t *g = im->img_m + is->off + (size_t)i * is->n;
        for (uint32_t j = 1; j < n; j++)
            if (g[j] / im->gpn == g[j - 1] / im->gpn) {
                any = 1;
                if (!whole_server(im, g, n)) *bad = 1;
                break;
            }
    }
    return any;
}

/* Is collective op, on a whole server, a ring there (sched.c: all-gather and reduce-scatter
 * always, an all-reduce where the tuner picks the ring; not NVLS or all-to-all, whose flows share
 * links: their rates would be the same, but which links the fair share marks as bottlenecks
 * depends on link ids, not on orbits, so the links' statistics would not be)? */
static int ring_in_server(const orr_net_images *im, const orr_gpu *g, const orr_cluster *c, const orr_op *op)
{
    if (op->cls == ORR_COLL_ALLGATHER || op->cls == ORR_COLL_REDUCESCATTER) return 1;
    if (op->cls != ORR_COLL_ALLREDUCE) return 0;
    orr_coll_desc d = {ORR_COLL_ALLREDUCE, op->bytes, im->gpn, 1, im->gpn, ORR_ALGO_AUTO};
    orr_coll_algo a = ORR_ALGO_RING;
    orr_comm_coll_ps(g, c, &d, &a);
    return a == ORR_ALGO_RING;
}

/* Decides whether to rotate servers (the header): the same fabric conditions as mirroring, then
 * every group, every collective on a whole server and every send of the job checked. */
static void rotation_init(orr_net_images *im, const orr_gpu *gpu, const orr_cluster *cl, const orr_net_config *cfg)
{
    const orr_workload *w = cfg->workload;
    if (!w || cfg->no_mirror || cfg->no_rotate || cfg->pxn || cfg->topo.kind == ORR_TOPO_HPCC || im->gpn < 2 ||
        !nvlink_private(im))
        return;
    int bad = 0, any = 0;
    uint8_t *local = orr_xcalloc(w->ngroups ? w->ngroups : 1, 1); /* per group: on whole servers */
    for (size_t g = 0; g < w->ngroups && !bad; g++)
        if (w->groups[g].size > 1 && w->groups[g].members) {
            local[g] = (uint8_t)in_a_server(im, w->groups[g].members, w->groups[g].size, &bad);
            any |= local[g];
        }
    for (size_t r = 0; r < w->nranks && any && !bad; r++) {
        const orr_rank *rk = &w->ranks[r];
        uint32_t checked = NONE; /* the last peer checked: a rank sends to one or two */
        for (size_t i = 0; i < rk->nops && !bad; i++) {
            const orr_op *op = &rk->ops[i];
            if (op->kind == ORR_OP_COLL && op->a < w->ngroups && local[op->a])
                bad = !ring_in_server(im, gpu, cl, op);
            if ((op->kind != ORR_OP_SEND && op->kind != ORR_OP_RECV) || op->a == checked) continue;
            for (uint32_t k = 0; k < im->sym.nimages && !bad; k++)
                bad = orr_sym_image(&im->sym, k, rk->gpu) / im->gpn == orr_sym_image(&im->sym, k, op->a) / im->gpn;
            checked = op->a;
        }
    }
    free(local);
    if (!any || bad) return;
    im->rotate = 1;
    im->down = orr_xmalloc(im->gpus * sizeof *im->down);
    for (uint32_t h = 0; h < im->gpus; h++) {
        uint32_t l = 0;
        nvswitch_of(im->topo, h, &l);
        im->down[h] = l ^ 1;
    }
}

/* im->one, a rotation-invariant collective over the whole simulated server from GPU x0, reduced
 * into im->rot: the flows leaving x0 and the join points, each flow standing for its rotations
 * (the one from x0 + s to x0 + (s + d) mod n that is the j-th such of the schedule is the image
 * of the j-th from x0 to x0 + d); an edge into a rotation is dropped, one out of it leaves its
 * representative. Returns -1, im->rot unset, if a flow has no such representative of equal bytes
 * and delay or an orbit is not whole (sched.c's invariance broken: then simulated in full). */
static int rotate_reduce(orr_net_images *im)
{
    const orr_sched *one = &im->one;
    uint32_t n = im->gpn, nf = (uint32_t)one->nflows, x0 = NONE;
    size_t need = 3 * (size_t)nf + (size_t)n * n + 2 * (size_t)n + 1;
    if (need > im->cap_rscratch) orr_grow((void **)&im->rscratch, &im->cap_rscratch, need, sizeof *im->rscratch);
    uint32_t *rep = im->rscratch, *idx = rep + nf, *list = idx + nf, *occ = list + nf, *cnt = occ + (size_t)n * n,
             *start = cnt + n;
    memset(occ, 0, ((size_t)n * n + n) * sizeof *occ);
    for (uint32_t g = 0; g < nf; g++) {
        const orr_sched_flow *f = &one->flows[g];
        rep[g] = NONE;
        if (f->bytes == 0 || f->src == f->dst) continue;
        if (x0 == NONE) x0 = f->src / n * n;
        if (f->src / n != x0 / n || f->dst / n != x0 / n) return -1;
        if (f->src == x0) cnt[f->dst - x0]++;
    }
    if (x0 == NONE) return -1;
    start[0] = 0;
    for (uint32_t d = 0; d < n; d++) start[d + 1] = start[d] + cnt[d];
    for (uint32_t g = 0; g < nf; g++) {
        const orr_sched_flow *f = &one->flows[g];
        if (f->bytes > 0 && f->src == x0) list[start[f->dst - x0] + occ[f->dst - x0]++] = g;
    }
    memset(occ, 0, (size_t)n * n * sizeof *occ);
    uint64_t removed = 0;
    for (uint32_t g = 0; g < nf; g++) {
        const orr_sched_flow *f = &one->flows[g];
        if (f->bytes == 0 || f->src == f->dst || f->src == x0) continue;
        uint32_t s = f->src - x0, d = (f->dst - x0 + n - s) % n, j = occ[(size_t)s * n + d]++;
        if (j >= cnt[d]) return -1;
        uint32_t g0 = list[start[d] + j];
        if (one->flows[g0].bytes != f->bytes || one->flows[g0].delay_ps != f->delay_ps) return -1;
        rep[g] = g0;
        removed++;
    }
    for (uint32_t s = 1; s < n; s++)
        for (uint32_t d = 1; d < n; d++)
            if (occ[(size_t)s * n + d] != cnt[d]) return -1;
    orr_sched_clear(&im->rot);
    for (uint32_t g = 0; g < nf; g++) {
        const orr_sched_flow *f = &one->flows[g];
        if (rep[g] != NONE) continue;
        idx[g] = orr_sched_add(&im->rot, f->src, f->dst, f->bytes, f->delay_ps);
        if (f->bytes > 0 && f->src != f->dst) im->rot.flows[idx[g]].stands_for = n - 1;
    }
    for (size_t e = 0; e < one->nedges; e++) {
        uint32_t a = one->edges[e][0], b = one->edges[e][1];
        if (rep[b] != NONE) continue;
        orr_sched_dep(&im->rot, idx[rep[a] != NONE ? rep[a] : a], idx[b]);
    }
    im->rotated_flows += removed;
    return 0;
}

/* ---- what the backends call ---- */

orr_net_images *orr_net_images_new(const orr_topo *topo, const orr_gpu *g, const orr_cluster *c,
                                   const orr_net_config *cfg)
{
    if (!cfg->sym || cfg->sym->nimages <= 1) return NULL;
    orr_net_images *im = orr_xcalloc(1, sizeof *im);
    im->topo = topo;
    im->gpus = cfg->gpus;
    im->gpn = c->gpus_per_node ? c->gpus_per_node : 1;
    im->sym = *cfg->sym;
    mirror_init(im, cfg);
    rotation_init(im, g, c, cfg);
    if (im->rotate) { /* every NVLink link reports its (representative) server's first GPU's up link */
        if (!im->link_rep) {
            im->link_rep = orr_xmalloc((topo->n_links ? topo->n_links : 1) * sizeof *im->link_rep);
            for (uint32_t l = 0; l < topo->n_links; l++) im->link_rep[l] = l;
        }
        for (uint32_t h = 0; h < im->gpus; h++) {
            uint32_t y = h / im->gpn, x = im->server_rep ? im->server_rep[y] : y, l = 0, l0 = 0;
            nvswitch_of(topo, h, &l);
            nvswitch_of(topo, x * im->gpn, &l0);
            im->link_rep[l] = im->link_rep[l ^ 1] = l0;
        }
    }
    return im;
}

void orr_net_images_free(orr_net_images *im)
{
    if (!im) return;
    orr_sched_free(&im->one);
    orr_sched_free(&im->all);
    orr_map_free(&im->set_index);
    free(im->sets);
    free(im->img_m);
    free(im->server_rep);
    free(im->server_inv);
    free(im->link_rep);
    free(im->base);
    free(im->redir);
    free(im->join);
    free(im->down);
    orr_sched_free(&im->rot);
    free(im->rscratch);
    free(im);
}

void orr_net_images_send(orr_net_images *im, orr_net *n, orr_runner *run, uint32_t src, uint32_t dst, uint64_t bytes,
                         orr_event_fn done, void *ctx, uint64_t arg)
{
    /* Every image of a rank is distinct (orr_sym), so the pairs are too. A pair inside a mirrored
     * server is left out: its preimage, inside the representative, is one of the pairs. */
    orr_sched_clear(&im->all);
    for (uint32_t k = 0; k < im->sym.nimages; k++) {
        uint32_t a = orr_sym_image(&im->sym, k, src), b = orr_sym_image(&im->sym, k, dst);
        orr_sched_p2p(&im->one, n->gpu, n->cluster, a, b, bytes);
        if (mirrored_server(im, a, b) != NONE) im->mirrored_flows += moving_flows(&im->one);
        else orr_sched_append(&im->all, &im->one);
    }
    orr_runner_run(run, &im->all, done, ctx, arg);
}

void orr_net_images_collective(orr_net_images *im, orr_net *n, orr_runner *run, const orr_sched_opts *opts,
                               const orr_coll_desc *d, const uint32_t *members, orr_event_fn done, void *ctx,
                               uint64_t arg)
{
    if (!members || d->size == 0) {
        orr_net_run_collective(n, run, &im->one, opts, d, members, done, ctx, arg);
        return;
    }
    image_set *is = images_of(im, members, d->size);
    size_t nbase = 2 * (size_t)is->nimg;
    if (nbase > im->cap_base) orr_grow((void **)&im->base, &im->cap_base, nbase, sizeof *im->base);
    orr_sched_clear(&im->all);
    int partly_mirrored = 0;
    uint64_t local_flows = UINT64_MAX; /* flows of an image inside one server (all such alike) */
    for (uint32_t i = 0; i < is->nimg; i++) {
        const uint32_t *m = im->img_m + is->off + (size_t)i * is->n;
        int local = m[0] / im->gpn == m[is->n - 1] / im->gpn;
        im->base[2 * i] = im->base[2 * i + 1] = NONE;
        if (local && local_flows != UINT64_MAX && mirrored_server(im, m[0], m[is->n - 1]) != NONE) {
            im->mirrored_flows += local_flows; /* left out, as below, without building it */
            continue;
        }
        orr_coll_desc s = *d;
        s.nodes = s.per_node = 0;
        s = orr_net_coll_shape(n, &s, m);
        orr_sched_coll(&im->one, n->gpu, n->cluster, &s, m, opts, NULL);
        if (local) local_flows = moving_flows(&im->one);
        if (mirrored_server(im, m[0], m[is->n - 1]) != NONE) { /* wholly inside a mirrored server */
            im->mirrored_flows += local_flows;
            continue;
        }
        im->base[2 * i] = (uint32_t)im->all.nflows;
        if (local && im->rotate && whole_server(im, m, is->n)) { /* a rotated server (the header) */
            if (im->one.rotation_invariant && rotate_reduce(im) == 0) {
                orr_sched_append(&im->all, &im->rot);
                im->base[2 * i + 1] = (uint32_t)im->all.nflows;
                continue;
            }
            im->unmatched_flows += moving_flows(&im->one); /* not a ring: rotation_init rules it out */
        }
        for (size_t j = 0; j < im->one.nflows && im->server_rep && !partly_mirrored; j++)
            partly_mirrored = mirrored_server(im, im->one.flows[j].src, im->one.flows[j].dst) != NONE;
        orr_sched_append(&im->all, &im->one);
        im->base[2 * i + 1] = (uint32_t)im->all.nflows;
    }
    if (partly_mirrored) join_mirrored(im, is);
    orr_runner_run(run, &im->all, done, ctx, arg);
}

uint32_t orr_net_images_link_rep(const orr_net_images *im, uint32_t link)
{
    return im && im->link_rep && link < im->topo->n_links ? im->link_rep[link] : link;
}

int64_t orr_net_images_bottleneck_ps(const orr_net_images *im, const orr_transport *nvl, uint32_t link,
                                     int64_t rep_ps)
{
    if (!im || !im->rotate || link >= im->topo->n_links) return rep_ps;
    const orr_topo *t = im->topo;
    const orr_link *k = &t->links[link];
    if (k->tier != ORR_TIER_NVLINK || t->kind[k->dst] != ORR_NODE_HOST || t->node_host[k->dst] >= im->gpus) return rep_ps;
    uint32_t y = t->node_host[k->dst] / im->gpn, x = im->server_rep ? im->server_rep[y] : y;
    int64_t sum = 0; /* a down link of a rotated server: the sum over its server's down links */
    for (uint32_t q = 0; q < im->gpn; q++) sum += orr_flow_link_stats_of(nvl, im->down[x * im->gpn + q])->saturated_ps;
    return sum;
}

void orr_net_images_count(const orr_net_images *im, orr_net_counters *out)
{
    if (!im) return;
    out->flows += im->mirrored_flows;
    out->mirrored_servers = im->nmirrored;
    out->mirrored_flows = im->mirrored_flows;
    out->unmatched_flows = im->unmatched_flows;
    out->flows += im->rotated_flows;
    out->rotated_flows = im->rotated_flows;
}
