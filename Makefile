# SPDX-License-Identifier: GPL-2.0
# zram_rs: entry points for people. (Kbuild reads the Kbuild file, not this one.)
#
#   make run      build everything, boot the VM, swap to zram_rs, show mm_stat
#   make check    every test: host cargo test, source checks, the VM suite
#   make vmtest TESTS="a.sh /abs/b.sh"   boot the VM and run just these test scripts
#   make bench    C zram vs zram_rs in one VM boot (measurements, not tests)
#   make module   build zram_rs.ko        make kernel   build the test kernel
#   make deb      the Debian package zram-rs-dkms (DKMS sources) in dist/
#   make fmt      rustfmt the sources     make clean    drop the module's build products
#   make cache    what the cache (~/.cache/zram_rs) holds, entry by entry, and what is in use
#   make cache-clean  remove the whole cache
#   make ci-fresh .ci/run as on a fresh machine: a temporary cache, removed when it ends
#
# ARCH=x86_64 (default) or arm64; KCONFIG=debug for the debug kernel; ACCEL=tcg (default) or kvm;
# KERNEL=6.12 (default) or 7.3: the kernel series built against and booted; debian-7.3 or
# debian-unstable: Debian's own kernel of that suite, zram_rs from the package's DKMS build.

ARCH ?= x86_64
export ARCH_NAME := $(ARCH)
# KCONFIG=debug adds kconfig/debug.config (KASAN, lockdep, atomic-sleep checks, kmemleak).
export KCONFIG_VARIANT := $(KCONFIG)
ifneq ($(KERNEL),)
export KERNEL_SERIES := $(KERNEL)
endif
# PREPARED_ONLY=1: build against a kernel tree only prepared for modules (no vmlinux, no VM):
# `make check PREPARED_ONLY=1` is then the host tests and the source checks.
ifneq ($(PREPARED_ONLY),)
export KERNEL_PREPARED_ONLY := $(PREPARED_ONLY)
endif
export ACCEL
# EXPECTED_SKIPS=N: `make check` fails unless the run skips exactly N cases (.ci/run declares
# each run's).
export EXPECTED_SKIPS
override TESTS := $(foreach t,$(TESTS),$(abspath $(t)))
export TESTS
# The kernel's own make must not see ARCH from here (scripts/env.sh also clears MAKEFLAGS).
unexport ARCH

SCRIPTS := $(CURDIR)/scripts
# The recipes source scripts/env.sh, which is bash.
SHELL := /bin/bash

.PHONY: run check vmtest bench module kernel deb deps fmt clean cache cache-clean ci-fresh

deps:
	@$(SCRIPTS)/install-deps.sh

run: deps
	@$(SCRIPTS)/vm.sh run && $(SCRIPTS)/cache.sh prune

check: deps
	@$(SCRIPTS)/check.sh

vmtest: deps
	@test -n "$(TESTS)" || { echo 'usage: make vmtest TESTS="a.sh b.sh"'; exit 2; }
	@$(SCRIPTS)/vm.sh test $(TESTS)

bench: deps
	@$(SCRIPTS)/bench.sh

module: deps
	@$(SCRIPTS)/module.sh

kernel: deps
	@$(SCRIPTS)/kernel.sh

# Needs only Debian's packaging tools (installed by the script), not the kernel build's.
deb:
	@$(SCRIPTS)/deb.sh

fmt: deps
	@. $(SCRIPTS)/env.sh && rustfmt --edition 2021 --config-path "$$KSRC/.rustfmt.toml" \
		src/*.rs src/*/*.rs host/src/*.rs host/tests/*.rs host/benches/*.rs

cache:
	@$(SCRIPTS)/cache.sh list

cache-clean:
	@$(SCRIPTS)/cache.sh clean

ci-fresh:
	@$(SCRIPTS)/ci-fresh.sh

clean:
	@. $(SCRIPTS)/env.sh && rm -rf "$$ZRAM_RS_CACHE/module" "$$ZRAM_RS_CACHE/vm" target
