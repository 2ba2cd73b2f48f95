#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# traced in a guest (TAP): kill -9 and restart mid-session, disk full and
# unopenable output, a session stopped while traced was down, traced
# under valgrind. The tests live in traced_test.sh; this runs that group so each
# script fits its timeout.
TRACED_TEST_ONLY=${TRACED_TEST_ONLY:-restart stopped_down errors valgrind} \
	exec bash "$(dirname "${BASH_SOURCE[0]}")/traced_test.sh"
