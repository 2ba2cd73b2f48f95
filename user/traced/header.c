// SPDX-License-Identifier: GPL-2.0
/* traced: the packets traced writes itself at the start of a trace. */
#include "traced.h"

/* --- traced's packets --------------------------------------------------- */

void write_service_event(struct session *s, enum pbt_service_event ev,
				uint64_t ts)
{
	struct pbt_rec r;

	emit(s, pbt_pkt_service_event(&s->seq, ev, ts, &r), &r);
}

void write_clock(struct session *s)
{
	struct pbt_rec r;

	emit(s, pbt_pkt_clock_snapshot(&s->seq, &r), &r);
}

void write_process_tree(struct session *s)
{
	struct pbt_rec r;

	emit(s, pbt_pkt_process_tree(&s->seq, PROC, &r), &r);
}

/* Which boot of this machine the file holds, so tracectl merge can tell
 * two boots (a new BOOTTIME) from two files of one boot. */
static void write_boot_id(struct session *s)
{
	char id[PBT_BOOT_ID_LEN + 1];
	struct pbt_rec r;
	int ret;

	ret = pbt_boot_id(PROC, id);
	if (ret) {
		logmsg(LOG_WARNING, "session %u (%s): no boot id in the file: reading %s/sys/kernel/random/boot_id: %s",
		       s->id, s->name, PROC, strerror(-ret));
		return;
	}
	emit(s, pbt_pkt_trace_attributes(&s->seq, id, &r), &r);
}

/* What every trace starts with: the config, the machine (its name and
 * boot), its clocks and its processes, so the kernel's events that follow
 * can be named. */
void write_header(struct session *s)
{
	struct pbt_rec r;

	if (s->header_done)
		return;
	s->header_done = 1;
	if (s->cfg_raw)
		emit(s, pbt_pkt_trace_config(&s->seq, s->cfg_raw, s->cfg_len,
					     &r), &r);
	emit(s, pbt_pkt_system_info(&s->seq, machine_name, &r), &r);
	write_boot_id(s);
	write_clock(s);
	write_process_tree(s);
}
