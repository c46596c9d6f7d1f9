/* SPDX-License-Identifier: MIT */
/* zecoll-aggregate: `zecoll-aggregate ARCHIVE [options]`, alone or as `mpirun -np K
 * zecoll-aggregate ARCHIVE`. Every rank reads the global definitions; rank 0 assigns the
 * processes of the archive to the K readers by event-file size (largest first, to the least
 * loaded reader: deterministic); each reader decodes its processes, one at a time; the partial
 * statistics are gathered to rank 0 and merged (exact integers: any K, any order, the same
 * result); rank 0 writes the report. Bad input: one message naming the file, exit code 2. */
#include "zc_agg.h"

#include <errno.h>
#include <mpi.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int me, nproc;

static void usage(FILE *f) {
    fputs("usage: zecoll-aggregate ARCHIVE [options]          (or: mpirun -np K zecoll-aggregate ARCHIVE ...)\n"
          "       zecoll-aggregate --diff A.json B.json [--threshold PCT] [--min-share PCT]\n"
          "Reads a zecoll OTF2 archive (its directory or traces.otf2) and reports job-wide kernel, transfer, device,\n"
          "launch-latency, MPI and host API statistics, PAPI counters per region and rank (when recorded), with a\n"
          "data-quality section.\n"
          "  -o, --output DIR       write DIR/report.txt, report.json, report.html and DIR/csv/*.csv\n"
          "      --text FILE        the text report to FILE (default: standard output)\n"
          "      --json FILE        JSON report (docs/report-schema.md)\n"
          "      --html FILE        self-contained HTML report (inline SVG, no network)\n"
          "      --csv DIR          one CSV file per table\n"
          "  -q, --quiet            no text report on standard output\n"
          "      --top N            rows per text table (default 10)\n"
          "      --sort KEY         kernels by total (default), calls, mean, max, imbalance or name\n"
          "      --width N          text width (default: the terminal's, else 120)\n"
          "      --slowest K        slowest instances kept per kernel (default 5, at most 16)\n"
          "      --bins N           time bins of the rank x time utilisation map (default 100)\n"
          "      --timeline FILE    Chrome trace-event JSON of the trace for ui.perfetto.dev\n"
          "      --timeline-range A:B   only [A, B] since the job's start (ns, or with s/ms/us suffix)\n"
          "      --timeline-ranks LIST  only these ranks (e.g. 0,2-5)\n"
          "      --progress, --no-progress   progress on standard error (default: when it is a terminal)\n"
          "      --stats            reader throughput and peak memory per rank on standard error\n"
          "  -h, --help\n"
          "Exit status: 0 done; 2 bad input or output (one message names the file); --diff: 1 = regression.\n"
          "ZECOLL_AGGREGATE_STALL_S (default 60): seconds without progress after which reading the anchor or the\n"
          "global definitions is given up (OTF2 can loop on corrupt ones).\n",
          f);
}

struct opts {
    const char *archive, *output, *text, *json, *html, *csv, *timeline, *tl_range, *tl_ranks, *sort;
    uint32_t top, width, slowest, bins;
    int progress; /* -1 auto */
    bool quiet, stats;
};

/* one message, from rank 0 */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...) {
    if (me != 0) return;
    va_list va;
    va_start(va, fmt);
    fputs("zecoll-aggregate: ", stderr);
    vfprintf(stderr, fmt, va);
    fputc('\n', stderr);
    va_end(va);
}

static int parse_u32(const char *s, uint32_t *v, uint32_t lo, uint32_t hi) {
    char *e;
    errno = 0;
    unsigned long x = strtoul(s, &e, 10);
    if (errno || e == s || *e || x < lo || x > hi) return -1;
    *v = (uint32_t)x;
    return 0;
}

/* "1.5s", "200ms", "10us", "123" (ns) */
static int parse_time(const char *s, uint64_t *v) {
    char *e;
    errno = 0;
    double x = strtod(s, &e);
    if (errno || e == s || x < 0) return -1;
    double m = 1;
    if (!strcmp(e, "s")) m = 1e9;
    else if (!strcmp(e, "ms")) m = 1e6;
    else if (!strcmp(e, "us")) m = 1e3;
    else if (*e && strcmp(e, "ns")) return -1;
    *v = (uint64_t)(x * m + 0.5);
    return 0;
}

/* options with a value: a string, or a number in [lo, hi] */
static const struct {
    const char *name, *alias;
    size_t off;
} str_opts[] = {
    {"--output", "-o", offsetof(struct opts, output)},
    {"--text", NULL, offsetof(struct opts, text)},
    {"--json", NULL, offsetof(struct opts, json)},
    {"--html", NULL, offsetof(struct opts, html)},
    {"--csv", NULL, offsetof(struct opts, csv)},
    {"--timeline", NULL, offsetof(struct opts, timeline)},
    {"--timeline-range", NULL, offsetof(struct opts, tl_range)},
    {"--timeline-ranks", NULL, offsetof(struct opts, tl_ranks)},
};
static const struct {
    const char *name;
    size_t off;
    uint32_t lo, hi;
} num_opts[] = {
    {"--top", offsetof(struct opts, top), 1, 100000},
    {"--width", offsetof(struct opts, width), 40, 100000},
    {"--slowest", offsetof(struct opts, slowest), 0, AGG_TOPK_MAX},
    {"--bins", offsetof(struct opts, bins), 1, 10000},
};
static const char *const sort_keys[] = {"total", "calls", "mean", "max", "imbalance", "name"};

/* An option that takes a value: 1 taken (argv[*i] moved past the value), 0 not such an option,
 * -1 bad (said). */
static int value_option(int argc, char **argv, int *i, struct opts *o) {
    const char *a = argv[*i], *next = *i + 1 < argc ? argv[*i + 1] : NULL;
    int str = -1, num = -1;
    for (size_t k = 0; k < sizeof(str_opts) / sizeof(*str_opts); k++)
        if (!strcmp(a, str_opts[k].name) || (str_opts[k].alias && !strcmp(a, str_opts[k].alias))) str = (int)k;
    for (size_t k = 0; k < sizeof(num_opts) / sizeof(*num_opts); k++)
        if (!strcmp(a, num_opts[k].name)) num = (int)k;
    if (str < 0 && num < 0 && strcmp(a, "--sort")) return 0;
    if (!next) {
        say("option %s needs a value", a);
        return -1;
    }
    (*i)++;
    if (str >= 0) {
        memcpy((char *)o + str_opts[str].off, &next, sizeof(next));
        return 1;
    }
    if (num >= 0) {
        uint32_t v, lo = num_opts[num].lo, hi = num_opts[num].hi;
        if (parse_u32(next, &v, lo, hi) != 0) {
            say("%s: '%s' is not a number in [%u, %u]", a, next, lo, hi);
            return -1;
        }
        memcpy((char *)o + num_opts[num].off, &v, sizeof(v));
        return 1;
    }
    for (size_t k = 0; k < sizeof(sort_keys) / sizeof(*sort_keys); k++)
        if (!strcmp(next, sort_keys[k])) {
            o->sort = next;
            return 1;
        }
    say("--sort: unknown key '%s' (total, calls, mean, max, imbalance, name)", next);
    return -1;
}

/* 0 parsed, 1 --help (printed), -1 bad (said) */
static int parse_args(int argc, char **argv, struct opts *o) {
    memset(o, 0, sizeof(*o));
    o->top = 10;
    o->slowest = 5;
    o->bins = 100;
    o->progress = -1;
    o->sort = "total";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int v = value_option(argc, argv, &i, o);
        if (v < 0) return -1;
        if (v > 0) continue;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            if (me == 0) usage(stdout);
            return 1;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) o->quiet = true;
        else if (!strcmp(a, "--progress")) o->progress = 1;
        else if (!strcmp(a, "--no-progress")) o->progress = 0;
        else if (!strcmp(a, "--stats")) o->stats = true;
        else if (a[0] == '-' && a[1]) {
            say("unknown option '%s' (--help lists them)", a);
            return -1;
        } else if (!o->archive) o->archive = a;
        else {
            say("more than one archive given ('%s', '%s')", o->archive, a);
            return -1;
        }
    }
    if (!o->archive) {
        if (me == 0) usage(stderr);
        return -1;
    }
    return 0;
}

/* Every rank's first error; rank 0 prints the one of the lowest rank. Returns non-zero on all
 * ranks if any failed. */
static int agree(struct agg_err *e) {
    int mine = e->code, any = 0;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!any) return 0;
    size_t sz = sizeof(*e);
    char *all = me == 0 ? malloc(sz * (size_t)nproc) : NULL;
    MPI_Gather(e, (int)sz, MPI_BYTE, all, (int)sz, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (me == 0) {
        for (int r = 0; all && r < nproc; r++) {
            struct agg_err *x = (struct agg_err *)(all + sz * (size_t)r);
            if (!x->code) continue;
            x->file[sizeof(x->file) - 1] = 0;
            x->msg[sizeof(x->msg) - 1] = 0;
            if (x->file[0]) fprintf(stderr, "zecoll-aggregate: %s: %s\n", x->file, x->msg);
            else fprintf(stderr, "zecoll-aggregate: %s\n", x->msg);
            break;
        }
        free(all);
    }
    return any;
}

/* ---------------------------------------------------------------- progress */
struct prog {
    bool on;
    double t0, last;
    uint64_t done, mine, job;
    uint32_t procs_done, procs_mine, locs_done, locs_mine;
};

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void prog_show(struct prog *p, uint64_t in_proc, bool final) {
    if (!p->on) return;
    double t = now_s();
    if (!final && t - p->last < 0.2) return;
    p->last = t;
    uint64_t done = p->done + in_proc;
    double rate = t > p->t0 ? (double)done / (t - p->t0) : 0, eta = rate > 0 ? (double)(p->mine - done) / rate : 0;
    fprintf(stderr, "\rzecoll-aggregate: reader 0 of %d: %u/%u ranks (%u/%u locations), %.1f/%.1f MiB (job %.1f MiB), "
                    "%.1f MiB/s, ETA %.0f s   ",
            nproc, p->procs_done, p->procs_mine, p->locs_done, p->locs_mine, (double)done / 1048576.0, (double)p->mine / 1048576.0,
            (double)p->job / 1048576.0, rate / 1048576.0, final ? 0.0 : eta);
    if (final) fputc('\n', stderr);
}

static void on_progress(void *ud, uint64_t in_proc) { prog_show(ud, in_proc, false); }

/* ---------------------------------------------------------------- partition */
struct pw {
    uint64_t bytes;
    uint32_t proc;
};

static int cmp_pw(const void *a, const void *b) {
    const struct pw *x = a, *y = b;
    if (x->bytes != y->bytes) return x->bytes > y->bytes ? -1 : 1;
    return (x->proc > y->proc) - (x->proc < y->proc);
}

/* Largest process first, each to the reader with the fewest bytes so far (lowest index on ties). */
static void partition(const struct agg_defs *d, int k, uint32_t *owner) {
    struct pw *v = calloc(d->nprocs + 1, sizeof(*v));
    uint64_t *load = calloc((size_t)k, sizeof(uint64_t));
    if (!v || !load) {
        for (uint32_t p = 0; p < d->nprocs; p++) owner[p] = p % (uint32_t)k;
        free(v);
        free(load);
        return;
    }
    for (uint32_t p = 0; p < d->nprocs; p++) v[p] = (struct pw){d->procs[p].bytes, p};
    qsort(v, d->nprocs, sizeof(*v), cmp_pw);
    for (uint32_t i = 0; i < d->nprocs; i++) {
        int best = 0;
        for (int r = 1; r < k; r++)
            if (load[r] < load[best]) best = r;
        owner[v[i].proc] = (uint32_t)best;
        load[best] += v[i].bytes + 1;
    }
    free(v);
    free(load);
}

/* ---------------------------------------------------------------- outputs */
static int write_file(const char *path, struct agg_report *r, int (*fn)(const struct agg_report *, FILE *), struct agg_err *e) {
    FILE *f = fopen(path, "w");
    if (!f) {
        agg_err_set(e, path, "cannot write (%s)", strerror(errno));
        return -1;
    }
    int rc = fn(r, f);
    if (fclose(f) != 0 || rc != 0) {
        agg_err_set(e, path, "cannot write (%s)", strerror(errno ? errno : EIO));
        return -1;
    }
    return 0;
}

static uint32_t term_width(void) {
    struct winsize ws;
    if (isatty(1) && ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40) return ws.ws_col;
    return 120;
}

static int outputs(const struct opts *o, const struct agg_defs *d, const struct agg_stats *s, struct agg_err *e) {
    struct agg_report_opts ro = {.archive = o->archive, .top = o->top, .width = o->width ? o->width : term_width(),
                                 .topk = o->slowest, .sort = o->sort};
    struct agg_report *r = agg_report_build(d, s, &ro);
    if (!r) {
        agg_err_set(e, NULL, "out of memory building the report");
        return -1;
    }
    char path[PATH_MAX + 32];
    int rc = 0;
    if (o->output) {
        if (mkdir(o->output, 0777) != 0 && errno != EEXIST) {
            agg_err_set(e, o->output, "cannot create the output directory (%s)", strerror(errno));
            rc = -1;
        }
        snprintf(path, sizeof(path), "%s/report.txt", o->output);
        if (!rc) rc = write_file(path, r, agg_report_text, e);
        snprintf(path, sizeof(path), "%s/report.json", o->output);
        if (!rc) rc = write_file(path, r, agg_report_json, e);
        snprintf(path, sizeof(path), "%s/report.html", o->output);
        if (!rc) rc = write_file(path, r, agg_report_html, e);
        snprintf(path, sizeof(path), "%s/csv", o->output);
        if (!rc) rc = agg_report_csv(r, path, e);
    }
    if (!rc && o->text) rc = write_file(o->text, r, agg_report_text, e);
    if (!rc && o->json) rc = write_file(o->json, r, agg_report_json, e);
    if (!rc && o->html) rc = write_file(o->html, r, agg_report_html, e);
    if (!rc && o->csv) rc = agg_report_csv(r, o->csv, e);
    if (!rc && !o->quiet) {
        agg_report_text(r, stdout);
        fflush(stdout);
    }
    agg_report_free(r);
    return rc;
}

static double cpu_s(void) {
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
           (double)ru.ru_stime.tv_usec * 1e-6;
}

static long peak_rss_kib(void) {
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : 0;
}

/* ---------------------------------------------------------------- --diff */
/* A comparison of two JSON reports: no archive, no MPI. */
static int diff_main(int argc, char **argv) {
    const char *a = NULL, *b = NULL;
    struct agg_diff_opts d = {0.10, 0.01};
    for (int j = 1; j < argc; j++) {
        if (!strcmp(argv[j], "--diff")) continue;
        if ((!strcmp(argv[j], "--threshold") || !strcmp(argv[j], "--min-share")) && j + 1 < argc) {
            char *e;
            double v = strtod(argv[j + 1], &e);
            if (*e || v < 0) {
                fprintf(stderr, "zecoll-aggregate: %s: '%s' is not a percentage\n", argv[j], argv[j + 1]);
                return 2;
            }
            if (!strcmp(argv[j], "--threshold")) d.threshold = v / 100.0;
            else d.min_share = v / 100.0;
            j++;
        } else if (argv[j][0] == '-') {
            fprintf(stderr, "zecoll-aggregate: --diff: unknown option '%s'\n", argv[j]);
            return 2;
        } else if (!a) a = argv[j];
        else if (!b) b = argv[j];
        else {
            fprintf(stderr, "zecoll-aggregate: --diff takes two reports\n");
            return 2;
        }
    }
    if (!a || !b) {
        fprintf(stderr, "zecoll-aggregate: --diff needs two JSON reports (A.json B.json)\n");
        return 2;
    }
    return agg_diff(a, b, &d, stdout);
}

/* ---------------------------------------------------------------- the run */
/* What one reader rank holds from the definitions to the report. */
struct run {
    struct opts o;
    struct agg_timeline_opts tlo;
    struct agg_err err;
    struct agg_defs d;
    struct agg_stats s;
    uint32_t *owner;            /* reader of each process */
    struct agg_timeline *tl;    /* this reader's part of the timeline */
    char part[PATH_MAX + 32];
    uint64_t *tri;              /* timeline ranges: (reader, offset, length) per process */
    uint64_t my_events;
    double t_start, t_read, c_read;
};

/* --timeline-range FROM:TO, either side may be empty */
static int parse_range(const char *range, struct agg_timeline_opts *tlo) {
    char buf[128];
    snprintf(buf, sizeof(buf), "%s", range);
    char *colon = strchr(buf, ':');
    if (colon) *colon = 0;
    if (!colon || (buf[0] && parse_time(buf, &tlo->from) != 0) || (colon[1] && parse_time(colon + 1, &tlo->to) != 0) ||
        tlo->to < tlo->from)
        return -1;
    return 0;
}

/* The partition (rank 0's view of the files, for everyone), the statistics, the timeline part. */
static void setup(struct run *u) {
    u->owner = calloc(u->d.nprocs + 1, sizeof(uint32_t));
    if (!u->owner) {
        agg_err_set(&u->err, NULL, "out of memory");
    } else {
        if (me == 0) partition(&u->d, nproc, u->owner);
        MPI_Bcast(u->owner, (int)u->d.nprocs, MPI_UINT32_T, 0, MPI_COMM_WORLD);
    }
    if (agg_stats_init(&u->s, u->d.nranks, u->o.bins, u->o.slowest) != 0) agg_err_set(&u->err, NULL, "out of memory");
    if (u->o.timeline && !u->err.code) {
        snprintf(u->part, sizeof(u->part), "%s.part%d", u->o.timeline, me);
        u->tl = agg_timeline_open(u->part, &u->d, &u->tlo);
        if (!u->tl)
            agg_err_set(&u->err, u->part, u->o.tl_ranks ? "cannot write the timeline part (or bad --timeline-ranks)"
                                                        : "cannot write the timeline part");
    }
}

/* This reader's processes, one at a time, with progress on rank 0. */
static void read_mine(struct run *u) {
    const struct agg_defs *d = &u->d;
    struct prog pg = {.on = me == 0 && (u->o.progress == 1 || (u->o.progress == -1 && isatty(2))), .t0 = now_s()};
    for (uint32_t p = 0; u->owner && p < d->nprocs; p++) {
        pg.job += d->procs[p].bytes;
        if (u->owner[p] == (uint32_t)me) pg.mine += d->procs[p].bytes, pg.procs_mine++, pg.locs_mine += d->procs[p].nlocs;
    }
    struct agg_read_opts ro = {.timeline = u->tl, .progress = pg.on ? on_progress : NULL, .progress_ud = &pg};
    double t_read0 = now_s(), c_read0 = cpu_s();
    for (uint32_t p = 0; u->owner && p < d->nprocs && !u->err.code; p++) {
        if (u->owner[p] != (uint32_t)me) continue;
        if (agg_read_process(d, u->o.archive, p, &u->s, &ro, &u->err) != 0) break;
        u->my_events += u->s.ranks[d->procs[p].rank].events;
        pg.done += d->procs[p].bytes;
        pg.procs_done++;
        pg.locs_done += d->procs[p].nlocs;
        prog_show(&pg, 0, false);
    }
    prog_show(&pg, 0, true);
    u->t_read = now_s() - t_read0;
    u->c_read = cpu_s() - c_read0;
}

/* The timeline ranges of this reader's processes: (reader, offset, length), UINT64_MAX
 * elsewhere, so that a MIN reduction gathers them on rank 0. */
static void timeline_ranges(struct run *u) {
    if (u->o.timeline) {
        u->tri = malloc((3 * (size_t)u->d.nprocs + 3) * sizeof(uint64_t));
        if (!u->tri) agg_err_set(&u->err, NULL, "out of memory");
        else memset(u->tri, 0xff, (3 * (size_t)u->d.nprocs + 3) * sizeof(uint64_t));
    }
    if (!u->tl) return;
    const uint32_t *pp;
    const uint64_t *po, *pl;
    uint32_t n = agg_timeline_ranges(u->tl, &pp, &po, &pl);
    for (uint32_t i = 0; u->tri && i < n; i++) {
        u->tri[3 * pp[i]] = (uint64_t)me;
        u->tri[3 * pp[i] + 1] = po[i];
        u->tri[3 * pp[i] + 2] = pl[i];
    }
    if (agg_timeline_close(u->tl) != 0) agg_err_set(&u->err, u->part, "cannot write the timeline part");
}

/* Packed partial statistics gathered to rank 0, which merges the others into its own one at a
 * time (memory: one partial). Non-zero on every rank when one failed. */
static int reduce(struct run *u) {
    size_t nw = 0;
    uint64_t *mine = agg_stats_pack(&u->s, &nw);
    if (!mine) agg_err_set(&u->err, NULL, "out of memory packing the statistics");
    int bad = agree(&u->err);
    if (bad) {
        free(mine);
        return bad;
    }
    long long cnt = (long long)nw;
    long long *cnts = me == 0 ? calloc((size_t)nproc, sizeof(long long)) : NULL;
    MPI_Gather(&cnt, 1, MPI_LONG_LONG, cnts, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    if (me == 0) {
        for (int r = 1; r < nproc; r++) {
            uint64_t *buf = malloc((size_t)cnts[r] * sizeof(uint64_t) + 8);
            if (!buf) {
                agg_err_set(&u->err, NULL, "out of memory receiving partial statistics");
                MPI_Recv(NULL, 0, MPI_UINT64_T, r, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                continue;
            }
            MPI_Recv(buf, (int)cnts[r], MPI_UINT64_T, r, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (!u->err.code && agg_stats_merge_packed(&u->s, buf, (size_t)cnts[r]) != 0)
                agg_err_set(&u->err, NULL, "partial statistics of reader %d do not merge (out of memory?)", r);
            free(buf);
        }
    } else {
        MPI_Send(mine, (int)nw, MPI_UINT64_T, 0, 7, MPI_COMM_WORLD);
    }
    free(cnts);
    free(mine);
    return agree(&u->err);
}

/* rank 0: the timeline from the readers' parts */
static void assemble_parts(struct run *u, const uint64_t *all) {
    const struct agg_defs *d = &u->d;
    const char **parts = calloc((size_t)nproc, sizeof(char *));
    uint64_t *part_of = calloc(d->nprocs + 1, sizeof(uint64_t)), *off = calloc(d->nprocs + 1, sizeof(uint64_t)),
             *len = calloc(d->nprocs + 1, sizeof(uint64_t));
    char (*names)[PATH_MAX + 32] = calloc((size_t)nproc, sizeof(*names));
    if (all && parts && part_of && off && len && names) {
        for (int r = 0; r < nproc; r++) {
            snprintf(names[r], sizeof(names[r]), "%s.part%d", u->o.timeline, r);
            parts[r] = names[r];
        }
        for (uint32_t p = 0; p < d->nprocs; p++) {
            part_of[p] = all[3 * p];
            off[p] = all[3 * p + 1];
            len[p] = all[3 * p + 2] == UINT64_MAX ? 0 : all[3 * p + 2];
        }
        agg_timeline_assemble(u->o.timeline, d, parts, part_of, off, len, d->nprocs, &u->tlo, &u->err);
    } else {
        agg_err_set(&u->err, u->o.timeline, "out of memory");
    }
    free(parts), free(part_of), free(off), free(len), free(names);
}

/* The ranges gathered on rank 0, which writes the timeline; every part goes once it is read. */
static int assemble_timeline(struct run *u) {
    uint64_t *all = me == 0 ? malloc((3 * (size_t)u->d.nprocs + 3) * sizeof(uint64_t)) : NULL;
    MPI_Reduce(u->tri, all, 3 * (int)u->d.nprocs, MPI_UINT64_T, MPI_MIN, 0, MPI_COMM_WORLD);
    if (me == 0) assemble_parts(u, all);
    free(all);
    MPI_Barrier(MPI_COMM_WORLD); /* the parts are read before they go */
    unlink(u->part);
    return agree(&u->err);
}

/* --stats: every reader's throughput and peak memory, printed by rank 0 */
static void print_stats(const struct run *u) {
    double st[4] = {(double)u->my_events, u->t_read, (double)peak_rss_kib(), u->c_read};
    double *all = me == 0 ? calloc(4 * (size_t)nproc, sizeof(double)) : NULL;
    MPI_Gather(st, 4, MPI_DOUBLE, all, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (me == 0 && all) {
        for (int r = 0; r < nproc; r++)
            fprintf(stderr,
                    "zecoll-aggregate: stats: reader %d: %.0f events in %.3f s, %.3f s CPU (%.0f events/s, %.0f per CPU "
                    "second), peak RSS %.0f KiB\n",
                    r, all[4 * r], all[4 * r + 1], all[4 * r + 3], all[4 * r + 1] > 0 ? all[4 * r] / all[4 * r + 1] : 0.0,
                    all[4 * r + 3] > 0 ? all[4 * r] / all[4 * r + 3] : 0.0, all[4 * r + 2]);
        fprintf(stderr, "zecoll-aggregate: stats: total %.3f s with %d reader(s)\n", now_s() - u->t_start, nproc);
    }
    free(all);
}

/* Before MPI_Init (it forks): the anchor and global definitions read once in a child, which
 * turns OTF2's hangs and crashes on corrupt ones into an error naming the file. */
static struct agg_err probe(int argc, char **argv) {
    struct opts o;
    struct agg_err e = {0};
    me = -1; /* quiet: the options are parsed (and reported) again after MPI_Init */
    if (parse_args(argc, argv, &o) == 0) {
        const char *s = getenv("ZECOLL_AGGREGATE_STALL_S");
        int stall = s && atoi(s) > 0 ? atoi(s) : 60;
        agg_defs_probe(o.archive, stall, &e);
    }
    return e;
}

/* Every step agrees on failure before the next collective one: all ranks leave together. */
static int run(struct run *u) {
    u->t_start = now_s();
    bool have_defs = !u->err.code && agg_defs_read(&u->d, u->o.archive, &u->err) == 0;
    if (agree(&u->err)) {
        if (have_defs) agg_defs_free(&u->d);
        return 2;
    }
    setup(u);
    read_mine(u);
    timeline_ranges(u);
    int bad = agree(&u->err);
    if (!bad) bad = reduce(u);
    if (!bad && u->o.timeline) bad = assemble_timeline(u);
    else if (u->part[0]) unlink(u->part);
    free(u->tri);
    if (u->o.stats) print_stats(u);
    if (!bad && me == 0) outputs(&u->o, &u->d, &u->s, &u->err);
    if (!bad) bad = agree(&u->err);
    agg_stats_free(&u->s);
    agg_defs_free(&u->d);
    free(u->owner);
    return bad ? 2 : 0;
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--diff")) return diff_main(argc, argv);
    static struct run u; /* zeroed; large (paths, errors) */
    u.err = probe(argc, argv);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &nproc);
    int parsed = parse_args(argc, argv, &u.o), rc = parsed > 0 ? 0 : 2; /* --help: 0 */
    if (parsed == 0) {
        u.tlo = (struct agg_timeline_opts){0, UINT64_MAX, u.o.tl_ranks};
        if (u.o.tl_range && parse_range(u.o.tl_range, &u.tlo) != 0)
            say("--timeline-range: '%s' is not FROM:TO (ns, or with s/ms/us suffix)", u.o.tl_range);
        else rc = run(&u);
    }
    MPI_Finalize();
    return rc;
}
