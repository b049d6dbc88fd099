# SPDX-License-Identifier: ISC
# vmlab: the guest exec agent and its host-side client.
PROGRAMS += $(BUILD)/vmlab/migr-agent $(BUILD)/vmlab/lab-exec

$(BUILD)/vmlab/migr-agent: $(BUILD)/vmlab/agent.o $(BUILD)/vmlab/exec-io.o
	$(CC) $(LDFLAGS) -o $@ $^

$(BUILD)/vmlab/lab-exec: $(BUILD)/vmlab/lab-exec.o $(BUILD)/vmlab/exec-io.o
	$(CC) $(LDFLAGS) -o $@ $^

# header-only use of the base layer (clock.h)
$(BUILD)/vmlab/agent.o $(BUILD)/vmlab/lab-exec.o $(BUILD)/vmlab/exec-io.o: \
    INC := $(INC_BASE)
