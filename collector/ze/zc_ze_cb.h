/* SPDX-License-Identifier: MIT */
/* The application's counter-based events (zc_ze_cb.c, floor 2): what the Append path and the
 * event hooks ask of them. */
#ifndef ZC_ZE_CB_H
#define ZC_ZE_CB_H

#include "zc_ze_internal.h"

/* ev is a counter-based event of the application's (the driver rejects host signals of it) */
bool zc_ze_cb_is(ze_event_handle_t ev);
/* the signal of an Append on l may move from ev to ours, with ev re-signalled right after on l:
 * true for every regular event; for a CB event only where the driver lets l signal it and the
 * application did not set up its completion itself */
bool zc_ze_cb_may_move(const struct zc_list *l, ze_event_handle_t ev);
/* ev is destroyed */
void zc_ze_cb_forget(ze_event_handle_t ev);
/* zeDriverGetExtensionFunctionAddress gave *slot (not NULL) for name: our wrapper of the
 * counter-based event creations instead, the driver's kept; true where *slot is ours. */
bool zc_ze_cb_address(const char *name, void **slot);

#endif
