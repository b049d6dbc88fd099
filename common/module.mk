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
#
# A program links the archives it uses, in this order (netns, records,
# engine, base), and only the libraries they need (PK_*).
pk_libs = $(shell pkg-config --libs $(1) 2>/dev/null)

BASE_OBJS    := $(patsubst %.c,$(BUILD)/%.o,$(wildcard common/*.c))
ENGINE_OBJS  := $(patsubst %.c,$(BUILD)/%.o,$(wildcard common/engine/*.c))
RECORDS_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard common/records/*.c))
NETNS_OBJS   := $(patsubst %.c,$(BUILD)/%.o,$(wildcard common/netns/*.c))

LIBBASE    := $(BUILD)/common/libmigr-base.a
LIBENGINE  := $(BUILD)/common/engine/libmigr-engine.a
LIBRECORDS := $(BUILD)/common/records/libmigr-records.a
LIBNETNS   := $(BUILD)/common/netns/libmigr-netns.a
LIBS       += $(LIBBASE) $(LIBENGINE) $(LIBRECORDS) $(LIBNETNS)

INC_BASE    := -Icommon
INC_ENGINE  := -Icommon/engine
INC_RECORDS := -Icommon/records $(INC_ENGINE)
INC_NETNS   := -Icommon/netns $(INC_RECORDS) $(INC_BASE)

$(BASE_OBJS):    INC := $(INC_BASE)
$(ENGINE_OBJS):  INC := $(INC_ENGINE)
$(RECORDS_OBJS): INC := $(INC_RECORDS)
$(NETNS_OBJS):   INC := $(INC_NETNS)

# what each archive needs at link time (frame_ev.o: libevent)
PK_BASE    := $(call pk_libs,jansson)
PK_EVENT   := $(call pk_libs,libevent zlib)
PK_ENGINE  :=
PK_RECORDS := $(call pk_libs,jansson libcrypto)
PK_NETNS   := $(call pk_libs,libmnl libnftables) $(PK_RECORDS)

# the whole stack, for the daemon, the tools and the tests
LIBS_ALL := $(LIBNETNS) $(LIBRECORDS) $(LIBENGINE) $(LIBBASE)
PK_ALL   := $(PK_NETNS) $(PK_EVENT) $(PK_BASE)
INC_ALL  := $(INC_NETNS)

$(LIBBASE): $(BASE_OBJS)
$(LIBENGINE): $(ENGINE_OBJS)
$(LIBRECORDS): $(RECORDS_OBJS)
$(LIBNETNS): $(NETNS_OBJS)
$(LIBBASE) $(LIBENGINE) $(LIBRECORDS) $(LIBNETNS):
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $^
