"""Recognizers: turn database calls into key accesses, using the tables in ``frameworks``.

A call chain (``Model.objects.filter(...).exists()``, ``session.query(M).filter_by(...)``,
``insert(M).values(...)``, ``cursor.execute(sql, params)``) is read once, from its outermost
call; the accesses it makes are reported to a ``Context`` supplied by the key-flow walker.
"""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass, field
from typing import ContextManager, FrozenSet, List, Optional, Sequence, Set, Tuple, Union

from keydrift.analysis.facts import DEFAULTS, LOOKUP, NORMALIZER, READ, STORE, WRITE, Step, Value
from keydrift.analysis.pairing import steps_not_applied
from keydrift.analysis.tree import segment
from keydrift.analysis.values import code, dotted_name, last_name
from keydrift.frameworks import dbapi_sql as dbapi
from keydrift.frameworks import django_orm as django
from keydrift.frameworks import sqlalchemy_orm as sqla

Link = Tuple[str, Optional[ast.Call]]


@dataclass
class Key:
    """A field compared or stored by one access, before it is attached to a function."""

    entity: str
    field: str
    value: Value
    absorbs: FrozenSet[str] = frozenset()
    rewritten_by: str = ""  # the framework rewrites the key as it stores it


@dataclass
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
            saves: bool = False) -> None:
        """Record an access; ``saves`` marks a write that goes through the model's save path
        (``create``, ``save()``, ``session.add``), where write-time rewriting applies."""
        raise NotImplementedError  # pragma: no cover - interface

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

    def model_alias(self, name: str) -> str:
        """The model a capitalized name stands for: ``UserModel = get_user_model()`` -> the user
        model; any other name is itself."""
        return name


def unchain(node: ast.expr) -> Tuple[Optional[ast.expr], List[Link]]:
    """``A.b.c(x).d(y)`` -> (Name A, [("b", None), ("c", call), ("d", call)])."""
    links: List[Link] = []
    while True:
        if isinstance(node, ast.Await):
            node = node.value
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute):
                links.append((func.attr, node))
                node = func.value
            elif isinstance(func, ast.Name):
                links.append((func.id, node))
                links.reverse()
                return None, links
            else:
                links.reverse()
                return func, links
        elif isinstance(node, ast.Attribute):
            links.append((node.attr, None))
            node = node.value
        else:
            links.reverse()
            return node, links


def is_model_name(name: str) -> bool:
    return bool(name) and name[0].isupper() and not name.isupper()


def keyword_args(call: ast.Call) -> List[Tuple[str, ast.expr]]:
    """The named keyword arguments in source order (``**mapping`` left out)."""
    return [(k.arg, k.value) for k in call.keywords if k.arg is not None]


def positional_args(call: ast.Call) -> List[ast.expr]:
    """Every positional argument that is not spread with ``*``, also those after a ``*args``
    (unlike ``tree.positional_args``, which stops there)."""
    return [a for a in call.args if not isinstance(a, ast.Starred)]


def element_value(element: ast.expr) -> ast.expr:
    """An element of a list/tuple/set display, ``*spread`` unwrapped (libcst's ``Element.value``
    and ``StarredElement.value``)."""
    return element.value if isinstance(element, ast.Starred) else element


def dict_items(node: ast.Dict) -> List[Tuple[ast.expr, ast.expr]]:
    """The ``key: value`` items of a dict display, ``**spread`` left out."""
    return [(k, v) for k, v in zip(node.keys, node.values) if k is not None]


def fstring_parts(node: ast.AST) -> Optional[List[Union[str, ast.FormattedValue]]]:
    """The parts of ONE f-string literal, as libcst's ``FormattedString.parts`` gave them: the
    literal text as written between interpolations (adjacent text merged, braces doubled back:
    ``{{``) and the ``FormattedValue`` of each interpolation. None for anything else, also for
    an f-string implicitly concatenated with other literals (``"a:" f"{b}"`` is one
    ``JoinedStr`` in ast but was a ``ConcatenatedString`` in libcst, which no recognizer read as
    a template). Backslash escapes stay evaluated: libcst kept them as written."""
    if not isinstance(node, ast.JoinedStr) or _concatenated_literals(node):
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


def _concatenated_literals(node: ast.expr) -> bool:
    """Whether the source of a string node is several adjacent literals. False when that cannot
    be told: no source (see ``tree.source_lines``), or text that is not only string literals."""
    text = segment(node)
    if text is None:
        return False
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


def keyword(call: ast.Call, name: str) -> Optional[ast.expr]:
    for key, value in keyword_args(call):
        if key == name:
            return value
    return None


# -- Django-style lookups ------------------------------------------------------------------------

def parse_lookup(name: str, entity: str, ctx: Context) -> Optional[Tuple[str, FrozenSet[str], bool]]:
    """``url__iexact`` -> ("url", {"case"}, False); ``url__in`` -> ("url", {}, True);
    ``created__gte`` -> None (not a key lookup)."""
    parts = name.split("__")
    absorbs: FrozenSet[str] = frozenset()
    membership = False
    if len(parts) > 1 and parts[-1] in django.EXACT_LOOKUPS:
        absorbs = django.EXACT_LOOKUPS[parts.pop()]
    elif len(parts) > 1 and parts[-1] in django.IN_LOOKUPS:
        absorbs = django.IN_LOOKUPS[parts.pop()]
        membership = True
    elif len(parts) > 1 and parts[-1] in django.OTHER_LOOKUPS:
        return None
    field_name = "__".join(parts)
    if field_name in django.PRIMARY_KEY_ALIASES:
        field_name = ctx.primary_key(entity)
    return field_name, absorbs, membership


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


def keyword_lookups(call: ast.Call, entity: str, ctx: Context, skip: FrozenSet[str] = frozenset()) -> List[Key]:
    keys = []
    for name, value in keyword_items(call, ctx):
        if name in skip:
            continue
        parsed = parse_lookup(name, entity, ctx)
        if parsed is not None:
            field_name, absorbs, membership = parsed
            evaluated = ctx.eval_element(value) if membership else ctx.eval(value)
            keys.append(Key(entity, field_name, evaluated, absorbs))
    return keys


def criteria_lookups(expr: ast.expr, entity: str, ctx: Context) -> List[Key]:
    """Keys compared by positional criteria: ``M.f == v``, ``Q(f=v)``, ``and_(...)``, ``a & b``."""
    if isinstance(expr, ast.Compare):
        return _comparison_keys(expr, ctx)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.BitAnd, ast.BitOr)):
        return criteria_lookups(expr.left, entity, ctx) + criteria_lookups(expr.right, entity, ctx)
    if isinstance(expr, ast.UnaryOp):
        return []
    if isinstance(expr, ast.Call):
        func = last_name(expr.func)
        if func in django.Q_OBJECTS:
            keys = keyword_lookups(expr, entity, ctx)
            for arg in positional_args(expr):
                keys += criteria_lookups(arg, entity, ctx)
            return keys
        if func in ("and_", "or_"):
            return [k for arg in positional_args(expr) for k in criteria_lookups(arg, entity, ctx)]
        return _method_criterion(expr, ctx)
    return []


def column_of(expr: ast.expr) -> Optional[Tuple[str, str, FrozenSet[str]]]:
    """``M.f`` / ``table.c.f`` / ``func.lower(M.f)`` -> (entity, field, absorbed kinds)."""
    if isinstance(expr, ast.Call) and positional_args(expr):
        kind = sqla.SQL_FUNCTION_KINDS.get(last_name(expr.func))
        inner = column_of(positional_args(expr)[0])
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
    if is_model_name(entity):
        return entity, expr.attr, frozenset()
    return None


def _sql_value(expr: ast.expr, ctx: Context) -> Value:
    """``func.lower(v)`` on the value side is a transformation of v."""
    if isinstance(expr, ast.Call) and positional_args(expr):
        kind = sqla.SQL_FUNCTION_KINDS.get(last_name(expr.func))
        if kind is not None and dotted_name(expr.func).startswith(("func.", "sa.func.", "sqlalchemy.func.", "fn.")):
            inner = _sql_value(positional_args(expr)[0], ctx)
            return inner.then(Step(kind, f"SQL {last_name(expr.func)}()", expr), code(expr))
    return ctx.eval(expr)


def _comparison_keys(expr: ast.Compare, ctx: Context) -> List[Key]:
    if len(expr.ops) != 1 or not isinstance(expr.ops[0], ast.Eq):
        return []
    left, right = expr.left, expr.comparators[0]
    for column_side, value_side in ((left, right), (right, left)):
        column = column_of(column_side)
        if column is not None and column_of(value_side) is None:
            entity, field_name, absorbs = column
            return [Key(entity, field_name, _sql_value(value_side, ctx), absorbs)]
    return []


def _method_criterion(expr: ast.Call, ctx: Context) -> List[Key]:
    """``M.f.ilike(v)`` compares case-insensitively; ``M.f.in_(values)`` compares each element."""
    func = expr.func
    if not isinstance(func, ast.Attribute):
        return []
    operator = func.attr
    column = column_of(func.value)
    args = positional_args(expr)
    if column is None or not args:
        return []
    if operator in sqla.CASE_INSENSITIVE_OPERATORS:
        return [Key(column[0], column[1], ctx.eval(args[0]), column[2] | frozenset({"case"}))]
    if operator in sqla.MEMBERSHIP_OPERATORS:
        return [Key(column[0], column[1], ctx.eval_element(args[0]), column[2])]
    return []


def stored_fields(call: ast.Call, entity: str, ctx: Context) -> List[Key]:
    """Keyword arguments of ``create``/``values``/a model constructor, or a dict argument."""
    keys = [Key(entity, name, ctx.eval(value)) for name, value in keyword_items(call, ctx)
            if name not in django.UPSERT_DEFAULTS_KWARGS]
    for arg in positional_args(call):
        keys += mapping_fields(arg, entity, ctx)
    return keys


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
        return [c for e in expr.elts for c in constructed_instances(element_value(e))]
    if isinstance(expr, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
        return constructed_instances(expr.elt)
    return []


# -- chains ----------------------------------------------------------------------------------

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

    def model_chain(self, entity: str, links: Sequence[Link], write_chain: bool = False) -> ChainInfo:
        """Django managers/querysets and class-level APIs (peewee, Flask-SQLAlchemy)."""
        info = ChainInfo(entity)
        lookups: List[Key] = []
        stored: List[Key] = []
        for name, call in links:
            if call is None:
                continue
            if _is_manager(name):  # mongoengine: Model.objects(email=e)
                lookups += keyword_lookups(call, entity, self.ctx)
            if name in django.LOOKUP_METHODS or name in sqla.CRITERIA_METHODS:
                skip = django.UPSERT_DEFAULTS_KWARGS if name in django.UPSERT_METHODS else frozenset()
                lookups += keyword_lookups(call, entity, self.ctx, skip)
                for arg in positional_args(call):
                    lookups += criteria_lookups(arg, entity, self.ctx)
            if name in django.UPSERT_METHODS:
                self.upsert(call, entity, lookups)
                info.single_record = True
                lookups = []
            elif name in django.NORMALIZING_CREATE_METHODS:
                self.emit(WRITE, self.normalized_create(call, entity, name), STORE, saves=True)
            elif name in django.CREATE_METHODS:
                self.emit(WRITE, stored_fields(call, entity, self.ctx), STORE, saves=True)
            elif name in ("insert", "replace") and (call.args or call.keywords):
                stored = stored_fields(call, entity, self.ctx)
                self.emit(WRITE, stored, STORE)
            elif name in sqla.ON_CONFLICT_METHODS or name == "on_conflict":
                self.on_conflict(call, entity, stored)
            elif name in django.UPDATE_METHODS:
                write_chain = True
                self.emit(WRITE, stored_fields(call, entity, self.ctx), STORE)
            elif name in django.DELETE_METHODS:
                write_chain = True
            elif name in django.BULK_CREATE_METHODS and positional_args(call):
                self.bulk(positional_args(call)[0], saves=False)  # bulk_create bypasses save()
            elif name in django.SINGLE_RECORD_METHODS:
                info.single_record = True
        self.emit(WRITE if write_chain else READ, lookups, LOOKUP)
        info.lookups = [] if write_chain else lookups
        return info

    def normalized_create(self, call: ast.Call, entity: str, method: str) -> List[Key]:
        """``User.objects.create_user(email=e)`` stores ``normalize_email(e)``."""
        positions, normalizers = django.NORMALIZING_CREATE_METHODS[method]
        named = list(zip(positions, positional_args(call))) + keyword_args(call)
        keys = []
        for field_name, expr in named:
            value = self.ctx.eval(expr)
            label = normalizers.get(field_name)
            if label is None:
                keys.append(Key(entity, field_name, value))
                continue
            added = steps_not_applied(value.steps, (Step(NORMALIZER, label),))
            if not added:  # already normalized the same way: stored as looked up
                keys.append(Key(entity, field_name, value))
                continue
            keys.append(Key(entity, field_name, Value(value.origins, value.steps + added, value.text),
                            rewritten_by=f"{entity}.objects.{method}()"))
        return keys

    def upsert(self, call: ast.Call, entity: str, lookups: List[Key]) -> None:
        """get_or_create/update_or_create: the lookup is read, then stored unless defaults override it."""
        defaults: List[Key] = []
        for name in django.UPSERT_DEFAULTS_KWARGS:
            value = keyword(call, name)
            if value is not None:
                defaults += mapping_fields(value, entity, self.ctx)
        overridden = {k.field for k in defaults}
        self.emit(READ, lookups, LOOKUP)
        self.emit(WRITE, [k for k in lookups if k.field not in overridden], STORE, saves=True)
        self.emit(WRITE, defaults, DEFAULTS, saves=True)

    def bulk(self, expr: ast.expr, saves: bool = True) -> None:
        expr = self.ctx.resolve(expr)
        comp = expr if isinstance(expr, (ast.ListComp, ast.GeneratorExp, ast.SetComp)) else None
        self.instance_writes(constructed_instances(expr), comp, saves)

    def statement_chain(self, kind: str, entity: str, links: Sequence[Link]) -> ChainInfo:
        """SQLAlchemy select/insert/update/delete constructs and their method chains."""
        info = ChainInfo(entity)
        lookups: List[Key] = []
        stored: List[Key] = []
        for name, call in links:
            if call is None:
                continue
            if name in sqla.CRITERIA_METHODS:
                for arg in positional_args(call):
                    lookups += criteria_lookups(arg, entity, self.ctx)
            elif name in sqla.KEYWORD_CRITERIA_METHODS:
                lookups += keyword_lookups(call, entity, self.ctx)
            elif name in sqla.VALUES_METHODS:
                new = stored_fields(call, entity, self.ctx)
                stored += new
                self.emit(WRITE, new, STORE)
            elif name in sqla.ON_CONFLICT_METHODS:
                self.on_conflict(call, entity, stored)
        self.emit(READ if kind == "select" else WRITE, lookups, LOOKUP)
        info.lookups = lookups if kind == "select" else []
        return info

    def on_conflict(self, call: ast.Call, entity: str, stored: List[Key]) -> None:
        target = keyword(call, "index_elements") or keyword(call, "conflict_target")
        columns = set()
        if isinstance(target, (ast.List, ast.Tuple)):
            for element in map(element_value, target.elts):
                name = self.ctx.string_value(element)
                column = column_of(element)
                columns.add(name if name is not None else (column[1] if column else ""))
        conflict_keys = [k for k in stored if not columns or k.field in columns]
        updates: List[Key] = []
        for kw in ("set_", "update"):
            value = keyword(call, kw)
            if value is not None:
                updates += mapping_fields(value, entity, self.ctx)
        for arg in positional_args(call):
            updates += mapping_fields(arg, entity, self.ctx)
        self.emit(READ, conflict_keys, LOOKUP)
        self.emit(WRITE, updates, DEFAULTS)


def _entity_arg(call: Optional[ast.Call]) -> str:
    """The entity a constructor names: ``select(M)``, ``select(M.url)``, ``insert(table)``."""
    if call is None or not positional_args(call):
        return ""
    arg = positional_args(call)[0]
    if isinstance(arg, ast.Attribute) and is_model_name(last_name(arg.value)):
        return last_name(arg.value)
    return last_name(arg)


def _constructor_kind(name: str) -> str:
    for kind, names in (("select", sqla.SELECT_CONSTRUCTORS), ("insert", sqla.INSERT_CONSTRUCTORS),
                        ("update", sqla.UPDATE_CONSTRUCTORS), ("delete", sqla.DELETE_CONSTRUCTORS)):
        if name in names or name.endswith("_" + kind):
            return kind
    return ""


def _is_manager(name: str) -> bool:
    return name in django.MANAGERS or name.endswith("objects")


def recognize(call: ast.Call, ctx: Context, call_id: int) -> Optional[ChainInfo]:
    """Report the accesses of the chain whose outermost call is ``call``."""
    base, links = unchain(call)
    if not links:
        return None
    base, links = _through_module_alias(*_through_variable(base, links, ctx), ctx)
    reader = ChainReader(ctx, call_id, call)
    info = _recognize(base, links, reader, ctx)
    if info is not None:
        info.calls = {id(c) for _, c in links if c is not None}
    return info


def _recognize(base: Optional[ast.expr], links: List[Link], reader: ChainReader,
               ctx: Context) -> Optional[ChainInfo]:
    first, first_call = links[0]
    last, last_call = links[-1]
    base_name = last_name(base) if base is not None else ""
    if last_call is not None and (last in dbapi.EXECUTE_METHODS or last in dbapi.EXECUTE_MANY_METHODS):
        from keydrift.analysis.sqlkeys import execute_accesses

        if execute_accesses(last_call, last in dbapi.EXECUTE_MANY_METHODS, reader):
            return ChainInfo("")
    if last_call is not None:
        from keydrift.analysis.stores import recognize_collection_call, recognize_store_call

        found = recognize_collection_call(links, reader) or recognize_store_call(links, reader)
        if found is not None:
            return found
        from keydrift.analysis.tablecalls import recognize_table_call

        found = recognize_table_call(last_call, reader)
        if found is not None:
            return found
    # Model.objects..., Model.query..., Model.get(...) (peewee), Model(...).save()
    if base_name in ("cls", "self") and _is_manager(first):  # cls.objects in a model's classmethod
        base_name = ctx.enclosing_class()
    if base is not None and is_model_name(base_name):
        base_name = ctx.model_alias(base_name)
        if _is_manager(first):
            return reader.model_chain(base_name, links)
        if first_call is not None and first in _MODEL_CLASS_METHODS:
            return reader.model_chain(base_name, links, write_chain=first in ("update", "delete"))
    if first_call is not None and is_model_name(first) and base is None:
        if len(links) > 1 and links[1][0] in django.SAVE_METHODS:
            reader.instance_writes([first_call])
            return ChainInfo(first)
        return None
    # session.query(M)..., self.session.query(M)..., db.session.query(M)...
    query_at = _first_call_index(links)
    if query_at is not None and links[query_at][0] in sqla.QUERY_METHODS and base is not None:
        entity = _entity_arg(links[query_at][1])
        if entity in ("cls", "self"):  # session.query(cls) in a model's classmethod
            entity = ctx.enclosing_class()
        if entity:
            return _query_chain(reader, entity, links[query_at + 1:])
    # select(M)..., insert(M)..., sa.update(M)..., table.insert()...
    if first_call is not None:
        kind = _constructor_kind(first)
        if kind and positional_args(first_call) and (base is None or not is_model_name(base_name)):
            entity = _entity_arg(first_call)
            if entity and (base is None or base_name in _MODULE_ALIASES or base_name.islower()):
                return reader.statement_chain(kind, entity, links[1:])
        if kind and not positional_args(first_call) and base is not None and first in sqla.TABLE_METHODS:
            return reader.statement_chain(kind, base_name, links[1:])
    # session.get(M, pk) / self.session.add(M(...)) / get_object_or_404(M, url=u)
    if last_call is not None and (len(links) == 1 or isinstance(last_call.func, ast.Attribute)):
        receiver = last_call.func.value if isinstance(last_call.func, ast.Attribute) else base
        return _single_call(receiver, last, last_call, reader, ctx)
    return None


_MODULE_ALIASES = frozenset({"sa", "sqlalchemy", "postgresql", "sqlite", "mysql", "pg", "dialect"})
# Links that make a call a query a variable may hold and refine (``q = session.query(M)``).
_QUERY_STARTS = frozenset(django.MANAGERS | sqla.QUERY_METHODS | django.LOOKUP_METHODS | {"select", "where", "all"})
# What may follow a query held in a variable: more criteria, ordering, a terminal read, or a
# write of the rows it selects.
_QUERY_REFINEMENTS = frozenset(
    django.LOOKUP_METHODS | sqla.CRITERIA_METHODS | sqla.KEYWORD_CRITERIA_METHODS | django.SINGLE_RECORD_METHODS
    | django.UPDATE_METHODS | django.DELETE_METHODS
    | {"exists", "count", "all", "order_by", "limit", "offset", "distinct", "values", "values_list",
       "one", "scalar", "first", "aexists", "acount"})
# Class-level calls that start a model chain without a manager (peewee, Flask-SQLAlchemy).
_MODEL_CLASS_METHODS = frozenset({"select", "update", "delete", "insert", "replace", "get", "get_or_none",
                                  "get_or_create", "create", "get_by_id", "filter", "insert_many"})


def _through_variable(base: Optional[ast.expr], links: List[Link],
                      ctx: Context) -> Tuple[Optional[ast.expr], List[Link]]:
    """``q.filter_by(email=e).first()`` with ``q = session.query(M)`` (or refined since): the
    chain goes on from the query the variable holds."""
    if not isinstance(base, ast.Name):
        return base, links
    bound = ctx.resolve(base)
    inner = bound.value if isinstance(bound, ast.Await) else bound
    if not isinstance(inner, ast.Call) or not isinstance(inner.func, ast.Attribute):
        return base, links
    inner_base, inner_links = unchain(inner)
    names = {name for name, _ in inner_links}
    if not names & _QUERY_STARTS or inner_links[-1][0] in django.SINGLE_RECORD_METHODS:
        return base, links  # another call, or one record (``obj.save()`` persists it)
    if links[0][0] not in _QUERY_REFINEMENTS:
        return base, links
    return inner_base, inner_links + links


def _through_module_alias(base: Optional[ast.expr], links: List[Link],
                          ctx: Context) -> Tuple[Optional[ast.expr], List[Link]]:
    """``models.User.objects.get(...)`` / ``m.User.get(...)``: the model reached through a module
    (``from app import models as m``) is the chain's base; ``get_user_model().objects...`` is the
    project's user model."""
    if base is None and len(links) > 2 and links[0][0] in django.USER_MODEL_GETTERS \
            and links[0][1] is not None and _is_manager(links[1][0]):
        return ast.Name(id=ctx.user_model(), ctx=ast.Load()), links[1:]
    if not isinstance(base, ast.Name) or is_model_name(base.id) or base.id in ("self", "cls"):
        return base, links
    if len(links) < 2 or links[0][1] is not None or not is_model_name(links[0][0]):
        return base, links
    follower, follower_call = links[1]
    if _is_manager(follower) or (follower_call is not None and follower in _MODEL_CLASS_METHODS):
        return ast.Name(id=links[0][0], ctx=ast.Load()), links[1:]
    return base, links


def _first_call_index(links: Sequence[Link]) -> Optional[int]:
    for index, (_, call) in enumerate(links):
        if call is not None:
            return index
    return None


def _query_chain(reader: ChainReader, entity: str, links: Sequence[Link]) -> ChainInfo:
    """``session.query(M).filter...``: a read, unless it ends in update()/delete()."""
    names = [n for n, c in links if c is not None]
    write_chain = any(n in sqla.QUERY_UPDATE_METHODS or n in sqla.QUERY_DELETE_METHODS for n in names)
    return reader.model_chain(entity, links, write_chain=write_chain)


def _single_call(base: Optional[ast.expr], name: str, call: ast.Call, reader: ChainReader,
                 ctx: Context) -> Optional[ChainInfo]:
    args = positional_args(call)
    if name in sqla.GET_BY_PK_METHODS and base is not None and len(args) >= 2:
        entity = last_name(args[0])
        if is_model_name(entity):
            key = Key(entity, ctx.primary_key(entity), ctx.eval(args[1]))
            reader.emit(READ, [key], LOOKUP)
            return ChainInfo(entity, [key], single_record=True)
    if name in ("get_object_or_404", "get_list_or_404", "aget_object_or_404") and args:
        entity = last_name(args[0])
        lookups = keyword_lookups(call, entity, ctx)
        reader.emit(READ, lookups, LOOKUP)
        return ChainInfo(entity, lookups, single_record=name != "get_list_or_404")
    if base is not None and (name in sqla.ADD_METHODS or name in sqla.ADD_ALL_METHODS) and args:
        reader.bulk(args[0])
        return ChainInfo("") if constructed_instances(ctx.resolve(args[0])) else None
    return None
