/*
 * fcg.c - canonical labelling of a Flow Conflict Graph (paper 000 §4.2) with nauty (Debian's
 * libnauty2-dev; scripts/setup.sh). The memo of unsteady phases (memo.c) keys a unit of flows by
 * the canonical form of their FCG: vertices are flows, coloured by their quantised state (a
 * signature the caller ranks: equal rank, equal state), edges join flows that share a port, with
 * the number of ports they share as weight.
 *
 * nauty labels the coloured, unweighted graph canonically; the caller then writes the vertices'
 * signatures and the weight matrix in that order. Two units with equal keys are isomorphic as
 * weighted, coloured graphs (the key spells the whole graph out); two isomorphic units whose
 * weights break the symmetry differently may get different keys: a missed hit, never a wrong
 * one. nauty keeps static work space, so calls are serialised by a mutex (`orrery search -j`
 * runs predictions on threads).
 */
#include "pkt_internal.h"

#include <nauty.h>
#include <pthread.h>
#include <stdlib.h>

static pthread_mutex_t fcg_lock = PTHREAD_MUTEX_INITIALIZER;

int memo_fcg_canon(uint32_t n, const uint32_t *rank, const uint32_t *weight, uint32_t *order)
{
    if (n == 0) return 0;
    if (n == 1) {
        order[0] = 0;
        return 0;
    }
    if (n > 4096) return -1;
    int nn = (int)n, m = SETWORDSNEEDED(nn);
    graph *g = orr_xcalloc((size_t)m * n, sizeof *g);
    graph *cg = orr_xcalloc((size_t)m * n, sizeof *cg);
    int *lab = orr_xmalloc(n * sizeof *lab), *ptn = orr_xmalloc(n * sizeof *ptn), *orbits = orr_xmalloc(n * sizeof *orbits);
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < n; j++)
            if (i != j && weight[i * n + j]) ADDELEMENT(GRAPHROW(g, i, m), (int)j);
    /* the colour cells: vertices sorted by rank (insertion sort: units are small) */
    for (uint32_t i = 0; i < n; i++) lab[i] = (int)i;
    for (uint32_t i = 1; i < n; i++) {
        int v = lab[i];
        uint32_t j = i;
        while (j > 0 && rank[lab[j - 1]] > rank[v]) {
            lab[j] = lab[j - 1];
            j--;
        }
        lab[j] = v;
    }
    for (uint32_t i = 0; i < n; i++) ptn[i] = (i + 1 < n && rank[lab[i + 1]] == rank[lab[i]]) ? 1 : 0;
    DEFAULTOPTIONS_GRAPH(options);
    statsblk stats;
    options.getcanon = TRUE;
    options.defaultptn = FALSE;
    pthread_mutex_lock(&fcg_lock);
    nauty_check(WORDSIZE, m, nn, NAUTYVERSIONID);
    densenauty(g, lab, ptn, orbits, &options, &stats, m, nn, cg);
    pthread_mutex_unlock(&fcg_lock);
    int rc = stats.errstatus ? -1 : 0;
    for (uint32_t i = 0; i < n; i++) order[i] = (uint32_t)lab[i];
    free(g);
    free(cg);
    free(lab);
    free(ptn);
    free(orbits);
    return rc;
}
