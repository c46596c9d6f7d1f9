/* SPDX-License-Identifier: MIT */
/* Archive notes (zc_note.c): what a layer tells the archive's readers about the run as a whole,
 * which no event or definition carries (the Level Zero spec versions, calls to entries passed
 * through untraced). A layer sets them before the writer closes the archive; at close the writer
 * gathers every rank's (zc_note_serialise), merges them (zc_note_merge) and writes each as an
 * archive property ZECOLL::<NAME> (docs/archive.md A21). Names are upper case, [A-Z0-9_]. */
#ifndef ZC_NOTE_H
#define ZC_NOTE_H

#include <stddef.h>
#include <stdint.h>

/* A text: the job's distinct values, in rank order, joined by ", ". */
void zc_note_text(const char *name, const char *value);
/* A count: summed over the job. key NULL: the property is the number; else the property lists
 * "key n" per key, the largest sum first (then by key), joined by ", ". */
void zc_note_count(const char *name, const char *key, uint64_t n);
/* This process's notes as text (malloc'd; NULL when out of memory, *len 0 when none): one line
 * per note, fields separated by tabs. */
char *zc_note_serialise(size_t *len);
/* Merges serialised notes (several ranks' concatenated) and gives each property's name (without
 * the ZECOLL:: prefix) and value, by name. 0, or -1 when out of memory (nothing given then). */
int zc_note_merge(const char *buf, size_t len, void (*emit)(const char *name, const char *value, void *arg), void *arg);

#endif
