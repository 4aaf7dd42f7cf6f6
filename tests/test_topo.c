/*
 * Tests of the topology graph and routing (src/hw/topo.c): the HPCC/SimAI reader on the k=4
 * fat-tree of data/validation/ns3, hop counts and ECMP path counts a k-ary fat-tree must have,
 * deterministic paths, units, and one-line errors naming file, line and field on bad input.
 */
#include "check.h"
#include "orrery/topo.h"

#include <string.h>

static void test_k4(void)
{
    orr_topo t;
    orr_err err;
    int rc = orr_topo_read_hpcc(&t, ORRERY_VALIDATION_DIR "/ns3/topo_k4.txt", &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc) return;
    CHECK_EQ_I64(t.n_nodes, 36);
    CHECK_EQ_I64(t.n_hosts, 16);
    CHECK_EQ_I64(t.n_links, 96);
    CHECK_EQ_I64(t.links[0].rate_Bps, 12.5e9);
    CHECK_EQ_I64(t.links[0].delay_ps, 1000000);
    /* k=4 fat-tree: same edge 2 hops, same pod 4 hops, other pod 6 hops. */
    uint32_t path[16];
    CHECK_EQ_I64(orr_topo_path(&t, 0, 1, 7, 1, path, 16), 2);
    CHECK_EQ_I64(orr_topo_path(&t, 0, 2, 7, 1, path, 16), 4);
    CHECK_EQ_I64(orr_topo_path(&t, 0, 15, 7, 1, path, 16), 6);
    CHECK_EQ_I64(orr_topo_path(&t, 3, 3, 7, 1, path, 16), 0);
    CHECK_EQ_I64(orr_topo_path(&t, 0, 15, 7, 1, path, 5), -1);
    /* ECMP: from host 0's edge switch toward another pod there are 2 aggregation uplinks, from
     * an aggregation switch 2 cores, then one way down. Over many hashes all 4 paths show up. */
    uint32_t hops[8];
    uint32_t edge = t.links[orr_topo_path(&t, 0, 15, 1, 0, path, 16) > 0 ? path[0] : 0].dst;
    CHECK_EQ_I64(orr_topo_next_hops(&t, edge, 15, hops, 8), 2);
    uint32_t seen[4] = {0}, distinct = 0;
    for (uint64_t h = 0; h < 64; h++) {
        CHECK_EQ_I64(orr_topo_path(&t, 0, 15, h, 1, path, 16), 6);
        uint32_t core = t.links[path[2]].dst, found = 0;
        for (uint32_t i = 0; i < distinct; i++) found |= seen[i] == core;
        if (!found && distinct < 4) seen[distinct++] = core;
        /* the path is connected and ends at host 15 */
        for (int i = 0; i < 5; i++) CHECK(t.links[path[i]].dst == t.links[path[i + 1]].src);
        CHECK(t.links[path[5]].dst == t.host_node[15]);
    }
    CHECK_EQ_I64(distinct, 4);
    /* determinism: same hash, same path */
    uint32_t p2[16];
    orr_topo_path(&t, 4, 9, 12345, 1, path, 16);
    orr_topo_path(&t, 4, 9, 12345, 1, p2, 16);
    CHECK(memcmp(path, p2, 6 * sizeof path[0]) == 0);
    orr_topo_free(&t);
}

static void test_units(void)
{
    double r;
    int64_t d;
    CHECK(orr_parse_rate_Bps("400Gbps", &r) == 0 && r == 50e9);
    CHECK(orr_parse_rate_Bps("25GBps", &r) == 0 && r == 25e9);
    CHECK(orr_parse_rate_Bps("100", &r) == -1);
    CHECK(orr_parse_rate_Bps("fastGbps", &r) == -1);
    CHECK(orr_parse_delay_ps("0.001ms", &d) == 0 && d == 1000000);
    CHECK(orr_parse_delay_ps("500ns", &d) == 0 && d == 500000);
    CHECK(orr_parse_delay_ps("1x", &d) == -1);
}

static void expect_error(const char *text, const char *needle)
{
    orr_topo t;
    orr_err err;
    err.msg[0] = 0;
    int rc = orr_topo_parse_hpcc(&t, text, "bad.txt", &err);
    CHECK_MSG(rc == -1 && strstr(err.msg, needle), "wanted '%s', got rc %d '%s'", needle, rc, err.msg);
    if (rc == 0) orr_topo_free(&t);
}

static void test_errors(void)
{
    /* 3-field header, one switch, two hosts: a valid small star. */
    orr_topo t;
    orr_err err;
    int rc = orr_topo_parse_hpcc(&t, "3 1 2\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\n", "ok.txt", &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (!rc) {
        CHECK_EQ_I64(t.n_hosts, 2);
        orr_topo_free(&t);
    }
    expect_error("", "empty");
    expect_error("3 1\n", "header");
    expect_error("3 1 2\n2\n0 2 100Gbps 1us 0\n", "bad.txt:4: links: expected 2");
    expect_error("3 1 2\n2\n0 2 100Gbps 1us 0\n1 9 100Gbps 1us 0\n", "bad.txt:4: link dst");
    expect_error("3 1 2\n2\n0 2 100Gbps 1us 0\n1 2 100Gxx 1us 0\n", "bad.txt:4: link rate");
    expect_error("3 1 2\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps soon 0\n", "bad.txt:4: link delay");
    expect_error("3 1 2\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 2\n", "link error_rate");
    expect_error("3 1 2\n7\n", "switch ids");
    expect_error("4 1 1\n2\n0 2 100Gbps 1us 0\n", "cannot reach");
}

int main(void)
{
    test_k4();
    test_units();
    test_errors();
    return check_done();
}
