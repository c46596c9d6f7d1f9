/* SPDX-License-Identifier: MIT */
/* The runtime's lookups (rank sets, kernel-name patterns) and the value parsers that need no
 * configuration object (durations, signals). Nothing here allocates. */
#include "zc_config_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- rank sets */
bool zc_rankset_contains(const struct zc_rankset *s, uint32_t rank) {
    if (s->all) return true;
    uint32_t lo = 0, hi = s->n;
    while (lo < hi) { /* the first range whose hi >= rank */
        uint32_t mid = lo + (hi - lo) / 2;
        if (s->v[mid].hi < rank) lo = mid + 1;
        else hi = mid;
    }
    return lo < s->n && s->v[lo].lo <= rank;
}

/* ---------------------------------------------------------------- patterns */
/* ASCII classes as the C locale defines them: ctype.h would follow the application's locale. */
static int class_match(const unsigned char *name, size_t len, unsigned char c) {
    bool upper = c >= 'A' && c <= 'Z', lower = c >= 'a' && c <= 'z', digit = c >= '0' && c <= '9';
    bool alpha = upper || lower, print = c >= 32 && c < 127;
#define IS(s) (len == sizeof(s) - 1 && !memcmp(name, s, len))
    if (IS("alnum")) return alpha || digit;
    if (IS("alpha")) return alpha;
    if (IS("blank")) return c == ' ' || c == '\t';
    if (IS("cntrl")) return c < 32 || c == 127;
    if (IS("digit")) return digit;
    if (IS("graph")) return print && c != ' ';
    if (IS("lower")) return lower;
    if (IS("print")) return print;
    if (IS("punct")) return print && c != ' ' && !alpha && !digit;
    if (IS("space")) return c == ' ' || (c >= '\t' && c <= '\r');
    if (IS("upper")) return upper;
    if (IS("xdigit")) return digit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
#undef IS
    return -1;
}

enum { BR_NO, BR_YES, BR_FAIL, BR_LITERAL };

/* The bracket expression starting after '[' at p, against byte c: BR_YES/BR_NO with *end after
 * the closing ']'; BR_FAIL: no match here (an unknown class, a range or backslash with nothing
 * after it, met before a member matched); BR_LITERAL: no closing ']', so '[' is an ordinary byte.
 * As glibc's fnmatch (2.36): members are tried in order, and after the first one that matches
 * the rest is only scanned for the closing ']'. */
static int bracket(const unsigned char *p, unsigned char c, const unsigned char **end) {
    bool neg = *p == '!' || *p == '^', hit = false;
    if (neg) p++;
    for (bool first = true;; first = false) {
        unsigned char lo = *p;
        if (!lo) return BR_LITERAL;
        if (lo == ']' && !first) {
            *end = p + 1;
            return hit != neg ? BR_YES : BR_NO;
        }
        p++;
        if (lo == '[' && *p == ':') { /* [:name:] with name in a-z, else '[' is a member */
            const unsigned char *q = p + 1;
            while (*q >= 'a' && *q <= 'z') q++;
            if (q > p + 1 && q[0] == ':' && q[1] == ']') {
                if (!hit) {
                    int m = class_match(p + 1, (size_t)(q - p - 1), c);
                    if (m < 0) return BR_FAIL;
                    hit = m;
                }
                p = q + 2;
                continue;
            }
        }
        if (lo == '\\') {
            if (!*p) return BR_FAIL;
            lo = *p++;
        }
        if (hit) continue; /* only looking for the end now */
        unsigned char hi = lo;
        if (p[0] == '-' && p[1] != ']') { /* a range ("[a-" with nothing after fails) */
            if (!p[1]) return BR_FAIL;
            p++;
            hi = *p++;
            if (hi == '\\') {
                if (!*p) return BR_FAIL;
                hi = *p++;
            }
        }
        if (lo <= c && c <= hi) hit = true;
    }
}

bool zc_glob_match(const char *pattern, const char *name) {
    const unsigned char *p = (const unsigned char *)pattern, *n = (const unsigned char *)name;
    const unsigned char *star_p = NULL, *star_n = NULL; /* backtrack point: the last '*' */
    for (;;) {
        if (*p == '*') {
            while (*p == '*') p++;
            if (!*p) return true;
            star_p = p;
            star_n = n;
            continue;
        }
        if (!*n) return !*p;
        const unsigned char *next = p + 1;
        bool ok;
        switch (*p) {
        case 0: ok = false; break;
        case '?': ok = true; break;
        case '\\':
            ok = p[1] && p[1] == *n; /* a trailing backslash matches nothing */
            next = p + 2;
            break;
        case '[': {
            int r = bracket(p + 1, *n, &next);
            if (r == BR_LITERAL) {
                next = p + 1;
                ok = *n == '[';
            } else {
                ok = r == BR_YES;
            }
            break;
        }
        default: ok = *p == *n;
        }
        if (ok) {
            p = next;
            n++;
        } else if (star_p && *star_n) { /* the last '*' takes one more byte */
            p = star_p;
            n = ++star_n;
        } else {
            return false;
        }
    }
}

bool zc_globs_match(const struct zc_strlist *l, const char *name) {
    for (uint32_t i = 0; i < l->n; i++)
        if (zc_glob_match(l->v[i], name)) return true;
    return false;
}

bool zc_kernel_selected(const struct zc_knobs *k, const char *name) {
    if (!name) name = "";
    if (k->KERNELS_INCLUDE.n && !zc_globs_match(&k->KERNELS_INCLUDE, name)) return false;
    return !zc_globs_match(&k->KERNELS_EXCLUDE, name);
}

/* ---------------------------------------------------------------- durations */
#define ZC_DURATION_MAX (UINT64_C(1) << 62) /* ~146 years: start + duration never overflows */

int zc_parse_duration(const char *s, uint64_t *ns, char *err, size_t errsz) {
    static const struct {
        const char *u;
        uint64_t mul;
    } units[] = {{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}, {"m", UINT64_C(60000000000)}};
    const char *p = s;
    uint64_t ip = 0, frac = 0, fdiv = 1;
    bool big = false;
    if (*p < '0' || *p > '9') {
        snprintf(err, errsz, "expected a duration such as 2s, 150ms, 20us, 500ns or 1m, got '%s'", s);
        return -1;
    }
    for (; *p >= '0' && *p <= '9'; p++) {
        if (ip > ZC_DURATION_MAX / 10) big = true;
        else ip = ip * 10 + (uint64_t)(*p - '0');
    }
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9') {
            snprintf(err, errsz, "expected a duration such as 2s, 150ms, 20us, 500ns or 1m, got '%s'", s);
            return -1;
        }
        for (; *p >= '0' && *p <= '9'; p++) {
            if (fdiv > UINT64_C(100000000000)) { /* beyond 1e-11 of a minute: must be zeros */
                if (*p != '0') fdiv = UINT64_MAX;
                continue;
            }
            frac = frac * 10 + (uint64_t)(*p - '0');
            fdiv *= 10;
        }
    }
    if (!*p) {
        snprintf(err, errsz, "'%s' needs a unit: ns, us, ms, s or m", s);
        return -1;
    }
    size_t i = 0;
    for (; i < sizeof(units) / sizeof(units[0]); i++)
        if (!strcmp(p, units[i].u)) break;
    if (i == sizeof(units) / sizeof(units[0])) {
        snprintf(err, errsz, "unknown unit '%s' in '%s': use ns, us, ms, s or m", p, s);
        return -1;
    }
    uint64_t mul = units[i].mul;
    if (big || ip > ZC_DURATION_MAX / mul) {
        snprintf(err, errsz, "'%s' is too long (at most 2^62 ns, about 146 years)", s);
        return -1;
    }
    /* frac / fdiv of a unit, exactly in ns */
    uint64_t fns = 0;
    if (frac || fdiv == UINT64_MAX) {
        __uint128_t t = (__uint128_t)frac * mul;
        if (fdiv == UINT64_MAX || t % fdiv) {
            snprintf(err, errsz, "'%s' is not a whole number of nanoseconds", s);
            return -1;
        }
        fns = (uint64_t)(t / fdiv);
    }
    if (ip * mul > ZC_DURATION_MAX - fns) {
        snprintf(err, errsz, "'%s' is too long (at most 2^62 ns, about 146 years)", s);
        return -1;
    }
    *ns = ip * mul + fns;
    return 0;
}

/* ---------------------------------------------------------------- signals */
static const struct {
    const char *name;
    int signo;
} signals[] = {
    {"HUP", SIGHUP},   {"INT", SIGINT},   {"QUIT", SIGQUIT},   {"ILL", SIGILL},       {"TRAP", SIGTRAP},
    {"ABRT", SIGABRT}, {"IOT", SIGABRT},  {"BUS", SIGBUS},     {"FPE", SIGFPE},       {"KILL", SIGKILL},
    {"USR1", SIGUSR1}, {"SEGV", SIGSEGV}, {"USR2", SIGUSR2},   {"PIPE", SIGPIPE},     {"ALRM", SIGALRM},
    {"TERM", SIGTERM}, {"CHLD", SIGCHLD}, {"CONT", SIGCONT},   {"STOP", SIGSTOP},     {"TSTP", SIGTSTP},
    {"TTIN", SIGTTIN}, {"TTOU", SIGTTOU}, {"URG", SIGURG},     {"XCPU", SIGXCPU},     {"XFSZ", SIGXFSZ},
    {"VTALRM", SIGVTALRM}, {"PROF", SIGPROF}, {"WINCH", SIGWINCH}, {"SYS", SIGSYS},
#ifdef SIGIO
    {"IO", SIGIO},
#endif
#ifdef SIGPOLL
    {"POLL", SIGPOLL},
#endif
#ifdef SIGSTKFLT
    {"STKFLT", SIGSTKFLT},
#endif
#ifdef SIGPWR
    {"PWR", SIGPWR},
#endif
};

const char *zc_signal_name(int signo, char *buf, size_t size) {
    if (signo >= SIGRTMIN && signo <= SIGRTMAX) {
        if (signo == SIGRTMIN) snprintf(buf, size, "SIGRTMIN");
        else snprintf(buf, size, "SIGRTMIN+%d", signo - SIGRTMIN);
        return buf;
    }
    for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
        if (signals[i].signo == signo) {
            snprintf(buf, size, "SIG%s", signals[i].name);
            return buf;
        }
    snprintf(buf, size, "%d", signo);
    return buf;
}

static bool ieq_prefix(const char *s, const char *prefix) {
    for (; *prefix; s++, prefix++)
        if ((*s & ~0x20) != (*prefix & ~0x20)) return false;
    return true;
}

/* A non-negative decimal number of at most 4 digits at s, else -1; *end after it. */
static int small_number(const char *s, const char **end) {
    int v = 0, k = 0;
    for (; *s >= '0' && *s <= '9'; s++, k++) {
        if (k == 4) return -1;
        v = v * 10 + (*s - '0');
    }
    *end = s;
    return k ? v : -1;
}

int zc_parse_signal(const char *s, int *signo, char *err, size_t errsz) {
    int sig = -1;
    const char *p = s, *end;
    if (*p >= '0' && *p <= '9') {
        sig = small_number(p, &end);
        if (sig < 1 || sig > SIGRTMAX || *end) {
            snprintf(err, errsz, "signal number '%s' is out of range (1 to %d)", s, SIGRTMAX);
            return -1;
        }
        if (sig > SIGSYS && sig < SIGRTMIN) {
            snprintf(err, errsz, "signal %d is reserved by the C library", sig);
            return -1;
        }
    } else {
        if (ieq_prefix(p, "SIG")) p += 3;
        if (ieq_prefix(p, "RTMIN") || ieq_prefix(p, "RTMAX")) {
            bool min = ieq_prefix(p, "RTMIN");
            p += 5;
            int off = 0;
            if (*p == (min ? '+' : '-')) {
                off = small_number(p + 1, &end);
                p = off < 0 ? p : end;
            } else if (*p) {
                off = -1;
            }
            if (off < 0 || *p) {
                snprintf(err, errsz, "unknown signal '%s' (write SIGRTMIN+n or SIGRTMAX-n)", s);
                return -1;
            }
            sig = min ? SIGRTMIN + off : SIGRTMAX - off;
            if (sig < SIGRTMIN || sig > SIGRTMAX) {
                snprintf(err, errsz, "'%s' is beyond the real-time signals (SIGRTMIN+0 to SIGRTMIN+%d)", s,
                         SIGRTMAX - SIGRTMIN);
                return -1;
            }
        } else {
            for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]) && sig < 0; i++)
                if (ieq_prefix(p, signals[i].name) && !p[strlen(signals[i].name)]) sig = signals[i].signo;
            if (sig < 0) {
                snprintf(err, errsz, "unknown signal '%s' (such as SIGUSR1, USR2, SIGRTMIN+1 or a number)", s);
                return -1;
            }
        }
    }
    char name[32];
    zc_signal_name(sig, name, sizeof(name));
    switch (sig) {
    case SIGKILL:
    case SIGSTOP: snprintf(err, errsz, "%s cannot be caught", name); return -1;
    case SIGSEGV:
    case SIGBUS:
    case SIGFPE:
    case SIGILL:
    case SIGABRT: snprintf(err, errsz, "%s reports a crash; it cannot toggle recording", name); return -1;
    case SIGTERM:
    case SIGINT:
    case SIGHUP:
    case SIGQUIT:
    case SIGXCPU: /* the signals the collector takes (collector/zc_exit.c) */
        snprintf(err, errsz, "%s is taken: the collector writes the archive when it arrives; use e.g. SIGUSR1", name);
        return -1;
    }
    *signo = sig;
    return 0;
}

/* A testing knob's string that has a format: ZECOLL_CLOCK_SKEW_NS, comma-separated integers within
 * an hour each way (a skew beyond that tests nothing, and 10^23 ns overflowed to a silent
 * INT64_MAX). 0, or -1 with err set. */
#define ZC_SKEW_MAX INT64_C(3600000000000)
int zc_cfg_check_string(int kid, const char *v, char *err, size_t n) {
    if (kid != ZC_K_CLOCK_SKEW_NS) return 0;
    const char *p = v;
    do {
        char *end;
        errno = 0;
        long long x = strtoll(p, &end, 10);
        if (end == p || (*end && *end != ',') || errno == ERANGE || x < -ZC_SKEW_MAX || x > ZC_SKEW_MAX) {
            snprintf(err, n, "expected comma-separated integers from %lld to %lld (ns, one per rank), got '%.64s%s'",
                     (long long)-ZC_SKEW_MAX, (long long)ZC_SKEW_MAX, v, strlen(v) > 64 ? "..." : "");
            return -1;
        }
        p = *end ? end + 1 : NULL;
    } while (p);
    return 0;
}
