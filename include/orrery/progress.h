/*
 * progress.h - one updating line on a terminal while a long simulation runs.
 *
 * The command line makes one (orr_progress_init) when stderr is a terminal and --quiet is not
 * given, and hands it down: the engine of the run calls orr_progress_tick every few thousand
 * events, which redraws the line at most five times a second once the run has taken a second, and
 * orr_progress_done erases it. Nothing here changes a simulated result; a NULL or disabled progress
 * costs one branch per tick.
 */
#ifndef ORRERY_PROGRESS_H
#define ORRERY_PROGRESS_H

#include <stdint.h>
#include <stdio.h>

typedef struct orr_progress {
    FILE *out;            /* NULL: disabled */
    char what[32];        /* "predict", "netsim" */
    double start_s;       /* wall clock at init */
    double last_s;        /* wall clock of the last redraw (0: never drawn) */
    int shown;            /* a line is on the terminal */
} orr_progress;

/* enabled: draw on out (normally stderr when it is a terminal). */
void orr_progress_init(orr_progress *p, FILE *out, int enabled, const char *what);
/* sim_ps: simulated time reached; events: events run; done/total: units of work (flows, ops) and
 * their count (total 0: unknown, no ETA); unit names them. */
void orr_progress_tick(orr_progress *p, int64_t sim_ps, uint64_t events, uint64_t done, uint64_t total,
                       const char *unit);
/* Erases the line (if one was drawn). */
void orr_progress_done(orr_progress *p);

#endif
