/*
 * progress.c - the updating progress line of long runs (progress.h).
 */
#include "orrery/progress.h"

#include <string.h>
#include <time.h>

static double wall_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void orr_progress_init(orr_progress *p, FILE *out, int enabled, const char *what)
{
    memset(p, 0, sizeof *p);
    p->out = enabled ? out : NULL;
    snprintf(p->what, sizeof p->what, "%s", what ? what : "");
    p->start_s = wall_now_s();
}

void orr_progress_tick(orr_progress *p, int64_t sim_ps, uint64_t events, uint64_t done, uint64_t total,
                       const char *unit)
{
    if (!p || !p->out) return;
    double now = wall_now_s(), el = now - p->start_s;
    if (el < 1.0 || now - p->last_s < 0.2) return; /* quiet for short runs; five redraws a second */
    p->last_s = now;
    char eta[48] = "";
    if (total && done && done <= total) {
        double left = el * (double)(total - done) / (double)done;
        snprintf(eta, sizeof eta, ", ETA %.0f s", left);
    }
    char work[64] = "";
    if (unit) {
        if (total) snprintf(work, sizeof work, ", %llu/%llu %s", (unsigned long long)done, (unsigned long long)total, unit);
        else snprintf(work, sizeof work, ", %llu %s", (unsigned long long)done, unit);
    }
    if (sim_ps || events) /* a simulation; a search counts trials only */
        fprintf(p->out, "\r\033[K%s: simulated %.6f s%s, %.1f M events (%.2f M/s), %.0f s%s", p->what,
                (double)sim_ps * 1e-12, work, (double)events * 1e-6, (double)events * 1e-6 / el, el, eta);
    else
        fprintf(p->out, "\r\033[K%s:%s, %.0f s%s", p->what, work + 1, el, eta);
    fflush(p->out);
    p->shown = 1;
}

void orr_progress_done(orr_progress *p)
{
    if (!p || !p->out || !p->shown) return;
    fputs("\r\033[K", p->out);
    fflush(p->out);
    p->shown = 0;
}
