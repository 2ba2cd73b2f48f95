// SPDX-License-Identifier: GPL-2.0
/*
 * GET_CHUNK's per-CPU reader cursor (kmod/reader.c, oldest_of_cpu()) must
 * hand out every sealed chunk, oldest first, however the writer and the
 * reader moved: a writer that lapped an idle reader several times, a
 * reader that caught up half way, chunks held while the writer laps again
 * past them, and held chunks put back unread when the reader dies. The
 * referee is the kernel's own state, read from the mapping: before each
 * GET_CHUNK the expected chunk is the lowest seq among those the chunk
 * table says are sealed, and once GET_CHUNK says -EAGAIN none may be left
 * sealed (a stranded chunk). The kernel's counters must add up: every
 * sealed chunk was read or overwritten. Only our getppid calls, on CPU 0,
 * write events (pid and syscall filters), so nothing moves while we look.
 */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "genl.h"
#include "reader.h"

static const struct pbtrace_chunk_meta *meta(const struct pbt_reader *r)
{
	const struct pbtrace_mmap_header *h = pbt_reader_header(r);

	return (const void *)(r->map + h->chunks_offset);
}

static uint32_t nr_chunks(const struct pbt_reader *r)
{
	const struct pbtrace_mmap_header *h = pbt_reader_header(r);

	return h->nr_cpus * h->chunks_per_cpu;
}

/* The chunk the kernel should hand out next, by the chunk table; -1: none. */
static int64_t expected_seq(const struct pbt_reader *r, uint32_t *sealed)
{
	const struct pbtrace_chunk_meta *m = meta(r);
	int64_t best = -1;
	uint32_t i;

	*sealed = 0;
	for (i = 0; i < nr_chunks(r); i++) {
		if (__atomic_load_n(&m[i].state, __ATOMIC_ACQUIRE) != PBTRACE_CHUNK_SEALED)
			continue;
		(*sealed)++;
		if (best < 0 || m[i].seq < (uint64_t)best)
			best = m[i].seq;
	}
	return best;
}

static uint64_t sealed_on_cpu0(const struct pbt_reader *r)
{
	struct pbtrace_cpu_stats st;

	pbt_reader_stats(r, 0, &st);
	return st.chunks_sealed;
}

/* getppid until CPU 0 has sealed n more chunks. */
static void seal(const struct pbt_reader *r, uint64_t n)
{
	uint64_t want = sealed_on_cpu0(r) + n;
	int i;

	while (sealed_on_cpu0(r) < want)
		for (i = 0; i < 64; i++)
			syscall(SYS_getppid);
}

FIXTURE(cursor) {
	struct pbt_nl *nl;
	struct pbt_reader r;
	uint32_t id;
	uint32_t cpc;		/* chunks per CPU */
	uint64_t last_seq;
	uint32_t got;
};

FIXTURE_SETUP(cursor)
{
	struct pbt_session_spec s = { .name = "cursor_test", .nr_buffers = 1 };
	struct pbt_buffer_spec *b = &s.buffers[0];
	char err[256];
	cpu_set_t cpu0;

	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(cpu0), &cpu0));
	/* 8 chunks of 4 KiB on each CPU, RING_BUFFER. */
	b->size_kb = 32 * (uint32_t)sysconf(_SC_NPROCESSORS_CONF);
	b->chunk_kb = 4;
	b->fill_policy = PBTRACE_FILL_RING_BUFFER;
	b->events[b->nr_events++] = "raw_syscalls/sys_enter";
	b->pids[b->nr_pids++] = getpid();
	b->syscalls[b->nr_syscalls++] = SYS_getppid;
	self->nl = pbt_nl_open(err, sizeof(err));
	ASSERT_NE(NULL, self->nl) TH_LOG("netlink: %s", err);
	ASSERT_EQ(0, pbt_nl_new_session(self->nl, &s, &self->id))
		TH_LOG("new session: %s", pbt_nl_error(self->nl));
	ASSERT_EQ(0, pbt_reader_open(&self->r, self->id, 0, err, sizeof(err)))
		TH_LOG("reader: %s", err);
	self->cpc = pbt_reader_header(&self->r)->chunks_per_cpu;
	ASSERT_GE(self->cpc, 4);
	ASSERT_EQ(0, pbt_nl_session_cmd(self->nl, PBTRACE_CMD_START_SESSION, self->id));
}

FIXTURE_TEARDOWN(cursor)
{
	if (self->r.fd >= 0)
		pbt_reader_close(&self->r);
	pbt_nl_destroy_session(self->nl, self->id, NULL);
	pbt_nl_close(self->nl);
}

/* GET_CHUNK must give the chunk the table says is oldest; no PUT. */
static int take(struct __test_metadata *_metadata, FIXTURE_DATA(cursor) *self,
		struct pbtrace_chunk_req *req)
{
	const uint8_t *data;
	uint32_t sealed;
	int64_t want = expected_seq(&self->r, &sealed);
	int ret = pbt_reader_next(&self->r, req, &data);

	if (want < 0) {
		EXPECT_EQ(-EAGAIN, ret);
		return -1;
	}
	/* -EAGAIN with a sealed chunk in the table: stranded. */
	EXPECT_EQ(0, ret) TH_LOG("GET_CHUNK: %d with %u chunks sealed (seq %lld first)",
				 ret, sealed, (long long)want);
	if (ret)
		return -1;
	EXPECT_EQ((uint64_t)want, req->seq) TH_LOG("got seq %llu, oldest sealed is %lld",
						   (unsigned long long)req->seq, (long long)want);
	EXPECT_GT(req->seq, self->last_seq);
	self->last_seq = req->seq;
	self->got++;
	return 0;
}

static void read_n(struct __test_metadata *_metadata, FIXTURE_DATA(cursor) *self,
		   uint32_t n)
{
	struct pbtrace_chunk_req req;

	while (n-- && !take(_metadata, self, &req))
		ASSERT_EQ(0, pbt_reader_put(&self->r, &req));
}

/* Everything sealed comes out, then nothing is left sealed. */
static void drain(struct __test_metadata *_metadata, FIXTURE_DATA(cursor) *self)
{
	uint32_t sealed;

	read_n(_metadata, self, UINT32_MAX);
	EXPECT_EQ(-1, expected_seq(&self->r, &sealed));
	EXPECT_EQ(0, sealed) TH_LOG("%u sealed chunks stranded", sealed);
}

/* The kernel's own account: every sealed chunk was read or overwritten. */
static void accounts(struct __test_metadata *_metadata, FIXTURE_DATA(cursor) *self)
{
	struct pbtrace_cpu_stats st;

	pbt_reader_stats(&self->r, 0, &st);
	TH_LOG("cpu 0: %llu sealed, %llu read, %llu overwritten; %u taken here",
	       (unsigned long long)st.chunks_sealed, (unsigned long long)st.chunks_read,
	       (unsigned long long)st.chunks_overwritten, self->got);
	EXPECT_EQ(st.chunks_sealed, st.chunks_read + st.chunks_overwritten);
	EXPECT_GT(st.chunks_overwritten, 0);
}

TEST_F(cursor, lapped_idle_reader)
{
	seal(&self->r, 3 * self->cpc + 2);
	drain(_metadata, self);
	seal(&self->r, 1);
	drain(_metadata, self);
	ASSERT_EQ(0, pbt_nl_session_cmd(self->nl, PBTRACE_CMD_STOP_SESSION, self->id));
	drain(_metadata, self);
	accounts(_metadata, self);
}

TEST_F(cursor, caught_up_then_lapped_past_held_chunks)
{
	struct pbtrace_chunk_req a, b;

	seal(&self->r, 3 * self->cpc + 2);
	read_n(_metadata, self, self->cpc / 2);
	ASSERT_EQ(0, take(_metadata, self, &a));
	ASSERT_EQ(0, take(_metadata, self, &b));
	/* The writer laps again and must skip the two we hold. */
	seal(&self->r, self->cpc + 3);
	ASSERT_EQ(0, pbt_reader_put(&self->r, &b));
	read_n(_metadata, self, 2);
	ASSERT_EQ(0, pbt_reader_put(&self->r, &a));
	ASSERT_EQ(0, pbt_nl_session_cmd(self->nl, PBTRACE_CMD_STOP_SESSION, self->id));
	drain(_metadata, self);
	accounts(_metadata, self);
}

TEST_F(cursor, held_chunks_put_back_by_a_dead_reader)
{
	struct pbtrace_chunk_req req;
	char err[256];
	int i;

	seal(&self->r, 2 * self->cpc + 1);
	read_n(_metadata, self, 1);
	/* Hold three, out of the writer's way, then die holding them. */
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, take(_metadata, self, &req));
	seal(&self->r, self->cpc);
	pbt_reader_close(&self->r);
	ASSERT_EQ(0, pbt_reader_open(&self->r, self->id, 0, err, sizeof(err)))
		TH_LOG("reopen: %s", err);
	/* The three come back first (they are the oldest), then the rest. */
	self->last_seq = 0;
	ASSERT_EQ(0, pbt_nl_session_cmd(self->nl, PBTRACE_CMD_STOP_SESSION, self->id));
	drain(_metadata, self);
	accounts(_metadata, self);
}

TEST_HARNESS_MAIN
