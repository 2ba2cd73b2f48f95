// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only module: proves that tools/vm turns a kernel WARNING or Oops into
 * a failed run. Loaded by "tools/vm --inject-warning" or "--inject-oops";
 * never part of pbtrace.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/bug.h>
#include <linux/compiler.h>

static bool warn;
module_param(warn, bool, 0444);
MODULE_PARM_DESC(warn, "WARN() once at load time");

static bool oops;
module_param(oops, bool, 0444);
MODULE_PARM_DESC(oops, "write through a NULL pointer at load time");

/* Read through READ_ONCE so the compiler cannot see the NULL coming. */
static int *nowhere;

static int __init pbt_selftest_init(void)
{
	WARN(warn, "pbt_selftest: warning injected on purpose by tools/vm --inject-warning\n");
	if (oops)
		*READ_ONCE(nowhere) = 1;
	return 0;
}

static void __exit pbt_selftest_exit(void)
{
}

module_init(pbt_selftest_init);
module_exit(pbt_selftest_exit);
MODULE_DESCRIPTION("tools/vm runner self-test (injects a WARNING or an Oops)");
MODULE_LICENSE("GPL");
