/* SPDX-License-Identifier: MIT */
/* Unit tests of config/ (TAP): rank sets, kernel-name patterns against glibc's fnmatch, durations,
 * signals, knob ranges from variables (issue 10: -1, 2^32 multiples, 2^61), the file overridden by
 * variables with origins, ZECOLL_WINDOWS against the same windows in YAML, and the rendered
 * effective configuration loading back to the same values. */
#include "zc_config.h"

#include <fnmatch.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int ntests, nfail;

__attribute__((format(printf, 2, 3))) static bool ok(bool cond, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    printf("%sok %d - ", cond ? "" : "not ", ++ntests);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    if (!cond) nfail++;
    return cond;
}

/* ---------------------------------------------------------------- loading helpers */
struct envs {
    const char *kv[16]; /* "NAME=value" */
};

static const char *env_lookup(const char *name, void *ud) {
    struct envs *e = ud;
    size_t n = strlen(name);
    for (int i = 0; i < 16 && e->kv[i]; i++)
        if (!strncmp(e->kv[i], name, n) && e->kv[i][n] == '=') return e->kv[i] + n + 1;
    return NULL;
}

/* Loads YAML text (NULL: no file) with the given variables. */
static struct zc_config *load(const char *yaml, struct envs *e) {
    struct zc_config_opts o = {.file = yaml ? "t.yaml" : NULL, .data = yaml, .len = yaml ? strlen(yaml) : 0,
                               .getenv = env_lookup, .ud = e};
    static struct envs none;
    if (!e) o.ud = &none;
    struct zc_config *c = zc_config_load(&o);
    if (!c) {
        printf("Bail out! out of memory\n");
        exit(1);
    }
    return c;
}

static const char *msgs(const struct zc_config *c) {
    static char buf[8192];
    size_t o = 0;
    buf[0] = 0;
    for (uint32_t i = 0; i < c->nmsgs && o < sizeof(buf); i++)
        o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s\n", c->msgs[i].text);
    return buf;
}

/* ---------------------------------------------------------------- rank sets */
static void test_ranksets(void) {
    struct envs e = {{"ZECOLL_RANKS=10-12, 0-3,8 ,5,4,13,2147483647"}};
    struct zc_config *c = load(NULL, &e);
    bool member[32] = {0};
    for (int r = 0; r <= 5; r++) member[r] = true;
    member[8] = member[10] = member[11] = member[12] = member[13] = true;
    bool same = c->nerrors == 0;
    for (uint32_t r = 0; r < 32; r++) same &= zc_rankset_contains(&c->knobs.RANKS, r) == member[r];
    ok(same, "ZECOLL_RANKS=10-12,0-3,8,5,4,13: exactly those ranks");
    ok(c->knobs.RANKS.n == 4 && c->knobs.RANKS.v[0].lo == 0 && c->knobs.RANKS.v[0].hi == 5 &&
           c->knobs.RANKS.v[2].lo == 10 && c->knobs.RANKS.v[2].hi == 13,
       "ranges sorted and merged (0-5,8,10-13,2147483647)");
    ok(zc_rankset_contains(&c->knobs.RANKS, 2147483647) && !zc_rankset_contains(&c->knobs.RANKS, 2147483646) &&
           !zc_rankset_contains(&c->knobs.RANKS, UINT32_MAX),
       "the largest rank");
    zc_config_free(c);
    c = load(NULL, NULL);
    ok(c->knobs.RANKS.all && zc_rankset_contains(&c->knobs.RANKS, 123456), "default: every rank");
    zc_config_free(c);
    static const struct {
        const char *v, *msg;
    } bad[] = {
        {"3-1", "ZECOLL_RANKS: range 3-1 is reversed\n"},
        {"2147483648", "ZECOLL_RANKS: rank 2147483648 is too large (at most 2147483647)\n"},
        {"-1", "ZECOLL_RANKS: '-1' is not a rank or a range of ranks (such as 0-3,8)\n"},
        {"1,,2", "ZECOLL_RANKS: empty item in rank set '1,,2'\n"},
        {"0-3,x", "ZECOLL_RANKS: 'x' is not a rank or a range of ranks (such as 0-3,8)\n"},
        {"0-", "ZECOLL_RANKS: '0-' is not a rank or a range of ranks (such as 0-3,8)\n"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char kv[64];
        snprintf(kv, sizeof(kv), "ZECOLL_RANKS=%s", bad[i].v);
        struct envs b = {{kv}};
        c = load(NULL, &b);
        ok(c->nerrors == 1 && !strcmp(msgs(c), bad[i].msg), "ZECOLL_RANKS=%s is an error: %s", bad[i].v, msgs(c));
        zc_config_free(c);
    }
}

/* ---------------------------------------------------------------- patterns */
static uint64_t rng = 88172645463325252u;
static uint32_t rnd(uint32_t n) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

static void test_globs(void) {
    static const struct {
        const char *p, *n;
        bool m;
    } cases[] = {
        {"gemm*", "gemm_f32", true},       {"gemm*", "sgemm", false},        {"*_copy", "h2d_copy", true},
        {"*", "", true},                   {"?", "", false},                 {"a?c", "abc", true},
        {"[a-c]x", "bx", true},            {"[!a-c]x", "bx", false},         {"[^a-c]x", "dx", true},
        {"[]]", "]", true},                {"[!]]", "a", true},              {"\\*", "*", true},
        {"\\*", "a", false},               {"a\\", "a\\", false},            {"[[:digit:]]*", "7up", true},
        {"[[:alpha:]]", "7", false},       {"[[:foo:]]", "f", false},        {"[a", "[a", true},
        {"[a", "a", false},                {"*/*", "ns/k", true},            {"k<int, float>", "k<int, float>", true},
        {"*a*b*c*", "xaxbxcx", true},      {"*a*b*c*", "xaxcxbx", false},    {"[a-]", "-", true},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        ok(zc_glob_match(cases[i].p, cases[i].n) == cases[i].m, "glob '%s' %s '%s'", cases[i].p,
           cases[i].m ? "matches" : "does not match", cases[i].n);
    /* the same answers as glibc's fnmatch (no flags, C locale) on random patterns and names */
    static const char pat_alpha[] = "ab*?[]!^-\\", name_alpha[] = "ab[]-!^\\*?";
    static const char *const classes[] = {"[[:alpha:]]", "[[:digit:]x]", "[![:space:]]", "[[:punct:]]", "[[:upper:][:lower:]]"};
    int mismatches = 0;
    char p[16], n[12], first[80] = "";
    for (int t = 0; t < 300000; t++) {
        size_t pl = rnd(9), nl = rnd(8), o = 0;
        for (size_t i = 0; i < pl && o < 10; i++) {
            if (rnd(40) == 0) {
                const char *cl = classes[rnd(5)];
                if (o + strlen(cl) < sizeof(p) - 1) {
                    memcpy(p + o, cl, strlen(cl));
                    o += strlen(cl);
                }
            } else {
                p[o++] = pat_alpha[rnd(sizeof(pat_alpha) - 1)];
            }
        }
        p[o] = 0;
        for (size_t i = 0; i < nl; i++) n[i] = name_alpha[rnd(sizeof(name_alpha) - 1)];
        n[nl] = 0;
        bool mine = zc_glob_match(p, n), theirs = fnmatch(p, n, 0) == 0;
        if (mine != theirs && !mismatches++)
            snprintf(first, sizeof(first), "'%s' vs '%s': ours %d, fnmatch %d", p, n, mine, theirs);
    }
    ok(mismatches == 0, "300000 random patterns: the same as fnmatch(3)%s%s (%d differ)", mismatches ? ", first: " : "",
       first, mismatches);
    struct envs e = {{"ZECOLL_KERNELS_INCLUDE=gemm*,k<int\\, float>", "ZECOLL_KERNELS_EXCLUDE=*_copy, gemm_small"}};
    struct zc_config *c = load(NULL, &e);
    ok(c->knobs.KERNELS_INCLUDE.n == 2 && !strcmp(c->knobs.KERNELS_INCLUDE.v[1], "k<int, float>"),
       "comma lists: \\, is a comma, spaces around items dropped");
    ok(zc_kernel_selected(&c->knobs, "gemm_f32") && zc_kernel_selected(&c->knobs, "k<int, float>") &&
           !zc_kernel_selected(&c->knobs, "gemm_copy") && !zc_kernel_selected(&c->knobs, "gemm_small") &&
           !zc_kernel_selected(&c->knobs, "axpy"),
       "include then exclude");
    zc_config_free(c);
    c = load(NULL, NULL);
    ok(zc_kernel_selected(&c->knobs, "anything") && zc_kernel_selected(&c->knobs, NULL), "no patterns: every kernel");
    zc_config_free(c);
}

/* ---------------------------------------------------------------- durations and signals */
static void test_durations(void) {
    static const struct {
        const char *s;
        uint64_t ns;
        const char *err;
    } cases[] = {
        {"2s", 2000000000u, NULL},
        {"150ms", 150000000u, NULL},
        {"20us", 20000u, NULL},
        {"500ns", 500u, NULL},
        {"1m", 60000000000u, NULL},
        {"1.5s", 1500000000u, NULL},
        {"0.000000001s", 1, NULL},
        {"0s", 0, NULL},
        {"4611686018427387904ns", UINT64_C(4611686018427387904), NULL},
        {"2", 0, "'2' needs a unit: ns, us, ms, s or m"},
        {"2 s", 0, "unknown unit ' s' in '2 s': use ns, us, ms, s or m"},
        {"2h", 0, "unknown unit 'h' in '2h': use ns, us, ms, s or m"},
        {"-1s", 0, "expected a duration such as 2s, 150ms, 20us, 500ns or 1m, got '-1s'"},
        {"1.5ns", 0, "'1.5ns' is not a whole number of nanoseconds"},
        {"4611686018427387905ns", 0, "'4611686018427387905ns' is too long (at most 2^62 ns, about 146 years)"},
        {"99999999999999999999999s", 0, "'99999999999999999999999s' is too long (at most 2^62 ns, about 146 years)"},
        {".5s", 0, "expected a duration such as 2s, 150ms, 20us, 500ns or 1m, got '.5s'"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint64_t ns = 12345;
        char err[256] = "";
        int r = zc_parse_duration(cases[i].s, &ns, err, sizeof(err));
        if (cases[i].err) ok(r != 0 && !strcmp(err, cases[i].err), "duration '%s': %s", cases[i].s, err);
        else ok(r == 0 && ns == cases[i].ns, "duration '%s' = %" PRIu64 " ns", cases[i].s, ns);
    }
}

static void test_signals(void) {
    static const struct {
        const char *s;
        int sig; /* -1: SIGRTMIN + 2 */
        const char *err;
    } cases[] = {
        {"SIGUSR1", SIGUSR1, NULL},
        {"USR2", SIGUSR2, NULL},
        {"sigusr1", SIGUSR1, NULL},
        {"10", 10, NULL},
        {"SIGRTMIN+2", -1, NULL},
        {"SIGHUP", 0, "SIGHUP is taken: the collector writes the archive when it arrives; use e.g. SIGUSR1"},
        {"QUIT", 0, "SIGQUIT is taken: the collector writes the archive when it arrives; use e.g. SIGUSR1"},
        {"SIGXCPU", 0, "SIGXCPU is taken: the collector writes the archive when it arrives; use e.g. SIGUSR1"},
        {"SIGWINCH", SIGWINCH, NULL},
        {"SIGKILL", 0, "SIGKILL cannot be caught"},
        {"STOP", 0, "SIGSTOP cannot be caught"},
        {"SIGSEGV", 0, "SIGSEGV reports a crash; it cannot toggle recording"},
        {"SIGBUS", 0, "SIGBUS reports a crash; it cannot toggle recording"},
        {"8", 0, "SIGFPE reports a crash; it cannot toggle recording"},
        {"SIGILL", 0, "SIGILL reports a crash; it cannot toggle recording"},
        {"SIGABRT", 0, "SIGABRT reports a crash; it cannot toggle recording"},
        {"SIGTERM", 0, "SIGTERM is taken: the collector writes the archive when it arrives; use e.g. SIGUSR1"},
        {"INT", 0, "SIGINT is taken: the collector writes the archive when it arrives; use e.g. SIGUSR1"},
        {"SIGFOO", 0, "unknown signal 'SIGFOO' (such as SIGUSR1, USR2, SIGRTMIN+1 or a number)"},
        {"0", 0, "signal number '0' is out of range (1 to 64)"},
        {"65", 0, "signal number '65' is out of range (1 to 64)"},
        {"32", 0, "signal 32 is reserved by the C library"},
        {"SIGRTMIN+99", 0, "'SIGRTMIN+99' is beyond the real-time signals (SIGRTMIN+0 to SIGRTMIN+30)"},
        {"SIGRTMIN-1", 0, "unknown signal 'SIGRTMIN-1' (write SIGRTMIN+n or SIGRTMAX-n)"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int sig = 0;
        char err[256] = "", name[32];
        int r = zc_parse_signal(cases[i].s, &sig, err, sizeof(err));
        int want = cases[i].sig == -1 ? SIGRTMIN + 2 : cases[i].sig;
        if (cases[i].err) ok(r != 0 && !strcmp(err, cases[i].err), "signal '%s': %s", cases[i].s, err);
        else ok(r == 0 && sig == want, "signal '%s' = %d (%s)", cases[i].s, sig, zc_signal_name(sig, name, sizeof(name)));
    }
}

/* ---------------------------------------------------------------- knob ranges (issue 10) */
static void test_ranges(void) {
    /* the reported cases: each ignored with one message naming the variable, the default kept */
    static const struct {
        const char *kv, *msg;
    } cases[] = {
        {"ZECOLL_HARVEST_BUFFERS=4294967296",
         "ZECOLL_HARVEST_BUFFERS: expected an integer from 1 to 4096, got '4294967296'; ignored, keeping 64 (the default)"},
        {"ZECOLL_HARVEST_BUFFERS=8589934592",
         "ZECOLL_HARVEST_BUFFERS: expected an integer from 1 to 4096, got '8589934592'; ignored, keeping 64 (the default)"},
        {"ZECOLL_BUFFER_EVENTS=2305843009213693952",
         "ZECOLL_BUFFER_EVENTS: expected an integer from 1024 to 16777216, got '2305843009213693952'; ignored, keeping "
         "65536 (the default)"},
        {"ZECOLL_BUFFER_EVENTS=-1",
         "ZECOLL_BUFFER_EVENTS: expected an integer from 1024 to 16777216, got '-1'; ignored, keeping 65536 (the default)"},
        {"ZECOLL_PRE_INIT_MEMORY=-1",
         "ZECOLL_PRE_INIT_MEMORY: expected a size from 0 to 64G (bytes, or with K, M, G or T), got '-1'; ignored, keeping "
         "256M (the default)"},
        {"ZECOLL_LOG_LEVEL=18446744073709551616",
         "ZECOLL_LOG_LEVEL: expected an integer from 0 to 3, got '18446744073709551616'; ignored, keeping 1 (the default)"},
        {"ZECOLL_STRICT=maybe", "ZECOLL_STRICT: expected true or false, got 'maybe'; ignored, keeping false (the default)"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct envs e = {{cases[i].kv}};
        struct zc_config *c = load(NULL, &e);
        char want[512];
        snprintf(want, sizeof(want), "%s\n", cases[i].msg);
        ok(c->nerrors == 0 && c->nignored == 1 && !strcmp(msgs(c), want) && c->knobs.HARVEST_BUFFERS == 64 &&
               c->knobs.BUFFER_EVENTS == 65536 && c->knobs.LOG_LEVEL == 1 && c->knobs.PRE_INIT_MEMORY == 256u << 20,
           "%s: %s", cases[i].kv, msgs(c));
        zc_config_free(c);
    }
    /* every numeric knob: its bounds are accepted, one past them and malformed numbers are not */
    for (int k = 0; k < ZC_K_COUNT; k++) {
        const struct zc_knob_info *ki = &zc_knob_table[k];
        if (ki->type != ZC_T_UINT && ki->type != ZC_T_SIZE) continue;
        ok(ki->min <= ki->max && ki->max < UINT64_MAX, "ZECOLL_%s has a range (%" PRIu64 " to %" PRIu64 ")", ki->name,
           ki->min, ki->max);
        char v[8][48];
        int nv = 0;
        snprintf(v[nv++], 48, "%" PRIu64, ki->min);
        snprintf(v[nv++], 48, "%" PRIu64, ki->max);
        int good = nv;
        if (ki->min > 0) snprintf(v[nv++], 48, "%" PRIu64, ki->min - 1);
        snprintf(v[nv++], 48, "%" PRIu64, ki->max + 1);
        snprintf(v[nv++], 48, "-1");
        snprintf(v[nv++], 48, " 5");
        snprintf(v[nv++], 48, "0x10");
        snprintf(v[nv++], 48, "%s", "");
        for (int i = 0; i < nv; i++) {
            char kv[512], prefix[128];
            snprintf(kv, sizeof(kv), "ZECOLL_%s=%s", ki->name, v[i]);
            snprintf(prefix, sizeof(prefix), "ZECOLL_%s: expected a", ki->name);
            struct envs e = {{kv}};
            struct zc_config *c = load(NULL, &e);
            if (i < good) ok(c->nmsgs == 0 && c->origin[k].kind == ZC_ORIGIN_ENV, "%s accepted", kv);
            else
                ok(c->nignored == 1 && c->nmsgs == 1 && !strncmp(c->msgs[0].text, prefix, strlen(prefix)) &&
                       c->origin[k].kind == ZC_ORIGIN_DEFAULT,
                   "%s refused, naming the variable", kv);
            zc_config_free(c);
        }
    }
}

/* ---------------------------------------------------------------- file and variables */
static void test_override(void) {
    const char *yaml = "buffer:\n  events: 4096\noutput: {dir: from-file}\nrecord:\n  device: false\n";
    struct envs e = {{"ZECOLL_BUFFER_EVENTS=2048", "ZECOLL_DEVICE_TIMING=lots"}};
    struct zc_config *c = load(yaml, &e);
    ok(c->nerrors == 0 && c->knobs.BUFFER_EVENTS == 2048 && c->origin[ZC_K_BUFFER_EVENTS].kind == ZC_ORIGIN_ENV,
       "a variable overrides the file");
    ok(!strcmp(c->knobs.OUTPUT, "from-file") && c->origin[ZC_K_OUTPUT].kind == ZC_ORIGIN_FILE &&
           c->origin[ZC_K_OUTPUT].line == 3 && c->origin[ZC_K_OUTPUT].column == 10,
       "the file overrides the default, origin t.yaml:3:10 (%u:%u)", c->origin[ZC_K_OUTPUT].line,
       c->origin[ZC_K_OUTPUT].column);
    ok(!c->knobs.DEVICE_TIMING && c->nignored == 1 &&
           !strcmp(msgs(c), "ZECOLL_DEVICE_TIMING: expected true or false, got 'lots'; ignored, keeping false (t.yaml:5)\n"),
       "a bad variable keeps the file's value, saying where it comes from: %s", msgs(c));
    ok(c->knobs.API_TIMING && c->origin[ZC_K_API_TIMING].kind == ZC_ORIGIN_DEFAULT, "the rest: defaults");
    zc_config_free(c);
    c = load("", NULL);
    struct zc_config *d = load(NULL, NULL);
    ok(c->nmsgs == 0 && !memcmp(&c->knobs.BUFFER_EVENTS, &d->knobs.BUFFER_EVENTS, sizeof(uint64_t)) &&
           c->knobs.ENABLE == d->knobs.ENABLE && !strcmp(c->knobs.OUTPUT, d->knobs.OUTPUT),
       "an empty file is valid and means the defaults");
    zc_config_free(c);
    zc_config_free(d);
    /* a selection variable that is wrong invalidates the configuration */
    struct envs w = {{"ZECOLL_WINDOWS=time:5s-2s"}};
    c = load(NULL, &w);
    ok(c->nerrors == 1 && !strcmp(msgs(c), "ZECOLL_WINDOWS: window 1: stop (2s) must be after start (5s)\n"),
       "ZECOLL_WINDOWS=time:5s-2s: %s", msgs(c));
    zc_config_free(c);
}

/* ---------------------------------------------------------------- windows */
static bool same_window(const struct zc_window *a, const struct zc_window *b) {
    if (a->kind != b->kind || a->initial != b->initial || a->start_ns != b->start_ns || a->stop_ns != b->stop_ns ||
        a->start != b->start || a->count != b->count || a->signo != b->signo || a->ranks.all != b->ranks.all ||
        a->ranks.n != b->ranks.n || !a->name != !b->name || (a->name && strcmp(a->name, b->name)))
        return false;
    for (uint32_t i = 0; i < a->ranks.n; i++)
        if (a->ranks.v[i].lo != b->ranks.v[i].lo || a->ranks.v[i].hi != b->ranks.v[i].hi) return false;
    return true;
}

static void test_windows(void) {
    const char *yaml = "windows:\n"
                       "  - {kind: time, start: 2s, stop: 5s}\n"
                       "  - {kind: time, start: 150ms, ranks: \"1-2\"}\n"
                       "  - {kind: time, stop: 1m}\n"
                       "  - {kind: pcontrol, initial: off}\n"
                       "  - {kind: kernel, name: \"gemm*\", start: 100, count: 50}\n"
                       "  - {kind: kernel, name: \"a b;c@x+y\", ranks: [0, 3]}\n"
                       "  - {kind: kernel, name: k, count: 7}\n"
                       "  - {kind: signal, signal: SIGUSR1}\n"
                       "  - {kind: signal, signal: SIGRTMIN+1, initial: on}\n";
    struct envs e = {{"ZECOLL_WINDOWS=time:2s-5s; time:150ms- ranks=1-2 ;time:-1m;pcontrol initial=off;"
                      "kernel:gemm*@100+50;kernel:a\\ b\\;c@x+y ranks=0,3;kernel:k+7;signal:SIGUSR1;"
                      "signal:RTMIN+1 initial=on;"}};
    struct zc_config *a = load(yaml, NULL), *b = load(NULL, &e);
    ok(a->nmsgs == 0 && a->knobs.WINDOWS.n == 9, "9 windows from YAML %s", msgs(a));
    ok(b->nmsgs == 0 && b->knobs.WINDOWS.n == 9, "9 windows from ZECOLL_WINDOWS %s", msgs(b));
    if (a->knobs.WINDOWS.n == 9 && b->knobs.WINDOWS.n == 9)
        for (int i = 0; i < 9; i++)
            ok(same_window(&a->knobs.WINDOWS.v[i], &b->knobs.WINDOWS.v[i]), "window %d the same both ways", i + 1);
    const struct zc_window *w = a->knobs.WINDOWS.v;
    ok(w[0].kind == ZC_WIN_TIME && w[0].start_ns == 2000000000u && w[0].stop_ns == 5000000000u && w[0].ranks.all,
       "time 2s-5s on every rank");
    ok(w[1].stop_ns == ZC_WIN_NS_END && !zc_window_on_rank(&w[1], 0) && zc_window_on_rank(&w[1], 2), "time from 150ms to the end, ranks 1-2");
    ok(w[2].start_ns == 0 && w[2].stop_ns == 60000000000u, "time from 0 to 1m");
    ok(w[3].kind == ZC_WIN_PCONTROL && !w[3].initial, "pcontrol, initially off");
    ok(w[4].kind == ZC_WIN_KERNEL && !strcmp(w[4].name, "gemm*") && w[4].start == 100 && w[4].count == 50, "kernel gemm* @100 +50");
    ok(!strcmp(w[5].name, "a b;c@x+y") && w[5].start == 1 && w[5].count == ZC_WIN_COUNT_ALL, "kernel names with escapes");
    ok(w[6].start == 1 && w[6].count == 7, "kernel: count without start");
    ok(w[7].kind == ZC_WIN_SIGNAL && w[7].signo == SIGUSR1 && !w[7].initial, "signal SIGUSR1, initially off");
    ok(w[8].signo == SIGRTMIN + 1 && w[8].initial, "signal SIGRTMIN+1, initially on");
    ok(w[4].line == 6 && w[4].column == 5, "a window's position (6:5)");
    zc_config_free(a);
    zc_config_free(b);
    a = load("windows:\n  - kind: pcontrol\n", NULL);
    ok(a->knobs.WINDOWS.n == 1 && a->knobs.WINDOWS.v[0].initial, "pcontrol: on by default (MPI's profiling is on)");
    zc_config_free(a);
}

/* ---------------------------------------------------------------- rendering */
static void test_render(void) {
    const char *yaml = "output: {dir: \"tr\\u00e9ces/%e \\\"q\\\" \\t#x\"}\n"
                       "papi: {events: [perf::TASK-CLOCK, \"a,b\"], around_launches: true}\n"
                       "ranks: [0-3, 8]\nkernels: {include: [\"gemm*\"], exclude: [\"*_copy\"]}\n"
                       "buffer: {events: 4096, pre_init_memory: 1536K}\nlog: {level: 2}\n"
                       "windows:\n  - {kind: time, start: 1500ms, stop: 90s, ranks: \"0,2\"}\n"
                       "  - {kind: pcontrol}\n  - {kind: kernel, name: \"x*\", start: 3}\n"
                       "  - {kind: signal, signal: 12}\n";
    struct envs e = {{"ZECOLL_LOG_LEVEL=3", "ZECOLL_CLOCK_SKEW_NS=1,2"}};
    struct zc_config *a = load(yaml, &e);
    char *r1 = zc_config_render(a, false), *o1 = zc_config_render(a, true);
    struct zc_config_opts o = {.data = r1, .len = strlen(r1), .file = "rendered"};
    struct zc_config *b = zc_config_load(&o);
    char *r2 = zc_config_render(b, false);
    ok(a->nmsgs == 0 && b->nmsgs == 0 && !strcmp(r1, r2), "the rendered configuration loads back to the same values%s%s",
       msgs(a), msgs(b));
    ok(strstr(o1, "dir: \"tr\xc3\xa9" "ces/%e \\\"q\\\" \t#x\"") && strstr(o1, "# t.yaml:1") &&
           strstr(o1, "# env ZECOLL_LOG_LEVEL") && strstr(o1, "# default") && strstr(o1, "pre_init_memory: 1536K") &&
           strstr(o1, "signal: SIGUSR2") && strstr(o1, "ranks: \"0-3,8\""),
       "values and origins rendered");
    ok(b->knobs.LOG_LEVEL == 3 && !strcmp(b->knobs.CLOCK_SKEW_NS, "1,2"), "variables are part of the effective values");
    free(r1);
    free(r2);
    free(o1);
    zc_config_free(a);
    zc_config_free(b);
}

/* ---------------------------------------------------------------- the environment */
static void test_environment(void) {
    struct envs e = {{"ZECOLL_CONFIG=/nonexistent/zecoll.yaml"}};
    struct zc_config_opts o = {.getenv = env_lookup, .ud = &e};
    struct zc_config *c = zc_config_load(&o);
    ok(c->nerrors == 1 && !strcmp(msgs(c), "/nonexistent/zecoll.yaml: cannot read the configuration file: No such file or directory\n") &&
           c->origin[ZC_K_CONFIG].kind == ZC_ORIGIN_ENV && !strcmp(c->knobs.CONFIG, "/nonexistent/zecoll.yaml"),
       "ZECOLL_CONFIG names a file that is not there: %s", msgs(c));
    zc_config_free(c);
    const char *environ_[] = {"PATH=/bin", "ZECOLL_BUFER_EVENTS=1", "ZECOLL_VERBOSE=1", "ZECOLL_CONFIG_REPORTED=x",
                              "ZECOLL_OUTPUT=x", "ZECOLL_=", NULL};
    struct zc_config_opts o2 = {.environ = environ_};
    c = zc_config_load(&o2);
    ok(c->nerrors == 0 && c->nmsgs == 3 && c->msgs[0].kind == ZC_MSG_WARNING &&
           !strcmp(msgs(c), "ZECOLL_BUFER_EVENTS is not a zecoll setting; did you mean ZECOLL_BUFFER_EVENTS?\n"
                            "ZECOLL_VERBOSE is not a zecoll setting (see docs/knobs.md)\n"
                            "ZECOLL_ is not a zecoll setting (see docs/knobs.md)\n"),
       "variables that are no setting: a warning each (checker only) %s", msgs(c));
    zc_config_free(c);
}

int main(void) {
    test_ranksets();
    test_globs();
    test_durations();
    test_signals();
    test_ranges();
    test_override();
    test_windows();
    test_render();
    test_environment();
    printf("1..%d\n", ntests);
    return nfail ? 1 : 0;
}
