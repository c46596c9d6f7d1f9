/* SPDX-License-Identifier: MIT */
/* The Append path, inline: what every timed Append does before and after the driver's call (our
 * event in place of the app's signal event; one inbox entry or one list template). Each Append
 * hook calls these; their slow paths are in zc_ze_append.c (and the list's event pool refill in
 * zc_ze_records.c). Hooks of new Append-like entry points include this header. */
#ifndef ZC_ZE_APPEND_H
#define ZC_ZE_APPEND_H

#include "zc_ze_cb.h"
#include "zc_ze_inbox.h"
#include "zc_ze_objects.h"

#include <stdlib.h>

/* ---------------------------------------------------------------- slow paths (zc_ze_append.c) */
/* An operation that goes untimed: counted per executed operation (a regular list's at each
 * execution, see the Execute prologue). */
void zc_ze_untimed_op(struct zc_list *l);
/* An untimed operation that signals the app's event ev itself: ev's timestamps are its now. */
void zc_ze_untimed_signal(struct zc_list *l, ze_event_handle_t ev);
/* The re-signal barrier for the app's event, right after its operation. */
void zc_ze_resignal(struct zc_ze_call *c, struct zc_list *l, ze_command_list_handle_t hl);
/* An immediate Append that re-signals an app event: its record exists at once. */
void zc_ze_imm_post_uevent(struct zc_ze_call *c, struct zc_list *l, const struct zc_opdesc *op, uint64_t seq);
/* An inbox entry that needs a new block (a drain first if nobody collects the list). */
bool zc_ze_imm_push_slow(struct zc_inbox *ib, const struct zc_inbox_entry *e);
void zc_ze_tmpl_grow_failed(void);
/* Kernel windows and filters: counts the launch, says whether it is timed. */
bool zc_ze_launch_select(struct zc_ze_call *c, ze_kernel_handle_t k);
/* Region ids of an operation, as the older Append entries name theirs (zc_ze_append.c). */
uint32_t zc_ze_kernel_region(ze_kernel_handle_t k);
/* A copy's region and ZC_XF (its direction and offload class); a fill's region and ZC_XF. */
uint32_t zc_ze_copy_region(uint32_t api, const void *src, const void *dst, uint64_t bytes, uint8_t *xf);
uint32_t zc_ze_fill_region(uint32_t api, const void *dst);
static inline uint8_t zc_ze_fill_xf(uint64_t bytes) {
    return ZC_XF(ZC_DIR_NONE, bytes <= ZC_OFFLOAD_SMALL ? ZC_OFC_FILL_SMALL : ZC_OFC_FILL_LARGE);
}

/* ---------------------------------------------------------------- the list's own events (no lock) */
static inline ze_event_handle_t zc_ze_event_get_inj(struct zc_list *l) {
    if (__builtin_expect(l->npool != 0, 1)) return l->pool[--l->npool];
    return zc_ze_event_refill(l);
}

/* Which engine ran an operation of l: a copy or fill of an in-order compute list with the
 * copy-offload hint, of a class the driver offloads (l->offload: a bit per ZC_OFC_*;
 * zc_ze_lifetime.c), ran on a copy engine. kind is a constant at every call site: launches and
 * barriers pay nothing, a transfer one load of its list's flags. */
static inline uint8_t zc_ze_op_engine(const struct zc_list *l, enum zc_op_kind kind, uint8_t cls) {
    if (kind != ZC_OP_COPY && kind != ZC_OP_IMAGE && kind != ZC_OP_FILL) return ZC_ENG_LIST;
    return (uint8_t)((l->offload >> cls) & 1u);
}

/* ---------------------------------------------------------------- prologue and epilogue */
/* Prologue of every timed Append: swap in our event (from the list's own pool: no lock). */
static inline void zc_ze_timed_pre(struct zc_ze_call *c, ze_command_list_handle_t hl, ze_event_handle_t *sig) {
    if (!zc_on(ZC_F_DEVICE_TIMING)) return;
    /* never a closed call here: launches come only through zc_ze_launch_select then, which stops them */
    struct zc_list *l = zc_ze_list(hl);
    if (!l || !l->timed || !zc_ze_dev_on_fast(l->dev)) {
        if (__builtin_expect(*sig != NULL, 0)) zc_ze_untimed_signal(NULL, *sig);
        return;
    }
    /* an application event is re-signalled after our event: the driver must be able to (a
     * counter-based event: on this list, zc_ze_cb.c), and our events of a list read back between
     * executions are reset from the host, under no barrier */
    if (__builtin_expect(*sig != NULL, 0) &&
        (!l->resignal || (!l->immediate && l->mode == ZC_REG_SERIAL) || !zc_ze_cb_may_move(l, *sig))) {
        zc_ze_untimed_signal(l, *sig);
        return;
    }
    ze_event_handle_t inj = zc_ze_event_get_inj(l);
    if (!inj) {
        if (__builtin_expect(*sig != NULL, 0)) zc_ze_untimed_signal(l, *sig);
        else zc_ze_untimed_op(l);
        return;
    }
    c->ptr = l;
    c->inj = inj;
    c->user_event = *sig;
    *sig = inj;
    /* the op cannot start before this moment: the lower bound for unrolling its timestamps */
    if (!c->t0) c->t0 = zc_tick();
}

/* A template of a regular list's timed Append (false: out of memory, none kept). */
bool zc_ze_tmpl_grow(struct zc_list *l);
static inline bool zc_ze_tmpl_add(struct zc_list *l, const struct zc_opdesc *op, ze_event_handle_t inj,
                                  ze_event_handle_t user_event) {
    if (__builtin_expect(l->ntmpl == l->cap_tmpl, 0) && !zc_ze_tmpl_grow(l)) return false;
    struct zc_tmpl *tp = &l->tmpl[l->ntmpl++];
    tp->op = *op;
    tp->inj = inj;
    tp->user_event = user_event;
    return true;
}
/* The rare endings of a timed Append, out of line: the driver's call failed, or the app's event
 * is re-signalled after ours (kd: kind | xf << 8). */
void zc_ze_timed_post_rare(struct zc_ze_call *c, ze_command_list_handle_t hl, ze_result_t r, uint32_t kd,
                           uint32_t region, uint64_t bytes);
/* An immediate Append's entry that does not go in place: a new block, or a synchronous list. */
void zc_ze_imm_post_slow(struct zc_list *l, const struct zc_inbox_entry *e);

/* Epilogue of every timed Append: one 64-byte entry into the immediate list's inbox, or one
 * template into the regular list; no lock, no allocation once warm. xf: a transfer's direction
 * and offload class (ZC_XF; ZC_DIR_NONE for the others). */
static inline void zc_ze_timed_post(struct zc_ze_call *c, ze_command_list_handle_t hl, ze_event_handle_t *sig,
                                    ze_result_t r, enum zc_op_kind kind, uint32_t region, uint64_t bytes, uint8_t xf) {
    if (!c->inj) return;
    *sig = c->user_event;
    /* one test for both: the event's bits or'ed with the result's */
    if (__builtin_expect(((uintptr_t)c->user_event | (uint32_t)r) != 0, 0)) {
        zc_ze_timed_post_rare(c, hl, r, (uint32_t)kind | (uint32_t)xf << 8, region, bytes);
        return;
    }
    struct zc_list *l = c->ptr;
    struct zc_thread *t = c->t;
    /* callsite ids are unique per process: thread index in the high bits (zc_thread) */
    uint64_t callsite = ++t->callsite;
    c->callsite = callsite;
    struct zc_opdesc op = {(uint8_t)kind, ZC_XF_DIR(xf), zc_ze_op_engine(l, kind, ZC_XF_CLS(xf)), 0, region,
                           t->comm_rank, bytes, callsite};
    if (l->immediate) {
        struct zc_inbox *ib = l->inbox;
        if (__builtin_expect(zc_ze_inbox_fast(ib), 1)) { /* written in place: one cache line */
            struct zc_inbox_entry *e = zc_ze_inbox_slot(ib);
            e->inj = c->inj;
            e->submit = c->t0;
            e->rec = NULL;
            e->op = op;
            zc_ze_inbox_publish(ib);
        } else {
            struct zc_inbox_entry en = {c->inj, c->t0, 0, NULL, op};
            zc_ze_imm_post_slow(l, &en);
        }
        return;
    }
    zc_ze_tmpl_add(l, &op, c->inj, NULL);
}

static inline void zc_ze_launch_pre(struct zc_ze_call *c, ze_command_list_handle_t hl, ze_event_handle_t *sig,
                                    ze_kernel_handle_t k) {
    /* not timed: its call region stays */
    if (__builtin_expect(zc_win_kernels, 0) && !zc_ze_launch_select(c, k)) return;
    zc_ze_timed_pre(c, hl, sig);
}

#endif
