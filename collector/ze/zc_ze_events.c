/* SPDX-License-Identifier: MIT */
/* The application's events: which timed operation last re-signalled each (so that its own
 * timestamp queries see that operation's times, not our barrier's), and the hooks of the calls
 * that change which operation an event belongs to. */
#include "zc_ze_cb.h"

#include <stdlib.h>

static pthread_mutex_t uev_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---------------------------------------------------------------- which operation an app event holds */
/* The app may ask its own event for timestamps; it gets this operation's. */
void zc_ze_uevent_complete(struct zc_rec *r) {
    if (!r->user_event) return;
    pthread_mutex_lock(&uev_lock);
    struct zc_uevent *u = zc_map_get(&zc_ze.uevents, r->user_event);
    if (u && u->rec == r) {
        u->rec = NULL;
        u->have_ts = true;
        u->ts_start = r->ts_start;
        u->ts_end = r->ts_end;
    }
    pthread_mutex_unlock(&uev_lock);
}

/* A record dropped before completion: an app event must not keep pointing at it (it is reused). */
void zc_ze_uevent_drop(struct zc_rec *r) {
    if (!r->user_event) return;
    pthread_mutex_lock(&uev_lock);
    struct zc_uevent *u = zc_map_get(&zc_ze.uevents, r->user_event);
    if (u && u->rec == r) u->rec = NULL;
    pthread_mutex_unlock(&uev_lock);
}

/* The application event's record, created if absent (NULL when out of memory); uev_lock held. */
static struct zc_uevent *uevent_locked(ze_event_handle_t ev) {
    struct zc_uevent *u = zc_map_get(&zc_ze.uevents, ev);
    if (!u && (u = calloc(1, sizeof(*u)))) {
        int err;
        zc_map_put(&zc_ze.uevents, ev, u, &err);
        if (err) {
            free(u);
            u = NULL;
        }
        /* from now on the hooks that keep it right run while recording is off too */
        if (u && !atomic_load_explicit(&zc_ze_uevents_any, memory_order_relaxed)) atomic_store(&zc_ze_uevents_any, true);
    }
    return u;
}

void zc_ze_uevent_set(ze_event_handle_t ev, struct zc_rec *r) {
    pthread_mutex_lock(&uev_lock);
    struct zc_uevent *u = uevent_locked(ev);
    if (u) {
        u->rec = r;
        u->have_ts = false;
        u->stream = r ? r->stream : NULL;
        u->inj = r ? r->inj : NULL;
    }
    pthread_mutex_unlock(&uev_lock);
}

void zc_ze_uevent_set_inj(ze_event_handle_t ev, ze_event_handle_t inj) {
    pthread_mutex_lock(&uev_lock);
    struct zc_uevent *u = uevent_locked(ev);
    if (u) {
        u->rec = NULL;
        u->have_ts = false;
        u->stream = NULL;
        u->inj = inj;
    }
    pthread_mutex_unlock(&uev_lock);
}

void zc_ze_uevent_forget_inj(ze_event_handle_t ev, ze_event_handle_t inj) {
    if (!ev) return;
    pthread_mutex_lock(&uev_lock);
    struct zc_uevent *u = zc_map_get(&zc_ze.uevents, ev);
    if (u && u->inj == inj) u->inj = NULL;
    pthread_mutex_unlock(&uev_lock);
}

ze_event_handle_t zc_ze_uevent_inj(ze_event_handle_t ev) {
    pthread_mutex_lock(&uev_lock);
    struct zc_uevent *u = zc_map_get(&zc_ze.uevents, ev);
    ze_event_handle_t inj = u ? u->inj : NULL;
    pthread_mutex_unlock(&uev_lock);
    return inj;
}

void zc_ze_uevent_clear(ze_event_handle_t ev, bool destroy) {
    pthread_mutex_lock(&uev_lock);
    struct zc_uevent *u = destroy ? zc_map_del(&zc_ze.uevents, ev) : zc_map_get(&zc_ze.uevents, ev);
    if (u) {
        u->rec = NULL;
        u->have_ts = false;
        u->inj = NULL;
        if (destroy) free(u);
    }
    pthread_mutex_unlock(&uev_lock);
}

/* The stream of the pending operation that last re-signalled ev, or NULL. */
struct zc_stream *zc_ze_uevent_pending(ze_event_handle_t ev) {
    struct zc_stream *s = NULL;
    pthread_mutex_lock(&uev_lock);
    struct zc_uevent *u = zc_map_get(&zc_ze.uevents, ev);
    if (u && u->rec) s = u->stream;
    pthread_mutex_unlock(&uev_lock);
    return s;
}

/* Fills dst with the timestamps of the operation that last re-signalled ev; false if none. */
bool zc_ze_uevent_read(ze_event_handle_t ev, ze_kernel_timestamp_result_t *dst) {
    bool ok = false;
    pthread_mutex_lock(&uev_lock);
    struct zc_uevent *u = zc_map_get(&zc_ze.uevents, ev);
    if (u && u->have_ts) {
        dst->global.kernelStart = dst->context.kernelStart = u->ts_start;
        dst->global.kernelEnd = dst->context.kernelEnd = u->ts_end;
        ok = true;
    }
    pthread_mutex_unlock(&uev_lock);
    return ok;
}

/* ---------------------------------------------------------------- hooks */
/* A signal or reset appended by the app: its event no longer belongs to a timed operation. */
void zc_ze_post_zeCommandListAppendSignalEvent(ze_command_list_append_signal_event_params_t *p, ze_result_t r,
                                               struct zc_ze_call *c) {
    if (r == ZE_RESULT_SUCCESS && *p->phEvent) zc_ze_uevent_clear(*p->phEvent, false);
}
void zc_ze_post_zeCommandListAppendEventReset(ze_command_list_append_event_reset_params_t *p, ze_result_t r,
                                              struct zc_ze_call *c) {
    if (r == ZE_RESULT_SUCCESS && *p->phEvent) zc_ze_uevent_clear(*p->phEvent, false);
}

void zc_ze_pre_zeEventHostReset(ze_event_host_reset_params_t *p, struct zc_ze_call *c) {
    zc_ze_uevent_clear(*p->phEvent, false);
}

void zc_ze_pre_zeEventDestroy(ze_event_destroy_params_t *p, struct zc_ze_call *c) {
    zc_ze_uevent_clear(*p->phEvent, true);
    zc_ze_cb_forget(*p->phEvent);
}
