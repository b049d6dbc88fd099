# SPDX-License-Identifier: ISC
# tests/fuzz: libFuzzer targets, built with clang (ASan+UBSan+fuzzer)
# from the sources they exercise, compiled again for them into
# $(BUILD)/tests/fuzz/obj, so no gcc-sanitized object is mixed in.
# Skipped when $(FUZZ_CC) is not installed.
#
#   $(BUILD)/tests/fuzz/fuzz_NAME    a target, from tests/fuzz/fuzz_NAME.c:
#                                    sk_json (the socket records), config
#                                    (migrd.conf), peer (what a peer
#                                    sends), control (what migctl sends),
#                                    frame_z (the channel's compressed
#                                    frames)
#   $(BUILD)/tests/unit/fuzz_NAME    a short bounded run of it that prints
#                                    TAP (tests/fuzz/smoke.sh), picked up
#                                    by tests/run --unit
#   make fuzz                        run each for FUZZ_SECONDS
#                                    (tests/fuzz/run.sh NAME SECONDS)
#
# Seeds are in tests/fuzz/corpus/NAME/.  Every library and daemon source
# but main() goes into one archive, compiled with the fuzzer's coverage;
# each target takes what it calls from it (sk_json the engine and the
# records, config the parser, peer and control much of migrd).
FUZZ_CC      ?= clang-14
FUZZ_SECONDS ?= 300
FUZZ_TARGETS := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_OBJDIR  := $(BUILD)/tests/fuzz/obj
FUZZ_CFLAGS  := -g -O1 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror \
	-fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined \
	-fno-sanitize-recover=undefined
FUZZ_SRCS    := $(wildcard common/*.c common/engine/*.c common/records/*.c \
	common/netns/*.c common/ckpt/*.c) $(MIGRD_SRCS) migctl/parser.c
FUZZ_LIB     := $(BUILD)/tests/fuzz/libfuzz.a
FUZZ_BINS    := $(FUZZ_TARGETS:%=$(BUILD)/tests/fuzz/fuzz_%)
FUZZ_SMOKES  := $(FUZZ_TARGETS:%=$(BUILD)/tests/unit/fuzz_%)

ifneq ($(shell command -v $(FUZZ_CC) 2>/dev/null),)
TESTS += $(FUZZ_BINS) $(FUZZ_SMOKES)

$(FUZZ_OBJDIR)/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(INC_MIGRD) -Imigctl $(PKGS_CFLAGS) \
		-I$(BUILD)/common/ckpt -idirafter /usr/include/compel \
		-MMD -MP -c -o $@ $<
$(FUZZ_OBJDIR)/common/ckpt/fdput.o: $(BUILD)/common/ckpt/fdput-blob.h

$(FUZZ_LIB): $(FUZZ_SRCS:%.c=$(FUZZ_OBJDIR)/%.o)
	rm -f $@ && $(AR) rcs $@ $^

$(FUZZ_BINS): $(BUILD)/tests/fuzz/fuzz_%: $(FUZZ_OBJDIR)/tests/fuzz/fuzz_%.o \
    $(FUZZ_LIB)
	$(FUZZ_CC) -fsanitize=fuzzer,address,undefined -o $@ $^ $(PK_MIGRD)

$(FUZZ_SMOKES): $(BUILD)/tests/unit/fuzz_%: tests/fuzz/smoke.sh \
    $(BUILD)/tests/fuzz/fuzz_%
	@mkdir -p $(dir $@)
	install -m 755 $< $@

# every target, even after one has failed; the status says if any did
fuzz: $(FUZZ_BINS)
	@rc=0; for t in $(FUZZ_TARGETS); do \
		BUILD=$(BUILD) tests/fuzz/run.sh $$t $(FUZZ_SECONDS) || rc=1; \
	done; exit $$rc
else
fuzz:
	@echo "fuzz: $(FUZZ_CC) is not installed (make deps)" >&2; exit 1
endif
