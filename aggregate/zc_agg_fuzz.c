/* SPDX-License-Identifier: MIT */
/* Fuzzing the reader path: an input is one file of an archive (its first byte says which), put in
 * place of that file in a copy of a small base archive; the definitions, every process's events,
 * the report and its JSON, text and HTML are then produced exactly as zecoll-aggregate does on
 * one reader. Errors are expected; crashes, hangs and sanitizer reports are defects.
 *   libFuzzer (clang -fsanitize=fuzzer): ZC_FUZZ_BASE=<archive> zc_agg_fuzz CORPUS...
 *   replay (any build):   zc_agg_fuzz_replay <archive> CORPUS_DIR_OR_FILE...
 * Selector byte: 0 anchor, 1 global definitions, 2 rank 0's thread events, 3 rank 1's first
 * stream events, 4 rank 0's thread local definitions (mod 5). */
#include "zc_agg.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const targets[] = {"traces.otf2", "traces.def", "traces/0.evt", "traces/9223372036854775809.evt",
                                      "traces/0.def"};
#define NTARGETS 5

static char base[PATH_MAX], work[PATH_MAX];

static int copy_file(const char *from, const char *to) {
    FILE *a = fopen(from, "rb"), *b = a ? fopen(to, "wb") : NULL;
    if (!a || !b) {
        if (a) fclose(a);
        return -1;
    }
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), a)) > 0) fwrite(buf, 1, n, b);
    fclose(a);
    return fclose(b);
}

/* a fresh copy of the base archive in work/ */
static int reset_work(void) {
    char p[PATH_MAX + 300], q[PATH_MAX + 300];
    snprintf(p, sizeof(p), "%s/traces", work);
    mkdir(work, 0777);
    mkdir(p, 0777);
    snprintf(p, sizeof(p), "%s/traces", base);
    DIR *dir = opendir(p);
    if (!dir) return -1;
    struct dirent *de;
    while ((de = readdir(dir))) {
        if (de->d_name[0] == '.') continue;
        snprintf(p, sizeof(p), "%s/traces/%s", base, de->d_name);
        snprintf(q, sizeof(q), "%s/traces/%s", work, de->d_name);
        copy_file(p, q);
    }
    closedir(dir);
    for (int i = 0; i < 2; i++) {
        snprintf(p, sizeof(p), "%s/%s", base, targets[i]);
        snprintf(q, sizeof(q), "%s/%s", work, targets[i]);
        copy_file(p, q);
    }
    return 0;
}

static int setup(const char *b) {
    if (work[0]) return 0;
    snprintf(base, sizeof(base), "%s", b);
    char tmpl[] = "/tmp/zc_agg_fuzz.XXXXXX";
    if (!mkdtemp(tmpl)) return -1;
    snprintf(work, sizeof(work), "%s/a", tmpl);
    return 0;
}

int zc_agg_fuzz_one(const uint8_t *data, size_t size);
int zc_agg_fuzz_one(const uint8_t *data, size_t size) {
    if (size < 1 || !work[0] || reset_work() != 0) return 0;
    char p[PATH_MAX + 64];
    snprintf(p, sizeof(p), "%s/%s", work, targets[data[0] % NTARGETS]);
    FILE *f = fopen(p, "wb");
    if (!f) return 0;
    fwrite(data + 1, 1, size - 1, f);
    fclose(f);

    struct agg_err e = {0};
    struct agg_defs d;
    if (agg_defs_probe(work, 2, &e) != 0) return 0; /* as zecoll-aggregate does before MPI_Init */
    if (agg_defs_read(&d, work, &e) != 0) return 0;
    struct agg_stats s;
    if (agg_stats_init(&s, d.nranks, 16, 3) == 0) {
        FILE *null = fopen("/dev/null", "w");
        struct agg_timeline_opts to = {0, UINT64_MAX, NULL};
        char tl_path[PATH_MAX + 16];
        snprintf(tl_path, sizeof(tl_path), "%s.tl", work);
        struct agg_timeline *tl = agg_timeline_open(tl_path, &d, &to);
        struct agg_read_opts ro = {.timeline = tl};
        bool ok = true;
        for (uint32_t q = 0; q < d.nprocs && ok; q++) ok = agg_read_process(&d, work, q, &s, &ro, &e) == 0;
        agg_timeline_close(tl);
        if (ok && null) {
            /* the partial statistics round-trip through the reduction format */
            size_t nw = 0;
            uint64_t *w = agg_stats_pack(&s, &nw);
            struct agg_stats m;
            if (w && agg_stats_init(&m, d.nranks, 16, 3) == 0) {
                if (agg_stats_merge_packed(&m, w, nw) == 0) {
                    struct agg_report_opts o = {.archive = work, .top = 5, .width = 100, .topk = 3, .sort = "total"};
                    struct agg_report *r = agg_report_build(&d, &m, &o);
                    if (r) {
                        agg_report_text(r, null);
                        agg_report_json(r, null);
                        agg_report_html(r, null);
                        agg_report_free(r);
                    }
                }
                agg_stats_free(&m);
            }
            free(w);
        }
        if (null) fclose(null);
        unlink(tl_path);
        agg_stats_free(&s);
    }
    agg_defs_free(&d);
    return 0;
}

#ifdef ZC_AGG_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
    const char *b = getenv("ZC_FUZZ_BASE");
    if (!b || setup(b) != 0) {
        fprintf(stderr, "zc_agg_fuzz: set ZC_FUZZ_BASE to a small archive (zecoll-synth --ranks 2 --queues 2 --ops 8)\n");
        exit(2);
    }
    return 0;
}
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return zc_agg_fuzz_one(data, size); }
#else
static int replay_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    for (size_t k; buf && (k = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += k;
        if (n == cap) {
            uint8_t *nb = realloc(buf, cap *= 2);
            if (!nb) break;
            buf = nb;
        }
    }
    fclose(f);
    if (!buf) return -1;
    zc_agg_fuzz_one(buf, n);
    free(buf);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 3 || setup(argv[1]) != 0) {
        fprintf(stderr, "usage: zc_agg_fuzz_replay BASE_ARCHIVE CORPUS_DIR_OR_FILE...\n");
        return 2;
    }
    unsigned n = 0;
    for (int i = 2; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "zc_agg_fuzz_replay: %s: %s\n", argv[i], strerror(errno));
            return 2;
        }
        if (!S_ISDIR(st.st_mode)) {
            n += replay_file(argv[i]) == 0;
            continue;
        }
        DIR *d = opendir(argv[i]);
        struct dirent *de;
        /* sorted, so a crash report names a reproducible order */
        char **names = NULL;
        size_t nn = 0;
        while (d && (de = readdir(d))) {
            if (de->d_name[0] == '.') continue;
            char **x = realloc(names, (nn + 1) * sizeof(*x));
            if (!x) break;
            names = x;
            names[nn++] = strdup(de->d_name);
        }
        if (d) closedir(d);
        for (size_t a = 0; a < nn; a++)
            for (size_t b = a + 1; b < nn; b++)
                if (strcmp(names[a], names[b]) > 0) {
                    char *t = names[a];
                    names[a] = names[b];
                    names[b] = t;
                }
        for (size_t k = 0; k < nn; k++) {
            char p[PATH_MAX + 256];
            snprintf(p, sizeof(p), "%s/%s", argv[i], names[k]);
            n += replay_file(p) == 0;
            free(names[k]);
        }
        free(names);
    }
    printf("zc_agg_fuzz_replay: %u inputs replayed, no crash\n", n);
    return 0;
}
#endif
