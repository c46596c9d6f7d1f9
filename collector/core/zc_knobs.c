/* SPDX-License-Identifier: MIT */
/* The collector's side of the configuration (config/): loads it once in the constructor, says
 * what is wrong with it once per job, and stores the effective configuration in the archive.
 * No other file calls getenv() for ZECOLL_* settings. */
#include "zc_knobs.h"

#include "zc_launcher.h"
#include "zc_log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct zc_knobs zc_knobs;
static struct zc_config *cfg;
static struct zc_config fallback; /* out of memory at load: collection off */
const struct zc_config *zc_cfg = &fallback;

static const char *env_get(const char *name, void *ud) {
    (void)ud;
    return getenv(name);
}

/* One line, one write(2): ranks' lines never interleave. These messages print whatever
 * ZECOLL_LOG_LEVEL says: the level itself may be what is wrong. */
__attribute__((format(printf, 1, 2))) static void say(const char *fmt, ...) {
    char buf[2200] = "zecoll: ";
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + 8, sizeof(buf) - 8, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    zc_log_write(buf, sizeof(buf), 8 + (size_t)n);
}

/* Processes started by one that already said it (a shell or launcher that inherited
 * LD_PRELOAD, then the application) stay quiet: the messages' hash is left in the environment. */
#define ZC_REPORTED_VAR "ZECOLL_CONFIG_REPORTED"
static bool reported_before(const struct zc_config *c) {
    uint64_t h = 1469598103934665603u;
    for (uint32_t i = 0; i < c->nmsgs; i++)
        for (const unsigned char *p = (const unsigned char *)c->msgs[i].text;; p++) {
            h = (h ^ *p) * 1099511628211u;
            if (!*p) break;
        }
    char mine[24];
    snprintf(mine, sizeof(mine), "%016llx", (unsigned long long)h);
    const char *prev = getenv(ZC_REPORTED_VAR);
    if (prev && !strcmp(prev, mine)) return true;
    setenv(ZC_REPORTED_VAR, mine, 1);
    return false;
}

/* Job launchers and their daemons: with an exported LD_PRELOAD they load libzecoll.so too, but
 * they are never the application: started, they would open an archive (taking ZECOLL_OUTPUT's
 * name from the job), a journal and threads, and print the job's messages. Matched against the
 * executable's and argv[0]'s base names (Debian's mpirun is argv[0] "mpirun", executable
 * "orterun"). docs/config.md#launchers lists them; ZECOLL_LAUNCHERS adds more. */
static const char *const builtin_launchers[] = {
    /* Open MPI 4 (ORTE) and 5 (PRRTE), PMIx tools */
    "mpirun", "mpiexec", "mpirun.*", "mpiexec.*", "orterun", "orted", "oshrun", "prte", "prted", "prterun", "prun",
    "pterm", "ompi-server",
    /* MPICH, Intel MPI, MVAPICH (hydra, mpirun_rsh) */
    "hydra_pmi_proxy", "hydra_bstrap_proxy", "hydra_nameserver", "hydra_persist", "pmi_proxy", "mpirun_rsh",
    "mpispawn",
    /* Slurm, PBS/Torque, LSF, Flux, Cray/HPE PALS and ALPS, Grid Engine */
    "srun", "slurmstepd", "slurmd", "salloc", "sattach", "pbs_mom", "pbsdsh", "pbs_tmrsh", "jsrun", "jsmd", "lrun",
    "blaunch", "flux", "flux-broker", "flux-shell", "palsd", "aprun", "qrsh", "sge_shepherd",
    /* remote-start agents of the launchers above */
    "ssh", "rsh"};

static const char *base_name(const char *p) {
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static bool launcher_name(const char *name, const struct zc_strlist *extra) {
    if (!name || !*name) return false;
    for (size_t i = 0; i < sizeof(builtin_launchers) / sizeof(builtin_launchers[0]); i++)
        if (zc_glob_match(builtin_launchers[i], name)) return true;
    return zc_globs_match(extra, name);
}

/* name = s, cut to cap (a file name: at most NAME_MAX) */
static void copy_name(char *name, size_t cap, const char *s) {
    size_t n = strlen(s);
    if (n >= cap) n = cap - 1;
    memcpy(name, s, n);
    name[n] = 0;
}

/* Whether this process is a launcher; its name (argv[0]'s or the executable's) into name. */
static bool launcher_process(const struct zc_strlist *extra, char *name, size_t cap) {
    char buf[PATH_MAX];
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        buf[n > 0 ? n : 0] = 0; /* argv[0], NUL-terminated */
        if (launcher_name(base_name(buf), extra)) {
            copy_name(name, cap, base_name(buf));
            return true;
        }
    }
    ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    buf[n > 0 ? n : 0] = 0;
    if (!launcher_name(base_name(buf), extra)) return false;
    copy_name(name, cap, base_name(buf));
    return true;
}

int zc_knobs_load(void) {
    struct zc_config_opts o = {.getenv = env_get};
    cfg = zc_config_load(&o);
    if (!cfg) {
        zc_knobs.ENABLE = false;
        zc_knobs.LOG_LEVEL = 1;
        zc_log_config(zc_knobs.LOG_LEVEL, zc_knobs.STRICT);
        fallback.knobs = zc_knobs;
        say("out of memory while reading the configuration: collection is off");
        return -1;
    }
    zc_cfg = cfg;
    zc_knobs = cfg->knobs;
    zc_log_config(zc_knobs.LOG_LEVEL, zc_knobs.STRICT);
    char launcher[NAME_MAX + 1];
    if (launcher_process(&cfg->knobs.LAUNCHERS, launcher, sizeof(launcher))) {
        zc_knobs.ENABLE = false; /* not even the configuration's messages: the ranks say them */
        ZC_DEBUG("%s is a job launcher (docs/config.md#launchers): collection is off in this process", launcher);
        return -1;
    }
    /* ZECOLL_ENABLE=0 in the environment silences everything, a broken file included */
    bool user_off = !cfg->knobs.ENABLE && cfg->origin[ZC_K_ENABLE].kind == ZC_ORIGIN_ENV;
    bool speak = cfg->nmsgs && !user_off && zc_job_leader() && !reported_before(cfg);
    if (speak)
        for (uint32_t i = 0; i < cfg->nmsgs; i++)
            say("%s%s", cfg->msgs[i].kind == ZC_MSG_WARNING ? "warning: " : "", cfg->msgs[i].text);
    if (!cfg->nerrors || user_off) return zc_knobs.ENABLE ? 0 : -1;
    zc_knobs.ENABLE = false;
    if (zc_knobs.STRICT) {
        if (speak) say("the configuration is invalid; ZECOLL_STRICT=1: aborting");
        abort();
    }
    if (speak) say("the configuration is invalid: collection is off, the application runs untraced");
    return -1;
}

void zc_config_store(const char *dir) {
    if (!cfg || !dir || !dir[0]) return;
    char path[PATH_MAX];
    if ((size_t)snprintf(path, sizeof(path), "%s/zecoll-config.yaml", dir) >= sizeof(path)) return;
    char *text = zc_config_render(cfg, true);
    if (!text) {
        ZC_WARN("out of memory: the effective configuration is not stored in the archive");
        return;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    size_t len = strlen(text), done = 0;
    while (fd >= 0 && done < len) {
        ssize_t w = write(fd, text + done, len - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        done += (size_t)w;
    }
    if (fd < 0 || done < len) ZC_WARN("cannot write %s: %s", path, strerror(errno ? errno : EIO));
    if (fd >= 0) close(fd);
    free(text);
}
