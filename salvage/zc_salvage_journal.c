/* SPDX-License-Identifier: MIT */
/* Reading one rank's journal (format: zc_jrn_format.h, docs/archive.md "The salvage journal";
 * format 3, or 1 as older zecolls wrote it, whose EVENTS records differ):
 * the file is mapped, its records verified one by one (header, length, checksum) and applied;
 * reading stops at the first that fails, and the rank says where and why (its `damage`). */
#include "zc_salvage_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

void *zc_salv_calloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        fprintf(stderr, "%s: out of memory\n", zc_salv_prog);
        exit(1);
    }
    return p;
}

void zc_salv_grow(void *arr, size_t *cap, size_t n, size_t elem) {
    void **a = arr;
    if (n < *cap) return;
    size_t ncap = *cap ? 2 * *cap : 16;
    void *p = realloc(*a, ncap * elem);
    if (!p) {
        fprintf(stderr, "%s: out of memory\n", zc_salv_prog);
        exit(1);
    }
    *a = p;
    *cap = ncap;
}

/* The file mapped into j; false: not a journal at all (message printed). */
static bool map_journal(struct zc_salv_rank *j, const char *path) {
    struct stat st;
    int fd = zc_salv_open_regular(path, "a journal", &st);
    if (fd < 0) return false;
    j->locked = zc_salv_lock_held(fd);
    j->mtime = st.st_mtim;
    j->bytes_total = (uint64_t)st.st_size;
    if (st.st_size < (off_t)(8 + sizeof(struct zc_jrn_hdr))) {
        close(fd);
        fprintf(stderr, "%s: %s: not a zecoll journal (%lld bytes)\n", zc_salv_prog, path, (long long)st.st_size);
        return false;
    }
    j->map_len = (size_t)st.st_size;
    j->map = mmap(NULL, j->map_len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (j->map == MAP_FAILED) {
        j->map = NULL;
        fprintf(stderr, "%s: %s: %s\n", zc_salv_prog, path, strerror(errno));
        return false;
    }
    uint64_t magic = *(const uint64_t *)j->map;
    j->version = magic == ZC_JRN_FILE_MAGIC ? ZC_JRN_VERSION
                 : magic == ZC_JRN_FILE_MAGIC_3 ? 3
                 : magic == ZC_JRN_FILE_MAGIC_1 ? 1
                                                : 0;
    if (magic == ZC_JRN_FILE_MAGIC_2) {
        fprintf(stderr, "%s: %s: a journal of format 2 (a development build of zecoll's, withdrawn): not read\n",
                zc_salv_prog, path);
        return false;
    }
    if (!j->version) {
        fprintf(stderr, "%s: %s: not a zecoll journal (wrong magic; written on another architecture?)\n", zc_salv_prog,
                path);
        return false;
    }
    return true;
}

/* Applies the records after the magic up to the first that fails (j->damage says why). */
static void read_records(struct zc_salv_rank *j) {
    const uint64_t *w = j->map;
    size_t nw = j->map_len / 8, pos = 1;
    while (pos + 3 <= nw) {
        struct zc_jrn_hdr h;
        memcpy(&h, w + pos, sizeof(h));
        if (h.magic != ZC_JRN_REC_MAGIC || h.type == 0 || h.type > ZC_JRN_MAX_TYPE || h.nwords > ZC_JRN_MAX_WORDS) {
            snprintf(j->damage, sizeof(j->damage), "damaged record header at byte %zu", pos * 8);
            break;
        }
        if (h.nwords > nw - pos - 3) {
            snprintf(j->damage, sizeof(j->damage), "torn record at byte %zu (the process died writing it)", pos * 8);
            break;
        }
        uint64_t sum = j->version == 1 ? zc_jrn1_hash(h.type, h.nwords, w + pos + 3)
                                       : zc_jrn_hash(h.type, h.nwords, w + pos + 3); /* their formats' */
        if (sum != h.hash) {
            snprintf(j->damage, sizeof(j->damage), "record at byte %zu fails its checksum", pos * 8);
            break;
        }
        if (!zc_salv_apply(j, h.type, w + pos + 3, h.nwords)) {
            snprintf(j->damage, sizeof(j->damage), "record at byte %zu (type %u) does not make sense", pos * 8, h.type);
            break;
        }
        pos += 3 + (size_t)h.nwords;
    }
    if (!j->damage[0] && pos * 8 < j->map_len)
        snprintf(j->damage, sizeof(j->damage), "torn record at byte %zu (the process died writing it)", pos * 8);
    j->bytes_used = pos * 8;
}

bool zc_salv_read_journal(struct zc_salv_rank *j, const char *path) {
    j->path = path;
    j->flush_region = ZC_NO_ID;
    if (!map_journal(j, path)) return false;
    read_records(j);
    if (!j->have_job) {
        fprintf(stderr, "%s: %s: no readable job record (%s)\n", zc_salv_prog, path,
                j->damage[0] ? j->damage : "empty");
        return false;
    }
    for (uint32_t i = 0; i < j->defs.nregions; i++) {
        const struct zc_def_region *g = &j->defs.regions[i];
        if (g->paradigm == ZC_PARADIGM_MEASUREMENT && g->role == ZC_ROLE_ARTIFICIAL &&
            strcmp(j->defs.strings[g->name], "zecoll buffer flush") == 0)
            j->flush_region = i;
    }
    return true;
}

/* The paths that give up on bad input call it as well, so that a sanitizer's leak checker finds
 * nothing. */
void zc_salv_free_journals(struct zc_salv_rank *J, size_t n) {
    for (size_t i = 0; J && i < n; i++) {
        for (size_t k = 0; k < J[i].nlocs; k++) {
            for (size_t m = 0; m < J[i].locs[k].nsegs; m++) free(J[i].locs[k].segs[m].ev);
            free(J[i].locs[k].segs);
            free(J[i].locs[k].ev);
            free(J[i].locs[k].seals);
            zc_salv_free_prefix(&J[i].locs[k].pre);
        }
        free(J[i].locs);
        free(J[i].defs.strings);
        free(J[i].defs.regions);
        free(J[i].defs.devices);
        free(J[i].defs.groups);
        free(J[i].defs.comms);
        free(J[i].defs.metrics);
        free(J[i].win);
        if (J[i].map) munmap(J[i].map, J[i].map_len);
        free((void *)J[i].path);
    }
    free(J);
}
