#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The installed systemd unit (TAP, run by 'make -C user test'): 'make
# install' into a scratch DESTDIR with a PREFIX of its own must give a
# traced.service whose ExecStart is the installed traced and whose
# Documentation= file is installed, and systemd-analyze verify (if this
# machine has it) must accept it with no complaint. A control unit whose
# ExecStart names a missing program must be refused by the same check, so
# the check is known to fail when the unit is wrong.

USER_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$USER_DIR/../selftests/pbtrace/tap.sh"
PFX=/opt/pbtrace-unit-test
W=$(mktemp -d /tmp/unit_file_test.XXXXXX)
trap 'rm -rf "$W"' EXIT
ROOT=$W/root
UNIT=$ROOT/etc/systemd/system/traced.service

echo "# unit file test, scratch $W"
make -s -C "$USER_DIR" SAN="${SAN:-}" install DESTDIR="$ROOT" PREFIX="$PFX" \
	>"$W/install.log" 2>&1
check "make install DESTDIR=... PREFIX=$PFX" test $? -eq 0 ||
	sed 's/^/#   /' "$W/install.log"

exec_start=$(sed -n 's/^ExecStart=//p' "$UNIT" 2>/dev/null)
check "ExecStart follows PREFIX ($exec_start)" test "$exec_start" = "$PFX/sbin/traced"
check "ExecStart names the installed traced" test -x "$ROOT$exec_start"
check "tracectl installed in PREFIX/bin" test -x "$ROOT$PFX/bin/tracectl"
doc=$(sed -n 's|^Documentation=file://||p' "$UNIT" 2>/dev/null)
check "Documentation= names an installed file ($doc)" test -n "$doc" -a -s "$ROOT$doc"
check "no template placeholder left" bash -c "! grep -q @ '$UNIT'"

# systemd-analyze verify --root: the unit, its ExecStart and the targets it
# names are looked up under the root, so the system's own units go there.
verify() {
	systemd-analyze verify --root="$ROOT" "/etc/systemd/system/$1" \
		>"$W/verify.out" 2>&1 || return 1
	# Warnings (a bad value, an unknown key) do not change the status:
	# any line about the unit is a failure too.
	! grep -q "$1" "$W/verify.out"
}
SYSUNITS=
for d in /usr/lib/systemd/system /lib/systemd/system; do
	[ -e "$d/multi-user.target" ] && { SYSUNITS=$d; break; }
done
if ! command -v systemd-analyze >/dev/null; then
	ok "systemd-analyze verify # SKIP no systemd-analyze on this machine"
elif [ -z "$SYSUNITS" ]; then
	ok "systemd-analyze verify # SKIP no system units (multi-user.target) to verify against"
else
	mkdir -p "$ROOT/usr/lib/systemd" && cp -a "$SYSUNITS" "$ROOT/usr/lib/systemd/"
	verify traced.service
	check "systemd-analyze verify accepts the installed unit" test $? -eq 0 ||
		sed 's/^/#   /' "$W/verify.out"
	sed "s|^ExecStart=.*|ExecStart=$PFX/sbin/no-such-traced|" "$UNIT" \
		>"$ROOT/etc/systemd/system/control.service"
	verify control.service
	check "control: the same check refuses a unit whose ExecStart is missing" test $? -ne 0
	grep -q "no-such-traced" "$W/verify.out"
	check "control: systemd-analyze names the missing program" test $? -eq 0 ||
		sed 's/^/#   /' "$W/verify.out"
fi
echo "1..$N"
exit $FAILED
