# migrd/inetd: migr-inetd, the supervisor that makes a program talking
# on stdin/stdout movable (one CMD per TCP connection, inetd style).
MIGR_INETD      := $(BUILD)/migrd/inetd/migr-inetd
MIGR_INETD_OBJS := $(BUILD)/migrd/inetd/migr-inetd.o
PROGRAMS        += $(MIGR_INETD)

$(MIGR_INETD): $(MIGR_INETD_OBJS) $(LIBMIGR)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

install: $(MIGR_INETD)
