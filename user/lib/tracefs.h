/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The running kernel's tracepoints as tracefs describes them: the list
 * (available_events) and each event's record layout (events/G/N/format,
 * the ABI perf, trace-cmd and Perfetto read), turned into the struct
 * pbt_tp_layout the kernel's generic encoder and the filters use.
 *
 * Field kinds and proto types follow Perfetto's InferFtraceType and
 * ToGenericProtoField (src/traced/probes/ftrace/proto_translation_table.cc):
 * signed ints -> TYPE_INT64, unsigned ints, bool and pointers ->
 * TYPE_UINT64, char[N] and __data_loc char[] -> TYPE_STRING, __data_loc
 * of anything else -> TYPE_BYTES. Where Perfetto drops a field (an int
 * array, an odd size) pbtrace keeps it: int arrays as repeated ints
 * (PBTRACE_TPF_ARRAY), anything else as its bytes. common_* fields are
 * kept first with proto_id 0 (filters read them; FtraceEvent.pid carries
 * common_pid); the event's own fields get proto ids 1..31 in format order.
 *
 * Nothing here trusts the text: any input gives a layout or an error.
 */
#ifndef PBT_TRACEFS_H
#define PBT_TRACEFS_H

#include <stddef.h>
#include <stdint.h>

#include "tp_layout.h"

/* FieldDescriptorProto.Type values the layouts use. */
#define PBT_PB_TYPE_INT64 3
#define PBT_PB_TYPE_UINT64 4
#define PBT_PB_TYPE_STRING 9
#define PBT_PB_TYPE_BYTES 12

/*
 * The tracefs directory: /sys/kernel/tracing, else
 * /sys/kernel/debug/tracing (nothing is mounted here). NULL, with a line
 * naming both and the mount command in err, when neither has events.
 * pbt_tracefs_set_root(dir) makes it dir instead (tests); NULL: the search.
 */
const char *pbt_tracefs_dir(char *err, size_t errlen);
void pbt_tracefs_set_root(const char *dir);

/*
 * Parses one format file's text (len bytes, need not end in NUL) into *l
 * for group/name. Returns the event's ID (>= 0) or -EINVAL with the reason
 * in err. On success err holds a warning, or "" when there is none: fields
 * past proto id PBTRACE_TP_MAX_PROTO_ID (trace_processor reads numbers
 * < 32) are kept with proto_id 0, and fields past PBTRACE_TP_MAX_FIELDS
 * are dropped; the warning names them.
 */
int pbt_tracefs_parse(const char *text, size_t len, const char *group,
		      const char *name, struct pbt_tp_layout *l,
		      char *err, size_t errlen);

/*
 * Reads events/group/name/format and parses it as above. -ENOENT: this
 * kernel has no such tracepoint (err says so and points to
 * 'tracectl list-events'); other -errno with err for a person.
 */
int pbt_tracefs_layout(const char *group, const char *name,
		       struct pbt_tp_layout *l, char *err, size_t errlen);

/*
 * Calls cb(group, name, arg) for each line of available_events, in the
 * file's order; a non-zero cb return stops the walk and is returned.
 * -errno with err when the file cannot be read.
 */
int pbt_tracefs_list(int (*cb)(const char *group, const char *name, void *arg),
		     void *arg, char *err, size_t errlen);

/*
 * "group/name" or "group:name" -> group and name (each < PBTRACE_NAME_MAX,
 * non-empty, no second separator). 0 or -EINVAL.
 */
int pbt_tracefs_split(const char *event, char *group, char *name);

/*
 * An event trace.proto knows (FtraceEvent has a field named l->name, as
 * sched_switch): gives l Perfetto's own numbers, so trace_processor reads
 * it as the native event: l->proto_id the FtraceEvent field, each field
 * the message field of its name (its number and type), proto_id 0 for a
 * field the message lacks or cannot hold (a string field from a pointer).
 * All from proto/trace.proto's protobuf-c descriptors. 1 if l is such an
 * event, 0 (l unchanged) if not.
 */
int pbt_tp_native_ids(struct pbt_tp_layout *l);

#endif /* PBT_TRACEFS_H */
