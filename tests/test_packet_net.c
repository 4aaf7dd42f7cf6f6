/*
 * Fast tests of the packet network backend (`--net packet`, src/net/packet_net.c): collectives
 * and sends on a quiet fabric take what the flow backend says (the packet engine's links carry
 * payload at the flow model's capacities); flows inside a node stay off the packet engine; a
 * congested bottleneck costs at least what the fluid model says and is lossless under PFC; a flow
 * between the same two hosts continues the previous flow's queue pair (rate and DCQCN state); a
 * small `orrery predict --net packet` agrees with flow and analytic, is deterministic and reports
 * its network; symmetric workloads and --pxn are refused with messages naming the flag.
 * The slow 64-GPU acceptance runs are in test_valid_packet_predict.c.
 */
#include "check.h"
#include "orrery/orrery.h"
#include "orrery/estimate.h"
#include "orrery/packet.h"

#include <string.h>

static orr_gpu gpu;
static orr_cluster cl;

typedef struct when {
    orr_engine *e;
    int64_t t_ps;
} when;

/* Records when the transfer was done (the engine runs on after it: stale timers of finished flows). */
static void on_done(void *ctx, uint64_t arg)
{
    when *w = ctx;
    (void)arg;
    w->t_ps = orr_engine_now(w->e);
}

typedef struct run_out {
    int64_t t_ps;
    orr_packet_stats st;
} run_out;

static orr_net *make_net(orr_net_kind kind, orr_engine *e, uint32_t gpus, const orr_topo_spec *ts, orr_err *err)
{
    orr_net_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gpus = gpus;
    if (ts) cfg.topo = *ts;
    else orr_topo_spec_default(&cfg.topo, &cl);
    return orr_net_create_cfg(kind, e, &gpu, &cl, &cfg, err);
}

/* One collective of kind k over ranks 0..n-1 (or one send 0 -> n-1 when k < 0) on a fresh backend. */
static run_out run_one(orr_net_kind kind, int k, uint64_t bytes, uint32_t n, uint32_t gpus, const orr_topo_spec *ts)
{
    run_out o;
    memset(&o, 0, sizeof o);
    orr_engine e;
    orr_engine_init(&e);
    orr_err err;
    orr_net *net = make_net(kind, &e, gpus, ts, &err);
    CHECK_MSG(net != NULL, "%s", err.msg);
    if (!net) return o;
    uint32_t m[64];
    for (uint32_t i = 0; i < n; i++) m[i] = i;
    when w = {&e, -1};
    if (k < 0) {
        net->send(net, 0, n - 1, bytes, on_done, &w, 0);
    } else {
        orr_coll_desc d = {(orr_coll_kind)k, bytes, n, 0, 0, ORR_ALGO_AUTO};
        net->collective(net, &d, m, on_done, &w, 0);
    }
    orr_engine_run(&e);
    CHECK(w.t_ps > 0);
    o.t_ps = w.t_ps;
    if (orr_net_packet_sim(net)) orr_packet_stats_get(orr_net_packet_sim(net), &o.st);
    orr_net_destroy(net);
    orr_engine_free(&e);
    return o;
}

/* On a quiet rail-optimised fabric: inside one node nothing touches the packet engine and the
 * time is the flow model's exactly; across two nodes the packet engine carries the inter-node
 * steps. A ring step of 512 KiB is cut into 64 packets of 8 KiB; each step then pays one packet's
 * store-and-forward at the leaf (1/64 of the step) and 52 bytes of header per 8 KiB (0.6%) that
 * the rate compensation (made for 64 KiB packets) does not cover: within 3% of the flow model. */
static void test_quiet(void)
{
    static const orr_coll_kind kinds[] = {ORR_COLL_ALLREDUCE, ORR_COLL_ALLGATHER, ORR_COLL_REDUCESCATTER};
    for (int ki = 0; ki < 3; ki++) {
        run_out f = run_one(ORR_NET_FLOW, (int)kinds[ki], 64ull << 20, 8, 8, NULL);
        run_out p = run_one(ORR_NET_PACKET, (int)kinds[ki], 64ull << 20, 8, 8, NULL);
        CHECK_EQ_I64(p.t_ps, f.t_ps);
        CHECK_EQ_I64(p.st.flows_started, 0);
        f = run_one(ORR_NET_FLOW, (int)kinds[ki], 64ull << 20, 16, 16, NULL);
        p = run_one(ORR_NET_PACKET, (int)kinds[ki], 64ull << 20, 16, 16, NULL);
        CHECK_REL(p.t_ps, f.t_ps, 0.03);
        CHECK(p.t_ps >= f.t_ps);
        CHECK(p.st.flows_started > 0 && p.st.drops == 0 && p.st.ecn_marks == 0);
        printf("quiet %s 64 MiB on 16 GPUs: packet %.1f us, flow %.1f us (%+.3f%%)\n", orr_coll_kind_name(kinds[ki]),
               p.t_ps / 1e6, f.t_ps / 1e6, 100.0 * (p.t_ps - f.t_ps) / f.t_ps);
    }
    /* a send across nodes: the analytic p2p time */
    run_out p = run_one(ORR_NET_PACKET, -1, 64ull << 20, 9, 16, NULL);
    CHECK_REL(p.t_ps, orr_comm_p2p_ps(&gpu, &cl, 0, 8, 64ull << 20), 0.005);
    CHECK_EQ_I64(p.st.flows_started, 1);
}

/* Two nodes whose rail leaves reach the single spine at 1/4 of the NIC rate: every inter-node ring
 * step crosses a 4:1 bottleneck alone. The fluid model's time is the least the bottleneck allows;
 * DCQCN costs more (a connection starts at line rate, overshoots, is cut down to MIN_RATE while the
 * queue drains, and recovers over RP_TIMER periods of 300 us: about 1.5 ms on the 3.2 ms of this
 * ring, whose 30 steps of 2 MiB are each shorter than one period; docs/netsim.md), and PFC keeps
 * it lossless. */
static void test_bottleneck(void)
{
    orr_topo_spec ts;
    orr_topo_spec_default(&ts, &cl);
    ts.kind = ORR_TOPO_RAIL_FAT_TREE;
    ts.leaf_hosts = 1;
    ts.spines = 1;
    ts.oversub = 4;
    run_out f = run_one(ORR_NET_FLOW, ORR_COLL_ALLREDUCE, 256ull << 20, 16, 16, &ts);
    run_out p = run_one(ORR_NET_PACKET, ORR_COLL_ALLREDUCE, 256ull << 20, 16, 16, &ts);
    ts.oversub = 1;
    run_out q = run_one(ORR_NET_PACKET, ORR_COLL_ALLREDUCE, 256ull << 20, 16, 16, &ts);
    printf("all-reduce 256 MiB, 2 nodes, spine 4:1: packet %.1f us, flow %.1f us; packet at 1:1 %.1f us; "
           "%llu ECN marks, %llu drops\n",
           p.t_ps / 1e6, f.t_ps / 1e6, q.t_ps / 1e6, (unsigned long long)p.st.ecn_marks,
           (unsigned long long)p.st.drops);
    CHECK(p.t_ps >= f.t_ps);
    CHECK(p.t_ps <= 2 * f.t_ps);
    CHECK(p.t_ps > 2 * q.t_ps);
    CHECK(p.st.ecn_marks > 0 && p.st.cnps > 0);
    CHECK_EQ_I64(p.st.drops, 0);
}

/* Queue pairs persist: a flow between the same two hosts as one that has sent all its data starts
 * at its rate (and DCQCN state); one between other hosts starts at line rate. */
typedef struct qp_ctx {
    orr_transport *tr;
    orr_packet_sim *sim;
    double rate_end_a, rate_start_b, rate_start_c, rate_end_b, rate_start_d;
} qp_ctx;

static void qp_probe(void *ctx, uint64_t arg)
{
    qp_ctx *q = ctx;
    orr_packet_flow_info fi;
    orr_packet_flow_get(q->sim, (uint32_t)arg, &fi);
    if (arg == 1) q->rate_start_b = fi.rate_Bps;
    else if (arg == 2) q->rate_start_c = fi.rate_Bps;
    else q->rate_start_d = fi.rate_Bps;
}

static void qp_done(void *ctx, uint64_t arg);

/* 3 ms after the others: host 0 to host 8 once more (flow 3), after ten RP_TIMER periods idle. */
static void qp_later(void *ctx, uint64_t arg)
{
    qp_ctx *q = ctx;
    orr_packet_flow_info fi;
    orr_packet_flow_get(q->sim, 1, &fi);
    q->rate_end_b = fi.rate_Bps;
    q->tr->start_flow(q->tr, 0, 8, 1 << 20, 102, qp_done, q, 3);
    orr_engine_after(q->tr->engine, 0, qp_probe, q, 3);
    (void)arg;
}

/* Flow 0 (host 0 -> 8) has arrived: host 0 sends to host 8 again (flow 1), as the next ring step
 * would, and host 2 to host 10 (flow 2); their rates are read as they start. */
static void qp_done(void *ctx, uint64_t arg)
{
    qp_ctx *q = ctx;
    if (arg != 0) return;
    orr_packet_flow_info fi;
    orr_packet_flow_get(q->sim, 0, &fi);
    q->rate_end_a = fi.rate_Bps;
    q->tr->start_flow(q->tr, 0, 8, 1 << 20, 100, qp_done, q, 1);
    q->tr->start_flow(q->tr, 2, 10, 1 << 20, 101, qp_done, q, 2);
    orr_engine_after(q->tr->engine, 0, qp_probe, q, 1);
    orr_engine_after(q->tr->engine, 0, qp_probe, q, 2);
}

static void test_qp_continue(void)
{
    orr_topo_spec ts;
    orr_topo_spec_default(&ts, &cl);
    ts.kind = ORR_TOPO_RAIL_FAT_TREE;
    ts.leaf_hosts = 1;
    ts.spines = 1;
    ts.oversub = 8;
    orr_topo t;
    orr_err err;
    CHECK_MSG(orr_topo_build(&t, &gpu, &cl, 16, &ts, &err) == 0, "%s", err.msg);
    orr_packet_config c;
    orr_packet_config_preset(&c, ORR_CC_DCQCN, cl.nic_Bps, 65536);
    orr_packet_config_red_for_topology(&c, &t);
    orr_engine e;
    orr_engine_init(&e);
    qp_ctx q;
    memset(&q, 0, sizeof q);
    q.tr = orr_packet_transport_create(&e, &t, &c, &err);
    CHECK_MSG(q.tr != NULL, "%s", err.msg);
    if (!q.tr) return;
    q.sim = orr_packet_transport_sim(q.tr);
    /* rail 0 of node 0 -> rail 0 of node 1: 32 MB through the 8:1 leaf uplink */
    q.tr->start_flow(q.tr, 0, 8, 32u << 20, 1, qp_done, &q, 0);
    orr_engine_run(&e);
    orr_engine_after(&e, 3 * ORR_PS_PER_MS, qp_later, &q, 0);
    orr_engine_run(&e);
    double line = cl.nic_Bps; /* no rate scales in this test */
    printf("queue pair: flow A ended at %.3g B/s; B (same hosts) started at %.3g B/s, C (new hosts) at %.3g B/s\n",
           q.rate_end_a, q.rate_start_b, q.rate_start_c);
    CHECK(q.rate_end_a < 0.5 * line);      /* DCQCN cut A down to the bottleneck's area */
    CHECK(q.rate_start_b == q.rate_end_a); /* B continued A's queue pair */
    CHECK_REL(q.rate_start_c, line, 1e-9); /* C's is a new one, at line rate */
    /* D: the queue pair's rate recovered while idle (DCQCN's timers run on), but not past line rate */
    printf("            B ended at %.3g B/s; D (same hosts, 3 ms later) started at %.3g B/s\n", q.rate_end_b,
           q.rate_start_d);
    CHECK(q.rate_start_d > q.rate_end_b && q.rate_start_d <= line);
    orr_packet_stats st;
    orr_packet_stats_get(q.sim, &st);
    CHECK_EQ_I64(st.flows_finished, 4);
    CHECK_EQ_I64(st.drops, 0);
    q.tr->destroy(q.tr);
    orr_engine_free(&e);
    orr_topo_free(&t);
}

static int predict(orr_net_kind net, int symmetry, orr_prediction *p)
{
    orr_spec s;
    orr_err err;
    orr_spec_init(&s);
    const char *args[] = {"--model", "gpt3-350m", "--gpu", "H100", "--gpus", "16", "--tp", "8", "--gbs", "4"};
    char *argv[10];
    for (int i = 0; i < 10; i++) argv[i] = (char *)args[i];
    int rc = orr_spec_apply_flags(&s, 10, argv, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    s.net = net;
    s.symmetry = symmetry;
    rc = orr_spec_resolve(&s, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    rc = orr_predict(&s, p, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    return rc;
}

/* A small orrery predict --net packet (GPT-3 350M, TP8 x DP2 on two DGX H100 nodes). */
static void test_predict(void)
{
    orr_prediction a, f, p, p2;
    if (predict(ORR_NET_ANALYTIC, 0, &a) || predict(ORR_NET_FLOW, 0, &f) || predict(ORR_NET_PACKET, 0, &p) ||
        predict(ORR_NET_PACKET, 0, &p2))
        return;
    printf("gpt3-350m TP8 DP2: packet %.6f s, flow %.6f s, analytic %.6f s\n", p.r.iteration_s, f.r.iteration_s,
           a.r.iteration_s);
    CHECK_REL(p.r.iteration_s, f.r.iteration_s, 0.01);
    CHECK_REL(p.r.iteration_s, a.r.iteration_s, 0.01);
    CHECK_EQ_I64(p.r.iteration_ps, p2.r.iteration_ps);
    CHECK_EQ_I64(p.x.events, p2.x.events);
    const orr_net_summary *n = &p.r.net;
    CHECK(n->present && n->backend == ORR_NET_PACKET && n->packet.cc == ORR_CC_DCQCN);
    CHECK(n->packet.payload_bytes == ORR_NET_PACKET_PAYLOAD_DEFAULT);
    CHECK(n->packet.flows > 0 && n->packet.data_packets > 0 && n->packet.drops == 0);
    CHECK(n->flows > n->packet.flows); /* the TP collectives' flows are on the flow model */
    CHECK(n->tier[ORR_TIER_NVLINK].bytes > 0 && n->tier[ORR_TIER_HOST].bytes > 0);
    CHECK(n->tier[ORR_TIER_HOST].util > 0 && n->tier[ORR_TIER_HOST].util < 1);
    orr_buf text = {0}, json = {0};
    orr_report_text(&p.r, p.w, &p.info, &text);
    orr_report_json(&p.r, p.w, &p.info, &json);
    CHECK(strstr(text.s, "Network (packet backend") && strstr(text.s, "packet engine: DCQCN, 65536-byte packets"));
    CHECK(strstr(json.s, "\"backend\": \"packet\"") && strstr(json.s, "\"cc\": \"dcqcn\""));
    orr_buf_free(&text);
    orr_buf_free(&json);
    orr_prediction_free(&a);
    orr_prediction_free(&f);
    orr_prediction_free(&p);
    orr_prediction_free(&p2);
}

/* A collapsed workload (symmetry, the default) on the packet backend: the executor runs one DP
 * replica, the network every GPU's flows (src/net/images.c), and the NVLink flows inside the
 * mirrored server finish with their preimages. The same job as every GPU simulated. */
static void test_symmetry(void)
{
    orr_prediction s, a;
    if (predict(ORR_NET_PACKET, 1, &s) || predict(ORR_NET_PACKET, 0, &a)) return;
    const orr_net_summary *ns = &s.r.net, *na = &a.r.net;
    printf("gpt3-350m TP8 DP2, packet: symmetry %.9f s (%llu events, %llu flows, %llu mirrored), every GPU %.9f s "
           "(%llu events)\n",
           s.r.iteration_s, (unsigned long long)s.x.events, (unsigned long long)ns->flows,
           (unsigned long long)ns->mirrored_flows, a.r.iteration_s, (unsigned long long)a.x.events);
    CHECK_REL(s.r.iteration_s, a.r.iteration_s, 1e-6);
    CHECK(ns->flows == na->flows && ns->packet.flows == na->packet.flows && ns->packet.flows > 0);
    CHECK(ns->packet.data_packets == na->packet.data_packets);
    CHECK(ns->mirrored_servers == 1 && ns->mirrored_flows > 0 && na->mirrored_flows == 0);
    CHECK(s.x.events < a.x.events);
    CHECK_REL(ns->tier[ORR_TIER_NVLINK].bytes, na->tier[ORR_TIER_NVLINK].bytes, 1e-9);
    CHECK_REL(ns->tier[ORR_TIER_HOST].bytes, na->tier[ORR_TIER_HOST].bytes, 1e-9);
    orr_prediction_free(&s);
    orr_prediction_free(&a);
    /* MoE: the expert layout's symmetry (gen.c describe_symmetry) collapses gpt-oss-20b's EP 16 to one
     * rank, with the same iteration as every GPU; cp 4 with ep 2 puts an expert cut inside the cp
     * digit, so none is described and every GPU is simulated (the config says so) */
    static const char *const moe[][2] = {{"16", "1"}, {"2", "4"}};
    for (int c = 0; c < 2; c++) {
        orr_prediction m[2];
        int ok = 1;
        for (int sym = 0; sym < 2 && ok; sym++) {
            orr_spec sp;
            orr_err err;
            orr_spec_init(&sp);
            const char *args[] = {"--model", "gpt-oss-20b", "--gpu", "H100", "--gpus", "16", "--ep", moe[c][0], "--cp",
                                  moe[c][1], "--gbs", "16", "--seq", "2048", "--net", "packet"};
            char *argv[16];
            for (int i = 0; i < 16; i++) argv[i] = (char *)args[i];
            int rc = orr_spec_apply_flags(&sp, 16, argv, &err);
            sp.symmetry = sym;
            if (rc == 0) rc = orr_spec_resolve(&sp, &err);
            if (rc == 0) rc = orr_predict(&sp, &m[sym], &err);
            CHECK_MSG(rc == 0, "ep %s cp %s: %s", moe[c][0], moe[c][1], err.msg);
            if (rc) {
                if (sym) orr_prediction_free(&m[0]);
                ok = 0;
            }
        }
        if (!ok) continue;
        printf("gpt-oss-20b ep %s cp %s, packet: symmetry %.9f s (%zu ranks), every GPU %.9f s\n", moe[c][0], moe[c][1],
               m[1].r.iteration_s, m[1].w->nranks, m[0].r.iteration_s);
        CHECK(m[0].w->nranks == 16 && m[1].r.net.packet.flows == m[0].r.net.packet.flows);
        CHECK_REL(m[1].r.iteration_s, m[0].r.iteration_s, 1e-6);
        if (c == 0) CHECK(m[1].w->nranks == 1 && strstr(m[1].config_json.s, "\"symmetry\": true"));
        else CHECK(m[1].w->nranks == 16 && strstr(m[1].config_json.s, "\"symmetry\": false"));
        orr_prediction_free(&m[0]);
        orr_prediction_free(&m[1]);
    }
}

/* PXN and unknown congestion controls are refused, naming the flag. */
static void test_refusals(void)
{
    orr_err err;
    orr_engine e;
    orr_engine_init(&e);
    orr_net_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gpus = 16;
    orr_topo_spec_default(&cfg.topo, &cl);
    cfg.pxn = 1;
    CHECK(orr_net_create_cfg(ORR_NET_PACKET, &e, &gpu, &cl, &cfg, &err) == NULL && strstr(err.msg, "--pxn"));
    cfg.pxn = 0;
    cfg.cc = (orr_cc)5;
    CHECK(orr_net_create_cfg(ORR_NET_PACKET, &e, &gpu, &cl, &cfg, &err) == NULL && strstr(err.msg, "--cc"));
    CHECK(orr_net_create_cfg(ORR_NET_PACKET, &e, &gpu, &cl, NULL, &err) == NULL && strstr(err.msg, "packet"));
    orr_engine_free(&e);
    orr_net_kind k;
    CHECK(orr_net_kind_parse("packet", &k) == 0 && k == ORR_NET_PACKET);
    CHECK(strcmp(orr_net_kind_name(ORR_NET_PACKET), "packet") == 0);
}

int main(void)
{
    orr_err err;
    if (orr_catalog_gpu("H100", &gpu, &err) || orr_catalog_cluster("dgx-h100", &cl, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    test_quiet();
    test_bottleneck();
    test_qp_continue();
    test_predict();
    test_symmetry();
    test_refusals();
    return check_done();
}
