# tests/workload: the test service (streamd) and client (streamc), both
# built on the sequence-keyed byte pattern of pattern.h.
WORKLOAD_LIB  := $(BUILD)/tests/workload/libworkload.a
WORKLOAD_OBJS := $(addprefix $(BUILD)/tests/workload/,pattern.o flow.o)
WORKLOAD_BINS := $(BUILD)/tests/workload/streamd $(BUILD)/tests/workload/streamc
TESTS         += $(WORKLOAD_BINS)

$(WORKLOAD_LIB): $(WORKLOAD_OBJS)
	rm -f $@ && $(AR) rcs $@ $^

$(BUILD)/tests/workload/streamd: $(BUILD)/tests/workload/streamd.o $(WORKLOAD_LIB) $(LIBMIGR)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/workload/streamc: $(BUILD)/tests/workload/streamc.o $(WORKLOAD_LIB) $(LIBMIGR)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/unit/test_pattern: $(BUILD)/tests/unit/test_pattern.o $(WORKLOAD_LIB) $(LIBMIGR)
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka $(LDLIBS)
$(BUILD)/tests/unit/test_pattern.o: CFLAGS += -Itests/workload
