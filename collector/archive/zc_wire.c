/* SPDX-License-Identifier: MIT */
/* Definitions as 64-bit words (zc_wire.h): written by each rank for the unification message and
 * by the salvage journal, read back by rank 0's merge and by zecoll-salvage. */
#include "zc_wire.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- word buffers */
void zc_wbuf_put(struct zc_wbuf *b, uint64_t v) {
    if (b->n == b->cap) {
        size_t ncap = b->cap ? 2 * b->cap : 1024;
        uint64_t *p = b->oom ? NULL : realloc(b->w, ncap * sizeof(*p));
        if (!p) {
            b->oom = true;
            return;
        }
        b->w = p;
        b->cap = ncap;
    }
    b->w[b->n++] = v;
}

/* length, then the bytes with their NUL, padded to whole words */
void zc_wbuf_put_str(struct zc_wbuf *b, const char *s) {
    size_t len = strlen(s) + 1, words = (len + 7) / 8;
    zc_wbuf_put(b, len);
    for (size_t i = 0; i < words; i++) {
        uint64_t w = 0;
        memcpy(&w, s + 8 * i, len - 8 * i < 8 ? len - 8 * i : 8);
        zc_wbuf_put(b, w);
    }
}

uint64_t zc_rbuf_get(struct zc_rbuf *r) {
    if (r->i >= r->n) {
        r->bad = true;
        return 0;
    }
    return r->w[r->i++];
}

const char *zc_rbuf_get_str(struct zc_rbuf *r) {
    uint64_t len = zc_rbuf_get(r), words = (len + 7) / 8;
    if (r->bad || len == 0 || words > r->n - r->i) {
        r->bad = true;
        return "";
    }
    const char *s = (const char *)(r->w + r->i);
    r->i += words;
    if (s[len - 1] != 0 || strlen(s) != len - 1) { /* one C string, its NUL where its length says */
        r->bad = true;
        return "";
    }
    return s;
}

const uint64_t *zc_rbuf_get_n(struct zc_rbuf *r, uint64_t n) {
    if (r->bad || n > r->n - r->i) {
        r->bad = true;
        return NULL;
    }
    const uint64_t *p = r->w + r->i;
    r->i += n;
    return p;
}

/* ---------------------------------------------------------------- definition tables */
void zc_wbuf_put_n(struct zc_wbuf *b, const uint64_t *v, size_t n) {
    for (size_t i = 0; i < n; i++) zc_wbuf_put(b, v[i]);
}

void zc_wbuf_put_strings(struct zc_wbuf *b, const struct zc_defs *d, uint32_t from) {
    for (uint32_t i = from; i < d->nstrings; i++) zc_wbuf_put_str(b, d->strings[i]);
}

void zc_wbuf_put_regions(struct zc_wbuf *b, const struct zc_defs *d, uint32_t from) {
    for (uint32_t i = from; i < d->nregions; i++) {
        const struct zc_def_region *r = &d->regions[i];
        zc_wbuf_put_n(b, (const uint64_t[]){r->name, r->role, r->paradigm}, 3);
    }
}

void zc_wbuf_put_devices(struct zc_wbuf *b, const struct zc_defs *d, uint32_t from) {
    for (uint32_t i = from; i < d->ndevices; i++) {
        const struct zc_def_device *v = &d->devices[i];
        zc_wbuf_put_n(b, (const uint64_t[]){v->index, v->name, v->uuid}, 3);
    }
}

void zc_wbuf_put_groups(struct zc_wbuf *b, const struct zc_defs *d, uint32_t from) {
    for (uint32_t i = from; i < d->ngroups; i++)
        zc_wbuf_put_n(b, (const uint64_t[]){d->groups[i].device, d->groups[i].context}, 2);
}

void zc_wbuf_put_comms(struct zc_wbuf *b, const struct zc_defs *d, uint32_t from) {
    for (uint32_t i = from; i < d->ncomms; i++) {
        const struct zc_def_comm *c = &d->comms[i];
        zc_wbuf_put_n(b, (const uint64_t[]){c->kind, c->name, c->parent, c->n, c->nremote}, 5);
        zc_wbuf_put_n(b, c->members, (size_t)c->n + c->nremote);
        zc_wbuf_put_str(b, c->key);
    }
}

void zc_wbuf_put_metrics(struct zc_wbuf *b, const struct zc_defs *d, uint32_t from) {
    for (uint32_t i = from; i < d->nmetrics; i++) {
        const struct zc_def_metric *m = &d->metrics[i];
        zc_wbuf_put_n(b, (const uint64_t[]){m->name, m->descr, m->unit, m->type, m->mode}, 5);
    }
}
