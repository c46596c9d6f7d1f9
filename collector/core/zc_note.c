/* SPDX-License-Identifier: MIT */
/* Archive notes: a few texts and counts per process, kept until the archive closes; merged over
 * the job as text lines, since they are few, set once at finalize, and read once. */
#include "zc_note.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct note {
    char kind; /* 'T' text (key = the value), 'C' count */
    char name[48];
    char key[160];
    uint64_t n;
    uint32_t seq; /* the order it came in */
};

#define ZC_NOTES 64
static struct note notes[ZC_NOTES];
static size_t nnotes;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* a field of a line: no tab or newline in it */
static void field(char *dst, size_t cap, const char *src) {
    snprintf(dst, cap, "%s", src ? src : "");
    for (char *p = dst; *p; p++)
        if (*p == '\t' || *p == '\n') *p = ' ';
}

/* The note of (kind, name, key) in a table, added when absent (NULL when full). */
static struct note *find(struct note *t, size_t *nt, size_t cap, char kind, const char *name, const char *key) {
    for (size_t i = 0; i < *nt; i++)
        if (t[i].kind == kind && strcmp(t[i].name, name) == 0 && strcmp(t[i].key, key) == 0) return &t[i];
    if (*nt == cap) return NULL;
    struct note *x = &t[(*nt)++];
    *x = (struct note){.kind = kind, .seq = (uint32_t)(*nt - 1)};
    field(x->name, sizeof(x->name), name);
    field(x->key, sizeof(x->key), key);
    return x;
}

static void put(char kind, const char *name, const char *key, uint64_t n) {
    char nm[sizeof(notes[0].name)], k[sizeof(notes[0].key)];
    field(nm, sizeof(nm), name);
    field(k, sizeof(k), key);
    pthread_mutex_lock(&lock);
    struct note *x = find(notes, &nnotes, ZC_NOTES, kind, nm, k);
    if (x) x->n += n;
    pthread_mutex_unlock(&lock);
}

void zc_note_text(const char *name, const char *value) { put('T', name, value, 0); }
void zc_note_count(const char *name, const char *key, uint64_t n) { put('C', name, key, n); }

char *zc_note_serialise(size_t *len) {
    pthread_mutex_lock(&lock);
    size_t cap = nnotes * (sizeof(struct note) + 32) + 1, n = 0;
    char *b = malloc(cap);
    for (size_t i = 0; b && i < nnotes; i++) {
        const struct note *x = &notes[i];
        n += (size_t)snprintf(b + n, cap - n, "%c\t%s\t%s\t%llu\n", x->kind, x->name, x->key, (unsigned long long)x->n);
    }
    pthread_mutex_unlock(&lock);
    *len = b ? n : 0;
    return b;
}

/* by name; a name's counts by sum (largest first), then key; its texts as they came (rank order) */
static int order(const void *a, const void *b) {
    const struct note *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c || x->kind != 'C' || y->kind != 'C') return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
    if (x->n != y->n) return x->n > y->n ? -1 : 1;
    return strcmp(x->key, y->key);
}

int zc_note_merge(const char *buf, size_t len, void (*emit)(const char *name, const char *value, void *arg), void *arg) {
    size_t cap = 256, nt = 0;
    struct note *t = malloc(cap * sizeof(*t));
    if (!t) return -1;
    for (size_t at = 0; at < len;) {
        const char *nl = memchr(buf + at, '\n', len - at);
        size_t ll = nl ? (size_t)(nl - (buf + at)) : len - at;
        char line[sizeof(struct note) + 32], name[sizeof(t->name)], key[sizeof(t->key)], kind;
        unsigned long long n;
        snprintf(line, sizeof(line), "%.*s", (int)ll, buf + at);
        at += ll + 1;
        /* kind, name, key (may be empty), count */
        char *f1 = strchr(line, '\t'), *f2 = f1 ? strchr(f1 + 1, '\t') : NULL, *f3 = f2 ? strchr(f2 + 1, '\t') : NULL;
        if (!f3 || sscanf(f3 + 1, "%llu", &n) != 1) continue;
        *f1 = *f2 = *f3 = 0;
        kind = line[0];
        snprintf(name, sizeof(name), "%s", f1 + 1);
        snprintf(key, sizeof(key), "%s", f2 + 1);
        /* the same text a second time is one value; the same count's key is summed */
        struct note *x = (kind == 'T' || kind == 'C') ? find(t, &nt, cap, kind, name, key) : NULL;
        if (x) x->n += n;
    }
    qsort(t, nt, sizeof(*t), order);
    for (size_t i = 0; i < nt;) {
        size_t j = i;
        char value[1024];
        size_t k = 0;
        value[0] = 0;
        bool cut = false;
        for (; j < nt && strcmp(t[j].name, t[i].name) == 0; j++) {
            char item[sizeof(t->key) + 24];
            if (t[j].kind == 'C' && !t[j].key[0]) snprintf(item, sizeof(item), "%llu", (unsigned long long)t[j].n);
            else if (t[j].kind == 'C') snprintf(item, sizeof(item), "%s %llu", t[j].key, (unsigned long long)t[j].n);
            else snprintf(item, sizeof(item), "%s", t[j].key);
            /* too long: the rest is "..." (the largest counts came first) */
            if (cut || k + strlen(item) + 8 > sizeof(value)) {
                if (!cut) k += (size_t)snprintf(value + k, sizeof(value) - k, ", ...");
                cut = true;
                continue;
            }
            k += (size_t)snprintf(value + k, sizeof(value) - k, "%s%s", k ? ", " : "", item);
        }
        emit(t[i].name, value, arg);
        i = j;
    }
    free(t);
    return 0;
}
