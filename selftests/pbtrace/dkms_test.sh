#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# tools/vm: --modprobe --no-module
#
# The fleet install path: make dkms-install builds pbtrace.ko with DKMS for
# the guest kernel and puts it under /lib/modules/KVER/updates/dkms/; in the
# guest, modprobe pbtrace must load exactly that file. The guest sees the
# host root read-only, so tools/check runs this script three times:
#
#   dkms_test.sh --host-setup     on the host, before the boot (root)
#   dkms_test.sh                  in the guest, booted with the flags above
#   dkms_test.sh --host-cleanup   on the host, after the boot
#
# Each part prints TAP lines; tools/check counts them all. The install also
# makes the pbtrace group and names its gid to modprobe (tools/group-setup):
# the guest's modprobe must apply it; the uninstall removes the option (the
# group stays, as a package leaves its system group).
set -u

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
KVER=${KVER:-$("$TOP/tools/deps" --kver)}
DEST=/lib/modules/$KVER/updates/dkms
CONF=/etc/modprobe.d/pbtrace.conf	# tools/group-setup's
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"

# The file DKMS installed. dkms compresses it as the kernel's own modules
# are: Debian's 6.12 has CONFIG_MODULE_COMPRESS_XZ (pbtrace.ko.xz), 6.1
# compresses nothing (pbtrace.ko).
dkms_file() {
	local f
	for f in "$DEST"/pbtrace.ko{,.xz,.zst,.gz}; do
		[[ -f $f ]] && { echo "$f"; return 0; }
	done
	return 1
}

# The GNU build ID of a module file, compressed or not, and of a loaded
# module (from sysfs; the note is 12 bytes of header, "GNU\0", then the
# 20-byte ID).
file_build_id() {
	local elf
	elf=$(mktemp) || return
	case $1 in
	*.xz) xz -dc "$1" ;;
	*.zst) zstd -dcq "$1" ;;
	*.gz) gzip -dc "$1" ;;
	*) cat "$1" ;;
	esac >"$elf" 2>/dev/null
	readelf -n "$elf" 2>/dev/null | awk '/Build ID:/ { print $3 }'
	rm -f "$elf"
}
loaded_build_id() {
	od -An -tx1 -j16 -N20 "/sys/module/$1/notes/.note.gnu.build-id" 2>/dev/null | tr -d ' \n'
}

host_setup() {
	N=0
	local log=$TOP/out/dkms-install.log
	mkdir -p "$TOP/out"
	if make -C "$TOP" --no-print-directory dkms-install DKMS_KVER="$KVER" >"$log" 2>&1; then
		ok "make dkms-install: dkms add/build/install for $KVER"
	else
		tail -n 20 "$log" | sed 's/^/# /'
		not_ok "make dkms-install: dkms add/build/install for $KVER (log: out/dkms-install.log)"
	fi
	local file
	file=$(dkms_file)
	check "pbtrace.ko installed under $DEST/ (${file##*/})" test -n "$file"
	check "dkms status says installed for $KVER" \
		bash -c "dkms status pbtrace -k '$KVER' | grep -q ': installed'"
	check "modules.dep names the DKMS file" \
		grep -q "^updates/dkms/${file##*/}:" "/lib/modules/$KVER/modules.dep"
	signed_by_mok "$file"
	check "the pbtrace group exists and $CONF names its gid" bash -c "
		gid=\$(getent group pbtrace | cut -d: -f3) && [[ -n \$gid ]] &&
		grep -qx \"options pbtrace group=\$gid\" '$CONF'"
}

# Debian's dkms signs what it builds with its machine owner key
# (/var/lib/dkms/mok.key, made on first use): the key the module names must
# be that certificate's, as openssl reads it (a Secure Boot machine enrolls
# it with mokutil --import /var/lib/dkms/mok.pub; see README.md). modinfo
# reads compressed modules too.
MOK_CERT=/var/lib/dkms/mok.pub
signed_by_mok() {
	local key serial signer
	key=$(modinfo -F sig_key "$1" 2>/dev/null | tr -d ':\n')
	signer=$(modinfo -F signer "$1" 2>/dev/null)
	serial=$(openssl x509 -inform DER -in "$MOK_CERT" -noout -serial 2>/dev/null)
	serial=${serial#serial=}
	echo "# signer '${signer:-none}', key ${key:-none}; $MOK_CERT serial ${serial:-unreadable}"
	check "the DKMS module is signed with the key of $MOK_CERT" \
		test -n "$key" -a "${key^^}" = "${serial^^}"
}

guest() {
	N=6
	local path file
	path=$(modinfo -k "$KVER" -n pbtrace 2>/dev/null)
	file=$(dkms_file)
	check "modinfo -n pbtrace resolves to the DKMS file ${file:-$DEST/pbtrace.ko} (got '${path:-nothing}')" \
		test -n "$file" -a "$path" = "$file"
	check "modprobe pbtrace loaded the module" test -d /sys/module/pbtrace
	check "srcversion of the loaded module matches the DKMS file" \
		test "$(cat /sys/module/pbtrace/srcversion 2>/dev/null)" = \
		"$(modinfo -F srcversion "$file" 2>/dev/null)"
	# srcversion hashes the sources, so the repo's own build has the same
	# one; the build ID tells the two binaries apart.
	local want got repo
	want=$(file_build_id "$file")
	got=$(loaded_build_id pbtrace)
	repo=$(file_build_id "${PBTRACE_KO:-$TOP/pbtrace.ko}")
	echo "# build id: loaded ${got:-?}, dkms ${want:-?}, repo ${repo:-none}"
	check "build ID of the loaded module is the DKMS file's" \
		test -n "$want" -a "$want" = "$got"
	check "modprobe applied group= from $CONF: the pbtrace group's gid" \
		test "$(cat /sys/module/pbtrace/parameters/group 2>/dev/null)" = \
		"$(getent group pbtrace | cut -d: -f3)"
	check "rmmod pbtrace" rmmod pbtrace
}

host_cleanup() {
	N=12
	local log=$TOP/out/dkms-uninstall.log
	if make -C "$TOP" --no-print-directory dkms-uninstall >"$log" 2>&1; then
		ok "make dkms-uninstall"
	else
		tail -n 20 "$log" | sed 's/^/# /'
		not_ok "make dkms-uninstall (log: out/dkms-uninstall.log)"
	fi
	check "no pbtrace left in DKMS, $DEST or /usr/src" bash -c "
		! dkms status pbtrace | grep -q . &&
		! ls '$DEST'/pbtrace.ko* >/dev/null 2>&1 &&
		! ls -d /usr/src/pbtrace-* >/dev/null 2>&1"
	check "no $CONF left" test ! -e "$CONF"
}

case ${1:-} in
--host-setup) host_setup ;;
--host-cleanup) host_cleanup ;;
"") guest ;;
*) echo "dkms_test.sh: unknown argument '$1'" >&2; exit 2 ;;
esac
exit $FAILED
