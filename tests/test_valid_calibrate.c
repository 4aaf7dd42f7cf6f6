/*
 * `orrery calibrate` round trip (issue 18): a profile fitted on half the rows of a validation table
 * predicts the other half. For each table, the rows are split by position (even rows fit, odd rows
 * held out; the tables list their rows by size, so each half spans the sizes), the compute scale is
 * fitted on the even rows' measured iteration times by orr_calibrate (the published throughput as
 * an iteration time: orr_valid_cases), and the odd rows are predicted with the profile, through
 * --profile's path (the spec's profile, applied by resolve). Fit and check run in the same build,
 * so the test holds whatever the catalog's efficiencies are today. Tolerances, on throughput
 * (positive: predicted faster):
 *   - megatron-h100 (Megatron-Core weak scaling, bf16, 9 rows: 5 fit, 4 held out): held-out
 *     median |error| within 10%, each held-out row within 20%;
 *   - nemo-h100 (NeMo 24.07's pre-training rows, fp8, 9 rows: 5 fit, 4 held out): the same bounds;
 *   - the search does what it is for: on the fitted rows, the mean |log(predicted / measured)| it
 *     minimises is no larger with the profile than with the catalog's values (scale 1 is among
 *     those searched; 0.002 for the rounding of the written efficiencies).
 * Rows and both errors are printed.
 */
#include "check.h"
#include "orrery/calibrate.h"
#include "orrery/orrery.h"
#include "orrery/validate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TOL_HELDOUT_MEDIAN 0.10
#define TOL_HELDOUT_ROW 0.20

static int cmp_abs(const void *a, const void *b)
{
    double x = fabs(*(const double *)a), y = fabs(*(const double *)b);
    return (x > y) - (x < y);
}

static double median_abs(double *e, size_t n)
{
    qsort(e, n, sizeof *e, cmp_abs);
    return !n ? 0 : n % 2 ? fabs(e[n / 2]) : 0.5 * (fabs(e[n / 2 - 1]) + fabs(e[n / 2]));
}

/* Throughput error of case c predicted with profile p (NULL: the catalog's values). */
static double case_error(const orr_valid_case *c, const orr_hw_profile *p)
{
    orr_spec s = c->spec;
    if (p) s.profile = *p;
    orr_prediction pr;
    orr_err err = {{0}};
    if (orr_spec_resolve(&s, &err) < 0 || orr_predict(&s, &pr, &err) < 0) {
        CHECK_MSG(0, "row %d: %s", c->csv_row, err.msg);
        return NAN;
    }
    double e = c->measured_s / pr.r.iteration_s - 1;
    orr_prediction_free(&pr);
    return e;
}

static void round_trip(orr_valid_set set, size_t want_rows)
{
    orr_valid_case *cases;
    size_t n;
    orr_err err = {{0}};
    if (orr_valid_cases(set, ORRERY_VALIDATION_DIR, &cases, &n, &err) < 0) {
        CHECK_MSG(0, "%s", err.msg);
        return;
    }
    CHECK_EQ_I64(n, want_rows);
    orr_step_rows fit = {0};
    for (size_t i = 0; i < n; i += 2) {
        if (fit.n == fit.cap) orr_grow((void **)&fit.v, &fit.cap, fit.n + 1, sizeof *fit.v);
        orr_step_row *r = &fit.v[fit.n++];
        r->spec = cases[i].spec;
        r->step_s = cases[i].measured_s;
        snprintf(r->where, sizeof r->where, "%s row %d", orr_valid_set_name(set), cases[i].csv_row);
    }
    orr_spec hw = cases[0].spec;
    orr_calib_result res;
    if (orr_spec_resolve_hardware(&hw, NULL, &err) < 0 || orr_calibrate(&hw, NULL, &fit, &res, &err) < 0) {
        CHECK_MSG(0, "%s", err.msg);
        orr_step_rows_free(&fit);
        orr_valid_cases_free(cases, n);
        return;
    }
    orr_buf b = {0};
    orr_calibrate_report(&res, &b);
    fputs(b.s, stdout);
    orr_buf_free(&b);
    printf("%s: %zu rows fitted (even), %zu held out (odd)\n  %-4s %-12s %10s %10s\n", orr_valid_set_name(set), fit.n,
           n - fit.n, "row", "model", "catalog", "profile");
    double *fit_before = calloc(n, sizeof *fit_before), *fit_after = calloc(n, sizeof *fit_after);
    double *held = calloc(n, sizeof *held), log_before = 0, log_after = 0;
    size_t nf = 0, nh = 0;
    for (size_t i = 0; i < n; i++) {
        double before = case_error(&cases[i], NULL), after = case_error(&cases[i], &res.profile);
        printf("  %-4d %-12s %+9.1f%% %+9.1f%%  %s\n", cases[i].csv_row, cases[i].spec.model.name, 100 * before,
               100 * after, i % 2 ? "held out" : "fitted");
        if (i % 2 == 0) {
            log_before += fabs(log(1 + before));
            log_after += fabs(log(1 + after));
            fit_before[nf] = before;
            fit_after[nf++] = after;
            continue;
        }
        held[nh++] = after;
        CHECK_MSG(fabs(after) <= TOL_HELDOUT_ROW, "%s row %d (%s): held-out error %+.1f%%, bound %.0f%%",
                  orr_valid_set_name(set), cases[i].csv_row, cases[i].spec.model.name, 100 * after,
                  100 * TOL_HELDOUT_ROW);
    }
    double mb = median_abs(fit_before, nf), ma = median_abs(fit_after, nf), mh = median_abs(held, nh);
    printf("  fitted rows: median |error| catalog %.1f%%, profile %.1f%%; held-out rows with the profile: %.1f%% "
           "(bound %.0f%%, each row %.0f%%)\n", 100 * mb, 100 * ma, 100 * mh, 100 * TOL_HELDOUT_MEDIAN,
           100 * TOL_HELDOUT_ROW);
    CHECK_MSG(mh <= TOL_HELDOUT_MEDIAN, "%s: held-out median |error| %.1f%%, bound %.0f%%", orr_valid_set_name(set),
              100 * mh, 100 * TOL_HELDOUT_MEDIAN);
    printf("  fitted rows: mean |log(predicted / measured)| catalog %.4f, profile %.4f\n\n", log_before / nf,
           log_after / nf);
    CHECK_MSG(log_after / nf <= log_before / nf + 0.002, "%s: the fit made its own objective worse (%.4f -> %.4f)",
              orr_valid_set_name(set), log_before / nf, log_after / nf);
    free(fit_before);
    free(fit_after);
    free(held);
    orr_calib_result_free(&res);
    free(fit.v); /* the specs are the cases' (copies without heap parts) */
    orr_valid_cases_free(cases, n);
}

int main(void)
{
    round_trip(ORR_VALID_MEGATRON_H100, 9);
    round_trip(ORR_VALID_NEMO_H100, 9);
    return check_done();
}
