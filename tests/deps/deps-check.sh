#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# Every external command that migr's scripts and build run must come
# from a package vmlab/deps.sh installs (or one it pulls in), or from a
# package every Debian system has (Essential: yes or Priority: required).
# A command no such package provides fails, named, with the file and
# line that runs it: add its package to vmlab/deps.sh.
#
# tests/deps/depscan.py finds the commands: the project's scripts (the
# lab tests' guest command strings included), its makefiles, the
# programs its C code executes, and the tools the kernel build needs
# (tests/deps/kernel-tools); its docstring says how.  Then a self-test
# runs it on tests/deps/fixture and checks that it names what it must.
#
# Installed as $BUILD/tests/unit/deps_check by tests/deps/module.mk, so
# tests/run --unit runs it.  TAP on stdout.  No network; a few seconds.
set -uo pipefail

# the repository: up from here (tests/deps/ or $BUILD/tests/unit/)
top=${MIGR_TOP:-}
if [ -z "$top" ]; then
	d=$(cd "$(dirname "$0")" && pwd)
	while [ "$d" != / ]; do
		if [ -f "$d/vmlab/deps.sh" ] && [ -f "$d/tests/deps/depscan.py" ]; then
			top=$d
			break
		fi
		d=$(dirname "$d")
	done
fi
n=0 nfail=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); nfail=$((nfail + 1)); echo "not ok $n - $*"; }
finish() { echo "1..$n"; exit $((nfail > 0)); }

if [ -z "$top" ]; then
	notok "deps_check: the repository (vmlab/deps.sh) not found above $0"
	finish
fi
if ! command -v python3 >/dev/null; then
	notok "deps_check: python3 missing (package python3, in vmlab/deps.sh)"
	finish
fi
scan=$top/tests/deps/depscan.py
fix=$top/tests/deps/fixture

# --- the project
if ! out=$(python3 "$scan" --top "$top" 2>&1); then
	notok "depscan.py failed"
	sed 's/^/# /' <<<"$out"
	finish
fi
total=0 missing=()
while IFS=$'\t' read -r kind name pkg how where; do
	case "$kind" in
	deps)
		if [ -n "$pkg" ]; then
			notok "vmlab/deps.sh: not installed here: $pkg (run 'make deps')"
		else
			ok "vmlab/deps.sh: its $name packages are installed"
		fi ;;
	ok)
		total=$((total + 1))
		ok "$name: $pkg ($how) [$where]" ;;
	fail)
		total=$((total + 1))
		missing+=("$name")
		notok "$name: $how [$where]" ;;
	unused)
		[ -z "$name" ] ||
			echo "# note: listed in vmlab/deps.sh, but no command found here resolves to: $name" ;;
	*)
		echo "# depscan: $kind $name $pkg $how $where" ;;
	esac
done <<<"$out"
if [ "$total" -lt 50 ]; then
	notok "the scan found only $total commands: the scanner is broken"
fi
echo "# $total commands: $((total - ${#missing[@]})) provided, ${#missing[@]} not: ${missing[*]:-none}"

# --- self-test: a fixture that runs what the fixture's deps list lacks
fx=$(python3 "$scan" --top "$fix" --deps "$fix/deps.sh" --file "$fix/script.sh" 2>&1)
# expect DESC REGEX: a line of the fixture's scan matches REGEX
expect() {
	if grep -qE -- "$2" <<<"$fx"; then ok "self-test: $1"; else
		notok "self-test: $1"; sed 's/^/# /' <<<"$fx"; fi
}
# refute DESC REGEX: no line matches
refute() {
	if grep -qE -- "$2" <<<"$fx"; then
		notok "self-test: $1"; sed 's/^/# /' <<<"$fx"; else ok "self-test: $1"; fi
}
tab=$'\t'
expect "rsync, whose package is not in the fixture's list, fails by name" \
	"^fail${tab}rsync${tab}.*package rsync is not in .*deps.sh"
expect "a command in a guest string (gx \"... setsid tcpdump\") fails by name" \
	"^fail${tab}tcpdump${tab}"
expect "a command run through a variable (\$RUN=\"bc -q\") fails by name" \
	"^fail${tab}bc${tab}"
expect "a command no package provides fails as not found" \
	"^fail${tab}no-such-tool-xyz${tab}.*not found"
expect "jq, in the fixture's list, passes as listed" "^ok${tab}jq${tab}jq${tab}listed"
expect "cat passes as Essential/required" "^ok${tab}cat${tab}coreutils${tab}base"
refute "a function (helper) and builtins (echo, cd) are not commands" \
	"^(ok|fail)${tab}(helper|echo|cd)${tab}"
refute "arguments and case patterns are not commands" \
	"^(ok|fail)${tab}(src/|dst/|-a|\\*|pattern)"
finish
