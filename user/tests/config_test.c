// SPDX-License-Identifier: GPL-2.0
/*
 * config.c: loading text and binary configs, the checks (each bad value
 * must fail with its line:col and a message saying what to do), the kernel
 * session spec built from a config, and flag mode. Binary configs come
 * from protoc --encode with Perfetto's schema. Prints TAP.
 */
#define _GNU_SOURCE
/* Paths here are short; a truncated one would fail a test visibly. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "config.h"
#include "syscalls.h"
#include "tap.h"
#include "testenv.h"

static bool has_warning(const struct pbt_config *c, const char *words)
{
	size_t i;

	for (i = 0; i < c->nr_warnings; i++)
		if (strstr(c->warnings[i], words))
			return true;
	printf("# no warning \"%s\" among:\n", words);
	for (i = 0; i < c->nr_warnings; i++)
		printf("#   %s\n", c->warnings[i]);
	return false;
}

static bool no_warning(const struct pbt_config *c, const char *words)
{
	size_t i;

	for (i = 0; i < c->nr_warnings; i++)
		if (strstr(c->warnings[i], words)) {
			printf("# unexpected warning: %s\n", c->warnings[i]);
			return false;
		}
	return true;
}

static bool has_notice(const struct pbt_config *c, const char *words)
{
	size_t i;

	for (i = 0; i < c->nr_notices; i++)
		if (strstr(c->notices[i], words))
			return true;
	printf("# no notice \"%s\" among:\n", words);
	for (i = 0; i < c->nr_notices; i++)
		printf("#   %s\n", c->notices[i]);
	return false;
}

static void config_path(char *buf, size_t n, const char *name)
{
	snprintf(buf, n, "%s/tests/configs/%s", user_dir, name);
}

static bool events_are(const struct pbt_buffer_spec *b, const char *const *want,
		       size_t n)
{
	size_t i;

	if (b->nr_events != n)
		return false;
	for (i = 0; i < n; i++)
		if (strcmp(b->events[i], want[i]))
			return false;
	return true;
}

/* The machine list of kernel buffer i is exactly want (NULL-terminated). */
static bool machines_are(const struct pbt_buffer_spec *b,
			 const char *const *want)
{
	size_t i, n = 0;

	while (want[n])
		n++;
	if (b->nr_machines != n)
		goto bad;
	for (i = 0; i < n; i++)
		if (strcmp(b->machines[i], want[i]))
			goto bad;
	return true;
bad:
	printf("# machines:");
	for (i = 0; i < b->nr_machines; i++)
		printf(" \"%s\"", b->machines[i]);
	printf("\n");
	return false;
}

static void test_full(void)
{
	static const char *const ev0[] = {
		"sched/sched_switch", "sched/sched_waking",
		"sched/sched_process_exit", "task/task_newtask",
		"raw_syscalls/sys_enter", "raw_syscalls/sys_exit",
	};
	static const char *const ev1[] = {
		"irq/irq_handler_entry", "irq/irq_handler_exit",
	};
	char path[PATH_MAX], err[512] = "", bin[PATH_MAX], *ref;
	struct pbt_session_spec spec;
	uint32_t map[PBTRACE_MAX_BUFFERS] = { 0 };
	struct pbt_config c;
	size_t ref_len = 0;
	int r;

	config_path(path, sizeof(path), "full.pbtx");
	r = pbt_config_load(path, PBT_CONFIG_AUTO, &c, err, sizeof(err));
	tap(!r && c.format == PBT_CONFIG_TEXT, "full.pbtx loads as text (%s)", err);
	if (r)
		return;
	tap(no_warning(&c, "syscall_events") && no_warning(&c, "buffer_size_kb") &&
	    no_warning(&c, "drain_period_ms"),
	    "syscall_events, buffer_size_kb, drain_period_ms (with write_into_file) are implemented: no warning");
	tap(has_warning(&c, "full.pbtx:80:26: trigger_config.triggers[1].producer_name_regex is not implemented"),
	    "producer_name_regex warns at its line:col");
	tap(has_warning(&c, "full.pbtx:62:22: data_sources[3] stat_counters is not implemented"),
	    "stat_counters, which traced does not use, warned about");
	tap(c.tc->builtin_data_sources &&
	    c.tc->builtin_data_sources->snapshot_interval_ms == 5000,
	    "builtin_data_sources.snapshot_interval_ms read");
	r = pbt_config_to_spec(&c, &spec, map, 2, err, sizeof(err));
	tap(!r && spec.nr_buffers == 2 && map[0] == 0 && map[1] == 1,
	    "two kernel buffers: config buffers 0 and 1 (buffer 2 has no ftrace source) (%s)",
	    err);
	if (!r) {
		tap(spec.buffers[0].size_kb == 8192 &&
		    spec.buffers[0].fill_policy == PBTRACE_FILL_RING_BUFFER &&
		    spec.buffers[1].size_kb == 1024 &&
		    spec.buffers[1].fill_policy == PBTRACE_FILL_DISCARD,
		    "buffer sizes and fill policies carried over");
		tap(events_are(&spec.buffers[0], ev0, 6) && events_are(&spec.buffers[1], ev1, 2),
		    "events per buffer, syscall_events adds raw_syscalls/sys_enter+sys_exit");
		tap(spec.buffers[0].nr_syscalls == 2 &&
		    spec.buffers[0].syscalls[0] == __NR_read &&
		    spec.buffers[0].syscalls[1] == __NR_write &&
		    spec.buffers[1].nr_syscalls == 0,
		    "syscall_events sys_read, sys_write: the syscall filter of buffer 0 (%d, %d) only",
		    __NR_read, __NR_write);
		tap(!spec.buffers[0].full_sched && spec.buffers[1].full_sched,
		    "compact_sched: on by default (buffer 0), enabled: false writes buffer 1's sched events in full");
		tap(c.nr_notices == 0,
		    "buffer_size_kb 2048 x 2 CPUs fits in size_kb 8192: no notice");
		tap(spec.buffers[0].nr_pids == 2 && spec.buffers[0].pids[0] == 1 &&
		    spec.buffers[0].pids[1] == 4242 && spec.buffers[1].nr_pids == 0,
		    "tids_to_trace becomes the pid filter of buffer 0 only");
		tap(!strcmp(spec.name, "full-test") && spec.output &&
		    !strcmp(spec.output, "/data/full.pftrace") &&
		    spec.config == c.bytes && spec.config_len == c.len,
		    "name, output and serialized config in the spec");
	}
	/* The serialized config decodes (Perfetto's schema) to what protoc
	 * makes of the same text. */
	snprintf(bin, sizeof(bin), "%s/full.pb", tmp_dir);
	{
		FILE *f = fopen(bin, "wb");

		if (f) {
			fwrite(c.bytes, 1, c.len, f);
			fclose(f);
		}
	}
	r = sh("protoc -I '%s' --encode=perfetto.protos.TraceConfig perfetto_config.proto < '%s' > '%s/full.ref.pb'",
	       schema_dir, path, tmp_dir);
	ref = r ? NULL : (snprintf(bin, sizeof(bin), "%s/full.ref.pb", tmp_dir),
			  read_file(bin, &ref_len));
	tap(ref && ref_len == c.len && !memcmp(ref, c.bytes, c.len),
	    "serialized config is byte-identical to protoc --encode of the file");
	free(ref);
	pbt_config_free(&c);
}

/* Perfetto's full binary encoding of a config with fields pbtrace lacks. */
static void test_binary(void)
{
	char path[PATH_MAX], bin[PATH_MAX], err[512] = "", *data;
	struct pbt_config t, b;
	size_t len = 0;
	int r;

	config_path(path, sizeof(path), "perfetto_ui.pbtx");
	snprintf(bin, sizeof(bin), "%s/ui.pb", tmp_dir);
	r = sh("protoc -I '%s' --encode=perfetto.protos.TraceConfig perfetto_config.proto < '%s' > '%s'",
	       schema_dir, path, bin);
	data = r ? NULL : read_file(bin, &len);
	tap(data != NULL, "protoc --encode perfetto_ui.pbtx");
	if (!data)
		return;
	r = pbt_config_load(bin, PBT_CONFIG_AUTO, &b, err, sizeof(err));
	tap(!r && b.format == PBT_CONFIG_BINARY, "binary config loads (%s)", err);
	if (r) {
		free(data);
		return;
	}
	tap(b.len == len && !memcmp(b.bytes, data, len),
	    "binary config kept verbatim, ignored fields included");
	tap(has_warning(&b, "field number 13 in perfetto.protos.FtraceConfig (data_sources[3].config.ftrace_config) is not implemented by pbtrace; ignored"),
	    "unknown binary field named by number and path (symbolize_ksyms)");
	tap(has_warning(&b, "field number 1 in perfetto.protos.TraceConfig.BuiltinDataSource (builtin_data_sources)"),
	    "unknown field of a known sub-message named (builtin_data_sources.disable_clock_snapshotting)");
	tap(has_warning(&b, "data_sources[2] \"android.log\" is not implemented by pbtrace"),
	    "unknown data source name warned about");
	tap(has_warning(&b, "atrace_categories/atrace_apps: Android atrace is not implemented"),
	    "atrace warned about");
	r = pbt_config_load(path, PBT_CONFIG_AUTO, &t, err, sizeof(err));
	tap(!r && t.nr_warnings > 0 &&
	    has_warning(&t, "perfetto_ui.pbtx:61:7: field 'symbolize_ksyms'"),
	    "text form loads; its warnings carry file:line:col");
	if (!r) {
		/* Same subset from both: text packs only known fields; the
		 * binary with its unknown fields removed must equal it. */
		size_t i, nb = 0;

		for (i = 0; i < b.nr_warnings; i++)
			nb += strstr(b.warnings[i], "field number") != NULL;
		tap(nb >= 14, "binary: every unknown field warned about (%zu)", nb);
		tap(t.tc->n_data_sources == b.tc->n_data_sources &&
		    t.tc->n_buffers == b.tc->n_buffers &&
		    t.tc->duration_ms == b.tc->duration_ms &&
		    !strcmp(t.tc->data_sources[3]->config->ftrace_config->ftrace_events[4],
			    b.tc->data_sources[3]->config->ftrace_config->ftrace_events[4]),
		    "text and binary give the same config");
		pbt_config_free(&t);
	}
	pbt_config_free(&b);
	free(data);
}

struct bad {
	const char *text;
	const char *words;	/* must appear in the error */
};

#define BUF "buffers { size_kb: 1024 }\n"
#define FT "data_sources { config { name: \"linux.ftrace\" ftrace_config { ftrace_events: \"sched/sched_switch\" } } }\n"

static const struct bad bad_configs[] = {
	{ FT, "t.pbtx: no buffers: add 'buffers { size_kb: 8192 }'" },
	{ "buffers { size_kb: 16 }\n" FT,
	  "t.pbtx:1:20: buffers[0].size_kb is 16: pbtrace needs at least 64" },
	{ "buffers { fill_policy: DISCARD }\n" FT,
	  "t.pbtx: buffers[0].size_kb is 0: pbtrace needs at least 64" },
	{ BUF, "no data_sources" },
	{ BUF "data_sources { }", "t.pbtx:2:1: data_sources[0] has no config { name: ... }" },
	{ BUF "data_sources { config { name: \"linux.ftrace\" target_buffer: 1 } }",
	  "t.pbtx:2:61: data_sources[0] (linux.ftrace) target_buffer is 1 but there is only 1 buffer (0..0)" },
	{ BUF "data_sources { config { name: \"linux.ftrace\" ftrace_config { ftrace_events: \"sched_switch\" } } }",
	  "t.pbtx:2:77: data_sources[0] ftrace_events[0] \"sched_switch\" is not \"group/name\"" },
	{ BUF "data_sources { config { name: \"linux.ftrace\" ftrace_config { ftrace_events: \"sched/sched_%s\" } } }",
	  "ftrace_events[0] \"sched/sched_%s\" is not \"group/name\": write it as e.g. \"sched/sched_switch\", or a glob such as \"tcp/*\"" },
	{ BUF "data_sources { config { name: \"linux.process_stats\" } }",
	  "no linux.ftrace data source with events" },
	{ BUF FT "write_into_file: true\nfile_write_period_ms: 50",
	  "t.pbtx:4:23: file_write_period_ms is 50: the minimum is 100 ms" },
	{ BUF FT "trigger_config { trigger_mode: STOP_TRACING trigger_timeout_ms: 1000 }",
	  "t.pbtx:3:32: trigger_config has no triggers" },
	{ BUF FT "trigger_config { triggers { name: \"x\" } trigger_timeout_ms: 1000 }",
	  "trigger_config needs trigger_mode: START_TRACING" },
	{ BUF FT "trigger_config { trigger_mode: CLONE_SNAPSHOT triggers { name: \"x\" } trigger_timeout_ms: 1 }",
	  "t.pbtx:3:32: trigger_config.trigger_mode CLONE_SNAPSHOT is not implemented by pbtrace" },
	{ BUF FT "trigger_config { trigger_mode: START_TRACING triggers { stop_delay_ms: 1 } trigger_timeout_ms: 1 }",
	  "t.pbtx:3:46: trigger_config.triggers[0] has no name" },
	{ BUF FT "trigger_config { trigger_mode: START_TRACING triggers { name: \"go\" } }",
	  "trigger_config needs trigger_timeout_ms > 0" },
	{ BUF FT "unique_session_name: \"my session\"",
	  "t.pbtx:3:22: unique_session_name \"my session\" has ' ': use letters, digits" },
	{ BUF FT "unique_session_name: \"0123456789012345678901234567890123456789012345678901234567890123\"",
	  "unique_session_name must be 1 to 63 characters" },
	{ BUF FT "output_path: \"\"", "t.pbtx:3:14: output_path is empty" },
	{ BUF "buffers { size_kb: 64 }\nbuffers { size_kb: 64 }\nbuffers { size_kb: 64 }\nbuffers { size_kb: 64 }\n"
	  "data_sources { config { name: \"linux.ftrace\" target_buffer: 0 ftrace_config { ftrace_events: \"a/b\" } } }\n"
	  "data_sources { config { name: \"linux.ftrace\" target_buffer: 1 ftrace_config { ftrace_events: \"a/b\" } } }\n"
	  "data_sources { config { name: \"linux.ftrace\" target_buffer: 2 ftrace_config { ftrace_events: \"a/b\" } } }\n"
	  "data_sources { config { name: \"linux.ftrace\" target_buffer: 3 ftrace_config { ftrace_events: \"a/b\" } } }\n"
	  "data_sources { config { name: \"linux.ftrace\" target_buffer: 4 ftrace_config { ftrace_events: \"a/b\" } } }\n",
	  "linux.ftrace sources write into 5 different buffers: pbtrace supports at most 4" },
	{ "duration_ms: 5\nbuffers { size_kb: -5 }", "t.pbtx:2:20: value out of range for uint32: -5" },
	{ BUF "data_sources { config { name: \"linux.ftrace\" ftrace_config {\n"
	  "  syscall_events: \"sys_openat\"\n  syscall_events: \"sys_nosuchcall\" } } }\n",
	  "t.pbtx:4:19: data_sources[0] syscall_events[1] \"sys_nosuchcall\" is not a syscall of this machine's ABI: name it as Perfetto does, e.g. \"sys_openat\"" },
	{ BUF "data_sources { config { name: \"linux.ftrace\" ftrace_config { syscall_events: \"\" } } }\n",
	  "t.pbtx:2:78: data_sources[0] syscall_events[0] \"\" is not a syscall" },
	{ BUF "data_sources { config { name: \"linux.ftrace\" ftrace_config { ftrace_events: \"a/b\" buffer_size_kb: 2000000 } } }\n",
	  "t.pbtx:2:99: data_sources[0] ftrace_config.buffer_size_kb 2000000 (per CPU) is above pbtrace's 1048576 KB per buffer" },
};

static void test_bad(void)
{
	size_t i;

	for (i = 0; i < sizeof(bad_configs) / sizeof(bad_configs[0]); i++) {
		const struct bad *b = &bad_configs[i];
		char err[512] = "";
		struct pbt_config c;
		int r;

		r = pbt_config_parse(b->text, strlen(b->text), "t.pbtx",
				     PBT_CONFIG_AUTO, &c, err, sizeof(err));
		tap(r == -EINVAL && strstr(err, b->words) && !c.tc && !c.bytes,
		    "refused: %s", b->words);
		if (r != -EINVAL || !strstr(err, b->words))
			printf("# got %d: %s\n", r, err);
		pbt_config_free(&c);
	}
}

/* A binary config whose fill_policy is out of range: protobuf-c does not
 * check closed enums, so config.c must. buffers{size_kb:1024 fill_policy:7}
 * and a linux.ftrace source. */
static void test_bad_binary(void)
{
	static const uint8_t bin[] = {
		0x0a, 0x05, 0x08, 0x80, 0x08, 0x20, 0x07,
		0x12, 0x1a, 0x0a, 0x18, 0x0a, 0x0c, 'l', 'i', 'n', 'u', 'x',
		'.', 'f', 't', 'r', 'a', 'c', 'e', 0xa2, 0x06, 0x07, 0x0a,
		0x05, 'a', '/', 'b', 'c', 'd',
	};
	char err[512] = "";
	struct pbt_config c;
	int r;

	r = pbt_config_parse(bin, sizeof(bin), "x.pb", PBT_CONFIG_AUTO, &c,
			     err, sizeof(err));
	tap(r == -EINVAL && strstr(err, "x.pb: buffers[0].fill_policy 7 is not a fill policy"),
	    "binary fill_policy 7 refused (%s)", err);
	pbt_config_free(&c);
	r = pbt_config_parse(bin, 9, "x.pb", PBT_CONFIG_AUTO, &c, err, sizeof(err));
	tap(r == -EINVAL && strstr(err, "not a valid binary TraceConfig"),
	    "truncated binary refused (%s)", err);
	pbt_config_free(&c);
}

static void test_spec_rules(void)
{
	static const char two_sources[] =
		"buffers { size_kb: 256 }\n"
		"data_sources { config { name: \"linux.ftrace\" ftrace_config { ftrace_events: \"sched/sched_switch\" tids_to_trace: 7 } } }\n"
		"data_sources { config { name: \"linux.ftrace\" ftrace_config { ftrace_events: \"sched/sched_switch\" ftrace_events: \"irq/irq_handler_entry\" } } }\n"
		"data_sources { config { name: \"linux.sys_stats\" ftrace_config { } } }\n";
	char err[512] = "", *many;
	struct pbt_session_spec spec;
	struct pbt_config c;
	size_t i, n = 0;
	int r;

	r = pbt_config_parse(two_sources, sizeof(two_sources) - 1, "t.pbtx",
			     PBT_CONFIG_AUTO, &c, err, sizeof(err));
	tap(!r && has_warning(&c, "t.pbtx:4:49: data_sources[2] \"linux.sys_stats\" has an ftrace_config"),
	    "stray ftrace_config on linux.sys_stats warned about at its line:col");
	r = r ? r : pbt_config_to_spec(&c, &spec, NULL, 2, err, sizeof(err));
	tap(!r && spec.nr_buffers == 1 && spec.buffers[0].nr_events == 2 &&
	    spec.buffers[0].nr_pids == 0 &&
	    has_warning(&c, "tids_to_trace does not narrow this buffer"),
	    "two sources in one buffer: events merged without duplicates, tids filter dropped with a warning");
	tap(!r && !strncmp(spec.name, "pbtrace-", 8),
	    "no unique_session_name: a generated name (%s)", r ? "" : spec.name);
	r = r ? r : pbt_config_to_spec(&c, &spec, NULL, 16, err, sizeof(err));
	tap(r == -EINVAL && strstr(err, "buffers[0].size_kb 256 is too small for 16 CPUs") &&
	    strstr(err, "use size_kb: 512 or more"),
	    "buffer smaller than 2 chunks per CPU refused (%s)", err);
	pbt_config_free(&c);

	many = malloc(8192);
	n = (size_t)sprintf(many, "buffers { size_kb: 1024 }\ndata_sources { config { name: \"linux.ftrace\" ftrace_config {");
	for (i = 0; i < PBT_MAX_EVENTS + 1; i++)
		n += (size_t)sprintf(many + n, " ftrace_events: \"g/e%zu\"", i);
	n += (size_t)sprintf(many + n, " } } }\n");
	r = pbt_config_parse(many, n, "t.pbtx", PBT_CONFIG_AUTO, &c, err, sizeof(err));
	r = r ? r : pbt_config_to_spec(&c, &spec, NULL, 2, err, sizeof(err));
	tap(r == -EINVAL && strstr(err, "more than 32 distinct events"),
	    "33 events in one buffer refused (%s)", err);
	pbt_config_free(&c);
	free(many);
}

static bool syscalls_are(const struct pbt_buffer_spec *b, const int *want,
			 size_t n)
{
	size_t i;

	if (b->nr_syscalls == n) {
		for (i = 0; i < n && (int)b->syscalls[i] == want[i]; i++)
			;
		if (i == n)
			return true;
	}
	printf("# syscalls:");
	for (i = 0; i < b->nr_syscalls; i++)
		printf(" %u", b->syscalls[i]);
	printf("\n");
	return false;
}

/* Load text and build the spec for nr_cpus; 0 or -errno, err set. */
static int spec_cpus(const char *text, struct pbt_config *c,
		   struct pbt_session_spec *spec, unsigned int nr_cpus,
		   char *err, size_t errlen)
{
	int r = pbt_config_parse(text, strlen(text), "t.pbtx", PBT_CONFIG_AUTO,
				 c, err, errlen);

	return r ? r : pbt_config_to_spec(c, spec, NULL, nr_cpus, err, errlen);
}

#define FTRACE_SRC(body) \
	"data_sources { config { name: \"linux.ftrace\" ftrace_config { " body " } } }\n"

/* syscall_events -> PBTRACE_A_BUFFER_SYSCALLS: numbers of this ABI, the
 * expectation from the compiler's own __NR_ macros (<sys/syscall.h>), not
 * from the table user/Makefile generates. */
static void test_syscalls(void)
{
	static const int open_ppid[] = { __NR_openat, __NR_getppid };
	static const int ppid[] = { __NR_getppid };
	struct pbt_session_spec spec;
	char err[512] = "";
	struct pbt_config c;
	int r;

	tap(pbt_syscall_nr("sys_openat") == __NR_openat &&
	    pbt_syscall_nr("openat") == __NR_openat &&
	    pbt_syscall_nr("sys_getppid") == __NR_getppid &&
	    pbt_syscall_nr("read") == __NR_read &&
	    pbt_syscall_nr("sys_exit_group") == __NR_exit_group &&
	    pbt_syscall_nr("sysinfo") == __NR_sysinfo &&
	    pbt_syscall_nr("sys_sysinfo") == __NR_sysinfo,
	    "syscall names, Perfetto's \"sys_\" spelling and the bare one, give <sys/syscall.h>'s numbers");
	tap(pbt_syscall_nr("sys_nosuchcall") < 0 && pbt_syscall_nr("") < 0 &&
	    pbt_syscall_nr("sys_") < 0 && pbt_syscall_nr("SYS_READ") < 0,
	    "unknown names are -1");
	tap(pbt_syscall_count() > 300 && pbt_syscall_name(__NR_getppid) &&
	    !strcmp(pbt_syscall_name(__NR_getppid), "getppid") &&
	    !pbt_syscall_name(100000),
	    "table of %zu syscalls; number -> name", pbt_syscall_count());

	r = spec_cpus(BUF FTRACE_SRC("syscall_events: \"sys_openat\" syscall_events: \"getppid\" syscall_events: \"openat\""),
		    &c, &spec, 2, err, sizeof(err));
	tap(!r && syscalls_are(&spec.buffers[0], open_ppid, 2) &&
	    spec.buffers[0].nr_events == 2 &&
	    !strcmp(spec.buffers[0].events[0], "raw_syscalls/sys_enter") &&
	    !strcmp(spec.buffers[0].events[1], "raw_syscalls/sys_exit") &&
	    no_warning(&c, "syscall"),
	    "syscall_events alone: sys_enter/sys_exit for openat and getppid, duplicates merged, no warning (%s)",
	    err);
	pbt_config_free(&c);

	r = spec_cpus(BUF FTRACE_SRC("ftrace_events: \"raw_syscalls/sys_enter\" syscall_events: \"sys_getppid\""),
		    &c, &spec, 2, err, sizeof(err));
	tap(!r && syscalls_are(&spec.buffers[0], ppid, 1) &&
	    spec.buffers[0].nr_events == 2,
	    "raw_syscalls in ftrace_events with syscall_events in the same source: narrowed, as Perfetto does (%s)",
	    err);
	pbt_config_free(&c);

	r = spec_cpus(BUF FTRACE_SRC("syscall_events: \"sys_getppid\"")
		    FTRACE_SRC("ftrace_events: \"raw_syscalls/sys_enter\""),
		    &c, &spec, 2, err, sizeof(err));
	tap(!r && spec.buffers[0].nr_syscalls == 0 &&
	    has_warning(&c, "buffers[0]: syscall_events does not narrow this buffer"),
	    "another source wanting every syscall in the same buffer: no filter, warned about (%s)",
	    err);
	pbt_config_free(&c);

	r = spec_cpus(BUF BUF FTRACE_SRC("ftrace_events: \"raw_syscalls/sys_enter\"")
		    "data_sources { config { name: \"linux.ftrace\" target_buffer: 1 ftrace_config { syscall_events: \"sys_getppid\" } } }\n",
		    &c, &spec, 2, err, sizeof(err));
	tap(!r && spec.nr_buffers == 2 && spec.buffers[0].nr_syscalls == 0 &&
	    syscalls_are(&spec.buffers[1], ppid, 1) && no_warning(&c, "narrow"),
	    "a filter in one buffer leaves the other buffer's syscalls alone (%s)",
	    err);
	pbt_config_free(&c);
}

/* ftrace_config.buffer_size_kb: per CPU, the buffer is at least that. */
static void test_buffer_size(void)
{
	struct pbt_session_spec spec;
	char err[512] = "";
	struct pbt_config c;
	int r;

	r = spec_cpus("buffers { size_kb: 256 }\n"
		    FTRACE_SRC("ftrace_events: \"a/b\" buffer_size_kb: 512")
		    FTRACE_SRC("ftrace_events: \"a/c\" buffer_size_kb: 1024"),
		    &c, &spec, 2, err, sizeof(err));
	tap(!r && spec.buffers[0].size_kb == 2048 &&
	    has_notice(&c, "buffers[0]: 2048 KB (ftrace_config.buffer_size_kb 1024 per CPU x 2 CPUs) instead of size_kb 256"),
	    "buffer_size_kb 1024 (the larger of two sources) x 2 CPUs grows size_kb 256 to 2048, with a notice (%s)",
	    err);
	r = r ? r : pbt_config_to_spec(&c, &spec, NULL, 1, err, sizeof(err));
	tap(!r && spec.buffers[0].size_kb == 1024 && c.nr_notices == 1,
	    "1 CPU: 1024 KB; a second conversion does not repeat the notice");
	pbt_config_free(&c);

	r = spec_cpus("buffers { size_kb: 4096 }\n"
		    FTRACE_SRC("ftrace_events: \"a/b\" buffer_size_kb: 1024"),
		    &c, &spec, 4, err, sizeof(err));
	tap(!r && spec.buffers[0].size_kb == 4096 && c.nr_notices == 0,
	    "buffer_size_kb x CPUs not above size_kb: size_kb, no notice (%s)",
	    err);
	pbt_config_free(&c);

	r = spec_cpus("buffers { size_kb: 4096 }\nbuffers { size_kb: 1024 }\n"
		    FTRACE_SRC("ftrace_events: \"a/b\" buffer_size_kb: 65536")
		    "data_sources { config { name: \"linux.ftrace\" target_buffer: 1 ftrace_config { ftrace_events: \"a/b\" } } }\n",
		    &c, &spec, 32, err, sizeof(err));
	tap(!r && spec.buffers[0].size_kb == PBT_BUFFER_MAX_KB &&
	    spec.buffers[1].size_kb == 1024 &&
	    has_notice(&c, "buffers[0]: 1048576 KB, pbtrace's largest buffer, instead of ftrace_config.buffer_size_kb 65536 per CPU x 32 CPUs = 2097152 KB"),
	    "65536 KB per CPU x 32 CPUs: capped at 1 GiB with a notice; the other buffer keeps its size (%s)",
	    err);
	pbt_config_free(&c);

	/* Only the buffer_size_kb of sources writing into the buffer. */
	r = spec_cpus("buffers { size_kb: 256 }\nbuffers { size_kb: 256 }\n"
		    FTRACE_SRC("ftrace_events: \"a/b\"")
		    "data_sources { config { name: \"linux.ftrace\" target_buffer: 1 ftrace_config { ftrace_events: \"a/b\" buffer_size_kb: 256 } } }\n",
		    &c, &spec, 2, err, sizeof(err));
	tap(!r && spec.buffers[0].size_kb == 256 && spec.buffers[1].size_kb == 512,
	    "buffer_size_kb applies to its own target buffer only (%s)", err);
	pbt_config_free(&c);
}

static void test_kernel_cpus(void)
{
	tap(pbt_kernel_cpus("0-3\n") == 4 && pbt_kernel_cpus("0\n") == 1 &&
	    pbt_kernel_cpus("0,2-5") == 6 && pbt_kernel_cpus("0-1,7") == 8 &&
	    pbt_kernel_cpus("") == sysconf(_SC_NPROCESSORS_CONF) &&
	    pbt_kernel_cpus(NULL) >= 1,
	    "CPUs a buffer is split over: the last possible CPU + 1 (%ld here)",
	    pbt_kernel_cpus(NULL));
}

static void test_drain_and_snapshot(void)
{
	struct pbt_config c;
	char err[512] = "";
	static const char no_stream[] = BUF
		"data_sources { config { name: \"linux.ftrace\" ftrace_config { ftrace_events: \"a/b\" drain_period_ms: 200 } } }\n";
	static const char stream[] = BUF
		"data_sources { config { name: \"linux.ftrace\" ftrace_config { ftrace_events: \"a/b\" drain_period_ms: 200 } } }\n"
		"write_into_file: true\n";
	static const char low[] = BUF
		"data_sources { config { name: \"linux.ftrace\" ftrace_config { ftrace_events: \"a/b\" drain_period_ms: 5 } } }\n"
		"write_into_file: true\nbuiltin_data_sources { snapshot_interval_ms: 20 }\n";
	int r;

	r = pbt_config_parse(no_stream, sizeof(no_stream) - 1, "t.pbtx",
			     PBT_CONFIG_AUTO, &c, err, sizeof(err));
	tap(!r && has_warning(&c, "t.pbtx:2:100: data_sources[0] ftrace_config.drain_period_ms only applies with write_into_file: true"),
	    "drain_period_ms without write_into_file warned about at its line:col (%s)", err);
	pbt_config_free(&c);
	r = pbt_config_parse(stream, sizeof(stream) - 1, "t.pbtx",
			     PBT_CONFIG_AUTO, &c, err, sizeof(err));
	tap(!r && c.nr_warnings == 0, "drain_period_ms with write_into_file: no warning (%s)", err);
	pbt_config_free(&c);
	r = pbt_config_parse(low, sizeof(low) - 1, "t.pbtx", PBT_CONFIG_AUTO,
			     &c, err, sizeof(err));
	tap(!r && has_warning(&c, "t.pbtx:2:100: data_sources[0] ftrace_config.drain_period_ms 5 is below pbtrace's minimum: traced drains every 10 ms") &&
	    has_warning(&c, "t.pbtx:4:46: builtin_data_sources.snapshot_interval_ms 20 is below pbtrace's minimum: traced writes a clock_snapshot every 100 ms"),
	    "drain_period_ms and snapshot_interval_ms below the minimum warned about at line:col (%s)", err);
	pbt_config_free(&c);
}

static void test_flags(void)
{
	static const char *const events[] = {
		"sched/sched_switch", "sched/sched_waking",
	};
	static const uint32_t pids[] = { 42, 43 };
	struct pbt_config_flags fl = {
		.events = events, .nr_events = 2, .size_kb = 4096,
		.fill_policy = PBTRACE_FILL_DISCARD, .duration_ms = 5000,
		.output = "/tmp/a \"b\".pftrace", .name = "adhoc",
		.pids = pids, .nr_pids = 2, .file_write_period_ms = 250,
	};
	struct pbt_config c, t;
	struct pbt_session_spec spec;
	char err[512] = "", *text = NULL;
	int r;

	r = pbt_config_from_flags(&fl, &c, &text, err, sizeof(err));
	tap(!r && text, "flags make a config (%s)", err);
	if (r)
		return;
	r = pbt_config_to_spec(&c, &spec, NULL, 2, err, sizeof(err));
	tap(!r && spec.nr_buffers == 1 && spec.buffers[0].size_kb == 4096 &&
	    spec.buffers[0].fill_policy == PBTRACE_FILL_DISCARD &&
	    events_are(&spec.buffers[0], events, 2) &&
	    spec.buffers[0].nr_pids == 2 && spec.buffers[0].pids[1] == 43 &&
	    !strcmp(spec.name, "adhoc") &&
	    !strcmp(spec.output, "/tmp/a \"b\".pftrace"),
	    "flags spec: size, policy, events, pids, name, output with quotes");
	tap(c.tc->duration_ms == 5000 && c.tc->write_into_file &&
	    c.tc->file_write_period_ms == 250 && c.tc->n_data_sources == 2 &&
	    c.tc->data_sources[1]->config->process_stats_config &&
	    c.tc->data_sources[1]->config->process_stats_config->scan_all_processes_on_start,
	    "flags config: duration, streaming, process tree at start");
	r = pbt_config_parse(text, strlen(text), "flags.pbtx", PBT_CONFIG_AUTO,
			     &t, err, sizeof(err));
	tap(!r && t.len == c.len && !memcmp(t.bytes, c.bytes, c.len),
	    "the printed text of the flags loads to the same bytes (file mode == flag mode)");
	if (!r)
		pbt_config_free(&t);
	pbt_config_free(&c);
	free(text);

	fl.nr_events = 0;
	r = pbt_config_from_flags(&fl, &c, NULL, err, sizeof(err));
	tap(r == -EINVAL && strstr(err, "no events given"), "flags without events refused");
	pbt_config_free(&c);
	fl.nr_events = 1;
	fl.events = (const char *const[]){ "sched switch" };
	r = pbt_config_from_flags(&fl, &c, NULL, err, sizeof(err));
	tap(r == -EINVAL && strstr(err, "tracectl flags: data_sources[0] ftrace_events[0] \"sched switch\" is not \"group/name\""),
	    "flags with a bad event name refused without line numbers (%s)", err);
	pbt_config_free(&c);
	fl.events = events;
	fl.nr_events = 2;
	fl.all_machines = true;
	r = pbt_config_from_flags(&fl, &c, NULL, err, sizeof(err));
	r = r ? r : pbt_config_to_spec(&c, &spec, NULL, 2, err, sizeof(err));
	tap(!r && c.tc->trace_all_machines &&
	    machines_are(&spec.buffers[0], (const char *const[]){ "host", "*", NULL }),
	    "flags -A: trace_all_machines, buffer list host * (%s)", err);
	pbt_config_free(&c);
	fl.machines = (const char *const[]){ "guest2", "host" };
	fl.nr_machines = 2;
	r = pbt_config_from_flags(&fl, &c, &text, err, sizeof(err));
	r = r ? r : pbt_config_to_spec(&c, &spec, NULL, 2, err, sizeof(err));
	tap(!r && machines_are(&spec.buffers[0], (const char *const[]){ "guest2", "host", NULL }) &&
	    c.nr_warnings == 0,
	    "flags -m guest2 -m host: the filter on the ftrace source wins over -A, no warning (%s)",
	    err);
	pbt_config_free(&c);
	free(text);
	fl.machines = (const char *const[]){ "" };
	fl.nr_machines = 1;
	r = pbt_config_from_flags(&fl, &c, NULL, err, sizeof(err));
	tap(r == -EINVAL && strstr(err, "tracectl flags: data_sources[0] machine_name_filter[0] is empty"),
	    "flags -m '': refused, naming the filter (%s)", err);
	pbt_config_free(&c);
	tap(pbt_fill_policy_from_name("ring") == PBTRACE_FILL_RING_BUFFER &&
	    pbt_fill_policy_from_name("DISCARD") == PBTRACE_FILL_DISCARD &&
	    pbt_fill_policy_from_name("drop") == -1,
	    "fill policy names");
}

/* Loads text, builds the spec for 2 CPUs; 0 or the error. */
static int spec_of(const char *text, struct pbt_config *c,
		   struct pbt_session_spec *spec, char *err, size_t errlen)
{
	int r = pbt_config_parse(text, strlen(text), "m.pbtx", PBT_CONFIG_AUTO,
				 c, err, errlen);

	return r ? r : pbt_config_to_spec(c, spec, NULL, 2, err, errlen);
}

#define FT_SRC(buf, filters) \
	"data_sources { config { name: \"linux.ftrace\" target_buffer: " #buf \
	" ftrace_config { ftrace_events: \"sched/sched_switch\" } } " filters " }\n"
#define TWO_BUFS "buffers { size_kb: 1024 }\nbuffers { size_kb: 1024 }\n"

struct machines_case {
	const char *what;
	const char *text;
	const char *const want0[PBTRACE_MAX_MACHINE_NAMES + 1];
	const char *const want1[PBTRACE_MAX_MACHINE_NAMES + 1];
	const char *warning;	/* NULL: none about machines */
};

static const struct machines_case machines_cases[] = {
	{ "no filter, no trace_all_machines: this machine only, no attribute",
	  TWO_BUFS FT_SRC(0, "") FT_SRC(1, ""), { NULL }, { NULL }, NULL },
	{ "trace_all_machines: host and every relayed machine",
	  TWO_BUFS FT_SRC(0, "") "trace_all_machines: true\n",
	  { "host", "*", NULL }, { NULL }, NULL },
	{ "a filter wins over trace_all_machines, per source",
	  TWO_BUFS FT_SRC(0, "machine_name_filter: \"guest2\"")
	  FT_SRC(1, "") "trace_all_machines: true\n",
	  { "guest2", NULL }, { "host", "*", NULL }, NULL },
	{ "filter \"host\" only is this machine: no attribute",
	  TWO_BUFS FT_SRC(0, "machine_name_filter: \"host\"")
	  "trace_all_machines: true\n", { NULL }, { NULL }, NULL },
	{ "host and a guest, duplicates once",
	  TWO_BUFS FT_SRC(0, "machine_name_filter: \"host\" machine_name_filter: \"web 1\" machine_name_filter: \"host\""),
	  { "host", "web 1", NULL }, { NULL }, NULL },
	{ "two sources in one buffer: the union, with a warning",
	  TWO_BUFS FT_SRC(1, "machine_name_filter: \"guest2\"") FT_SRC(1, ""),
	  { "guest2", "host", NULL }, { NULL },
	  "buffers[1]: its linux.ftrace sources name different machines" },
	{ "two sources naming the same machines: no warning",
	  TWO_BUFS FT_SRC(0, "machine_name_filter: \"a\"")
	  FT_SRC(0, "machine_name_filter: \"a\""), { "a", NULL }, { NULL },
	  NULL },
};

static bool no_machine_warning(const struct pbt_config *c)
{
	size_t i;

	for (i = 0; i < c->nr_warnings; i++)
		if (strstr(c->warnings[i], "machine")) {
			printf("# unexpected: %s\n", c->warnings[i]);
			return false;
		}
	return true;
}

static void test_machines(void)
{
	size_t i;

	for (i = 0; i < sizeof(machines_cases) / sizeof(machines_cases[0]); i++) {
		const struct machines_case *m = &machines_cases[i];
		struct pbt_session_spec spec;
		struct pbt_config c;
		char err[512] = "";
		int r = spec_of(m->text, &c, &spec, err, sizeof(err));
		bool two = !r && spec.nr_buffers == 2;

		tap(!r && machines_are(&spec.buffers[0], m->want0) &&
		    (!two || machines_are(&spec.buffers[1], m->want1)) &&
		    (m->warning ? has_warning(&c, m->warning) :
				  no_machine_warning(&c)),
		    "machines: %s (%s)", m->what, err);
		pbt_config_free(&c);
	}
}

static void test_machines_bad(void)
{
	static const struct bad cases[] = {
		{ TWO_BUFS FT_SRC(0, "machine_name_filter: \"\""),
		  "m.pbtx:3:140: data_sources[0] machine_name_filter[0] is empty: give a machine's name" },
		{ TWO_BUFS FT_SRC(0, "machine_name_filter: \"host\" machine_name_filter: \"*\""),
		  "m.pbtx:3:168: data_sources[0] machine_name_filter[1] \"*\" is not a machine name: leave the filter out and set trace_all_machines: true" },
		{ TWO_BUFS FT_SRC(0, "machine_name_filter: \"a\\tb\""),
		  "machine_name_filter[0] has byte 0x09: machine names are printable ASCII" },
		{ TWO_BUFS FT_SRC(0, "machine_name_filter: \"0123456789012345678901234567890123456789012345678901234567890123\""),
		  "machine_name_filter[0] is 64 characters: pbtrace matches names of at most 63" },
		{ TWO_BUFS FT_SRC(0, "machine_name_filter: \"a\" machine_name_filter: \"b\" machine_name_filter: \"c\" machine_name_filter: \"d\" machine_name_filter: \"e\" machine_name_filter: \"f\" machine_name_filter: \"g\" machine_name_filter: \"h\" machine_name_filter: \"i\""),
		  "data_sources[0] has 9 machine_name_filter entries: pbtrace takes at most 8 machines per buffer" },
	};
	static const char too_many[] = TWO_BUFS
		FT_SRC(0, "machine_name_filter: \"a\" machine_name_filter: \"b\" machine_name_filter: \"c\" machine_name_filter: \"d\" machine_name_filter: \"e\"")
		FT_SRC(0, "machine_name_filter: \"f\" machine_name_filter: \"g\" machine_name_filter: \"h\" machine_name_filter: \"host\"");
	static const char own[] = TWO_BUFS FT_SRC(0, "")
		"data_sources { config { name: \"linux.process_stats\" } machine_name_filter: \"guest2\" }\n"
		"data_sources { config { name: \"linux.sys_stats\" } machine_name_filter: \"host\" }\n";
	struct pbt_session_spec spec;
	struct pbt_config c;
	char err[512] = "";
	size_t i;
	int r;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		r = pbt_config_parse(cases[i].text, strlen(cases[i].text),
				     "m.pbtx", PBT_CONFIG_AUTO, &c, err, sizeof(err));
		tap(r == -EINVAL && strstr(err, cases[i].words) && !c.tc,
		    "machines refused: %s", cases[i].words);
		if (r != -EINVAL || !strstr(err, cases[i].words))
			printf("# got %d: %s\n", r, err);
		pbt_config_free(&c);
	}
	r = spec_of(too_many, &c, &spec, err, sizeof(err));
	tap(r == -EINVAL && strstr(err, "buffers[0]: its linux.ftrace sources name more than 8 distinct machines") &&
	    strstr(err, "split the sources over two buffers"),
	    "9 machines over two sources of one buffer refused (%s)", err);
	pbt_config_free(&c);
	r = spec_of(own, &c, &spec, err, sizeof(err));
	tap(!r && has_warning(&c, "m.pbtx:4:76: data_sources[1] \"linux.process_stats\" has a machine_name_filter without \"host\": traced records it on this machine only") &&
	    c.nr_warnings == 1,
	    "a filter on traced's own source warned about once, only without \"host\" (%s)",
	    err);
	pbt_config_free(&c);
}

/* Field numbers: Perfetto's protoc encodes the text, our subset decodes it
 * with nothing unknown and the same machines. */
static void test_machines_binary(void)
{
	static const char text[] =
		"buffers { size_kb: 1024 }\n"
		FT_SRC(0, "machine_name_filter: \"host\" machine_name_filter: \"guest2\"")
		"buffers { size_kb: 1024 }\n"
		FT_SRC(1, "")
		"trace_all_machines: true\n";
	char path[PATH_MAX], bin[PATH_MAX], err[512] = "";
	struct pbt_session_spec spec;
	struct pbt_config c;
	FILE *f;
	int r;

	snprintf(path, sizeof(path), "%s/machines.pbtx", tmp_dir);
	snprintf(bin, sizeof(bin), "%s/machines.pb", tmp_dir);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	r = sh("protoc -I '%s' --encode=perfetto.protos.TraceConfig perfetto_config.proto < '%s' > '%s'",
	       schema_dir, path, bin);
	r = r ? r : pbt_config_load(bin, PBT_CONFIG_AUTO, &c, err, sizeof(err));
	tap(!r && c.format == PBT_CONFIG_BINARY && c.nr_warnings == 0 &&
	    c.tc->trace_all_machines,
	    "Perfetto's encoding of trace_all_machines and machine_name_filter has no field unknown to pbtrace (%s)",
	    err);
	if (r)
		return;
	r = pbt_config_to_spec(&c, &spec, NULL, 2, err, sizeof(err));
	tap(!r && spec.nr_buffers == 2 &&
	    machines_are(&spec.buffers[0], (const char *const[]){ "host", "guest2", NULL }) &&
	    machines_are(&spec.buffers[1], (const char *const[]){ "host", "*", NULL }),
	    "binary config: the same machine lists as text (%s)", err);
	pbt_config_free(&c);
}

static void test_detect_and_io(void)
{
	static const char text[] = "duration_ms: 5\n# é\n";
	static const char bin[] = "\x18\x05";
	char err[512] = "";
	struct pbt_config c;
	int r;

	tap(pbt_config_detect("a.pbtx", bin, 2) == PBT_CONFIG_TEXT &&
	    pbt_config_detect("a.pb", text, sizeof(text) - 1) == PBT_CONFIG_BINARY &&
	    pbt_config_detect("a", text, sizeof(text) - 1) == PBT_CONFIG_TEXT &&
	    pbt_config_detect("a", bin, 2) == PBT_CONFIG_BINARY &&
	    pbt_config_detect(NULL, "", 0) == PBT_CONFIG_TEXT,
	    "format by extension first, else by content");
	r = pbt_config_load("/nonexistent/x.pbtx", PBT_CONFIG_AUTO, &c, err, sizeof(err));
	tap(r == -ENOENT && strstr(err, "/nonexistent/x.pbtx: cannot open config: No such file"),
	    "missing file: %s", err);
	pbt_config_free(&c);
}

int main(void)
{
	find_dirs("config_test");
	printf("# schema %s, scratch %s\n", schema_dir, tmp_dir);
	test_full();
	test_binary();
	test_bad();
	test_bad_binary();
	test_spec_rules();
	test_syscalls();
	test_buffer_size();
	test_drain_and_snapshot();
	test_kernel_cpus();
	test_flags();
	test_detect_and_io();
	test_machines();
	test_machines_bad();
	test_machines_binary();
	printf("1..%d\n", nr_tests);
	if (!nr_failed)
		sh("rm -rf '%s'", tmp_dir);
	return nr_failed ? 1 : 0;
}
