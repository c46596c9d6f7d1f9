/* SPDX-License-Identifier: MIT */
/* What the loader's files share (zc_config.c, zc_config_yaml.c, zc_config_windows.c,
 * zc_config_render.c): the arena a configuration owns, messages with their positions, the value
 * parsers and formatters, the YAML tree. The runtime reads zc_config.h only. */
#ifndef ZC_CONFIG_INTERNAL_H
#define ZC_CONFIG_INTERNAL_H

#include "zc_config.h"

#include <stddef.h>

#define ZC_FILE_MAX (1u << 20) /* a configuration file is small; this bounds the parser's work */

/* ---------------------------------------------------------------- the table (zc_config.c) */
extern const size_t zc_cfg_knob_offset[ZC_K_COUNT];

/* knob kid's field in c->knobs */
static inline void *zc_cfg_knob_ptr(struct zc_config *c, int kid) {
    return (char *)&c->knobs + zc_cfg_knob_offset[kid];
}

/* the knob whose file key is path, or -1 */
int zc_cfg_knob_by_path(const char *path);
/* The distinct next components of the knobs' paths under prefix ("" = top level), in table order. */
size_t zc_cfg_children(const char *prefix, const char **cand, size_t *clen);

/* ---------------------------------------------------------------- memory (zc_config.c) */
/* Everything a configuration owns lives in one arena, freed at once. */
struct zc_cfg_blk {
    struct zc_cfg_blk *next;
    size_t used, cap;
    max_align_t data[];
};
struct zc_cfg_arena {
    struct zc_cfg_blk *head;
    bool oom;
};

void *zc_cfg_alloc(struct zc_cfg_arena *a, size_t n);
void zc_cfg_arena_free(struct zc_cfg_arena *a);
char *zc_cfg_strndup(struct zc_cfg_arena *a, const char *s, size_t n);

struct zc_config_priv {
    struct zc_cfg_arena a;
    struct zc_msg msgs[ZC_CONFIG_MAX_MSGS];
};

/* ---------------------------------------------------------------- messages (zc_config.c) */
void zc_cfg_msg(struct zc_config *c, enum zc_msg_kind kind, const char *text);
/* A user's value inside a message: at most 60 bytes (cut at a character boundary) and "...". */
const char *zc_cfg_shorten(const char *s, char *buf, size_t size);

/* Where messages about the value being parsed go: a file position, or a variable. */
struct zc_cfg_ctx {
    struct zc_config *c;
    const char *fname; /* file messages: "FNAME:LINE:COL: ..." */
    const char *var;   /* variable messages: "VAR: ..." */
    bool failed;       /* something was reported since the caller cleared it */
};

/* An error at line:col (line 0: no position) of the file, or about the variable. */
__attribute__((format(printf, 4, 5))) void zc_cfg_report(struct zc_cfg_ctx *x, uint32_t line, uint32_t col,
                                                         const char *fmt, ...);

/* The candidate close enough to key to be what was meant, or -1. */
int zc_cfg_closest(const char *key, const char *const *cand, const size_t *clen, size_t ncand);
/* "; did you mean 'PREFIX.x'?" for a close candidate, else "; WHAT: a, b, c". */
void zc_cfg_suggest_in(char *out, size_t size, const char *prefix, const char *key, const char *const *cand,
                       const size_t *clen, size_t ncand, const char *what);
void zc_cfg_suggest(char *out, size_t size, const char *key, const char *const *cand, const size_t *clen, size_t ncand,
                    const char *what);

/* ---------------------------------------------------------------- values (zc_config.c) */
int zc_cfg_parse_bool(const char *v, bool *out);
/* Digits only (no sign, no spaces); -1 if not a number, -2 if above UINT64_MAX. */
int zc_cfg_parse_digits(const char *v, const char **end, uint64_t *out);
/* Parses a bool, uint or size knob; 0 or -1 with the message in err. */
int zc_cfg_parse_number(const struct zc_knob_info *ki, const char *v, void *out, char *err, size_t n);
/* A string knob's format where it has one (zc_config_values.c); 0, or -1 with err set. */
int zc_cfg_check_string(int kid, const char *v, char *err, size_t n);
/* Variable syntax: items separated by commas, `\x` = the byte x, spaces around items dropped. */
int zc_cfg_parse_list(struct zc_config *c, const char *s, bool globs, struct zc_strlist *out, char *err, size_t n);

struct zc_cfg_rsb { /* a rank set being built: ranges in any order, malloc'd */
    struct zc_rank_range *v;
    uint32_t n, cap;
    bool all, oom;
};
/* "0-3,8", "all" (allow_all: also empty) into b. */
int zc_cfg_rsb_add(struct zc_cfg_rsb *b, const char *s, bool allow_all, char *err, size_t n);
/* Sorted, merged (overlapping or adjacent ranges joined), into the configuration's memory. */
int zc_cfg_rsb_finish(struct zc_config *c, struct zc_cfg_rsb *b, struct zc_rankset *out);

const char *zc_cfg_fmt_size(uint64_t v, char *buf, size_t n);
const char *zc_cfg_fmt_rankset(const struct zc_rankset *s, char *buf, size_t size);
const char *zc_cfg_fmt_duration(uint64_t ns, char *buf, size_t size);

/* ---------------------------------------------------------------- the YAML tree (zc_config_yaml.c) */
enum zc_cfg_ntype { ZC_NODE_SCALAR, ZC_NODE_SEQ, ZC_NODE_MAP };
struct zc_cfg_node {
    enum zc_cfg_ntype t;
    uint32_t line, col; /* 1-based */
    const char *s;      /* scalar, NUL-terminated (len bytes: it may contain a NUL) */
    size_t len;
    bool plain;
    uint32_t n; /* items (sequence) or keys and values (mapping: key, value, key, value...) */
    struct zc_cfg_node *first, *last, *next;
};

bool zc_cfg_is_null(const struct zc_cfg_node *v);
/* v as a message names it: "a mapping", "a list", "nothing" or its quoted value (in buf) */
const char *zc_cfg_what(const struct zc_cfg_node *v, char *buf, size_t size);
void zc_cfg_rankset_from_yaml(struct zc_cfg_ctx *x, const char *path, const struct zc_cfg_node *v,
                              struct zc_rankset *out);
/* The file's settings into c: messages "c->file:LINE:COL: ...". */
void zc_cfg_load_yaml(struct zc_config *c, const char *data, size_t len);

/* ---------------------------------------------------------------- windows (zc_config_windows.c) */
extern const char *const zc_cfg_kind_names[4]; /* by enum zc_window_kind */
/* The file's `windows:` list (seq is a sequence); out is set only when every window is valid. */
void zc_cfg_windows_from_yaml(struct zc_cfg_ctx *x, const struct zc_cfg_node *seq, struct zc_windows *out);
/* ZECOLL_WINDOWS's one-line syntax; out is set only when every window is valid. */
void zc_cfg_windows_from_env(struct zc_cfg_ctx *x, const char *val, struct zc_windows *out);

/* ---------------------------------------------------------------- rendering (zc_config_render.c) */
struct zc_cfg_sb { /* a growing string; oom: a step failed, the rest are skipped */
    char *p;
    size_t n, cap, line; /* line: where the current line starts */
    bool oom;
};
void zc_cfg_sb_put(struct zc_cfg_sb *b, const char *s, size_t n);
__attribute__((format(printf, 2, 3))) void zc_cfg_sb_printf(struct zc_cfg_sb *b, const char *fmt, ...);
/* The value of a bool, uint, size or string knob as the file would spell it. */
void zc_cfg_sb_scalar(struct zc_cfg_sb *b, const struct zc_knob_info *ki, const void *p);

#endif
