/* SPDX-License-Identifier: MIT */
/* zesim's mutable command lists (spec 1.8/1.10: command ids, kernel, argument, group and event
 * updates, clones) and graph capture and replay (spec 1.17), with the driver's rules, each logged
 * in the truth as a "mutable" or "graph" line. Layouts are declared here from the published spec,
 * independently of the collector's ze_ddi_later.spec, so a mistake in either shows.
 *
 * Rules modelled (each rejected call returns what the spec says and writes a "violation" line):
 *   - command ids only on a regular list created mutable (ze_mutable_command_list_exp_desc_t in
 *     zeCommandListCreate's pNext), before Close; the id names the very next Append, which must
 *     be a kernel launch (anything else appended in between is refused: that is the collector's
 *     rule "nothing of ours between GetNextCommandId and the application's Append");
 *   - updates only on a closed mutable list, only of what the id's flags declared mutable; a
 *     kernel update only to a kernel named at zeCommandListGetNextCommandIdWithKernelsExp;
 *     updates take effect from the next execution (executions in flight keep what they had);
 *   - while an immediate list captures, its Appends are recorded into the graph, not run; an
 *     executable graph is a copy of the graph at instantiation; each zeCommandListAppendGraphExt
 *     replays it on the immediate list's timeline (truth lines: list = the executable graph,
 *     exec = the replay's number). */
#include "zs_internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef void (*zs_fn)(void);
#define ZS_SET(t, v, since, idx, fn)                                                               \
    do {                                                                                           \
        if ((v) >= ZE_MAKE_VERSION(1, since)) ((zs_fn *)(t))[idx] = (zs_fn)(fn);                   \
    } while (0)

/* ---------------------------------------------------------------- spec layouts */
#define STYPE_MUTABLE_COMMAND_LIST_EXP_DESC 0x00020016u
#define STYPE_MUTABLE_COMMAND_ID_EXP_DESC 0x00020017u
#define STYPE_MUTABLE_COMMANDS_EXP_DESC 0x00020018u
#define STYPE_MUTABLE_KERNEL_ARGUMENT_EXP_DESC 0x00020019u
#define STYPE_MUTABLE_GROUP_COUNT_EXP_DESC 0x0002001au
#define STYPE_MUTABLE_GROUP_SIZE_EXP_DESC 0x0002001bu
#define STYPE_MUTABLE_GLOBAL_OFFSET_EXP_DESC 0x0002001cu
/* ze_mutable_command_exp_flags_t */
#define MUT_KERNEL_ARGUMENTS (1u << 0)
#define MUT_GROUP_COUNT (1u << 1)
#define MUT_GROUP_SIZE (1u << 2)
#define MUT_GLOBAL_OFFSET (1u << 3)
#define MUT_SIGNAL_EVENT (1u << 4)
#define MUT_WAIT_EVENTS (1u << 5)
#define MUT_KERNEL_INSTRUCTION (1u << 6)

typedef struct {
    ze_structure_type_t stype;
    const void *pNext;
    uint32_t flags;
} desc_flags_t; /* mutable command list desc, command id desc, commands desc: the same shape */
typedef struct {
    ze_structure_type_t stype;
    const void *pNext;
    uint64_t commandId;
    uint32_t argIndex;
    size_t argSize;
    const void *pArgValue;
} mut_arg_t;
typedef struct {
    ze_structure_type_t stype;
    const void *pNext;
    uint64_t commandId;
    const ze_group_count_t *pGroupCount;
} mut_group_count_t;
typedef struct {
    ze_structure_type_t stype;
    const void *pNext;
    uint64_t commandId;
    uint32_t x, y, z;
} mut_xyz_t; /* group size, global offset */

/* results of the graph queries (spec 1.17) */
#define RESULT_QUERY_TRUE ((ze_result_t)0x78000022)
#define RESULT_QUERY_FALSE ((ze_result_t)0x78000023)

#define ZS_MAGIC_GRAPH 0x7a730101u
#define ZS_MAGIC_XGRAPH 0x7a730102u

struct _ze_graph_handle_t {
    uint32_t magic;
    ze_context_handle_t context;
    struct zs_body *body;
    bool in_order;                   /* captured from an in-order list */
    ze_command_list_handle_t capturing; /* the list capturing into it now */
};
struct _ze_executable_graph_handle_t {
    uint32_t magic;
    struct _ze_graph_handle_t *src;
    struct zs_body *body;
    bool in_order;
    uint64_t replays;
};
typedef struct _ze_graph_handle_t *zs_graph_t;
typedef struct _ze_executable_graph_handle_t *zs_xgraph_t;

/* per command of a mutable list, by command id */
struct zs_mutcmd {
    bool has_id;
    uint32_t flags;
    ze_kernel_handle_t *kernels; /* those it may switch to (WithKernels) */
    uint32_t nkernels;
};

struct zs_listx {
    bool mutable_list;
    bool id_pending; /* a command id was handed out: the next Append is that command */
    uint32_t id_flags;
    ze_kernel_handle_t *id_kernels;
    uint32_t id_nkernels;
    struct zs_mutcmd *cmds;
    uint32_t ncmds;
    zs_graph_t capture; /* an immediate list capturing into this graph */
};

/* ---------------------------------------------------------------- truth */
static ze_result_t violation(const void *list, int64_t cmd, const char *why, ze_result_t r) {
    zs_truthf("{\"kind\":\"mutable\",\"what\":\"violation\",\"list\":\"%p\",\"cmd\":%" PRId64 ",\"reason\":\"%s\"}", list, cmd,
          why);
    return r;
}

/* ---------------------------------------------------------------- command copies */
static void *dup_mem(const void *p, size_t n) {
    if (!p || !n) return NULL;
    void *d = malloc(n);
    if (d) memcpy(d, p, n);
    return d;
}

static struct zs_kcapture *kcapture_dup(const struct zs_kcapture *k) {
    struct zs_kcapture *kc = dup_mem(k, sizeof(*k));
    if (!kc) return NULL;
    kc->args = NULL;
    if (k->nargs && !(kc->args = dup_mem(k->args, k->nargs * sizeof(*k->args)))) {
        free(kc);
        return NULL;
    }
    for (uint32_t i = 0; i < k->nargs; i++) {
        kc->args[i].big = NULL;
        if (k->args[i].big && !(kc->args[i].big = dup_mem(k->args[i].big, k->args[i].size))) {
            kc->nargs = i;
            zs_kcapture_free(kc);
            return NULL;
        }
    }
    return kc;
}

/* A deep copy of a command (everything zs_cmd_free frees is duplicated). */
static bool cmd_dup(struct zs_cmd *d, const struct zs_cmd *s) {
    *d = *s;
    d->kc = NULL;
    d->region = NULL;
    d->pattern = NULL;
    d->img_dst_region = d->img_src_region = NULL;
    d->qevents = NULL;
    d->qoffsets = NULL;
    d->waits = NULL;
    bool ok = (!s->kc || (d->kc = kcapture_dup(s->kc))) && (!s->region || (d->region = dup_mem(s->region, sizeof(*s->region)))) &&
              (!s->pattern || (d->pattern = dup_mem(s->pattern, s->pattern_size))) &&
              (!s->img_dst_region || (d->img_dst_region = dup_mem(s->img_dst_region, sizeof(*s->img_dst_region)))) &&
              (!s->img_src_region || (d->img_src_region = dup_mem(s->img_src_region, sizeof(*s->img_src_region)))) &&
              (!s->qevents || (d->qevents = dup_mem(s->qevents, s->nq * sizeof(*s->qevents)))) &&
              (!s->qoffsets || (d->qoffsets = dup_mem(s->qoffsets, s->nq * sizeof(*s->qoffsets)))) &&
              (!s->waits || (d->waits = dup_mem(s->waits, s->nwaits * sizeof(*s->waits))));
    if (!ok) zs_cmd_free(d);
    return ok;
}

static struct zs_body *body_dup(const struct zs_body *s) {
    struct zs_body *b = zs_body_new();
    if (!b) return NULL;
    if (s->ncmds && !(b->cmds = calloc(s->ncmds, sizeof(*b->cmds)))) {
        zs_body_unref(b);
        return NULL;
    }
    b->cap = s->ncmds;
    for (uint32_t i = 0; i < s->ncmds; i++) {
        if (!cmd_dup(&b->cmds[i], &s->cmds[i])) {
            zs_body_unref(b);
            return NULL;
        }
        b->ncmds++;
    }
    return b;
}

/* ---------------------------------------------------------------- list hooks (zs_list.c) */
static struct zs_listx *listx(ze_command_list_handle_t l) {
    if (!l->x) l->x = calloc(1, sizeof(*l->x));
    return l->x;
}

ze_result_t zs_listx_created(ze_command_list_handle_t l, const void *pNext) {
    unsigned hops = 0;
    for (const ze_base_desc_t *b = pNext; b && hops < 64; b = b->pNext, hops++)
        if ((uint32_t)b->stype == STYPE_MUTABLE_COMMAND_LIST_EXP_DESC) {
            if (!listx(l)) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
            l->x->mutable_list = true;
        }
    return ZE_RESULT_SUCCESS;
}

static void mut_clear(struct zs_listx *x) {
    for (uint32_t i = 0; i < x->ncmds; i++) free(x->cmds[i].kernels);
    free(x->cmds);
    free(x->id_kernels);
    x->cmds = NULL;
    x->ncmds = 0;
    x->id_kernels = NULL;
    x->id_nkernels = 0;
    x->id_pending = false;
}

void zs_listx_reset(ze_command_list_handle_t l) {
    if (l->x) mut_clear(l->x);
}

void zs_listx_free(ze_command_list_handle_t l) {
    if (!l->x) return;
    mut_clear(l->x);
    if (l->x->capture) l->x->capture->capturing = NULL;
    free(l->x);
    l->x = NULL;
}

struct zs_body *zs_listx_target(ze_command_list_handle_t l, const struct zs_cmd *c, ze_result_t *r) {
    struct zs_listx *x = l->x;
    *r = ZE_RESULT_SUCCESS;
    if (x->capture) return x->capture->body;
    if (l->immediate) return NULL;
    if (!x->id_pending || c->same_append) return l->body;
    /* the command id names this Append: it must be the kernel launch the id was asked for */
    if (c->kind != ZS_K_KERNEL) {
        *r = violation(l, l->body->ncmds, "an Append other than a kernel launch after zeCommandListGetNextCommandIdExp",
                       ZE_RESULT_ERROR_INVALID_ARGUMENT);
        return NULL;
    }
    uint32_t id = l->body->ncmds;
    if (id >= x->ncmds) {
        struct zs_mutcmd *n = realloc(x->cmds, (id + 1) * sizeof(*n));
        if (!n) {
            *r = ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
            return NULL;
        }
        memset(n + x->ncmds, 0, (id + 1 - x->ncmds) * sizeof(*n));
        x->cmds = n;
        x->ncmds = id + 1;
    }
    x->cmds[id] = (struct zs_mutcmd){true, x->id_flags, x->id_kernels, x->id_nkernels};
    x->id_kernels = NULL;
    x->id_nkernels = 0;
    x->id_pending = false;
    zs_truthf("{\"kind\":\"mutable\",\"what\":\"command\",\"list\":\"%p\",\"cmd\":%u,\"flags\":%u,\"name\":\"%s\"}", (void *)l, id,
          x->cmds[id].flags, c->kc->name);
    return l->body;
}

/* ---------------------------------------------------------------- command ids */
static ze_result_t next_id(ze_command_list_handle_t l, const desc_flags_t *desc, uint32_t nk, ze_kernel_handle_t *ks,
                           uint64_t *id) {
    ZS_CHECK(l, ZS_MAGIC_LIST);
    if (!desc || !id || (nk && !ks)) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if ((uint32_t)desc->stype != STYPE_MUTABLE_COMMAND_ID_EXP_DESC) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (l->immediate || !l->x || !l->x->mutable_list)
        return violation(l, -1, "command id on a list not created mutable", ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    if (l->closed) return violation(l, -1, "command id on a closed list", ZE_RESULT_ERROR_INVALID_ARGUMENT);
    if (desc->flags & ~0x7fu) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    for (uint32_t i = 0; i < nk; i++) ZS_CHECK(ks[i], ZS_MAGIC_KERNEL);
    struct zs_listx *x = l->x;
    free(x->id_kernels);
    x->id_kernels = nk ? dup_mem(ks, nk * sizeof(*ks)) : NULL;
    if (nk && !x->id_kernels) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    x->id_nkernels = nk;
    x->id_flags = desc->flags;
    x->id_pending = true;
    *id = l->body->ncmds;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeCommandListGetNextCommandIdExp(ze_command_list_handle_t l, const desc_flags_t *desc, uint64_t *id) {
    ZS_ENTER();
    return next_id(l, desc, 0, NULL, id);
}

static ze_result_t zs_zeCommandListGetNextCommandIdWithKernelsExp(ze_command_list_handle_t l, const desc_flags_t *desc,
                                                                  uint32_t nk, ze_kernel_handle_t *ks, uint64_t *id) {
    ZS_ENTER();
    return next_id(l, desc, nk, ks, id);
}

static ze_result_t zs_zeCommandListIsMutableExp(ze_command_list_handle_t l, ze_bool_t *is) {
    ZS_ENTER();
    ZS_CHECK(l, ZS_MAGIC_LIST);
    if (!is) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    *is = l->x && l->x->mutable_list;
    return ZE_RESULT_SUCCESS;
}

/* ---------------------------------------------------------------- updates */
/* The command `id` of a closed mutable list, when its flags allow `need`. */
static ze_result_t mut_cmd(ze_command_list_handle_t l, uint64_t id, uint32_t need, struct zs_cmd **out) {
    if (!l->x || !l->x->mutable_list) return violation(l, (int64_t)id, "update of a list not created mutable",
                                                       ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    if (!l->closed) return violation(l, (int64_t)id, "update before Close", ZE_RESULT_ERROR_INVALID_ARGUMENT);
    if (id >= l->x->ncmds || !l->x->cmds[id].has_id || id >= l->body->ncmds)
        return violation(l, (int64_t)id, "no such command id", ZE_RESULT_ERROR_INVALID_ARGUMENT);
    if ((l->x->cmds[id].flags & need) != need)
        return violation(l, (int64_t)id, "not declared mutable for this update", ZE_RESULT_ERROR_INVALID_ARGUMENT);
    *out = &l->body->cmds[id];
    return ZE_RESULT_SUCCESS;
}

/* Executions in flight share the body: updates go to a copy (they keep what they had). */
static ze_result_t body_unshare(ze_command_list_handle_t l) {
    if (atomic_load(&l->body->refs) == 1) return ZE_RESULT_SUCCESS;
    struct zs_body *b = body_dup(l->body);
    if (!b) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    zs_body_unref(l->body);
    l->body = b;
    return ZE_RESULT_SUCCESS;
}

/* Validates the whole chain first, then applies it: an update is all or nothing. */
static ze_result_t update_chain(ze_command_list_handle_t l, const void *chain, bool apply) {
    unsigned hops = 0;
    for (const ze_base_desc_t *b = chain; b && hops < 64; b = b->pNext, hops++) {
        uint32_t st = (uint32_t)b->stype;
        struct zs_cmd *c = NULL;
        ze_result_t r;
        if (st == STYPE_MUTABLE_KERNEL_ARGUMENT_EXP_DESC) {
            const mut_arg_t *a = (const void *)b;
            if ((r = mut_cmd(l, a->commandId, MUT_KERNEL_ARGUMENTS, &c)) != ZE_RESULT_SUCCESS) return r;
            if (a->argIndex >= c->kc->nargs) return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX;
            if (a->argSize > sizeof(c->kc->args[0].val) && !a->pArgValue) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
            if (!apply) continue;
            struct zs_arg *g = &c->kc->args[a->argIndex];
            free(g->big);
            g->big = NULL;
            g->size = (uint32_t)a->argSize;
            g->set = true;
            if (a->argSize > sizeof(g->val)) g->big = dup_mem(a->pArgValue, a->argSize);
            else if (a->pArgValue) memcpy(g->val, a->pArgValue, a->argSize);
            else memset(g->val, 0, sizeof(g->val));
            zs_truthf("{\"kind\":\"mutable\",\"what\":\"argument\",\"list\":\"%p\",\"cmd\":%" PRIu64 ",\"index\":%u}", (void *)l,
                  a->commandId, a->argIndex);
        } else if (st == STYPE_MUTABLE_GROUP_COUNT_EXP_DESC) {
            const mut_group_count_t *g = (const void *)b;
            if ((r = mut_cmd(l, g->commandId, MUT_GROUP_COUNT, &c)) != ZE_RESULT_SUCCESS) return r;
            if (!g->pGroupCount) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
            if (!apply) continue;
            c->kc->groups = *g->pGroupCount;
            zs_truthf("{\"kind\":\"mutable\",\"what\":\"group_count\",\"list\":\"%p\",\"cmd\":%" PRIu64 ",\"groups\":[%u,%u,%u]}",
                  (void *)l, g->commandId, g->pGroupCount->groupCountX, g->pGroupCount->groupCountY,
                  g->pGroupCount->groupCountZ);
        } else if (st == STYPE_MUTABLE_GROUP_SIZE_EXP_DESC || st == STYPE_MUTABLE_GLOBAL_OFFSET_EXP_DESC) {
            const mut_xyz_t *g = (const void *)b;
            bool size = st == STYPE_MUTABLE_GROUP_SIZE_EXP_DESC;
            if ((r = mut_cmd(l, g->commandId, size ? MUT_GROUP_SIZE : MUT_GLOBAL_OFFSET, &c)) != ZE_RESULT_SUCCESS) return r;
            if (size && (!g->x || !g->y || !g->z)) return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
            if (!apply || !size) continue; /* offsets: zesim runs no real work that reads them */
            c->kc->gx = g->x;
            c->kc->gy = g->y;
            c->kc->gz = g->z;
            zs_truthf("{\"kind\":\"mutable\",\"what\":\"group_size\",\"list\":\"%p\",\"cmd\":%" PRIu64 ",\"size\":[%u,%u,%u]}",
                  (void *)l, g->commandId, g->x, g->y, g->z);
        } else {
            return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        }
    }
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeCommandListUpdateMutableCommandsExp(ze_command_list_handle_t l, const desc_flags_t *desc) {
    ZS_ENTER_DEV();
    ZS_CHECK(l, ZS_MAGIC_LIST);
    if (!desc) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if ((uint32_t)desc->stype != STYPE_MUTABLE_COMMANDS_EXP_DESC) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    ze_result_t r = update_chain(l, desc->pNext, false);
    if (r == ZE_RESULT_SUCCESS) r = body_unshare(l);
    return r == ZE_RESULT_SUCCESS ? update_chain(l, desc->pNext, true) : r;
}

static ze_result_t zs_zeCommandListUpdateMutableCommandSignalEventExp(ze_command_list_handle_t l, uint64_t id,
                                                                      ze_event_handle_t ev) {
    ZS_ENTER_DEV();
    ZS_CHECK(l, ZS_MAGIC_LIST);
    if (ev && ev->magic != ZS_MAGIC_EVENT) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    struct zs_cmd *c;
    ze_result_t r = mut_cmd(l, id, MUT_SIGNAL_EVENT, &c);
    if (r == ZE_RESULT_SUCCESS) r = body_unshare(l);
    if (r != ZE_RESULT_SUCCESS) return r;
    l->body->cmds[id].signal = ev;
    zs_truthf("{\"kind\":\"mutable\",\"what\":\"signal_event\",\"list\":\"%p\",\"cmd\":%" PRIu64 ",\"event\":\"%p\"}", (void *)l, id,
          (void *)ev);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeCommandListUpdateMutableCommandWaitEventsExp(ze_command_list_handle_t l, uint64_t id, uint32_t nw,
                                                                     ze_event_handle_t *w) {
    ZS_ENTER_DEV();
    ZS_CHECK(l, ZS_MAGIC_LIST);
    if (nw && !w) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    for (uint32_t i = 0; i < nw; i++) ZS_CHECK(w[i], ZS_MAGIC_EVENT);
    struct zs_cmd *c;
    ze_result_t r = mut_cmd(l, id, MUT_WAIT_EVENTS, &c);
    if (r == ZE_RESULT_SUCCESS) r = body_unshare(l);
    if (r != ZE_RESULT_SUCCESS) return r;
    c = &l->body->cmds[id];
    ze_event_handle_t *n = nw ? dup_mem(w, nw * sizeof(*w)) : NULL;
    if (nw && !n) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    free(c->waits);
    c->waits = n;
    c->nwaits = nw;
    zs_truthf("{\"kind\":\"mutable\",\"what\":\"wait_events\",\"list\":\"%p\",\"cmd\":%" PRIu64 ",\"count\":%u}", (void *)l, id, nw);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeCommandListUpdateMutableCommandKernelsExp(ze_command_list_handle_t l, uint32_t n, uint64_t *ids,
                                                                  ze_kernel_handle_t *ks) {
    ZS_ENTER_DEV();
    ZS_CHECK(l, ZS_MAGIC_LIST);
    if (n && (!ids || !ks)) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    for (uint32_t i = 0; i < n; i++) {
        ZS_CHECK(ks[i], ZS_MAGIC_KERNEL);
        struct zs_cmd *c;
        ze_result_t r = mut_cmd(l, ids[i], MUT_KERNEL_INSTRUCTION, &c);
        if (r != ZE_RESULT_SUCCESS) return r;
        const struct zs_mutcmd *m = &l->x->cmds[ids[i]];
        bool known = false;
        for (uint32_t k = 0; k < m->nkernels; k++) known |= m->kernels[k] == ks[i];
        if (!known) return violation(l, (int64_t)ids[i], "kernel not named at GetNextCommandIdWithKernelsExp",
                                     ZE_RESULT_ERROR_INVALID_ARGUMENT);
    }
    ze_result_t r = body_unshare(l);
    if (r != ZE_RESULT_SUCCESS) return r;
    for (uint32_t i = 0; i < n; i++) {
        struct zs_cmd *c = &l->body->cmds[ids[i]];
        struct zs_kcapture *kc = zs_kernel_capture(ks[i]);
        if (!kc) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
        /* the new kernel keeps the command's group count; its arguments and group size are the
         * kernel's own until updated (the spec asks the application to set them anew) */
        kc->groups = c->kc->groups;
        zs_kcapture_free(c->kc);
        c->kc = kc;
        zs_truthf("{\"kind\":\"mutable\",\"what\":\"kernel\",\"list\":\"%p\",\"cmd\":%" PRIu64 ",\"name\":\"%s\"}", (void *)l,
              ids[i], kc->name);
    }
    return ZE_RESULT_SUCCESS;
}

/* ---------------------------------------------------------------- clones */
static ze_result_t zs_zeCommandListCreateCloneExp(ze_command_list_handle_t l, ze_command_list_handle_t *out) {
    ZS_ENTER_DEV();
    ZS_CHECK(l, ZS_MAGIC_LIST);
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (l->immediate || !l->closed) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    struct _ze_command_list_handle_t *c = calloc(1, sizeof(*c));
    if (!c) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    *c = (struct _ze_command_list_handle_t){.magic = ZS_MAGIC_LIST, .context = l->context, .device = l->device,
                                           .ordinal = l->ordinal, .closed = true, .in_order = l->in_order,
                                           .copy_only = l->copy_only, .mode = l->mode};
    if (!(c->body = body_dup(l->body))) {
        free(c);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    zs_truthf("{\"kind\":\"mutable\",\"what\":\"clone\",\"list\":\"%p\",\"clone\":\"%p\",\"cmds\":%u}", (void *)l, (void *)c,
          c->body->ncmds);
    *out = c;
    return ZE_RESULT_SUCCESS;
}

/* ---------------------------------------------------------------- graphs */
static ze_result_t zs_zeGraphCreateExt(ze_context_handle_t ctx, const void *pNext, zs_graph_t *out) {
    ZS_ENTER();
    (void)pNext;
    ZS_CHECK(ctx, ZS_MAGIC_CONTEXT);
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    zs_graph_t g = calloc(1, sizeof(*g));
    if (!g || !(g->body = zs_body_new())) {
        free(g);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    g->magic = ZS_MAGIC_GRAPH;
    g->context = ctx;
    *out = g;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t capture_begin(ze_command_list_handle_t l, zs_graph_t g) {
    ZS_CHECK(l, ZS_MAGIC_LIST);
    if (!l->immediate) return ZE_RESULT_ERROR_INVALID_ARGUMENT; /* only immediate lists capture */
    if (!listx(l)) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    if (l->x->capture || g->capturing) return ZE_RESULT_ERROR_INVALID_ARGUMENT; /* one capture at a time */
    l->x->capture = g;
    g->capturing = l;
    g->in_order = l->in_order;
    zs_truthf("{\"kind\":\"graph\",\"what\":\"capture_begin\",\"list\":\"%p\",\"graph\":\"%p\"}", (void *)l, (void *)g);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeCommandListBeginGraphCaptureExt(ze_command_list_handle_t l, const void *pNext) {
    ZS_ENTER();
    zs_graph_t g;
    ze_result_t r = zs_zeGraphCreateExt(l && l->magic == ZS_MAGIC_LIST ? l->context : NULL, pNext, &g);
    if (r != ZE_RESULT_SUCCESS) return r;
    if ((r = capture_begin(l, g)) != ZE_RESULT_SUCCESS) {
        zs_body_unref(g->body);
        free(g);
    }
    return r;
}

static ze_result_t zs_zeCommandListBeginCaptureIntoGraphExt(ze_command_list_handle_t l, zs_graph_t g, const void *pNext) {
    ZS_ENTER();
    (void)pNext;
    ZS_CHECK(g, ZS_MAGIC_GRAPH);
    return capture_begin(l, g);
}

static ze_result_t zs_zeCommandListIsGraphCaptureEnabledExt(ze_command_list_handle_t l) {
    ZS_ENTER();
    ZS_CHECK(l, ZS_MAGIC_LIST);
    return l->x && l->x->capture ? RESULT_QUERY_TRUE : RESULT_QUERY_FALSE;
}

static ze_result_t zs_zeCommandListGetGraphExt(ze_command_list_handle_t l, zs_graph_t *out) {
    ZS_ENTER();
    ZS_CHECK(l, ZS_MAGIC_LIST);
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    *out = l->x ? l->x->capture : NULL;
    return *out ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

static ze_result_t zs_zeCommandListEndGraphCaptureExt(ze_command_list_handle_t l, const void *pNext, zs_graph_t *out) {
    ZS_ENTER();
    (void)pNext;
    ZS_CHECK(l, ZS_MAGIC_LIST);
    if (!l->x || !l->x->capture) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    zs_graph_t g = l->x->capture;
    l->x->capture = NULL;
    g->capturing = NULL;
    zs_truthf("{\"kind\":\"graph\",\"what\":\"capture_end\",\"list\":\"%p\",\"graph\":\"%p\",\"cmds\":%u}", (void *)l, (void *)g,
          g->body->ncmds);
    if (out) *out = g;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeGraphInstantiateExt(zs_graph_t g, const void *pNext, zs_xgraph_t *out) {
    ZS_ENTER();
    (void)pNext;
    ZS_CHECK(g, ZS_MAGIC_GRAPH);
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (g->capturing) return ZE_RESULT_ERROR_INVALID_ARGUMENT; /* still capturing */
    zs_xgraph_t x = calloc(1, sizeof(*x));
    if (!x || !(x->body = body_dup(g->body))) {
        free(x);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    x->magic = ZS_MAGIC_XGRAPH;
    x->src = g;
    x->in_order = g->in_order;
    zs_truthf("{\"kind\":\"graph\",\"what\":\"instantiate\",\"graph\":\"%p\",\"exec_graph\":\"%p\",\"cmds\":%u}", (void *)g,
          (void *)x, x->body->ncmds);
    *out = x;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeGraphIsEmptyExt(zs_graph_t g) {
    ZS_ENTER();
    ZS_CHECK(g, ZS_MAGIC_GRAPH);
    return g->body->ncmds ? RESULT_QUERY_FALSE : RESULT_QUERY_TRUE;
}

static ze_result_t zs_zeGraphDestroyExt(zs_graph_t g) {
    ZS_ENTER();
    ZS_CHECK(g, ZS_MAGIC_GRAPH);
    if (g->capturing) return ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE;
    g->magic = ZS_MAGIC_DEAD;
    zs_body_unref(g->body);
    zs_defer_free(g);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeExecutableGraphGetSourceGraphExt(zs_xgraph_t x, zs_graph_t *out) {
    ZS_ENTER();
    ZS_CHECK(x, ZS_MAGIC_XGRAPH);
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    *out = x->src;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeExecutableGraphDestroyExt(zs_xgraph_t x) {
    ZS_ENTER();
    ZS_CHECK(x, ZS_MAGIC_XGRAPH);
    x->magic = ZS_MAGIC_DEAD;
    zs_body_unref(x->body); /* replays in flight hold their own references */
    zs_defer_free(x);
    return ZE_RESULT_SUCCESS;
}

/* Replays an executable graph on an immediate list's timeline, like appended command lists. */
static ze_result_t zs_zeCommandListAppendGraphExt(ze_command_list_handle_t l, zs_xgraph_t x, const void *pNext,
                                                  ze_event_handle_t sig, uint32_t nw, ze_event_handle_t *w) {
    ZS_ENTER_DEV();
    (void)pNext;
    ZS_CHECK(l, ZS_MAGIC_LIST);
    ZS_CHECK(x, ZS_MAGIC_XGRAPH);
    if (!l->immediate) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE; /* regular lists do not replay graphs here */
    if (l->x && l->x->capture) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE; /* nor are replays captured */
    ze_result_t r = nw ? zs_list_barrier(l, NULL, nw, w) : ZE_RESULT_SUCCESS;
    if (r != ZE_RESULT_SUCCESS) return r;
    pthread_mutex_lock(&zs.lock);
    uint64_t replay = x->replays++;
    r = zs_enqueue_body_locked(l, x->body, x, replay, x->in_order);
    pthread_mutex_unlock(&zs.lock);
    if (r != ZE_RESULT_SUCCESS) return r;
    zs_truthf("{\"kind\":\"graph\",\"what\":\"replay\",\"exec_graph\":\"%p\",\"list\":\"%p\",\"replay\":%" PRIu64 "}", (void *)x,
          (void *)l, replay);
    if (sig || l->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS) r = zs_list_barrier(l, sig, 0, NULL);
    return r;
}

/* Instances of every command of body, in order after what the immediate list has (zs.lock held):
 * an execution of a regular list or a replay of a graph on l's timeline. */
ze_result_t zs_enqueue_body_locked(ze_command_list_handle_t l, struct zs_body *body, void *id, uint64_t exec, bool in_order) {
    ze_result_t r = zs_ring_wait_locked(l->stream);
    if (r != ZE_RESULT_SUCCESS) return r;
    uint64_t now = zs_now();
    pid_t tid = zs_gettid();
    for (uint32_t k = 0; k < body->ncmds; k++) {
        struct zs_inst *in = calloc(1, sizeof(*in));
        if (!in) continue; /* out of memory: the command is dropped */
        in->cmd = body->cmds[k];
        in->body = body;
        atomic_fetch_add(&body->refs, 1);
        in->in_order = in_order || l->in_order || l->copy_only;
        in->immediate = true;
        in->submit_ns = now;
        in->exec = exec;
        in->device = l->device->id;
        in->ordinal = (int)l->ordinal;
        in->engine_index = l->stream->engine->index;
        in->list = id;
        in->context = l->context;
        in->tid = tid;
        zs_enqueue_locked(l->stream, in);
    }
    return ZE_RESULT_SUCCESS;
}

/* ---------------------------------------------------------------- the experimental forms */
/* ZE_experimental_record_replay_graph, as drivers offered it before spec 1.17 (by name only,
 * zeDriverGetExtensionFunctionAddress): the same calls, EndGraphCapture and InstantiateGraph with
 * the pNext last. */
static ze_result_t zs_zeGraphCreateExp(ze_context_handle_t ctx, zs_graph_t *out, void *pNext) {
    return zs_zeGraphCreateExt(ctx, pNext, out);
}
static ze_result_t zs_zeCommandListBeginGraphCaptureExp(ze_command_list_handle_t l, void *pNext) {
    return zs_zeCommandListBeginGraphCaptureExt(l, pNext);
}
static ze_result_t zs_zeCommandListBeginCaptureIntoGraphExp(ze_command_list_handle_t l, zs_graph_t g, void *pNext) {
    return zs_zeCommandListBeginCaptureIntoGraphExt(l, g, pNext);
}
static ze_result_t zs_zeCommandListEndGraphCaptureExp(ze_command_list_handle_t l, zs_graph_t *out, void *pNext) {
    return zs_zeCommandListEndGraphCaptureExt(l, pNext, out);
}
static ze_result_t zs_zeCommandListInstantiateGraphExp(zs_graph_t g, zs_xgraph_t *out, void *pNext) {
    return zs_zeGraphInstantiateExt(g, pNext, out);
}

void *zs_graph_ext_function(const char *name) {
    static const struct {
        const char *name;
        void *fn;
    } fns[] = {
        {"zeGraphCreateExp", (void *)zs_zeGraphCreateExp},
        {"zeCommandListBeginGraphCaptureExp", (void *)zs_zeCommandListBeginGraphCaptureExp},
        {"zeCommandListBeginCaptureIntoGraphExp", (void *)zs_zeCommandListBeginCaptureIntoGraphExp},
        {"zeCommandListEndGraphCaptureExp", (void *)zs_zeCommandListEndGraphCaptureExp},
        {"zeCommandListInstantiateGraphExp", (void *)zs_zeCommandListInstantiateGraphExp},
        {"zeCommandListAppendGraphExp", (void *)zs_zeCommandListAppendGraphExt},
        {"zeCommandListIsGraphCaptureEnabledExp", (void *)zs_zeCommandListIsGraphCaptureEnabledExt},
        {"zeGraphIsEmptyExp", (void *)zs_zeGraphIsEmptyExt},
        {"zeGraphDestroyExp", (void *)zs_zeGraphDestroyExt},
        {"zeExecutableGraphDestroyExp", (void *)zs_zeExecutableGraphDestroyExt},
    };
    for (size_t i = 0; name && i < sizeof(fns) / sizeof(fns[0]); i++)
        if (strcmp(name, fns[i].name) == 0) return fns[i].fn;
    return NULL;
}

/* ---------------------------------------------------------------- tables */
void zs_graph_fill_list(void *t, ze_api_version_t v) {
    ZS_SET(t, v, 17, 45, zs_zeCommandListBeginGraphCaptureExt);
    ZS_SET(t, v, 17, 46, zs_zeCommandListBeginCaptureIntoGraphExt);
    ZS_SET(t, v, 17, 47, zs_zeCommandListIsGraphCaptureEnabledExt);
    ZS_SET(t, v, 17, 48, zs_zeCommandListEndGraphCaptureExt);
    ZS_SET(t, v, 17, 49, zs_zeCommandListGetGraphExt);
    ZS_SET(t, v, 17, 50, zs_zeCommandListAppendGraphExt);
}

void zs_graph_fill_list_exp(void *t, ze_api_version_t v) {
    ZS_SET(t, v, 8, 0, zs_zeCommandListCreateCloneExp);
    ZS_SET(t, v, 8, 2, zs_zeCommandListGetNextCommandIdExp);
    ZS_SET(t, v, 8, 3, zs_zeCommandListUpdateMutableCommandsExp);
    ZS_SET(t, v, 8, 4, zs_zeCommandListUpdateMutableCommandSignalEventExp);
    ZS_SET(t, v, 8, 5, zs_zeCommandListUpdateMutableCommandWaitEventsExp);
    ZS_SET(t, v, 10, 6, zs_zeCommandListGetNextCommandIdWithKernelsExp);
    ZS_SET(t, v, 10, 7, zs_zeCommandListUpdateMutableCommandKernelsExp);
    ZS_SET(t, v, 17, 8, zs_zeCommandListIsMutableExp);
}

void zs_graph_fill_graph(void *t, ze_api_version_t v) {
    ZS_SET(t, v, 17, 0, zs_zeGraphCreateExt);
    ZS_SET(t, v, 17, 3, zs_zeGraphInstantiateExt);
    ZS_SET(t, v, 17, 4, zs_zeGraphIsEmptyExt);
    ZS_SET(t, v, 17, 6, zs_zeGraphDestroyExt);
}

void zs_graph_fill_executable_graph(void *t, ze_api_version_t v) {
    ZS_SET(t, v, 17, 0, zs_zeExecutableGraphGetSourceGraphExt);
    ZS_SET(t, v, 17, 1, zs_zeExecutableGraphDestroyExt);
}
