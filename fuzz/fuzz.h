/*
 * fuzz.h - shared by the libFuzzer harnesses of fuzz/ (make fuzz; docs/spec.md "Limits"): the input
 * written to a scratch file, for the readers that take a path. Each harness is one
 * LLVMFuzzerTestOneInput over one parser; a crash, a sanitizer report, a leak, a hang (-timeout) or
 * an allocation over -rss_limit_mb is a finding.
 */
#ifndef ORRERY_FUZZ_H
#define ORRERY_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A per-process scratch directory, made once. */
static inline const char *fuzz_dir(void)
{
    static char dir[64];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/orrery-fuzz-XXXXXX");
        if (!mkdtemp(dir)) abort();
    }
    return dir;
}

/* Writes data to fuzz_dir()/name and returns its path (a static buffer per call site's name). */
static inline const char *fuzz_file(const char *name, const uint8_t *data, size_t size)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", fuzz_dir(), name);
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    fclose(f);
    return path;
}

#endif
