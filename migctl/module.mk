# SPDX-License-Identifier: ISC
# migctl: the command-line client.  It speaks framed JSON on the control
# socket and needs nothing but the base layer (and jansson).
MIGCTL_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard migctl/*.c))
MIGCTL      := $(BUILD)/migctl/migctl
PROGRAMS    += $(MIGCTL)

$(MIGCTL_OBJS): INC := -Imigctl $(INC_BASE)

$(MIGCTL): $(MIGCTL_OBJS) $(LIBBASE)
	$(CC) $(LDFLAGS) -o $@ $^ $(PK_BASE)

# migctl's parser and output, unit-tested without main
$(BUILD)/tests/unit/test_migctl_parser: \
    $(BUILD)/tests/unit/test_migctl_parser.o $(BUILD)/migctl/parser.o \
    $(BUILD)/migctl/output.o $(BUILD)/migctl/output_json.o $(LIBBASE)
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka $(PK_BASE)
