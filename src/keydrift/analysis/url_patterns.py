"""Regular expressions that only match a URL with a scheme (KD401's guard).

``if HTTP_URL.match(value): urlparse(value)``, ``if not re.fullmatch(r"https?://\\S+", v): return``:
a parse reached only when such a pattern matched the input always finds a scheme and a host.
A pattern guarantees it when it is anchored at the start (``match``/``fullmatch`` are; ``search``
needs ``^`` or ``\\A``), reaches ``://`` through scheme characters only (``https?``,
``(?:https?|ftp)``, ``[a-z][a-z0-9+.-]*``), the group holding ``://`` is not optional and no
top-level alternative (``...|^/path``) leaves it out. Patterns are read from string literals:
at the call, or a module-level name bound to a literal or ``re.compile(literal, ...)``.
"""

from __future__ import annotations

import ast
from typing import Dict, Iterator, Mapping, Optional, Tuple

from keydrift.analysis.tree import string_literal
from keydrift.analysis.values import dotted_name
from keydrift.patterns import lazy

# Methods of a compiled pattern and functions of ``re`` that test a string against a pattern.
MATCHING: frozenset = frozenset({"match", "fullmatch", "search"})
# Every ``re`` function whose first argument is a pattern (a literal there is no scheme added).
PATTERN_TAKING: frozenset = MATCHING | frozenset({"compile", "sub", "subn", "split", "findall", "finditer"})
RE_MODULES: frozenset = frozenset({"re", "regex"})

_ANCHORS = ("^", "\\A")
_INLINE_FLAGS = lazy(r"^\(\?[aiLmsux]+\)")
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-[]|?():*<>")
_OPTIONAL_AFTER_GROUP = ("?", "*", "{0")


def module_patterns(module: ast.Module) -> Dict[str, str]:
    """Module-level names bound to a pattern text: ``URL = r"..."``, ``URL = re.compile(r"...")``."""
    found: Dict[str, str] = {}
    for statement in module.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Name):
            text = _pattern_text(statement.value)
            if text is not None:
                found[statement.targets[0].id] = text
    return found


def _pattern_text(value: ast.expr) -> Optional[str]:
    literal = string_literal(value)
    if literal is not None:
        return literal
    if isinstance(value, ast.Call) and is_re_call(value, frozenset({"compile"})) and value.args:
        return string_literal(value.args[0])
    return None


def is_re_call(call: ast.Call, names: frozenset) -> bool:
    """``re.match(...)`` (or ``regex.``): a function of the module, not a compiled pattern's method."""
    func = call.func
    return isinstance(func, ast.Attribute) and func.attr in names and dotted_name(func.value) in RE_MODULES


def is_pattern_argument(node: ast.AST, parent: Optional[ast.AST]) -> bool:
    """The pattern literal of ``re.match(r"https?://", v)``: a pattern, not a scheme the code adds."""
    return isinstance(parent, ast.Call) and is_re_call(parent, PATTERN_TAKING) \
        and bool(parent.args) and parent.args[0] is node


def scheme_matched(call: ast.Call, patterns: Mapping[str, str]) -> Optional[ast.expr]:
    """The string ``call`` tests against a pattern that only matches URLs with a scheme, or None."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in MATCHING:
        return None
    if is_re_call(call, MATCHING):
        if len(call.args) < 2:
            return None
        pattern, subject = _pattern_of(call.args[0], patterns), call.args[1]
    else:
        if not call.args or not isinstance(func.value, ast.Name):
            return None
        pattern, subject = patterns.get(func.value.id), call.args[0]
    if pattern is None or not requires_scheme(pattern, anchored=func.attr != "search"):
        return None
    return subject


def _pattern_of(node: ast.expr, patterns: Mapping[str, str]) -> Optional[str]:
    if isinstance(node, ast.Name):
        return patterns.get(node.id)
    return string_literal(node)


def requires_scheme(pattern: str, anchored: bool) -> bool:
    """Whether every string the pattern matches (from the start) begins with ``<scheme>://``."""
    text = pattern
    for anchor in _ANCHORS:
        if text.startswith(anchor):
            text, anchored = text[len(anchor):], True
            break
    if not anchored:
        return False
    text = _INLINE_FLAGS.sub("", text, count=1)  # (?i): flags, not a group
    at = text.find("://")
    if at <= 0 or not set(text[:at]) <= _SCHEME_CHARS:
        return False
    prefix, rest = text[:at], text[at + 3:]
    classes_as_letters = _CHARACTER_CLASS.sub("c", prefix)
    if not _REQUIRED_SCHEME_CHARACTER.search(classes_as_letters) or any(q in prefix for q in _OPTIONAL_GROUP):
        return False  # "(https?)?://", "[a-z]*://": the scheme may be empty
    return not _alternative_skips_scheme(prefix) and _closes_required(rest)


# A scheme character the pattern cannot skip: a letter (or a class) not followed by ? or *.
_REQUIRED_SCHEME_CHARACTER = lazy(r"(?<![(?])[A-Za-z](?![?*])")
_CHARACTER_CLASS = lazy(r"\[[^\]]*\]")
_OPTIONAL_GROUP = (")?", ")*", "){0")


def _alternative_skips_scheme(prefix: str) -> bool:
    """A ``|`` in a group still open at ``://`` (or at the top level): an alternative that
    skips the scheme (``^(https?|ftp://)``, ``^/|http://``)."""
    bars = [False]  # per open group, innermost last; the top level first
    for _, char in _unescaped(prefix):
        if char == "(":
            bars.append(False)
        elif char == ")" and len(bars) > 1:
            bars.pop()
        elif char == "|":
            bars[-1] = True
    return any(bars)


def _closes_required(rest: str) -> bool:
    """After ``://``: no ``|`` in a group around it (or at the top level), and none of those
    groups is quantified as optional when it closes."""
    nested = 0
    for index, char in _unescaped(rest):
        if char == "(":
            nested += 1
        elif char == ")" and nested:
            nested -= 1
        elif char == ")":
            if rest[index + 1:].startswith(_OPTIONAL_AFTER_GROUP):
                return False  # a group around "://" closes as optional
        elif char == "|" and not nested:
            return False
    return True


def _unescaped(text: str) -> Iterator[Tuple[int, str]]:
    """(index, char) of the characters that are syntax: not escaped, not inside ``[...]``."""
    index, in_class = 0, False
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        else:
            yield index, char
        index += 1
