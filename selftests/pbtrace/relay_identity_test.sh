#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# tools/vm: --vsock --no-module
#
# Who a relayed machine is (docs/relay-protocol.md, "Identity"), in one
# guest: pbtrace.ko is the endpoint, the peers are its own relay and
# relay_hostile over vsock_loopback (every vsock peer here is CID 1) and
# TCP on loopback.
#  * The relay's default hint is the guest's boot_id
#    (/proc/sys/kernel/random/boot_id, the referee).
#  * A reboot (same CID and name, a new hint) gets its old machine id
#    back, but not while a live session has seen that id (the new boot's
#    BOOTTIME restarted: a machine of its own there); 40 connects with distinct hints and names from one CID do not
#    fill the 32-slot table: that CID holds at most 8 slots, and a new
#    peer (TCP) is still admitted, no table_full.
#  * endpoint_machines=1:mapped,3:web1: CID 1 is "mapped" whatever its
#    HELLO says, so a second machine from CID 1 (even one calling itself
#    "web1") is refused while it is online; with endpoint_machines=3:web1
#    CID 1 calling itself "web1" (CID 3's) is refused and counted.
#    With distinct CIDs (issue 15's nested guests) the same map keeps CID
#    3 and CID 4 apart: each CID has its own slots, a name is only its own.
#  * TCP: a peer replaying a relay's hint in HELLO, without the key, holds
#    no machine: the real relay (right key, same hint) is admitted meanwhile.
#  * endpoint_keys=web1:KEY1: relay "web1" must prove KEY1, the shared
#    relay_key is refused for it.
#  * After AUTH every TCP frame is tagged: a man in the middle
#    (relay_hostile mitm) that changes one byte of a relay frame is caught
#    by the endpoint (bad_tag), one of a host frame by the relay
#    (relay_stats bad_tags); each closes that connection, and the relay,
#    reconnected through the untouched proxy, is admitted and pinging.
# Prints TAP. Run from the repo: tools/vm --vsock --no-module -- selftests/pbtrace/relay_identity_test.sh
set -u

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
KO=${PBTRACE_KO:-$TOP/pbtrace.ko}
HOSTILE=$TOP/selftests/pbtrace/build/relay_hostile
SESSION=$TOP/selftests/pbtrace/build/session_cmd
PORT=20021
TPORT=20022
MPORT=20023
KEY0=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
KEY1=a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf
P=/sys/module/pbtrace/parameters
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"

ep_stat() { sed -n "s/^$1 //p" "$P/endpoint_stats"; }
relay_stat() { sed -n "s/^$1 //p" "$P/relay_stats"; }
hint() { printf '%032x' "$1"; }
# The machine id relay_hostile was welcomed with, or "refused".
join() { "$HOSTILE" join $PORT "$@" | sed -n 's/^welcome //p; s/^refused$/refused/p'; }
tcpjoin() { "$HOSTILE" tcpjoin $TPORT "$@"; }
finish() {
	sed 's/^/# /' $P/endpoint_stats 2>/dev/null
	ep_machines | sed 's/^/# /'
	lsmod | grep -q '^pbtrace ' && rmmod pbtrace
	dmesg | grep "pbtrace: endpoint" | tail -n 20 | sed 's/^/# dmesg: /'
	echo "1..$N"
	exit $FAILED
}

rmmod pbtrace 2>/dev/null
# ---- the hint, a reboot, one CID's churn ----
if ! insmod "$KO" endpoint=vsock:$PORT,tcp:$TPORT relay_key=$KEY0 \
	relay=vsock:1:$PORT relay_name=idguest; then
	not_ok "insmod endpoint=vsock:$PORT,tcp:$TPORT relay=vsock:1:$PORT"
	finish
fi
check "the relay is machine 1" wait_for 100 eval 'ep_machines | grep -q "^machine 1 name=idguest "'
BOOT=$(tr -d '-' < /proc/sys/kernel/random/boot_id)
ep_machines | grep "^machine 1 " | sed 's/^/# /'
check "the relay's default hint is the guest's boot_id ($BOOT)" \
	eval 'ep_machines | grep -q "^machine 1 .* hint=$BOOT\( \|$\)"'

ID1=$(join reboot "$(hint 1001)")
ID2=$(join reboot "$(hint 1002)")
check "a reboot (same CID and name, new hint) gets its machine id back ($ID1, then $ID2)" \
	eval '[[ $ID1 =~ ^[0-9]+$ && $ID1 == "$ID2" ]]'
# The nested test's hard reboot (issue 15), without the minutes: the old
# connection still online, as a reset guest's is until it idles out.
SID=$("$SESSION" new idsession /tmp/id.pftrace '*')
check "a session recording every machine starts (id $SID)" test -n "$SID"
check "the relay (machine 1) records for it" wait_for 100 eval '[[ $(relay_stat sessions) -ge 1 ]]'
ID3=$(join idguest "$(hint 1003)")
check "idguest rebooted (new hint) while the session has machine 1: a new machine id ($ID3)" \
	eval '[[ $ID3 =~ ^[0-9]+$ && $ID3 != 1 ]]'
"$SESSION" stop "$SID"
"$SESSION" destroy "$SID"

for i in $(seq 1 40); do
	R=$(join "churn$i" "$(hint $((2000 + i)))")
	[[ $R == refused ]] && echo "# churn$i refused"
done
CID1=$(ep_machines | grep -c "^machine .* cid=1 ")
check "40 connects with new hints and names from CID 1: none refused table_full ($(ep_stat table_full))" \
	test "$(ep_stat table_full)" = 0
check "CID 1 holds at most 8 machine slots ($CID1)" test "$CID1" -le 8
check "the relay kept its machine through the churn" \
	eval 'ep_machines | grep -q "^machine 1 name=idguest .* online=1 "'
tcpjoin $KEY0 newpeer "$(hint 3000)" > /tmp/id.out
check "then a new peer (TCP, right key) is admitted: $(tail -n1 /tmp/id.out)" grep -q "^welcome [1-9]" /tmp/id.out
check "rmmod" rmmod pbtrace

# ---- vsock identity from the host's map ----
if insmod "$KO" endpoint=vsock:$PORT endpoint_machines=1:mapped,3:web1 \
	relay=vsock:1:$PORT relay_name=liar; then
	ok "insmod endpoint_machines=1:mapped,3:web1"
	check "CID 1 is \"mapped\" (the host's name), not the \"liar\" its HELLO says" \
		wait_for 100 eval 'ep_machines | grep -q "^machine 1 name=mapped .* cid=1 .*online=1 "'
	R=$(join other "$(hint 4001)")
	check "a second machine from CID 1 while it is online: refused ($R)" test "$R" = refused
	R=$(join web1 "$(hint 4002)")
	check "CID 1 calling itself web1: still CID 1's machine \"mapped\", online, so refused ($R)" \
		eval '[[ $R == refused ]] && ! ep_machines | grep -q " name=web1 "'
else
	not_ok "insmod endpoint_machines=1:mapped,3:web1"
fi
rmmod pbtrace 2>/dev/null
check "a bad endpoint_machines entry is refused at load" \
	eval '! insmod "$KO" endpoint=vsock:$PORT endpoint_machines=3web1 2>/dev/null'
rmmod pbtrace 2>/dev/null
# CID 1 not in the map, its relay calling itself CID 3's web1.
if insmod "$KO" endpoint=vsock:$PORT endpoint_machines=3:web1 \
	relay=vsock:1:$PORT relay_name=web1; then
	check "CID 1 (not in the map) calling itself web1 (CID 3's): refused, counted identity_refused ($(ep_stat identity_refused))" \
		wait_for 100 eval '[[ $(ep_stat identity_refused) -ge 1 ]]'
	check "no machine named web1" eval '! ep_machines | grep -q " name=web1 "'
	R=$(join db1 "$(hint 4003)")
	check "CID 1 under another name (db1) is admitted ($R)" eval '[[ $R =~ ^[0-9]+$ ]]'
else
	not_ok "insmod endpoint_machines=3:web1 relay_name=web1"
fi
rmmod pbtrace 2>/dev/null

# ---- TCP: a replayed hint before AUTH, per-relay keys ----
VICTIM=$(hint 5001)
if insmod "$KO" endpoint=tcp:$TPORT relay_key=$KEY0; then
	"$HOSTILE" squat $TPORT victim "$VICTIM" 15 > /tmp/squat.out &
	SQ=$!
	wait_for 50 grep -q welcome /tmp/squat.out
	check "a peer without the key sent the victim's hint: no machine online for it" \
		eval '! ep_machines | grep -q "online=1"'
	tcpjoin $KEY0 victim "$VICTIM" > /tmp/id.out
	check "the real relay (right key, same hint) is admitted meanwhile: $(tail -n1 /tmp/id.out)" \
		grep -q "^welcome [1-9]" /tmp/id.out
	kill $SQ 2>/dev/null
	wait $SQ 2>/dev/null
else
	not_ok "insmod endpoint=tcp:$TPORT"
fi
rmmod pbtrace 2>/dev/null
if insmod "$KO" endpoint=tcp:$TPORT relay_key=$KEY0 endpoint_keys=web1:$KEY1; then
	ok "insmod endpoint_keys=web1:KEY1"
	before=$(ep_stat auth_failed)
	tcpjoin $KEY0 web1 "$(hint 6001)" > /tmp/id.out
	check "relay web1 with the shared key: refused ($(tail -n1 /tmp/id.out)), auth_failed +1" \
		eval 'grep -q "^refused" /tmp/id.out && [[ $(ep_stat auth_failed) == $((before + 1)) ]]'
	tcpjoin $KEY1 web1 "$(hint 6001)" > /tmp/id.out
	check "relay web1 with its own key: admitted ($(tail -n1 /tmp/id.out))" grep -q "^welcome [1-9]" /tmp/id.out
	tcpjoin $KEY0 db1 "$(hint 6002)" > /tmp/id.out
	check "relay db1 (no key of its own) with the shared key: admitted ($(tail -n1 /tmp/id.out))" \
		grep -q "^welcome [1-9]" /tmp/id.out
else
	not_ok "insmod endpoint_keys=web1:KEY1"
fi
rmmod pbtrace 2>/dev/null

# ---- TCP frames after AUTH are tagged: a man in the middle ----
"$HOSTILE" mitm $MPORT $TPORT 150 > /tmp/mitm.out &
MITM=$!
sleep 0.3
if insmod "$KO" endpoint=tcp:$TPORT relay=tcp:127.0.0.1:$MPORT relay_key=$KEY0 \
	relay_name=tagged; then
	check "a relay frame changed after AUTH: the endpoint closes it, counted bad_tag" \
		wait_for 300 eval '[[ $(ep_stat bad_tag) == 1 ]]'
	check "a host frame changed: the relay closes it, counted in relay_stats bad_tags" \
		wait_for 300 eval '[[ $(relay_stat bad_tags) == 1 ]]'
	check "then, untouched, the relay is connected again and its pings answered" \
		wait_for 300 eval '[[ $(relay_stat connected) == 1 && $(relay_stat connects) -ge 3 ]] &&
			p=$(relay_stat pongs) && sleep 2.5 && (($(relay_stat pongs) > p))'
	echo "# endpoint: bad_tag $(ep_stat bad_tag), bad_flags $(ep_stat bad_flags), bad_seq $(ep_stat bad_seq)"
	check "no frame failed another check (bad_flags, bad_seq)" \
		test "$(ep_stat bad_flags)$(ep_stat bad_seq)" = 00
	sed 's/^/# /' /tmp/mitm.out
	grep -E "^(connects|pongs|errors|last_error|bad_tags) " $P/relay_stats | sed 's/^/# relay_stats: /'
else
	not_ok "insmod endpoint=tcp:$TPORT relay=tcp:127.0.0.1:$MPORT"
fi
kill $MITM 2>/dev/null
wait $MITM 2>/dev/null
finish
