// SPDX-License-Identifier: GPL-2.0
/*
 * Stamps lines as they arrive: every line read from stdin is written to
 * stdout as "boottime_ns line", boottime_ns the CLOCK_BOOTTIME time the
 * read() that completed it returned. live_trace_test.sh pipes a live
 * tracer (tracectl trace, perf trace) into it: the time from a syscall's
 * return to its line on a person's terminal.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(void)
{
	char buf[65536], line[8192];
	size_t len = 0;
	unsigned long long t;
	struct timespec ts;
	ssize_t n, i;

	while ((n = read(0, buf, sizeof(buf))) > 0) {
		clock_gettime(CLOCK_BOOTTIME, &ts);
		t = (unsigned long long)ts.tv_sec * 1000000000ull + ts.tv_nsec;
		for (i = 0; i < n; i++) {
			if (buf[i] != '\n') {
				if (len < sizeof(line) - 1)
					line[len++] = buf[i];
				continue;
			}
			line[len] = '\0';
			printf("%llu %s\n", t, line);
			len = 0;
		}
	}
	if (len) {
		line[len] = '\0';
		printf("%llu %s\n", t, line);
	}
	return 0;
}
