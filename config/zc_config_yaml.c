/* SPDX-License-Identifier: MIT */
/* The configuration file: libyaml's events become a small tree that keeps every position, then
 * the tree is walked against the knob table's dotted paths (unknown and duplicate keys, wrong
 * types), each value parsed into its knob. */
#include "zc_config_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define ZC_YAML_MAX_DEPTH 32

/* ---------------------------------------------------------------- the YAML tree */
bool zc_cfg_is_null(const struct zc_cfg_node *v) {
    return v->t == ZC_NODE_SCALAR && v->plain &&
           (v->len == 0 || !strcmp(v->s, "~") || !strcmp(v->s, "null") || !strcmp(v->s, "Null") ||
            !strcmp(v->s, "NULL"));
}

const char *zc_cfg_what(const struct zc_cfg_node *v, char *buf, size_t size) {
    char sb[72];
    if (v->t == ZC_NODE_MAP) return "a mapping";
    if (v->t == ZC_NODE_SEQ) return "a list";
    if (zc_cfg_is_null(v)) return "nothing";
    snprintf(buf, size, "'%s'", zc_cfg_shorten(v->s, sb, sizeof(sb)));
    return buf;
}

/* libyaml's positions of a reader error are byte offsets. */
static void offset_pos(const char *data, size_t len, size_t off, uint32_t *line, uint32_t *col) {
    uint32_t l = 1, c = 1;
    for (size_t i = 0; i < off && i < len; i++) {
        if (data[i] == '\n' || (data[i] == '\r' && (i + 1 >= len || data[i + 1] != '\n'))) l++, c = 1;
        else if (data[i] != '\r') c++;
    }
    *line = l;
    *col = c;
}

/* What libyaml says went wrong, at its position. */
static void parse_error(struct zc_cfg_ctx *x, const yaml_parser_t *p, const char *data, size_t len) {
    uint32_t line, col;
    if (p->error == YAML_READER_ERROR) {
        offset_pos(data, len, p->problem_offset, &line, &col);
    } else {
        line = (uint32_t)p->problem_mark.line + 1;
        col = (uint32_t)p->problem_mark.column + 1;
    }
    if (p->error == YAML_MEMORY_ERROR || !p->problem)
        zc_cfg_report(x, line, col, "malformed YAML: %s",
                      p->error == YAML_MEMORY_ERROR ? "out of memory" : "parse error");
    else if (p->context && p->error != YAML_READER_ERROR)
        zc_cfg_report(x, line, col, "malformed YAML: %s (%s at line %u, column %u)", p->problem, p->context,
                      (unsigned)p->context_mark.line + 1, (unsigned)p->context_mark.column + 1);
    else
        zc_cfg_report(x, line, col, "malformed YAML: %s", p->problem);
}

struct tree { /* the tree being built from libyaml's events */
    struct zc_cfg_ctx *x;
    struct zc_cfg_arena *tmp;
    struct zc_cfg_node *stack[ZC_YAML_MAX_DEPTH], *root; /* stack: the open sequences and mappings */
    int depth, docs;
};

/* A scalar, or the start of a sequence or mapping, as the next child of what is open; false: reported. */
static bool tree_add(struct tree *t, const yaml_event_t *ev, uint32_t line, uint32_t col) {
    struct zc_cfg_node *nd = zc_cfg_alloc(t->tmp, sizeof(*nd));
    if (!nd) {
        zc_cfg_report(t->x, 0, 0, "out of memory");
        return false;
    }
    *nd = (struct zc_cfg_node){.line = line, .col = col};
    if (ev->type == YAML_SCALAR_EVENT) {
        nd->t = ZC_NODE_SCALAR;
        nd->len = ev->data.scalar.length;
        nd->s = zc_cfg_strndup(t->tmp, (const char *)ev->data.scalar.value, nd->len);
        nd->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        if (!nd->s) {
            zc_cfg_report(t->x, 0, 0, "out of memory");
            return false;
        }
    } else {
        nd->t = ev->type == YAML_MAPPING_START_EVENT ? ZC_NODE_MAP : ZC_NODE_SEQ;
    }
    if (t->depth) {
        struct zc_cfg_node *parent = t->stack[t->depth - 1];
        if (parent->last) parent->last->next = nd;
        else parent->first = nd;
        parent->last = nd;
        parent->n++;
    } else {
        t->root = nd;
    }
    if (nd->t != ZC_NODE_SCALAR) {
        if (t->depth == ZC_YAML_MAX_DEPTH) {
            zc_cfg_report(t->x, line, col, "nested deeper than %d levels", ZC_YAML_MAX_DEPTH);
            return false;
        }
        t->stack[t->depth++] = nd;
    }
    return true;
}

/* One event into the tree; false: reported, the file is read no further. */
static bool tree_event(struct tree *t, const yaml_event_t *ev, bool *done) {
    uint32_t line = (uint32_t)ev->start_mark.line + 1, col = (uint32_t)ev->start_mark.column + 1;
    switch (ev->type) {
    case YAML_STREAM_END_EVENT: *done = true; return true;
    case YAML_DOCUMENT_START_EVENT:
        if (++t->docs <= 1) return true;
        zc_cfg_report(t->x, line, col, "only one YAML document is allowed (a second one starts here)");
        return false;
    case YAML_ALIAS_EVENT:
        /* most often an unquoted pattern such as *_copy */
        zc_cfg_report(t->x, line, col,
                      "*%s is a YAML alias, which zecoll does not use: quote a value that starts with * (\"*%s\")",
                      (const char *)ev->data.alias.anchor, (const char *)ev->data.alias.anchor);
        return false;
    case YAML_SCALAR_EVENT:
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: return tree_add(t, ev, line, col);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        if (t->depth) t->depth--;
        return true;
    default: return true;
    }
}

/* The file as a tree in tmp (NULL for an empty file); *ok false: reported. */
static struct zc_cfg_node *yaml_tree(struct zc_cfg_ctx *x, struct zc_cfg_arena *tmp, const char *data, size_t len,
                                     bool *ok) {
    yaml_parser_t p;
    struct tree t = {.x = x, .tmp = tmp};
    *ok = false;
    if (!yaml_parser_initialize(&p)) {
        zc_cfg_report(x, 0, 0, "out of memory");
        return NULL;
    }
    yaml_parser_set_input_string(&p, (const unsigned char *)data, len);
    for (bool done = false; !done;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev)) {
            parse_error(x, &p, data, len);
            yaml_parser_delete(&p);
            return NULL;
        }
        bool good = tree_event(&t, &ev, &done);
        yaml_event_delete(&ev);
        if (!good) {
            yaml_parser_delete(&p);
            return NULL;
        }
    }
    yaml_parser_delete(&p);
    *ok = true;
    return t.root;
}

/* ---------------------------------------------------------------- the file's keys */
static const char *type_desc(enum zc_knob_type t) {
    switch (t) {
    case ZC_T_BOOL: return "true or false";
    case ZC_T_UINT: return "an integer";
    case ZC_T_SIZE: return "a size";
    case ZC_T_STRING: return "a string";
    case ZC_T_LIST: return "a list of names";
    case ZC_T_GLOBS: return "a list of patterns";
    case ZC_T_RANKSET: return "a rank set such as \"0-3,8\"";
    case ZC_T_WINDOWS: return "a list of windows";
    }
    return "?";
}

static void set_origin_file(struct zc_config *c, int kid, const struct zc_cfg_node *key) {
    c->origin[kid] = (struct zc_origin){ZC_ORIGIN_FILE, key->line, key->col};
}

static void list_from_yaml(struct zc_cfg_ctx *x, const char *path, bool globs, const struct zc_cfg_node *v,
                           struct zc_strlist *out) {
    char err[512], wb[80];
    if (zc_cfg_is_null(v)) {
        *out = (struct zc_strlist){0, NULL};
        return;
    }
    if (v->t == ZC_NODE_SCALAR) {
        if (memchr(v->s, 0, v->len)) {
            zc_cfg_report(x, v->line, v->col, "%s: contains a NUL character", path);
        } else if (zc_cfg_parse_list(x->c, v->s, globs, out, err, sizeof(err)) != 0) {
            zc_cfg_report(x, v->line, v->col, "%s: %s", path, err);
        }
        return;
    }
    if (v->t != ZC_NODE_SEQ) {
        zc_cfg_report(x, v->line, v->col, "%s: expected %s, got %s", path,
                      globs ? "a list of patterns" : "a list of names", zc_cfg_what(v, wb, sizeof(wb)));
        return;
    }
    const char **items = zc_cfg_alloc(&x->c->priv->a, (v->n ? v->n : 1) * sizeof(*items));
    if (!items) return zc_cfg_report(x, 0, 0, "out of memory");
    uint32_t k = 0;
    bool bad = false;
    for (const struct zc_cfg_node *it = v->first; it; it = it->next) {
        if (it->t != ZC_NODE_SCALAR || zc_cfg_is_null(it)) {
            zc_cfg_report(x, it->line, it->col, "%s: item %u: expected a %s, got %s", path, k + 1,
                          globs ? "pattern" : "name", zc_cfg_what(it, wb, sizeof(wb)));
            bad = true;
        } else if (!it->len || memchr(it->s, 0, it->len)) {
            zc_cfg_report(x, it->line, it->col, "%s: item %u: %s", path, k + 1,
                          it->len ? "contains a NUL character" : globs ? "empty pattern" : "empty name");
            bad = true;
        } else {
            items[k] = zc_cfg_strndup(&x->c->priv->a, it->s, it->len);
        }
        k++;
    }
    if (!bad) *out = (struct zc_strlist){k, items};
}

void zc_cfg_rankset_from_yaml(struct zc_cfg_ctx *x, const char *path, const struct zc_cfg_node *v,
                              struct zc_rankset *out) {
    char err[512], wb[80];
    struct zc_cfg_rsb b = {0};
    if (v->t == ZC_NODE_MAP || zc_cfg_is_null(v) || (v->t == ZC_NODE_SEQ && !v->n)) {
        zc_cfg_report(x, v->line, v->col, "%s: expected a rank set such as \"0-3,8\", got %s", path,
                      v->t == ZC_NODE_SEQ ? "an empty list" : zc_cfg_what(v, wb, sizeof(wb)));
        return;
    }
    bool bad = false;
    for (const struct zc_cfg_node *it = v->t == ZC_NODE_SCALAR ? v : v->first; it;
         it = v->t == ZC_NODE_SCALAR ? NULL : it->next) {
        if (it->t != ZC_NODE_SCALAR || zc_cfg_is_null(it) || memchr(it->s, 0, it->len)) {
            zc_cfg_report(x, it->line, it->col, "%s: expected ranks such as 0-3 or 8, got %s", path,
                          zc_cfg_what(it, wb, sizeof(wb)));
            bad = true;
        } else if (zc_cfg_rsb_add(&b, it->s, false, err, sizeof(err)) != 0) {
            zc_cfg_report(x, it->line, it->col, "%s: %s", path, err);
            bad = true;
        }
    }
    if (bad) {
        free(b.v);
        return;
    }
    if (zc_cfg_rsb_finish(x->c, &b, out) != 0) zc_cfg_report(x, 0, 0, "out of memory");
}

static void set_from_node(struct zc_cfg_ctx *x, int kid, const struct zc_cfg_node *key, const struct zc_cfg_node *v) {
    const struct zc_knob_info *ki = &zc_knob_table[kid];
    void *dst = zc_cfg_knob_ptr(x->c, kid);
    char err[512], wb[80];
    x->failed = false;
    switch (ki->type) {
    case ZC_T_BOOL:
    case ZC_T_UINT:
    case ZC_T_SIZE:
    case ZC_T_STRING:
        if (v->t != ZC_NODE_SCALAR || zc_cfg_is_null(v)) {
            zc_cfg_report(x, v->line, v->col, "%s: expected %s, got %s", ki->yaml, type_desc(ki->type),
                          zc_cfg_what(v, wb, sizeof(wb)));
        } else if (memchr(v->s, 0, v->len)) {
            zc_cfg_report(x, v->line, v->col, "%s: contains a NUL character", ki->yaml);
        } else if (ki->type == ZC_T_STRING) {
            char *sv = zc_cfg_strndup(&x->c->priv->a, v->s, v->len);
            /* "" is the default as rendered (the effective configuration loads back) */
            if (sv && *sv && zc_cfg_check_string(kid, sv, err, sizeof(err)) != 0)
                zc_cfg_report(x, v->line, v->col, "%s: %s", ki->yaml, err);
            else *(const char **)dst = sv;
        } else {
            if (zc_cfg_parse_number(ki, v->s, dst, err, sizeof(err)) != 0) /* dst is left alone */
                zc_cfg_report(x, v->line, v->col, "%s: %s", ki->yaml, err);
        }
        break;
    case ZC_T_LIST:
    case ZC_T_GLOBS: list_from_yaml(x, ki->yaml, ki->type == ZC_T_GLOBS, v, dst); break;
    case ZC_T_RANKSET: zc_cfg_rankset_from_yaml(x, ki->yaml, v, dst); break;
    case ZC_T_WINDOWS:
        if (zc_cfg_is_null(v)) *(struct zc_windows *)dst = (struct zc_windows){0, NULL};
        else if (v->t != ZC_NODE_SEQ)
            zc_cfg_report(x, v->line, v->col, "%s: expected a list of windows (- kind: time ...), got %s", ki->yaml,
                          zc_cfg_what(v, wb, sizeof(wb)));
        else zc_cfg_windows_from_yaml(x, v, dst);
        break;
    }
    if (!x->failed) set_origin_file(x->c, kid, key);
}

static void walk_map(struct zc_cfg_ctx *x, const struct zc_cfg_node *map, const char *prefix) {
    const char *cand[ZC_K_COUNT];
    size_t clen[ZC_K_COUNT];
    const struct zc_cfg_node *seen[ZC_K_COUNT] = {0};
    size_t ncand = zc_cfg_children(prefix, cand, clen);
    char wb[80], sb[72], sg[512], full[160];
    for (const struct zc_cfg_node *k = map->first; k && k->next; k = k->next->next) {
        const struct zc_cfg_node *v = k->next;
        if (k->t != ZC_NODE_SCALAR || zc_cfg_is_null(k)) {
            zc_cfg_report(x, k->line, k->col, "a key must be a name, not %s", zc_cfg_what(k, wb, sizeof(wb)));
            continue;
        }
        size_t ci = ncand;
        if (!memchr(k->s, 0, k->len))
            for (ci = 0; ci < ncand; ci++)
                if (clen[ci] == k->len && !memcmp(cand[ci], k->s, k->len)) break;
        if (ci == ncand) {
            zc_cfg_suggest_in(sg, sizeof(sg), prefix, k->s, cand, clen, ncand, "valid keys here");
            zc_cfg_report(x, k->line, k->col, "unknown key '%s%s%s'%s", prefix, *prefix ? "." : "",
                          zc_cfg_shorten(k->s, sb, sizeof(sb)), sg);
            continue;
        }
        snprintf(full, sizeof(full), "%s%s%.*s", prefix, *prefix ? "." : "", (int)clen[ci], cand[ci]);
        if (seen[ci]) {
            zc_cfg_report(x, k->line, k->col, "duplicate key '%s' (first at line %u)", full, seen[ci]->line);
            continue;
        }
        seen[ci] = k;
        int kid = zc_cfg_knob_by_path(full);
        if (kid >= 0) {
            set_from_node(x, kid, k, v);
        } else if (!zc_cfg_is_null(v)) { /* a section */
            if (v->t != ZC_NODE_MAP) {
                const char *sub[ZC_K_COUNT];
                size_t sublen[ZC_K_COUNT], ns = zc_cfg_children(full, sub, sublen), o = 0;
                for (size_t i = 0; i < ns && o < sizeof(sg); i++)
                    o += (size_t)snprintf(sg + o, sizeof(sg) - o, "%s%.*s", i ? ", " : "", (int)sublen[i], sub[i]);
                zc_cfg_report(x, v->line, v->col, "%s: expected a mapping (keys: %s), got %s", full, sg,
                              zc_cfg_what(v, wb, sizeof(wb)));
            } else {
                walk_map(x, v, full);
            }
        }
    }
}

void zc_cfg_load_yaml(struct zc_config *c, const char *data, size_t len) {
    struct zc_cfg_ctx x = {.c = c, .fname = c->file};
    struct zc_cfg_arena tmp = {0};
    bool ok;
    if (len > ZC_FILE_MAX)
        return zc_cfg_report(&x, 0, 0, "larger than %u bytes: not a zecoll configuration", ZC_FILE_MAX);
    struct zc_cfg_node *root = yaml_tree(&x, &tmp, data, len, &ok);
    if (ok && root && !zc_cfg_is_null(root)) {
        if (root->t != ZC_NODE_MAP) {
            char wb[80];
            zc_cfg_report(&x, root->line, root->col,
                          "expected a mapping of settings (output:, record:, windows: ...), got %s",
                          zc_cfg_what(root, wb, sizeof(wb)));
        } else {
            walk_map(&x, root, "");
        }
    }
    zc_cfg_arena_free(&tmp);
}
