# SPDX-License-Identifier: ISC
# migr-inetd: a program of its own, which migrd (or an operator) runs as
# a namespace's workload to make a program that talks on stdin/stdout
# movable: one CMD per TCP connection, inetd style, over the sockets it
# adopts through LISTEN_FDS.  It uses the base layer and the netns
# layer's launcher, and libevent.
MIGR_INETD      := $(BUILD)/migrd/migr-inetd/migr-inetd
MIGR_INETD_OBJS := $(BUILD)/migrd/migr-inetd/migr-inetd.o
PROGRAMS        += $(MIGR_INETD)

$(MIGR_INETD_OBJS): INC := $(INC_BASE) -Icommon/netns

$(MIGR_INETD): $(MIGR_INETD_OBJS) $(LIBNETNS) $(LIBBASE)
	$(CC) $(LDFLAGS) -o $@ $^ $(PK_EVENT) $(PK_BASE)
