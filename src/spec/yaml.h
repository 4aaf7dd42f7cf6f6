/*
 * yaml.h - a small YAML tree over libyaml, with typed accessors whose errors name the file, the line
 * and the dotted field path, e.g.
 *
 *     spec.yaml:12: parallel.tp: expected a positive integer, got "eight"
 *
 * Private to the library: the spec (src/spec), the catalogs (src/hw/catalog.c, src/models/catalog.c)
 * and their tests use it. A document is parsed once into nodes allocated from one arena and freed
 * together. Mappings keep their keys in file order; duplicate keys, aliases (*name), more than one
 * document and nesting deeper than ORR_YAML_MAX_DEPTH are errors. Nothing here aborts on input.
 *
 * The second half declares the readers that turn a node into a catalog structure (a catalog name or
 * a mapping {base: NAME, field: value, ...}); they are defined next to their catalogs.
 */
#ifndef ORRERY_SPEC_YAML_H
#define ORRERY_SPEC_YAML_H

#include <stddef.h>
#include <stdint.h>

#include "orrery/core.h"
#include "orrery/hw.h"
#include "orrery/model.h"

#define ORR_YAML_MAX_DEPTH 64          /* mappings/sequences nested deeper than this: error */
#define ORR_YAML_MAX_NODES 1000000     /* more nodes than this in one document: error */

typedef enum orr_ykind { ORR_YSCALAR, ORR_YMAP, ORR_YSEQ } orr_ykind;

/*
 * One node. Children (mapping values in file order, or sequence items) are a singly linked list;
 * a mapping child carries the key it sits under. parent, key and index let an error message
 * rebuild the dotted path ("parallel.tp", "gpus[2]").
 */
typedef struct orr_ynode orr_ynode;
struct orr_ynode {
    orr_ykind kind;
    int line;                   /* 1-based line where the node (for mapping children: the key) starts */
    int plain;                  /* scalar written without quotes */
    const char *str;            /* scalar text, NUL-terminated; NULL for mappings and sequences */
    size_t len;                 /* scalar length in bytes (differs from strlen if it holds a NUL) */
    const char *key;            /* key in the parent mapping, or NULL */
    size_t index;               /* position in the parent sequence */
    const orr_ynode *parent;
    orr_ynode *first, *last;    /* children */
    orr_ynode *next;            /* next sibling */
    size_t n;                   /* number of children */
    const char *file;           /* file name for messages */
};

typedef struct orr_ydoc {
    orr_arena arena;
    orr_ynode *root;            /* NULL for an empty document */
    size_t nodes;
} orr_ydoc;

/* Parses data[0..len) (named file in messages) into doc. On failure doc is empty (safe to free). */
int orr_yaml_parse(orr_ydoc *doc, const char *file, const char *data, size_t len, orr_err *err);
/* Reads and parses a file. */
int orr_yaml_load_file(orr_ydoc *doc, const char *path, orr_err *err);
void orr_yaml_free(orr_ydoc *doc);

/* ---- Messages ---- */

/* Writes "file:line: path: " + the formatted message into err and returns -1. */
int orr_y_fail(const orr_ynode *n, orr_err *err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The dotted path of n from the document root ("" for the root). */
void orr_y_path(const orr_ynode *n, char *buf, size_t cap);
/* Describes what a node holds for a "got ..." message: "\"eight\"", "a mapping", "nothing". */
void orr_y_describe(const orr_ynode *n, char *buf, size_t cap);
/* s quoted, with control characters escaped and cut to about 60 characters: for messages. */
void orr_quote(const char *s, char *buf, size_t cap);

/* ---- Structure ---- */

const orr_ynode *orr_y_get(const orr_ynode *map, const char *key); /* NULL if absent */
int orr_y_expect_map(const orr_ynode *n, orr_err *err);
/* Fails on the first key of map not in allowed[0..nallowed) nor in extra (NULL-terminated, may be
 * NULL), listing the allowed keys. */
typedef struct orr_yfield orr_yfield;
int orr_y_check_keys(const orr_ynode *map, const orr_yfield *allowed, size_t nallowed,
                     const char *const *extra, orr_err *err);

/* ---- Typed scalars (each fails naming the node and what it expected) ---- */

int orr_y_uint(const orr_ynode *n, uint64_t min, uint64_t max, uint64_t *out, orr_err *err);
int orr_y_u32(const orr_ynode *n, uint32_t min, uint32_t *out, orr_err *err);
int orr_y_num(const orr_ynode *n, double min, double max, double *out, orr_err *err);
int orr_y_bool(const orr_ynode *n, int *out, orr_err *err);
/* A string of at most cap-1 bytes, no control characters. */
int orr_y_str(const orr_ynode *n, char *buf, size_t cap, orr_err *err);
/* One of names[0..count): *out is its index. */
int orr_y_choice(const orr_ynode *n, const char *const *names, int count, int *out, orr_err *err);

/* Strict number parsing shared with the command-line flags: the whole string must be the number. */
int orr_parse_u64(const char *s, uint64_t *out);   /* decimal digits, optional '+'; 0 on success */
int orr_parse_num(const char *s, double *out);     /* finite decimal (strtod), no hex/inf/nan */

/* ---- Field tables: one mapping key -> one struct member, with its unit conversion ---- */

typedef enum orr_yftype {
    ORR_YF_U32,      /* uint32_t, integer in [min, max] */
    ORR_YF_BOOL,     /* int 0/1 */
    ORR_YF_STR,      /* char[size] */
    ORR_YF_CHOICE,   /* int = index in choices (NULL-terminated) */
    ORR_YF_DOUBLE,   /* double = value * scale, value in [min, max] */
    ORR_YF_U64,      /* uint64_t = round(value * scale) */
    ORR_YF_I64       /* int64_t = round(value * scale) (times in ps) */
} orr_yftype;

struct orr_yfield {
    const char *key;
    orr_yftype type;
    size_t offset;                /* offsetof the member */
    size_t size;                  /* ORR_YF_STR: capacity of the char array */
    double scale;                 /* file unit -> stored unit */
    double min, max;              /* allowed range of the value as written in the file; max 0:
                                   * no upper bound */
    int open_min;                 /* numbers: 1 if the value must be > min (not >=) */
    const char *const *choices;   /* ORR_YF_CHOICE */
};

/* Sets obj's members from the keys of map that appear in fields[]; other keys are left alone (check
 * them with orr_y_check_keys first). */
int orr_y_apply_fields(void *obj, const orr_yfield *fields, size_t nfields, const orr_ynode *map,
                       orr_err *err);

/* ---- Catalog names ---- */

/* Case-insensitive match of name against canonical and the scalars of aliases (a scalar or a
 * sequence of scalars; may be NULL). */
int orr_name_matches(const char *name, const char *canonical, const orr_ynode *aliases);
/* Fails with `unknown WHAT "name" (known: a, b, ...)`, shortening the list to fit the message. */
int orr_fail_unknown(orr_err *err, const char *what, const char *name, const char *const *known,
                     size_t nknown, const char *list_cmd);

/* Parses the embedded data file `name` (data/NAME, compiled in by cmake/embed.cmake) into doc and
 * checks that its root is a mapping. A missing or malformed embedded file is a bug in the build, not
 * a user error: it aborts with a message. */
void orr_embedded_doc(const char *name, orr_ydoc *doc);
/* The bytes of embedded file `name` (NUL-terminated; *size without the NUL), or NULL if the build
 * did not compile it in. */
const char *orr_embedded_data(const char *name, size_t *size);
/* Reports a bad embedded catalog ("orrery: internal error: ...") and aborts. */
_Noreturn void orr_catalog_bug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Catalog entries (each a key: {fields} of the root mapping). These abort on a bad entry too. */
/* The `aliases:` of an entry (a name or a list of names): *out is its node (NULL if none); returns
 * them joined by ", " (in doc's arena) for `orrery list`. */
const char *orr_catalog_aliases(orr_ydoc *doc, const orr_ynode *entry, const orr_ynode **out);
/* Checks that every key of fields[] but those in optional (NULL-terminated) is in entry. */
void orr_catalog_require(const orr_ynode *entry, const orr_yfield *fields, size_t n, const char *const *optional);
/* Checks that entry's name and its aliases (own) differ from every name and alias of the n entries
 * before it (names[], aliases[]), ignoring case. */
void orr_catalog_check_names(const orr_ynode *entry, const orr_ynode *own, const char *const *names,
                             const orr_ynode *const *aliases, size_t n);

/* ---- Readers of catalog structures (defined in src/hw/catalog.c and src/models/catalog.c) ----
 * n is either a scalar (a catalog name) or a mapping of overrides with `base: NAME` (gpu, cluster)
 * or an optional base (model: without one it is a custom architecture). Errors name n's path. */
int orr_gpu_from_yaml(orr_gpu *g, const orr_ynode *n, orr_err *err);
int orr_cluster_from_yaml(orr_cluster *c, const orr_ynode *n, orr_err *err);
int orr_model_from_yaml(orr_model *m, const orr_ynode *n, orr_err *err);
/* The field table of GPU (is_gpu) or cluster keys, *n entries (src/hw/catalog.c): for the
 * calibration profiles of src/hw/profile.c, which read and write the same keys. */
const orr_yfield *orr_hw_field_table(int is_gpu, size_t *n);
/* Checks a model's fields against each other; prefix names it in messages (e.g. "model"). */
int orr_model_check(const orr_model *m, const char *prefix, orr_err *err);

#endif
