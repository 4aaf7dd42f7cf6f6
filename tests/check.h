/*
 * check.h - the project's minimal test harness: CHECK macros that count and report failures, and
 * a closing line "N passed, N failed" that ctest output and CI read. One test program per file.
 */
#ifndef ORRERY_TEST_CHECK_H
#define ORRERY_TEST_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int check_passed, check_failed;

#define CHECK(cond)                                                                     \
    do {                                                                                \
        if (cond) check_passed++;                                                       \
        else {                                                                          \
            check_failed++;                                                             \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);    \
        }                                                                               \
    } while (0)

#define CHECK_MSG(cond, ...)                                                            \
    do {                                                                                \
        if (cond) check_passed++;                                                       \
        else {                                                                          \
            check_failed++;                                                             \
            fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond);    \
            fprintf(stderr, __VA_ARGS__);                                               \
            fputc('\n', stderr);                                                        \
        }                                                                               \
    } while (0)

#define CHECK_EQ_I64(a, b)                                                              \
    do {                                                                                \
        long long va_ = (long long)(a), vb_ = (long long)(b);                           \
        CHECK_MSG(va_ == vb_, "%s = %lld, %s = %lld", #a, va_, #b, vb_);                \
    } while (0)

/* |a - b| <= tol * |b| */
#define CHECK_REL(a, b, tol)                                                            \
    do {                                                                                \
        double va_ = (double)(a), vb_ = (double)(b);                                    \
        CHECK_MSG(fabs(va_ - vb_) <= (tol) * fabs(vb_), "%s = %.6g, %s = %.6g (tolerance %.3g)", \
                  #a, va_, #b, vb_, (double)(tol));                                     \
    } while (0)

/* The closing summary. A program that ran no check fails: a test that cannot fail is no test. */
static inline int check_done(void)
{
    printf("%d passed, %d failed\n", check_passed, check_failed);
    if (check_passed + check_failed == 0) fprintf(stderr, "no check ran\n");
    return check_failed || check_passed + check_failed == 0 ? 1 : 0;
}

#endif
