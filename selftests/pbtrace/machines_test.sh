#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# tools/vm: --vsock --no-module
#
# The endpoint's tables at fleet size (docs/multi-machine.md, "Names and
# keys" and "The machine table"), in one guest: pbtrace.ko is the
# endpoint, the relays are build/relay_many (TCP relays with keys of their
# own, HMAC by OpenSSL), relay_hostile and the module's own relay (vsock
# loopback, CID 1).
#  * A machines file of 1,000 keys and 2 CIDs loaded by tracectl in pieces:
#    `tracectl machines names` lists them, never a key. 200 relays, each
#    proving its own key, are 200 machines with ids 1..200; a reconnect
#    keeps its id.
#  * A session that saw 1,000 machines: GET_SESSION_MACHINES pages them
#    (tracectl status -M lists each, once), `tracectl status` sums them in
#    a line; the held machines outlive endpoint_forget_secs, the others
#    (and the held ones once the session is gone) are freed.
#  * endpoint_max_machines: at most PBTRACE_MAX_MACHINE_ID, a full table
#    reuses a machine no session holds, refuses (table_full) when all are.
#  * Changes at run time: a CID newly named disconnects its online guest,
#    which comes back under the name as a new machine id; a key removed
#    disconnects its online relay, refused from then on; bad files refused
#    with their line, a load that fails at the commit changes nothing.
#  * Keys: a file others can read is refused; no key in dmesg, in any
#    file of /sys/module/pbtrace nobody can read, in tracectl's output.
#  * Name theft: a second peer calling itself web1 while web1 is online is
#    web1@PEER, and a session asking for web1 records the first only.
#  * traced loads the file at start and on SIGHUP; a bad file there
#    changes nothing and traced goes on.
#  * The parameters holding names, CIDs and addresses are 0400.
# Run from the repo: tools/vm --vsock --no-module -- selftests/pbtrace/machines_test.sh
set -u

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
KO=${PBTRACE_KO:-$TOP/pbtrace.ko}
B=$TOP/selftests/pbtrace/build
BIN=${PBTRACE_USER_BUILD:-$TOP/user/build}
TCTL=$BIN/tracectl
MANY=$B/relay_many
HOSTILE=$B/relay_hostile
SESSION=$B/session_cmd
TPORT=20061
VPORT=20062
# Relay i's key: KP then i as 8 hex digits (relay_many's rule).
KP=a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babb
SHARED=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
P=/sys/module/pbtrace/parameters
W=/tmp/machines_test
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"

ep_stat() { sed -n "s/^$1 //p" "$P/endpoint_stats"; }
relay_stat() { sed -n "s/^$1 //p" "$P/relay_stats"; }
nmachines() { ep_machines | grep -c "^machine "; }
key_of() { printf '%s%08x' $KP "$1"; }
# "key many<i> KEY" lines for i in FIRST..LAST (no subshell a line: a fork
# costs tens of ms under TCG).
keys_file() {
	local i
	for ((i = $1; i <= $2; i++)); do
		printf 'key many%d %s%08x\n' $i $KP $i
	done
}
finish() {
	echo "# ${SECONDS}s: the end"
	[[ -n ${TRACED:-} ]] && kill $TRACED 2>/dev/null && wait $TRACED 2>/dev/null
	sed 's/^/# /' $P/endpoint_stats 2>/dev/null | grep -E "machines|renamed|forgotten|names|evicted|table_full|identity_refused"
	lsmod | grep -q '^pbtrace ' && rmmod pbtrace
	dmesg | grep "pbtrace: \(endpoint\|names\)" | tail -n 12 | sed 's/^/# dmesg: /'
	echo "1..$N"
	exit $FAILED
}

rm -rf $W
mkdir -p $W
chmod 700 $W
rmmod pbtrace 2>/dev/null
if ! insmod "$KO" endpoint=tcp:$TPORT,vsock:$VPORT endpoint_machines=3:parm; then
	not_ok "insmod endpoint=tcp:$TPORT,vsock:$VPORT"
	finish
fi

# ---- a machines file of 1,000 keys, in pieces ----
echo "# ${SECONDS}s: a machines file of 1,000 keys, in pieces"
{
	echo "# the test's guests"
	echo "cid 7 seven"
	keys_file 1 1000
	echo "cid 8 eight   # a comment"
} > $W/machines
chmod 644 $W/machines
"$TCTL" machines load $W/machines > $W/load.out 2>&1
RC=$?
check "a file with keys others may read is refused (exit $RC): $(head -c 200 $W/load.out)" \
	eval '[[ $RC == 6 ]] && grep -q "lets others read its keys: chmod 600" $W/load.out &&
		[[ $(ep_stat names) == 1 ]]'
chmod 600 $W/machines
t0=$(date +%s%N)
"$TCTL" machines load $W/machines > $W/load.out 2>&1
RC=$?
echo "# tracectl machines load of 1,002 names: $((($(date +%s%N) - t0) / 1000000)) ms"
check "tracectl machines load: 1,002 names in pieces ($(cat $W/load.out))" \
	eval '[[ $RC == 0 ]] && grep -q "1002 names loaded (1000 with a key); the table holds 1003" $W/load.out &&
		[[ $(ep_stat names) == 1003 ]]'
"$TCTL" machines names > $W/names.out 2>&1
check "machines names: 1003, one from endpoint_machines, CIDs by number, keys as 'key' ($(head -n1 $W/names.out))" \
	eval 'grep -q "^names: 1003 (1 from module parameters, 1002 loaded)" $W/names.out &&
		grep -Eq "^parm +cid 3 +endpoint_machines= +offline" $W/names.out &&
		grep -Eq "^seven +cid 7 +line 2 " $W/names.out &&
		grep -Eq "^many500 +key +line 502 " $W/names.out &&
		[[ $(grep -c " key " $W/names.out) == 1000 ]]'
check "no key in tracectl's output" eval '! grep -qi "a0a1a2a3a4a5" $W/names.out $W/load.out'

# ---- 200 relays with their own keys ----
echo "# ${SECONDS}s: 200 relays with their own keys"
"$MANY" -j 8 -a $TPORT many 1 200 $KP > $W/many.out 2>&1
check "200 TCP relays, each proving its own key: admitted ($(tail -n1 $W/many.out))" \
	grep -q "^admitted 200 refused 0" $W/many.out
ep_machines > $W/table.out
check "200 machines, ids 1..200, each its own peer and name (tcp, pinned)" \
	eval '[[ $(grep -c "^machine " $W/table.out) == 200 ]] &&
		[[ $(grep -c "flags=tcp,pinned " $W/table.out) == 200 ]] &&
		[[ $(sed -n "s/^machine \([0-9]*\) .*/\1/p" $W/table.out | sort -n | tail -n1) == 200 ]] &&
		grep -q "^machine [0-9]* name=many77 .*peer=\"tcp 127.0.0.[0-9]* key\" claimed=many77 " $W/table.out'
ID77=$(sed -n 's/^machine \([0-9]*\) name=many77 .*/\1/p' $W/table.out)
"$MANY" $TPORT many 77 1 $KP > $W/one.out 2>&1
check "a reconnect keeps its machine id ($ID77: $(head -n1 $W/one.out))" \
	grep -q "^many77 welcome $ID77\$" $W/one.out
"$MANY" $TPORT many 1001 1 $KP > $W/one.out 2>&1
check "a relay whose name has no key (and no relay_key): refused ($(head -n1 $W/one.out))" \
	grep -q "^many1001 refused" $W/one.out
"$MANY" -n many5 $TPORT many 6 1 $KP > $W/one.out 2>&1
check "a relay calling itself many5 with many6's key: refused" grep -q "refused" $W/one.out
echo 2 > $P/endpoint_forget_secs
check "forget: offline, held by no session, gone once endpoint_forget_secs is 2 ($(ep_stat forgotten) forgotten)" \
	wait_for 100 eval '[[ $(nmachines) == 0 && $(ep_stat forgotten) -ge 200 ]]'

# ---- a session that saw 1,000 machines ----
echo "# ${SECONDS}s: a session that saw 1,000 machines"
SID=$("$SESSION" new fleet $W/fleet.pftrace '*')
check "a session recording every machine (id $SID)" test -n "$SID"
T0=$SECONDS
"$MANY" -j 12 -a -s $TPORT many 1 1000 $KP > $W/many.out 2>&1
check "1,000 relays each recorded for it, one after another, 12 at a time ($((SECONDS - T0)) s): $(tail -n1 $W/many.out)" \
	eval 'grep -q "^admitted 1000 refused 0" $W/many.out &&
		[[ $(grep -c " session $SID machine " $W/many.out) == 1000 ]]'
"$TCTL" status > $W/status.out 2>&1
check "tracectl status: one line for the 1,000 machines ($(grep -c . $W/status.out) lines): $(grep "  machines:" $W/status.out)" \
	eval 'grep -q "^  machines: 1000 (0 connected), 0 chunks, 0 B; lost: 0 chunks in relay gaps, 0 dropped here, 0 events on the guests, 1000 disconnects" $W/status.out &&
		! grep -q "^  machine many" $W/status.out && (($(grep -c . $W/status.out) < 20))'
sed 's/^/# /' $W/status.out | head -n 8
t0=$(date +%s%N)
"$TCTL" status -M > $W/statusM.out 2>&1
echo "# tracectl status -M of 1,000 machines: $((($(date +%s%N) - t0) / 1000000)) ms, $(wc -l < $W/statusM.out) lines"
check "status -M: each machine once, in id order (GET_SESSION_MACHINES paged)" \
	eval '[[ $(grep -c "^  machine many[0-9]* (id [0-9]*): not connected, tcp 127.0.0.[0-9]* key, buffer 0, 1 cpus" $W/statusM.out) == 1000 ]] &&
		[[ $(grep -o "^  machine many[0-9]*" $W/statusM.out | sort -u | wc -l) == 1000 ]] &&
		sed -n "s/^  machine many[0-9]* (id \([0-9]*\)).*/\1/p" $W/statusM.out | sort -nc'
"$TCTL" status --machine many500 > $W/status1.out 2>&1
check "status --machine many500: that one's block" \
	eval '[[ $(grep -c "^  machine many" $W/status1.out) == 1 ]] && grep -q "^  machine many500 (id" $W/status1.out'
sleep 3
check "held by the live session: the 1,000 stay past endpoint_forget_secs ($(nmachines))" \
	test "$(nmachines)" = 1000
"$SESSION" stop "$SID"
"$SESSION" destroy "$SID"
check "the session gone, they are forgotten too" wait_for 100 eval '[[ $(nmachines) == 0 ]]'
rmmod pbtrace

# ---- the bound on machine ids ----
echo "# ${SECONDS}s: the bound on machine ids"
check "endpoint_max_machines=520192, above PBTRACE_MAX_MACHINE_ID, is refused at load" \
	eval '! insmod "$KO" endpoint=tcp:$TPORT relay_key=$SHARED endpoint_max_machines=520192 2>/dev/null'
if insmod "$KO" endpoint=tcp:$TPORT relay_key=$SHARED endpoint_max_machines=520191; then
	ok "endpoint_max_machines=520191 loads"
	rmmod pbtrace
else
	not_ok "endpoint_max_machines=520191 loads"
fi
# A table of 3 (shared key: each address its own peer).
if insmod "$KO" endpoint=tcp:$TPORT relay_key=$SHARED endpoint_max_machines=3; then
	for a in 2 3 4 5; do
		"$MANY" -f 127.0.0.$a $TPORT addr$a 1 1 $SHARED >> $W/small.out 2>&1
	done
	check "a table of 3, 4 peers one after another: the 4th reuses one no session holds (table_full $(ep_stat table_full))" \
		eval '[[ $(grep -c welcome $W/small.out) == 4 && $(nmachines) == 3 && $(ep_stat table_full) == 0 ]]'
	SID=$("$SESSION" new small $W/small.pftrace '*')
	for a in 2 3 4; do
		"$MANY" -s -f 127.0.0.$a $TPORT held$a 1 1 $SHARED >> $W/small.out 2>&1
	done
	"$MANY" -f 127.0.0.9 $TPORT late 1 1 $SHARED > $W/one.out 2>&1
	check "all 3 held by a live session: a 4th is refused, counted table_full ($(ep_stat table_full))" \
		eval 'grep -q "^late1 refused" $W/one.out && [[ $(ep_stat table_full) == 1 ]]'
	"$SESSION" destroy "$SID"
	rmmod pbtrace
else
	not_ok "insmod endpoint_max_machines=3"
fi

# ---- changes at run time ----
echo "# ${SECONDS}s: changes at run time"
if ! insmod "$KO" endpoint=tcp:$TPORT,vsock:$VPORT endpoint_machines=3:parm \
	relay=vsock:1:$VPORT relay_name=vguest; then
	not_ok "insmod with the module's own relay"
	finish
fi
check "the module's relay is online as vguest" \
	wait_for 100 eval 'ep_machines | grep -q "^machine 1 name=vguest .*online=1 "'
keys_file 1 4 > $W/m2
echo "cid 1 vmapped" >> $W/m2
{ cat $W/m2; echo "key many5 $(key_of 5)"; } > $W/m3
chmod 600 $W/m2 $W/m3
"$TCTL" machines load $W/m3 > $W/load.out 2>&1
check "CID 1 named vmapped: its online vguest disconnected ($(cat $W/load.out))" \
	eval 'grep -q "1 online machine disconnected" $W/load.out'
check "... and back as vmapped, a new id; the old one retired" \
	wait_for 200 eval 'ep_machines | grep -q "^machine [2-9][0-9]* name=vmapped .*online=1 .*claimed=vguest flags=vsock,pinned " &&
		ep_machines | grep -q "^machine 1 name=vguest .*online=0 .*flags=vsock,retired "'
"$MANY" -H 5 $TPORT many 5 1 $KP > $W/held5.out 2>&1 &
HELD=$!
check "many5, with a key now, is online" \
	wait_for 100 eval 'ep_machines | grep -q "name=many5 .*online=1 "'
ev=$(ep_stat evicted)
"$TCTL" machines load $W/m2 > $W/load.out 2>&1
check "many5's key removed: its online relay disconnected ($(cat $W/load.out))" \
	eval 'grep -q "1 online machine disconnected" $W/load.out && [[ $(ep_stat evicted) == $((ev + 1)) ]]'
wait $HELD
check "... relay_many saw the host close it" grep -q "^many5 refused" $W/held5.out
"$MANY" $TPORT many 5 1 $KP > $W/one.out 2>&1
check "many5 is refused from then on" grep -q "^many5 refused" $W/one.out
"$TCTL" machines names > $W/before.out
printf 'cid 9 nine\nkey many2 %s\ncid 9 other\n' "$(key_of 2)" > $W/bad
chmod 600 $W/bad
"$TCTL" machines load $W/bad > $W/load.out 2>&1
RC=$?
check "a CID given twice: refused with its line (exit $RC): $(cat $W/load.out)" \
	eval '[[ $RC == 6 ]] && grep -q "$W/bad:3: CID 9 is nine.s already (line 1)" $W/load.out'
printf 'cid 9 nine\nkye many2 00\n' > $W/bad
"$TCTL" machines load $W/bad > $W/load.out 2>&1
check "a word that is no entry: refused with its line: $(cat $W/load.out)" \
	grep -q "$W/bad:2: 'kye' is not an entry" $W/load.out
# Fails at the commit, in the kernel: CID 3 is endpoint_machines' parm.
{ keys_file 1 600; echo "cid 3 stolen"; } > $W/bad
chmod 600 $W/bad
"$TCTL" machines load $W/bad > $W/load.out 2>&1
RC=$?
check "a 601-entry load that fails at its commit (CID 3 is endpoint_machines'): $(cat $W/load.out)" \
	eval '[[ $RC == 6 ]] && grep -q "$(fmt_or "line 601: CID 3 is parm.s already (endpoint_machines=)" "a CID is another name.s already")" $W/load.out'
"$TCTL" machines names > $W/after.out
check "... and the table is as it was (names identical, $(ep_stat names) of them)" \
	diff -q $W/before.out $W/after.out
echo "cid 1 vmapped" > $W/m4
chmod 600 $W/m4
"$TCTL" machines load $W/m4 > /dev/null 2>&1

# ---- nobody reads a key, a name or a CID ----
echo "# ${SECONDS}s: nobody reads a key, a name or a CID"
# What nobody reads of every file of /sys/module/pbtrace, in one go.
setpriv --reuid=nobody --regid=nogroup --clear-groups bash -c \
	'for f in /sys/module/pbtrace/parameters/* /sys/module/pbtrace/*; do
		[[ -f $f ]] && while IFS= read -r l; do echo "$f: $l"; done < "$f"
	done' > $W/read 2>/dev/null
leaks=$(grep -E "$(key_of 1)|$(key_of 2)|$SHARED|vmapped|parm|vguest" $W/read | cut -d: -f1 | sort -u | tr '\n' ' ')
check "nobody reads $(wc -l < $W/read) lines there: no key, name or CID among them${leaks:+ (in: $leaks)}" \
	eval '[[ -z "$leaks" ]] && grep -q "parameters/group: -1" $W/read'
modes=$(cd $P && stat -c '%n=%a' endpoint endpoint_cids endpoint_machines relay relay_name relay_hint | tr '\n' ' ')
check "the parameters holding names, CIDs and addresses are 0400 ($modes)" \
	test "$modes" = "endpoint=400 endpoint_cids=400 endpoint_machines=400 relay=400 relay_name=400 relay_hint=400 "

check "endpoint_keys and relay_key have no file at all" eval '[[ ! -e $P/endpoint_keys && ! -e $P/relay_key ]]'
for sub in list names "load $W/m4"; do
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$TCTL" machines $sub > $W/nobody.out 2>&1
	RC=$?
	check "nobody: tracectl machines $sub refused (exit $RC): $(head -n1 $W/nobody.out)" \
		eval '[[ $RC == 4 || $RC == 6 ]] && grep -q "CAP_SYS_ADMIN\|Permission denied\|belongs to uid" $W/nobody.out'
done
check "no key in dmesg" eval '! dmesg | grep -qE "$(key_of 1)|$(key_of 2)|$(key_of 5)|$SHARED"'

# ---- no name theft ----
echo "# ${SECONDS}s: no name theft"
rmmod pbtrace
if insmod "$KO" endpoint=tcp:$TPORT relay_key=$SHARED; then
	SID=$("$SESSION" new theft $W/theft.pftrace web1)
	"$MANY" -s -H 8 -n web1 -f 127.0.0.2 $TPORT a 1 1 $SHARED > $W/web1a.out 2>&1 &
	A=$!
	wait_for 100 eval 'ep_machines | grep -q "name=web1 .*online=1 "'
	"$MANY" -H 2 -n web1 -f 127.0.0.3 $TPORT b 1 1 $SHARED > $W/web1b.out 2>&1
	ep_machines > $W/table.out
	check "a second peer calling itself web1 while web1 is online is web1@127.0.0.3 (renamed $(ep_stat renamed))" \
		eval 'grep -q "name=web1@127.0.0.3 .*peer=\"tcp 127.0.0.3\" claimed=web1 flags=tcp,renamed " $W/table.out &&
			grep -q "name=web1 .*peer=\"tcp 127.0.0.2\" claimed=web1 flags=tcp " $W/table.out &&
			[[ $(ep_stat renamed) == 1 ]]'
	"$TCTL" status -M > $W/status.out 2>&1
	check "the session asking for web1 records 127.0.0.2's, and only it" \
		eval '[[ $(grep -c "^  machine " $W/status.out) == 1 ]] &&
			grep -q "^  machine web1 (id [0-9]*): \(not \)\?connected, tcp 127.0.0.2, buffer 0" $W/status.out'
	grep "machine" $W/status.out | sed 's/^/# /'
	wait $A
	"$SESSION" destroy "$SID"
	rmmod pbtrace
else
	not_ok "insmod for the name theft"
fi

# ---- traced: at start and on SIGHUP ----
echo "# ${SECONDS}s: traced: at start and on SIGHUP"
if insmod "$KO" endpoint=tcp:$TPORT; then
	printf 'cid 5 five\n' > $W/t
	chmod 600 $W/t
	"$BIN/traced" --machines $W/t 2> $W/traced.log &
	TRACED=$!
	check "traced loads its --machines file at start" \
		wait_for 100 eval '[[ $(ep_stat names) == 1 ]] && "$TCTL" machines names | grep -q "^five "'
	printf 'cid 5 five\ncid 6 six\n' > $W/t
	kill -HUP $TRACED
	check "and again on SIGHUP" wait_for 100 eval '[[ $(ep_stat names) == 2 ]]'
	printf 'cid 5 five\ncid 6\n' > $W/t
	kill -HUP $TRACED
	check "a bad file on SIGHUP: logged with its line, the table kept, traced runs on" \
		wait_for 100 eval 'grep -q "$W/t:2: .cid. wants a CID and a name" $W/traced.log &&
			[[ $(ep_stat names) == 2 ]] && kill -0 $TRACED'
	sed 's/^/# traced: /' $W/traced.log | grep -i "machines\|names\|SIGHUP"
	kill $TRACED
	wait $TRACED
	TRACED=
else
	not_ok "insmod for traced"
fi
finish
