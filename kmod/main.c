// SPDX-License-Identifier: GPL-2.0
/*
 * pbtrace.ko: tracepoint probes that write Perfetto protobuf into per-CPU
 * buffers userspace maps read-only. Load order: events known, buffers ready
 * for hotplug, then the device and the netlink family that let users in.
 */
#include <linux/jump_label.h>
#include <linux/module.h>
#include <linux/sysfs.h>

#include "pbtrace.h"
#include "relay/relay.h"

/*
 * Test-only fault injection: every event re-enters pbt_emit() once from
 * inside the writer, as a probe firing in the write path would. The
 * nested call must be dropped and counted in lost_nmi. Off (0) normally.
 * A static key, so the probes pay nothing for it while it is off (a load
 * and test cost the storm benchmark 7 instructions an event).
 */
DEFINE_STATIC_KEY_FALSE(pbt_fault_recurse);

static int fault_recurse_set(const char *val, const struct kernel_param *kp)
{
	bool on;
	int ret = kstrtobool(val, &on);

	if (ret)
		return ret;
	if (on)
		static_branch_enable(&pbt_fault_recurse);
	else
		static_branch_disable(&pbt_fault_recurse);
	return 0;
}

static int fault_recurse_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", static_key_enabled(&pbt_fault_recurse));
}

static const struct kernel_param_ops fault_recurse_ops = {
	.set = fault_recurse_set,
	.get = fault_recurse_get,
};
module_param_cb(fault_recurse, &fault_recurse_ops, NULL, 0600);
MODULE_PARM_DESC(fault_recurse, "test only: re-enter the probe path from the writer (1 = on)");

/*
 * Test-only: microseconds a sys_enter's probe waits between the event and
 * its strings (interrupts on, preemption off, as always between the two),
 * so that a live watermark round lands in that window often: the strings
 * carry the sys_enter's timestamp and must still come in below the next
 * watermark (watermark_test.sh). 0 (off) normally; a static key, so the
 * string syscalls' probe pays nothing for it while it is off.
 */
DEFINE_STATIC_KEY_FALSE(pbt_fault_strings_key);
unsigned int pbt_fault_strings_us;

static int fault_strings_set(const char *val, const struct kernel_param *kp)
{
	unsigned int us;
	int ret = kstrtouint(val, 0, &us);

	if (ret)
		return ret;
	if (us > 10000)
		return -ERANGE;
	WRITE_ONCE(pbt_fault_strings_us, us);
	if (us)
		static_branch_enable(&pbt_fault_strings_key);
	else
		static_branch_disable(&pbt_fault_strings_key);
	return 0;
}

static int fault_strings_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(pbt_fault_strings_us));
}

static const struct kernel_param_ops fault_strings_ops = {
	.set = fault_strings_set,
	.get = fault_strings_get,
};
module_param_cb(fault_strings_us, &fault_strings_ops, NULL, 0600);
MODULE_PARM_DESC(fault_strings_us, "test only: wait this many us between a sys_enter and its strings (0 = off, up to 10000)");

static int __init pbt_init(void)
{
	int ret;

	pbt_stack_init();
	ret = pbt_probes_init();
	if (ret)
		return ret;
	ret = pbt_buffers_init();
	if (ret)
		goto err_probes;
	ret = pbt_tp_init();
	if (ret)
		goto err_buffers;
	ret = pbt_watermarks_init();
	if (ret)
		goto err_tp;
	ret = pbt_device_init();
	if (ret)
		goto err_watermarks;
	ret = pbt_netlink_init();
	if (ret)
		goto err_device;
	ret = pbt_endpoint_init();
	if (ret)
		goto err_netlink;
	ret = pbt_relay_init();
	if (ret)
		goto err_endpoint;
	return 0;

err_endpoint:
	pbt_endpoint_exit();
err_netlink:
	pbt_netlink_exit();
err_device:
	pbt_device_exit();
err_watermarks:
	pbt_watermarks_exit();
err_tp:
	pbt_tp_exit();
err_buffers:
	pbt_buffers_exit();
err_probes:
	pbt_probes_exit();
	return ret;
}

/*
 * Sessions go first, stopped cleanly (probes unregistered, chunks sealed)
 * while netlink can still tell traced; then nothing can create new ones.
 * No fd can be open: it holds a module reference.
 */
static void __exit pbt_exit(void)
{
	pbt_relay_exit();
	pbt_endpoint_exit();
	pbt_sessions_destroy_all();
	pbt_netlink_exit();
	pbt_sessions_destroy_all();
	pbt_device_exit();
	pbt_probes_exit();
	pbt_watermarks_exit();	/* no session, so no round, is left */
	pbt_tp_exit();		/* no session: no instance */
	pbt_buffers_exit();
	pbt_stack_exit();	/* after the last probe: no sample queues more */
}

module_init(pbt_init);
module_exit(pbt_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("pbtrace: tracepoints to Perfetto protobuf in mmap-able per-CPU buffers");
MODULE_AUTHOR("pbtrace authors");
MODULE_VERSION("0.1");
