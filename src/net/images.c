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
 * GPUs (GPU q -> q + 1 modulo the server's size) and a ring over exactly that server: its schedule
 * maps onto itself (orr_sched.rotation_invariant), it starts for all its members at once (the
 * executor starts a collective when the last joins), so the flows of one orbit (a flow and its
 * rotations) start together with equal bytes, and every NVLink link of the server carries
 * exactly one flow of each orbit of the rings in flight (up links and down links alike): max-min
 * fair sharing gives the flows of an orbit the same rate, and they finish together. So only the
 * flows leaving the server's first GPU are simulated, the others finish with them
 * (rotate_reduce: their successors wait for their representative instead, and the runner numbers
 * them as if they had started with it, so the numbers of later flows, which ECMP hashes, stay as
 * they were but for flows starting in the same picosecond): 7 of 8 flows of a TP 8 ring. Used
 * where some group's images are whole servers with a ring among its collectives (rotation_init),
 * not with cfg->no_rotate or link windows tracked, nor where mirroring is not (cfg->no_mirror,
 * PXN, HPCC).
 * Everything else inside a server is simulated in full: NVLS and all-to-all (rotation-invariant
 * too, with the same rates, but their flows share links, and which of them the fair share marks
 * as bottlenecks follows link ids, not orbits), sends, and collectives of groups that span servers
 * several GPUs each (Megatron's model-parallel group, TP x PP, whose 4-byte all-reduces ring
 * through several servers). That is exact only at times when no rotated flow is in flight in the
 * same server, so a guard counts, per server, the DAGs in flight of each kind (run_guarded); one
 * starting beside the other kind is an overlap, and orr_execute then runs the job again without
 * rotation. Dense jobs do not overlap (a collective over a group holds all its members until it
 * ends, and the model-parallel all-reduces come after the last backward); Megatron MoE layers with
 * TP over a whole server and EP across servers did (their dispatch, an all-to-all over TP x EP,
 * beside the TP rings: Mixtral 8x7B, TP 8, EP 2, 16 GPUs ran twice, 1.13-1.19x the time without
 * rotation), so a job with an all-to-all over a group holding several GPUs of a server is not
 * rotated (rotation_init).
 * Link statistics: a server's NVLink links gather, while it carries rotated rings, what its first
 * GPU's up link gathers (each carries what it carries), and a down link is a bottleneck for the
 * sum of the server's down links' times (the fair share marks one link per flow, the lower id of
 * its two, and a representative marks for its whole orbit: per link this can differ from a run
 * without rotation, as the ring's wrap-around flow marks a down link where the others mark up
 * links; summed over the server's links it is the same); at other times their own. The kinds
 * alternate only at guard-checked switches, where the links are idle and their statistics are
 * noted (switch_server). tests/test_symflow.c compares with cfg->no_rotate.
 *
 * Schedules built. A collective's schedule over all its images is a function of its member list,
 * kind, algorithm and bytes (and of what a run does not change), so it is kept, with what building
 * it added to the counters, and the next collective of the same four runs it as it is (up to
 * BUILT_MAX_FLOWS flows kept): a training step repeats a few collectives thousands of times.
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
    uint32_t *up;             /* with rotate: per GPU, its NVLink up link (its down link: up ^ 1) */
    orr_sched rot;            /* a rotated collective's reduced schedule */
    uint32_t *rscratch;
    size_t cap_rscratch;
    /* with rotate, the guard (run_guarded): per server, DAGs in flight with rotated flows in it and
     * with other flows inside it, the epochs that mark a server once per DAG, and the overlaps */
    uint32_t *rot_live, *other_live, *mark_rot, *mark_other, epoch;
    uint64_t overlaps;
    /* with rotate, link statistics (link_use): per server the kind of its flows since its last
     * switch (0 none yet, 1 rotated, 2 others), and per GPU and direction (2h up, 2h + 1 down) the
     * statistics closed at the switches and the flow model's at the last switch */
    const orr_transport *nvl; /* the flow model carrying the NVLink flows */
    uint8_t *mode;
    double *acc_bytes, *snap_bytes;
    int64_t *acc_sat, *snap_sat;
    struct live_dag *live;    /* DAGs in flight with flows inside a server (pool) */
    size_t nlive, cap_live;
    uint32_t free_live;
    /* schedules built, for the next collective of the same member list, kind, algorithm and bytes
     * (orr_net_images_collective): entries (each owning its schedule), their index, and the flows
     * they hold together (bounded by BUILT_MAX_FLOWS) */
    struct built *built;
    size_t nbuilt, cap_built, built_flows;
    orr_map built_index;
    uint32_t *touch;          /* scratch: the servers a schedule not kept has flows in (touched) */
    size_t cap_touch;
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

/* A DAG in flight with flows inside servers: its caller's callback and the servers it has flows
 * in, each as server << 1 | rotated (its storage kept when the record is reused). */
typedef struct live_dag {
    orr_event_fn done;
    void *ctx;
    uint64_t arg;
    uint32_t *srv;
    size_t nsrv, capsrv;
    uint32_t next_free;
} live_dag;

/* Is member list m (n ascending ranks) one whole server? */
static int whole_server(const orr_net_images *im, const uint32_t *m, uint32_t n)
{
    return n == im->gpn && m[0] % im->gpn == 0 && m[n - 1] == m[0] + n - 1;
}

/* Is every image of member list m (n) one whole server? */
static int on_whole_servers(orr_net_images *im, const uint32_t *m, uint32_t n)
{
    image_set *is = images_of(im, m, n);
    for (uint32_t i = 0; i < is->nimg; i++)
        if (!whole_server(im, im->img_m + is->off + (size_t)i * is->n, n)) return 0;
    return 1;
}

/* Does some image of member list m (n) hold several GPUs of one server? */
static int in_some_server(orr_net_images *im, const uint32_t *m, uint32_t n)
{
    image_set *is = images_of(im, m, n);
    for (uint32_t i = 0; i < is->nimg; i++) {
        const uint32_t *g = im->img_m + is->off + (size_t)i * is->n;
        for (uint32_t j = 1; j < n; j++)
            if (g[j] / im->gpn == g[j - 1] / im->gpn) return 1;
    }
    return 0;
}

/* Is collective op, on a whole server, a ring there (sched.c: all-gather and reduce-scatter
 * always, an all-reduce where the tuner picks the ring)? */
static int ring_in_server(const orr_net_images *im, const orr_gpu *g, const orr_cluster *c, const orr_op *op)
{
    if (op->cls == ORR_COLL_ALLGATHER || op->cls == ORR_COLL_REDUCESCATTER) return 1;
    if (op->cls != ORR_COLL_ALLREDUCE) return 0;
    orr_coll_desc d = {ORR_COLL_ALLREDUCE, op->bytes, im->gpn, 1, im->gpn, ORR_ALGO_AUTO};
    orr_coll_algo a = ORR_ALGO_RING;
    orr_comm_coll_ps(g, c, &d, &a);
    return a == ORR_ALGO_RING;
}

/* Decides whether to rotate servers (the header): the same fabric conditions as mirroring, some
 * ring on a group whose images are whole servers (else there is nothing to rotate), and no MoE
 * dispatch inside a server (below). */
static void rotation_init(orr_net_images *im, const orr_gpu *gpu, const orr_cluster *cl, const orr_net_config *cfg)
{
    const orr_workload *w = cfg->workload;
    if (!w || !im->nvl || cfg->no_mirror || cfg->no_rotate || cfg->pxn || cfg->topo.kind == ORR_TOPO_HPCC ||
        im->gpn < 2 || !nvlink_private(im))
        return;
    /* per group: 1 its images are whole servers, 2 they hold several GPUs of a server otherwise */
    uint8_t *shape = orr_xcalloc(w->ngroups ? w->ngroups : 1, 1);
    for (size_t g = 0; g < w->ngroups; g++) {
        const orr_group *gr = &w->groups[g];
        if (gr->size < 2 || !gr->members) continue;
        if (gr->size == im->gpn && on_whole_servers(im, gr->members, gr->size)) shape[g] = 1;
        else if (in_some_server(im, gr->members, gr->size)) shape[g] = 2;
    }
    int any = 0, dispatch = 0;
    for (size_t r = 0; r < w->nranks && !dispatch; r++)
        for (size_t i = 0; i < w->ranks[r].nops && !dispatch; i++) {
            const orr_op *op = &w->ranks[r].ops[i];
            if (op->kind != ORR_OP_COLL || op->a >= w->ngroups) continue;
            if (!any && shape[op->a] == 1) any = ring_in_server(im, gpu, cl, op);
            dispatch = shape[op->a] == 2 && op->cls == ORR_COLL_ALLTOALL;
        }
    free(shape);
    /* An all-to-all over a group with several GPUs in a server is MoE dispatch, which runs beside
     * the TP rings in Megatron's MoE layers: rotating would only make the job run twice (the guard). */
    if (!any || dispatch) return;
    im->rotate = 1;
    uint32_t servers = (im->gpus + im->gpn - 1) / im->gpn;
    im->up = orr_xmalloc(im->gpus * sizeof *im->up);
    for (uint32_t h = 0; h < im->gpus; h++) nvswitch_of(im->topo, h, &im->up[h]);
    im->mode = orr_xcalloc(servers, sizeof *im->mode);
    im->acc_bytes = orr_xcalloc(2 * (size_t)im->gpus, sizeof *im->acc_bytes);
    im->snap_bytes = orr_xcalloc(2 * (size_t)im->gpus, sizeof *im->snap_bytes);
    im->acc_sat = orr_xcalloc(2 * (size_t)im->gpus, sizeof *im->acc_sat);
    im->snap_sat = orr_xcalloc(2 * (size_t)im->gpus, sizeof *im->snap_sat);
    im->rot_live = orr_xcalloc(servers, sizeof *im->rot_live);
    im->other_live = orr_xcalloc(servers, sizeof *im->other_live);
    im->mark_rot = orr_xcalloc(servers, sizeof *im->mark_rot);
    im->mark_other = orr_xcalloc(servers, sizeof *im->mark_other);
    im->free_live = ORR_POOL_NONE;
}

/* The statistics that GPU h's up (dir 0) or down (dir 1) link gathered since server x's last switch,
 * as the whole job loads it: its own, or with rotated flows its server's first GPU's up link's
 * bytes and, for a down link, the time the server's down links were bottlenecks (the header). */
static void since_switch(const orr_net_images *im, uint32_t x, uint32_t h, int dir, double *bytes, int64_t *sat)
{
    const orr_flow_link_stats *st;
    size_t i = 2 * (size_t)h + (size_t)dir;
    if (im->mode[x] != 1) {
        st = orr_flow_link_stats_of(im->nvl, im->up[h] ^ (uint32_t)dir);
        *bytes = st->bytes - im->snap_bytes[i];
        *sat = st->saturated_ps - im->snap_sat[i];
        return;
    }
    uint32_t h0 = x * im->gpn;
    st = orr_flow_link_stats_of(im->nvl, im->up[h0]);
    *bytes = st->bytes - im->snap_bytes[2 * (size_t)h0];
    *sat = st->saturated_ps - im->snap_sat[2 * (size_t)h0];
    if (dir == 0) return;
    *sat = 0;
    for (uint32_t q = h0; q < h0 + im->gpn; q++)
        *sat += orr_flow_link_stats_of(im->nvl, im->up[q] ^ 1)->saturated_ps - im->snap_sat[2 * (size_t)q + 1];
}

/* Server x's flows become of kind mode (1 rotated, 2 others): what its links gathered since the
 * last switch is closed, and the flow model's statistics noted. Called when a DAG of that kind
 * starts there and none of the other kind is in flight (else the run is not exact anyway), so
 * nothing moves on its links and their statistics are up to date. */
static void switch_server(orr_net_images *im, uint32_t x, uint8_t mode)
{
    if (im->mode[x] == mode) return;
    uint32_t h0 = x * im->gpn;
    for (uint32_t h = h0; h < h0 + im->gpn; h++)
        for (int dir = 0; dir < 2; dir++) {
            size_t i = 2 * (size_t)h + (size_t)dir;
            double b;
            int64_t t;
            since_switch(im, x, h, dir, &b, &t);
            im->acc_bytes[i] += b;
            im->acc_sat[i] += t;
        }
    for (uint32_t h = h0; h < h0 + im->gpn; h++)
        for (int dir = 0; dir < 2; dir++) {
            const orr_flow_link_stats *st = orr_flow_link_stats_of(im->nvl, im->up[h] ^ (uint32_t)dir);
            im->snap_bytes[2 * (size_t)h + (size_t)dir] = st->bytes;
            im->snap_sat[2 * (size_t)h + (size_t)dir] = st->saturated_ps;
        }
    im->mode[x] = mode;
}

static void live_done_ev(void *ctx, uint64_t arg)
{
    orr_net_images *im = ctx;
    live_dag *d = &im->live[(uint32_t)arg];
    for (size_t i = 0; i < d->nsrv; i++) {
        uint32_t x = d->srv[i] >> 1;
        if (d->srv[i] & 1) im->rot_live[x]--;
        else im->other_live[x]--;
    }
    orr_event_fn done = d->done;
    void *dctx = d->ctx;
    uint64_t darg = d->arg;
    orr_pool_give(im->live, sizeof *im->live, offsetof(live_dag, next_free), &im->free_live, (uint32_t)arg);
    done(dctx, darg);
}

/* The servers schedule sc has flows inside, each once per kind, as server << 1 | rotated, into
 * *out (grown as needed); returns their count. 0 without rotation: nothing to guard. */
static size_t touched(orr_net_images *im, const orr_sched *sc, uint32_t **out, size_t *cap)
{
    if (!im->rotate) return 0;
    if (++im->epoch == 0) { /* wrapped: clear the marks */
        uint32_t servers = (im->gpus + im->gpn - 1) / im->gpn;
        memset(im->mark_rot, 0, servers * sizeof *im->mark_rot);
        memset(im->mark_other, 0, servers * sizeof *im->mark_other);
        im->epoch = 1;
    }
    size_t n = 0;
    for (size_t g = 0; g < sc->nflows; g++) {
        const orr_sched_flow *f = &sc->flows[g];
        if (f->bytes == 0 || f->src == f->dst) continue;
        uint32_t x = f->src / im->gpn;
        if (f->dst - x * im->gpn >= im->gpn) continue; /* leaves the server (unsigned) */
        int rot = f->stands_for > 0;
        uint32_t *mark = rot ? im->mark_rot : im->mark_other;
        if (mark[x] == im->epoch) continue;
        mark[x] = im->epoch;
        if (n == *cap) orr_grow((void **)out, cap, n + 1, sizeof **out);
        (*out)[n++] = x << 1 | (uint32_t)rot;
    }
    return n;
}

/* Runs sc, which has flows in the nsrv servers srv (touched). With rotation, the guard: rotated
 * flows in a server (standing for their rotations) are exact only while every other flow in flight
 * inside that server is rotated too, so a DAG with rotated flows starting in a server where other
 * flows are in flight, or the other way round, counts an overlap (orr_net_images_count), and the
 * caller runs the job again without rotation (orr_execute). Otherwise each server's DAGs in flight
 * are counted until they finish. */
static void run_guarded(orr_net_images *im, orr_runner *run, const orr_sched *sc, const uint32_t *srv, size_t nsrv,
                        orr_event_fn done, void *ctx, uint64_t arg)
{
    if (nsrv == 0) {
        orr_runner_run(run, sc, done, ctx, arg);
        return;
    }
    uint32_t id = orr_pool_take((void **)&im->live, &im->nlive, &im->cap_live, sizeof *im->live,
                                offsetof(live_dag, next_free), &im->free_live);
    live_dag *d = &im->live[id];
    if (nsrv > d->capsrv) orr_grow((void **)&d->srv, &d->capsrv, nsrv, sizeof *d->srv);
    memcpy(d->srv, srv, nsrv * sizeof *srv);
    d->nsrv = nsrv;
    for (size_t i = 0; i < nsrv; i++) {
        uint32_t x = srv[i] >> 1, rot = srv[i] & 1;
        if (rot ? im->other_live[x] : im->rot_live[x]) im->overlaps++;
        else switch_server(im, x, rot ? 1 : 2);
        if (rot) im->rot_live[x]++;
        else im->other_live[x]++;
    }
    d->done = done;
    d->ctx = ctx;
    d->arg = arg;
    orr_runner_run(run, sc, live_done_ev, im, id);
}

/* Runs im->all, not kept: its servers found now. */
static void run_all(orr_net_images *im, orr_runner *run, orr_event_fn done, void *ctx, uint64_t arg)
{
    size_t n = touched(im, &im->all, &im->touch, &im->cap_touch);
    run_guarded(im, run, &im->all, im->touch, n, done, ctx, arg);
}

/* im->one, a rotation-invariant collective over the whole simulated server from GPU x0, reduced
 * into im->rot: the flows leaving x0 and the join points, each flow standing for its rotations
 * (the one from x0 + s to x0 + (s + d) mod n that is the j-th such of the schedule is the image
 * of the j-th from x0 to x0 + d); an edge into a rotation is dropped, one out of it leaves its
 * representative. Only rings (each member sends to the next only): NVLS's and all-to-all's flows
 * share links, and which of them the fair share marks as bottlenecks follows link ids, not
 * orbits, so their links' statistics would not be exact; returns 1 for them, im->rot unset (they
 * are simulated in full, as other flows inside a server). Returns -1 if a flow has no such
 * representative of equal bytes and delay or an orbit is not whole (sched.c's invariance broken:
 * simulated in full too, and counted unmatched). */
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
        if (f->src - x0 >= n || f->dst - x0 >= n) return -1; /* not inside x0's server (unsigned) */
        if (f->src == x0) cnt[f->dst - x0]++;
    }
    if (x0 == NONE) return -1;
    for (uint32_t d = 2; d < n; d++) /* a ring: each member sends only to the next (not NVLS, all-to-all) */
        if (cnt[d]) return 1;
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

/* ---- schedules built ---- */

/* Flows kept at most (with their edges, about twice as many): a bound on the memory kept schedules take. */
#define BUILT_MAX_FLOWS (1u << 19)

/* A collective's schedule over all its images (orr_net_images_collective) is a function of its
 * member list (an image set), kind, algorithm and bytes, and of what does not change during a
 * run (the topology, the symmetry, the mirrored and rotated servers); what building it added to
 * the counters (mirrored, rotated, unmatched flows) likewise. */
typedef struct built {
    uint32_t set, kind, algo;
    uint64_t bytes;
    orr_sched s;             /* its schedule (flows and edges only) */
    uint32_t *srv;           /* the servers it has flows in (touched) */
    size_t nsrv, capsrv;
    uint64_t counted[3];
} built;

static uint64_t built_hash(const built *k)
{
    uint64_t h = orr_hash64(((uint64_t)k->set << 32) ^ ((uint64_t)k->kind << 8) ^ k->algo);
    h = orr_hash64(h ^ k->bytes);
    return h == UINT64_MAX ? h - 1 : h;
}

static const built *find_built(const orr_net_images *im, const built *k)
{
    uint64_t key = built_hash(k);
    for (const uint32_t *p; (p = orr_map_get(&im->built_index, key)) != NULL; key = rehash(key)) {
        const built *b = &im->built[*p];
        if (b->set == k->set && b->kind == k->kind && b->algo == k->algo && b->bytes == k->bytes) return b;
    }
    return NULL;
}

/* Keeps im->all as the schedule of k, with the counters' growth since b0, while fewer than
 * BUILT_MAX_FLOWS flows are kept. Returns the entry, or NULL if not kept. */
static const built *keep_built(orr_net_images *im, built k, const uint64_t b0[3])
{
    if (im->built_flows + im->all.nflows > BUILT_MAX_FLOWS) return NULL;
    im->built_flows += im->all.nflows;
    orr_sched_append(&k.s, &im->all);
    k.nsrv = touched(im, &k.s, &k.srv, &k.capsrv);
    for (int c = 0; c < 3; c++)
        k.counted[c] = (c == 0 ? im->mirrored_flows : c == 1 ? im->rotated_flows : im->unmatched_flows) - b0[c];
    ORR_PUSH(im->built, im->nbuilt, im->cap_built, k);
    uint64_t key = built_hash(&k);
    while (orr_map_get(&im->built_index, key)) key = rehash(key);
    orr_map_put(&im->built_index, key, (uint32_t)(im->nbuilt - 1));
    return &im->built[im->nbuilt - 1];
}

/* ---- what the backends call ---- */

orr_net_images *orr_net_images_new(const orr_topo *topo, const orr_gpu *g, const orr_cluster *c,
                                   const orr_transport *nvl, const orr_net_config *cfg)
{
    if (!cfg->sym || cfg->sym->nimages <= 1) return NULL;
    orr_net_images *im = orr_xcalloc(1, sizeof *im);
    im->topo = topo;
    im->nvl = nvl;
    im->gpus = cfg->gpus;
    im->gpn = c->gpus_per_node ? c->gpus_per_node : 1;
    im->sym = *cfg->sym;
    mirror_init(im, cfg);
    rotation_init(im, g, c, cfg);
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
    free(im->up);
    free(im->mode);
    free(im->acc_bytes);
    free(im->snap_bytes);
    free(im->acc_sat);
    free(im->snap_sat);
    orr_sched_free(&im->rot);
    free(im->rscratch);
    free(im->rot_live);
    free(im->other_live);
    free(im->mark_rot);
    free(im->mark_other);
    for (size_t i = 0; i < im->nlive; i++) free(im->live[i].srv);
    free(im->live);
    for (size_t i = 0; i < im->nbuilt; i++) {
        orr_sched_free(&im->built[i].s);
        free(im->built[i].srv);
    }
    free(im->built);
    orr_map_free(&im->built_index);
    free(im->touch);
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
    run_all(im, run, done, ctx, arg);
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
    built key;
    memset(&key, 0, sizeof key);
    key.set = (uint32_t)(is - im->sets);
    key.kind = (uint32_t)d->kind;
    key.algo = (uint32_t)d->algo;
    key.bytes = d->bytes;
    const built *b = find_built(im, &key);
    if (b) { /* built before: the same schedule, and the same flows counted */
        im->mirrored_flows += b->counted[0];
        im->rotated_flows += b->counted[1];
        im->unmatched_flows += b->counted[2];
        run_guarded(im, run, &b->s, b->srv, b->nsrv, done, ctx, arg);
        return;
    }
    const uint64_t b0[3] = {im->mirrored_flows, im->rotated_flows, im->unmatched_flows};
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
        if (local && im->rotate && whole_server(im, m, is->n) && im->one.rotation_invariant) {
            int rc = rotate_reduce(im); /* a rotated server (the header) */
            if (rc == 0) {
                orr_sched_append(&im->all, &im->rot);
                im->base[2 * i + 1] = (uint32_t)im->all.nflows;
                continue;
            }
            if (rc < 0) im->unmatched_flows += moving_flows(&im->one);
        }
        for (size_t j = 0; j < im->one.nflows && im->server_rep && !partly_mirrored; j++)
            partly_mirrored = mirrored_server(im, im->one.flows[j].src, im->one.flows[j].dst) != NONE;
        orr_sched_append(&im->all, &im->one);
        im->base[2 * i + 1] = (uint32_t)im->all.nflows;
    }
    if (partly_mirrored) join_mirrored(im, is);
    if ((b = keep_built(im, key, b0)) != NULL) run_guarded(im, run, &b->s, b->srv, b->nsrv, done, ctx, arg);
    else run_all(im, run, done, ctx, arg);
}

uint32_t orr_net_images_link_rep(const orr_net_images *im, uint32_t link)
{
    return im && im->link_rep && link < im->topo->n_links ? im->link_rep[link] : link;
}

int orr_net_images_link_use(const orr_net_images *im, uint32_t link, orr_net_link_use *out)
{
    if (!im || !im->rotate || link >= im->topo->n_links) return 0;
    const orr_topo *t = im->topo;
    const orr_link *k = &t->links[link];
    int dir = t->kind[k->dst] == ORR_NODE_HOST;
    uint32_t node = dir ? k->dst : k->src;
    if (k->tier != ORR_TIER_NVLINK || t->kind[node] != ORR_NODE_HOST || t->node_host[node] >= im->gpus) return 0;
    uint32_t h = t->node_host[node], y = h / im->gpn, x = im->server_rep ? im->server_rep[y] : y;
    h = x * im->gpn + h % im->gpn; /* a mirrored server's link: its representative's */
    size_t i = 2 * (size_t)h + (size_t)dir;
    double b;
    int64_t sat;
    since_switch(im, x, h, dir, &b, &sat);
    out->bytes = im->acc_bytes[i] + b;
    out->bottleneck_ps = im->acc_sat[i] + sat;
    return 1;
}

void orr_net_images_no_rotation(orr_net_images *im)
{
    if (im) im->rotate = 0;
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
    out->rotation_overlaps = im->overlaps;
}
