# SPDX-License-Identifier: ISC
# common: the libraries, one folder (and one archive) per layer.  Each
# layer compiles with the include paths of what it may use, so a
# dependency against the grain fails to build:
#
#   common/          libmigr-base     logging, clock, framing, ADDR:PORT,
#                                     argument checks, the wire header
#   common/engine/   libmigr-engine   the socket state engine (repair API);
#                                     the C library only
#   common/records/  libmigr-records  the JSON records of the engine's
#                                     state and of a namespace (jansson)
#   common/netns/    libmigr-netns    namespaces: netns, rtnetlink, dump,
#                                     build, lock, freeze, collect,
#                                     announce, probe, launch (libmnl,
#                                     nftables)
#   common/ckpt/     libmigr-ckpt     checkpoint mode's side of CRIU:
#                                     descriptors put into a restored
#                                     task (compel, with a parasite built
#                                     by compel's own tool)
#
# A program links the archives it uses, in this order (netns, records,
# engine, base), and only the libraries they need (PK_*).
pk_libs = $(shell pkg-config --libs $(1) 2>/dev/null)

BASE_OBJS    := $(patsubst %.c,$(BUILD)/%.o,$(wildcard common/*.c))
ENGINE_OBJS  := $(patsubst %.c,$(BUILD)/%.o,$(wildcard common/engine/*.c))
RECORDS_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard common/records/*.c))
NETNS_OBJS   := $(patsubst %.c,$(BUILD)/%.o,$(wildcard common/netns/*.c))
CKPT_OBJS    := $(patsubst %.c,$(BUILD)/%.o,$(wildcard common/ckpt/*.c))

LIBBASE    := $(BUILD)/common/libmigr-base.a
LIBENGINE  := $(BUILD)/common/engine/libmigr-engine.a
LIBRECORDS := $(BUILD)/common/records/libmigr-records.a
LIBNETNS   := $(BUILD)/common/netns/libmigr-netns.a
LIBCKPT    := $(BUILD)/common/ckpt/libmigr-ckpt.a
LIBS       += $(LIBBASE) $(LIBENGINE) $(LIBRECORDS) $(LIBNETNS) $(LIBCKPT)

INC_BASE    := -Icommon
INC_ENGINE  := -Icommon/engine
INC_RECORDS := -Icommon/records $(INC_ENGINE)
INC_NETNS   := -Icommon/netns $(INC_RECORDS) $(INC_BASE)
# (compel's own log.h must not shadow ours: its folder is searched last)
INC_CKPT    := -Icommon/ckpt -I$(BUILD)/common/ckpt $(INC_BASE) \
               -idirafter /usr/include/compel

$(BASE_OBJS):    INC := $(INC_BASE)
$(ENGINE_OBJS):  INC := $(INC_ENGINE)
$(RECORDS_OBJS): INC := $(INC_RECORDS)
$(NETNS_OBJS):   INC := $(INC_NETNS)
$(CKPT_OBJS):    INC := $(INC_CKPT)

# what each archive needs at link time (frame_ev.o: libevent)
PK_BASE    := $(call pk_libs,jansson)
PK_EVENT   := $(call pk_libs,libevent zlib)
PK_ENGINE  :=
PK_RECORDS := $(call pk_libs,jansson libcrypto)
PK_NETNS   := $(call pk_libs,libmnl libnftables) $(PK_RECORDS)
PK_CKPT    := -lcompel

# the whole stack, for the daemon, the tools and the tests
LIBS_ALL := $(LIBNETNS) $(LIBRECORDS) $(LIBENGINE) $(LIBBASE)
PK_ALL   := $(PK_NETNS) $(PK_EVENT) $(PK_BASE)
INC_ALL  := $(INC_NETNS)

$(LIBBASE): $(BASE_OBJS)
$(LIBENGINE): $(ENGINE_OBJS)
$(LIBRECORDS): $(RECORDS_OBJS)
$(LIBNETNS): $(NETNS_OBJS)
$(LIBCKPT): $(CKPT_OBJS)
$(LIBBASE) $(LIBENGINE) $(LIBRECORDS) $(LIBNETNS) $(LIBCKPT):
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $^

# The parasite fdput.c puts into a task: freestanding code, compiled and
# linked as compel says (never with the sanitizers), then turned by
# "compel hgen" into a header holding the blob and its relocations.
COMPEL          ?= compel
CKPT_PARASITE   := $(BUILD)/common/ckpt/parasite/fdput
$(CKPT_PARASITE).o: common/ckpt/parasite/fdput.c common/ckpt/fdput_proto.h
	@mkdir -p $(dir $@)
	$(CC) -O2 -Wall -Wextra -Werror $(shell $(COMPEL) cflags) \
	    -I/usr/include/compel -c -o $@ $<
$(CKPT_PARASITE).po: $(CKPT_PARASITE).o
	ld $(shell $(COMPEL) ldflags) -o $@ $< $(shell $(COMPEL) plugins fds)
$(BUILD)/common/ckpt/fdput-blob.h: $(CKPT_PARASITE).po
	$(COMPEL) hgen -o $@ -f $<
$(BUILD)/common/ckpt/fdput.o: $(BUILD)/common/ckpt/fdput-blob.h
