/* SPDX-License-Identifier: MIT */
/* Installs its own SIGTERM handler, then keeps the GPU busy until terminated. Under the
 * collector the archive must be written and then this handler must still run (exit code 3). */
#include <level_zero/ze_api.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

static void on_term(int sig) {
    static const char msg[] = "zc_sigapp: application handler ran\n";
    ssize_t w = write(2, msg, sizeof(msg) - 1);
    (void)w;
    _exit(3);
}

#define CK(x)                                                                                      \
    do {                                                                                           \
        if ((x) != ZE_RESULT_SUCCESS) {                                                            \
            fprintf(stderr, "zc_sigapp: %s failed\n", #x);                                         \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

int main(void) {
    CK(zeInit(0));
    uint32_t n = 1;
    ze_driver_handle_t drv;
    CK(zeDriverGet(&n, &drv));
    ze_device_handle_t dev;
    n = 1;
    CK(zeDeviceGet(drv, &n, &dev));
    ze_context_desc_t cd = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, NULL, 0};
    ze_context_handle_t ctx;
    CK(zeContextCreate(drv, &cd, &ctx));
    static const char text[] = "ZESIM-MODULE\nkernel k args=0 ns=50000 ns_per_item=0\n";
    ze_module_desc_t md = {ZE_STRUCTURE_TYPE_MODULE_DESC, NULL, ZE_MODULE_FORMAT_NATIVE, sizeof(text) - 1,
                           (const uint8_t *)text, NULL, NULL};
    ze_module_handle_t mod;
    CK(zeModuleCreate(ctx, dev, &md, &mod, NULL));
    ze_kernel_desc_t kd = {ZE_STRUCTURE_TYPE_KERNEL_DESC, NULL, 0, "k"};
    ze_kernel_handle_t k;
    CK(zeKernelCreate(mod, &kd, &k));
    ze_command_queue_desc_t qd = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 0, 0, 1u << 1,
                                  ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS, ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_list_handle_t l;
    CK(zeCommandListCreateImmediate(ctx, dev, &qd, &l));
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_term;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGTERM, &sa, NULL) != 0) return 1;
    struct sigaction back;
    if (sigaction(SIGTERM, NULL, &back) != 0 || back.sa_handler != on_term) {
        fprintf(stderr, "zc_sigapp: reading back SIGTERM's handler gave something else\n");
        return 1;
    }
    ze_group_count_t g = {1, 1, 1};
    for (;;) CK(zeCommandListAppendLaunchKernel(l, k, &g, NULL, 0, NULL));
}
