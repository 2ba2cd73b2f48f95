#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A real hypervisor host (make check-nested; not in tools/check's run: its
# L2 guest boots in minutes under nested TCG). This script runs in a
# tools/vm guest, L1, which is the host: vhost_vsock, pbtrace.ko as the
# vsock endpoint (endpoint_cids=3, endpoint_machines=3:nested1), traced.
# L1 boots its own guest, L2 (QEMU, -device vhost-vsock-pci,guest-cid=3),
# from a busybox initramfs built here in a temp dir: the kernel's
# virtio-vsock modules, pbtrace.ko as a relay to CID 2, mm_net (static).
#
# Session 1 (trace_all_machines) records sched and raw_syscalls on both
# while L2 sends N messages over a vsock stream that L1 echoes: the file,
# decoded with Perfetto's schema (mm_check.py) and loaded in
# trace_processor, must hold both machines, L2 named by its CID's
# configured name whatever its HELLO said, its events on the host's
# timeline, and every receive after its send. Then the endpoint is
# reloaded with endpoint_cids=4: L2 (CID 3) is refused and logged. Then
# with CID 3 allowed again L2 reconnects and session 2 runs: L2 is
# hard-reset in the middle (its new boot must join as a machine of its
# own: a reboot restarts BOOTTIME), then its QEMU is SIGKILLed: the
# session ends, each boot counts one disconnect, trace_processor has both
# boots inside the session, no slot is left online, rmmod takes seconds.
#
#   tools/vm --no-module --mem 2G --timeout 3600 -- selftests/pbtrace/nested/nested_test.sh
set -u

if [[ -z ${PBTRACE_VM:-} ]]; then
	echo "1..0 # SKIP runs in a tools/vm guest (make check-nested)"
	exit 0
fi
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HERE/../multimachine_lib.sh"
KEEP=$TOP/out/nested
CID=3
NAME=nested1
EP_PORT=20051
ECHO_PORT=20052
ROUNDS=50
GAP_MS=20
L2_SECS=${PBTRACE_NESTED_L2_SECS:-1200}	# L2's boot and relay connect, at most
L2=
L2_T0=

# Kernel modules go in decompressed: busybox's insmod hands the file to
# the kernel as it is.
unpack_ko() {
	case $1 in
	*.ko.xz) xz -dc "$1" >"$2/$(basename "${1%.xz}")" ;;
	*.ko.zst) zstd -qdc "$1" >"$2/$(basename "${1%.zst}")" ;;
	*) cp "$1" "$2/" ;;
	esac
	basename "${1%.ko*}.ko" >>"$2/order"
}

# L2's initramfs: busybox, the virtio-pci and virtio-vsock modules in
# modprobe's order, pbtrace.ko, a static mm_net, l2_init.
build_l2() {
	local d=$W/l2root m
	mkdir -p "$d"/{bin,dev,proc,sys,modules}
	cp "$(command -v busybox)" "$d/bin/busybox" || return 1
	: >"$d/modules/order"
	for m in $( (modprobe --show-depends virtio_pci
		modprobe --show-depends vmw_vsock_virtio_transport) |
		awk '$1 == "insmod" && !seen[$2]++ { print $2 }'); do
		unpack_ko "$m" "$d/modules" || return 1
	done
	# Its debug info is 90 % of it: less for L2's boot to unpack and insmod.
	strip --strip-debug -o "$d/pbtrace.ko" "$KO" || return 1
	gcc -static -O2 -o "$d/bin/mm_net" "$TOP/selftests/pbtrace/mm_net.c" || return 1
	cp "$HERE/l2_init" "$d/init" && chmod 755 "$d/init"
	mknod "$d/dev/console" c 5 1
	(cd "$d" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) >"$W/l2.cpio"
	note "L2 initramfs: $(du -k "$W/l2.cpio" | cut -f1) KiB, modules: $(tr '\n' ' ' <"$d/modules/order")"
}

start_l2() {
	local app="console=ttyS0 quiet panic=-1 tsc=reliable no_timer_check 8250.nr_uarts=1"
	app+=" pbt_port=$EP_PORT pbt_echo=$ECHO_PORT pbt_rounds=$ROUNDS pbt_gap=$GAP_MS"
	L2_T0=$SECONDS
	timeout --kill-after=5 "$L2_SECS" qemu-system-x86_64 -machine q35 -m 256M -smp 1 \
		-nodefaults -no-user-config -display none \
		-monitor "unix:$W/l2.monitor,server=on,wait=off" \
		-accel tcg -cpu max,-monitor -kernel "/boot/vmlinuz-$KVER" -initrd "$W/l2.cpio" \
		-append "$app" -serial "file:$W/l2.console" \
		-device vhost-vsock-pci,guest-cid=$CID </dev/null >"$W/l2.qemu" 2>&1 &
	L2=$!
}

# The QEMU process of L2 itself (timeout's child), for SIGKILL.
l2_qemu_pid() { pgrep -P "$L2" -x qemu-system-x86; }

l2_console() { tr -d '\r' 2>/dev/null <"$W/l2.console"; }

stop_l2() {
	[[ -n $L2 ]] || return 0
	kill "$L2" 2>/dev/null
	wait "$L2" 2>/dev/null
	L2=
}

machine_line() { ep_machines | grep "^machine [0-9]* name=$NAME "; }
field_of() { tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p"; }

load_endpoint() {	# the allowed CIDs
	insmod "$KO" endpoint=vsock:$EP_PORT endpoint_cids="$1" endpoint_machines="$1:$NAME"
}

# ---- L1 can be a hypervisor --------------------------------------------------
setup_host() {
	check "qemu-system-x86_64 runs in L1 ($(qemu-system-x86_64 --version | head -n1))" \
		eval 'qemu-system-x86_64 --version >/dev/null' || return 1
	check "modprobe vhost_vsock" modprobe vhost_vsock || return 1
	check "/dev/vhost-vsock appears" wait_for 50 test -c /dev/vhost-vsock || return 1
	check "L2's initramfs is built" build_l2 || return 1
	check "insmod pbtrace.ko endpoint=vsock:$EP_PORT endpoint_cids=$CID endpoint_machines=$CID:$NAME" \
		load_endpoint $CID || return 1
	check "traced starts" start_traced || return 1
}

boot_l2() {
	"$NET" vecho $ECHO_PORT $ROUNDS $L2_SECS >"$W/echo.out" 2>&1 &
	ECHO_JOB=$!
	start_l2
	note "L2 started, waiting up to ${L2_SECS}s for its relay"
	local i=0
	until machine_line >/dev/null; do
		kill -0 "$L2" 2>/dev/null || break
		((i++ % 30 == 0)) && note "L2 console: $(l2_console | tail -n1)"
		sleep 2
	done
	L2_BOOT=$((SECONDS - L2_T0))
	l2_console | sed 's/^/# l2 console: /'
	check "L2 ($CID) connected within ${L2_BOOT}s wall of QEMU's start" machine_line || return 1
	machine_line | sed 's/^/# /'
	local line
	line=$(machine_line)
	check "L2 is machine '$NAME' by its CID (cid=$(field_of cid "$line"); it said l2-says-this)" \
		test "$(field_of cid "$line")" = $CID
	MID=${line#machine }
	MID=${MID%% *}
}

EVENTS='ftrace_events: "sched/sched_switch" ftrace_events: "sched/sched_waking"
    ftrace_events: "raw_syscalls/sys_enter" ftrace_events: "raw_syscalls/sys_exit"'

# L2's QEMU makes L1 trace hundreds of thousands of syscalls a minute:
# streamed to the file, or a ring overwrites the echo's first rounds on L1
# before the session ends (run of 1 Dec: 300 000 events overwritten).
session_config() {	# name
	cat <<-EOF
	unique_session_name: "$1"
	buffers { size_kb: 16384 fill_policy: RING_BUFFER }
	write_into_file: true
	file_write_period_ms: 1000
	data_sources { config { name: "linux.ftrace" target_buffer: 0
	  ftrace_config { $EVENTS } } }
	trace_all_machines: true
	flush_period_ms: 1000
	EOF
}

l2_says() { l2_console | sed -n "s/^l2: $1//p"; }

session_echo() {
	local f=$W/nested.pftrace echo_pid ping_pid ident
	wait_for 50 grep -q '^pid=' "$W/echo.out"
	echo_pid=$(sed -n 's/^pid=//p' "$W/echo.out")
	session_config nested >"$W/s1.pbtx"
	tctl start -c "$W/s1.pbtx" -o "$f" >"$W/start.out" 2>&1
	check "session 1 (trace_all_machines) starts" test $? = 0 || sed 's/^/# /' "$W/start.out"
	note "waiting for L2's $ROUNDS vsock rounds"
	local i
	for ((i = 0; i < 600; i++)); do
		kill -0 "$ECHO_JOB" 2>/dev/null || break
		sleep 1
	done
	wait "$ECHO_JOB"
	note "the echo is over"
	check "L1 echoed $ROUNDS messages over vsock" grep -qx "echoed=$ROUNDS" "$W/echo.out" ||
		sed 's/^/# echo: /' "$W/echo.out"
	# L2 prints its last lines late, up to 100 s after the echo ends here:
	# its QEMU competes with traced for L1's one host thread.
	slow 1 300 eval 'l2_says "done" | grep -q .'
	l2_says "" | sed 's/^/# l2: /'
	note "L2 is done"
	ping_pid=$(l2_says "ping: pid=")
	ident=$(l2_says "ident ")
	check "L2: $ROUNDS vsock rounds to L1 and back" test "$(l2_says "ping: rounds=")" = $ROUNDS
	sleep 2
	tctl status -M >"$W/status.txt" 2>&1
	sed 's/^/# status: /' "$W/status.txt"
	check "tracectl status: $NAME connected, in session 1" \
		grep -Eq "machine $NAME \(id [0-9]+\): connected" "$W/status.txt"
	tctl stop -n nested --wait >"$W/stop.out" 2>&1
	check "session 1 stops and traced finishes the file" test $? = 0 || sed 's/^/# /' "$W/stop.out"
	check "session 1's file decodes with Perfetto's schema" decode "$f"
	note "session 1 written and decoded"
	[[ -d $KEEP ]] && cp "$f" "$W/status.txt" "$KEEP/"
	analyse all "$f.txt" n=$ROUNDS echo_pid="$echo_pid" ping_pid="$ping_pid" \
		name=$NAME sysname="$(field_of sysname "$ident")" \
		release="$(field_of release "$ident")" machine="$(field_of machine "$ident")"
	tp_check_machines "$f" 2
	tp_named "$f"
	tp_causality "$f" $ROUNDS "$ping_pid" "$echo_pid" vsock
}

# wait_for with WAIT_STEP seconds between tries.
slow() {
	local WAIT_STEP=$1
	shift
	wait_for "$@"
}

# trace_processor's machine row for L2 has the name L1 gave its CID.
tp_named() {
	local name
	if ! tp_available; then
		ok "trace_processor: the guest's machine row is named $NAME # SKIP $TP_WHY"
		return 0
	fi
	tp_query "$1" "select raw_id, name, sysname, release, arch, num_cpus from machine" |
		sed 's/^/# trace_processor machine: /'
	name=$(tp_value "$1" "select name from machine where raw_id <> 0")
	check "trace_processor: the guest's machine row is named $NAME ($name)" test "$name" = $NAME
}

# Every event of L2 in trace_processor lies inside the host's events'
# span (1 s before its first to 5 s after its last): a guest placed with
# another boot's clock offset lands far outside it.
tp_in_session() {
	local span
	if ! tp_available; then
		ok "trace_processor: $2 # SKIP $TP_WHY"
		return 0
	fi
	span=$(tp_query "$1" "with ev as (select s.ts, c.machine_id as m from sched s join cpu c using (ucpu))
		select (select count(*) from ev where m <> 0),
			(select count(*) from ev where m <> 0 and (ts < (select min(ts) - 1e9 from ev where m = 0)
				or ts > (select max(ts) + 5e9 from ev where m = 0))),
			(select min(ts) from ev where m = 0), (select max(ts) from ev where m = 0),
			(select min(ts) from ev where m <> 0), (select max(ts) from ev where m <> 0)")
	echo "# trace_processor sched slices: guest|outside|host first|host last|guest first|guest last: $span"
	check "trace_processor: $2" eval '[[ $span =~ ^[1-9][0-9]*\|0\| ]]'
}

ep_stat() { sed -n "s/^$1 //p" "$P/endpoint_stats"; }

# rmmod needs traced gone (it holds the device).
reload_endpoint() {	# the allowed CIDs
	stop_traced
	TRACED=
	rmmod pbtrace && load_endpoint "$1"
}

# L2's relay_stats as its /init last printed them (when they change):
# $1 is the counter. connects counts connects that reached a listener,
# errors each attempt that ended.
l2_stat() {
	l2_console | sed -n "s/^l2: relay_stats .* $1 \([0-9-]*\) .*/\1/p" | tail -n 1 | grep . || echo 0
}

# Wait until CONDITION (the rest), by L2's relay's own counts and not by
# a time (a busy machine runs nested TCG at any speed): the condition must
# hold before L2's connect has reached a listener $3 more times than
# connects $1 (while the module is away none takes it), or L2 has ended
# 12 more attempts than errors $2 without connecting (its backoff doubles
# from 0.1 s to 30 s: minutes of L2's time). A relay that stopped trying
# shows as attempts that never come, up to the run's bound.
by_l2() {
	local c0=$1 e0=$2 n=$3
	shift 3
	slow 2 1500 eval "$* || ((\$(l2_stat connects) >= c0 + n || \$(l2_stat errors) >= e0 + 12))"
	note "L2's relay since the reload ($((SECONDS - T_RELOAD)) s): connects $c0 -> $(l2_stat connects), errors $e0 -> $(l2_stat errors); its last relay_stats: $(l2_console | grep '^l2: relay_stats' | tail -n 1)"
	eval "$*"
}

refuse_cid() {
	local c0 e0
	c0=$(l2_stat connects) e0=$(l2_stat errors)
	T_RELOAD=$SECONDS
	check "reload the endpoint with endpoint_cids=4 (L2 is CID $CID)" reload_endpoint 4 || return 1
	# L2 is connected until the reload: its connects stand still till then.
	check "L2's relay reconnects and is refused: cid_refused counts it before L2's second connect to the reloaded host" \
		by_l2 "$c0" "$e0" 2 '(($(ep_stat cid_refused) >= 1))'
	check "the refusal is in the kernel log" \
		eval 'dmesg | grep -q "not in endpoint_cids"'
	dmesg | grep "not in endpoint_cids" | tail -n 2 | sed 's/^/# dmesg: /'
	check "no machine for the refused CID" eval '! ep_machines | grep -q "^machine "'
}

# A hard reboot (QEMU system_reset: the guest closes nothing) mid-session:
# the old connection counts as one disconnect, and the new boot (same
# name, new boot_id) rejoins the session as a machine of its own: a
# reboot restarts BOOTTIME, and trace_processor keeps one clock per
# machine id (the old boot's slot is the session's until it ends).
reset_l2() {
	local t0=$SECONDS old new
	old=$(machine_line)
	old=${old#machine }
	old=${old%% *}
	check "system_reset of L2 (QEMU monitor)" python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(b"system_reset\n"); time.sleep(0.5)' "$W/l2.monitor" || return 1
	check "L2 reboots and its relay reconnects (a new hint: its new boot_id)" \
		slow 2 300 eval 'machine_line | grep -v "hint=$HINT" | grep -q "online=1 "' || return 1
	note "L2 back after $((SECONDS - t0)) s:"
	machine_line | sed 's/^/# /'
	new=$(machine_line | grep -v "hint=$HINT")
	new=${new#machine }
	new=${new%% *}
	check "the rebooted L2 is a new machine ($new), its old boot's ($old) kept offline for session 2" \
		eval '[[ $new != "$old" ]] && machine_line | grep "hint=$HINT" | grep -q online=0'
	check "the rebooted L2 records for session 2 again" slow 1 120 eval \
		'l2_console | grep -c "^l2: recording for the host" | grep -qx 2'
	tctl status -M >"$W/status2.txt" 2>&1
	sed 's/^/# status: /' "$W/status2.txt"
	check "tracectl status: the reboot is the old boot's one disconnect" \
		eval 'grep -A3 "machine $NAME (id $old)" "$W/status2.txt" | grep -q " 1 disconnects"'
}

kill_l2() {
	local f=$W/killed.pftrace mid2 line t0 qpid
	local c0 e0
	c0=$(l2_stat connects) e0=$(l2_stat errors)
	T_RELOAD=$SECONDS
	check "reload the endpoint with endpoint_cids=$CID" reload_endpoint $CID || return 1
	check "traced starts again" start_traced || return 1
	# Refused, L2 kept connecting: one more may land before the rmmod and
	# one be printed late; the third is the reloaded host's.
	check "L2 reconnects to the endpoint before its third connect since the reload" \
		by_l2 "$c0" "$e0" 3 'machine_line | grep -q online=1'
	line=$(machine_line)
	mid2=${line#machine }
	mid2=${mid2%% *}
	note "machine after the reload: $line"
	note "machine id $MID before the reload, $mid2 after (a fresh table)"
	HINT=$(field_of hint "$line")
	session_config killed >"$W/s2.pbtx"
	tctl start -c "$W/s2.pbtx" -o "$f" >"$W/start2.out" 2>&1
	check "session 2 starts" test $? = 0 || sed 's/^/# /' "$W/start2.out"
	check "L2's chunks reach session 2" slow 1 120 eval \
		'tctl status -M >"$W/status2.txt" 2>&1 && grep -q "received [1-9][0-9]* chunks" "$W/status2.txt"'
	reset_l2 || return 1
	qpid=$(l2_qemu_pid)
	check "SIGKILL L2's QEMU (pid $qpid) mid-session" kill -KILL "$qpid"
	check "the endpoint sees L2 gone: machine offline" slow 0.5 60 eval \
		'! machine_line | grep -q online=1'
	wait "$L2" 2>/dev/null
	L2=
	tctl status -M >"$W/status2.txt" 2>&1
	sed 's/^/# status: /' "$W/status2.txt"
	check "tracectl status: the kill is the new boot's one disconnect, each boot has one" \
		eval '[[ $(grep -c " 1 disconnects" "$W/status2.txt") == 2 ]]'
	t0=$SECONDS
	tctl stop -n killed --wait >"$W/stop2.out" 2>&1
	check "session 2 stops ($((SECONDS - t0)) s) with L2 dead" test $? = 0 || sed 's/^/# /' "$W/stop2.out"
	check "session 2's file decodes with Perfetto's schema" decode "$f"
	[[ -d $KEEP ]] && cp "$f" "$W/status2.txt" "$KEEP/"
	tp_check_machines "$f" 3
	tp_in_session "$f" "both boots of L2 on the host's timeline, inside the session"
	check "two machine slots, one per boot, both offline: nothing leaked" \
		eval '[[ $(ep_machines | grep -c "^machine ") == 2 ]] && ! machine_line | grep -q online=1'
	stop_traced
	TRACED=
	t0=$EPOCHREALTIME
	check "rmmod pbtrace after L2 died" rmmod pbtrace
	note "rmmod took $(since "$t0") s"
	check "rmmod took under 5 s" eval '(( ${EPOCHREALTIME/./} - ${t0/./} < 5000000 ))'
}

since() {
	local us=$((${EPOCHREALTIME/./} - ${1/./}))
	printf '%d.%06d' $((us / 1000000)) $((us % 1000000))
}

mkdir -p "$KEEP" 2>/dev/null && rm -f "$KEEP"/*
rmmod pbtrace 2>/dev/null
if setup_host && boot_l2; then
	session_echo
	refuse_cid && kill_l2
fi
[[ -d $KEEP ]] && cp "$W/l2.console" "$W/traced.log" "$KEEP/" 2>/dev/null
stop_l2
stop_traced
rmmod pbtrace 2>/dev/null
dmesg | grep pbtrace | tail -n 30 | sed 's/^/# dmesg: /'
finish
