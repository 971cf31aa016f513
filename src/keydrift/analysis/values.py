"""Symbolic evaluation of expressions into key ``Value``s: origins plus transformation steps."""

from __future__ import annotations

import ast
import keyword
import re
from operator import itemgetter
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from keydrift.analysis.facts import (
    CALL,
    FETCH,
    FORMAT,
    IDNA,
    NORMALIZER,
    PART,
    REDERIVED,
    REMOTE,
    SLASH,
    Step,
    Value,
)
from keydrift.analysis.tree import current_source_lines, is_super_call, lines_and_memo, node_memo
from keydrift.frameworks import transforms
from keydrift.frameworks.schema import natural_key_kind
from keydrift.patterns import lazy

_MAX_LABEL = 48

# -- source text ------------------------------------------------------------------------------
#
# ``code`` gives one text per expression whatever its layout: common expression shapes rendered canonically (a call's
# arguments joined by ", ", no spaces around a keyword's "="), anything else (or anything with
# parentheses of its own inside) as written with whitespace collapsed, including the node's own
# parentheses. ``ast`` positions exclude a node's parentheses, so they are found in the text.

_Position = Tuple[int, int]  # (line 1-based, UTF-8 byte column)

# Names of the per-module memos (``tree.node_memo``) of ``code`` and of ``_render``: the
# evaluator asks for the text of a call, then of its receiver, its arguments, ...
_CODE_MEMO, _RENDER_MEMO = "values.code", "values.render"


def code(node: ast.AST) -> str:
    """The node's source text on one line. Common expression shapes are rendered directly
    (one spelling whatever the layout); anything else is the source as written, whitespace collapsed
    (``ast.unparse`` when no source is set, see ``tree.source_lines``)."""
    lines, memo = lines_and_memo(_CODE_MEMO)
    end_line = getattr(node, "end_lineno", None)
    if lines is None or memo is None or end_line is None or end_line > len(lines):
        return _without_source(node)
    known = memo.get(id(node))
    if known is not None and known[0] is node:
        return known[1]
    try:
        text = _code_from(lines, node)
    except AttributeError:  # a node built by hand inside a parsed one has no positions
        return _without_source(node)
    memo[id(node)] = (node, text)
    return text


def _code_from(lines: Sequence[str], node: ast.AST) -> str:
    renders = node_memo(_RENDER_MEMO)  # (there whenever ``lines`` are: both are the source's)
    known = renders.get(id(node)) if renders is not None else None
    if known is not None and known[0] is not node:
        known = None
    if known is not None and known[1] is not None:
        # rendered already: as a part of an enclosing expression's (the evaluator reads a call,
        # then its receiver and arguments), or by an earlier ``code`` of it. Either way no
        # parentheses of its own are around it (``_own_span`` is None): a part is rendered only
        # after the separator before it was found to be the one expected (``(``, ``[``, ``,``,
        # ``k=``) or when it starts where its whole does (``a`` in ``a.b``), and ``code``
        # renders a node only when it has none
        return known[1]
    span = _own_span(lines, node)
    if span is None:
        # rendered before as None: a shape not rendered, or a part in parentheses
        text = _render(node, lines, renders) if known is None else None
        if text is not None:
            return text
        text = _text_between(lines, _start(node), _end(node))
    else:
        text = _text_between(lines, *span)
    return " ".join(text.split())


def _without_source(node: ast.AST) -> str:
    try:
        text = _render(node, None, None)
    except AttributeError:
        text = None
    return text if text is not None else _unparse(node)


def _unparse(node: ast.AST) -> str:
    try:
        return " ".join(ast.unparse(node).split())
    except Exception:  # noqa: BLE001 - a node unparse does not know: no text rather than a crash
        return ""


def _start(node: ast.AST) -> _Position:
    return node.lineno, node.col_offset  # type: ignore[attr-defined]


def _end(node: ast.AST) -> _Position:
    return node.end_lineno, node.end_col_offset  # type: ignore[attr-defined]


def _text_between(lines: Sequence[str], start: _Position, end: _Position) -> str:
    first_line, first_col = start
    last_line, last_col = end
    if first_line == last_line and 1 <= first_line <= len(lines):  # (most spans: tested first)
        if first_col > last_col:
            return ""
        line = lines[first_line - 1]
        if line.isascii():
            return line[first_col:last_col]  # (columns are bytes: of ASCII, characters)
        return line.encode("utf-8")[first_col:last_col].decode("utf-8", "replace")
    if first_line < 1 or last_line > len(lines) or (first_line, first_col) > (last_line, last_col):
        return ""
    first = lines[first_line - 1].encode("utf-8")
    parts = [_with_end(first[first_col:].decode("utf-8", "replace"))]
    parts += [_with_end(lines[i]) for i in range(first_line, last_line - 1)]
    parts.append(lines[last_line - 1].encode("utf-8")[:last_col].decode("utf-8", "replace"))
    return "".join(parts)


def _with_end(line: str) -> str:
    return line if line.endswith(("\n", "\r")) else line + "\n"


def _gap(lines: Sequence[str], start: _Position, end: _Position) -> str:
    """The tokens between two positions, without whitespace, line continuations and comments."""
    text = _text_between(lines, start, end)
    if "#" in text:
        text = "\n".join(line.split("#", 1)[0] for line in text.split("\n"))
    return "".join(text.replace("\\\n", "").split())


def _byte_line(lines: Sequence[str], number: int) -> bytes:
    return lines[number - 1].encode("utf-8") if 1 <= number <= len(lines) else b""


# What ``bytes.strip`` strips; ``str.strip`` strips more (``"\x1c"``)
_BLANKS = " \t\n\r\x0b\x0c"


def _before(lines: Sequence[str], position: _Position) -> Optional[Tuple[_Position, bytes]]:
    """The last non-blank character before ``position`` (over line breaks), with its position."""
    number, column = position
    if 1 <= number <= len(lines) and lines[number - 1].isascii():  # the common case, without encoding
        stripped = lines[number - 1][:column].rstrip(_BLANKS)
        if stripped and stripped[-1] != "\\":
            return (number, len(stripped) - 1), stripped[-1].encode()
    line = _byte_line(lines, number)[:column]
    while True:
        stripped = line.rstrip()
        if stripped.endswith(b"\\"):
            stripped = stripped[:-1].rstrip()
        if stripped:
            return (number, len(stripped) - 1), stripped[-1:]
        number -= 1
        if number < 1:
            return None
        line = _byte_line(lines, number)
        if b"#" in line:
            return None  # a comment (or a string with "#"): do not guess where the code ends


def _after(lines: Sequence[str], position: _Position) -> Optional[Tuple[_Position, bytes]]:
    """The first non-blank character at or after ``position`` (over line breaks), comments skipped."""
    number, column = position
    if 1 <= number <= len(lines) and lines[number - 1].isascii():  # the common case, without encoding
        rest = lines[number - 1][column:].lstrip(_BLANKS)
        if rest and rest[0] not in "#\\":
            return (number, len(lines[number - 1]) - len(rest)), rest[0].encode()
    line = _byte_line(lines, number)[column:]
    offset = column
    while True:
        stripped = line.lstrip()
        if stripped and not stripped.startswith(b"#") and stripped not in (b"\\\n", b"\\\r\n", b"\\"):
            return (number, offset + len(line) - len(stripped)), stripped[:1]
        number += 1
        if number > len(lines):
            return None
        line, offset = _byte_line(lines, number), 0


_OPENING_WORDS = frozenset(keyword.kwlist) - {"True", "False", "None"}


def _opens_call(lines: Sequence[str], paren: _Position) -> bool:
    """Whether the "(" at ``paren`` opens a call's (or a class's) arguments: it follows a name
    that is not a keyword, a closing bracket, or a string."""
    previous = _before(lines, paren)
    if previous is None:
        return False
    (number, column), char = previous
    if number != paren[0]:
        return False  # a line break before a call's "(" is rare; one that ends a statement is not
    if char in (b")", b"]", b'"', b"'"):
        return True
    if not (char.isalnum() or char == b"_" or char >= b"\x80"):
        return False
    line = _byte_line(lines, number)[:column + 1].decode("utf-8", "replace")
    word = re.search(r"\w+$", line)
    return word is not None and word.group(0) not in _OPENING_WORDS


def _own_span(lines: Sequence[str], node: ast.AST) -> Optional[Tuple[_Position, _Position]]:
    """The span of the node's text when it differs from its ``ast`` position: with the
    parentheses around it that are its own (``(a)`` is written ``(a)``); for a generator that is
    a call's only argument, without the call's parentheses ast gives it. None when the same."""
    if not isinstance(node, ast.expr):
        return None
    generator = isinstance(node, ast.GeneratorExp)
    if not generator and _not_after_parenthesis(lines, node.lineno, node.col_offset):
        return None  # (most nodes: told before any position is made)
    start, end = (node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset)
    if generator and _text_between(lines, start, (start[0], start[1] + 1)) == "(" \
            and _opens_call(lines, start):
        after = _after(lines, (start[0], start[1] + 1))
        last = _before(lines, (end[0], end[1] - 1))
        if after is None or last is None:
            return None
        return after[0], (last[0][0], last[0][1] + 1)
    found = False
    while True:
        previous = _before(lines, start)
        if previous is None or previous[1] != b"(":
            break
        following = _after(lines, end)
        if following is None or following[1] != b")" or _opens_call(lines, previous[0]):
            break
        start, end = previous[0], (following[0][0], following[0][1] + 1)
        found = True
    return (start, end) if found else None


def _not_after_parenthesis(lines: Sequence[str], number: int, column: int) -> bool:
    """What ``_before`` tells of most positions (asked for every expression ``code`` reads),
    without its encoding: the last non-blank character before line ``number``, ``column`` is on
    its line, and it is not "(". False when that takes more to tell."""
    if 1 <= number <= len(lines) and lines[number - 1].isascii():
        stripped = lines[number - 1][:column].rstrip(_BLANKS)
        return bool(stripped) and stripped[-1] not in "(\\"
    return False


def _render(node: ast.AST, lines: Optional[Sequence[str]],
            renders: Optional[Dict[int, Tuple[ast.AST, Any]]]) -> Optional[str]:
    """The canonical rendering of names, literals, attribute chains, subscripts and calls; None
    for any other shape, or when a part has parentheses of its own (then the text as written).
    ``renders``: the source's memo of them (``_RENDER_MEMO``), None without ``lines``."""
    if type(node) is ast.Name:
        return node.id  # type: ignore[attr-defined]
    if renders is None:
        return _rendered(node, lines, None)
    known = renders.get(id(node))
    if known is None or known[0] is not node:
        known = renders[id(node)] = (node, _rendered(node, lines, renders))
    return known[1]


def _rendered(node: ast.AST, lines: Optional[Sequence[str]],
              renders: Optional[Dict[int, Tuple[ast.AST, Any]]]) -> Optional[str]:
    kind = type(node)  # (by exact type: asked for every expression the evaluator reads)
    if kind is ast.Name:
        return node.id  # type: ignore[attr-defined]
    if kind is ast.Constant:
        value = node.value
        if value is None or isinstance(value, bool):
            return str(value)  # a builtin name, spelled as written
        if lines is None or not isinstance(value, (str, bytes, int, float)):
            return None
        text = _text_between(lines, _start(node), _end(node))
        if isinstance(value, (str, bytes)):
            tokens = _string_tokens(text)
            return text if tokens is not None and len(tokens) == 1 else None  # one literal, as written
        return text
    if kind is ast.Attribute:
        base = _render_part(node, node.value, lines, renders)
        return None if base is None else f"{base}.{node.attr}"
    if kind is ast.Subscript:
        base = _render_part(node, node.value, lines, renders)
        if base is None:
            return None
        elements = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if not elements or any(isinstance(e, (ast.Slice, ast.Starred)) for e in elements):
            return None
        if lines is not None:
            previous, separator = _end(node.value), "["
            for element in elements:
                if _gap(lines, previous, _start(element)) != separator:
                    return None  # parentheses of its own (or of the index tuple)
                previous, separator = _end(element), ","
        parts = [_render(e, lines, renders) for e in elements]
        if any(p is None for p in parts):
            return None
        return f"{base}[{', '.join(parts)}]"  # type: ignore[arg-type]
    if kind is ast.Call:
        func = _render_part(node, node.func, lines, renders)
        if func is None:
            return None
        args = []
        previous, separator = _end(node.func), "("
        for start, prefix, value in _arguments(node):
            if lines is not None:
                if _gap(lines, previous, start) != separator or (prefix and _gap(lines, start, _start(value)) != prefix):
                    return None
                previous, separator = _end(value), ","
            rendered = _render(value, lines, renders)
            if rendered is None:
                return None
            args.append(f"{prefix}{rendered}")
        return f"{func}({', '.join(args)})"
    return None


def _render_part(parent: ast.expr, child: ast.expr, lines: Optional[Sequence[str]],
                 renders: Optional[Dict[int, Tuple[ast.AST, Any]]]) -> Optional[str]:
    """The leading part of an attribute, subscript or call, unless it has parentheses."""
    if lines is not None and (parent.col_offset != child.col_offset or parent.lineno != child.lineno):
        return None  # (positions compared in place: asked for every part rendered)
    return _render(child, lines, renders)


def _arguments(node: ast.Call) -> List[Tuple[_Position, str, ast.expr]]:
    """The call's arguments in source order: (start, "*" / "**" / "name=" / "", value)."""
    found: List[Tuple[_Position, str, ast.expr]] = []
    for arg in node.args:  # (``_start`` in place: asked for every call read)
        if type(arg) is ast.Starred:
            found.append(((arg.lineno, arg.col_offset), "*", arg.value))
        else:
            found.append(((arg.lineno, arg.col_offset), "", arg))
    for item in node.keywords:
        prefix = "**" if item.arg is None else f"{item.arg}="
        found.append(((item.lineno, item.col_offset), prefix, item.value))
    if node.args and node.keywords:  # each list is in source order; together they may interleave
        found.sort(key=_first)
    return found


_first = itemgetter(0)


_STRING_START = lazy(r"""([A-Za-z]*)('\'\'|"\"\"|'|")""")


def _string_tokens(text: str) -> Optional[List[Tuple[str, str, str]]]:
    """The string literals an (implicitly concatenated) string is written as: (prefix, quote,
    body) each; None when the text is not only string literals."""
    quote = text[:1]
    if quote in ("'", '"') and len(text) > 1 and text[-1] == quote and text.count(quote) == 2 and "\\" not in text:
        return [("", quote, text[1:-1])]  # one plain literal, as the scan below finds it (most strings are)
    tokens: List[Tuple[str, str, str]] = []
    index, size = 0, len(text)
    while True:
        while index < size and (text[index].isspace() or text[index] == "\\"):
            index += 1
        if index < size and text[index] == "#":
            index = text.find("\n", index)
            if index < 0:
                break
            continue
        if index >= size:
            break
        match = _STRING_START.match(text, index)
        if match is None:
            return None
        prefix, quote = match.groups()
        index = body = match.end()
        while True:  # to the closing quote, over escaped characters
            closing = text.find(quote, index)
            if closing < 0:
                return None
            escape = text.find("\\", index, closing)
            if escape < 0:
                index = closing
                break
            index = escape + 2
        tokens.append((prefix, quote, text[body:index]))
        index += len(quote)
    return tokens or None


def _is_one_literal(node: ast.expr) -> bool:
    """Whether a string is one literal not several written next to each other
    (implicitly concatenated literals are not one key template). Without the source: assumed one."""
    lines = current_source_lines()
    if lines is None or getattr(node, "end_lineno", None) is None:
        return True
    tokens = _string_tokens(_text_between(lines, _start(node), _end(node)))
    return tokens is not None and len(tokens) == 1


def _fstring_template(node: ast.JoinedStr) -> str:
    """The f-string's text as written with each replacement field as ``{}`` (the
    literal text as written: escapes and doubled braces kept)."""
    lines = current_source_lines()
    tokens = None
    if lines is not None and getattr(node, "end_lineno", None) is not None:
        tokens = _string_tokens(_text_between(lines, _start(node), _end(node)))
    if tokens is None or len(tokens) != 1:
        return "".join(p.value.replace("{", "{{").replace("}", "}}")
                       if isinstance(p, ast.Constant) and isinstance(p.value, str) else "{}"
                       for p in node.values)
    body, parts, index = tokens[0][2], [], 0
    while index < len(body):
        char = body[index]
        if char in "{}" and body.startswith(char * 2, index):
            parts.append(char * 2)
            index += 2
        elif char == "{":
            index = _field_end(body, index)
            parts.append("{}")
        else:
            parts.append(char)
            index += 1
    return "".join(parts)


def _field_end(body: str, index: int) -> int:
    """The index after the replacement field that starts at ``body[index] == "{"``."""
    depth, quote = 0, ""
    while index < len(body):
        char = body[index]
        if quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char in "{[(":
            depth += 1
        elif char in "}])":
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    return index


def dotted_name(node: ast.AST) -> str:
    """``a.b.c`` for a Name/Attribute chain, else ""."""
    kind = type(node)  # (the commonest shapes first: asked of every callee and receiver)
    if kind is ast.Name:
        return node.id  # type: ignore[attr-defined]
    if kind is ast.Attribute and type(node.value) is ast.Name:  # type: ignore[attr-defined]
        return f"{node.value.id}.{node.attr}"  # type: ignore[attr-defined]
    parts: List[str] = []
    while type(node) is ast.Attribute:
        parts.append(node.attr)  # type: ignore[attr-defined]
        node = node.value  # type: ignore[attr-defined]
    if type(node) is ast.Name:
        parts.append(node.id)
        return ".".join(reversed(parts))
    if _is_name_constant(node):  # ``None``/``True``/``False`` are read like names
        parts.append(str(node.value))  # type: ignore[attr-defined]
        return ".".join(reversed(parts))
    return ""


def last_name(node: ast.AST) -> str:
    kind = type(node)
    if kind is ast.Attribute:
        return node.attr  # type: ignore[attr-defined]
    if kind is ast.Name:
        return node.id  # type: ignore[attr-defined]
    if _is_name_constant(node):
        return str(node.value)  # type: ignore[attr-defined]
    return ""


def _is_name_constant(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, bool))


def constant(text: str) -> Value:
    return Value(frozenset(), (), text)


def fresh(text: str) -> Value:
    """A value the analysis cannot see through: its own origin."""
    return Value(frozenset({text}), (), text)


def merge_arguments(values: Sequence[Value], text: str) -> Optional[Value]:
    """The key carried by a call's arguments: union of origins, steps of the first carrier
    (of the first that came over the network, if any: ``Status(ok, job, payload["url"])`` is a
    remote result)."""
    carriers = [v for v in values if v.origins]
    if not carriers:
        return None
    if len(carriers) == 1:  # (most calls: nothing to unite, no carrier to choose)
        return Value(frozenset(carriers[0].origins), carriers[0].steps, text)
    origins = frozenset().union(*(v.origins for v in carriers))
    first = next((v for v in carriers if is_remote(v.steps)), carriers[0])
    return Value(origins, first.steps, text)


def is_remote(steps: Sequence[Step]) -> bool:
    return bool(steps) and any(s.kind in (FETCH, REMOTE) for s in steps)  # (most values have no steps)


def _short(label: str) -> str:
    return label if len(label) <= _MAX_LABEL else label[: _MAX_LABEL - 3] + "..."


def _string_literal(node: ast.AST) -> Optional[str]:
    """The value of one string literal (not of several written next to each other)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)) and _is_one_literal(node):
        value = node.value
        return value.decode("latin-1") if isinstance(value, bytes) else value
    return None


_NO_NAMES: frozenset = frozenset()


class Evaluator:
    """Evaluates expressions against an environment ``name -> Value``.

    ``records`` maps a variable holding a record fetched by key to the values its key fields
    were looked up by, so ``user.email`` after ``user = User.objects.get(email=e)`` is ``e``.
    """

    def __init__(self, values: Dict[str, Value], record_fields: Dict[str, Dict[str, Value]],
                 normalizers: Iterable[str] = (),
                 call_hook: Optional[Callable[[ast.Call, str], Optional[Value]]] = None) -> None:
        self.values = values
        self.record_fields = record_fields
        # (the walker makes an evaluator for every value it reads; most projects configure none)
        self.normalizers = frozenset(n.rsplit(".", 1)[-1] for n in normalizers) if normalizers else _NO_NAMES
        # what a call returns when the callee's summary is known
        self.call_hook = call_hook

    def eval(self, node: ast.expr) -> Value:
        handler = _HANDLERS.get(type(node))
        if handler is None:
            return fresh(code(node))
        return handler(self, node)

    # -- names, attributes, subscripts -------------------------------------------------------

    def _name(self, node: ast.Name) -> Value:
        known = self.values.get(node.id)
        if known is None:
            if node.id in transforms.BUILTIN_NAMES or _is_constant_name(node.id):
                return constant(node.id)
            return fresh(node.id)
        return Value(known.origins, known.steps, node.id, known.result_of)

    def _attribute(self, node: ast.Attribute) -> Value:
        text = code(node)
        if isinstance(node.value, ast.Name):
            fields = self.record_fields.get(node.value.id)
            if fields is not None and node.attr in fields:
                looked_up = fields[node.attr]
                return Value(looked_up.origins, looked_up.steps, text)
        base = self.eval(node.value)
        if base.result_of:
            return _rederive(base, text, f"{base.result_of}.{node.attr}")
        if isinstance(node.value, ast.Name) and node.value.id in self.values and base.origins \
                and not base.steps:
            # a field of what the name is bound to now, not of the name: ``row.email`` in two
            # loops over two collections are two values
            return Value(frozenset(f"{o}.{node.attr}" for o in base.origins), (), text)
        return fresh(text)

    def _subscript(self, node: ast.Subscript) -> Value:
        text = code(node)
        base = self.eval(node.value)
        if base.result_of:
            index = text[len(code(node.value)):]
            return _rederive(base, text, f"{base.result_of}{index}")
        if base.origins and _index_count(node) == 1:
            part = _part_of(base, node, text[len(code(node.value)):])
            if part is not None:
                return part
        return fresh(text)

    # -- calls ---------------------------------------------------------------------------------

    def _call(self, node: ast.Call) -> Value:
        text = code(node)
        if self.call_hook is not None:
            summarized = self.call_hook(node, text)
            if summarized is not None:
                return summarized
        func = node.func
        if isinstance(func, ast.Attribute):
            return self._method_call(node, func, text)
        name = dotted_name(func)
        return self._function_call(node, name, text) if name else fresh(text)

    def _args(self, node: ast.Call) -> List[Value]:
        return [self.eval(value) for _, value in _unspread_args(node)]

    def _method_call(self, node: ast.Call, func: ast.Attribute, text: str) -> Value:
        qualified = dotted_name(func)
        if qualified in transforms.QUALIFIED_FUNCTIONS or qualified in transforms.FETCH_FUNCTIONS:
            return self._function_call(node, qualified, text)
        method = func.attr
        receiver = self.eval(func.value)
        if receiver.origins and not (method == "replace" and any(k.arg is not None for k in node.keywords)):
            # (``dt.replace(tzinfo=None)`` is a datetime's, not a string's)
            step = self._string_method_step(node, method)
            if step is None and method in transforms.SPLIT_METHODS:
                args = ", ".join(code(value) for value in _argument_values(node))
                step = Step(PART, _short(f".{method}({args})"), node)
            if step is not None:
                return Value(receiver.origins, receiver.steps + (step,), text)
            if method in transforms.NEUTRAL_METHODS or _is_plain_encode(node, method):
                return Value(receiver.origins, receiver.steps, text)
        if receiver.result_of:
            return _rederive(receiver, text, f"{receiver.result_of}.{method}()")
        if method == "format" and _string_literal(func.value) is not None:
            carried = merge_arguments(self._args(node), text)
            return carried.then(Step(FORMAT, "str.format()", node), text) if carried else constant(text)
        if method in transforms.BASE_CONVERSIONS and _base_conversion(node):
            given = self.eval(node.args[0])
            return Value(given.origins, given.steps, text)
        return self._function_call(node, qualified or method, text, receiver_is_object=True)

    def _string_method_step(self, node: ast.Call, method: str) -> Optional[Step]:
        kind = transforms.STRING_METHODS.get(method)
        if kind is None and method != "encode":
            return None  # (the arguments' text is only for the step's label)
        args = [code(value) for value in _argument_values(node)]
        label = _short(f".{method}({', '.join(args)})")
        if method == "encode" and any("idna" in a.lower() for a in args):
            return Step(IDNA, label, node)
        if kind is None:
            return None
        if method in ("strip", "rstrip", "lstrip") and any("/" in a for a in args):
            return Step(SLASH, label, node)
        return Step(kind, label, node)

    def _function_call(self, node: ast.Call, name: str, text: str,
                       receiver_is_object: bool = False) -> Value:
        short_name = name.rsplit(".", 1)[-1]
        if receiver_is_object:
            args = [self.eval(value) for keyword_name, value in _unspread_args(node) if _carries_key(keyword_name)]
        elif short_name in transforms.PART_TUPLE_FUNCTIONS:
            args = [self._parts(value) for _, value in _unspread_args(node)]
        else:
            args = self._args(node)
        if not receiver_is_object and (name in transforms.CONVERSIONS or short_name in transforms.CONVERSIONS):
            return Value(args[0].origins, args[0].steps, text) if args else fresh(text)
        carried = merge_arguments(args, text)
        if carried is None:
            return fresh(text)
        kind = self._transform_kind(name, short_name)
        label = f"{_short(name)}()"
        if kind == FETCH:
            return carried.then(Step(FETCH, label, node), text, result_of=_short(text))
        if kind is not None:
            return carried.then(Step(kind, label, node), text)
        return carried.then(Step(CALL, label, node), text, result_of=_short(text))

    def _parts(self, node: ast.expr) -> Value:
        """The key carried by the parts a URL is rebuilt from: every part's origins, and the
        transformations applied to the parts (a field of the split URL is a part of it, not a
        re-derived key)."""
        if not isinstance(node, (ast.Tuple, ast.List)):
            return self.eval(node)
        values = [self.eval(e.value if isinstance(e, ast.Starred) else e) for e in node.elts]
        carriers = [v for v in values if v.origins]
        if not carriers:
            return constant(code(node))
        steps: List[Step] = []
        for value in carriers:
            steps += [s for s in value.steps if s.kind not in (CALL, FETCH, REDERIVED) and s not in steps]
        return Value(frozenset().union(*(v.origins for v in carriers)), tuple(steps), code(node))

    def _transform_kind(self, name: str, short_name: str) -> Optional[str]:
        if name in transforms.QUALIFIED_FUNCTIONS:
            return transforms.QUALIFIED_FUNCTIONS[name]
        if name in transforms.FETCH_FUNCTIONS or short_name in transforms.FETCH_FUNCTIONS:
            return FETCH
        if short_name in self.normalizers or transforms.NORMALIZER_NAME.search(short_name):
            return NORMALIZER
        return transforms.FUNCTIONS.get(short_name)

    # -- strings and operators -----------------------------------------------------------------

    def _fstring(self, node: ast.JoinedStr) -> Value:
        if not _is_one_literal(node):
            return self._literal(node)  # ``"a" f"{b}"``: implicitly concatenated literals are not one key template
        text = code(node)
        parts = [p for p in node.values if isinstance(p, ast.FormattedValue)]
        literal = [p for p in node.values if isinstance(p, ast.Constant) and p.value]
        carried = merge_arguments([self.eval(p.value) for p in parts], text)
        if carried is None:
            return constant(text)
        if len(parts) == 1 and not literal and parts[0].format_spec is None and parts[0].conversion == -1:
            return Value(carried.origins, carried.steps, text)
        # the template is the transformation: f"https://{h}/" and f"https://{h}" differ
        return carried.then(Step(FORMAT, f'f"{_fstring_template(node)}"', node), text)

    def _binary(self, node: ast.BinOp) -> Value:
        text = code(node)
        if not isinstance(node.op, (ast.Add, ast.Mod)) or not _builds_text(node):
            return fresh(text)  # arithmetic: another value, not a rebuilt key
        carried = merge_arguments([self.eval(node.left), self.eval(node.right)], text)
        if carried is None:
            return constant(text)
        left, right = _string_literal(node.left), _string_literal(node.right)
        if isinstance(node.op, ast.Add):
            label = f"{left!r} + ..." if left is not None else (f"... + {right!r}" if right is not None else "concatenation")
        else:
            label = f"{left!r} % ..." if left is not None else "%-formatting"
        return carried.then(Step(FORMAT, label, node), text)

    def _boolean(self, node: ast.BoolOp) -> Value:
        # ``a or b or c`` is read as ``(a or b) or c``: the first operand with origins
        for operand in node.values[:-1]:
            value = self.eval(operand)
            if value.origins:
                return value
        return self.eval(node.values[-1])

    def _if_exp(self, node: ast.IfExp) -> Value:
        """Either branch: both origins, and the steps of the branch that transforms more."""
        body, orelse = self.eval(node.body), self.eval(node.orelse)
        if not body.origins or not orelse.origins:
            return body if body.origins else orelse
        richer = body if len(body.steps) >= len(orelse.steps) else orelse
        return Value(body.origins | orelse.origins, richer.steps, code(node), richer.result_of)

    def _await(self, node: ast.Await) -> Value:
        return self.eval(node.value)

    def _literal(self, node: ast.expr) -> Value:
        return constant(code(node))

    def _constant(self, node: ast.Constant) -> Value:
        value = node.value
        if value is None or isinstance(value, bool):
            return constant(str(value))  # a builtin name (``True``), spelled as written
        if isinstance(value, complex):
            return fresh(code(node))  # an imaginary number is no key
        return constant(code(node))


def _unspread_args(node: ast.Call) -> List[Tuple[Optional[str], ast.expr]]:
    """The arguments not spread with ``*``/``**``, in source order: (keyword or None, value)."""
    return [(prefix[:-1] if prefix else None, value)
            for _, prefix, value in _arguments(node) if prefix not in ("*", "**")]


def _argument_values(node: ast.Call) -> List[ast.expr]:
    """Every argument's value in source order, ``*``/``**`` ones unwrapped."""
    return [value for _, _, value in _arguments(node)]


def _index_count(node: ast.Subscript) -> int:
    """How many indices ``node[...]`` has: ``d[a, b]`` has two, ``d[(a, b)]`` one."""
    index = node.slice
    if not isinstance(index, ast.Tuple) or not index.elts:
        return 1
    lines = current_source_lines()
    if lines is not None and _enclosed(_text_between(lines, _start(index), _end(index))):
        return 1
    return len(index.elts)


def _enclosed(text: str) -> bool:
    """Whether ``text`` is in one pair of parentheses: ``(a, b)``, not ``(a), (b)``."""
    if not text.startswith("(") or not text.endswith(")"):
        return False
    depth, quote, index = 0, "", 0
    while index < len(text):
        char = text[index]
        if quote:
            if char == "\\":
                index += 1
            elif text.startswith(quote, index):
                index += len(quote) - 1
                quote = ""
        elif char == "#":
            newline = text.find("\n", index)
            index = len(text) if newline < 0 else newline
            continue
        elif char in "'\"":
            quote = char * 3 if text.startswith(char * 3, index) else char
            index += len(quote) - 1
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return index == len(text) - 1
        index += 1
    return False


def _carries_key(keyword_name: Optional[str]) -> bool:
    """Whether an argument of an object's method passes the key the result is derived from: a
    positional argument, or a keyword named for a natural key (``client.get(url=u)``). A keyword
    naming a relation or an option (``page.create_alias(parent=p)``, ``obj.copy(owner=u)``)
    passes something the new object refers to, not a key it transforms."""
    return keyword_name is None or natural_key_kind(keyword_name) is not None


def _is_constant_name(name: str) -> bool:
    """``SITE_ID``, ``EAT``: module constants are settings, not the key of a record."""
    return len(name) > 1 and name.isupper()


def _is_string(node: ast.expr) -> bool:
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)))


def _builds_text(node: ast.BinOp) -> bool:
    """``"https://" + host`` or ``"%s:%s" % (a, b)``: one side is a string literal."""
    return _is_string(node.left) or (isinstance(node.op, ast.Add) and _is_string(node.right)) \
        or (isinstance(node.left, ast.BinOp) and isinstance(node.left.op, ast.Add)
            and _builds_text(node.left))


def unpacked_element(base: Value, text: str, index: int) -> Value:
    """The ``index``-th value unpacked from ``base`` (``name, hash = found``), written ``text``:
    a field of a call's result is re-derived from it; an element of anything else is a value of
    its own, never the name it is unpacked into (a parameter rebound so is no longer the
    caller's argument)."""
    if base.result_of:
        return _rederive(base, text, f"{base.result_of}[{index}]")
    return fresh(text)


def _rederive(base: Value, text: str, label: str) -> Value:
    """A field read from a call's result: the call step becomes a re-derivation (a remote one
    when the result, or what it was made from, came over the network)."""
    steps = base.steps
    while steps and steps[-1].kind in (CALL, FETCH, REDERIVED, REMOTE):
        steps = steps[:-1]
    kind = REMOTE if is_remote(base.steps) else REDERIVED
    return Value(base.origins, steps + (Step(kind, _short(label)),), text, _short(label))


def _part_of(base: Value, node: ast.Subscript, index: str) -> Optional[Value]:
    """``u.split("?")[0]`` and ``u[:-1]`` keep part of the key ``u``; an element of anything
    else (``row[0]``, ``request.GET["u"]``) is a value of its own."""
    element = node.slice.elts[0] if isinstance(node.slice, ast.Tuple) and len(node.slice.elts) == 1 else node.slice
    last = base.steps[-1] if base.steps else None
    if last is not None and last.kind == PART and not isinstance(element, ast.Slice) and last.label.endswith(")") \
            and last.label.split("(", 1)[0].lstrip(".") in transforms.SPLIT_METHODS:
        step = Step(PART, _short(last.label + index), last.node)
        return Value(base.origins, base.steps[:-1] + (step,), code(node))
    if isinstance(element, ast.Slice):
        return base.then(Step(PART, _short(index), node), code(node))
    return None


def _is_plain_encode(node: ast.Call, method: str) -> bool:
    return method == "encode" and not any("idna" in code(value).lower() for value in _argument_values(node))


_HANDLERS: Dict[type, Callable[[Evaluator, Any], Value]] = {
    ast.Name: Evaluator._name,
    ast.Attribute: Evaluator._attribute,
    ast.Subscript: Evaluator._subscript,
    ast.Call: Evaluator._call,
    ast.JoinedStr: Evaluator._fstring,
    ast.BinOp: Evaluator._binary,
    ast.BoolOp: Evaluator._boolean,
    ast.IfExp: Evaluator._if_exp,
    ast.Await: Evaluator._await,
    ast.Constant: Evaluator._constant,
}

NAME_PATTERN = lazy(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _base_conversion(node: ast.Call) -> bool:
    """``super().to_python(value)``: one value, converted by the base class of a field class."""
    owner = node.func.value  # type: ignore[attr-defined]
    return is_super_call(owner) and len(node.args) == 1 and not node.keywords \
        and not isinstance(node.args[0], ast.Starred)
