/* SPDX-License-Identifier: MIT */
/* The effective settings (zc_knobs.c): config/'s knob table, loaded once in the constructor and
 * read where each one is used. */
#ifndef ZC_KNOBS_H
#define ZC_KNOBS_H

#include "zc_config.h" /* struct zc_knobs, windows, rank sets, kernel patterns (config/) */

/* A copy of zc_cfg->knobs, except that an invalid configuration leaves ENABLE false. zc_cfg is
 * never NULL once zc_knobs_load ran. */
extern struct zc_knobs zc_knobs;
extern const struct zc_config *zc_cfg;

/* Loads the configuration (ZECOLL_CONFIG, then every ZECOLL_* variable). Its messages are printed
 * by the job's launcher rank 0 only (once per job); an invalid configuration turns collection off
 * (ZECOLL_STRICT=1: aborts). Returns 0, or -1 if the collector must stay off. */
int zc_knobs_load(void);
/* Writes the effective configuration, with origins, to DIR/zecoll-config.yaml (at close; rank 0). */
void zc_config_store(const char *dir);

#endif
