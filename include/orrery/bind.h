/*
 * bind.h - the entry points for other languages (the Python package, python/orrery, calls them
 * through ctypes): a whole request in as strings, the documented JSON out (docs/json.md), so a
 * binding mirrors no C struct. Each call does what `orrery predict --json` or `orrery list` does.
 *
 * Every function here may be called from several threads at once: the library keeps no mutable
 * global state besides the catalogs, which are loaded once under pthread_once and only read after.
 * The strings returned are malloc'd; free them with orr_bind_free. On a user error (bad spec, bad
 * flag, unknown name) a function returns -1 and *err_out holds the message `orrery predict` prints
 * after "orrery: " (naming the file, field or flag); it never prints, exits or aborts on input.
 */
#ifndef ORRERY_BIND_H
#define ORRERY_BIND_H

/* Changes when a signature below changes, so a binding can refuse a library it does not know. */
#define ORR_BIND_ABI 2

int orr_bind_abi(void);
/* The library's version, e.g. "0.9.0" (the project version of CMakeLists.txt). */
const char *orr_bind_version(void);

/*
 * One prediction, as `orrery predict [SPEC] FLAGS --json`: the spec from the file spec_path, or
 * from the YAML text spec_text (at most one of them non-NULL; neither: flags only), then the flags
 * argv[0..argc) as on the command line ("--tp", "8" or "--tp=8", "--sp", "--no-sp"), then resolve
 * and simulate. A spec with jobs: gives the multi-job report, as the command line does.
 * Returns 0 with *json_out set, or -1 with *err_out set (the other is NULL).
 */
int orr_predict_json(const char *spec_path, const char *spec_text, int argc, const char *const *argv,
                     char **json_out, char **err_out);

/*
 * A configuration search, as `orrery search [SPEC] FLAGS --json` (docs/spec.md "Search", docs/json.md
 * "Search"): the spec as for orr_predict_json (its search: key read too), the flags as on the
 * command line (axes as lists: "--tp=1,2,4"); --csv and --html write their files. Returns 0 with
 * *json_out set, or -1 with *err_out set. With -j N it forks worker processes.
 */
int orr_search_json_run(const char *spec_path, const char *spec_text, int argc, const char *const *argv,
                        char **json_out, char **err_out);

/*
 * A packet-level network simulation, as `orrery netsim TOPO FLOWS CONFIG --json` (docs/netsim.md):
 * the three files in ns-3's HPCC formats; no_accel: 1 for --no-accel (no Wormhole acceleration).
 * Writes no file (the config's FCT and PFC outputs are the command line's; every finished flow is in
 * the JSON). Returns 0 with *json_out set, or -1 with *err_out set.
 */
int orr_netsim_json_run(const char *topo_path, const char *flows_path, const char *config_path, int no_accel,
                        char **json_out, char **err_out);

/*
 * A catalog, which = "models", "gpus" or "clusters": a JSON array with one object per entry, in the
 * order of `orrery list` (docs/python.md lists the keys). Returns 0 or -1 as above.
 */
int orr_catalog_json(const char *which, char **json_out, char **err_out);

/* Frees a string returned above (NULL is fine). */
void orr_bind_free(char *s);

#endif
