/* SPDX-License-Identifier: MIT */
/* Shared boilerplate of the example programs: error checking, driver/device/context discovery,
 * queue-group lookup, the embedded SPIR-V module with the three kernels the examples use, and a
 * few verification helpers. Every failure ends the process with exit status 1 and a message on
 * stderr naming the program, the failed call and its ze_result_t. */
#ifndef EX_COMMON_H
#define EX_COMMON_H

#include <level_zero/ze_api.h>
#include <stddef.h>
#include <stdint.h>

/* The examples never use more than two devices. */
#define EX_MAX_DEVICES 2

/* Check a Level Zero call; on failure print the API name and the result in hex, then exit(1). */
#define EX_CHECK(call)                                                                        \
    do {                                                                                      \
        ze_result_t ex_res_ = (call);                                                         \
        if (ex_res_ != ZE_RESULT_SUCCESS)                                                     \
            ex_fail_call(#call, ex_res_, __FILE__, __LINE__);                                 \
    } while (0)

/* Check an ordinary condition; on failure print the formatted message and exit(1). */
#define EX_REQUIRE(cond, ...)                                                                 \
    do {                                                                                      \
        if (!(cond))                                                                          \
            ex_die(__VA_ARGS__);                                                              \
    } while (0)

typedef struct ex_env {
    ze_driver_handle_t driver;
    ze_context_handle_t context;
    uint32_t num_devices; /* GPUs of the driver we use (at most EX_MAX_DEVICES) */
    ze_device_handle_t devices[EX_MAX_DEVICES];
    /* Queried with ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2: timerResolution is ticks per second. */
    ze_device_properties_t props[EX_MAX_DEVICES];
    ze_api_version_t api_version;
} ex_env_t;

/* Kernels of the embedded SPIR-V module (one work item per element):
 *   vector_add(const float *a, const float *b, float *c)  c[i] = a[i] + b[i]
 *   scale_f32(float *x, float s)                          x[i] *= s
 *   fill_u32(uint32_t *p, uint32_t v)                     p[i] = v                    */
extern const uint32_t ex_spirv_words[];
extern const size_t ex_spirv_size; /* in bytes */

/* ---- diagnostics -------------------------------------------------------------------------- */
const char *ex_result_name(ze_result_t r);
_Noreturn void ex_fail_call(const char *expr, ze_result_t r, const char *file, int line);
_Noreturn void ex_die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print "<program>: <message>" on stdout. */
void ex_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *ex_program(void);

/* ---- arguments ---------------------------------------------------------------------------- */
/* argv[idx] as an unsigned number in [min, max], or def when absent. Exits on bad input. */
uint64_t ex_arg_u64(int argc, char **argv, int idx, const char *what, uint64_t def, uint64_t min,
                    uint64_t max);

/* ---- setup -------------------------------------------------------------------------------- */
/* zeInit, pick the first driver that has a GPU, up to EX_MAX_DEVICES of its GPUs, a context. */
void ex_init(ex_env_t *env, const char *argv0);
void ex_fini(ex_env_t *env);
/* Print which device the example runs on. */
void ex_describe_device(const ex_env_t *env, uint32_t index);

/* Ordinal of the first queue group of dev whose flags contain all of `want` and none of
 * `reject`; UINT32_MAX if there is none. *props (optional) receives its properties. */
uint32_t ex_find_queue_group(ze_device_handle_t dev, ze_command_queue_group_property_flags_t want,
                             ze_command_queue_group_property_flags_t reject,
                             ze_command_queue_group_properties_t *props);
/* The compute group (must exist). */
uint32_t ex_compute_group(ze_device_handle_t dev, uint32_t *num_queues);

ze_command_list_handle_t ex_immediate_list(const ex_env_t *env, ze_device_handle_t dev,
                                           uint32_t ordinal, uint32_t index,
                                           ze_command_queue_mode_t mode);

/* ---- modules and kernels ------------------------------------------------------------------ */
/* Module from the embedded SPIR-V; prints the build log if the build fails. */
ze_module_handle_t ex_module_create(const ex_env_t *env, ze_device_handle_t dev);
ze_kernel_handle_t ex_kernel_create(ze_module_handle_t module, const char *name);
/* Pick a group size dividing `items` (the kernels have no bounds check), set it on the kernel
 * and return the matching group count for a 1-D launch of exactly `items` work items. */
ze_group_count_t ex_group_count_1d(ze_kernel_handle_t kernel, uint32_t items);
/* Set a kernel argument given by value (pointer arguments: pass &ptr, sizeof ptr). */
#define EX_ARG(kernel, index, value) \
    EX_CHECK(zeKernelSetArgumentValue((kernel), (index), sizeof(value), &(value)))

/* ---- memory ------------------------------------------------------------------------------- */
void *ex_alloc_host(const ex_env_t *env, size_t size);
void *ex_alloc_device(const ex_env_t *env, ze_device_handle_t dev, size_t size);
void *ex_alloc_shared(const ex_env_t *env, ze_device_handle_t dev, size_t size);
void ex_free(const ex_env_t *env, void *ptr);
/* Fail unless zeMemGetAllocProperties reports `type` for ptr. */
void ex_expect_mem_type(const ex_env_t *env, const void *ptr, ze_memory_type_t type,
                        const char *what);

/* ---- events ------------------------------------------------------------------------------- */
ze_event_pool_handle_t ex_event_pool(const ex_env_t *env, ze_event_pool_flags_t flags,
                                     uint32_t count);
/* Event with HOST signal and wait scope, so the host may wait on and read it. */
ze_event_handle_t ex_event(ze_event_pool_handle_t pool, uint32_t index);

/* ---- verification ------------------------------------------------------------------------- */
/* Compare exactly; on mismatch report the first wrong element and the count, then exit. */
void ex_verify_f32(const char *what, const float *got, const float *want, size_t n);
void ex_verify_u32(const char *what, const uint32_t *got, const uint32_t *want, size_t n);
void ex_verify_bytes(const char *what, const void *got, const void *want, size_t n);

/* Deterministic byte pattern for copy tests. */
uint8_t ex_pattern_byte(size_t i, unsigned seed);

#endif /* EX_COMMON_H */
