# migrd: the daemon (see issue 5).
MIGRD_SRCS := $(filter-out migrd/migrd.c,$(wildcard migrd/*.c))
MIGRD_OBJS := $(MIGRD_SRCS:%.c=$(BUILD)/%.o)
MIGRD      := $(BUILD)/migrd/migrd
PROGRAMS   += $(MIGRD)

$(MIGRD): $(BUILD)/migrd/migrd.o $(MIGRD_OBJS) $(LIBMIGR)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Unit tests that need daemon objects (minus main): explicit rules win
# over the pattern rule in tests/module.mk.
$(BUILD)/tests/unit/test_config: $(BUILD)/tests/unit/test_config.o \
    $(BUILD)/migrd/config.o $(LIBMIGR)
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka $(LDLIBS)
$(BUILD)/tests/unit/test_config.o: CFLAGS += -Imigrd

install: $(MIGRD) $(BUILD)/migctl/migctl
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(MANDIR)/man8 \
	    $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(SYSCONFDIR)/migrd \
	    $(DESTDIR)$(UNITDIR)
	install -m 0755 $(MIGRD) $(BUILD)/migctl/migctl $(MIGR_INETD) \
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
$(BUILD)/tests/unit/test_listener: $(BUILD)/tests/unit/test_listener.o \
    $(BUILD)/migrd/listener.o $(LIBMIGR)
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka $(LDLIBS)
$(BUILD)/tests/unit/test_listener.o: CFLAGS += -Imigrd
