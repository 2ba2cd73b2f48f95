/* SPDX-License-Identifier: GPL-2.0 */
/*
 * TAP output for the host tests (user/tests, selftests/pbtrace/unit) and
 * relay_hostile: one "ok N - ..." or "not ok N - ..." line a check; the
 * caller prints the plan "1..nr_tests" at the end and fails if nr_failed.
 * Static inline so that each test stays one source file, as user/Makefile
 * builds each tests/NAME_test.c.
 */
#ifndef PBT_TESTS_TAP_H
#define PBT_TESTS_TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static int nr_tests, nr_failed;

static inline __attribute__((format(printf, 2, 3)))
void tap(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", ok ? "" : "not ", ++nr_tests);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (!ok)
		nr_failed++;
}

#endif /* PBT_TESTS_TAP_H */
