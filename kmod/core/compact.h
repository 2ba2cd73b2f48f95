/* SPDX-License-Identifier: GPL-2.0 */
/*
 * FtraceEventBundle.CompactSched for one open chunk: sched_switch and
 * sched_waking as packed varint columns and an intern table of comms, as
 * Perfetto's traced_probes writes them and trace_processor reads them
 * (docs/encoding.md). Plain C like pb.h, so the unit tests check it
 * against protoc. No allocation, no locks: the state is per-CPU scratch
 * the caller owns, reset with pbt_cs_reset() when a chunk opens.
 */
#ifndef _PBTRACE_COMPACT_H
#define _PBTRACE_COMPACT_H

#include "pb.h"
#include "pbtrace_fields.h"

/* Columns in field-number order, as protoc writes them (intern_table is 5). */
enum pbt_cs_col {
	CS_SWITCH_TS, CS_SWITCH_STATE, CS_SWITCH_PID, CS_SWITCH_PRIO,
	CS_SWITCH_COMM, CS_WAKING_TS, CS_WAKING_PID, CS_WAKING_CPU,
	CS_WAKING_PRIO, CS_WAKING_COMM, CS_NR_COLS
};
#define CS_KIND_COLS 5		/* a switch's or a waking's: ts first, comm last */

/* Column capacity: below 16384, so each column's length takes 2 bytes. */
#define CS_COL_BYTES 2048
/* Comms per chunk: an index is then one byte. */
#define CS_INTERN_MAX 64
#define CS_COMM_LEN 16		/* TASK_COMM_LEN */
/* compact_sched tag + length (a chunk is < 2 MiB) and each column's. */
#define CS_HEADERS (1 + 3 + CS_NR_COLS * (1 + 2))

/* What one event puts in the columns (struct pbt_sched_rec's values). */
struct pbt_cs_event {
	uint64_t ts;
	const char *comm;		/* CS_COMM_LEN bytes */
	int64_t prev_state;		/* switch */
	int32_t pid, prio, target_cpu;	/* target_cpu: waking */
};

struct pbt_compact {
	uint64_t last_ts[2];		/* previous switch, waking */
	/* next task of the chunk's last sched_switch: what is inferred */
	uint64_t last_comm[2];
	int32_t last_pid, last_prio;
	uint16_t len[CS_NR_COLS];
	uint32_t nr_intern;
	uint32_t reserved;		/* bytes kept free at the chunk's end */
	uint64_t intern[CS_INTERN_MAX][2];	/* comm[16] as two words */
	uint8_t intern_len[CS_INTERN_MAX];
	uint8_t col[CS_NR_COLS][CS_COL_BYTES];
};

static const uint32_t pbt_cs_field[CS_NR_COLS] = {
	PB_FTRACEEVENTBUNDLE_COMPACTSCHED_SWITCH_TIMESTAMP,
	PB_FTRACEEVENTBUNDLE_COMPACTSCHED_SWITCH_PREV_STATE,
	PB_FTRACEEVENTBUNDLE_COMPACTSCHED_SWITCH_NEXT_PID,
	PB_FTRACEEVENTBUNDLE_COMPACTSCHED_SWITCH_NEXT_PRIO,
	PB_FTRACEEVENTBUNDLE_COMPACTSCHED_SWITCH_NEXT_COMM_INDEX,
	PB_FTRACEEVENTBUNDLE_COMPACTSCHED_WAKING_TIMESTAMP,
	PB_FTRACEEVENTBUNDLE_COMPACTSCHED_WAKING_PID,
	PB_FTRACEEVENTBUNDLE_COMPACTSCHED_WAKING_TARGET_CPU,
	PB_FTRACEEVENTBUNDLE_COMPACTSCHED_WAKING_PRIO,
	PB_FTRACEEVENTBUNDLE_COMPACTSCHED_WAKING_COMM_INDEX,
};

static inline void pbt_cs_reset(struct pbt_compact *cs)
{
	memset(cs->len, 0, sizeof(cs->len));
	cs->nr_intern = 0;
	cs->reserved = 0;
	cs->last_ts[0] = 0;
	cs->last_ts[1] = 0;
}

/* The chunk's last switch ran @next: later events infer from it. */
static inline void pbt_cs_note_switch(struct pbt_compact *cs,
				      const char *comm, int32_t pid,
				      int32_t prio)
{
	memcpy(cs->last_comm, comm, sizeof(cs->last_comm));
	cs->last_pid = pid;
	cs->last_prio = prio;
}

/* @comm (CS_COMM_LEN bytes) is the last switch's next comm. */
static inline bool pbt_cs_same_comm(const struct pbt_compact *cs,
				    const char *comm)
{
	uint64_t k[2];

	memcpy(k, comm, sizeof(k));
	return k[0] == cs->last_comm[0] && k[1] == cs->last_comm[1];
}

/*
 * Index of @comm in the intern table, adding it; -1 if full. Comms are
 * compared as two words, all 16 bytes (the kernel pads them with NULs; a
 * comm with other bytes after its NUL only costs a second entry).
 */
static inline int pbt_cs_intern(struct pbt_compact *cs, const char *comm)
{
	uint64_t k[2];
	uint32_t i;

	memcpy(k, comm, sizeof(k));
	for (i = 0; i < cs->nr_intern; i++)
		if (cs->intern[i][0] == k[0] && cs->intern[i][1] == k[1])
			return (int)i;
	if (i == CS_INTERN_MAX)
		return -1;
	cs->intern[i][0] = k[0];
	cs->intern[i][1] = k[1];
	cs->intern_len[i] = (uint8_t)pb_strnlen(comm, CS_COMM_LEN);
	cs->nr_intern++;
	return (int)i;
}

static inline uint32_t pbt_cs_put(struct pbt_compact *cs, enum pbt_cs_col c,
				  uint64_t v)
{
	uint8_t *p = cs->col[c] + cs->len[c];
	uint32_t n = (uint32_t)(pb_put_varint(p, v) - p);

	cs->len[c] += n;
	return n;
}

/*
 * Add one switch (@sw) or waking if its bytes, with the headers' worst
 * case on the first event, fit in @room. Returns the bytes it takes from
 * the chunk, 0 (nothing changed) if a column, the intern table or @room
 * is full. Signed values are written as int32/int64 varints (sign
 * extended), as protoc writes them.
 */
static inline uint32_t pbt_cs_add(struct pbt_compact *cs, bool sw,
				  const struct pbt_cs_event *e, size_t room)
{
	enum pbt_cs_col c = sw ? CS_SWITCH_TS : CS_WAKING_TS;
	uint32_t need, nr_intern = cs->nr_intern, i;
	uint16_t len[CS_NR_COLS];
	int comm;

	for (i = 0; i < CS_KIND_COLS; i++)
		if (cs->len[c + i] > CS_COL_BYTES - PB_VARINT_MAX)
			return 0;
	comm = pbt_cs_intern(cs, e->comm);
	if (comm < 0)
		return 0;
	memcpy(len, cs->len, sizeof(len));
	need = cs->reserved ? 0 : CS_HEADERS;
	if (cs->nr_intern != nr_intern)
		need += 2 + cs->intern_len[comm];
	need += pbt_cs_put(cs, c, e->ts - cs->last_ts[!sw]);
	if (sw) {
		need += pbt_cs_put(cs, CS_SWITCH_STATE, (uint64_t)e->prev_state);
		need += pbt_cs_put(cs, CS_SWITCH_PID, (uint64_t)(int64_t)e->pid);
		need += pbt_cs_put(cs, CS_SWITCH_PRIO, (uint64_t)(int64_t)e->prio);
	} else {
		need += pbt_cs_put(cs, CS_WAKING_PID, (uint64_t)(int64_t)e->pid);
		need += pbt_cs_put(cs, CS_WAKING_CPU,
				   (uint64_t)(int64_t)e->target_cpu);
		need += pbt_cs_put(cs, CS_WAKING_PRIO, (uint64_t)(int64_t)e->prio);
	}
	need += pbt_cs_put(cs, (enum pbt_cs_col)(c + CS_KIND_COLS - 1),
			   (uint64_t)comm);
	if (need > room) {
		memcpy(cs->len, len, sizeof(len));
		cs->nr_intern = nr_intern;
		return 0;
	}
	cs->last_ts[!sw] = e->ts;
	cs->reserved += need;
	return need;
}

static inline void pbt_cs_col_out(struct pb_buf *pb,
				  const struct pbt_compact *cs, uint32_t i)
{
	if (cs->len[i])
		pb_bytes(pb, pbt_cs_field[i], cs->col[i], cs->len[i]);
}

/*
 * Write FtraceEventBundle.compact_sched, with exact lengths and fields in
 * number order (byte for byte what protoc writes), into room the caller
 * kept free (cs->reserved bytes hold it). Empty columns are left out.
 */
static inline void pbt_cs_write(struct pb_buf *pb,
				const struct pbt_compact *cs)
{
	size_t body = 0;
	uint32_t i, w;
	uint8_t *len;

	for (i = 0; i < cs->nr_intern; i++)
		body += 2 + cs->intern_len[i];
	for (i = 0; i < CS_NR_COLS; i++)
		if (cs->len[i])
			body += 1 + pb_varint_size(cs->len[i]) + cs->len[i];
	w = pb_varint_size(body);
	len = pb_nest_begin(pb, PB_FTRACEEVENTBUNDLE_COMPACT_SCHED, w);
	for (i = CS_SWITCH_TS; i < CS_SWITCH_COMM; i++)
		pbt_cs_col_out(pb, cs, i);
	for (i = 0; i < cs->nr_intern; i++)
		pb_bytes(pb, PB_FTRACEEVENTBUNDLE_COMPACTSCHED_INTERN_TABLE,
			 cs->intern[i], cs->intern_len[i]);
	for (i = CS_SWITCH_COMM; i < CS_NR_COLS; i++)
		pbt_cs_col_out(pb, cs, i);
	pb_nest_end(pb, len, w);
}

#endif /* _PBTRACE_COMPACT_H */
