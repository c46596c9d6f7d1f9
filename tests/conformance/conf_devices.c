/* SPDX-License-Identifier: MIT */
/*
 * Devices: count (ZESIM_DEVICES), queue groups (ZESIM_COMPUTE_ENGINES / ZESIM_COPY_ENGINES),
 * timerResolution in both units (ZESIM_TIMER_HZ), valid-bits knobs, compute/module/memory/
 * memory-access/cache/image/P2P properties, zeDeviceGetStatus, no sub-devices, and the truth
 * device lines agreeing with the properties. Expected values come from the environment the
 * ctest entry sets (README defaults otherwise).
 */
#include "zt.h"
#include "zt_truth.h"

struct shared {
    uint32_t ndev;
    char name[ZT_MAX_DEVICES][ZE_MAX_DEVICE_NAME];
    uint64_t hz[ZT_MAX_DEVICES];
    uint32_t ts_bits[ZT_MAX_DEVICES], kts_bits[ZT_MAX_DEVICES];
};

static void check_device(const zt_env *e, uint32_t d, struct shared *sh)
{
    ze_device_handle_t dev = e->dev[d];
    long long want_hz = zt_env_ll("ZESIM_TIMER_HZ", 19200000);

    ze_device_properties_t p;
    memset(&p, 0, sizeof p);
    p.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
    IS_ZE(zeDeviceGetProperties(dev, &p), ZE_RESULT_SUCCESS, "dev %u: zeDeviceGetProperties", d);
    zt_is_int(p.stype, ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES, "dev %u: stype kept", d);
    zt_is_int(p.type, ZE_DEVICE_TYPE_GPU, "dev %u: GPU", d);
    zt_ok(!(p.flags & ZE_DEVICE_PROPERTY_FLAG_SUBDEVICE), "dev %u: not a sub-device", d);
    zt_ok(p.name[0] != 0, "dev %u: has a name (%s)", d, p.name);
    zt_is_int(p.timerResolution, (long long)(1000000000ll / want_hz),
              "dev %u: timerResolution in ns/tick for DEVICE_PROPERTIES (1e9/%lld)", d, want_hz);
    if (want_hz == 19200000)
        zt_is_int(p.timerResolution, 52, "dev %u: 52 ns at 19.2 MHz", d);

    ze_device_properties_t p2;
    memset(&p2, 0, sizeof p2);
    p2.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2;
    IS_ZE(zeDeviceGetProperties(dev, &p2), ZE_RESULT_SUCCESS, "dev %u: properties _1_2", d);
    zt_is_int(p2.stype, ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2, "dev %u: stype _1_2 kept", d);
    zt_is_int(p2.timerResolution, want_hz, "dev %u: timerResolution in ticks/s for _1_2", d);
    zt_is_int(p2.timestampValidBits, p.timestampValidBits, "dev %u: same valid bits", d);
    if (getenv("ZESIM_TS_BITS"))
        zt_is_int(p.timestampValidBits, zt_env_ll("ZESIM_TS_BITS", 0),
                  "dev %u: timestampValidBits = ZESIM_TS_BITS", d);
    if (getenv("ZESIM_KERNEL_TS_BITS"))
        zt_is_int(p.kernelTimestampValidBits, zt_env_ll("ZESIM_KERNEL_TS_BITS", 0),
                  "dev %u: kernelTimestampValidBits = ZESIM_KERNEL_TS_BITS", d);
    zt_between(p.kernelTimestampValidBits, 1, 64, "dev %u: kernel valid bits sane", d);
    snprintf(sh->name[d], sizeof sh->name[d], "%s", p.name);
    sh->hz[d] = p2.timerResolution;
    sh->ts_bits[d] = p.timestampValidBits;
    sh->kts_bits[d] = p.kernelTimestampValidBits;

    /* queue groups */
    uint32_t ng = 0;
    IS_ZE(zeDeviceGetCommandQueueGroupProperties(dev, &ng, NULL), ZE_RESULT_SUCCESS,
          "dev %u: group count", d);
    zt_is_int(ng, 2, "dev %u: two queue groups", d);
    ze_command_queue_group_properties_t g[4];
    for (int i = 0; i < 4; i++) {
        memset(&g[i], 0, sizeof g[i]);
        g[i].stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES;
    }
    uint32_t ng4 = 4;
    CHECK_ZE(zeDeviceGetCommandQueueGroupProperties(dev, &ng4, g));
    zt_is_int(ng4, 2, "dev %u: count corrected to 2 with a larger array", d);
    int compute = -1, copy = -1;
    for (uint32_t i = 0; i < ng4 && i < 4; i++) {
        if (g[i].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE)
            compute = (int)i;
        else if (g[i].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY)
            copy = (int)i;
    }
    zt_ok(compute >= 0 && copy >= 0, "dev %u: a compute group and a copy-only group", d);
    if (compute >= 0 && copy >= 0) {
        zt_is_int(g[compute].flags,
                  ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE |
                      ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY |
                      ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_METRICS |
                      ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COOPERATIVE_KERNELS,
                  "dev %u: compute group flags COMPUTE|COPY|METRICS|COOPERATIVE_KERNELS", d);
        zt_is_int(g[compute].numQueues, zt_env_ll("ZESIM_COMPUTE_ENGINES", 4),
                  "dev %u: compute engines = ZESIM_COMPUTE_ENGINES", d);
        zt_is_int(g[copy].flags, ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY,
                  "dev %u: copy group flags COPY only", d);
        zt_is_int(g[copy].numQueues, zt_env_ll("ZESIM_COPY_ENGINES", 2),
                  "dev %u: copy engines = ZESIM_COPY_ENGINES", d);
        /* every engine can take a queue */
        int all = 1;
        for (int grp = 0; grp < 2; grp++) {
            uint32_t ord = (uint32_t)(grp ? copy : compute);
            for (uint32_t i = 0; i < g[ord].numQueues; i++) {
                ze_command_queue_desc_t qd = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, ord, i,
                                              0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                                              ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
                ze_command_queue_handle_t q = NULL;
                if (zeCommandQueueCreate(e->ctx, dev, &qd, &q) != ZE_RESULT_SUCCESS)
                    all = 0;
                else
                    zt_destroy(q);
            }
        }
        zt_ok(all, "dev %u: a queue can be created on every engine", d);
    }

    ze_device_compute_properties_t cp = {.stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES};
    IS_ZE(zeDeviceGetComputeProperties(dev, &cp), ZE_RESULT_SUCCESS, "dev %u: compute props", d);
    zt_ok(cp.maxTotalGroupSize > 0 && cp.maxGroupSizeX > 0 && cp.maxGroupCountX > 0,
          "dev %u: compute limits set (%u, %u, %u)", d, cp.maxTotalGroupSize, cp.maxGroupSizeX,
          cp.maxGroupCountX);

    ze_device_module_properties_t mp = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES};
    IS_ZE(zeDeviceGetModuleProperties(dev, &mp), ZE_RESULT_SUCCESS, "dev %u: module props", d);
    zt_ok(mp.spirvVersionSupported >= ZE_MAKE_VERSION(1, 0), "dev %u: SPIR-V >= 1.0", d);

    uint32_t nm = 0;
    IS_ZE(zeDeviceGetMemoryProperties(dev, &nm, NULL), ZE_RESULT_SUCCESS, "dev %u: mem count",
          d);
    zt_ok(nm >= 1, "dev %u: at least one memory (%u)", d, nm);
    ze_device_memory_properties_t mem = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES};
    uint32_t one = 1;
    CHECK_ZE(zeDeviceGetMemoryProperties(dev, &one, &mem));
    zt_ok(mem.totalSize > 0, "dev %u: memory totalSize > 0", d);

    ze_device_memory_access_properties_t ma = {
        .stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_ACCESS_PROPERTIES};
    IS_ZE(zeDeviceGetMemoryAccessProperties(dev, &ma), ZE_RESULT_SUCCESS,
          "dev %u: memory access props", d);
    zt_ok((ma.hostAllocCapabilities & ZE_MEMORY_ACCESS_CAP_FLAG_RW) &&
              (ma.deviceAllocCapabilities & ZE_MEMORY_ACCESS_CAP_FLAG_RW) &&
              (ma.sharedSingleDeviceAllocCapabilities & ZE_MEMORY_ACCESS_CAP_FLAG_RW),
          "dev %u: host/device/shared allocations are RW", d);

    uint32_t nc = 0;
    IS_ZE(zeDeviceGetCacheProperties(dev, &nc, NULL), ZE_RESULT_SUCCESS, "dev %u: caches", d);
    zt_ok(nc >= 1, "dev %u: at least one cache", d);
    ze_device_cache_properties_t cache = {.stype = ZE_STRUCTURE_TYPE_DEVICE_CACHE_PROPERTIES};
    one = 1;
    CHECK_ZE(zeDeviceGetCacheProperties(dev, &one, &cache));
    zt_ok(cache.cacheSize > 0, "dev %u: cache size > 0", d);

    ze_device_image_properties_t ip = {.stype = ZE_STRUCTURE_TYPE_DEVICE_IMAGE_PROPERTIES};
    IS_ZE(zeDeviceGetImageProperties(dev, &ip), ZE_RESULT_SUCCESS, "dev %u: image props", d);
    zt_ok(ip.maxImageDims1D > 0 && ip.maxImageDims2D > 0 && ip.maxImageDims3D > 0,
          "dev %u: image dims supported", d);

    IS_ZE(zeDeviceGetStatus(dev), ZE_RESULT_SUCCESS, "dev %u: zeDeviceGetStatus", d);
    uint32_t nsub = 7;
    IS_ZE(zeDeviceGetSubDevices(dev, &nsub, NULL), ZE_RESULT_SUCCESS, "dev %u: sub-devices", d);
    zt_is_int(nsub, 0, "dev %u: no sub-devices", d);

    for (uint32_t o = 0; o < e->ndev; o++) {
        if (o == d)
            continue;
        ze_device_p2p_properties_t pp = {.stype = ZE_STRUCTURE_TYPE_DEVICE_P2P_PROPERTIES};
        IS_ZE(zeDeviceGetP2PProperties(dev, e->dev[o], &pp), ZE_RESULT_SUCCESS,
              "dev %u -> %u: zeDeviceGetP2PProperties", d, o);
        ze_bool_t can = 0;
        IS_ZE(zeDeviceCanAccessPeer(dev, e->dev[o], &can), ZE_RESULT_SUCCESS,
              "dev %u -> %u: zeDeviceCanAccessPeer", d, o);
    }
}

static void child(void *arg)
{
    struct shared *sh = arg;
    zt_env e;
    zt_setup(&e);
    long long want = zt_env_ll("ZESIM_DEVICES", 2);
    zt_is_int(e.ndev, want, "device count = ZESIM_DEVICES (%lld)", want);
    sh->ndev = e.ndev;

    uint32_t n1 = 1;
    ze_device_handle_t first = NULL;
    IS_ZE(zeDeviceGet(e.driver, &n1, &first), ZE_RESULT_SUCCESS, "zeDeviceGet with count 1");
    zt_ok(n1 == 1 && first == e.dev[0], "count 1 returns the first device");
    uint32_t nbig = ZT_MAX_DEVICES;
    ze_device_handle_t all[ZT_MAX_DEVICES];
    CHECK_ZE(zeDeviceGet(e.driver, &nbig, all));
    zt_is_int(nbig, e.ndev, "larger count corrected to the device count");
    int distinct = 1;
    for (uint32_t i = 0; i < e.ndev; i++)
        for (uint32_t j = i + 1; j < e.ndev; j++)
            if (e.dev[i] == e.dev[j])
                distinct = 0;
    zt_ok(distinct, "device handles are distinct");

    for (uint32_t d = 0; d < e.ndev; d++)
        check_device(&e, d, sh);
    zt_teardown(&e);
}

int main(int argc, char **argv)
{
    zt_init(argc, argv);
    struct shared *sh = zt_shm(sizeof *sh);
    char truth[1024];
    zt_fork_run("devices", child, sh, truth, sizeof truth);

    zt_truth t;
    char err[256] = "";
    if (!zt_ok(zt_truth_load(truth, 0, &t, err, sizeof err) == 0, "truth loads (%s)", err))
        return zt_done();
    zt_is_int(t.ndevices, sh->ndev, "one truth device line per device");
    for (uint32_t d = 0; d < sh->ndev; d++) {
        const zt_truth_device *td = zt_truth_device_find(&t, d);
        if (!zt_ok(td != NULL, "truth line for device %u", d))
            continue;
        char why[256] = "";
        zt_ok(zt_truth_device_check(td, why, sizeof why), "device %u line complete (%s)", d, why);
        zt_is_str(td->name, sh->name[d], "device %u: truth name = property name", d);
        zt_is_u64(td->hz, sh->hz[d], "device %u: truth hz = timerResolution _1_2", d);
        zt_is_int(td->ts_bits, sh->ts_bits[d], "device %u: truth ts_bits", d);
        zt_is_int(td->kernel_ts_bits, sh->kts_bits[d], "device %u: truth kernel_ts_bits", d);
    }
    zt_truth_free(&t);
    return zt_done();
}
