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
void zc_wbuf_put_strings(struct zc_wbuf *b, const struct zc_defs *d, uint32_t from) {
    for (uint32_t i = from; i < d->nstrings; i++) zc_wbuf_put_str(b, d->strings[i]);
}

void zc_wbuf_put_regions(struct zc_wbuf *b, const struct zc_defs *d, uint32_t from) {
    for (uint32_t i = from; i < d->nregions; i++) {
        zc_wbuf_put(b, d->regions[i].name);
        zc_wbuf_put(b, d->regions[i].role);
        zc_wbuf_put(b, d->regions[i].paradigm);
    }
}

void zc_wbuf_put_devices(struct zc_wbuf *b, const struct zc_defs *d, uint32_t from) {
    for (uint32_t i = from; i < d->ndevices; i++) {
        zc_wbuf_put(b, d->devices[i].index);
        zc_wbuf_put(b, d->devices[i].name);
        zc_wbuf_put(b, d->devices[i].uuid);
    }
}

void zc_wbuf_put_groups(struct zc_wbuf *b, const struct zc_defs *d, uint32_t from) {
    for (uint32_t i = from; i < d->ngroups; i++) {
        zc_wbuf_put(b, d->groups[i].device);
        zc_wbuf_put(b, d->groups[i].context);
    }
}

void zc_wbuf_put_comms(struct zc_wbuf *b, const struct zc_defs *d, uint32_t from) {
    for (uint32_t i = from; i < d->ncomms; i++) {
        const struct zc_def_comm *c = &d->comms[i];
        zc_wbuf_put(b, c->kind);
        zc_wbuf_put(b, c->name);
        zc_wbuf_put(b, c->parent);
        zc_wbuf_put(b, c->n);
        zc_wbuf_put(b, c->nremote);
        for (uint32_t k = 0; k < c->n + c->nremote; k++) zc_wbuf_put(b, c->members[k]);
        zc_wbuf_put_str(b, c->key);
    }
}

void zc_wbuf_put_metrics(struct zc_wbuf *b, const struct zc_defs *d, uint32_t from) {
    for (uint32_t i = from; i < d->nmetrics; i++) {
        const struct zc_def_metric *m = &d->metrics[i];
        zc_wbuf_put(b, m->name);
        zc_wbuf_put(b, m->descr);
        zc_wbuf_put(b, m->unit);
        zc_wbuf_put(b, m->type);
        zc_wbuf_put(b, m->mode);
    }
}
