/*
 * route.c - values a program reads back from the device that decide its control flow
 * (docs/emulate.md, "Values read back"). Kernels never run, so a computed value would read as
 * zero; for MoE token routing that empties every dispatch. The one computed value modelled here is
 * a histogram: PyTorch's bincount and histc run at::cuda::kernelHistogram1D, and the emulator
 * writes the routing model's counts into its output when the kernel is launched, so the
 * tokens-per-expert a program reads back (.tolist(), .item()) sum to the number of items counted
 * and follow the model:
 *   balanced (default)   every bin gets total / bins, the remainder to the first bins;
 *   --moe-imbalance F    bin 0 gets F x the average, the others share the rest evenly (F <= bins);
 *   --moe-imbalance FILE a recorded histogram, one weight per bin (the CSV's `tokens` column).
 * Counts are apportioned by largest remainder (ties to the lower bin), the same on every rank.
 */
#define _GNU_SOURCE
#include "emu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The routing model from ORRERY_EMU_ROUTING (set by `orrery emulate`): empty or "balanced", a
 * factor "F", or "w0,w1,..." (a recorded histogram; more than one number). */
static double *route_weights(size_t bins, const char **why)
{
    const char *env = getenv("ORRERY_EMU_ROUTING");
    double *w = malloc(bins * sizeof *w);
    if (!w) emu_die("out of host memory");
    for (size_t i = 0; i < bins; i++) w[i] = 1.0;
    *why = NULL;
    if (!env || !*env || strcmp(env, "balanced") == 0) return w;
    size_t n = 1;
    for (const char *p = env; *p; p++) n += *p == ',';
    char *end;
    if (n == 1) {
        double f = strtod(env, &end);
        if (*end || !(f >= 1)) emu_die("ORRERY_EMU_ROUTING=%s: expected balanced, a factor >= 1 or a list of weights", env);
        if (f > (double)bins) f = (double)bins; /* all items in bin 0 */
        w[0] = f;
        for (size_t i = 1; i < bins; i++) w[i] = ((double)bins - f) / (double)(bins - 1);
        return w;
    }
    if (n != bins) {
        *why = "the recorded histogram (--moe-imbalance FILE) has a different number of bins";
        free(w);
        return NULL;
    }
    const char *p = env;
    for (size_t i = 0; i < bins; i++) {
        w[i] = strtod(p, &end);
        if (end == p || !(w[i] >= 0) || (*end && *end != ','))
            emu_die("ORRERY_EMU_ROUTING=%s: expected comma-separated non-negative weights", env);
        p = *end ? end + 1 : end;
    }
    return w;
}

typedef struct route_rem {
    double frac;
    size_t bin;
} route_rem;

static int by_fraction(const void *a, const void *b)
{
    const route_rem *x = a, *y = b;
    if (x->frac != y->frac) return x->frac > y->frac ? -1 : 1;
    return (x->bin > y->bin) - (x->bin < y->bin);
}

/* counts[0..bins) summing to total, in proportion to the model's weights. */
static int route_counts(uint64_t total, size_t bins, int64_t *counts)
{
    const char *why;
    double *w = route_weights(bins, &why);
    if (!w) {
        emu_warn_once("routing", "a histogram of %zu bins was left as zeros: %s", bins, why);
        return -1;
    }
    double sum = 0;
    for (size_t i = 0; i < bins; i++) sum += w[i];
    if (!(sum > 0)) { /* a recorded histogram of zeros: balanced */
        for (size_t i = 0; i < bins; i++) w[i] = 1.0;
        sum = (double)bins;
    }
    uint64_t given = 0;
    route_rem *rem = malloc(bins * sizeof *rem);
    if (!rem) emu_die("out of host memory");
    for (size_t i = 0; i < bins; i++) {
        double share = (double)total * (w[i] / sum);
        counts[i] = (int64_t)share;
        rem[i] = (route_rem){share - (double)counts[i], i};
        given += (uint64_t)counts[i];
    }
    /* the remainder, one each, to the largest fractions (ties: the lower bin) */
    qsort(rem, bins, sizeof *rem, by_fraction);
    for (size_t i = 0; given < total && i < bins; i++, given++) counts[rem[i].bin]++;
    free(rem);
    free(w);
    return 0;
}

/* One Itanium-mangled template argument of a builtin or c10 type: its code letter ('l' int64, 'i'
 * int32, 'f' float, 'd' double, ...; 'N' for a nested name, which is skipped); *s moves past it. */
static char mangled_type(const char **s)
{
    char c = **s;
    if (!c) return 0;
    if (c != 'N') {
        (*s)++;
        return c;
    }
    const char *e = strchr(*s, 'E');
    *s = e ? e + 1 : *s + strlen(*s);
    return 'N';
}

/* at::cuda::kernelHistogram1D<output_t, input_t, IndexType, ...>(TensorInfo<output_t, IndexType> a,
 * TensorInfo p, TensorInfo b, int64_t nbins, acc minvalue, acc maxvalue, IndexType totalElements,
 * Op) (aten/src/ATen/native/cuda/SummaryOps.cu, torch 2.9): a TensorInfo starts with its data
 * pointer. */
static void histogram(const char *name, void **args)
{
    const char *t = strstr(name, "kernelHistogram1DI") + strlen("kernelHistogram1DI");
    char out_t = mangled_type(&t);
    mangled_type(&t);
    char index_t = mangled_type(&t);
    size_t esize = out_t == 'l' || out_t == 'd' ? 8 : out_t == 'i' || out_t == 'f' ? 4 : 0;
    size_t isize = index_t == 'l' || index_t == 'm' ? 8 : index_t == 'i' || index_t == 'j' ? 4 : 0;
    if (!esize || !isize || !args || !args[0] || !args[3] || !args[6]) {
        emu_warn_once("histogram-type", "a histogram kernel of a type the routing model does not handle (%.60s...) "
                                        "reads back as zeros", name);
        return;
    }
    uintptr_t data;
    int64_t nbins;
    uint64_t total = 0;
    memcpy(&data, args[0], sizeof data);
    memcpy(&nbins, args[3], sizeof nbins);
    if (isize == 8) memcpy(&total, args[6], 8);
    else {
        uint32_t t32;
        memcpy(&t32, args[6], 4);
        total = t32;
    }
    if (nbins < 1 || nbins > (1 << 20) || total > (1ull << 53)) return;
    char *out = emu_backed(data, (size_t)nbins * esize);
    if (!out) return; /* an output in unbacked memory: zeros */
    int64_t *counts = malloc((size_t)nbins * sizeof *counts);
    if (!counts) emu_die("out of host memory");
    if (route_counts(total, (size_t)nbins, counts) == 0)
        for (int64_t i = 0; i < nbins; i++) {
            int64_t c = counts[i];
            int32_t c32 = (int32_t)c;
            double cd = (double)c;
            float cf = (float)c;
            memcpy(out + (size_t)i * esize, out_t == 'l' ? (void *)&c : out_t == 'i' ? (void *)&c32
                                             : out_t == 'd' ? (void *)&cd : (void *)&cf, esize);
        }
    free(counts);
}

void emu_kernel_values(const char *name, void **args)
{
    if (strstr(name, "kernelHistogram1DI")) histogram(name, args);
}
