/* SPDX-License-Identifier: MIT */
/* Hooks of the driver object: initialisation through zeInitDrivers (spec 1.10), and keeping the
 * loader on the tables zecoll wrapped. A driver that advertises the DDI-handles extension lets a
 * loader (1.24 and newer, in intercept mode or with several drivers) call the driver's private
 * table through each handle, past every wrapper of ours; the loader asks for the extension with
 * zeDriverGetProperties through our wrapper, so the property is cleared there. Functions reached
 * by name (zeDriverGetExtensionFunctionAddress) are swapped for ours where zecoll follows them,
 * and counted where it does not. */
#include "zc_ze_cb.h"
#include "zc_ze_internal.h"

#include <stdint.h>
#include <string.h>

/* ze_driver_ddi_handles_ext_properties_t of the spec (1.13): stype, pNext, flags */
#define ZC_STYPE_DRIVER_DDI_HANDLES_EXT_PROPERTIES 0x00020027u
#define ZC_DDI_HANDLE_EXT_SUPPORTED 1u
struct zc_ddi_handles_props {
    ze_structure_type_t stype;
    void *pNext;
    uint32_t flags;
};

void zc_ze_post_zeDriverGetProperties(ze_driver_get_properties_params_t *p, ze_result_t r, struct zc_ze_call *c) {
    (void)c;
    if (r != ZE_RESULT_SUCCESS || !*p->ppDriverProperties) return;
    unsigned hops = 0; /* a chain of the application's that loops must not hang us */
    for (ze_base_properties_t *b = (*p->ppDriverProperties)->pNext; b && hops < 64; b = b->pNext, hops++) {
        if ((uint32_t)b->stype != ZC_STYPE_DRIVER_DDI_HANDLES_EXT_PROPERTIES) continue;
        struct zc_ddi_handles_props *d = (struct zc_ddi_handles_props *)b;
        if (d->flags & ZC_DDI_HANDLE_EXT_SUPPORTED) {
            d->flags &= ~ZC_DDI_HANDLE_EXT_SUPPORTED;
            atomic_fetch_add(&zc_ze.ddi_handles_hidden, 1);
        }
    }
}

/* An application (or runtime) that initialises only through zeInitDrivers never calls zeInit:
 * devices are enumerated here as in zeInit's hook (zc_ze_devices_enumerate is idempotent). */
void zc_ze_post_zeInitDrivers(zc_zeInitDrivers_params_t *p, ze_result_t r, struct zc_ze_call *c) {
    (void)c;
    if (r != ZE_RESULT_SUCCESS || !*p->pphDrivers) return; /* the count query comes first */
    zc_ze_caps_announce();
    zc_ze_devices_enumerate();
}

/* Functions handed out by name are never silent. Those zecoll follows become wrappers of ours:
 * the experimental graph entries of drivers before spec 1.17 (zc_ze_graph_exp.c), the
 * counter-based event creations (zc_ze_cb.c), and every function named after a table entry of
 * the spec (compute-runtime hands out zeCommandListAppendHostFunction, zeEventGetCounterBasedFlags
 * and others by name too): the same function as the entry, so the entry's generated wrapper
 * stands for it, traced as a call through the table is, where the driver's table has the entry
 * for that wrapper to call. Any other (zex..., zeIntel..., an entry the table lacks) is named
 * once and its calls counted (zc_ze_untraced.c). NULL from the driver stays NULL. */
static uint32_t api_of(const char *name) {
    for (uint32_t a = 0; a < ZC_ZE_API_COUNT; a++)
        if (strcmp(zc_ze_api_names[a], name) == 0) return a;
    return ZC_ZE_API_COUNT;
}

void zc_ze_post_zeDriverGetExtensionFunctionAddress(ze_driver_get_extension_function_address_params_t *p, ze_result_t r,
                                                    struct zc_ze_call *c) {
    (void)c;
    if (r != ZE_RESULT_SUCCESS || !*p->pname || !*p->pppFunctionAddress || !**p->pppFunctionAddress) return;
    const char *name = *p->pname;
    void **fn = *p->pppFunctionAddress;
    if (zc_ze_graph_exp_address(name, fn) || zc_ze_cb_address(name, fn)) return;
    uint32_t a = api_of(name);
    if (a < ZC_ZE_API_COUNT) {
        void (*real)(void); /* the entry the wrapper calls (the tables are arrays of entries) */
        memcpy(&real, (const char *)&zc_ze_real + zc_ze_wrappers[a].real * sizeof(real), sizeof(real));
        if (real) {
            *fn = (void *)(uintptr_t)zc_ze_wrappers[a].fn;
            return;
        }
    }
    *fn = zc_ze_untraced_by_name(name, *fn);
}
