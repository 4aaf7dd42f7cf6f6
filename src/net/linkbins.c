/*
 * linkbins.c - per-link bytes in fixed windows that double in width as time goes on
 * (include/orrery/linkbins.h). Called from the flow model and the packet engine only when a
 * trace asked for link tracks; it never changes what they compute.
 */
#include "orrery/linkbins.h"

#include <stdlib.h>
#include <string.h>

orr_link_bins *orr_link_bins_new(uint32_t nlinks)
{
    orr_link_bins *b = orr_xcalloc(1, sizeof *b);
    b->nlinks = nlinks;
    b->width_ps = ORR_LINK_BIN0_PS;
    b->bytes = orr_xcalloc(nlinks ? nlinks : 1, sizeof *b->bytes);
    return b;
}

void orr_link_bins_free(orr_link_bins *b)
{
    if (!b) return;
    for (uint32_t l = 0; l < b->nlinks; l++) free(b->bytes[l]);
    free(b->bytes);
    free(b);
}

/* Doubles the width of every window: window w takes what windows 2w and 2w + 1 held. */
static void widen(orr_link_bins *b)
{
    for (uint32_t l = 0; l < b->nlinks; l++) {
        double *v = b->bytes[l];
        if (!v) continue;
        for (uint32_t w = 0; w < ORR_LINK_BINS / 2; w++) v[w] = v[2 * w] + v[2 * w + 1];
        memset(v + ORR_LINK_BINS / 2, 0, (ORR_LINK_BINS / 2) * sizeof *v);
    }
    b->width_ps *= 2;
}

void orr_link_bins_spread(orr_link_bins *b, uint32_t link, int64_t t0_ps, int64_t t1_ps, double bytes)
{
    if (link >= b->nlinks || !(bytes > 0) || t0_ps < 0 || t1_ps < t0_ps) return;
    /* the windows must reach the last instant of the interval */
    int64_t last_ps = t1_ps > t0_ps ? t1_ps - 1 : t0_ps;
    while (last_ps / b->width_ps >= ORR_LINK_BINS) widen(b);
    if (!b->bytes[link]) b->bytes[link] = orr_xcalloc(ORR_LINK_BINS, sizeof *b->bytes[link]);
    double *v = b->bytes[link];
    int64_t w = t0_ps / b->width_ps, w_last = last_ps / b->width_ps;
    if (w == w_last) {
        v[w] += bytes;
        return;
    }
    double per_ps = bytes / (double)(t1_ps - t0_ps);
    for (int64_t t = t0_ps; w <= w_last; w++) {
        int64_t end_ps = (w + 1) * b->width_ps < t1_ps ? (w + 1) * b->width_ps : t1_ps;
        v[w] += per_ps * (double)(end_ps - t);
        t = end_ps;
    }
}

const double *orr_link_bins_of(const orr_link_bins *b, uint32_t link)
{
    return b && link < b->nlinks ? b->bytes[link] : NULL;
}
