# SPDX-License-Identifier: GPL-2.0
#
# pbtrace top-level Makefile. The module itself is described in Kbuild.
#
#   make                 module + userspace tools
#   make module          pbtrace.ko against $(KDIR)
#   make user            traced, tracectl (user/)
#   make check           install missing deps, build, run every test
#   make demo            boot a guest, record a real workload, print it
#   make style           checkpatch + sparse over kmod/
#   make dkms-install    install the module source under DKMS
#   make dkms-uninstall

# The running kernel's build dir, else the newest one installed.
KVER ?= $(shell uname -r)
KDIR ?= $(or $(wildcard /lib/modules/$(KVER)/build),$(lastword $(sort $(wildcard /lib/modules/*/build))))
PACKAGE_VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)

.PHONY: all module user check demo style dkms-install dkms-uninstall clean

all: module user

module:
	@test -n "$(KDIR)" || { echo "no kernel build dir: install linux-headers or set KDIR=" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

user:
	$(MAKE) -C user

check:
	tools/check

demo:
	tools/demo

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	$(MAKE) -C user clean
	rm -rf gen out
