# SPDX-License-Identifier: ISC
# tests/workload: the test service (streamd) and client (streamc), both
# built on the sequence-keyed byte pattern of pattern.h.  They use the
# base layer only.
WORKLOAD_LIB  := $(BUILD)/tests/workload/libworkload.a
WORKLOAD_OBJS := $(addprefix $(BUILD)/tests/workload/,pattern.o flow.o)
WORKLOAD_BINS := $(BUILD)/tests/workload/streamd $(BUILD)/tests/workload/streamc
TESTS         += $(WORKLOAD_BINS)

$(WORKLOAD_OBJS) $(WORKLOAD_BINS:%=%.o): INC := -Itests/workload $(INC_BASE)

$(WORKLOAD_LIB): $(WORKLOAD_OBJS)
	rm -f $@ && $(AR) rcs $@ $^

$(WORKLOAD_BINS): %: %.o $(WORKLOAD_LIB) $(LIBBASE)
	$(CC) $(LDFLAGS) -o $@ $^ $(PK_EVENT) $(PK_BASE)

$(BUILD)/tests/unit/test_pattern: $(BUILD)/tests/unit/test_pattern.o $(WORKLOAD_LIB) $(LIBMIGRD) \
    $(LIBCKPT) $(LIBS_ALL)
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka $(PK_MIGRD)
