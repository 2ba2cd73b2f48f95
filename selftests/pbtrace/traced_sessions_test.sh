#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# traced in a guest (TAP): START/STOP_TRACING triggers and their
# trigger_timeout_ms, two concurrent sessions, tids_to_trace,
# process_stats/sys_stats periods, --daemon. The tests live
# in traced_test.sh; this runs that group so each script fits its timeout.
TRACED_TEST_ONLY=${TRACED_TEST_ONLY:-triggers two_sessions tids stats daemon} \
	exec bash "$(dirname "${BASH_SOURCE[0]}")/traced_test.sh"
