/* SPDX-License-Identifier: MIT */
/* zesim command queues: each is a stream on one engine; an execution of closed regular lists
 * becomes one batch of instances, which the engine runs after the queue's earlier batches. */
#include "zs_internal.h"

#include <stdlib.h>

/* ---------------------------------------------------------------- command queues */
static ze_result_t zs_zeCommandQueueCreate(ze_context_handle_t c, ze_device_handle_t d, const ze_command_queue_desc_t *desc,
                                           ze_command_queue_handle_t *ph) {
    ZS_ENTER_DEV();
    ZS_CHECK(c, ZS_MAGIC_CONTEXT);
    ZS_CHECK(d, ZS_MAGIC_DEVICE);
    if (!desc || !ph) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (desc->mode > ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS || desc->flags > 0x3 || desc->priority > 2)
        return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    int ngroups = zs.cfg.ncopy > 0 ? 2 : 1;
    int nq = desc->ordinal == ZS_GROUP_COPY ? zs.cfg.ncopy : zs.cfg.ncompute;
    if ((int)desc->ordinal >= ngroups || (int)desc->index >= nq) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    struct _ze_command_queue_handle_t *q = calloc(1, sizeof(*q));
    if (!q) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    q->magic = ZS_MAGIC_QUEUE;
    q->device = d;
    q->desc = *desc;
    q->desc.pNext = NULL;
    pthread_mutex_lock(&zs.lock);
    q->stream = zs_stream_new_locked(d, (int)desc->ordinal, (int)desc->index, q, true);
    pthread_mutex_unlock(&zs.lock);
    if (!q->stream) {
        free(q);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    *ph = q;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeCommandQueueDestroy(ze_command_queue_handle_t q) {
    ZS_ENTER();
    ZS_CHECK(q, ZS_MAGIC_QUEUE);
    pthread_mutex_lock(&zs.lock);
    q->magic = ZS_MAGIC_DEAD;
    q->stream->dead = true;
    zs_stream_release_locked(q->stream);
    pthread_mutex_unlock(&zs.lock);
    zs_defer_free(q);
    return ZE_RESULT_SUCCESS;
}

struct queue_sync_arg {
    struct zs_stream *s;
    uint64_t target;
};
static bool queue_done(void *arg) {
    struct queue_sync_arg *a = arg;
    return a->s->completed_batches >= a->target;
}

static ze_result_t zs_zeCommandQueueSynchronize(ze_command_queue_handle_t q, uint64_t timeout) {
    ZS_ENTER_DEV();
    ZS_CHECK(q, ZS_MAGIC_QUEUE);
    zs_slow_sync();
    pthread_mutex_lock(&zs.lock);
    struct queue_sync_arg a = {q->stream, q->stream->submitted_batches};
    ze_result_t r = zs_wait_locked(queue_done, &a, timeout);
    pthread_mutex_unlock(&zs.lock);
    return r;
}

static ze_result_t zs_zeCommandQueueExecuteCommandLists(ze_command_queue_handle_t q, uint32_t n,
                                                        ze_command_list_handle_t *lists, ze_fence_handle_t fence) {
    ZS_ENTER_DEV();
    ZS_CHECK(q, ZS_MAGIC_QUEUE);
    if (n == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
    if (!lists) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (fence && (fence->magic != ZS_MAGIC_FENCE || fence->queue != q)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    for (uint32_t i = 0; i < n; i++) {
        ze_command_list_handle_t l = lists[i];
        if (!l) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        if (l->magic != ZS_MAGIC_LIST || l->immediate) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        if (l->ordinal != q->desc.ordinal || l->device != q->device) return ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE;
        if (!l->closed) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    pid_t tid = zs_gettid();
    struct zs_batch *b = calloc(1, sizeof(*b));
    if (!b) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    b->stream = q->stream;
    b->fence = fence;
    bool sync = q->desc.mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS;
    b->waited = sync;
    bool q_in_order = (q->desc.flags & ZS_QUEUE_FLAG_IN_ORDER) != 0;
    pthread_mutex_lock(&zs.lock);
    ze_result_t r = zs_ring_wait_locked(q->stream);
    if (r != ZE_RESULT_SUCCESS) {
        pthread_mutex_unlock(&zs.lock);
        free(b);
        return r;
    }
    if (fence) fence->signaled = false;
    uint64_t now = zs_now();
    q->stream->submitted_batches++;
    for (uint32_t i = 0; i < n; i++) {
        ze_command_list_handle_t l = lists[i];
        uint64_t exec = l->executions++;
        for (uint32_t k = 0; k < l->body->ncmds; k++) {
            struct zs_inst *in = calloc(1, sizeof(*in));
            if (!in) continue; /* out of memory: the command is dropped, the batch still completes */
            in->cmd = l->body->cmds[k];
            in->body = l->body;
            atomic_fetch_add(&l->body->refs, 1);
            in->batch = b;
            b->pending++;
            in->in_order = l->in_order || q_in_order || q->stream->engine->copy_only;
            in->submit_ns = now;
            in->exec = exec;
            in->device = q->device->id;
            in->ordinal = (int)q->desc.ordinal;
            in->engine_index = (int)q->desc.index;
            in->list = l;
            in->context = l->context;
            in->tid = tid;
            zs_enqueue_locked(q->stream, in);
        }
    }
    if (b->pending == 0) zs_batch_complete_locked(b); /* empty lists complete at once */
    if (sync) {
        r = zs_wait_locked(zs_batch_done, b, UINT64_MAX);
        free(b);
    }
    pthread_mutex_unlock(&zs.lock);
    return r;
}

void zs_fill_queue_table(ze_command_queue_dditable_t *t) {
    t->pfnCreate = zs_zeCommandQueueCreate;
    t->pfnDestroy = zs_zeCommandQueueDestroy;
    t->pfnExecuteCommandLists = zs_zeCommandQueueExecuteCommandLists;
    t->pfnSynchronize = zs_zeCommandQueueSynchronize;
}
