// SPDX-License-Identifier: GPL-2.0
/*
 * mappaths.c: chunks as the kernel writes them for stack samples, built
 * with protobuf-c (the referee), their identity names rewritten, and the
 * result read back with protobuf-c: paths in, every other field as it
 * was, a name the resolver does not know left alone; lookalike names are
 * not taken for identities; every cut of the input fails cleanly (ASan).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mappaths.h"
#include "tap.h"
#include "trace.pb-c.h"

typedef Perfetto__Protos__TracePacket Packet;

/* One Trace.packet record of @pkt appended to @buf at *@len. */
static void append(uint8_t *buf, size_t *len, const Packet *pkt)
{
	size_t n = perfetto__protos__trace_packet__get_packed_size(pkt), v;

	buf[(*len)++] = 0x0a;
	for (v = n; v >= 0x80; v >>= 7)
		buf[(*len)++] = (uint8_t)(v | 0x80);
	buf[(*len)++] = (uint8_t)v;
	perfetto__protos__trace_packet__pack(pkt, buf + *len);
	*len += n;
}

/* A sample's packet: interned paths @names (iids 1..), a mapping each. */
static void sample(uint8_t *buf, size_t *len, const char *const *names,
		   size_t n, uint32_t pid)
{
	Perfetto__Protos__InternedString strs[4], *sp[4];
	Perfetto__Protos__Mapping maps[4], *mp[4];
	Perfetto__Protos__InternedData d = PERFETTO__PROTOS__INTERNED_DATA__INIT;
	Perfetto__Protos__PerfSample ps = PERFETTO__PROTOS__PERF_SAMPLE__INIT;
	Packet pkt = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	uint64_t path_ids[4];
	size_t i;

	for (i = 0; i < n; i++) {
		perfetto__protos__interned_string__init(&strs[i]);
		strs[i].has_iid = strs[i].has_str = 1;
		strs[i].iid = i + 1;
		strs[i].str.data = (uint8_t *)names[i];
		strs[i].str.len = strlen(names[i]);
		sp[i] = &strs[i];
		perfetto__protos__mapping__init(&maps[i]);
		maps[i].has_iid = maps[i].has_start = maps[i].has_end = 1;
		maps[i].iid = i + 1;
		maps[i].start = 0x400000 + i * 0x10000;
		maps[i].end = maps[i].start + 0x1000;
		path_ids[i] = i + 1;
		maps[i].n_path_string_ids = 1;
		maps[i].path_string_ids = &path_ids[i];
		mp[i] = &maps[i];
	}
	d.n_mapping_paths = d.n_mappings = n;
	d.mapping_paths = sp;
	d.mappings = mp;
	ps.has_pid = 1;
	ps.pid = pid;
	pkt.has_timestamp = 1;
	pkt.timestamp = 1000 + pid;
	pkt.interned_data = &d;
	pkt.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_PERF_SAMPLE;
	pkt.perf_sample = &ps;
	append(buf, len, &pkt);
}

/* A packet with no interned data: must come out byte for byte. */
static void other(uint8_t *buf, size_t *len)
{
	Packet pkt = PERFETTO__PROTOS__TRACE_PACKET__INIT;

	pkt.has_timestamp = 1;
	pkt.timestamp = 7;
	pkt.has_sequence_flags = 1;
	pkt.sequence_flags = 2;
	append(buf, len, &pkt);
}

static int calls;

/* Knows inode 12 on 08:01 and 99 on 00:1a (a tmpfs-like device). */
static int resolve(void *ctx, uint32_t major, uint32_t minor, uint64_t ino,
		   char *buf, size_t size)
{
	(void)ctx;
	calls++;
	if (major == 8 && minor == 1 && ino == 12)
		snprintf(buf, size, "/usr/bin/stacks_work");
	else if (major == 0 && minor == 0x1a && ino == 99)
		snprintf(buf, size, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	else
		return -2;	/* -ENOENT */
	return 0;
}

/* The packets' mapping path strings, "|"-joined, and their pids. */
static void read_back(const uint8_t *p, size_t len, char *names, size_t nsz,
		      char *pids, size_t psz, int *records)
{
	const uint8_t *end = p + len;
	size_t i;

	names[0] = pids[0] = '\0';
	*records = 0;
	while (p < end) {
		uint64_t n = 0;
		unsigned int shift = 0;
		Packet *pkt;

		if (*p++ != 0x0a)
			return;
		while (*p & 0x80)
			n |= (uint64_t)(*p++ & 0x7f) << shift, shift += 7;
		n |= (uint64_t)*p++ << shift;
		pkt = perfetto__protos__trace_packet__unpack(NULL, n, p);
		if (!pkt)
			return;
		(*records)++;
		if (pkt->interned_data)
			for (i = 0; i < pkt->interned_data->n_mapping_paths; i++) {
				const ProtobufCBinaryData *s =
					&pkt->interned_data->mapping_paths[i]->str;

				snprintf(names + strlen(names), nsz - strlen(names),
					 "%.*s|", (int)s->len, (const char *)s->data);
			}
		if (pkt->perf_sample)
			snprintf(pids + strlen(pids), psz - strlen(pids), "%u,",
				 pkt->perf_sample->pid);
		if (pkt->interned_data)
			for (i = 0; i < pkt->interned_data->n_mappings; i++)
				if (pkt->interned_data->mappings[i]->start !=
				    0x400000 + i * 0x10000)
					snprintf(pids + strlen(pids), psz - strlen(pids),
						 "badstart,");
		perfetto__protos__trace_packet__free_unpacked(pkt, NULL);
		p += n;
	}
}

int main(void)
{
	static const char *const a[] = { "[inode 12 dev 08:01]", "[anon]",
					 "[inode 99 dev 00:1a]" };
	static const char *const b[] = { "[inode 5 dev 08:01]", "kernel" };
	static const char *const look[] = { "[inode 12 dev 08:01] ", "[inode 12 dev 8:1]",
					    "[inode 012 dev 08:01]" };
	static uint8_t in[4096];
	struct pbt_path_stats st = { 0 };
	char names[512], pids[128];
	uint8_t *out = NULL;
	size_t len = 0, out_len, i, other_len;
	int ret, recs, bad;
	uint32_t ma, mi;
	uint64_t ino;

	other(in, &len);
	other_len = len;
	sample(in, &len, a, 3, 41);
	sample(in, &len, b, 2, 42);
	other(in, &len);

	ret = pbt_mapping_paths_rewrite(in, len, resolve, NULL, &out, &out_len, &st);
	tap(ret == 1 && out, "a chunk with known identities is rewritten (ret %d)", ret);
	read_back(out, out_len, names, sizeof(names), pids, sizeof(pids), &recs);
	tap(!strcmp(names, "/usr/bin/stacks_work|[anon]|/usr/lib/x86_64-linux-gnu/libc.so.6|[inode 5 dev 08:01]|kernel|"),
	    "protobuf-c reads the paths in, the unknown identity and the rest as they were: %s", names);
	tap(recs == 4 && !strcmp(pids, "41,42,"),
	    "protobuf-c reads 4 records, the samples' pids and mappings intact (%d, %s)", recs, pids);
	tap(st.resolved == 2 && st.unresolved == 1, "stats: 2 resolved, 1 left (%u, %u)",
	    st.resolved, st.unresolved);
	tap(!memcmp(out, in, other_len), "the packet before them is byte for byte the same");
	free(out);

	len = 0;
	other(in, &len);
	sample(in, &len, b, 2, 43);
	calls = 0;
	ret = pbt_mapping_paths_rewrite(in, len, resolve, NULL, &out, &out_len, &st);
	tap(ret == 0 && !out && calls == 1,
	    "nothing resolved: nothing to write but the chunk as it is (ret %d, %d calls)", ret, calls);

	len = 0;
	other(in, &len);
	calls = 0;
	ret = pbt_mapping_paths_rewrite(in, len, resolve, NULL, &out, &out_len, &st);
	tap(ret == 0 && !out && calls == 0, "a chunk without stacks is not walked (ret %d)", ret);

	tap(pbt_mapping_id_parse((const uint8_t *)a[0], strlen(a[0]), &ma, &mi, &ino) == 1 &&
	    ma == 8 && mi == 1 && ino == 12, "\"%s\" parses as 08:01 inode 12", a[0]);
	for (i = 0; i < 3; i++)
		tap(!pbt_mapping_id_parse((const uint8_t *)look[i], strlen(look[i]), &ma, &mi, &ino),
		    "\"%s\" is not the kernel's identity name", look[i]);

	len = 0;
	sample(in, &len, a, 3, 44);
	bad = 0;
	for (i = 1; i < len; i++) {
		uint8_t *cut = malloc(i);

		memcpy(cut, in, i);
		ret = pbt_mapping_paths_rewrite(cut, i, resolve, NULL, &out, &out_len, &st);
		if (ret == 1) {
			/* A cut inside a field's bytes that still parses. */
			free(out);
		} else if (ret == -1 && out) {
			bad++;
		}
		free(cut);
	}
	tap(!bad, "every cut of a sample's record: a clean answer, no output on error");
	in[1] ^= 0x7f;	/* the record's length now runs past the end */
	ret = pbt_mapping_paths_rewrite(in, len, resolve, NULL, &out, &out_len, &st);
	tap(ret == -1 && !out, "a record longer than the chunk: -1, the chunk written as it is (ret %d)", ret);

	printf("1..%d\n", nr_tests);
	return nr_failed ? 1 : 0;
}
