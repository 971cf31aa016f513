"""The chain machinery every database layer shares (the core of ``keydrift.analysis.layers``).

A call chain (``Model.objects.filter(...).exists()``, ``session.query(M).filter_by(...)``,
``cursor.execute(sql, params)``) is read once, from its outermost call: ``unchain`` splits it
into its base and links, a ``Chain`` carries them to the layers the registry
(``layers/registry.py``) asks in order, and a ``ChainReader`` reports the accesses a layer finds
to the ``Context`` the key-flow walker supplies. Here too: the argument helpers every layer reads
calls with, and the column expressions and column mappings (``M.f``, ``t.c.f``,
``{"url": v}``, ``dict(url=v)``) that ORM, SQL-builder and table-helper calls all take.

This module imports no layer: the layers import it.
"""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import field
from typing import Callable, ContextManager, FrozenSet, List, Optional, Sequence, Set, Tuple, Union

from keydrift.analysis.facts import STORE, WRITE, Value
from keydrift.analysis.tree import concatenated_literals, keyword_arg, segment, unspread_positional_args, unstarred
from keydrift.analysis.values import code, last_name
from keydrift.frameworks import sqlalchemy_orm as sqla
from keydrift.records import mutable, record

Link = Tuple[str, Optional[ast.Call]]
# The field of a write of every keyword a ``**kwargs`` parameter forwards (``create(**fields)``
# in ``def save_link(**fields)``): a caller's summary import spells it out as the keywords the
# caller passes (``save_link(url=u)`` writes ``url``); no lookup or registry entry has it.
FORWARDED_FIELDS = "*"


@mutable
class Key:
    """A field compared or stored by one access, before it is attached to a function."""

    entity: str
    field: str
    value: Value
    absorbs: FrozenSet[str] = frozenset()
    rewritten_by: str = ""  # the framework rewrites the key as it stores it


@mutable
class ChainInfo:
    """What a recognized chain did: its entity, lookups, and whether it returns one record."""

    entity: str
    lookups: List[Key] = field(default_factory=list)
    single_record: bool = False
    calls: Set[int] = field(default_factory=set)  # id() of every Call node in the chain


class Context:
    """What recognizers need from the walker (implemented in keyflow)."""

    def eval(self, node: ast.expr) -> Value:  # pragma: no cover - interface
        raise NotImplementedError

    def eval_in_comprehension(self, comp: ast.expr, node: ast.expr) -> Value:
        raise NotImplementedError  # pragma: no cover - interface

    def projection(self, node: ast.expr) -> Optional[Tuple[str, str]]:
        """(entity, field) when ``node`` holds the values of one column of query rows
        (``Result.objects.values_list("url", flat=True)``, ``{r.url for r in rows}``)."""
        raise NotImplementedError  # pragma: no cover - interface

    def comprehension(self, comp: Optional[ast.expr]) -> ContextManager[None]:
        """Evaluate in the scope of a comprehension's loop variables (none when ``comp`` is None)."""
        raise NotImplementedError  # pragma: no cover - interface

    def eval_element(self, node: ast.expr) -> Value:
        """The value of an element of a collection (``url__in=urls``)."""
        raise NotImplementedError  # pragma: no cover - interface

    def add(self, kind: str, key: Key, node: ast.AST, role: str, call_id: int, via: str,
            saves: bool = False, assigned_at: Optional[ast.stmt] = None) -> None:
        """Record an access; ``saves`` marks a write that goes through the model's save path
        (``create``, ``save()``, ``session.add``), where write-time rewriting applies;
        ``assigned_at`` the statement that assigned the field of a record read before."""
        raise NotImplementedError  # pragma: no cover - interface

    def take_assigned(self, objs: ast.expr, entity: str, fields: Sequence[str]
                      ) -> List[Tuple[str, Value, ast.stmt]]:
        """(field, value, assignment) of each listed field assigned on a record of ``entity``
        that ``objs`` holds (``obj.name = n; changed.append(obj)``), no longer pending: the
        caller writes them."""
        return []

    def string_value(self, node: ast.expr) -> Optional[str]:
        raise NotImplementedError  # pragma: no cover - interface

    def resolve(self, node: ast.expr) -> ast.expr:
        raise NotImplementedError  # pragma: no cover - interface

    def primary_key(self, entity: str) -> str:
        raise NotImplementedError  # pragma: no cover - interface

    def enclosing_class(self) -> str:
        """The class whose method is being walked, or ""."""
        raise NotImplementedError  # pragma: no cover - interface

    def user_model(self) -> str:
        """The entity of the project's user model (``get_user_model()``)."""
        return "User"

    def managed_model(self) -> str:
        """The model whose manager the enclosing class is (a manager or queryset class a model
        of the module makes its ``objects`` from), or ""."""
        return ""

    def model_alias(self, name: str) -> str:
        """The model a capitalized name stands for: ``UserModel = get_user_model()`` -> the user
        model; any other name is itself."""
        return name


def unchain(node: ast.expr) -> Tuple[Optional[ast.expr], List[Link]]:
    """``A.b.c(x).d(y)`` -> (Name A, [("b", None), ("c", call), ("d", call)])."""
    links: List[Link] = []
    while True:  # (by exact type: ``ast`` node classes are never subclassed; asked for every call)
        kind = type(node)
        if kind is ast.Call:
            func = node.func  # type: ignore[attr-defined]
            func_kind = type(func)
            if func_kind is ast.Attribute:
                links.append((func.attr, node))
                node = func.value
            elif func_kind is ast.Name:
                links.append((func.id, node))
                links.reverse()
                return None, links
            else:
                links.reverse()
                return func, links
        elif kind is ast.Attribute:
            links.append((node.attr, None))
            node = node.value
        elif kind is ast.Await:
            node = node.value  # type: ignore[attr-defined]
        else:
            links.reverse()
            return node, links


def is_model_name(name: str) -> bool:
    return bool(name) and name[0].isupper() and not name.isupper()


def keyword_args(call: ast.Call) -> List[Tuple[str, ast.expr]]:
    """The named keyword arguments in source order (``**mapping`` left out)."""
    return [(k.arg, k.value) for k in call.keywords if k.arg is not None]


positional_args = unspread_positional_args  # the written arguments, also after a ``*args``



def dict_items(node: ast.Dict) -> List[Tuple[ast.expr, ast.expr]]:
    """The ``key: value`` items of a dict display, ``**spread`` left out."""
    return [(k, v) for k, v in zip(node.keys, node.values) if k is not None]


def fstring_parts(node: ast.AST) -> Optional[List[Union[str, ast.FormattedValue]]]:
    """The parts of ONE f-string literal, as a key template reads them: the
    literal text as written between interpolations (adjacent text merged, braces doubled back:
    ``{{``) and the ``FormattedValue`` of each interpolation. None for anything else, also for
    an f-string implicitly concatenated with other literals (``"a:" f"{b}"`` is one
    ``JoinedStr`` in ast, but implicitly concatenated literals are not one key template).
    Backslash escapes stay evaluated."""
    if not isinstance(node, ast.JoinedStr) or concatenated_literals(node):
        return None
    parts: List[Union[str, ast.FormattedValue]] = []
    for value in node.values:
        if isinstance(value, ast.FormattedValue):
            parts.append(value)
            continue
        text = str(value.value).replace("{", "{{").replace("}", "}}")  # type: ignore[attr-defined]
        if parts and isinstance(parts[-1], str):
            parts[-1] += text
        elif text:
            parts.append(text)
    return parts



keyword = keyword_arg


def subscript_index(node: ast.expr) -> Optional[ast.expr]:
    """The one index of a subscript (``db["users"]``), not a slice or several indices."""
    if not isinstance(node, ast.Subscript) or isinstance(node.slice, ast.Slice):
        return None
    if isinstance(node.slice, ast.Tuple) and not _parenthesized(node.slice):
        return None  # ``m[a, b]``: two indices (``m[(a, b)]`` is one, a tuple)
    return node.slice


def _parenthesized(node: ast.expr) -> bool:
    """Whether the node's source is wrapped in one pair of parentheses (``(a, b)``, not
    ``(a), (b)``); False without the source (see ``tree.source_lines``)."""
    text = segment(node)
    if text is None or not text.startswith("(") or not text.endswith(")"):
        return False
    depth = 0
    try:
        brackets = [t.string for t in tokenize.generate_tokens(io.StringIO(f"[{text}]").readline)
                    if t.type == tokenize.OP and t.string in "()[]{}"]
    except (tokenize.TokenError, SyntaxError):
        return False
    for position, bracket in enumerate(brackets[1:-1]):  # inside the added [ ]
        depth += 1 if bracket in "([{" else -1
        if depth == 0:
            return position == len(brackets) - 3
    return False


def keyword_items(call: ast.Call, ctx: Context) -> List[Tuple[str, ast.expr]]:
    """Keyword arguments, with ``**data`` spelled out when ``data`` is a dict literal or a dict
    filled item by item (``data = {}; data["url"] = u``): ``create(**data)`` stores its items."""
    items = keyword_args(call)
    for spread in call.keywords:
        if spread.arg is not None:
            continue
        mapping = ctx.resolve(spread.value)
        if isinstance(mapping, ast.Dict):
            for key, value in dict_items(mapping):
                name = ctx.string_value(key)
                if name is not None and name.isidentifier():
                    items.append((name, value))
        elif isinstance(mapping, ast.Call) and last_name(mapping.func) == "dict":
            items += keyword_args(mapping)
    return items


def forwarded_mappings(call: ast.Call, ctx: Context) -> List[ast.expr]:
    """The ``**name`` arguments of a call whose mapping the function does not show (a
    ``**kwargs`` parameter, a mapping received): each stores whatever keywords it holds."""
    found = []
    for spread in call.keywords:
        if spread.arg is None and isinstance(spread.value, ast.Name):
            mapping = ctx.resolve(spread.value)
            if isinstance(mapping, ast.Name):
                found.append(mapping)
    return found


def column_of(expr: ast.expr, ctx: Optional[Context] = None) -> Optional[Tuple[str, str, FrozenSet[str]]]:
    """``M.f`` / ``table.c.f`` / ``func.lower(M.f)`` -> (entity, field, absorbed kinds); with the
    walk's context also ``cls.f`` in a model's classmethod (the class's column, not a value),
    and a local variable bound to one (``col = func.lower(User.email)``)."""
    if isinstance(expr, ast.Name) and ctx is not None:
        bound = ctx.resolve(expr)
        return column_of(bound, ctx) if bound is not expr and not isinstance(bound, ast.Name) else None
    if isinstance(expr, ast.Call) and positional_args(expr):
        kind = sqla.SQL_FUNCTION_KINDS.get(last_name(expr.func))
        inner = column_of(positional_args(expr)[0], ctx)
        if kind is None or inner is None:
            return None
        return inner[0], inner[1], inner[2] | frozenset({kind})
    if not isinstance(expr, ast.Attribute):
        return None
    base = expr.value
    if isinstance(base, ast.Attribute) and base.attr in ("c", "columns"):
        table = last_name(base.value)
        if table == "__table__" and isinstance(base.value, ast.Attribute):
            table = last_name(base.value.value)
        return (table, expr.attr, frozenset()) if table else None
    entity = last_name(base)
    if isinstance(base, ast.Name) and base.id == "cls" and ctx is not None:
        entity = ctx.enclosing_class()
    if is_model_name(entity):
        return entity, expr.attr, frozenset()
    return None


def mapping_fields(expr: ast.expr, entity: str, ctx: Context) -> List[Key]:
    """``{"url": v}`` / ``{M.url: v}`` / ``dict(url=v)`` -> stored keys."""
    expr = ctx.resolve(expr)
    keys: List[Key] = []
    if isinstance(expr, ast.Dict):
        for key, value in dict_items(expr):
            name = ctx.string_value(key)
            if name is None:
                column = column_of(key)
                name = column[1] if column else None
            if name is not None:
                keys.append(Key(entity, name, ctx.eval(value)))
    elif isinstance(expr, ast.Call) and last_name(expr.func) == "dict":
        keys = [Key(entity, name, ctx.eval(value)) for name, value in keyword_args(expr)]
    return keys


def constructed_instances(expr: ast.expr) -> List[ast.Call]:
    """Model constructor calls in a list/tuple/comprehension: ``[M(url=u) for u in urls]``."""
    if isinstance(expr, ast.Call) and is_model_name(last_name(expr.func)) \
            and (keyword_args(expr) or any(k.arg is None for k in expr.keywords)):
        return [expr]
    if isinstance(expr, (ast.List, ast.Tuple, ast.Set)):
        return [c for e in expr.elts for c in constructed_instances(unstarred(e))]
    if isinstance(expr, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
        return constructed_instances(expr.elt)
    return []



class ChainReader:
    """Reads one chain and reports its accesses to the context."""

    def __init__(self, ctx: Context, call_id: int, outer: ast.Call) -> None:
        self.ctx = ctx
        self.call_id = call_id
        self.outer = outer
        self._via: Optional[str] = None

    @property
    def via(self) -> str:
        """The chain's text, for messages: rendered only for chains that access a key."""
        if self._via is None:
            self._via = code(self.outer)
        return self._via

    def emit(self, kind: str, keys: Sequence[Key], role: str, saves: bool = False) -> None:
        for key in keys:
            self.ctx.add(kind, key, self.outer, role, self.call_id, self.via, saves)

    def instance_writes(self, instances: Sequence[ast.Call], comprehension: Optional[ast.expr] = None,
                        saves: bool = True) -> None:
        for ctor in instances:
            entity = last_name(ctor.func)
            keys = []
            for name, value in keyword_items(ctor, self.ctx):
                val = self.ctx.eval_in_comprehension(comprehension, value) if comprehension is not None else self.ctx.eval(value)
                keys.append(Key(entity, name, val))
            self.emit(WRITE, keys, STORE, saves=saves)

    def bulk(self, expr: ast.expr, saves: bool = True) -> None:
        expr = self.ctx.resolve(expr)
        comp = expr if isinstance(expr, (ast.ListComp, ast.GeneratorExp, ast.SetComp)) else None
        self.instance_writes(constructed_instances(expr), comp, saves)


class Chain:
    """One chain as the layers see it: its base (``None`` when the chain starts with a call of a
    bare name), its links, and the reader that reports its accesses."""

    def __init__(self, base: Optional[ast.expr], links: List[Link], reader: ChainReader) -> None:
        self.base = base
        self.links = links
        self.reader = reader
        self.ctx = reader.ctx
        self.first, self.first_call = links[0]
        self.last, self.last_call = links[-1]
        self.base_name = last_name(base) if base is not None else ""

    def final_call(self) -> Optional[Tuple[Optional[ast.expr], str, ast.Call]]:
        """(receiver, name, call) of a chain ending in a call of a function (``f(...)``, one
        link) or a method (``session.get(M, pk)``): the receiver is what the method is called
        on, or the chain's base for a function."""
        call = self.last_call
        if call is None or not (len(self.links) == 1 or isinstance(call.func, ast.Attribute)):
            return None
        receiver = call.func.value if isinstance(call.func, ast.Attribute) else self.base
        return receiver, self.last, call


class Stop:
    """What a layer returns for a chain that is its own but makes no access: the registry asks
    no further layer (``Model(...)`` not saved)."""

    def __repr__(self) -> str:
        return "STOP"


STOP = Stop()

# A layer's answer for a chain: what it accessed, None (not this layer's: ask the next), or STOP.
Recognizer = Callable[[Chain], Union[ChainInfo, None, Stop]]


@record
class Names:
    """The names a link may have: listed in a layer's table, or of a shape no list holds
    (``*objects`` managers, helpers named by a verb)."""

    listed: FrozenSet[str] = frozenset()
    shape: Optional[Callable[[str], bool]] = None

    def admit(self, name: str) -> bool:
        return name in self.listed or (self.shape is not None and self.shape(name))


@record
class Route:
    """The chains a layer can answer, told by the names of three of their links: the first
    (``objects`` in ``User.objects.get(email=e)``), the first called (``query`` in
    ``db.session.query(M).get(pk)``) and the last (``execute`` in ``cur.execute(sql, p)``). The
    registry asks a layer only about chains one of whose three names its route admits, so a
    route admits every chain its layer answers, ``STOP`` included."""

    first: Names = Names()
    first_call: Names = Names()
    last: Names = Names()

    def admits(self, first: str, first_call: str, last: str) -> bool:
        return self.first.admit(first) or self.first_call.admit(first_call) or self.last.admit(last)


@record
class Layer:
    """One database layer as the registry knows it: what it recognizes, its recognizers for
    the three passes over a chain (``layers/registry.py`` asks every layer's ``call`` recognizer,
    then every ``chain`` one, then every ``last`` one, in the registry's order), and the route
    that says which chains they can answer (a layer without one is asked about every chain)."""

    name: str
    recognizes: str
    call: Optional[Recognizer] = None  # the outermost call alone: ``cursor.execute(sql, p)``, ``cache.get(k)``
    chain: Optional[Recognizer] = None  # the chain from its base: ``Model.objects...``, ``select(M)...``
    last: Optional[Recognizer] = None  # the last call on its receiver: ``session.get(M, pk)``
    route: Optional[Route] = None
