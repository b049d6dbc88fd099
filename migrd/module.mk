# SPDX-License-Identifier: ISC
# migrd: the daemon.  migrd/ holds its channels, configuration, the
# namespaces it manages and their workloads; migrd/migration/ the two
# halves of a migration and the commit protocol it drives (with
# common/ckpt/ for checkpoint mode).  Everything
# but main() goes into libmigrd.a, which the unit tests and the lab's
# tools link (as lldpd's liblldpd).
MIGRD_SRCS := $(filter-out migrd/migrd.c,$(wildcard migrd/*.c)) \
              $(wildcard migrd/migration/*.c)
MIGRD_OBJS := $(MIGRD_SRCS:%.c=$(BUILD)/%.o)
LIBMIGRD   := $(BUILD)/migrd/libmigrd.a
MIGRD      := $(BUILD)/migrd/migrd
PROGRAMS   += $(MIGRD)
INC_MIGRD  := -Imigrd -Imigrd/migration -Icommon/ckpt $(INC_ALL)
PK_MIGRD   := $(call pk_libs,libevent_openssl openssl libcap libseccomp) $(PK_CKPT) \
              $(PK_ALL)

$(MIGRD_OBJS) $(BUILD)/migrd/migrd.o: INC := $(INC_MIGRD)

$(LIBMIGRD): $(MIGRD_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $^

$(MIGRD): $(BUILD)/migrd/migrd.o $(LIBMIGRD) $(LIBCKPT) $(LIBS_ALL)
	$(CC) $(LDFLAGS) -o $@ $^ $(PK_MIGRD)
