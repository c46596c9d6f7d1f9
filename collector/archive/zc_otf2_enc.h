/* SPDX-License-Identifier: MIT */
/* Our own encoder of OTF2 3.0 event files: the collector's records (struct zc_ev) written as the
 * bytes OTF2's event writer would write for the same calls (zc_evt_write), without its per-event
 * dispatch, attribute-list and chunk handling (~200 instructions an event for ~15 bytes; here a
 * few dozen). The format, as libotf2 3.0.2 writes it (docs/archive.md, "Event files"):
 *
 *   chunk   = header, records, end-of-chunk bytes (0) to the chunk's size
 *   header  = 0x03, byte order (0x42 little endian), first event number, last event number
 *             (uint64 each, the number of events written before the chunk + 1, and after it)
 *   record  = [0x05 timestamp (uint64)] type byte, [length byte] fields
 *
 * A timestamp record precedes an event whose time is later than the last one written in the
 * chunk (or 0 while that is 0), and opens each chunk after the first. Integers and ids are
 * compressed: 0 and all-ones are one byte, else a byte count and the low bytes. OTF2 1.x's records
 * with one compressed field (Enter, Leave, the MPI request ids) have no length byte; the others,
 * NonBlockingCollectiveRequest (3.0) too, have one. A record starts a new chunk
 * unless its largest possible size plus a timestamp is less than the chunk's free bytes, as OTF2
 * decides. The file ends with the last chunk's used part and the marks 0x02 0x01.
 *
 * Byte-identical with OTF2's files while OTF2 holds a location's chunks in memory until it
 * closes (the collector lets it keep two chunks, 2 MiB): past that OTF2 flushes them and adds a
 * BufferFlush event of its own, which this encoder, writing each chunk as it fills, has no need
 * for (tests/writer). Little-endian hosts only (zc_enc_supported). */
#ifndef ZC_OTF2_ENC_H
#define ZC_OTF2_ENC_H

#include "zc_ev.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where the bytes go: whole chunks as they fill, and at the end the last chunk's used part.
 * Returns 0 or an errno; the encoder goes on either way (the sink discards what it cannot
 * write: the file is then cut back to its last whole chunk, writer/zc_otf2_io.c). */
typedef int (*zc_enc_sink)(void *ud, const uint8_t *p, size_t n);

/* The event chunk's size the collector writes (OTF2's chunk size it gives the archive); salvage
 * reads a sealed file's chunks at it */
#define ZC_ENC_CHUNK (1024 * 1024)

struct zc_enc {
    uint8_t *chunk, *pos, *end;
    uint64_t chunk_size;
    uint64_t time;   /* the last timestamp written in this chunk */
    uint64_t events; /* events written (the location's numberOfEvents) */
    zc_enc_sink sink;
    void *ud;
    int err; /* the sink's first failure */
};

/* The byte order OTF2 3.0 writes on this host is the only one encoded. */
static inline bool zc_enc_supported(void) { return __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__; }

/* The first chunk, in memory (chunk_size bytes, OTF2's event chunk size). 0 or ENOMEM. */
int zc_enc_open(struct zc_enc *e, uint64_t chunk_size, zc_enc_sink sink, void *ud);
/* The encoder of a file written up to a seal (salvage, docs/salvage.md): the chunk being filled,
 * its `used` bytes as written (header included, its last event number fixed at close), `events`
 * written in the file so far, the last timestamp written in the chunk. 0, ENOMEM or EINVAL. */
int zc_enc_resume(struct zc_enc *e, uint64_t chunk_size, zc_enc_sink sink, void *ud, const uint8_t *chunk,
                  size_t used, uint64_t events, uint64_t time);
/* As zc_evt_write (zc_evt.h), into e: 0, or -1 where a timestamp is earlier than the one before
 * it (OTF2 refuses that event; the batch's later events are not written either, as there). */
int zc_enc_write(struct zc_enc *e, const struct zc_ev *ev, size_t n, uint32_t param_callsite,
                 const uint8_t *metric_types, uint64_t *ts_min, uint64_t *ts_max);
/* Ends the file: the end marks, the last part to the sink, the chunk freed. Returns e->err. */
int zc_enc_close(struct zc_enc *e);

#endif
