# tests/fuzz: libFuzzer targets, built with clang (ASan+UBSan+fuzzer)
# straight from the sources they exercise, so no gcc-sanitized object
# is mixed in.  Skipped when $(FUZZ_CC) is not installed.
#
#   $(BUILD)/tests/fuzz/fuzz_sk_json    the record decoder target
#   $(BUILD)/tests/unit/fuzz_sk_json    a short bounded run that prints
#                                       TAP, picked up by tests/run --unit
#   make fuzz                           run it longer (FUZZ_SECONDS)
FUZZ_CC      ?= clang-14
FUZZ_SECONDS ?= 300
FUZZ_SK_JSON_SRCS := tests/fuzz/fuzz_sk_json.c common/sk_json.c \
	common/sk_json_util.c common/sk_json_ns.c common/sk_b64.c \
	common/sk_state.c common/log.c

ifneq ($(shell command -v $(FUZZ_CC) 2>/dev/null),)
FUZZ_BINS := $(BUILD)/tests/fuzz/fuzz_sk_json
TESTS     += $(FUZZ_BINS) $(BUILD)/tests/unit/fuzz_sk_json

$(BUILD)/tests/fuzz/fuzz_sk_json: $(FUZZ_SK_JSON_SRCS) $(wildcard common/sk_*.h) common/log.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -g -O1 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror \
		-Icommon $(shell pkg-config --cflags jansson openssl) \
		-fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=undefined -o $@ $(FUZZ_SK_JSON_SRCS) \
		$(shell pkg-config --libs jansson openssl)

$(BUILD)/tests/unit/fuzz_sk_json: tests/fuzz/smoke.sh $(BUILD)/tests/fuzz/fuzz_sk_json
	@mkdir -p $(dir $@)
	install -m 755 $< $@
endif

fuzz: $(FUZZ_BINS)
	tests/fuzz/run.sh $(FUZZ_SECONDS)
