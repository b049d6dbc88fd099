#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""List the external commands migr's scripts and build run, and say which
Debian package provides each one.  Driven by tests/deps/deps-check.sh.

  depscan.py [--top DIR] [--deps FILE] [--kernel-tools FILE] [--file F]...
  depscan.py --list        the commands found and where, nothing resolved

With no --file it scans the project (see project_files()): the Makefile
and module.mk fragments (recipes, $(shell ...), SHELL), the scripts, the
C sources (system()/popen() strings, exec*("prog"), "/usr/sbin/ip"-like
literals), and adds the curated tools of the kernel build
(tests/deps/kernel-tools).  Prints tab-separated lines:

  deps    N       NOT-INSTALLED...        the deps file's package count
  ok      NAME    PACKAGE  HOW      WHERE
  fail    NAME    PACKAGE|-  WHY    WHERE
  unused  PACKAGES   listed, not -dev, and no command found resolves there

A command is looked up in /usr/sbin:/usr/bin:/sbin:/bin (an absolute
path as it is); its owner is dpkg's for the path or, when dpkg owns no
such path (alternatives, /usr-merge), for each symlink step to the file,
each also spelt with and without /usr.  HOW is "listed" (the package is
in the deps file), "base" (an Essential: yes or Priority: required
package, or one they depend on: every Debian system has them), or
"via P" (the listed package P pulls it in through Depends/Pre-Depends,
as apt installs it, e.g. cc -> gcc via build-essential).  Anything else
fails, as does a command found nowhere.  WHERE is the first FILE:LINE
that runs it (and how many more).  A script whose #! is busybox runs
busybox applets: each must be one, and counts as busybox's package.

Shell is read by a small tokenizer, not a shell: a word is a command
when it starts a simple command (after ; | || && & ( $( ` <( then do
else ! { and the like), once leading VAR=value words and redirections
are dropped, and after wrappers that run their argument (env, setsid,
timeout, xargs, exec, nohup, sudo, setpriv, nice, ip netns exec,
find -exec, systemd-socket-activate, ...).  Code handed to a shell is
read too: sh -c / bash -c, trap and eval strings, socat SYSTEM:, the
lab's guest helpers (gx, x, mc, check, wait_for, vmlab/lab exec,
lab-exec: the guests run the host's userland), what follows "--" for
the project's own programs (migctl run, migr-inetd, sktool, migtool),
sktool --unlock, unquoted here-documents' $(...), and the values
assigned to variables that are run as commands ($SERVE, $UNLOCK).
Not commands: builtins and keywords (the shell runs them, unless the
word is reached through an exec wrapper), functions the file can see
(its own, and those of the files it sources or that source it),
expansions ($X, $(...); their own code is scanned), relative paths
(the build tree, the repository's scripts), the project's programs,
and absolute paths outside the bin folders (made-up test paths).
"""

import argparse
import os
import re
import subprocess
import sys
from collections import OrderedDict

# --- what the shell itself runs ------------------------------------------

# bash and dash builtins and keywords.  A word reached through an exec
# wrapper (xargs kill, timeout true, ...) is looked up on disk instead.
BUILTINS = set("""
    : . source alias bg bind break builtin caller cd command compgen
    complete compopt continue declare dirs disown echo enable eval exec
    exit export false fc fg getopts hash help history jobs kill let local
    logout mapfile popd printf pushd pwd read readarray readonly return
    set shift shopt suspend test [ times trap true type typeset ulimit
    umask unalias unset wait
""".split())
KEYWORDS = set("""
    if then else elif fi case esac for select while until do done in
    function time { } ! [[ ]] coproc
""".split())
# keywords after which a command starts again
LEAD_KEYWORDS = {"!", "{", "}", "then", "do", "else", "elif", "if",
                 "while", "until", "time", "fi", "done", "esac"}

# Where a program is looked for: root's PATH without /usr/local (no
# package puts anything there).
SEARCH_PATH = ["/usr/sbin", "/usr/bin", "/sbin", "/bin"]

NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
ASSIGN_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(\[[^]]*\])?\+?=")
PUREVAR_RE = re.compile(r"^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$")
METACHARS = set(" \t\n;&|<>()")


class Word:
    """One shell word: its text with quotes removed (expansions kept as
    written), whether it expands anything, the code inside it ($(...),
    backquotes, <(...)) and its line."""

    __slots__ = ("value", "dynamic", "nested", "line", "quoted")

    def __init__(self, line):
        self.value = ""
        self.dynamic = False
        self.nested = []        # [(code, line)]
        self.line = line
        self.quoted = False

    def __repr__(self):
        return "Word(%r)" % self.value


class Lexer:
    """Tokens of a shell text: ("w", Word), ("op", str, line),
    ("redir", op, Word-or-None, line)."""

    def __init__(self, text, line=1):
        self.s = text
        self.i = 0
        self.line0 = line
        self.heredocs = []      # pending (delimiter, strip_tabs, quoted)
        self.toks = []
        self.heredoc_nested = []

    def lineno(self, pos=None):
        if pos is None:
            pos = self.i
        return self.line0 + self.s.count("\n", 0, pos)

    # balanced text after an opening at self.i (already past the opener)
    def read_balanced(self, open_ch, close_ch, comments=True):
        s, depth, i = self.s, 1, self.i
        start = i
        while i < len(s):
            c = s[i]
            if c == "\\":
                i += 2
                continue
            if c == "#" and comments and \
                    (i == start or s[i - 1] in " \t\n;(|&"):
                j = s.find("\n", i)
                i = len(s) if j < 0 else j
                continue
            if c == "'":
                j = s.find("'", i + 1)
                i = len(s) if j < 0 else j + 1
                continue
            if c == '"':
                i = self._skip_dquote(i + 1)
                continue
            if c == "`":
                j = i + 1
                while j < len(s) and s[j] != "`":
                    j += 2 if s[j] == "\\" else 1
                i = j + 1
                continue
            if c == open_ch:
                depth += 1
            elif c == close_ch:
                depth -= 1
                if depth == 0:
                    self.i = i + 1
                    return s[start:i]
            i += 1
        self.i = len(s)
        return s[start:]

    def _skip_dquote(self, i):
        s = self.s
        while i < len(s):
            c = s[i]
            if c == "\\":
                i += 2
            elif c == '"':
                return i + 1
            elif c == "$" and s.startswith("$(", i):
                save = self.i
                self.i = i + 2
                self.read_balanced("(", ")")
                i = self.i
                self.i = save
            elif c == "`":
                j = i + 1
                while j < len(s) and s[j] != "`":
                    j += 2 if s[j] == "\\" else 1
                i = j + 1
            else:
                i += 1
        return i

    # $... at self.i (the "$" itself); appends to word w
    def read_dollar(self, w):
        s = self.s
        i = self.i
        nxt = s[i + 1] if i + 1 < len(s) else ""
        was = w.dynamic
        w.dynamic = True
        if s.startswith("$((", i):
            self.i = i + 3
            inner = self.read_balanced("(", ")", comments=False)
            # arithmetic: $(( ... )) -- eat the second ")"
            if self.i < len(s) and s[self.i] == ")":
                self.i += 1
            w.value += "$((" + inner + "))"
        elif nxt == "(":
            line = self.lineno(i + 2)
            self.i = i + 2
            inner = self.read_balanced("(", ")")
            w.nested.append((inner, line))
            w.value += "$(" + inner + ")"
        elif nxt == "{":
            self.i = i + 2
            inner = self.read_balanced("{", "}", comments=False)
            m = re.search(r"\$\(", inner)
            if m:
                # ${X:-$(cmd)}: the command runs
                sub = Lexer(inner[m.start():], self.lineno(i))
                tmp = Word(self.lineno(i))
                sub.read_dollar(tmp)
                w.nested.extend(tmp.nested)
            w.value += "${" + inner + "}"
        elif nxt == "'":
            # $'...' ANSI-C string: literal text
            j = i + 2
            while j < len(s) and s[j] != "'":
                j += 2 if s[j] == "\\" else 1
            w.value += s[i + 2:j]
            w.dynamic = was
            self.i = j + 1
        elif nxt and (nxt.isalnum() or nxt == "_"):
            m = re.match(r"[A-Za-z0-9_]+", s[i + 1:])
            w.value += "$" + m.group(0)
            self.i = i + 1 + len(m.group(0))
        elif nxt and nxt in "@*#?$!-":
            w.value += "$" + nxt
            self.i = i + 2
        else:
            w.value += "$"      # a lone "$"
            w.dynamic = was
            self.i = i + 1

    def read_backquote(self, w):
        s = self.s
        j = self.i + 1
        while j < len(s) and s[j] != "`":
            j += 2 if s[j] == "\\" else 1
        inner = s[self.i + 1:j].replace("\\`", "`").replace("\\$", "$")
        w.nested.append((inner, self.lineno(self.i)))
        w.value += "`" + inner + "`"
        w.dynamic = True
        self.i = j + 1

    def read_dquote(self, w):
        # self.i is past the opening quote
        s = self.s
        w.quoted = True
        while self.i < len(s):
            c = s[self.i]
            if c == '"':
                self.i += 1
                return
            if c == "\\":
                n = s[self.i + 1] if self.i + 1 < len(s) else ""
                if n in '$`"\\':
                    w.value += n
                    # \$ stays a "$" for whoever reads the value as code
                elif n == "\n":
                    pass
                else:
                    w.value += "\\" + n
                self.i += 2
            elif c == "$":
                self.read_dollar(w)
            elif c == "`":
                self.read_backquote(w)
            else:
                w.value += c
                self.i += 1

    def read_word(self):
        s = self.s
        w = Word(self.lineno())
        start = self.i
        while self.i < len(s):
            c = s[self.i]
            if c in METACHARS:
                # NAME=( array ) / NAME+=( ... )
                if c == "(" and ASSIGN_RE.match(w.value) and w.value.endswith("="):
                    line = self.lineno(self.i + 1)
                    self.i += 1
                    inner = self.read_balanced("(", ")")
                    for t in Lexer(inner, line).tokens():
                        if t[0] == "w":
                            w.nested.extend(t[1].nested)
                    w.value += "(" + inner + ")"
                    continue
                break
            if c == "\\":
                n = s[self.i + 1] if self.i + 1 < len(s) else ""
                if n != "\n":
                    w.value += n
                    w.quoted = True
                self.i += 2
            elif c == "'":
                j = s.find("'", self.i + 1)
                if j < 0:
                    j = len(s)
                w.value += s[self.i + 1:j]
                w.quoted = True
                self.i = j + 1
            elif c == '"':
                self.i += 1
                self.read_dquote(w)
            elif c == "$":
                self.read_dollar(w)
            elif c == "`":
                self.read_backquote(w)
            else:
                w.value += c
                self.i += 1
        # a "$" anywhere (even single-quoted: a guest string's text was
        # expanded by the host) makes a word unknowable
        if "$" in w.value or "`" in w.value:
            w.dynamic = True
        return w if self.i > start else None

    def read_heredocs(self):
        # self.i is just past a newline: the bodies of pending here-docs
        s = self.s
        for delim, strip, quoted in self.heredocs:
            body_line = self.lineno()
            body = []
            while self.i < len(s):
                j = s.find("\n", self.i)
                if j < 0:
                    j = len(s)
                ln = s[self.i:j]
                self.i = j + 1
                if (ln.lstrip("\t") if strip else ln) == delim:
                    break
                body.append(ln)
            if not quoted:
                # unquoted delimiter: $(...) in the body runs
                w = Word(body_line)
                sub = Lexer("\n".join(body), body_line)
                sub.read_dquote_body(w)
                self.heredoc_nested.extend(w.nested)
        self.heredocs = []

    def read_dquote_body(self, w):
        s = self.s
        while self.i < len(s):
            c = s[self.i]
            if c == "\\":
                self.i += 2
            elif c == "$":
                self.read_dollar(w)
            elif c == "`":
                self.read_backquote(w)
            else:
                self.i += 1

    REDIR_OPS = ["<<<", "<<-", "&>>", "<<", ">>", "<&", ">&", "<>", ">|",
                 "&>", "<", ">"]
    CTRL_OPS = [";;&", ";;", ";&", "&&", "||", "|&", "|", "&", ";", "(",
                ")"]

    def tokens(self):
        s = self.s
        toks = self.toks
        while self.i < len(s):
            c = s[self.i]
            if c in " \t":
                self.i += 1
                continue
            if c == "\\" and s.startswith("\\\n", self.i):
                self.i += 2
                continue
            if c == "\n":
                toks.append(("op", "\n", self.lineno()))
                self.i += 1
                if self.heredocs:
                    self.read_heredocs()
                    if self.heredoc_nested:
                        w = Word(self.lineno())
                        w.nested = self.heredoc_nested
                        self.heredoc_nested = []
                        toks.append(("nested", w))
                continue
            if c == "#":
                j = s.find("\n", self.i)
                self.i = len(s) if j < 0 else j
                continue
            # process substitution <( ... ) / >( ... )
            if c in "<>" and s.startswith("(", self.i + 1):
                w = Word(self.lineno())
                line = self.lineno(self.i + 2)
                self.i += 2
                inner = self.read_balanced("(", ")")
                w.nested.append((inner, line))
                w.value = "<(" + inner + ")"
                w.dynamic = True
                toks.append(("w", w))
                continue
            # (( arithmetic ))
            if s.startswith("((", self.i):
                self.i += 2
                self.read_balanced("(", ")", comments=False)
                if self.i < len(s) and s[self.i] == ")":
                    self.i += 1
                toks.append(("arith", self.lineno()))
                continue
            # IO number: 2>file, 2>&1
            m = re.match(r"[0-9]+(?=[<>])", s[self.i:])
            if m and (self.i == 0 or s[self.i - 1] in " \t\n;&|()"):
                self.i += len(m.group(0))
                continue
            op = None
            for o in self.REDIR_OPS:
                if s.startswith(o, self.i):
                    op = o
                    break
            if op:
                line = self.lineno()
                self.i += len(op)
                while self.i < len(s) and s[self.i] in " \t":
                    self.i += 1
                if s.startswith("(", self.i) and op in ("<", ">"):
                    # "> (": not a target; "< <(...)" reads no target
                    # here, the process substitution is the next word
                    toks.append(("redir", op, None, line))
                    continue
                target = self.read_word()
                if op in ("<<", "<<-") and target is not None:
                    quoted = target.quoted
                    self.heredocs.append((target.value, op == "<<-",
                                          quoted))
                toks.append(("redir", op, target, line))
                continue
            for o in self.CTRL_OPS:
                if s.startswith(o, self.i):
                    op = o
                    break
            if op:
                toks.append(("op", op, self.lineno()))
                self.i += len(op)
                continue
            w = self.read_word()
            if w is None:
                self.i += 1
                continue
            toks.append(("w", w))
        return toks


# --- the scanner ----------------------------------------------------------

class Use:
    __slots__ = ("name", "where", "external", "busybox", "curated", "file")

    def __init__(self, name, where, external, busybox=False):
        self.curated = False
        self.file = where.rsplit(":", 1)[0]
        self.name = name
        self.where = where
        self.external = external
        self.busybox = busybox


class Scanner:
    def __init__(self, top, programs):
        self.top = top
        # the project's own programs: what the build makes (excluded by
        # bare name too) and, as well, its scripts (known by their paths)
        self.built, scripts = programs
        self.programs = self.built | scripts
        self.uses = []                # [Use]
        self.functions = {}           # file -> names it defines
        self.sources = []             # (file, basename it sources)
        self.assigns = {}             # name -> [(Word, file)]
        self.code_vars = set()
        self.scanned_vars = set()
        self.applets = None           # busybox applets, when needed

    # record a command use
    def use(self, name, fname, line, external=False, busybox=False):
        self.uses.append(Use(name, "%s:%d" % (fname, line), external,
                             busybox and not name.startswith("/")))

    # ---- shell
    def scan_shell(self, text, fname, line=1, busybox=False):
        toks = Lexer(text, line).tokens()
        self.parse(toks, fname, busybox)

    def parse(self, toks, fname, busybox):
        cmd = []            # words of the current simple command
        case_stack = []     # per open "case": True while in pattern mode
        in_dbracket = False
        i = 0
        n = len(toks)

        def flush():
            if cmd:
                self.simple(list(cmd), fname, busybox, case_stack)
            del cmd[:]

        while i < n:
            t = toks[i]
            kind = t[0]
            if kind == "nested":
                for code, ln in t[1].nested:
                    self.scan_shell(code, fname, ln, busybox)
                i += 1
                continue
            if kind == "arith":
                i += 1
                continue
            if in_dbracket:
                if kind == "w":
                    for code, ln in t[1].nested:
                        self.scan_shell(code, fname, ln, busybox)
                    if t[1].value == "]]":
                        in_dbracket = False
                i += 1
                continue
            if case_stack and case_stack[-1]:
                # pattern mode: words up to ")", or esac
                if kind == "w":
                    if t[1].value == "esac" and not t[1].quoted:
                        case_stack.pop()
                elif kind == "op" and t[1] == ")":
                    case_stack[-1] = False
                i += 1
                continue
            if kind == "redir":
                if t[2] is not None:
                    for code, ln in t[2].nested:
                        self.scan_shell(code, fname, ln, busybox)
                i += 1
                continue
            if kind == "op":
                op = t[1]
                if op == "(" and len(cmd) == 1 and i + 1 < n and \
                        toks[i + 1][0] == "op" and toks[i + 1][1] == ")":
                    # NAME () : a function definition
                    self.functions.setdefault(fname, set()).add(
                        cmd[0].value)
                    del cmd[:]
                    i += 2
                    continue
                flush()
                if op in (";;", ";&", ";;&") and case_stack:
                    case_stack[-1] = True
                i += 1
                continue
            # a word
            w = t[1]
            if not cmd and not w.quoted and w.value == "[[":
                in_dbracket = True
                i += 1
                continue
            if not cmd and not w.quoted and w.value == "function":
                if i + 1 < n and toks[i + 1][0] == "w":
                    self.functions.setdefault(fname, set()).add(
                        toks[i + 1][1].value)
                    i += 2
                    continue
            cmd.append(w)
            # "case WORD in" switches to pattern mode right away
            if len(cmd) == 3 and not cmd[0].quoted and \
                    cmd[0].value == "case" and cmd[2].value == "in":
                for code, ln in cmd[1].nested:
                    self.scan_shell(code, fname, ln, busybox)
                del cmd[:]
                case_stack.append(True)
            i += 1
        flush()

    def simple(self, words, fname, busybox, case_stack):
        # the code inside every word runs, wherever the word is
        for w in words:
            for code, ln in w.nested:
                self.scan_shell(code, fname, ln, busybox)
        while words and not words[0].quoted and \
                words[0].value in LEAD_KEYWORDS:
            if words[0].value == "esac" and case_stack:
                case_stack.pop()
            words = words[1:]
        if not words:
            return
        first = words[0].value
        if not words[0].quoted and first in ("for", "select", "case"):
            return
        self.command(words, fname, busybox, external=False)

    def record_assign(self, w, fname):
        m = ASSIGN_RE.match(w.value)
        if not m:
            return False
        val = Word(w.line)
        val.value = w.value[m.end():]
        val.dynamic = "$" in val.value
        self.assigns.setdefault(m.group(1), []).append((val, fname))
        return True

    def var_programs(self, w, depth=0):
        """Project program names a command word may stand for."""
        out = set()
        v = w.value
        base = v.rstrip("/").rsplit("/", 1)[-1]
        if base and "$" not in base and base in self.programs:
            out.add(base)
        m = PUREVAR_RE.match(v)
        if m and depth < 4:
            for val, _ in self.assigns.get(m.group(1), []):
                out |= self.var_programs(val, depth + 1)
        return out

    def command(self, words, fname, busybox, external):
        # drop VAR=value prefixes
        while words and ASSIGN_RE.match(words[0].value) and \
                not words[0].value.startswith("="):
            self.record_assign(words[0], fname)
            words = words[1:]
        if not words:
            return
        w = words[0]
        args = words[1:]
        line = w.line
        if w.dynamic:
            m = PUREVAR_RE.match(w.value)
            if m:
                self.code_vars.add(m.group(1))
            for prog in self.var_programs(w):
                self.project_rules(prog, args, fname, busybox)
            return
        name = w.value
        if not name:
            return
        if "/" in name and not name.startswith("/"):
            # a relative path: the build tree or the repository's own
            prog = name.rsplit("/", 1)[-1]
            if prog in self.programs:
                self.project_rules(prog, args, fname, busybox)
            return
        base = name.rsplit("/", 1)[-1]
        if name in self.built:
            # a program of ours by its bare name (mc's "migctl ...")
            self.project_rules(name, args, fname, busybox)
            return
        if name in (".", "source") and args:
            self.sources.append((fname, args[0].value.rsplit("/", 1)[-1]))
            return
        if name in ("local", "declare", "typeset", "export", "readonly"):
            for a in args:
                self.record_assign(a, fname)
            return
        # helpers of the lab tests: arguments that are guest code
        h = HELPERS.get(name)
        if h is not None and not external:
            h(self, args, fname, busybox)
            self.use(name, fname, line, external, busybox)
            return
        self.use(name, fname, line, external, busybox)
        wrap = WRAPPERS.get(base)
        if wrap is not None:
            wrap(self, args, fname, busybox)

    def code(self, text, fname, line, busybox=False):
        self.scan_shell(text, fname, line, busybox)

    def project_rules(self, prog, args, fname, busybox):
        """migctl run NS -- CMD, migr-inetd ... -- CMD, sktool restore
        --unlock CODE --resume -- CMD, migtool dest ... -- CMD; vmlab/lab
        exec GUEST CODE; lab-exec [-t S] LAB GUEST CODE."""
        vals = [a.value for a in args]
        if prog == "lab":
            if vals[:1] == ["exec"]:
                gx_like(self, args[1:], fname, busybox)
            return
        if prog == "lab-exec":
            rest = args
            if rest and rest[0].value == "-t":
                rest = rest[2:]
            if len(rest) > 2:
                join_code(self, rest[2:], fname)
            return
        for k, a in enumerate(args):
            if a.value == "--unlock" and k + 1 < len(args):
                self.code(args[k + 1].value, fname, args[k + 1].line)
        if "--" in vals:
            k = vals.index("--")
            if k + 1 < len(args):
                self.command(args[k + 1:], fname, busybox, external=True)

    def visible(self, fname):
        """Functions a command in fname may call: those of the files it
        sources or that source it, transitively (the lab tests and
        tests/lib.sh, lab/lib-*.sh form one such group)."""
        if not hasattr(self, "_groups"):
            parent = {}

            def find(x):
                while parent.setdefault(x, x) != x:
                    x = parent[x]
                return x
            files = set(self.functions) | {u.file for u in self.uses}
            for f, base in self.sources:
                for g in files:
                    if g.rsplit("/", 1)[-1] == base:
                        parent[find(f)] = find(g)
            groups = {}
            for f, names in self.functions.items():
                groups.setdefault(find(f), set()).update(names)
            self._groups = (find, groups)
        find, groups = self._groups
        return groups.get(find(fname), set())

    # variables run as commands ($SERVE, $UNLOCK, $lock): their values
    def scan_code_vars(self):
        while True:
            todo = [v for v in self.code_vars if v not in self.scanned_vars]
            if not todo:
                return
            for v in todo:
                self.scanned_vars.add(v)
                for val, fname in self.assigns.get(v, []):
                    if val.value.startswith("(") or \
                            re.match(r"^[-0-9.]*$", val.value):
                        continue        # an array, a number
                    self.code(val.value, fname, val.line)


def join_code(sc, words, fname):
    if words:
        sc.code(" ".join(w.value for w in words), fname, words[0].line)


def gx_like(sc, args, fname, busybox):
    """gx [-t S] GUEST CMD...: CMD joined by spaces, run by the guest's sh."""
    if args and args[0].value == "-t":
        args = args[2:]
    join_code(sc, args[1:], fname)


def mc_helper(sc, args, fname, busybox):
    """mc GUEST ARGS...: migctl ARGS in GUEST."""
    if len(args) > 1:
        sc.code("migctl " + " ".join(w.value for w in args[1:]), fname,
                args[1].line)


def check_helper(sc, args, fname, busybox):
    """check DESC CMD...: runs CMD."""
    if len(args) > 1:
        sc.command(args[1:], fname, busybox, external=False)


def wait_for_helper(sc, args, fname, busybox):
    """wait_for GUEST SECONDS TEST (030): TEST is guest code."""
    if len(args) > 2:
        join_code(sc, args[2:], fname)


# Functions of the lab tests (tests/lib.sh, tests/lab/*, vmlab/demo.sh)
# whose arguments are code.
HELPERS = {
    "gx": gx_like,          # tests/lib.sh
    "x": gx_like,           # vmlab/demo.sh
    "mc": mc_helper,        # tests/lab/lib-migrd.sh
    "check": check_helper,  # tests/lib.sh
    "wait_for": wait_for_helper,  # tests/lab/030-sk-move.sh
}


# --- wrappers: commands that run their argument ----------------------------

def skip_opts(args, with_arg=(), stop_at_first=True):
    """Index of the first non-option word; options in with_arg take the
    next word unless written --opt=value."""
    k = 0
    while k < len(args):
        v = args[k].value
        if v == "--":
            return k + 1
        if not v.startswith("-") or v == "-":
            return k
        if v in with_arg:
            k += 2
            continue
        k += 1
    return k


def w_after(with_arg=(), skip_more=0):
    def f(sc, args, fname, busybox):
        k = skip_opts(args, with_arg) + skip_more
        if k < len(args):
            sc.command(args[k:], fname, busybox, external=True)
    return f


def w_env(sc, args, fname, busybox):
    k = skip_opts(args, ("-u", "-C", "-S", "--unset", "--chdir"))
    while k < len(args) and ASSIGN_RE.match(args[k].value):
        k += 1
    if k < len(args):
        sc.command(args[k:], fname, busybox, external=True)


def w_command(sc, args, fname, busybox):
    vals = [a.value for a in args]
    if any(v in ("-v", "-V") for v in vals[:2]):
        return                  # a lookup, not a run
    k = skip_opts(args)
    if k < len(args):
        sc.command(args[k:], fname, busybox, external=True)


def w_shell(sc, args, fname, busybox):
    """sh -c CODE / bash -c CODE"""
    for k, a in enumerate(args):
        v = a.value
        if v.startswith("-") and not v.startswith("--") and "c" in v[1:]:
            if k + 1 < len(args):
                sc.code(args[k + 1].value, fname, args[k + 1].line, busybox)
            return
        if not v.startswith("-"):
            return


def w_ip(sc, args, fname, busybox):
    """ip [OPTS] netns exec NS CMD..."""
    vals = [a.value for a in args]
    for k in range(len(vals) - 2):
        if vals[k] == "netns" and vals[k + 1] == "exec":
            if k + 3 < len(args):
                sc.command(args[k + 3:], fname, busybox, external=True)
            return


def w_find(sc, args, fname, busybox):
    for k, a in enumerate(args):
        if a.value in ("-exec", "-execdir", "-ok", "-okdir") and \
                k + 1 < len(args):
            sc.command(args[k + 1:k + 2], fname, busybox, external=True)


def w_trap(sc, args, fname, busybox):
    if len(args) >= 2 and args[0].value not in ("-", "-p", "-l", ""):
        sc.code(args[0].value, fname, args[0].line, busybox)


def w_eval(sc, args, fname, busybox):
    join_code(sc, args, fname)


def w_socat(sc, args, fname, busybox):
    for a in args:
        v = a.value
        if v.upper().startswith("SYSTEM:"):
            sc.code(v[7:], fname, a.line)
        elif v.upper().startswith("EXEC:"):
            sc.code(v[5:].split(",")[0], fname, a.line)


def w_timeout(sc, args, fname, busybox):
    k = skip_opts(args, ("-s", "-k", "--signal", "--kill-after"))
    k += 1                      # DURATION
    if k < len(args):
        sc.command(args[k:], fname, busybox, external=True)


def w_xargs(sc, args, fname, busybox):
    k = skip_opts(args, ("-I", "-n", "-P", "-d", "-a", "-L", "-s", "-E",
                         "-e", "--delimiter", "--arg-file", "--max-args",
                         "--max-procs", "--max-lines", "--max-chars"))
    if k < len(args):
        sc.command(args[k:], fname, busybox, external=True)


WRAPPERS = {
    "env": w_env,
    "command": w_command,
    "builtin": lambda sc, a, f, b: None,
    "exec": w_after(("-a",)),
    "nohup": w_after(),
    "setsid": w_after(),
    "nice": w_after(("-n", "--adjustment")),
    "ionice": w_after(("-c", "-n", "-p", "-P", "-u")),
    "stdbuf": w_after(("-i", "-o", "-e")),
    "sudo": w_after(("-u", "-g", "-h", "-p", "-C", "-D", "-R", "-T", "-U")),
    "chroot": w_after(skip_more=1),
    "setpriv": w_after(("--ruid", "--euid", "--rgid", "--egid", "--reuid",
                        "--regid", "--groups", "--inh-caps",
                        "--ambient-caps", "--bounding-set", "--securebits",
                        "--pdeathsig", "--selinux-label",
                        "--apparmor-profile")),
    "unshare": w_after(("-S", "-G", "-R", "-w", "--setuid", "--setgid",
                        "--root", "--wd", "--map-user", "--map-group")),
    "nsenter": w_after(("-t", "-S", "-G", "-r", "-w", "--target",
                        "--setuid", "--setgid")),
    "systemd-socket-activate": w_after(("-l", "-E", "--listen",
                                        "--setenv", "--fdname")),
    "timeout": w_timeout,
    "xargs": w_xargs,
    "sh": w_shell, "bash": w_shell, "dash": w_shell,
    "ip": w_ip,
    "find": w_find,
    "trap": w_trap,
    "eval": w_eval,
    "socat": w_socat,
}


# --- make -----------------------------------------------------------------

MAKE_DEFAULTS = {"CC": "cc", "CXX": "g++", "AR": "ar", "AS": "as",
                 "LD": "ld", "MAKE": "make", "RM": "rm -f",
                 "CPP": "cc -E"}


class Make:
    """Shell code out of Makefiles: recipe lines (tab-indented, after
    @-+), $(shell ...) anywhere, and SHELL :=."""

    def __init__(self, sc):
        self.sc = sc
        self.vars = {}

    @staticmethod
    def logical_lines(text):
        out, buf, start = [], "", None
        for n, ln in enumerate(text.split("\n"), 1):
            if start is None:
                start = n
            if ln.endswith("\\"):
                buf += ln[:-1] + " "
                continue
            out.append((start, buf + ln))
            buf, start = "", None
        return out

    def learn(self, files):
        for f in files:
            for _, ln in self.logical_lines(read(f)):
                if ln.startswith("\t"):
                    continue
                m = re.match(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*([:?+]?)=\s*(.*)$",
                             ln)
                if m:
                    self.vars.setdefault(m.group(1), []).append(
                        (m.group(2), m.group(3).strip()))

    def tool(self, name):
        """A variable's value when it is one plain word (CC, FUZZ_CC)."""
        defs = self.vars.get(name, [])
        vals = [v for op, v in defs if op != "+"]
        if any(op == "+" for op, _ in defs):
            return None
        if len(vals) == 1 and "$" not in vals[0] and " " not in vals[0] \
                and vals[0]:
            # ?= keeps make's own default for CC, AR, ...
            if name in MAKE_DEFAULTS and defs[0][0] == "?":
                return MAKE_DEFAULTS[name]
            return vals[0]
        if not defs and name in MAKE_DEFAULTS:
            return MAKE_DEFAULTS[name]
        return None

    def expand(self, s, codes, line):
        out, i = "", 0
        while i < len(s):
            c = s[i]
            if c != "$":
                out += c
                i += 1
                continue
            n = s[i + 1] if i + 1 < len(s) else ""
            if n == "$":
                out += "$"
                i += 2
            elif n in "({":
                close = ")" if n == "(" else "}"
                depth, j = 1, i + 2
                while j < len(s) and depth:
                    if s[j] == n:
                        depth += 1
                    elif s[j] == close:
                        depth -= 1
                    j += 1
                inner = s[i + 2:j - 1]
                i = j
                fn = inner.split(None, 1)
                if NAME_RE.match(inner):
                    t = self.tool(inner)
                    out += t if t is not None else "$" + inner
                elif fn and fn[0] == "shell" and len(fn) > 1:
                    codes.append((self.expand(fn[1], codes, line), line))
                    out += "$MAKE_SHELL"
                else:
                    if len(fn) > 1:
                        self.expand(fn[1], codes, line)
                    out += "$MAKE_FN"
            else:
                out += "$" + n
                i += 2
        return out

    def scan(self, f):
        rel = relpath(f, self.sc.top)
        for line, ln in self.logical_lines(read(f)):
            codes = []
            if ln.startswith("\t"):
                body = ln[1:].lstrip(" \t")
                while body[:1] in ("@", "-", "+"):
                    body = body[1:]
                codes.append((self.expand(body, codes, line), line))
            else:
                if ln.lstrip().startswith("#"):
                    continue
                m = re.match(r"^\s*SHELL\s*:?=\s*(\S+)", ln)
                if m:
                    self.sc.use(m.group(1), rel, line)
                self.expand(ln, codes, line)
            for code, cl in codes:
                self.sc.scan_shell(code, rel, cl)


# --- C --------------------------------------------------------------------

C_STR = r'"(?:[^"\\\n]|\\.)*"'


def scan_c(sc, f):
    """system("...")/popen("..."): shell code; exec*("prog"...) and any
    string that is a path into a bin folder ("/usr/sbin/ip"): a program."""
    rel = relpath(f, sc.top)
    text = read(f)

    def lineof(pos):
        return text.count("\n", 0, pos) + 1

    def literal(s):
        return bytes(s[1:-1], "utf-8").decode("unicode_escape")

    for m in re.finditer(r"\b(system|popen)\s*\(\s*((?:%s\s*)+)" % C_STR, text):
        parts = re.findall(C_STR, m.group(2))
        sc.scan_shell("".join(literal(p) for p in parts), rel,
                      lineof(m.start()))
    for m in re.finditer(r"\bexec(?:l|lp|le|v|vp|vpe)\s*\(\s*(%s)" % C_STR,
                         text):
        prog = literal(m.group(1))
        sc.use(prog, rel, lineof(m.start()), external=True)
    for m in re.finditer(r'"(/(?:usr/)?s?bin/[A-Za-z0-9_.+-]+)"', text):
        sc.use(m.group(1), rel, lineof(m.start()), external=True)


# --- files ----------------------------------------------------------------

def read(f):
    with open(f, encoding="utf-8", errors="replace") as fh:
        return fh.read()


def relpath(f, top):
    r = os.path.relpath(f, top)
    return f if r.startswith("..") else r


def is_script(f):
    try:
        with open(f, "rb") as fh:
            return fh.read(2) == b"#!"
    except OSError:
        return False


def globs(top, *pats):
    import glob
    out = []
    for p in pats:
        out += sorted(glob.glob(os.path.join(top, p)))
    return out


def project_files(top):
    """The scripts, makefiles and C sources to scan."""
    makefiles = globs(top, "Makefile", "*/module.mk", "*/*/module.mk")
    scripts = globs(top, "kernel/build.sh", "vmlab/*", "vmlab/guest/*",
                    "tests/run", "tests/lib.sh", "tests/lab/*.sh",
                    "tests/fuzz/*.sh", "tests/bench/*", "tests/drill/*",
                    ".ci/run",
                    "tests/deps/deps-check.sh")
    # a Python helper among them (tests/bench/flowgaps.py) runs no
    # command: the interpreter is all it needs, and python3 is checked
    # where a shell script calls it
    scripts = [f for f in scripts if os.path.isfile(f) and
               not f.endswith(".py") and
               (is_script(f) or f.endswith(".sh"))]
    csrc = []
    for d, dirs, files in os.walk(top):
        rel = os.path.relpath(d, top)
        if rel == ".":
            dirs[:] = [x for x in dirs if not x.startswith(".")
                       and x != "build"]
        csrc += [os.path.join(d, x) for x in files if x.endswith(".c")]
    return makefiles, scripts, sorted(csrc)


def project_programs(top, makefiles):
    """(built, scripts): the names of what the build makes ($(BUILD)/.../
    NAME in the makefiles, tests/*/NAME.c), and of the repository's
    executable files."""
    built, scripts = set(), set()
    for f in makefiles:
        for m in re.finditer(r"\$\(BUILD\)/[A-Za-z0-9_./%-]*/"
                             r"([A-Za-z0-9_.-]+)(?![A-Za-z0-9_./%-])",
                             read(f)):
            built.add(m.group(1))
    for d in ("tests/tools", "tests/unit", "tests/workload"):
        for f in globs(top, d + "/*.c"):
            built.add(os.path.basename(f)[:-2])
    built = {p for p in built if not re.search(r"\.(o|a|d|c|h)$", p)}
    for d, dirs, files in os.walk(top):
        rel = os.path.relpath(d, top)
        if rel == ".":
            dirs[:] = [x for x in dirs if not x.startswith(".")
                       and x != "build"]
        for x in files:
            if os.access(os.path.join(d, x), os.X_OK):
                scripts.add(x)
    return built, scripts


# --- packages -------------------------------------------------------------

def deps_list(f):
    """Packages of the pkgs=( ... ) array of vmlab/deps.sh."""
    text = read(f)
    m = re.search(r"^\s*pkgs=\((.*?)^\s*\)", text, re.S | re.M)
    if not m:
        raise SystemExit("depscan: no pkgs=( ... ) in %s" % f)
    pkgs = []
    for ln in m.group(1).split("\n"):
        ln = ln.split("#", 1)[0]
        pkgs += ln.split()
    return pkgs


def parse_rel(field):
    """Depends-style field -> [[alternative names]]"""
    out = []
    for group in field.split(","):
        alts = []
        for a in group.split("|"):
            a = a.strip().split(" ", 1)[0].split("(", 1)[0].strip()
            a = a.split(":", 1)[0]
            if a:
                alts.append(a)
        if alts:
            out.append(alts)
    return out


class Dpkg:
    def __init__(self):
        fmt = ("${Package}\t${db:Status-Status}\t${Essential}\t${Priority}"
               "\t${Pre-Depends}\t${Depends}\t${Provides}\n")
        out = subprocess.run(["dpkg-query", "-W", "-f", fmt],
                             capture_output=True, text=True).stdout
        self.installed = {}
        self.base_roots = []
        provides = {}
        for ln in out.split("\n"):
            f = ln.split("\t")
            if len(f) < 7 or f[1] != "installed":
                continue
            pkg = f[0]
            self.installed[pkg] = parse_rel(f[4]) + parse_rel(f[5])
            if f[2] == "yes" or f[3] == "required":
                self.base_roots.append(pkg)
            for alts in parse_rel(f[6]):
                for v in alts:
                    provides.setdefault(v, []).append(pkg)
        self.provides = provides

    def pick(self, alts):
        for a in alts:
            if a in self.installed:
                return a
            for p in self.provides.get(a, []):
                return p
        return None

    def closure(self, roots):
        """{package: root} for everything installing roots pulls in."""
        via = OrderedDict()
        queue = []
        for r in roots:
            p = self.pick([r])
            if p and p not in via:
                via[p] = r
                queue.append(p)
        while queue:
            p = queue.pop(0)
            for alts in self.installed.get(p, []):
                q = self.pick(alts)
                if q and q not in via:
                    via[q] = via[p]
                    queue.append(q)
        return via

    @staticmethod
    def owners(paths):
        """{path: [packages]} through one dpkg-query -S call."""
        own = {}
        if not paths:
            return own
        r = subprocess.run(["dpkg-query", "-S"] + sorted(set(paths)),
                           capture_output=True, text=True)
        for ln in r.stdout.split("\n"):
            if not ln or ln.startswith("diversion by"):
                continue
            pk, sep, path = ln.rpartition(": ")
            if not sep:
                continue
            pkgs = [p.strip().split(":", 1)[0] for p in pk.split(",")]
            own.setdefault(path, []).extend(pkgs)
        return own


def usrmerge(p):
    for a, b in (("/usr/bin/", "/bin/"), ("/usr/sbin/", "/sbin/"),
                 ("/usr/lib/", "/lib/")):
        if p.startswith(a):
            return b + p[len(a):]
        if p.startswith(b):
            return a + p[len(b):]
    return None


def chain(path):
    """path, then each symlink step to the file (alternatives included),
    each also in its /usr-merged spelling."""
    steps, seen = [], set()
    p = path
    for _ in range(12):
        if p in seen:
            break
        seen.add(p)
        steps.append(p)
        if not os.path.islink(p):
            break
        t = os.readlink(p)
        p = os.path.normpath(os.path.join(os.path.dirname(p), t))
    rp = os.path.realpath(path)
    if rp not in seen:
        steps.append(rp)
    out = []
    for s in steps:
        out.append(s)
        a = usrmerge(s)
        if a:
            out.append(a)
    return out


def which(name):
    for d in SEARCH_PATH:
        p = os.path.join(d, name)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None


def busybox_applets():
    for bb in ("/bin/busybox", "/usr/bin/busybox"):
        if os.access(bb, os.X_OK):
            r = subprocess.run([bb, "--list"], capture_output=True,
                               text=True)
            return set(r.stdout.split())
    return set()


# --- main -----------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--top", default=os.path.normpath(
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "../..")))
    ap.add_argument("--deps", help="deps script (default vmlab/deps.sh)")
    ap.add_argument("--kernel-tools",
                    help="curated list (default tests/deps/kernel-tools)")
    ap.add_argument("--file", action="append", default=[],
                    help="scan only these shell scripts")
    ap.add_argument("--list", action="store_true",
                    help="print the uses found, unresolved, and stop")
    o = ap.parse_args()
    top = os.path.abspath(o.top)
    deps_file = o.deps or os.path.join(top, "vmlab/deps.sh")
    ktools = o.kernel_tools
    if ktools is None and not o.file:
        ktools = os.path.join(top, "tests/deps/kernel-tools")

    if o.file:
        makefiles, scripts, csrc = [], o.file, []
    else:
        makefiles, scripts, csrc = project_files(top)
    allmk = globs(top, "Makefile", "*/module.mk", "*/*/module.mk")
    sc = Scanner(top, project_programs(top, allmk))

    mk = Make(sc)
    mk.learn(makefiles)
    for f in makefiles:
        mk.scan(f)
    for f in scripts:
        text = read(f)
        rel = relpath(f, top)
        first = text.split("\n", 1)[0]
        busybox = first.startswith("#!") and "busybox" in first
        if first.startswith("#!"):
            interp = first[2:].split()
            if interp and interp[0].endswith("/env") and len(interp) > 1:
                sc.use(interp[0], rel, 1, external=True)
                sc.use(interp[1], rel, 1, external=True)
            elif interp:
                sc.use(interp[0], rel, 1, external=True)
        sc.scan_shell(text, rel, 1, busybox)
    for f in csrc:
        scan_c(sc, f)
    sc.scan_code_vars()

    if ktools:
        kt = relpath(ktools, top)
        for n, ln in enumerate(read(ktools).split("\n"), 1):
            ln = ln.split("#", 1)[0].strip()
            if ln:
                u = Use(ln.split()[0], "%s:%d" % (kt, n), True)
                u.curated = True
                sc.uses.append(u)

    # group the uses by command
    found = OrderedDict()
    for u in sc.uses:
        n = u.name
        if n in KEYWORDS:
            continue
        if not u.external and (n in BUILTINS or n in sc.visible(u.file)):
            continue
        if n in sc.built:
            continue
        if n.startswith("/") and not u.curated and \
                not re.match(r"^/(usr/)?s?bin/", n):
            continue    # not a system program: a path the test makes up
        if u.busybox:
            n = "busybox:" + n
        found.setdefault(n, []).append(u.where)

    if o.list:
        for n, wh in found.items():
            print("%s\t%s" % (n, " ".join(wh)))
        return 0

    # resolve: command -> path -> package
    dp = Dpkg()
    applets = None
    paths = {}
    queries = []
    for n in found:
        if n.startswith("busybox:"):
            continue
        p = n if n.startswith("/") else which(n)
        if p is None or not os.path.exists(p):
            paths[n] = None
            continue
        paths[n] = chain(p)
        queries += paths[n]
    bb_paths = chain("/bin/busybox")
    if any(n.startswith("busybox:") for n in found):
        queries += bb_paths
    own = Dpkg.owners(queries)

    listed = deps_list(deps_file)
    via = dp.closure(listed)
    base = dp.closure(dp.base_roots)
    not_installed = [p for p in listed if dp.pick([p]) is None]
    print("deps\t%s\t%s" % (len(listed), " ".join(not_installed)))

    used = set()
    for n, wh in found.items():
        where = wh[0] + (" (+%d)" % (len(wh) - 1) if len(wh) > 1 else "")
        if n.startswith("busybox:"):
            if applets is None:
                applets = busybox_applets()
            app = n.split(":", 1)[1]
            if app not in applets:
                print("fail\t%s\t-\tnot a busybox applet (busybox sh script)"
                      "\t%s" % (n, where))
                continue
            pkgs = own_of(bb_paths, own)
        else:
            if paths.get(n) is None:
                print("fail\t%s\t-\tnot found: no installed package "
                      "provides it\t%s" % (n, where))
                continue
            pkgs = own_of(paths[n], own)
        if not pkgs:
            print("fail\t%s\t-\t%s belongs to no package\t%s"
                  % (n, paths[n][0] if paths.get(n) else n, where))
            continue
        verdict = None
        for p in pkgs:
            if p in listed:
                verdict = (p, "listed")
                break
        if verdict is None:
            for p in pkgs:
                if p in base:
                    verdict = (p, "base")
                    break
        if verdict is None:
            for p in pkgs:
                if p in via:
                    verdict = (p, "via " + via[p])
                    break
        if verdict is not None:
            used.add(verdict[0])
            if verdict[1].startswith("via "):
                used.add(verdict[1][4:])
        if verdict is None:
            print("fail\t%s\t%s\tpackage %s is not in %s (nor pulled in "
                  "by one there, nor Essential/required)\t%s"
                  % (n, pkgs[0], pkgs[0], relpath(deps_file, top), where))
        else:
            print("ok\t%s\t%s\t%s\t%s" % (n, verdict[0], verdict[1], where))
    # listed programs' packages that nothing scanned runs (libraries and
    # headers, -dev, are for the compiler: not counted)
    idle = [p for p in listed if p not in used and not p.endswith("-dev")
            and not p.startswith("linux-source")]
    print("unused\t%s" % " ".join(idle))
    return 0


def own_of(paths, own):
    for p in paths:
        if p in own:
            return own[p]
    return []


if __name__ == "__main__":
    sys.exit(main())
