# tests: cmocka unit tests (one binary per tests/unit/test_*.c, linked
# with libmigr) and helper programs the lab tests run in guests.
UNIT_SRCS  := $(wildcard tests/unit/test_*.c)
UNIT_BINS  := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/unit/%)
TOOL_SRCS  := $(wildcard tests/tools/*.c)
TOOL_BINS  := $(TOOL_SRCS:tests/tools/%.c=$(BUILD)/tests/tools/%)
TESTS      += $(UNIT_BINS) $(TOOL_BINS)


$(BUILD)/tests/unit/%: $(BUILD)/tests/unit/%.o $(LIBMIGR)
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka $(LDLIBS)

$(BUILD)/tests/tools/%: $(BUILD)/tests/tools/%.o $(LIBMIGR)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
