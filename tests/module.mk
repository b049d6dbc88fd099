# SPDX-License-Identifier: ISC
# tests: cmocka unit tests (one binary per tests/unit/test_*.c) and the
# helper programs the lab tests run in guests.  Both see every layer and
# link the whole stack (libmigrd.a first: its objects use the rest).
UNIT_SRCS  := $(wildcard tests/unit/test_*.c)
UNIT_BINS  := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/unit/%)
TOOL_SRCS  := $(wildcard tests/tools/*.c)
TOOL_BINS  := $(TOOL_SRCS:tests/tools/%.c=$(BUILD)/tests/tools/%)
TESTS      += $(UNIT_BINS) $(TOOL_BINS)

$(UNIT_SRCS:%.c=$(BUILD)/%.o) $(TOOL_SRCS:%.c=$(BUILD)/%.o): \
    INC := $(INC_MIGRD) -Imigctl -Itests/workload

$(BUILD)/tests/unit/%: $(BUILD)/tests/unit/%.o $(LIBMIGRD) $(LIBCKPT) $(LIBS_ALL)
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka $(PK_MIGRD)

$(BUILD)/tests/tools/%: $(BUILD)/tests/tools/%.o $(LIBMIGRD) $(LIBCKPT) $(LIBS_ALL)
	$(CC) $(LDFLAGS) -o $@ $^ $(PK_MIGRD)

# the engine's tests share their socket helpers
SK_TESTS := $(BUILD)/tests/unit/test_sk_engine $(BUILD)/tests/unit/test_sk_lossless
$(SK_TESTS): %: %.o $(BUILD)/tests/unit/sk_util.o $(LIBMIGRD) $(LIBCKPT) \
    $(LIBS_ALL)
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka $(PK_MIGRD)
$(BUILD)/tests/unit/sk_util.o: INC := $(INC_MIGRD)

# the checkpoint layer's tests: that layer alone
CKPT_TESTS := $(BUILD)/tests/unit/test_fdput $(BUILD)/tests/unit/test_imgdir \
              $(BUILD)/tests/unit/test_filecheck \
              $(BUILD)/tests/unit/test_credcheck
$(CKPT_TESTS:%=%.o): INC := $(INC_CKPT)
$(CKPT_TESTS): %: %.o $(LIBCKPT) $(LIBBASE)
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka $(PK_CKPT)

# tests/bench: benchmarks, built and run on demand only, never by 'make
# check' or 'make tests'.  engine-floor needs the engine and its records
# alone.  'make bench-engine-floor' builds it and runs it in the lab
# (BENCH_ARGS=--local: on this machine; see tests/bench/engine-floor.sh).
BENCH_EF := $(BUILD)/tests/bench/engine-floor
$(BENCH_EF).o: INC := $(INC_RECORDS)
$(BENCH_EF): $(BENCH_EF).o $(LIBRECORDS) $(LIBENGINE)
	$(CC) $(LDFLAGS) -o $@ $^ $(PK_RECORDS)

.PHONY: bench-engine-floor
bench-engine-floor: $(BENCH_EF)
	@BUILD=$(BUILD) tests/bench/engine-floor.sh $(BENCH_ARGS)

# 'make drill': the failover drill (tests/drill/drill.sh) in the lab,
# with the debug build the lab tests use (DRILL_SAN=0: the release
# build); the lab stays up
DRILL_ROUNDS ?= 10
DRILL_CONNS  ?= 20
DRILL_NS     ?= 2
DRILL_FAULTS ?= 0
DRILL_SPAN   ?= 1
DRILL_SAN    ?= 1
DRILL_BUILD  := $(if $(filter 1,$(DRILL_SAN)),build/check,build/release)
.PHONY: drill
drill: deps
	@$(MAKE) --no-print-directory SAN=$(DRILL_SAN) all tests
	@kernel/build.sh >/dev/null
	@vmlab/lab status >/dev/null 2>&1 || BUILD=$(DRILL_BUILD) vmlab/lab up >/dev/null
	@BUILD=$(DRILL_BUILD) DRILL_ROUNDS=$(DRILL_ROUNDS) DRILL_CONNS=$(DRILL_CONNS) \
	    DRILL_NS=$(DRILL_NS) DRILL_FAULTS=$(DRILL_FAULTS) \
	    DRILL_SPAN=$(DRILL_SPAN) tests/drill/drill.sh

# 'make bench-stall': the stall peers see with the drop and the replaying
# lock (tests/bench/stall.sh; BENCH_ARGS: the connection counts); 'make
# bench-scale': a namespace of 10,000 connections there and back
# (tests/bench/scale.sh; BENCH_ARGS: the count).  In the lab, with the
# debug build the lab tests use.
LAB_BENCHES := stall scale
# 'make bench': migr's downtime against the floor and CRIU for 1, 100,
# 1000 and 10000 connections, idle and with 4 KiB queued each way, with
# plots (tests/bench/bench.sh; BENCH_ARGS: the counts), with the release
# build, in the lab
.PHONY: bench
bench: deps
	@$(MAKE) --no-print-directory SAN=0 all tests build/release/tests/bench/engine-floor
	@kernel/build.sh >/dev/null
	@vmlab/lab status >/dev/null 2>&1 || BUILD=build/release vmlab/lab up >/dev/null
	@BUILD=build/release tests/bench/bench.sh $(BENCH_ARGS)

# 'make bench-ckpt': checkpoint mode's downtime for a program of 10, 100
# and 500 MiB, with and without memory pre-copy, beside CRIU alone
# (tests/bench/ckpt-mem.sh; BENCH_ARGS: the sizes), with the release
# build, in a lab of 3 GiB guests (a lab already up must have them)
.PHONY: bench-ckpt
bench-ckpt: deps
	@$(MAKE) --no-print-directory SAN=0 all tests
	@kernel/build.sh >/dev/null
	@vmlab/lab status >/dev/null 2>&1 || LAB_MEM=3072 BUILD=build/release vmlab/lab up >/dev/null
	@BUILD=build/release tests/bench/ckpt-mem.sh $(BENCH_ARGS)

# 'make bench-after-move': a bulk transfer over a delayed path moved
# mid-transfer, with and without the connections' paths (TCP_REPAIR_PATH,
# issue 15): throughput after the move against before, and the RTO the
# moved connections start with (tests/bench/after-move.sh; BENCH_ARGS:
# the round trip times in ms), with the release build, in the lab
.PHONY: bench-after-move
bench-after-move: deps
	@$(MAKE) --no-print-directory SAN=0 all tests
	@kernel/build.sh >/dev/null
	@vmlab/lab status >/dev/null 2>&1 || BUILD=build/release vmlab/lab up >/dev/null
	@BUILD=build/release tests/bench/after-move.sh $(BENCH_ARGS)

.PHONY: $(LAB_BENCHES:%=bench-%)
$(LAB_BENCHES:%=bench-%): bench-%:
	@$(MAKE) --no-print-directory SAN=1 all tests
	@kernel/build.sh >/dev/null
	@vmlab/lab status >/dev/null 2>&1 || BUILD=build/check vmlab/lab up >/dev/null
	@BUILD=build/check tests/bench/$*.sh $(BENCH_ARGS)
