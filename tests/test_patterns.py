"""``keydrift.patterns.lazy``: a pattern compiled on first use answers as ``re.compile``'s does."""

from __future__ import annotations

import re

from keydrift.patterns import lazy


def test_a_lazy_pattern_answers_as_the_compiled_one():
    text, flags = r"(?P<word>[a-z]+)(\d*)", re.IGNORECASE
    pattern, compiled = lazy(text, flags), re.compile(text, flags)
    assert pattern.match("Ab12 cd").groups() == compiled.match("Ab12 cd").groups()
    assert pattern.search("  xy9")["word"] == "xy"
    assert pattern.fullmatch("ab1") is not None and pattern.fullmatch("ab 1") is None
    assert [m.group() for m in pattern.finditer("a1 b2")] == ["a1", "b2"]
    assert pattern.findall("a1 b") == compiled.findall("a1 b")
    assert pattern.sub("-", "a1 b") == "- -" and pattern.subn("-", "a1") == ("-", 1)
    assert pattern.split("a1 b") == compiled.split("a1 b")
    assert (pattern.pattern, pattern.flags, pattern.groups, dict(pattern.groupindex)) == \
        (compiled.pattern, compiled.flags, compiled.groups, dict(compiled.groupindex))


def test_a_lazy_pattern_compiles_only_when_first_used(monkeypatch):
    made = []
    original = re.compile
    monkeypatch.setattr(re, "compile", lambda *args: made.append(args) or original(*args))
    pattern = lazy(r"a+")
    assert made == []
    assert pattern.match("aa") and pattern.match("b") is None
    assert made == [(r"a+", 0)]  # once, whatever is used after
