/* SPDX-License-Identifier: MIT */
/* Hooks of graph capture and replay (spec 1.17: SYCL native recording under Unified Runtime v2,
 * PyTorch XPUGraph). While an immediate list captures, its Appends do not run: the list is looked
 * up as a regular list of ours (a capture list) that collects one template per timed Append, so
 * nothing is recorded as executed. The graph keeps that list; each executable graph made from it
 * is looked up as the same list, and every zeCommandListAppendGraphExt is an execution of it on
 * the replaying immediate list's timeline (zc_ze_exec.c, through zc_ze_submit.c's queue of an
 * immediate list), its records on that list's stream.
 *
 * A replay's commands are the graph's: they signal the same events of ours, whichever executable
 * graph replays them, and no list of ours can be put before a graph inside the driver's replay. So
 * capture lists are read back from the host (ZC_REG_SERIAL): a replay of a graph waits until the
 * previous replay of it was read, then its events are reset from the host; two replays in flight
 * are never mixed up, at the cost of that wait (counted as a stall). Operations that signal an
 * application event are not timed while captured (their re-signal could fire early). */
#include "zc_ze_objects.h"

#include <stdlib.h>

/* A capture list and who runs it: the graph it is the content of, its executable graphs. */
struct zc_glist {
    struct zc_list *l;
    uint32_t refs; /* graph_lock */
};

/* An immediate list capturing: what its handle maps to again at the end. */
struct zc_capture {
    struct zc_list *orig;
    struct zc_list *l;
    ze_graph_handle_t into; /* BeginCaptureIntoGraphExt's graph, NULL for BeginGraphCaptureExt */
};

static pthread_mutex_t graph_lock = PTHREAD_MUTEX_INITIALIZER;
static struct zc_map graphs = ZC_MAP_INIT;   /* graph handle -> struct zc_glist */
static struct zc_map xgraphs = ZC_MAP_INIT;  /* executable graph handle -> struct zc_glist */
static struct zc_map captures = ZC_MAP_INIT; /* immediate list handle -> struct zc_capture */

static void glist_unref(struct zc_glist *g) {
    pthread_mutex_lock(&graph_lock);
    bool last = g && --g->refs == 0;
    pthread_mutex_unlock(&graph_lock);
    if (!last) return;
    zc_ze_list_release(g->l);
    free(g);
}

/* A capture list for immediate list h (orig): read back from the host, see above. */
static struct zc_list *capture_list(ze_command_list_handle_t h, struct zc_list *orig) {
    struct zc_list *l = zc_ze_list_like(h, orig);
    if (!l) return NULL;
    l->mode = zc_ze_caps.host_read && l->mode != ZC_REG_NONE && orig->timed ? ZC_REG_SERIAL : ZC_REG_NONE;
    l->timed = l->mode != ZC_REG_NONE;
    return l;
}

static void capture_begin(ze_command_list_handle_t h, ze_graph_handle_t into) {
    struct zc_list *orig = zc_ze_list(h);
    if (!orig || !orig->immediate) return; /* unknown, or already capturing (a driver would refuse) */
    struct zc_capture *cap = calloc(1, sizeof(*cap));
    if (!cap) return;
    cap->orig = orig;
    cap->into = into;
    uint32_t earlier = 0;
    pthread_mutex_lock(&graph_lock);
    struct zc_glist *g = into ? zc_map_get(&graphs, into) : NULL;
    if (g && g->refs == 1) { /* more of a graph nothing runs yet: its list goes on */
        cap->l = g->l;
        zc_map_del(&graphs, into);
        free(g);
    } else if (g) { /* its executable graphs keep the earlier list; later ones run those commands untimed */
        earlier = g->l->ntmpl + g->l->nuntimed;
    }
    pthread_mutex_unlock(&graph_lock);
    if (!cap->l && (cap->l = capture_list(h, orig))) cap->l->nuntimed += earlier;
    int err = !cap->l;
    if (!err) zc_map_put(&captures, h, cap, &err);
    if (err) {
        if (cap->l) zc_ze_list_release(cap->l);
        free(cap);
        return;
    }
    /* from here on the Appends on h find the capture list (the caches see a new generation) */
    zc_map_put(&zc_ze.lists, h, cap->l, &err); /* replaces orig: no allocation */
    zc_ze_list_gone();
}

void zc_ze_post_zeCommandListBeginGraphCaptureExt(zc_zeCommandListBeginGraphCaptureExt_params_t *p, ze_result_t r,
                                                  struct zc_ze_call *c) {
    if (r == ZE_RESULT_SUCCESS) capture_begin(*p->phCommandList, NULL);
}
void zc_ze_post_zeCommandListBeginCaptureIntoGraphExt(zc_zeCommandListBeginCaptureIntoGraphExt_params_t *p,
                                                      ze_result_t r, struct zc_ze_call *c) {
    if (r == ZE_RESULT_SUCCESS && *p->phGraph) capture_begin(*p->phCommandList, *p->phGraph);
}

void zc_ze_post_zeCommandListEndGraphCaptureExt(zc_zeCommandListEndGraphCaptureExt_params_t *p, ze_result_t r,
                                                struct zc_ze_call *c) {
    if (r != ZE_RESULT_SUCCESS) return; /* still capturing */
    ze_command_list_handle_t h = *p->phCommandList;
    struct zc_capture *cap = zc_map_del(&captures, h);
    if (!cap) return;
    int err;
    zc_map_put(&zc_ze.lists, h, cap->orig, &err); /* replaces the capture list: no allocation */
    zc_ze_list_gone();
    ze_graph_handle_t gh = *p->pphGraph && **p->pphGraph ? **p->pphGraph : cap->into;
    struct zc_glist *g = gh ? calloc(1, sizeof(*g)) : NULL, *old = NULL;
    err = !g;
    if (g) {
        *g = (struct zc_glist){cap->l, 1};
        pthread_mutex_lock(&graph_lock);
        old = zc_map_put(&graphs, gh, g, &err);
        pthread_mutex_unlock(&graph_lock);
    }
    if (err) {
        zc_ze_list_release(cap->l);
        free(g);
    }
    glist_unref(old); /* the graph's earlier content, still run by its executable graphs */
    free(cap);
}

/* An executable graph runs the graph's capture list: looked up as that list. */
void zc_ze_post_zeGraphInstantiateExt(zc_zeGraphInstantiateExt_params_t *p, ze_result_t r, struct zc_ze_call *c) {
    if (r != ZE_RESULT_SUCCESS || !*p->pphExecutableGraph || !**p->pphExecutableGraph) return;
    ze_executable_graph_handle_t x = **p->pphExecutableGraph;
    pthread_mutex_lock(&graph_lock);
    struct zc_glist *g = zc_map_get(&graphs, *p->phGraph);
    int err = 1;
    if (g) {
        zc_map_put(&xgraphs, x, g, &err);
        if (!err) zc_map_put(&zc_ze.lists, (ze_command_list_handle_t)(void *)x, g->l, &err);
        if (!err) g->refs++;
        else zc_map_del(&xgraphs, x);
    }
    pthread_mutex_unlock(&graph_lock);
}

void zc_ze_pre_zeExecutableGraphDestroyExt(zc_zeExecutableGraphDestroyExt_params_t *p, struct zc_ze_call *c) {
    struct zc_glist *g = zc_map_del(&xgraphs, *p->phGraph);
    if (!g) return;
    zc_map_del(&zc_ze.lists, (ze_command_list_handle_t)(void *)*p->phGraph);
    zc_ze_list_gone();
    glist_unref(g);
}

void zc_ze_pre_zeGraphDestroyExt(zc_zeGraphDestroyExt_params_t *p, struct zc_ze_call *c) {
    glist_unref(zc_map_del(&graphs, *p->phGraph));
}

/* ---------------------------------------------------------------- replays */
void zc_ze_pre_zeCommandListAppendGraphExt(zc_zeCommandListAppendGraphExt_params_t *p, struct zc_ze_call *c) {
    ze_command_list_handle_t x = (ze_command_list_handle_t)(void *)*p->phGraph;
    struct zc_list *l = zc_ze_list(x);
    if (!l || !l->ntmpl) return;
    struct zc_queue *q = zc_ze_imm_queue(*p->phCommandList);
    if (!q) {
        /* on a regular list, a capturing one or an untimed one: not recorded */
        if (c->t && zc_on(ZC_F_DEVICE_TIMING)) atomic_fetch_add(&zc_ze.untimed, l->ntmpl + l->nuntimed);
        return;
    }
    /* one execution of the capture list (the call's graph argument is left as it is) */
    uint32_t n = 1;
    ze_command_list_handle_t one[1] = {x}, *lists = one;
    zc_ze_exec_pre(c, q, &n, &lists);
}

void zc_ze_post_zeCommandListAppendGraphExt(zc_zeCommandListAppendGraphExt_params_t *p, ze_result_t r,
                                            struct zc_ze_call *c) {
    if (c->ptr) zc_ze_exec_post(c, r);
}
