/* SPDX-License-Identifier: MIT */
/* The MPI layer as the rest of the collector sees it: one subsystem (zc_mpi_subsystem) and the
 * exported MPI_* and mpi_*_ entry points (zc_mpi_dispatch_gen.c), whichever MPI the application
 * loaded. Compiled once, without mpi.h. At load it detects the process's MPI ABI the way mpi4py
 * does, and points every entry at that flavour of the layer (zc_mpi_flavour.h); an entry no flavour
 * serves passes the call through to the MPI library, resolved on its first call. */
#include "zc_mpi_flavour.h"

#include "zc_log.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* generated (zc_mpi_dispatch_gen.c) */
extern const struct zc_mpi_flavour *const zc_mpi_flavours[];
extern const unsigned zc_mpi_disp_n;
extern const char *const zc_mpi_disp_names[];
extern void *zc_mpi_slot[];
void *zc_mpi_lazy_target(unsigned k);

static const struct zc_mpi_flavour *chosen;

/* ---------------------------------------------------------------- MPI loaded after us */
/* Python's extension modules are loaded RTLD_LOCAL, so their libmpi is not in the global scope
 * that RTLD_DEFAULT searches: every loaded object is asked in turn (dlsym on an object also
 * searches its dependencies). */
struct resolve_arg {
    const char *name;
    void *p;
};

static int resolve_in(struct dl_phdr_info *info, size_t size, void *arg) {
    struct resolve_arg *a = arg;
    if (!info->dlpi_name || !info->dlpi_name[0]) return 0;
    void *h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
    if (!h) return 0;
    a->p = dlsym(h, a->name);
    dlclose(h); /* only drops the reference RTLD_NOLOAD took; the object stays loaded */
    return a->p != NULL;
}

void *zc_mpi_resolve(const char *name) {
    void *p = dlsym(RTLD_DEFAULT, name);
    if (p) return p;
    struct resolve_arg a = {name, NULL};
    dl_iterate_phdr(resolve_in, &a);
    return a.p;
}

/* An entry nothing provides (no MPI library at all): an error, as the MPI would report one. */
static int no_mpi(void) { return 1; }

/* The first call of an entry no flavour serves (zc_mpi_lazy_common, below): the MPI library's own
 * function, found under its profiling name (P + MPI_x: libzecoll.so exports no PMPI_*, so this
 * cannot find us) or, for Fortran, the next definition after ours (MPICH's libmpichfort), else
 * its pmpi_ name. Stored in the slot: later calls jump straight there. */
void *zc_mpi_lazy_target(unsigned k) {
    const char *name = zc_mpi_disp_names[k];
    char pname[96];
    snprintf(pname, sizeof(pname), "%c%s", name[0] == 'M' ? 'P' : 'p', name);
    void *p = name[0] == 'M' ? NULL : dlsym(RTLD_NEXT, name);
    if (!p) p = zc_mpi_resolve(pname);
    static _Atomic int said;
    if (!chosen && !__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
        fprintf(stderr, "zecoll: %s called, but no MPI library was loaded when zecoll started (loaded later by "
                        "dlopen?): MPI calls pass through untraced\n", name);
    if (!p) p = (void *)no_mpi;
    __atomic_store_n(&zc_mpi_slot[k], p, __ATOMIC_RELEASE);
    return p;
}

/* Saves the argument registers (and %rax, the vector count of a variadic call), asks
 * zc_mpi_lazy_target for the function, restores them and jumps there: the call arrives as made. */
__asm__(".text\n"
        ".globl zc_mpi_lazy_common\n.hidden zc_mpi_lazy_common\n.type zc_mpi_lazy_common,@function\n"
        "zc_mpi_lazy_common:\n"
        "  pushq %rbp\n  movq %rsp, %rbp\n  subq $192, %rsp\n"
        "  movq %rdi, 0(%rsp)\n  movq %rsi, 8(%rsp)\n  movq %rdx, 16(%rsp)\n  movq %rcx, 24(%rsp)\n"
        "  movq %r8, 32(%rsp)\n  movq %r9, 40(%rsp)\n  movq %rax, 48(%rsp)\n"
        "  movdqu %xmm0, 64(%rsp)\n  movdqu %xmm1, 80(%rsp)\n  movdqu %xmm2, 96(%rsp)\n  movdqu %xmm3, 112(%rsp)\n"
        "  movdqu %xmm4, 128(%rsp)\n  movdqu %xmm5, 144(%rsp)\n  movdqu %xmm6, 160(%rsp)\n  movdqu %xmm7, 176(%rsp)\n"
        "  movl %r11d, %edi\n  call zc_mpi_lazy_target\n  movq %rax, %r11\n"
        "  movq 0(%rsp), %rdi\n  movq 8(%rsp), %rsi\n  movq 16(%rsp), %rdx\n  movq 24(%rsp), %rcx\n"
        "  movq 32(%rsp), %r8\n  movq 40(%rsp), %r9\n  movq 48(%rsp), %rax\n"
        "  movdqu 64(%rsp), %xmm0\n  movdqu 80(%rsp), %xmm1\n  movdqu 96(%rsp), %xmm2\n  movdqu 112(%rsp), %xmm3\n"
        "  movdqu 128(%rsp), %xmm4\n  movdqu 144(%rsp), %xmm5\n  movdqu 160(%rsp), %xmm6\n  movdqu 176(%rsp), %xmm7\n"
        "  leave\n  jmp *%r11\n"
        ".size zc_mpi_lazy_common,.-zc_mpi_lazy_common\n");

/* ---------------------------------------------------------------- detection */
/* The process's MPI ABI, by mpi4py's rule (src/mpi4py/_mpiabi.py): the MPI-5 standard ABI if
 * MPI_Abi_get_version exists and says so (first: an Open MPI 6 ABI program also loads the library
 * that defines ompi_*), Open MPI if ompi_mpi_comm_self exists, else the MPICH family if there is
 * an MPI at all. Libraries the program links are mapped when our constructor runs. */
static const char *process_abi(void) {
    int (*abi)(int *, int *) = (int (*)(int *, int *))dlsym(RTLD_DEFAULT, "MPI_Abi_get_version");
    int major = 0, minor = 0;
    if (abi && abi(&major, &minor) == 0 && major >= 1) return "abi";
    if (dlsym(RTLD_DEFAULT, "ompi_mpi_comm_self")) return "openmpi";
    if (dlsym(RTLD_DEFAULT, "PMPI_Init")) return "mpich";
    return NULL;
}

static int by_name(const void *key, const void *elem) { return strcmp(key, *(const char *const *)elem); }

/* Every entry the flavour defines gets its definition; the others keep their lazy stubs. */
static void point_entries(const struct zc_mpi_flavour *f) {
    for (int t = 0; t < 3; t++) {
        for (unsigned i = 0; f->tab[t] && i < *f->n[t]; i++) {
            const char *const *at = bsearch(f->tab[t][i].name, zc_mpi_disp_names, zc_mpi_disp_n, sizeof(char *), by_name);
            if (at) zc_mpi_slot[at - zc_mpi_disp_names] = f->tab[t][i].fn;
        }
    }
}

static void mpi_detect(void) {
    const char *abi = process_abi();
    if (!abi) return; /* no MPI: every entry stays lazy (and is never called, or MPI comes later) */
    for (int i = 0; zc_mpi_flavours[i]; i++)
        if (strcmp(zc_mpi_flavours[i]->name, abi) == 0) chosen = zc_mpi_flavours[i];
    if (!chosen) {
        char built[64] = "";
        for (int i = 0; zc_mpi_flavours[i]; i++)
            snprintf(built + strlen(built), sizeof(built) - strlen(built), " %s", zc_mpi_flavours[i]->name);
        ZC_WARN("this program's MPI has the %s ABI, which this libzecoll.so was not built for (built:%s): MPI calls "
                "pass through untraced", abi, built);
        return;
    }
    point_entries(chosen);
    if (chosen->layer->detect) chosen->layer->detect();
}

/* The chosen flavour's hooks; none before detection or without MPI. */
#define ZC_FWD_INT(hook)                                                                                           \
    static int mpi_##hook(void) { return chosen && chosen->layer->hook ? chosen->layer->hook() : 0; }
#define ZC_FWD_VOID(hook)                                                                                          \
    static void mpi_##hook(void) {                                                                                 \
        if (chosen && chosen->layer->hook) chosen->layer->hook();                                                  \
    }
ZC_FWD_INT(init)
ZC_FWD_INT(post_mpi_init)
ZC_FWD_VOID(pre_finalize)
ZC_FWD_VOID(finalize)
ZC_FWD_VOID(fork_child)
ZC_FWD_VOID(thread_exit)

const struct zc_subsystem zc_mpi_subsystem = {.name = "mpi",
                                              .detect = mpi_detect,
                                              .init = mpi_init,
                                              .post_mpi_init = mpi_post_mpi_init,
                                              .pre_finalize = mpi_pre_finalize,
                                              .finalize = mpi_finalize,
                                              .fork_child = mpi_fork_child,
                                              .thread_exit = mpi_thread_exit};
