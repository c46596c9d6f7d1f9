/* SPDX-License-Identifier: MIT */
/* Hooks of mutable command lists (spec 1.8/1.10, the CommandListExp table: updatable SYCL graphs
 * under Unified Runtime v1) and of list clones. A command id names the application's next Append
 * (the collector appends nothing of its own before it: its re-signal barrier follows the
 * operation), so the template that Append makes is the command's: a kernel update renames the
 * template from the next execution on. A command whose signal event the application may update
 * (ZE_MUTABLE_COMMAND_EXP_FLAG_SIGNAL_EVENT) is left untimed: an update would take our event off
 * it, and the helper lists that wait for our event would then wait forever. A clone is a list of
 * its own whose commands signal the original's events. */
#include "zc_ze_append.h"

#include <stdlib.h>
#include <string.h>

/* The command ids a list handed out, by the template each names. Checked when used: the template
 * at that index must have been made by the very next timed Append on the same thread (callsite
 * ids are unique per process), else the command was not timed. */
struct mut_id {
    uint64_t id;
    uint32_t tmpl;
    uint64_t callsite;
};
struct mut_list {
    uint64_t build; /* the list's build the ids belong to (a reset starts afresh) */
    struct mut_id *ids;
    uint32_t n, cap;
    bool untimed_next; /* the list was switched off for one command: switched on again after it */
};

static pthread_mutex_t mut_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool any_untimed; /* a list was switched off for a command: Close looks */
/* list handle -> struct mut_list (entries of destroyed lists are recognised by their callsites) */
static struct zc_map muts = ZC_MAP_INIT;

/* The list's state, created if need be (mut_lock held). */
static struct mut_list *mut_get(ze_command_list_handle_t h, const struct zc_list *l) {
    struct mut_list *m = zc_map_get(&muts, h);
    if (!m) {
        int err;
        if (!(m = calloc(1, sizeof(*m)))) return NULL;
        zc_map_put(&muts, h, m, &err);
        if (err) {
            free(m);
            return NULL;
        }
        m->build = l->build;
    }
    if (m->build != l->build) {
        m->n = 0;
        m->build = l->build;
    }
    return m;
}

static bool ids_room(struct mut_list *m) {
    if (m->n < m->cap) return true;
    uint32_t cap = m->cap ? 2 * m->cap : 16;
    struct mut_id *n = realloc(m->ids, cap * sizeof(*n));
    if (!n) return false;
    m->ids = n;
    m->cap = cap;
    return true;
}

/* The Append after an untimed command id is done: the list is timed again (mut_lock held). */
static void timing_back(struct zc_list *l, struct mut_list *m) {
    if (!m->untimed_next) return;
    m->untimed_next = false;
    l->timed = true;
}

static void next_id(ze_command_list_handle_t h, const ze_mutable_command_id_exp_desc_t *desc, const uint64_t *id,
                    ze_result_t r, struct zc_ze_call *c) {
    if (r != ZE_RESULT_SUCCESS || !id) return;
    struct zc_list *l = zc_ze_list(h);
    if (!l || l->immediate) return;
    pthread_mutex_lock(&mut_lock);
    struct mut_list *m = mut_get(h, l);
    if (m) timing_back(l, m);
    if (m && desc && (desc->flags & ZE_MUTABLE_COMMAND_EXP_FLAG_SIGNAL_EVENT) && l->timed) {
        static atomic_bool said;
        if (!atomic_exchange(&said, true))
            ZC_WARN("a mutable command's signal event may be updated (ZE_MUTABLE_COMMAND_EXP_FLAG_SIGNAL_EVENT): such "
                    "commands run untimed, since an update would take zecoll's event off them");
        l->timed = false; /* only for the Append that comes next (only the list's thread appends) */
        atomic_store(&any_untimed, true);
        m->untimed_next = true;
        zc_ze_untimed_op(l);
    } else if (m && c->t && ids_room(m)) {
        m->ids[m->n++] = (struct mut_id){*id, l->ntmpl, c->t->callsite + 1};
    } /* else out of memory: a kernel update of that command will not rename it */
    pthread_mutex_unlock(&mut_lock);
}

void zc_ze_post_zeCommandListGetNextCommandIdExp(zc_zeCommandListGetNextCommandIdExp_params_t *p, ze_result_t r,
                                                 struct zc_ze_call *c) {
    next_id(*p->phCommandList, *p->pdesc, *p->ppCommandId, r, c);
}
void zc_ze_post_zeCommandListGetNextCommandIdWithKernelsExp(zc_zeCommandListGetNextCommandIdWithKernelsExp_params_t *p,
                                                            ze_result_t r, struct zc_ze_call *c) {
    next_id(*p->phCommandList, *p->pdesc, *p->ppCommandId, r, c);
}

/* Close ends the list's Appends: an untimed command id's list is timed again (for a reset). */
void zc_ze_post_zeCommandListClose(ze_command_list_close_params_t *p, ze_result_t r, struct zc_ze_call *c) {
    if (!atomic_load_explicit(&any_untimed, memory_order_relaxed)) return; /* the Close of a program that never declared one */
    pthread_mutex_lock(&mut_lock);
    struct mut_list *m = zc_map_get(&muts, *p->phCommandList);
    struct zc_list *l = m && m->untimed_next ? zc_ze_list(*p->phCommandList) : NULL;
    if (l) timing_back(l, m);
    pthread_mutex_unlock(&mut_lock);
}

/* The template command `id` made, or UINT32_MAX (mut_lock and l->lock held). */
static uint32_t template_of(ze_command_list_handle_t h, const struct zc_list *l, uint64_t id) {
    struct mut_list *m = zc_map_get(&muts, h);
    if (!m || m->build != l->build) return UINT32_MAX;
    for (uint32_t i = 0; i < m->n; i++)
        if (m->ids[i].id == id) {
            uint32_t k = m->ids[i].tmpl;
            return k < l->ntmpl && l->tmpl[k].op.callsite == m->ids[i].callsite ? k : UINT32_MAX;
        }
    return UINT32_MAX;
}

/* A kernel update: the command's records are named after the new kernel from now on. */
void zc_ze_post_zeCommandListUpdateMutableCommandKernelsExp(zc_zeCommandListUpdateMutableCommandKernelsExp_params_t *p,
                                                            ze_result_t r, struct zc_ze_call *c) {
    if (r != ZE_RESULT_SUCCESS || !*p->ppCommandId || !*p->pphKernels) return;
    struct zc_list *l = zc_ze_list(*p->phCommandList);
    if (!l || l->immediate) return;
    pthread_mutex_lock(&mut_lock);
    pthread_mutex_lock(&l->lock);
    for (uint32_t i = 0; i < *p->pnumKernels; i++) {
        uint32_t k = template_of(*p->phCommandList, l, (*p->ppCommandId)[i]);
        if (k != UINT32_MAX && l->tmpl[k].op.kind == ZC_OP_KERNEL)
            l->tmpl[k].op.region = zc_ze_kernel_region((*p->pphKernels)[i]);
    }
    pthread_mutex_unlock(&l->lock);
    pthread_mutex_unlock(&mut_lock);
}

/* A signal-event update reaches only commands declared with the flag, which run untimed (the
 * driver refuses the others). One that reached a timed command anyway is said once. */
void zc_ze_post_zeCommandListUpdateMutableCommandSignalEventExp(
    zc_zeCommandListUpdateMutableCommandSignalEventExp_params_t *p, ze_result_t r, struct zc_ze_call *c) {
    if (r != ZE_RESULT_SUCCESS) return;
    struct zc_list *l = zc_ze_list(*p->phCommandList);
    if (!l || l->immediate) return;
    pthread_mutex_lock(&mut_lock);
    pthread_mutex_lock(&l->lock);
    uint32_t k = template_of(*p->phCommandList, l, *p->pcommandId);
    pthread_mutex_unlock(&l->lock);
    pthread_mutex_unlock(&mut_lock);
    static atomic_bool said;
    if (k != UINT32_MAX && !atomic_exchange(&said, true))
        ZC_WARN("the driver updated the signal event of a command zecoll timed, which it should refuse (the command "
                "was not declared with ZE_MUTABLE_COMMAND_EXP_FLAG_SIGNAL_EVENT): that command's records are lost");
}

/* ---------------------------------------------------------------- clones */
/* A clone has the original's commands, our events included: a list of its own with the same
 * templates. Neither list hands those events out again (shared_inj). */
void zc_ze_post_zeCommandListCreateCloneExp(zc_zeCommandListCreateCloneExp_params_t *p, ze_result_t r,
                                            struct zc_ze_call *c) {
    if (r != ZE_RESULT_SUCCESS || !*p->pphClonedCommandList || !**p->pphClonedCommandList) return;
    struct zc_list *src = zc_ze_list(*p->phCommandList);
    if (!src || src->immediate) return;
    struct zc_list *l = zc_ze_list_like(**p->pphClonedCommandList, src);
    if (!l) return;
    pthread_mutex_lock(&src->lock);
    l->mode = src->mode;
    l->timed = src->timed;
    l->nuntimed = src->nuntimed;
    if (src->ntmpl && (l->tmpl = malloc(src->ntmpl * sizeof(*l->tmpl)))) {
        memcpy(l->tmpl, src->tmpl, src->ntmpl * sizeof(*l->tmpl));
        l->ntmpl = l->cap_tmpl = src->ntmpl;
        l->shared_inj = src->shared_inj = true;
        l->fresh = src->fresh = false; /* either one's execution signals the other's events */
    } else if (src->ntmpl) {
        l->nuntimed += src->ntmpl; /* out of memory: its executions go untimed */
    }
    pthread_mutex_unlock(&src->lock);
    zc_ze_list_register(l);
}
