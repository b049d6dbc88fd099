# SPDX-License-Identifier: ISC
# tests/deps: every external command of the scripts, the build and the
# kernel build comes from a package vmlab/deps.sh installs (or from an
# Essential/required one).  A shell script and its python3 scanner,
# run from the source tree:
#
#   $(BUILD)/tests/unit/deps_check    tests/deps/deps-check.sh, picked up
#                                     by tests/run --unit (TAP)
DEPS_CHECK := $(BUILD)/tests/unit/deps_check
TESTS      += $(DEPS_CHECK)

$(DEPS_CHECK): tests/deps/deps-check.sh
	@mkdir -p $(dir $@)
	install -m 755 $< $@
