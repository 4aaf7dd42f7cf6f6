/*
 * tracename.h - the form of a kernel or operator name in emulation traces and profiles, shared by
 * the emulator (emu.c) and the profiler (prof.c), two separately built libraries that must agree on
 * it: spaces and control characters become '_'; a name longer than EMU_NAME_MAX characters keeps its
 * first EMU_NAME_MAX - 17 and ends in '~' and the 16 hex digits of its FNV-1a hash, so long template
 * names stay distinct.
 */
#ifndef ORRERY_EMU_TRACENAME_H
#define ORRERY_EMU_TRACENAME_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define EMU_NAME_MAX 255

static inline void emu_trace_name(const char *name, char out[EMU_NAME_MAX + 1])
{
    size_t n = strlen(name);
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)name[i]) * 1099511628211ull;
    if (n <= EMU_NAME_MAX) snprintf(out, EMU_NAME_MAX + 1, "%s", name);
    else snprintf(out, EMU_NAME_MAX + 1, "%.*s~%016llx", EMU_NAME_MAX - 17, name, (unsigned long long)h);
    for (char *c = out; *c; c++)
        if ((unsigned char)*c <= ' ') *c = '_';
}

#endif
