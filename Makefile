# SPDX-License-Identifier: GPL-2.0
#
# pbtrace top-level Makefile. The module itself is described in Kbuild.
#
#   make                 module + userspace tools
#   make module          pbtrace.ko against $(KDIR)
#   make user            traced, tracectl (user/)
#   make check           install missing deps, build, run every test
#   make check-nested    a guest that is a hypervisor host for its own guest
#                        (vhost-vsock; minutes under nested TCG, not in check)
#   make demo            boot a guest, record a real workload, print it
#   make style           checkpatch + sparse over kmod/
#   make install         traced, tracectl (user/) and the pbtrace group
#   make dkms-install    install the module source under DKMS (and the group)
#   make dkms-uninstall

# The kernel to build for: KVER= if given, else what tools/deps --kver
# picks (the running kernel, else Debian's default, else the newest; it says
# which on stderr when several are installed). KDIR= overrides the tree.
# "make demo" and "make check" install the kernels first and say which
# they pick: on a fresh machine this early look would only say there are
# none yet.
QUIET_KVER := $(if $(MAKECMDGOALS),$(if $(filter-out demo check,$(MAKECMDGOALS)),,2>/dev/null))
ifeq ($(origin KVER)$(origin KDIR),undefinedundefined)
KVER := $(shell tools/deps --kver $(QUIET_KVER))
endif
KDIR ?= $(if $(KVER),/lib/modules/$(KVER)/build)
PACKAGE_VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)

.PHONY: all module user check check-nested demo style install dkms-install dkms-uninstall clean

all: module user

module:
	@test -n "$(KDIR)" -a -d "$(KDIR)" || { echo "no kernel build dir '$(KDIR)': install linux-headers, or set KVER= or KDIR=" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

user:
	$(MAKE) -C user

# The group that may trace without root (docs/security.md): made and named
# to the module here; a package (DESTDIR) runs tools/group-setup at postinst.
install:
	$(MAKE) -C user install
	@if [ -z "$(DESTDIR)" ]; then tools/group-setup; else \
		echo "install: DESTDIR set: run tools/group-setup on the target (postinst)"; fi

# KVER= given to make reaches them through the environment: one kernel only.
check:
	tools/check

# selftests/pbtrace/nested/ is out of tools/check's *_test.sh glob on purpose.
check-nested: module user
	$(MAKE) -C selftests/pbtrace
	tools/vm --no-module --mem 2G --timeout 3600 -- selftests/pbtrace/nested/nested_test.sh

demo:
	tools/demo

# ---- style: checkpatch and sparse, both must be silent -------------------------

# tools/deps unpacks checkpatch into its cache: PBTRACE_CACHE, as there.
CACHE ?= $(or $(PBTRACE_CACHE),/var/cache/pbtrace)
CHECKPATCH ?= $(CACHE)/linux-source/scripts/checkpatch.pl
# Two checks do not fit an out-of-tree module: LINUX_VERSION_CODE is how
# kmod/compat.h supports 5.15..current, and CONSTANT_COMPARISON misfires on
# constant-vs-constant tests (version checks, BUILD_BUG_ON of field numbers).
CHECKPATCH_FLAGS = --no-tree --quiet --show-types --ignore LINUX_VERSION_CODE,CONSTANT_COMPARISON
STYLE_FILES = $(sort $(wildcard kmod/*.c kmod/*.h kmod/core/*.c kmod/core/*.h kmod/relay/*.c kmod/relay/*.h)) include/uapi/linux/pbtrace.h
SPARSE_LOG = $(CURDIR)/out/sparse.log

style:
	@test -r $(CHECKPATCH) || tools/deps
	perl $(CHECKPATCH) $(CHECKPATCH_FLAGS) -f $(STYLE_FILES)
	@# C=2 runs sparse on every file, rebuilt or not. Headers of the kernel
	@# are not ours: only warnings in our files fail the target.
	@mkdir -p out
	$(MAKE) -C $(KDIR) M=$(CURDIR) C=2 modules > $(SPARSE_LOG) 2>&1 || \
		{ cat $(SPARSE_LOG); exit 1; }
	@if grep -E '^($(CURDIR)/)?(kmod|include)/[^:]*:[0-9]+:[0-9]+: (warning|error):' $(SPARSE_LOG); then \
		echo "sparse: warnings above (full log: $(SPARSE_LOG))" >&2; exit 1; \
	fi
	@echo "style: checkpatch and sparse clean ($(words $(STYLE_FILES)) files)"

# ---- DKMS: what a fleet machine runs ---------------------------------------------

DKMS_KVER ?= $(or $(KVER),$(shell tools/deps --kver))
DKMS_SRC = /usr/src/pbtrace-$(PACKAGE_VERSION)
DKMS_EXCLUDE = --exclude-vcs --exclude=./out --exclude=./gen --exclude='./user/build*' \
	--exclude=./selftests/pbtrace/build --exclude='*.o' --exclude='*.ko' \
	--exclude='*.mod' --exclude='*.mod.c' --exclude='.*.cmd' --exclude='*.a' \
	--exclude=Module.symvers --exclude=modules.order --exclude=.tmp_versions

dkms-install:
	@test "$$(id -u)" = 0 || { echo "dkms-install: run as root" >&2; exit 1; }
	@test -n "$(PACKAGE_VERSION)" || { echo "dkms-install: no PACKAGE_VERSION in dkms.conf" >&2; exit 1; }
	@# Replace any earlier install of this version: dkms add refuses duplicates.
	@if dkms status pbtrace/$(PACKAGE_VERSION) | grep -q .; then \
		dkms remove pbtrace/$(PACKAGE_VERSION) --all; fi
	rm -rf $(DKMS_SRC)
	mkdir -p $(DKMS_SRC)
	tar -C $(CURDIR) $(DKMS_EXCLUDE) -cf - . | tar -C $(DKMS_SRC) -xf -
	dkms add pbtrace/$(PACKAGE_VERSION)
	dkms build pbtrace/$(PACKAGE_VERSION) -k $(DKMS_KVER)
	dkms install pbtrace/$(PACKAGE_VERSION) -k $(DKMS_KVER)
	tools/group-setup
	@echo "dkms-install: pbtrace $(PACKAGE_VERSION) installed for $(DKMS_KVER); load it with: modprobe pbtrace"

dkms-uninstall:
	@test "$$(id -u)" = 0 || { echo "dkms-uninstall: run as root" >&2; exit 1; }
	@if dkms status pbtrace/$(PACKAGE_VERSION) | grep -q .; then \
		dkms remove pbtrace/$(PACKAGE_VERSION) --all; fi
	rm -rf $(DKMS_SRC)
	tools/group-setup --remove

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	$(MAKE) -C user clean
	rm -rf gen out
