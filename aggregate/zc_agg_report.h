/* SPDX-License-Identifier: MIT */
/* The report model: sorted rows built once from the merged statistics, with every derived
 * floating-point number computed here and nowhere else. The report is a table of sections
 * (zc_agg_report.c): each section builds its rows and prints them in text, CSV, JSON and HTML,
 * all in its own file (zc_agg_sec_*.c); the format writers walk the table. */
#ifndef ZC_AGG_REPORT_H
#define ZC_AGG_REPORT_H

#include "zc_agg.h"

#include <stddef.h>
#include <string.h>

struct r_kernel {
    uint32_t region;
    const char *name;
    uint64_t calls, total, min, max, p50, p90, p99;
    double mean, sd, share;
    /* imbalance over all ranks (a rank that did not run it counts 0) */
    uint32_t ranks_running, max_rank;
    uint64_t rank_max;
    double rank_mean, rank_cv, max_over_mean;
    const char *max_host, *max_device;
    const struct agg_top *top;
};

struct r_rowk {          /* per rank / device / queue rows of a kernel */
    uint32_t region, rank;
    uint32_t node, loc;  /* device node; queue location (AGG_NONE if n/a) */
    uint64_t calls, total, min, max;
    double mean;
};

struct r_xfer {
    uint32_t xfer, cls;  /* cls: size class (T_XFER_SIZE rows) */
    char mem[4];
    const char *kind, *dir;
    uint64_t calls, bytes, busy, min, max, p50_bw, lo, hi;
    double mean, bw;
    uint32_t rank;       /* per-rank rows */
};

struct r_simple {        /* barriers, Level Zero API, MPI functions */
    uint32_t region;
    const char *name;
    uint64_t calls, total, min, max, bytes;
    double mean, share;
};

struct r_util {
    uint32_t rank, node;
    uint64_t busy, compute, copy, overlap, off, window, denom;
    double util, util_compute, util_copy, overlap_share;
};

struct r_gap {
    uint32_t cls;
    uint64_t lo, hi, count, total;
};

struct r_lat {
    uint32_t region, loc, rank;
    const char *name;
    uint64_t n, min, max, p50, p90, p99;
    double mean;
};

struct r_coll {
    uint32_t region, comm, comm_size;
    const char *name;
    char comm_name[96];
    uint64_t calls, total, bytes;
    double mean;
};

struct r_mpirank {
    uint32_t rank;
    uint64_t mpi_ns, wall, kernel_ns;
    uint64_t off, denom; /* host measurement off (agg_rank.host_off_ns); denom = wall - off */
    double share;        /* mpi_ns / denom */
};

struct r_strag {
    uint32_t rank;
    uint64_t top_ns, mpi_ns;
    double ratio;
};

/* A21: a Level Zero entry zecoll passed through untraced, and the job's calls to it */
struct r_untraced {
    char name[128];
    uint64_t calls;
    bool uncounted; /* handed out by name, calls not counted (ZECOLL::L0_UNTRACED_UNCOUNTED): after the counted */
};

struct r_loc {
    uint32_t li, rank;
    uint64_t read, defined, recorded, clamped, dropped, metrics, unclosed, badleave, offcount, offns;
    uint64_t noffsets;
    bool props, missing;
};

struct r_rankq {
    uint32_t rank;
    uint64_t events, cs_host_only, cs_dev_only, cs_repeat, lat_negative, lat_negative_max, off_count, off_ns;
    uint64_t noffsets, off_t0, off_t1, first, last;
    int64_t off_v0, off_v1;
    double sd0, sd1, drift_ppm;
    uint64_t data_end; /* salvaged archives (A20): where its data ends, offsets applied; 0 = none */
    bool present;
};

/* PAPI counters (A19) */
struct r_counter {       /* a metric member */
    uint32_t member;
    const char *name, *unit, *descr, *type, *mode;
    bool summed;         /* deltas summed: accumulated from a start, integer values */
    uint32_t ranks;      /* ranks whose threads counted it */
};

struct r_mregion {       /* one counter over one region's instances with a Metric at both ends */
    uint32_t member, region;
    const char *counter, *unit, *name, *kind; /* kind: "MPI", "Level Zero", "other" */
    uint64_t calls, total, min, max, region_ns;
    double mean, of_time; /* of_time: total / region_ns for counters in ns, -1 otherwise */
};

struct r_mrank {         /* one counter on one rank */
    uint32_t rank, member;
    const char *counter, *unit;
    uint64_t threads, counted, in_mpi, mpi_regions, in_l0, l0_regions;
};

/* wait states and GPU idle attribution (zc_agg_waits.c, zc_agg_sec_waits.c, zc_agg_sec_idle.c) */
enum agg_wait_class {
    W_LATE_SENDER, W_LATE_RECEIVER, W_NXN, W_BARRIER, W_LATE_BCAST, W_LATE_SCATTER, W_EARLY_REDUCE, W_EARLY_GATHER,
    W_NCLASSES /* idle rows: in MPI, in no wait state */
};
extern const char *const agg_wait_class_names[W_NCLASSES + 1];
struct r_wait {          /* a class, alone or with a key: rank, function, communicator, (waiting, blamed) pair */
    uint32_t cls, a, b;  /* a: waiting rank / region / communicator; b: blamed rank */
    const char *cls_name;
    char label[96];      /* the function's or communicator's name */
    uint64_t n, ns;      /* waits above their clock-offset uncertainty */
    uint64_t n_below, ns_below, unc_max;
    uint64_t mpi_ns;     /* the denominator of share: MPI time of the job or of the waiting rank */
    double share;
};
struct r_idle {          /* one rank's devices (all gaps between busy periods), by host cause */
    uint32_t rank;
    uint64_t gaps, total, ns[AGG_IDLE_NCAUSES], denom;
    double share;        /* total / denom (the rank's wall time x its devices) */
};
struct r_idlewait {      /* idle time while a rank waited in MPI: by class and blamed rank */
    uint32_t rank, cls, blamed, region;
    const char *cls_name, *fn;
    uint64_t ns;
    double share;        /* of the rank's idle time */
};
struct r_idlegap {
    uint32_t rank, node;
    uint64_t start, end, dur, ns[AGG_IDLE_NCAUSES];
    char cause[160];
};
struct r_msg {           /* the communication matrix: one (communicator, sender, receiver) */
    uint32_t comm, src, dst;
    uint64_t n, bytes;
};
struct r_msize {         /* message sizes of one function in one log2 class */
    uint32_t region, cls;
    const char *name;
    uint64_t n, bytes;
};
struct r_finding {
    uint64_t weight;     /* ns lost: the ranking */
    const char *anchor;  /* the section it links to */
    char text[320];
};
#define AGG_FINDINGS 5

struct agg_report {
    const struct agg_defs *d;
    struct agg_report_opts o;
    char archive[PATH_MAX];
    uint64_t first, last, wall, events;
    uint32_t ranks_read;
    /* kernels */
    struct r_kernel *k;
    uint32_t nk;
    uint64_t k_total;
    struct r_rowk *kr, *kd, *kq;
    uint32_t nkr, nkd, nkq;
    /* transfers */
    struct r_xfer *x, *xs, *xr;
    uint32_t nx, nxs, nxr;
    struct r_simple *bar;
    uint32_t nbar;
    /* utilisation */
    struct r_util *u, *ud, job;
    uint32_t nu, nud;
    struct r_gap *gap;
    uint32_t ngap;
    uint32_t nbins;
    uint64_t bin_ns;
    double *umat; /* ranks x bins; -1: rank absent */
    /* launch latency */
    struct r_lat lat_all, *lq, *lk;
    uint32_t nlq, nlk;
    /* MPI */
    struct r_simple *mpi;
    uint32_t nmpi;
    uint64_t mpi_total;
    struct r_mpirank *mr;
    uint32_t nmr;
    struct r_coll *coll;
    uint32_t ncoll;
    /* host API */
    struct r_simple *api;
    uint32_t napi;
    uint64_t api_total;
    struct r_strag *strag;
    uint32_t nstrag, strag_kernels;
    /* PAPI counters */
    struct r_counter *pc;
    uint32_t npc;
    struct r_mregion *pm;
    uint32_t npm;
    struct r_mrank *pr;
    uint32_t npr;
    /* communication matrix */
    struct r_msg *msg, *msgw; /* per communicator; all communicators summed (point-to-point) */
    uint32_t nmsg, nmsgw;
    uint64_t msg_n, msg_bytes;
    struct r_msize *msz;
    uint32_t nmsz;
    /* wait states */
    struct r_wait *wc, *wr, *wf, *wm, *wp; /* by class; class x rank, function, communicator, pair */
    uint32_t nwc, nwr, nwf, nwm, nwp;
    uint64_t w_total, w_below, w_nbelow, w_unmatched;
    /* GPU idle */
    struct r_idle *idl, idle_job;
    uint32_t nidl;
    struct r_idlewait *iw;
    uint32_t niw;
    struct r_idlegap *ig;
    uint32_t nig;
    bool any_l0;         /* any Level Zero activity recorded (else no GPU sections) */
    /* findings */
    struct r_finding fnd[AGG_FINDINGS];
    uint32_t nfnd;
    /* data quality */
    struct r_loc *loc;
    uint32_t nloc;
    struct r_rankq *rq;
    uint32_t nrq;
    uint64_t dq_missing_ranks, dq_missing_locs, dq_unclosed, dq_badleave, dq_clamped, dq_dropped, dq_metrics;
    uint64_t dq_off_count, dq_off_ns, dq_cs_host_only, dq_cs_dev_only, dq_cs_repeat, dq_lat_negative, dq_short;
    uint64_t dq_flush_ns, dq_no_offsets;
    uint64_t dq_m_unpaired, dq_m_decreasing, dq_m_one_sided; /* A19: see docs/report-schema.md */
    bool dq_props;
    struct r_untraced *unt; /* A21: calls per Level Zero entry passed through untraced, most first */
    uint32_t nunt;
    /* every allocation of the build (rep_alloc), freed with the report */
    void **mem;
    uint32_t nmem, capmem;
};

/* ================================================================ sections */
/* One part of the report, in every format. The report's order is the table's order in every
 * format (agg_sections in zc_agg_report.c), except the HTML overview (title, cards and charts),
 * which the job section composes from the other sections' figures. A hook may be NULL. */
struct agg_text;
struct agg_csv;
struct agg_section {
    const char *name;
    /* rows and derived numbers from the merged statistics; 0, or -1 when out of memory (a
     * section may read what the sections before it built) */
    int (*build)(struct agg_report *r, const struct agg_stats *s);
    void (*text)(const struct agg_report *r, struct agg_text *t);
    int (*csv)(const struct agg_report *r, struct agg_csv *c); /* one file per table; -1: c->e set */
    void (*json)(const struct agg_report *r, FILE *f);          /* its members, no separator around */
    void (*html)(const struct agg_report *r, FILE *f);
};
extern const struct agg_section *const agg_sections[];
extern const size_t agg_nsections;

/* ================================================================ wait states (zc_agg_waits.c) */
/* Matches the gathered records: wait-state and GPU-idle rows of the report. 0, or -1 out of memory. */
int agg_waits_build(struct agg_report *r, const struct agg_stats *s);
/* The findings (zc_agg_sec_findings.c), from the sections built before; whether Level Zero was active. */
void agg_findings_build(struct agg_report *r, const struct agg_stats *s);
void agg_findings_html(const struct agg_report *r, FILE *f);

/* ================================================================ building (zc_agg_report.c) */
/* Zeroed room for n + 1 elements (never NULL for n = 0), freed with the report; NULL when out of
 * memory. */
void *rep_alloc(struct agg_report *r, size_t n, size_t size);
#define REP_ALLOC(r, p, n) (((p) = rep_alloc((r), (n), sizeof(*(p)))) != NULL)
uint32_t rep_count(const struct agg_stats *s, uint32_t table); /* keys of one table */
double rep_mean(const struct agg_acc *a);
double rep_sd(const struct agg_acc *a);
double rep_ratio(uint64_t a, uint64_t b); /* 0 when b is 0 */
uint64_t rep_quantile(const struct agg_acc *a, double p); /* from its sketch, clamped into [min, max] */
int rep_cmp_u64_desc(uint64_t a, uint64_t b);
/* the ties of rows by region: by name, then by id (two regions may share a name) */
int rep_cmp_named(const char *an, uint32_t ar, const char *bn, uint32_t br);
/* The rows of a table of plain durations by region (barriers, MPI functions, host API), sorted by
 * total; regions of host class `skip` (AGG_NONE: none) are left out. Returns the summed total. */
uint64_t rep_simple_rows(struct agg_report *r, const struct agg_stats *s, uint32_t table, uint32_t skip,
                         struct r_simple **rows, uint32_t *n);
void rep_shares(struct r_simple *v, uint32_t n, uint64_t total);

/* names used by every writer */
const char *rep_region_name(const struct agg_report *r, uint32_t region);
const char *rep_host_of_rank(const struct agg_report *r, uint32_t rank);
const char *rep_node_name(const struct agg_report *r, uint32_t node);
const char *rep_loc_name(const struct agg_report *r, uint32_t li);
/* "4 KiB" for a power of two (agg_fmt_bytes without its ".00") */
void rep_pow2_bytes(char *out, size_t n, double b);
/* "[4 KiB, 8 KiB)": a log2 size class */
void rep_size_class(char *out, size_t n, uint32_t cls);
/* a timestamp as time since the clock's start (the archive's global offset; 0 before it) */
uint64_t rep_since_start(const struct agg_report *r, uint64_t t);

/* ================================================================ column tables */
/* A text or HTML table is a list of columns over an array of row structs: what a column shows
 * is a field of the row (at `off`) printed the way its kind says, or what `fn` makes of the row. */
enum rep_kind {
    RK_STR,   /* const char * */
    RK_STRA,  /* char array in the row */
    RK_U32,   /* uint32_t, "%u" */
    RK_U64,   /* uint64_t, "%llu" */
    RK_NS,    /* uint64_t ns, "1.23 ms" */
    RK_NSF,   /* double ns */
    RK_PCT,   /* double fraction, "12.3%" */
    RK_F,     /* double with prec decimals */
    RK_BYTES, /* uint64_t, "4.00 MiB" */
    RK_COUNT, /* uint64_t counter value in the unit at `aux` (a const char *): ns as a time */
    RK_MEAN,  /* double counter value (a mean, one decimal) in the unit at `aux` */
    RK_FN,    /* fn */
};
#define REP_OFF(type, field) offsetof(struct type, field)
/* a row's field at a column's offset: rep_str_at, rep_u32_at, rep_u64_at, rep_f64_at */
#define REP_FIELD_AT(name, type)                                                                                       \
    static inline type name(const void *row, size_t off) {                                                             \
        type v;                                                                                                        \
        memcpy(&v, (const char *)row + off, sizeof(v));                                                                \
        return v;                                                                                                      \
    }
REP_FIELD_AT(rep_str_at, const char *)
REP_FIELD_AT(rep_u32_at, uint32_t)
REP_FIELD_AT(rep_u64_at, uint64_t)
REP_FIELD_AT(rep_f64_at, double)

/* ================================================================ row order */
/* A row order as a list of the row's fields, compared in turn, each ascending or descending (a
 * NaN ties). The kind comes from the field's type: uint32_t, uint64_t or double; any other type
 * (a signed one included) does not compile. */
struct rep_key {
    uint8_t kind; /* RK_U32, RK_U64 or RK_F */
    bool desc;
    size_t off;
};
#define REP_KEY_KIND(type, field) _Generic(((struct type *)0)->field, uint32_t: RK_U32, uint64_t: RK_U64, double: RK_F)
#define REP_ASC(type, field) {.kind = REP_KEY_KIND(type, field), .off = REP_OFF(type, field)}
#define REP_DESC(type, field) {.kind = REP_KEY_KIND(type, field), .desc = true, .off = REP_OFF(type, field)}
/* -1, 0 or 1: the first of the nk keys on which the rows differ */
int rep_cmp_keys(const void *a, const void *b, const struct rep_key *k, size_t nk);
/* n rows of `size` bytes sorted by the keys (qsort: rows equal on every key keep no order) */
void rep_sort(void *rows, size_t n, size_t size, const struct rep_key *k, size_t nk);
#define REP_SORT(rows, n, keys) rep_sort((rows), (n), sizeof(*(rows)), (keys), sizeof(keys) / sizeof(*(keys)))

/* ================================================================ text (zc_agg_text.c) */
struct txt_col {
    const char *head;
    int width; /* 0 = the flexible name column */
    bool left;
    uint8_t kind; /* enum rep_kind */
    size_t off, aux;
    int prec; /* RK_F */
    /* RK_FN: the cell's text, in buf (n bytes) or any string that outlives the row */
    const char *(*fn)(const struct agg_report *r, const void *row, char *buf, size_t n);
};
#define TXT_COL(h, w, k, o) {.head = (h), .width = (w), .kind = (k), .off = (o)}
#define TXT_LEFT(h, w, k, o) {.head = (h), .width = (w), .left = true, .kind = (k), .off = (o)}
#define TXT_F(h, w, o, p) {.head = (h), .width = (w), .kind = RK_F, .off = (o), .prec = (p)}
#define TXT_FN(h, w, l, f) {.head = (h), .width = (w), .left = (l), .kind = RK_FN, .fn = (f)}
#define TXT_UNIT(h, w, k, o, u) {.head = (h), .width = (w), .kind = (k), .off = (o), .aux = (u)} /* RK_COUNT, RK_MEAN */
struct agg_text {
    FILE *f;
    const struct agg_report *r;
    uint32_t width, top;
    /* the table being written (16 columns at most) */
    const struct txt_col *c;
    int n, namew;
    bool hide[16];
};
/* "\n== heading\n" */
void txt_heading(struct agg_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The header of a table at most maxw wide: columns that do not fit are left out, from the right
 * (the name column and the first two value columns always stay). */
void txt_table_start(struct agg_text *t, const struct txt_col *c, int n, uint32_t maxw);
void txt_table_row(struct agg_text *t, const void *row);
/* start, then the first nrows rows of the array */
void txt_table(struct agg_text *t, const struct txt_col *c, int n, uint32_t maxw, const void *rows, size_t stride,
               uint32_t nrows);
#define TXT_TABLE(t, cols, maxw, rows, nrows)                                                                          \
    txt_table((t), (cols), (int)(sizeof(cols) / sizeof(*(cols))), (maxw), (rows), sizeof(*(rows)), (nrows))
/* cells in text lines: the buffer, returned */
const char *txt_ns(char *buf, size_t n, double ns);
const char *txt_pct(char *buf, size_t n, double fraction);
#define TXT_NS(buf, v) txt_ns((buf), sizeof(buf), (double)(v))
#define TXT_PCT(buf, v) txt_pct((buf), sizeof(buf), (v))
uint32_t txt_min(uint32_t a, uint32_t b);
/* a counter's value: ns counters as times, others as integers (means with one decimal) */
const char *txt_count(char *buf, size_t n, const char *unit, double v, bool integer);

/* ================================================================ CSV (zc_agg_csv.c) */
struct agg_csv {
    const char *dir;
    struct agg_err *e;
};
/* DIR/name.csv with its header line; NULL with c->e set when it cannot be written */
FILE *csv_open(struct agg_csv *c, const char *name, const char *header);
void csv_str(FILE *f, const char *s); /* quoted when it holds a comma, quote or newline */
void csv_strs(FILE *f, const char *a, const char *b); /* a,b: both csv_str */
/* name.csv: the header, then one line per row of the array (row() writes it, with its newline) */
int csv_table(struct agg_csv *c, const char *name, const char *header, const struct agg_report *r, const void *rows,
              size_t stride, uint32_t n, void (*row)(FILE *f, const struct agg_report *r, const void *row));
#define CSV_TABLE(c, name, header, r, rows, n, fn)                                                                     \
    csv_table((c), (name), (header), (r), (rows), sizeof(*(rows)), (n), (fn))
/* name.csv of barriers, MPI functions or host API calls; 0, or -1 with c->e set */
int csv_simple(struct agg_csv *c, const char *name, const struct r_simple *v, uint32_t n);
#define LLU(x) ((unsigned long long)(x))

/* ================================================================ JSON (zc_agg_json.c) */
void json_kv(FILE *f, const char *k, const char *v, bool comma); /* "k":"v" */
void json_row(FILE *f, uint32_t i);                              /* the i-th object of an array opens */
/* [{"name":..., "calls":..., ...}] of barriers, MPI functions or host API calls */
void json_simple_rows(FILE *f, const struct r_simple *v, uint32_t n, bool bytes);

/* ================================================================ HTML (zc_agg_html.c) */
struct html_col {
    const char *head;
    uint8_t kind; /* enum rep_kind (not RK_F) */
    size_t off, aux;
    void (*fn)(FILE *f, const struct agg_report *r, const void *row); /* RK_FN: the whole <td> */
};
#define HTML_COL(h, k, o) {.head = (h), .kind = (k), .off = (o)}
#define HTML_FN(h, f) {.head = (h), .kind = RK_FN, .fn = (f)}
#define HTML_UNIT(h, k, o, u) {.head = (h), .kind = (k), .off = (o), .aux = (u)} /* RK_COUNT, RK_MEAN */
void html_esc(FILE *f, const char *s);
void html_table(FILE *f, const struct agg_report *r, const struct html_col *c, int n, const void *rows, size_t stride,
                uint32_t nrows);
#define HTML_TABLE(f, r, cols, rows, nrows)                                                                            \
    html_table((f), (r), (cols), (int)(sizeof(cols) / sizeof(*(cols))), (rows), sizeof(*(rows)), (nrows))
void html_table_head(FILE *f, const struct html_col *c, int n);
void html_table_end(FILE *f);
/* <td data-s="sort key">text</td> cells */
void html_td_ns(FILE *f, double ns);
void html_td_u(FILE *f, uint64_t v);
void html_td_pct(FILE *f, double v);
void html_td_s(FILE *f, const char *s);
void html_td_count(FILE *f, const char *unit, double v, bool integer); /* as txt_count */
void html_card(FILE *f, const char *label, const char *value, const char *note);
/* charts (zc_agg_charts.c): inline SVG */
#define HTML_MAXROWS 96 /* ranks beyond this are grouped into rows */
void html_chart_kernels(const struct agg_report *r, FILE *f);
void html_chart_imbalance(const struct agg_report *r, FILE *f);
void html_chart_util(const struct agg_report *r, FILE *f);
void html_chart_bandwidth(const struct agg_report *r, FILE *f);

#endif
