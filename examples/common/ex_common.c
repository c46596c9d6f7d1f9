/* SPDX-License-Identifier: MIT */
/* Shared boilerplate of the example programs (see ex_common.h). */
#include "ex_common.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *g_prog = "example";

const char *ex_program(void)
{
    return g_prog;
}

/* ---- diagnostics -------------------------------------------------------------------------- */

const char *ex_result_name(ze_result_t r)
{
    switch (r) {
#define EX_NAME(x) \
    case x:        \
        return #x;
        EX_NAME(ZE_RESULT_SUCCESS)
        EX_NAME(ZE_RESULT_NOT_READY)
        EX_NAME(ZE_RESULT_ERROR_DEVICE_LOST)
        EX_NAME(ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY)
        EX_NAME(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)
        EX_NAME(ZE_RESULT_ERROR_MODULE_BUILD_FAILURE)
        EX_NAME(ZE_RESULT_ERROR_MODULE_LINK_FAILURE)
        EX_NAME(ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET)
        EX_NAME(ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE)
        EX_NAME(ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS)
        EX_NAME(ZE_RESULT_ERROR_NOT_AVAILABLE)
        EX_NAME(ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE)
        EX_NAME(ZE_RESULT_WARNING_DROPPED_DATA)
        EX_NAME(ZE_RESULT_ERROR_UNINITIALIZED)
        EX_NAME(ZE_RESULT_ERROR_UNSUPPORTED_VERSION)
        EX_NAME(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE)
        EX_NAME(ZE_RESULT_ERROR_INVALID_ARGUMENT)
        EX_NAME(ZE_RESULT_ERROR_INVALID_NULL_HANDLE)
        EX_NAME(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE)
        EX_NAME(ZE_RESULT_ERROR_INVALID_NULL_POINTER)
        EX_NAME(ZE_RESULT_ERROR_INVALID_SIZE)
        EX_NAME(ZE_RESULT_ERROR_UNSUPPORTED_SIZE)
        EX_NAME(ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT)
        EX_NAME(ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT)
        EX_NAME(ZE_RESULT_ERROR_INVALID_ENUMERATION)
        EX_NAME(ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION)
        EX_NAME(ZE_RESULT_ERROR_UNSUPPORTED_IMAGE_FORMAT)
        EX_NAME(ZE_RESULT_ERROR_INVALID_NATIVE_BINARY)
        EX_NAME(ZE_RESULT_ERROR_INVALID_GLOBAL_NAME)
        EX_NAME(ZE_RESULT_ERROR_INVALID_KERNEL_NAME)
        EX_NAME(ZE_RESULT_ERROR_INVALID_FUNCTION_NAME)
        EX_NAME(ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION)
        EX_NAME(ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION)
        EX_NAME(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX)
        EX_NAME(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE)
        EX_NAME(ZE_RESULT_ERROR_INVALID_KERNEL_ATTRIBUTE_VALUE)
        EX_NAME(ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED)
        EX_NAME(ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE)
        EX_NAME(ZE_RESULT_ERROR_OVERLAPPING_REGIONS)
        EX_NAME(ZE_RESULT_WARNING_ACTION_REQUIRED)
        EX_NAME(ZE_RESULT_ERROR_UNKNOWN)
#undef EX_NAME
    default:
        return "unknown ze_result_t";
    }
}

_Noreturn void ex_fail_call(const char *expr, ze_result_t r, const char *file, int line)
{
    /* The API name is the expression up to its opening parenthesis. */
    size_t len = strcspn(expr, "(");
    fflush(stdout);
    fprintf(stderr, "%s: FAILED: %.*s returned 0x%08x (%s) at %s:%d\n", g_prog, (int)len, expr,
            (unsigned)r, ex_result_name(r), file, line);
    exit(EXIT_FAILURE);
}

_Noreturn void ex_die(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "%s: FAILED: ", g_prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(EXIT_FAILURE);
}

void ex_info(const char *fmt, ...)
{
    va_list ap;
    printf("%s: ", g_prog);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

/* ---- arguments ---------------------------------------------------------------------------- */

uint64_t ex_arg_u64(int argc, char **argv, int idx, const char *what, uint64_t def, uint64_t min,
                    uint64_t max)
{
    if (idx >= argc)
        return def;
    const char *s = argv[idx];
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || v < min || v > max)
        ex_die("argument %d (%s) must be a number in [%" PRIu64 ", %" PRIu64 "], got '%s'", idx,
               what, min, max, s);
    return (uint64_t)v;
}

/* ---- setup -------------------------------------------------------------------------------- */

void ex_init(ex_env_t *env, const char *argv0)
{
    if (argv0 != NULL) {
        const char *slash = strrchr(argv0, '/');
        g_prog = slash != NULL ? slash + 1 : argv0;
    }
    memset(env, 0, sizeof *env);

    static const char hint[] = "no usable Level Zero driver (to run on zesim, set "
                               "ZE_ENABLE_ALT_DRIVERS=<absolute path to libzesim.so>)";
    ze_result_t r = zeInit(ZE_INIT_FLAG_GPU_ONLY);
    if (r != ZE_RESULT_SUCCESS) {
        fprintf(stderr, "%s: %s\n", g_prog, hint);
        ex_fail_call("zeInit", r, __FILE__, __LINE__);
    }

    uint32_t num_drivers = 0;
    EX_CHECK(zeDriverGet(&num_drivers, NULL));
    EX_REQUIRE(num_drivers > 0, "%s", hint);
    ze_driver_handle_t *drivers = calloc(num_drivers, sizeof *drivers);
    EX_REQUIRE(drivers != NULL, "out of host memory");
    EX_CHECK(zeDriverGet(&num_drivers, drivers));

    /* First driver with at least one GPU; keep its first EX_MAX_DEVICES GPUs. */
    for (uint32_t d = 0; d < num_drivers && env->num_devices == 0; ++d) {
        uint32_t count = 0;
        EX_CHECK(zeDeviceGet(drivers[d], &count, NULL));
        if (count == 0)
            continue;
        ze_device_handle_t *devs = calloc(count, sizeof *devs);
        EX_REQUIRE(devs != NULL, "out of host memory");
        EX_CHECK(zeDeviceGet(drivers[d], &count, devs));
        for (uint32_t i = 0; i < count && env->num_devices < EX_MAX_DEVICES; ++i) {
            ze_device_properties_t props = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2};
            EX_CHECK(zeDeviceGetProperties(devs[i], &props));
            if (props.type != ZE_DEVICE_TYPE_GPU)
                continue;
            env->driver = drivers[d];
            env->devices[env->num_devices] = devs[i];
            env->props[env->num_devices] = props;
            env->num_devices++;
        }
        free(devs);
    }
    free(drivers);
    EX_REQUIRE(env->num_devices > 0, "no GPU device found");

    EX_CHECK(zeDriverGetApiVersion(env->driver, &env->api_version));
    ze_context_desc_t cdesc = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
    EX_CHECK(zeContextCreate(env->driver, &cdesc, &env->context));
}

void ex_fini(ex_env_t *env)
{
    if (env->context != NULL)
        EX_CHECK(zeContextDestroy(env->context));
    env->context = NULL;
}

void ex_describe_device(const ex_env_t *env, uint32_t index)
{
    ex_info("device %u of %u: %s (driver API %u.%u, timer %" PRIu64 " Hz, %u-bit kernel timestamps)",
            index, env->num_devices, env->props[index].name,
            (unsigned)ZE_MAJOR_VERSION(env->api_version),
            (unsigned)ZE_MINOR_VERSION(env->api_version), env->props[index].timerResolution,
            env->props[index].kernelTimestampValidBits);
}

uint32_t ex_find_queue_group(ze_device_handle_t dev, ze_command_queue_group_property_flags_t want,
                             ze_command_queue_group_property_flags_t reject,
                             ze_command_queue_group_properties_t *props)
{
    uint32_t count = 0;
    EX_CHECK(zeDeviceGetCommandQueueGroupProperties(dev, &count, NULL));
    ze_command_queue_group_properties_t *groups = calloc(count ? count : 1, sizeof *groups);
    EX_REQUIRE(groups != NULL, "out of host memory");
    for (uint32_t i = 0; i < count; ++i)
        groups[i].stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES;
    EX_CHECK(zeDeviceGetCommandQueueGroupProperties(dev, &count, groups));
    uint32_t found = UINT32_MAX;
    for (uint32_t i = 0; i < count && found == UINT32_MAX; ++i) {
        if ((groups[i].flags & want) == want && (groups[i].flags & reject) == 0 &&
            groups[i].numQueues > 0) {
            found = i;
            if (props != NULL)
                *props = groups[i];
        }
    }
    free(groups);
    return found;
}

uint32_t ex_compute_group(ze_device_handle_t dev, uint32_t *num_queues)
{
    ze_command_queue_group_properties_t props;
    uint32_t ordinal =
        ex_find_queue_group(dev, ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE, 0, &props);
    EX_REQUIRE(ordinal != UINT32_MAX, "device has no compute queue group");
    if (num_queues != NULL)
        *num_queues = props.numQueues;
    return ordinal;
}

ze_command_list_handle_t ex_immediate_list(const ex_env_t *env, ze_device_handle_t dev,
                                           uint32_t ordinal, uint32_t index,
                                           ze_command_queue_mode_t mode)
{
    ze_command_queue_desc_t desc = {
        .stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
        .ordinal = ordinal,
        .index = index,
        .mode = mode,
        .priority = ZE_COMMAND_QUEUE_PRIORITY_NORMAL,
    };
    ze_command_list_handle_t list = NULL;
    EX_CHECK(zeCommandListCreateImmediate(env->context, dev, &desc, &list));
    return list;
}

/* ---- modules and kernels ------------------------------------------------------------------ */

ze_module_handle_t ex_module_create(const ex_env_t *env, ze_device_handle_t dev)
{
    ze_module_desc_t desc = {
        .stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
        .format = ZE_MODULE_FORMAT_IL_SPIRV,
        .inputSize = ex_spirv_size,
        .pInputModule = (const uint8_t *)ex_spirv_words,
        .pBuildFlags = "",
    };
    ze_module_handle_t module = NULL;
    ze_module_build_log_handle_t log = NULL;
    ze_result_t r = zeModuleCreate(env->context, dev, &desc, &module, &log);
    if (r != ZE_RESULT_SUCCESS) {
        size_t size = 0;
        if (log != NULL && zeModuleBuildLogGetString(log, &size, NULL) == ZE_RESULT_SUCCESS &&
            size > 0) {
            char *text = malloc(size);
            if (text != NULL && zeModuleBuildLogGetString(log, &size, text) == ZE_RESULT_SUCCESS)
                fprintf(stderr, "%s: module build log:\n%s\n", g_prog, text);
            free(text);
        }
        ex_fail_call("zeModuleCreate", r, __FILE__, __LINE__);
    }
    if (log != NULL)
        EX_CHECK(zeModuleBuildLogDestroy(log));
    return module;
}

ze_kernel_handle_t ex_kernel_create(ze_module_handle_t module, const char *name)
{
    ze_kernel_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC, .pKernelName = name};
    ze_kernel_handle_t kernel = NULL;
    ze_result_t r = zeKernelCreate(module, &desc, &kernel);
    if (r != ZE_RESULT_SUCCESS) {
        fprintf(stderr, "%s: cannot create kernel '%s'\n", g_prog, name);
        ex_fail_call("zeKernelCreate", r, __FILE__, __LINE__);
    }
    return kernel;
}

ze_group_count_t ex_group_count_1d(ze_kernel_handle_t kernel, uint32_t items)
{
    EX_REQUIRE(items > 0, "a launch needs at least one work item");
    uint32_t gx = 1, gy = 1, gz = 1;
    EX_CHECK(zeKernelSuggestGroupSize(kernel, items, 1, 1, &gx, &gy, &gz));
    /* The kernels do not check bounds: the launch must cover exactly `items` work items. */
    if (gx == 0 || items % gx != 0)
        gx = 1;
    EX_CHECK(zeKernelSetGroupSize(kernel, gx, 1, 1));
    ze_group_count_t count = {.groupCountX = items / gx, .groupCountY = 1, .groupCountZ = 1};
    return count;
}

/* ---- memory ------------------------------------------------------------------------------- */

#define EX_ALIGN 64

void *ex_alloc_host(const ex_env_t *env, size_t size)
{
    ze_host_mem_alloc_desc_t hdesc = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    void *ptr = NULL;
    EX_CHECK(zeMemAllocHost(env->context, &hdesc, size, EX_ALIGN, &ptr));
    EX_REQUIRE(ptr != NULL, "zeMemAllocHost returned NULL");
    return ptr;
}

void *ex_alloc_device(const ex_env_t *env, ze_device_handle_t dev, size_t size)
{
    ze_device_mem_alloc_desc_t ddesc = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
    void *ptr = NULL;
    EX_CHECK(zeMemAllocDevice(env->context, &ddesc, size, EX_ALIGN, dev, &ptr));
    EX_REQUIRE(ptr != NULL, "zeMemAllocDevice returned NULL");
    return ptr;
}

void *ex_alloc_shared(const ex_env_t *env, ze_device_handle_t dev, size_t size)
{
    ze_device_mem_alloc_desc_t ddesc = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
    ze_host_mem_alloc_desc_t hdesc = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    void *ptr = NULL;
    EX_CHECK(zeMemAllocShared(env->context, &ddesc, &hdesc, size, EX_ALIGN, dev, &ptr));
    EX_REQUIRE(ptr != NULL, "zeMemAllocShared returned NULL");
    return ptr;
}

void ex_free(const ex_env_t *env, void *ptr)
{
    if (ptr != NULL)
        EX_CHECK(zeMemFree(env->context, ptr));
}

static const char *mem_type_name(ze_memory_type_t t)
{
    switch (t) {
    case ZE_MEMORY_TYPE_HOST:
        return "host";
    case ZE_MEMORY_TYPE_DEVICE:
        return "device";
    case ZE_MEMORY_TYPE_SHARED:
        return "shared";
    case ZE_MEMORY_TYPE_UNKNOWN:
        return "unknown";
    default:
        return "?";
    }
}

void ex_expect_mem_type(const ex_env_t *env, const void *ptr, ze_memory_type_t type,
                        const char *what)
{
    ze_memory_allocation_properties_t props = {
        .stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES};
    ze_device_handle_t dev = NULL;
    EX_CHECK(zeMemGetAllocProperties(env->context, ptr, &props, &dev));
    EX_REQUIRE(props.type == type, "%s: zeMemGetAllocProperties reports type %s, expected %s", what,
               mem_type_name(props.type), mem_type_name(type));
}

/* ---- events ------------------------------------------------------------------------------- */

ze_event_pool_handle_t ex_event_pool(const ex_env_t *env, ze_event_pool_flags_t flags,
                                     uint32_t count)
{
    ze_event_pool_desc_t desc = {
        .stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, .flags = flags, .count = count};
    ze_event_pool_handle_t pool = NULL;
    /* numDevices = 0: the pool is visible to all devices of the context. */
    EX_CHECK(zeEventPoolCreate(env->context, &desc, 0, NULL, &pool));
    return pool;
}

ze_event_handle_t ex_event(ze_event_pool_handle_t pool, uint32_t index)
{
    ze_event_desc_t desc = {
        .stype = ZE_STRUCTURE_TYPE_EVENT_DESC,
        .index = index,
        .signal = ZE_EVENT_SCOPE_FLAG_HOST,
        .wait = ZE_EVENT_SCOPE_FLAG_HOST,
    };
    ze_event_handle_t ev = NULL;
    EX_CHECK(zeEventCreate(pool, &desc, &ev));
    return ev;
}

/* ---- verification ------------------------------------------------------------------------- */

void ex_verify_f32(const char *what, const float *got, const float *want, size_t n)
{
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; ++i) {
        if (got[i] != want[i] && bad++ == 0)
            first = i;
    }
    EX_REQUIRE(bad == 0, "%s: %zu of %zu values wrong; first at [%zu]: got %.9g, expected %.9g",
               what, bad, n, first, (double)got[first], (double)want[first]);
}

void ex_verify_u32(const char *what, const uint32_t *got, const uint32_t *want, size_t n)
{
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; ++i) {
        if (got[i] != want[i] && bad++ == 0)
            first = i;
    }
    EX_REQUIRE(bad == 0, "%s: %zu of %zu values wrong; first at [%zu]: got 0x%08x, expected 0x%08x",
               what, bad, n, first, got[first], want[first]);
}

void ex_verify_bytes(const char *what, const void *got, const void *want, size_t n)
{
    const uint8_t *g = got, *w = want;
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; ++i) {
        if (g[i] != w[i] && bad++ == 0)
            first = i;
    }
    EX_REQUIRE(bad == 0, "%s: %zu of %zu bytes wrong; first at [%zu]: got 0x%02x, expected 0x%02x",
               what, bad, n, first, g[first], w[first]);
}

uint8_t ex_pattern_byte(size_t i, unsigned seed)
{
    /* Not periodic at powers of two, so shifted or truncated copies do not pass by accident. */
    uint32_t x = (uint32_t)i * 2654435761u + seed * 40503u + 0x9e37u;
    return (uint8_t)((x >> 13) ^ (x >> 24));
}

/* ---- the SPIR-V module -------------------------------------------------------------------- */
/* A minimal OpenCL-style SPIR-V 1.0 module (Kernel capability, Physical64 addressing) with one
 * entry point per kernel. Each kernel reads the x component of GlobalInvocationId and touches
 * element [i] of its buffers. It passes spirv-val (also --target-env opencl1.2 / opencl2.0);
 * spirv-dis shows the instructions given in the comments. Ids: %1 vector_add, %3 scale_f32,
 * %4 fill_u32, %2 GlobalInvocationId (Input v3ulong), %5 void, %6 ulong, %7 uint, %8 float,
 * %11 CrossWorkgroup float*, %12 CrossWorkgroup uint*. */
const uint32_t ex_spirv_words[] = {
    /* header: magic, version 1.0, generator 0 (none), id bound 42, schema 0 */
    0x07230203, 0x00010000, 0x00000000, 42u, 0u,
    /* OpCapability Addresses */
    0x00020011, 0x00000004,
    /* OpCapability Kernel */
    0x00020011, 0x00000006,
    /* OpCapability Int64 */
    0x00020011, 0x0000000b,
    /* OpMemoryModel Physical64 OpenCL */
    0x0003000e, 0x00000002, 0x00000002,
    /* OpEntryPoint Kernel %1 "vector_add" %2 */
    0x0007000f, 0x00000006, 0x00000001, 0x74636576, 0x615f726f, 0x00006464, 0x00000002,
    /* OpEntryPoint Kernel %3 "scale_f32" %2 */
    0x0007000f, 0x00000006, 0x00000003, 0x6c616373, 0x33665f65, 0x00000032, 0x00000002,
    /* OpEntryPoint Kernel %4 "fill_u32" %2 */
    0x0007000f, 0x00000006, 0x00000004, 0x6c6c6966, 0x3233755f, 0x00000000, 0x00000002,
    /* OpDecorate %2 BuiltIn GlobalInvocationId */
    0x00040047, 0x00000002, 0x0000000b, 0x0000001c,
    /* OpDecorate %2 Constant */
    0x00030047, 0x00000002, 0x00000016,
    /* %5 = OpTypeVoid */
    0x00020013, 0x00000005,
    /* %6 = OpTypeInt 64 0 */
    0x00040015, 0x00000006, 0x00000040, 0x00000000,
    /* %7 = OpTypeInt 32 0 */
    0x00040015, 0x00000007, 0x00000020, 0x00000000,
    /* %8 = OpTypeFloat 32 */
    0x00030016, 0x00000008, 0x00000020,
    /* %9 = OpTypeVector %6 3 */
    0x00040017, 0x00000009, 0x00000006, 0x00000003,
    /* %10 = OpTypePointer Input %9 */
    0x00040020, 0x0000000a, 0x00000001, 0x00000009,
    /* %11 = OpTypePointer CrossWorkgroup %8 */
    0x00040020, 0x0000000b, 0x00000005, 0x00000008,
    /* %12 = OpTypePointer CrossWorkgroup %7 */
    0x00040020, 0x0000000c, 0x00000005, 0x00000007,
    /* %13 = OpTypeFunction %5 %11 %11 %11 */
    0x00060021, 0x0000000d, 0x00000005, 0x0000000b, 0x0000000b, 0x0000000b,
    /* %14 = OpTypeFunction %5 %11 %8 */
    0x00050021, 0x0000000e, 0x00000005, 0x0000000b, 0x00000008,
    /* %15 = OpTypeFunction %5 %12 %7 */
    0x00050021, 0x0000000f, 0x00000005, 0x0000000c, 0x00000007,
    /* %2 = OpVariable %10 Input */
    0x0004003b, 0x0000000a, 0x00000002, 0x00000001,
    /* %1 = OpFunction %5 None %13 */
    0x00050036, 0x00000005, 0x00000001, 0x00000000, 0x0000000d,
    /* %16 = OpFunctionParameter %11 */
    0x00030037, 0x0000000b, 0x00000010,
    /* %17 = OpFunctionParameter %11 */
    0x00030037, 0x0000000b, 0x00000011,
    /* %18 = OpFunctionParameter %11 */
    0x00030037, 0x0000000b, 0x00000012,
    /* %19 = OpLabel */
    0x000200f8, 0x00000013,
    /* %20 = OpLoad %9 %2 Aligned 32 */
    0x0006003d, 0x00000009, 0x00000014, 0x00000002, 0x00000002, 0x00000020,
    /* %21 = OpCompositeExtract %6 %20 0 */
    0x00050051, 0x00000006, 0x00000015, 0x00000014, 0x00000000,
    /* %22 = OpInBoundsPtrAccessChain %11 %16 %21 */
    0x00050046, 0x0000000b, 0x00000016, 0x00000010, 0x00000015,
    /* %23 = OpInBoundsPtrAccessChain %11 %17 %21 */
    0x00050046, 0x0000000b, 0x00000017, 0x00000011, 0x00000015,
    /* %24 = OpInBoundsPtrAccessChain %11 %18 %21 */
    0x00050046, 0x0000000b, 0x00000018, 0x00000012, 0x00000015,
    /* %25 = OpLoad %8 %22 Aligned 4 */
    0x0006003d, 0x00000008, 0x00000019, 0x00000016, 0x00000002, 0x00000004,
    /* %26 = OpLoad %8 %23 Aligned 4 */
    0x0006003d, 0x00000008, 0x0000001a, 0x00000017, 0x00000002, 0x00000004,
    /* %27 = OpFAdd %8 %25 %26 */
    0x00050081, 0x00000008, 0x0000001b, 0x00000019, 0x0000001a,
    /* OpStore %24 %27 Aligned 4 */
    0x0005003e, 0x00000018, 0x0000001b, 0x00000002, 0x00000004,
    /* OpReturn */
    0x000100fd,
    /* OpFunctionEnd */
    0x00010038,
    /* %3 = OpFunction %5 None %14 */
    0x00050036, 0x00000005, 0x00000003, 0x00000000, 0x0000000e,
    /* %28 = OpFunctionParameter %11 */
    0x00030037, 0x0000000b, 0x0000001c,
    /* %29 = OpFunctionParameter %8 */
    0x00030037, 0x00000008, 0x0000001d,
    /* %30 = OpLabel */
    0x000200f8, 0x0000001e,
    /* %31 = OpLoad %9 %2 Aligned 32 */
    0x0006003d, 0x00000009, 0x0000001f, 0x00000002, 0x00000002, 0x00000020,
    /* %32 = OpCompositeExtract %6 %31 0 */
    0x00050051, 0x00000006, 0x00000020, 0x0000001f, 0x00000000,
    /* %33 = OpInBoundsPtrAccessChain %11 %28 %32 */
    0x00050046, 0x0000000b, 0x00000021, 0x0000001c, 0x00000020,
    /* %34 = OpLoad %8 %33 Aligned 4 */
    0x0006003d, 0x00000008, 0x00000022, 0x00000021, 0x00000002, 0x00000004,
    /* %35 = OpFMul %8 %34 %29 */
    0x00050085, 0x00000008, 0x00000023, 0x00000022, 0x0000001d,
    /* OpStore %33 %35 Aligned 4 */
    0x0005003e, 0x00000021, 0x00000023, 0x00000002, 0x00000004,
    /* OpReturn */
    0x000100fd,
    /* OpFunctionEnd */
    0x00010038,
    /* %4 = OpFunction %5 None %15 */
    0x00050036, 0x00000005, 0x00000004, 0x00000000, 0x0000000f,
    /* %36 = OpFunctionParameter %12 */
    0x00030037, 0x0000000c, 0x00000024,
    /* %37 = OpFunctionParameter %7 */
    0x00030037, 0x00000007, 0x00000025,
    /* %38 = OpLabel */
    0x000200f8, 0x00000026,
    /* %39 = OpLoad %9 %2 Aligned 32 */
    0x0006003d, 0x00000009, 0x00000027, 0x00000002, 0x00000002, 0x00000020,
    /* %40 = OpCompositeExtract %6 %39 0 */
    0x00050051, 0x00000006, 0x00000028, 0x00000027, 0x00000000,
    /* %41 = OpInBoundsPtrAccessChain %12 %36 %40 */
    0x00050046, 0x0000000c, 0x00000029, 0x00000024, 0x00000028,
    /* OpStore %41 %37 Aligned 4 */
    0x0005003e, 0x00000029, 0x00000025, 0x00000002, 0x00000004,
    /* OpReturn */
    0x000100fd,
    /* OpFunctionEnd */
    0x00010038,
};
const size_t ex_spirv_size = sizeof ex_spirv_words;
