/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A session's events as the kernel takes them: the names a config or -e
 * gives ("group/name", "group:name", globs such as "tcp/\*") become the
 * native events the module encodes itself (pbt_buffer_spec.events) and,
 * for every other tracepoint of the running kernel, a PBTRACE_A_TP with
 * its tracefs layout (pbt_buffer_spec.tps, docs/generic-events.md).
 */
#ifndef PBT_TRACEPOINTS_H
#define PBT_TRACEPOINTS_H

#include <stddef.h>

#include "genl.h"

/*
 * native(name, arg): 1 the module encodes "group/name" natively and this
 * kernel has it, 0 the module knows it but this kernel has no such
 * tracepoint, -1 the module does not know it (LIST_EVENTS says which).
 *
 * For each buffer of s: a name the module encodes stays in events[]; a
 * glob is expanded over available_events (fnmatch on "group/name"; one
 * that matches nothing is an error naming it); any other tracepoint is
 * read from tracefs and added to tps with PBTRACE_TP_FTRACE and a generic
 * proto id (PBTRACE_TP_GENERIC_PROTO_BASE + n, one per distinct event in
 * the session). An event with a filter (filters[i]) goes to tps even if
 * the module encodes it (then with Perfetto's own numbers for it), the
 * filter compiled here against its layout first, as the kernel will.
 * Warnings (a layout with fields beyond the limits) go to
 * warn(line, arg) when warn is not NULL.
 *
 * 0, or -errno with one line in err: the event, what is wrong, and that
 * 'tracectl list-events' lists the tracepoints this kernel has; for a
 * bad filter its position, then, when they fit, two more lines: the
 * expression and a caret under that position. s is
 * changed only on success; free with pbt_spec_resolved_free.
 */
int pbt_spec_resolve_events(struct pbt_session_spec *s,
			    int (*native)(const char *name, void *arg),
			    void (*warn)(const char *line, void *arg),
			    void *arg, char *err, size_t errlen);
void pbt_spec_resolved_free(struct pbt_session_spec *s);

/* True when name has glob characters (* ? [). */
int pbt_event_is_glob(const char *name);

#endif /* PBT_TRACEPOINTS_H */
