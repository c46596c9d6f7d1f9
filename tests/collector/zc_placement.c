/* SPDX-License-Identifier: MIT */
/* Where the collector's threads run when the application binds its own threads inside a larger
 * set (OpenMP places, a runtime's workers): a worker bound to the process's last CPU creates the
 * first command list (which starts the drainer) and makes enough Level Zero calls to fill its
 * buffer (ZECOLL_BUFFER_EVENTS=1024: the writer starts from it), while the main thread keeps the
 * whole set. Every thread of the collector (named zc-*) must then be allowed the process's CPUs,
 * not the worker's one CPU it would inherit. Prints one line per zc-* thread and the verdict
 * "placement: ok" or "placement: wrong" on stderr; "placement: needs 2 CPUs" where the process
 * has one.
 *   zc_placement inherit   says, as an MPI launcher would, that as many ranks share this node as
 *                          it has CPUs (MPI_LOCALNRANKS): the application's CPUs are then wider
 *                          than a rank's share, and the threads the worker starts (zc-convert,
 *                          zc-drain) must keep the worker's CPU, as they did before placement. */
#define _GNU_SOURCE
#include <dirent.h>
#include <level_zero/ze_api.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CK(call)                                                                                   \
    do {                                                                                           \
        ze_result_t r_ = (call);                                                                   \
        if (r_ != ZE_RESULT_SUCCESS) {                                                             \
            fprintf(stderr, "zc_placement: %s failed: 0x%x\n", #call, (unsigned)r_);               \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static ze_context_handle_t ctx;
static ze_device_handle_t dev;
static int worker_cpu;

static void *worker(void *arg) {
    (void)arg;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(worker_cpu, &one);
    if (pthread_setaffinity_np(pthread_self(), sizeof(one), &one) != 0) {
        fprintf(stderr, "zc_placement: cannot bind the worker to CPU %d\n", worker_cpu);
        exit(1);
    }
    ze_command_queue_desc_t qd = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 0, 0, 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                                  ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_list_handle_t list;
    CK(zeCommandListCreateImmediate(ctx, dev, &qd, &list));
    for (int i = 0; i < 3000; i++) { /* one host region each: the worker's buffer fills twice */
        ze_device_properties_t p;
        memset(&p, 0, sizeof(p));
        p.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
        CK(zeDeviceGetProperties(dev, &p));
    }
    CK(zeCommandListAppendBarrier(list, NULL, 0, NULL)); /* a device record: the drainer has work */
    CK(zeCommandListDestroy(list));
    return NULL;
}

/* Cpus_allowed_list of /proc/self/task/TID/status (TID NULL: the calling thread's) into out */
static int allowed(const char *tid, char *out, size_t n) {
    char path[320], line[256];
    if (tid) snprintf(path, sizeof(path), "/proc/self/task/%s/status", tid);
    else snprintf(path, sizeof(path), "/proc/thread-self/status"); /* the calling thread */
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    int found = -1;
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, "Cpus_allowed_list:", 18)) {
            char *v = line + 18;
            v += strspn(v, " \t");
            v[strcspn(v, "\n")] = 0;
            snprintf(out, n, "%s", v);
            found = 0;
        }
    fclose(f);
    return found;
}

int main(int argc, char **argv) {
    int inherit = argc > 1 && !strcmp(argv[1], "inherit");
    if (inherit) { /* read when the collector starts a thread, after this */
        char v[32];
        snprintf(v, sizeof(v), "%ld", sysconf(_SC_NPROCESSORS_ONLN));
        setenv("MPI_LOCALNRANKS", v, 1);
    }
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) != 0 || CPU_COUNT(&set) < 2) {
        fprintf(stderr, "placement: needs 2 CPUs\n");
        return 0;
    }
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set)) worker_cpu = c;
    CK(zeInit(0));
    uint32_t n = 1;
    ze_driver_handle_t drv;
    CK(zeDriverGet(&n, &drv));
    n = 1;
    CK(zeDeviceGet(drv, &n, &dev));
    ze_context_desc_t cd = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, NULL, 0};
    CK(zeContextCreate(drv, &cd, &ctx));
    pthread_t w;
    if (pthread_create(&w, NULL, worker, NULL) != 0 || pthread_join(w, NULL) != 0) return 1;

    char process[256];
    if (allowed(NULL, process, sizeof(process)) != 0) return 1;
    DIR *d = opendir("/proc/self/task");
    if (!d) return 1;
    int ours = 0, wrong = 0, convert = 0, drain = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.') continue;
        char path[320], name[32] = "", cpus[256] = "";
        snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        if (fgets(name, sizeof(name), f)) name[strcspn(name, "\n")] = 0;
        fclose(f);
        if (strncmp(name, "zc-", 3) || allowed(e->d_name, cpus, sizeof(cpus)) != 0) continue;
        ours++;
        convert += !strcmp(name, "zc-convert");
        drain += !strcmp(name, "zc-drain");
        char one[16];
        snprintf(one, sizeof(one), "%d", worker_cpu);
        if (!inherit) wrong += strcmp(cpus, process) != 0;
        else if (!strcmp(name, "zc-convert") || !strcmp(name, "zc-drain")) wrong += strcmp(cpus, one) != 0;
        fprintf(stderr, "thread %s: cpus %s (the process: %s, the worker: %d)\n", name, cpus, process, worker_cpu);
    }
    closedir(d);
    CK(zeContextDestroy(ctx));
    fprintf(stderr, "placement: %s (%d threads of the collector)\n", ours && convert && drain && !wrong ? "ok" : "wrong", ours);
    return 0;
}
