#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# tools/vm: --two --no-module
#
# Two machines in one trace. Guest 1 (10.0.2.1) is the host: pbtrace.ko
# with a TCP endpoint, traced, tracectl. Guest 2 (10.0.2.2) is a relayed
# machine: pbtrace.ko with relay=tcp:10.0.2.1 and relay_name=guest2, no
# daemon. Both guests run this script and tell themselves apart by
# $PBTRACE_VM; they meet at TCP barriers (build/mm_net wait/tell).
#
# Session 1 (trace_all_machines) records sched and raw_syscalls on both
# while guest 2 sends N UDP datagrams to guest 1, which echoes each back
# (build/mm_net ping/echo). The file, decoded with Perfetto's schema, must
# hold two machines (host packets without machine_id, guest packets with
# one non-zero id), the guest's system_info with its identity, events of
# both, one RemoteClockSync (before any guest chunk) and no guest
# clock_snapshot, a trace_stats for the guest that counts its chunks in
# the file; and with
# the offsets trace_processor computes from the RemoteClockSyncs, applied
# in file order as it does, every UDP receive must come after its send
# within the applied offset's own uncertainty (its round's t4 - t1), and
# every ping round and echo round must agree on one offset (mm_check.py;
# docs/multi-machine.md has the figures). trace_processor, where present,
# must keep both machines' CPUs, threads and sched slices with no error or
# data_loss stats, and on its own timestamps every receive must follow its
# send strictly (tp.sh, multimachine_lib.sh). Session 2 (machine_name_filter
# "host") records the host alone and sends the relay no CONTROL. Guest 2
# checks its relay: one local session, ended with STOPPED, clean unload.
#
#   tools/vm --two --no-module --cmd2 selftests/pbtrace/multimachine_test.sh \
#       -- selftests/pbtrace/multimachine_test.sh
set -u

if [[ -z ${PBTRACE_VM:-} ]]; then
	echo "1..0 # SKIP needs two guests: tools/vm --two (see the header)"
	exit 0
fi
. "$(dirname "${BASH_SOURCE[0]}")/multimachine_lib.sh"
# Copies of the traces and the analysis, for a look afterwards.
KEEP=$TOP/out/multimachine
KEY=5f0e1d2c3b4a59687786950a1b2c3d4e5f60718293a4b5c6d7e8f90112233445
HOST_IP=10.0.2.1
GUEST_IP=10.0.2.2
EP_PORT=20031		# the host's endpoint
P_READY=20040		# 1 -> 2: endpoint listening
P_GO=20041		# 1 -> 2: session 1 runs, send the datagrams
P_UDP=20042		# the UDP echo
P_DONE=20043		# 2 -> 1: datagrams done, with pid and identity
P_BETWEEN=20044		# 1 -> 2: session 1 written, session 2 not started
P_END=20045		# 1 -> 2: all done, unload
ROUNDS=100
GAP_MS=20

# Value of KEY in a "k=v k=v" line.
field() { tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p"; }

rmmod pbtrace 2>/dev/null

# ---- guest 2: the relayed machine ------------------------------------------
guest2() {
	local msg c1 c2
	msg=$("$NET" wait $P_READY 120)
	check "guest 2: the host's endpoint is up ($msg)" test "$msg" = ready || finish
	if ! insmod "$KO" relay=tcp:$HOST_IP:$EP_PORT relay_key=$KEY relay_name=guest2; then
		not_ok "guest 2: insmod pbtrace.ko relay=tcp:$HOST_IP:$EP_PORT relay_name=guest2"
		finish
	fi
	ok "guest 2: insmod pbtrace.ko relay=tcp:$HOST_IP:$EP_PORT relay_name=guest2"
	check "guest 2: relay connected and welcomed" \
		wait_for 300 eval '[ "$(stat_of relay_stats connected)" = 1 ]' || finish
	msg=$("$NET" wait $P_GO 150)
	check "guest 2: the host started session 1 ($msg)" test "$msg" = go || finish
	# The host sends CONTROL start when the session starts; the relay then
	# records into a local session of its own.
	check "guest 2: the relay started a local session for the host's" \
		wait_for 100 eval '[ "$(stat_of relay_stats sessions)" -ge 1 ]'
	"$NET" ping $HOST_IP $P_UDP $ROUNDS $GAP_MS >"$W/ping.out"
	check "guest 2: $ROUNDS UDP rounds to the host and back" \
		test "$(sed -n 's/^rounds=//p' "$W/ping.out")" = $ROUNDS
	sed 's/^/# ping: /' "$W/ping.out"
	msg="done $(tr '\n' ' ' <"$W/ping.out")name=guest2 sysname=$(uname -s)"
	msg+=" release=$(uname -r) machine=$(uname -m)"
	check "guest 2: told the host the rounds are done" \
		"$NET" tell $HOST_IP $P_DONE 30 "$msg"
	msg=$("$NET" wait $P_BETWEEN 150)
	check "guest 2: the host wrote session 1 ($msg)" test "$msg" = between
	c1=$(stat_of relay_stats controls)
	msg=$("$NET" wait $P_END 120)
	check "guest 2: the host finished session 2 ($msg)" test "$msg" = end
	c2=$(stat_of relay_stats controls)
	check "guest 2: the host-only session sent this relay no CONTROL ($c1 before, $c2 after)" \
		test "$c1" = "$c2"
	check "guest 2: one local session, ended with STOPPED, gone" test \
		"$(stat_of relay_stats sessions) $(stat_of relay_stats stopped_sent) $(stat_of relay_stats local_session)" = "1 1 0"
	sed 's/^/# relay_stats: /' "$P/relay_stats"
	check "guest 2: rmmod with the relay connected" rmmod pbtrace
	dmesg | grep pbtrace | sed 's/^/# dmesg: /' | tail -n 20
}

# ---- guest 1: the host -------------------------------------------------------
EVENTS='ftrace_events: "sched/sched_switch" ftrace_events: "sched/sched_waking"
    ftrace_events: "raw_syscalls/sys_enter" ftrace_events: "raw_syscalls/sys_exit"'

write_configs() {
	cat >"$W/all.pbtx" <<-EOF
	unique_session_name: "multi"
	buffers { size_kb: 4096 fill_policy: RING_BUFFER }
	data_sources { config { name: "linux.ftrace" target_buffer: 0
	  ftrace_config { $EVENTS } } }
	trace_all_machines: true
	flush_period_ms: 1000
	EOF
	# The filter names the host alone: it wins over trace_all_machines.
	cat >"$W/host.pbtx" <<-EOF
	unique_session_name: "hostonly"
	buffers { size_kb: 4096 fill_policy: RING_BUFFER }
	data_sources { config { name: "linux.ftrace" target_buffer: 0
	  ftrace_config { $EVENTS } }
	  machine_name_filter: "host" }
	trace_all_machines: true
	flush_period_ms: 1000
	EOF
}

session_all() {
	local f=$W/multi.pftrace msg echo_pid
	"$NET" echo $P_UDP $ROUNDS 150 >"$W/echo.out" &
	local echo_job=$!
	wait_for 50 grep -q '^pid=' "$W/echo.out"
	echo_pid=$(sed -n 's/^pid=//p' "$W/echo.out")
	tctl start -c "$W/all.pbtx" -o "$f" >"$W/start.out" 2>&1
	check "session 1 (trace_all_machines) starts" test $? = 0 || sed 's/^/# /' "$W/start.out"
	check "told guest 2 to send" "$NET" tell $GUEST_IP $P_GO 30 go || return 1
	msg=$("$NET" wait $P_DONE 150)
	check "guest 2 finished its rounds" test "${msg%% *}" = "done"
	note "guest 2: $msg"
	wait $echo_job
	check "the echo server answered $ROUNDS datagrams" \
		grep -qx "echoed=$ROUNDS" "$W/echo.out"
	# Let the guest's last sealed chunks and a ping round reach the host.
	sleep 1.5
	tctl status -M >"$W/status.txt" 2>&1
	sed 's/^/# status: /' "$W/status.txt"
	check "tracectl status: guest2 connected, in session 1" \
		grep -Eq "machine guest2 \(id [0-9]+\): connected" "$W/status.txt"
	note "stopping session 1"
	tctl stop -n multi --wait >"$W/stop.out" 2>&1
	check "session 1 stops and traced finishes the file" test $? = 0 ||
		sed 's/^/# /' "$W/stop.out"
	check "session 1's file decodes with Perfetto's schema" decode "$f"
	note "decoded: $(wc -l <"$f.txt") lines"
	local -a info=(n="$ROUNDS" echo_pid="$echo_pid" ping_pid="$(field pid "$msg")"
		name="$(field name "$msg")" sysname="$(field sysname "$msg")"
		release="$(field release "$msg")" machine="$(field machine "$msg")")
	[[ -d $KEEP ]] && cp "$f" "$W/status.txt" "$KEEP/" &&
		echo "mm_check.py all multi.pftrace.txt ${info[*]}" >"$KEEP/info.txt"
	analyse all "$f.txt" "${info[@]}"
	tp_check_machines "$f" 2
	tp_causality "$f" "$ROUNDS" "$(field pid "$msg")" "$echo_pid"
}

session_host() {
	local f=$W/host.pftrace
	tctl start -c "$W/host.pbtx" -o "$f" >"$W/start2.out" 2>&1
	check "session 2 (machine_name_filter \"host\") starts" test $? = 0 ||
		sed 's/^/# /' "$W/start2.out"
	sleep 3
	tctl status -M >"$W/status2.txt" 2>&1
	sed 's/^/# status: /' "$W/status2.txt"
	check "tracectl status: session 2 has no relayed machine" \
		eval '! grep -q "machine guest2" "$W/status2.txt"'
	tctl stop -n hostonly --wait >"$W/stop2.out" 2>&1
	check "session 2 stops and traced finishes the file" test $? = 0 ||
		sed 's/^/# /' "$W/stop2.out"
	check "session 2's file decodes with Perfetto's schema" decode "$f"
	[[ -d $KEEP ]] && cp "$f" "$W/status2.txt" "$KEEP/"
	analyse hostonly "$f.txt"
}

guest1() {
	mkdir -p "$KEEP" 2>/dev/null && rm -f "$KEEP"/*
	if ! insmod "$KO" endpoint=tcp:$HOST_IP:$EP_PORT relay_key=$KEY; then
		not_ok "guest 1: insmod pbtrace.ko endpoint=tcp:$HOST_IP:$EP_PORT"
		finish
	fi
	ok "guest 1: insmod pbtrace.ko endpoint=tcp:$HOST_IP:$EP_PORT"
	check "traced starts" start_traced || sed 's/^/# traced: /' "$W/traced.log"
	check "told guest 2 the endpoint is up" "$NET" tell $GUEST_IP $P_READY 60 ready
	check "guest2 connected: the endpoint's machine table has it" \
		wait_for 600 eval 'ep_machines | grep -q "^machine [0-9]* name=guest2 "' ||
		finish
	ep_machines | sed 's/^/# /'
	write_configs
	session_all || finish
	check "told guest 2 session 1 is written" "$NET" tell $GUEST_IP $P_BETWEEN 30 between
	session_host
	check "told guest 2 all is done" "$NET" tell $GUEST_IP $P_END 30 end
	check "traced exits cleanly" stop_traced
	sed 's/^/# endpoint_stats: /' "$P/endpoint_stats"
	check "rmmod with a relay connected" rmmod pbtrace
	grep -E 'error|fail|refus' "$W/traced.log" | sed 's/^/# traced: /' | head -n 20
	dmesg | grep pbtrace | sed 's/^/# dmesg: /' | tail -n 20
}

if [[ $PBTRACE_VM = 2 ]]; then guest2; else guest1; fi
finish
