/* SPDX-License-Identifier: GPL-2.0 */
/* Reading a .pftrace one Trace.packet at a time (summary, syscall view). */
#ifndef PBT_TRACE_FILE_H
#define PBT_TRACE_FILE_H

#include <stddef.h>
#include <stdint.h>
#include "trace.pb-c.h"

/*
 * The record at *p, unpacked into *pkt (free it with
 * perfetto__protos__trace_packet__free_unpacked) and *p moved past it: 1.
 * A record cut short by @end (a file still being written): 0, *p unmoved.
 * Bytes that are no Trace.packet record: -1.
 */
int trace_next_packet(const uint8_t **p, const uint8_t *end,
		      Perfetto__Protos__TracePacket **pkt);

#endif
