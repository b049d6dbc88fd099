# SPDX-License-Identifier: ISC
# migr: top-level build.  Non-recursive: each folder contributes a
# module.mk fragment that adds its programs, libraries and tests.
#
#   make            build the programs (release flags) into build/release
#   make check      install deps, build with ASan/UBSan into build/check,
#                   build the kernel, boot the lab, run every test
#   make demo       install deps, build, boot the lab, run the demo
#   make deps       install missing Debian packages (apt-get)
#   make kernel     build (or reuse from cache) the guest kernel
#   make lab-up / lab-down / lab-status
#   make install DESTDIR=...
#   make fuzz       run the fuzz targets for a while (FUZZ_SECONDS)

SHELL      := /bin/bash
SAN        ?= 0
BUILD      ?= $(if $(filter 1,$(SAN)),build/check,build/release)
CC         ?= cc
PREFIX     ?= /usr/local
SBINDIR    ?= $(PREFIX)/sbin
MANDIR     ?= $(PREFIX)/share/man
SYSCONFDIR ?= /etc
UNITDIR    ?= /lib/systemd/system

PKGS_CFLAGS := $(shell pkg-config --cflags libevent libevent_openssl jansson libcap openssl libmnl libnftables 2>/dev/null)

CFLAGS   ?= -O2 -g
CFLAGS   += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wshadow \
            -Wmissing-prototypes -Wstrict-prototypes -Wformat=2 \
            -fno-common $(PKGS_CFLAGS)
ifeq ($(SAN),1)
CFLAGS   += -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
            -fno-sanitize-recover=undefined
LDFLAGS  += -fsanitize=address,undefined
endif

PROGRAMS :=
TESTS    :=
LIBS     :=

.PHONY: all check demo deps kernel lab-up lab-down lab-status install \
        clean fuzz unit
all:
.SECONDARY:

include common/module.mk
include migrd/module.mk
include migrd/migr-inetd/module.mk
include migctl/module.mk
include vmlab/module.mk
include tests/module.mk
include tests/workload/module.mk
include tests/deps/module.mk
-include tests/fuzz/module.mk

all: $(PROGRAMS) $(LIBS)
# after every module.mk: prerequisites expand when the rule is read
.PHONY: tests
tests: $(TESTS)

# INC: the include paths of the object's layer (set in each module.mk)
$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(INC) -MMD -MP -c -o $@ $<

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

install: $(MIGRD) $(MIGCTL) $(MIGR_INETD)
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(MANDIR)/man8 \
	    $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(SYSCONFDIR)/migrd \
	    $(DESTDIR)$(UNITDIR)
	install -m 0755 $(MIGRD) $(MIGCTL) $(MIGR_INETD) \
	    $(DESTDIR)$(SBINDIR)/
	install -m 0644 docs/man/migrd.8 docs/man/migctl.8 docs/man/migr-inetd.8 \
	    $(DESTDIR)$(MANDIR)/man8/
	install -m 0644 docs/man/migrd.conf.5 $(DESTDIR)$(MANDIR)/man5/
	install -m 0644 migrd/migrd.conf.example \
	    $(DESTDIR)$(SYSCONFDIR)/migrd/migrd.conf.example
	sed 's|@SBINDIR@|$(SBINDIR)|g; s|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
	    migrd/migrd.service > $(DESTDIR)$(UNITDIR)/migrd.service
	install -m 0644 migrd/migrd.socket $(DESTDIR)$(UNITDIR)/migrd.socket
	chmod 0644 $(DESTDIR)$(UNITDIR)/migrd.service

deps:
	@vmlab/deps.sh

kernel: deps
	@kernel/build.sh >/dev/null

# The test entry point: the README's and CI's command.
check: deps
	@$(MAKE) --no-print-directory SAN=1 all tests
	@$(MAKE) --no-print-directory SAN=0 all
	@kernel/build.sh >/dev/null
	@BUILD=build/check tests/run

unit: 
	@$(MAKE) --no-print-directory SAN=1 all tests
	@BUILD=build/check tests/run --unit

demo: deps
	@$(MAKE) --no-print-directory SAN=0 all tests
	@kernel/build.sh >/dev/null
	@BUILD=build/release vmlab/demo.sh

lab-up: deps all
	@kernel/build.sh >/dev/null
	@BUILD=$(BUILD) vmlab/lab up

lab-down:
	@vmlab/lab down

lab-status:
	@vmlab/lab status

clean:
	rm -rf build
