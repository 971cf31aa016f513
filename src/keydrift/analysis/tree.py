"""Reading CPython's syntax trees: traversal, literals, call arguments and source text.

Every reader of code works on ``ast`` nodes (libcst is kept for rewriting only). The helpers here
are the few shapes that come up everywhere, so the readers stay short and agree with each other.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections import defaultdict
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Callable, DefaultDict, Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple, TypeVar, Union

FunctionNode = Union[ast.FunctionDef, ast.AsyncFunctionDef]
FUNCTION_TYPES = (ast.FunctionDef, ast.AsyncFunctionDef)
LOOP_TYPES = (ast.For, ast.AsyncFor)
WITH_TYPES = (ast.With, ast.AsyncWith)

# Operator and context nodes (``Load``, ``Add``, ``Eq``) are shared singletons with no children.
_LEAF_TYPES = (ast.expr_context, ast.operator, ast.boolop, ast.cmpop, ast.unaryop)

# The lines of the module being read, for the source text of a node (see ``segment``).
# With them, what is derived from those lines and the module's nodes, kept while they are current
# (``per_node``): one variable for both, as the evaluator asks for them for most nodes it reads.
_SOURCE: ContextVar[Optional["_Source"]] = ContextVar("keydrift_source", default=None)


class _Source(NamedTuple):
    lines: Sequence[str]
    memos: DefaultDict[str, Dict[int, Tuple[ast.AST, Any]]]  # a memo made when first asked for


# Fields that never hold a child worth visiting: operator and context leaves, and names,
# numbers and flags (``Name.id``, ``Attribute.attr``, ``ImportFrom.level``). Skipping them
# without a look is most of what makes this faster than ``ast.iter_child_nodes``, and every
# reader's traversal goes through here.
_SKIPPED_FIELDS = frozenset({"ctx", "op", "ops", "id", "attr", "arg", "module", "level", "kind", "type_comment",
                             "is_async", "conversion", "asname", "simple", "tag"})
_CHILD_FIELDS: Dict[type, Tuple[str, ...]] = {}


def child_fields(kind: type) -> Tuple[str, ...]:
    """The fields of a node type that may hold child nodes (see ``child_nodes``), for a reader
    that inlines the traversal in its hot loop."""
    fields = _CHILD_FIELDS.get(kind)
    if fields is None:
        skipped = _SKIPPED_FIELDS
        if kind is ast.Constant:
            skipped = skipped | {"value"}  # a literal's value is never a node
        if kind.__name__ != "TypeAlias":  # ``type X = ...`` (3.12): its name is a Name node
            skipped = skipped | {"name"}
        fields = _CHILD_FIELDS[kind] = tuple(f for f in kind._fields if f not in skipped)  # type: ignore[attr-defined]
    return fields


def child_nodes(node: ast.AST) -> List[ast.AST]:
    """The syntactic children of a node, in field order (source order), without operators
    (``ast.iter_child_nodes`` without its generators and without looking at scalar fields).
    Operator and context leaves (``_LEAF_TYPES``) live only in skipped fields (``ctx``, ``op``,
    ``ops``), so no child needs that test."""
    kind = type(node)
    read = _CHILD_READERS.get(kind)
    if read is None:
        return _children_in_fields(node, kind)
    if read is _no_children:  # names and literals: most nodes a traversal meets
        return []
    try:
        return read(node)
    except AttributeError:  # a node made by hand without all its fields (a parsed one has them)
        return _children_in_fields(node, kind)


def _children_in_fields(node: ast.AST, kind: type) -> List[ast.AST]:
    """``child_nodes`` read field by field, for any node type."""
    fields = _CHILD_FIELDS.get(kind)
    if fields is None:
        fields = child_fields(kind)
    if not fields:
        return []
    children: List[ast.AST] = []
    for name in fields:
        value = getattr(node, name, None)
        if value is None:
            continue
        if type(value) is list:
            if kind in _LISTS_WITH_OTHER_ITEMS:
                # a dict's keys (None for ``**spread``), a parameter's missing keyword default,
                # the names of ``global``/``nonlocal`` and of a class pattern's keywords
                children.extend(item for item in value if isinstance(item, ast.AST))
            else:
                children.extend(value)  # lists of nodes only
        elif isinstance(value, ast.AST):
            children.append(value)
    return children


def _no_children(node: ast.AST) -> List[ast.AST]:
    return []


def _value_child(node: Any) -> List[ast.AST]:
    return [node.value]


def _optional_value_child(node: Any) -> List[ast.AST]:
    return [] if node.value is None else [node.value]


# ``child_nodes`` of the node types met most, each read by its fields as ``ast`` declares them
# (the same in every Python version keydrift runs on) instead of by a loop over the fields: an
# optional field (``?``) is left out when None, a list field (``*``) holds nodes only.
_CHILD_READERS: Dict[type, Callable[[Any], List[ast.AST]]] = {
    ast.Name: _no_children, ast.Constant: _no_children, ast.Pass: _no_children, ast.Break: _no_children,
    ast.Continue: _no_children, ast.alias: _no_children,
    ast.Attribute: _value_child, ast.keyword: _value_child, ast.Starred: _value_child, ast.Await: _value_child,
    ast.Expr: _value_child, ast.Return: _optional_value_child,
    ast.Call: lambda n: [n.func, *n.args, *n.keywords],
    ast.Subscript: lambda n: [n.value, n.slice],
    ast.Compare: lambda n: [n.left, *n.comparators],
    ast.BinOp: lambda n: [n.left, n.right],
    ast.UnaryOp: lambda n: [n.operand],
    ast.BoolOp: lambda n: [*n.values],
    ast.JoinedStr: lambda n: [*n.values],
    ast.FormattedValue: lambda n: [n.value] if n.format_spec is None else [n.value, n.format_spec],
    ast.Tuple: lambda n: [*n.elts], ast.List: lambda n: [*n.elts], ast.Set: lambda n: [*n.elts],
    ast.IfExp: lambda n: [n.test, n.body, n.orelse],
    ast.comprehension: lambda n: [n.target, n.iter, *n.ifs],
    ast.arg: lambda n: [] if n.annotation is None else [n.annotation],
    ast.Assign: lambda n: [*n.targets, n.value],
    ast.Assert: lambda n: [n.test] if n.msg is None else [n.test, n.msg],
    ast.Import: lambda n: [*n.names], ast.ImportFrom: lambda n: [*n.names],
    ast.ListComp: lambda n: [n.elt, *n.generators], ast.SetComp: lambda n: [n.elt, *n.generators],
    ast.GeneratorExp: lambda n: [n.elt, *n.generators],
    ast.DictComp: lambda n: [n.key, n.value, *n.generators],
    ast.Yield: _optional_value_child, ast.YieldFrom: _value_child,
    ast.NamedExpr: lambda n: [n.target, n.value],
    ast.Lambda: lambda n: [n.args, n.body],
    ast.If: lambda n: [n.test, *n.body, *n.orelse],
    ast.Raise: lambda n: [child for child in (n.exc, n.cause) if child is not None],
    ast.Slice: lambda n: [child for child in (n.lower, n.upper, n.step) if child is not None],
}


# Node types one of whose list fields may hold something other than a node.
_LISTS_WITH_OTHER_ITEMS = frozenset(t for t in (ast.Dict, ast.arguments, ast.Global, ast.Nonlocal,
                                                getattr(ast, "MatchClass", None)) if t is not None)

_MAPPING_PATTERN = tuple(t for t in (getattr(ast, "MatchMapping", None),) if t is not None)  # 3.10+


def _if_expression_order(node: ast.IfExp) -> List[ast.AST]:
    return [node.body, node.test, node.orelse]


def _dict_order(node: ast.Dict) -> List[ast.AST]:
    ordered: List[ast.AST] = []
    for key, value in zip(node.keys, node.values):
        ordered.extend((value,) if key is None else (key, value))
    return ordered


def _positional_order(node: ast.AST) -> List[ast.AST]:
    """A call's arguments or a function's parameters and defaults, by position (the function
    of a call first)."""
    children = child_nodes(node)
    if isinstance(node, ast.Call) and not (node.keywords and node.args):
        return children
    head = children[:1] if isinstance(node, ast.Call) else []
    rest = children[len(head):]
    return head + sorted(rest, key=lambda c: (c.lineno, c.col_offset))  # type: ignore[attr-defined]


def _mapping_pattern_order(node: ast.AST) -> List[ast.AST]:
    return [c for pair in zip(node.keys, node.patterns) for c in pair]  # type: ignore[attr-defined]


# The node types whose source order differs from their fields' order (``source_order_children``).
_SOURCE_ORDER: Dict[type, Callable[[Any], List[ast.AST]]] = {
    ast.IfExp: _if_expression_order, ast.Dict: _dict_order, ast.Call: _positional_order,
    ast.arguments: _positional_order, **{kind: _mapping_pattern_order for kind in _MAPPING_PATTERN}}


def source_order_children(node: ast.AST) -> List[ast.AST]:
    """``child_nodes`` in the order the code is written where ``ast``'s fields differ from it:
    ``body if test else orelse`` (fields: test, body, orelse), a dict's keys and values
    alternating, a call's named arguments among its spread ones (``f(k=1, *rest)``), parameter
    defaults after their parameters and a mapping pattern's keys before their patterns. Readers
    that follow values as they are evaluated left to right need this order."""
    reorder = _SOURCE_ORDER.get(type(node))
    return child_nodes(node) if reorder is None else reorder(node)


def source_order_walk(node: ast.AST) -> Iterator[ast.AST]:
    """Every node under ``node`` (pre-order, in ``source_order_children`` order), iteratively."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(source_order_children(current)))


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """Every node under ``node`` (pre-order), iteratively: deep trees cannot overflow the stack."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(child_nodes(current)))


def string_literal(node: Optional[ast.AST]) -> Optional[str]:
    """The value of a plain (or implicitly concatenated) string literal, else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def is_true(node: Optional[ast.AST]) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def is_super_call(node: ast.AST) -> bool:
    """``super()`` (or ``super(Cls, self)``)."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"


def name_assignments(body: Sequence[ast.stmt]) -> Iterator[Tuple[str, ast.expr]]:
    """(name, value) of each ``name = value`` of a body (one plain name as the target)."""
    for statement in body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Name):
            yield statement.targets[0].id, statement.value


def unstarred(node: ast.expr) -> ast.expr:
    """An element of a display or a call argument with its ``*`` removed (``*rest`` -> ``rest``)."""
    return node.value if isinstance(node, ast.Starred) else node


def elements(node: Optional[ast.AST]) -> List[ast.expr]:
    """The elements of a list, tuple or set display, each ``*spread`` one as its value; none for
    anything else."""
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [unstarred(e) for e in node.elts]
    return []


def is_elif(node: ast.If) -> bool:
    """Whether ``node.orelse`` is an ``elif`` branch, not an ``else:`` block holding an ``if``:
    ``ast`` writes both as ``orelse == [If]``; an ``elif`` starts at the column of its ``if``,
    an ``if`` inside ``else:`` is indented deeper."""
    orelse = node.orelse
    return len(orelse) == 1 and isinstance(orelse[0], ast.If) and orelse[0].col_offset == node.col_offset


# -- call arguments ---------------------------------------------------------------------------

def unspread_positional_args(call: ast.Call) -> List[ast.expr]:
    """Every positional argument not spread with ``*``, those after a ``*args`` included (where
    a reader takes the written arguments as they are, not their positions)."""
    return [a for a in call.args if not isinstance(a, ast.Starred)]


def positional_args(call: ast.Call) -> List[ast.expr]:
    """The positional arguments up to the first ``*args`` (after it, positions are unknown)."""
    values: List[ast.expr] = []
    for arg in call.args:
        if isinstance(arg, ast.Starred):
            break
        values.append(arg)
    return values




def keyword_arg(call: ast.Call, name: str) -> Optional[ast.expr]:
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    return None




def arguments_in_order(call: ast.Call) -> List[Union[ast.expr, ast.keyword]]:
    """The call's arguments as written, left to right: positional ones, ``*spread`` ones
    (``ast.Starred``) and named ones (``ast.keyword``, ``**spread`` with ``arg`` None). ``ast``
    keeps named arguments apart, yet ``f(k=1, *rest)`` is legal."""
    if not call.keywords:
        return list(call.args)
    return sorted([*call.args, *call.keywords], key=lambda a: (a.lineno, a.col_offset))


def all_argument_values(call: ast.Call) -> List[ast.expr]:
    """Every argument expression in source order (spread ones unwrapped)."""
    values = [a.value if isinstance(a, ast.Starred) else a for a in call.args]
    values += [k.value for k in call.keywords]
    return sorted(values, key=lambda v: (v.lineno, v.col_offset))


# -- functions --------------------------------------------------------------------------------

def parameters(function: Union[FunctionNode, ast.Lambda]) -> List[ast.arg]:
    """The named parameters in order: positional-only, positional, keyword-only."""
    args = function.args
    return [*args.posonlyargs, *args.args, *args.kwonlyargs]


def parameter_names(function: Union[FunctionNode, ast.Lambda]) -> Tuple[str, ...]:
    return tuple(p.arg for p in parameters(function))


# -- source text ------------------------------------------------------------------------------

@contextmanager
def source_lines(lines: Sequence[str]) -> Iterator[None]:
    """Make the module's lines (as ``str.splitlines(keepends=True)`` gives them, or without line
    ends) the source ``segment`` reads while the module is analyzed; nests per module."""
    token = _SOURCE.set(_Source(lines, defaultdict(dict)))
    try:
        yield
    finally:
        _SOURCE.reset(token)


def current_source_lines() -> Optional[Sequence[str]]:
    """The lines ``source_lines`` made current (None outside it)."""
    source = _SOURCE.get()
    return None if source is None else source.lines


def node_memo(name: str) -> Optional[Dict[int, Tuple[ast.AST, Any]]]:
    """A cache named ``name`` of what is derived from the current lines and the nodes parsed
    from them (by the node's id, the node kept beside its answer so the id is not reused while
    the cache lives), thrown away with them when ``source_lines`` ends; None outside it."""
    source = _SOURCE.get()
    return None if source is None else source.memos[name]


def lines_and_memo(name: str) -> Tuple[Optional[Sequence[str]], Optional[Dict[int, Tuple[ast.AST, Any]]]]:
    """``current_source_lines()`` and ``node_memo(name)`` at once (a reader of source text asks
    for both for every node it reads)."""
    source = _SOURCE.get()
    return (None, None) if source is None else (source.lines, source.memos[name])


_Derived = TypeVar("_Derived")


def per_node(name: str, node: ast.AST, make: Callable[[ast.AST], _Derived]) -> _Derived:
    """``make(node)``, made once per node while the current lines last (``node_memo``
    ``name``, by the node's id, the node kept beside its answer so the id is not reused while
    the memo lives); made every time outside ``source_lines``. What ``make`` raises is raised,
    and nothing is kept."""
    memo = node_memo(name)
    if memo is None:
        return make(node)
    known = memo.get(id(node))
    if known is None or known[0] is not node:
        known = memo[id(node)] = (node, make(node))
    return known[1]


def segment(node: ast.AST) -> Optional[str]:
    """The node's source text as written, or None outside ``source_lines`` or for a node
    without positions. Columns in ``ast`` are UTF-8 byte offsets, hence the encoding."""
    lines = current_source_lines()
    start, end = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
    if lines is None or start is None or end is None or end > len(lines):
        return None
    first = lines[start - 1].encode("utf-8")
    if start == end:
        return first[node.col_offset:node.end_col_offset].decode("utf-8", "replace")  # type: ignore[attr-defined]
    parts = [first[node.col_offset:].decode("utf-8", "replace")]  # type: ignore[attr-defined]
    parts += [lines[i] for i in range(start, end - 1)]
    parts.append(lines[end - 1].encode("utf-8")[:node.end_col_offset].decode("utf-8", "replace"))  # type: ignore[attr-defined]
    return "".join(parts)


def concatenated_literals(node: ast.AST) -> bool:
    """Whether a string node is written as several adjacent literals (``"a" "b"``,
    ``"https://" f"{host}"``), which ``ast`` folds into one node although no single literal
    of them is the whole value (such a string is not one key template). False when that cannot
    be told: no source (see ``source_lines``), or text that is not only string literals."""
    text = segment(node)
    if text is None:
        return False
    if text.count('"') + text.count("'") <= 2:
        return False  # a literal has a quote at each end: two quotes make one literal at the most
    start = getattr(tokenize, "FSTRING_START", None)  # 3.12+: an f-string is a token sequence
    end = getattr(tokenize, "FSTRING_END", None)
    depth = literals = 0
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(f"({text})").readline))
    except (tokenize.TokenError, SyntaxError):
        return False
    closing = max((i for i, t in enumerate(tokens) if t.type == tokenize.OP and t.string == ")"), default=0)
    for token in tokens[1:closing]:  # inside the parentheses added around the text
        if start is not None and token.type == start:
            if depth == 0:
                literals += 1
            depth += 1
        elif end is not None and token.type == end:
            depth -= 1
        elif depth > 0:
            continue
        elif token.type == tokenize.STRING:
            literals += 1
        elif token.type not in (tokenize.NL, tokenize.COMMENT):
            return False
    return literals > 1


def char_column(line: str, byte_offset: int) -> int:
    """The character column of a UTF-8 byte offset in ``line`` (what editors and flake8 show)."""
    if line.isascii():
        return byte_offset
    return len(line.encode("utf-8")[:byte_offset].decode("utf-8", "replace"))
