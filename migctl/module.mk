# migctl: the command-line client (see issue 5).
MIGCTL_SRCS := $(wildcard migctl/*.c)
MIGCTL_OBJS := $(MIGCTL_SRCS:%.c=$(BUILD)/%.o)
MIGCTL      := $(BUILD)/migctl/migctl
PROGRAMS    += $(MIGCTL)

$(MIGCTL): $(MIGCTL_OBJS) $(LIBMIGR)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# migctl's parser and output, unit-tested without main (explicit rule
# beats the pattern rule in tests/module.mk).
$(BUILD)/tests/unit/test_migctl_parser: \
    $(BUILD)/tests/unit/test_migctl_parser.o $(BUILD)/migctl/parser.o \
    $(BUILD)/migctl/output.o $(BUILD)/migctl/output_json.o $(LIBMIGR)
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka $(LDLIBS)
$(BUILD)/tests/unit/test_migctl_parser.o: CFLAGS += -Imigctl
