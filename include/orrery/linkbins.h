/*
 * linkbins.h - bytes carried per directed link in fixed time windows, for the link counter tracks
 * of the trace (`orrery predict --net flow|packet --trace FILE`, docs/json.md "Link counters").
 *
 * Why windows and not samples: a sampler would need engine events (which the report counts) and
 * extra orr_net_sync calls (which split the floating-point sums behind the reported link bytes),
 * so it would change printed numbers. Instead the network models, where they already account a
 * link's bytes (the flow model when it brings a link up to date, the packet engine when a port
 * starts sending a packet), also spread those bytes over the windows the interval covers. Nothing
 * the simulation reads is touched, so times and results are the same with or without a trace.
 *
 * Bounded memory: ORR_LINK_BINS windows per link that ever carried bytes (allocated on its first
 * bytes), whatever the run's length; no allocation after that. Windows start ORR_LINK_BIN0_PS
 * wide; when time passes the last one, every window doubles in width (neighbours merge, exactly),
 * so a run longer than ORR_LINK_BINS / 2 first-width windows ends with between ORR_LINK_BINS / 2
 * and ORR_LINK_BINS windows of width ORR_LINK_BIN0_PS x 2^k. Deterministic: only integer times
 * and the models' own byte counts go in.
 */
#ifndef ORRERY_LINKBINS_H
#define ORRERY_LINKBINS_H

#include <stdint.h>
#include "orrery/core.h"

#define ORR_LINK_BINS 256                /* windows per link */
#define ORR_LINK_BIN0_PS ORR_PS_PER_US   /* width of a window before any doubling */

typedef struct orr_link_bins {
    uint32_t nlinks;
    int64_t width_ps;   /* window w covers [w x width_ps, (w + 1) x width_ps) */
    double **bytes;     /* [nlinks], each NULL (no bytes yet) or ORR_LINK_BINS bytes per window */
} orr_link_bins;

orr_link_bins *orr_link_bins_new(uint32_t nlinks);
void orr_link_bins_free(orr_link_bins *b);
/* Adds bytes that link carried at a constant rate over [t0_ps, t1_ps) (t0_ps == t1_ps: at t0_ps),
 * each window getting its share pro rata. */
void orr_link_bins_spread(orr_link_bins *b, uint32_t link, int64_t t0_ps, int64_t t1_ps, double bytes);
/* The windows of link (ORR_LINK_BINS entries, bytes), or NULL if it never carried bytes. */
const double *orr_link_bins_of(const orr_link_bins *b, uint32_t link);

#endif
