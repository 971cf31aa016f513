"""The query-chain reader the ORM layers share: Django querysets, the class-level calls of
peewee and Flask-SQLAlchemy (``layers/model_classes.py``), mongoengine's ``Model.objects(...)``,
SQLAlchemy's ``session.query(M)`` chains and statement criteria (``layers/sqlalchemy_orm.py``).

Lookups (``url__iexact=u``, ``Q(url=u)``), criteria (``M.url == u``, ``M.url.ilike(u)``,
``and_(...)``), stored fields, upserts and ``on_conflict`` clauses are read alike whichever
layer started the chain, so they live here once. Not a layer: the registry does not list it.
"""

from __future__ import annotations

import ast
from typing import FrozenSet, List, Optional, Sequence, Tuple

from keydrift.analysis.tree import unstarred
from keydrift.analysis.chains import (
    FORWARDED_FIELDS,
    ChainInfo,
    ChainReader,
    Context,
    Key,
    Link,
    column_of,
    forwarded_mappings,
    keyword,
    keyword_args,
    keyword_items,
    mapping_fields,
    positional_args,
)
from keydrift.analysis.facts import DEFAULTS, LOOKUP, NORMALIZER, READ, STORE, WRITE, Step, Value
from keydrift.analysis.pairing import steps_not_applied
from keydrift.analysis.values import code, dotted_name, last_name
from keydrift.frameworks import django_orm as django
from keydrift.frameworks.django_orm import is_manager
from keydrift.frameworks import sqlalchemy_orm as sqla


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
        column = column_of(column_side, ctx)
        if column is not None and column_of(value_side, ctx) is None:
            entity, field_name, absorbs = column
            return [Key(entity, field_name, _sql_value(value_side, ctx), absorbs)]
    return []


def _method_criterion(expr: ast.Call, ctx: Context) -> List[Key]:
    """``M.f.ilike(v)`` compares case-insensitively; ``M.f.in_(values)`` compares each element."""
    func = expr.func
    if not isinstance(func, ast.Attribute):
        return []
    operator = func.attr
    column = column_of(func.value, ctx)
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
    keys += [Key(entity, FORWARDED_FIELDS, ctx.eval(mapping)) for mapping in forwarded_mappings(call, ctx)]
    return keys


def model_chain(reader: ChainReader, entity: str, links: Sequence[Link], write_chain: bool = False) -> ChainInfo:
    """Django managers/querysets and class-level APIs (peewee, Flask-SQLAlchemy)."""
    info = ChainInfo(entity)
    lookups: List[Key] = []
    stored: List[Key] = []
    for name, call in links:
        if call is None:
            continue
        if is_manager(name):  # mongoengine: Model.objects(email=e)
            lookups += keyword_lookups(call, entity, reader.ctx)
        if name in django.LOOKUP_METHODS or name in sqla.CRITERIA_METHODS:
            skip = django.UPSERT_DEFAULTS_KWARGS if name in django.UPSERT_METHODS else frozenset()
            lookups += keyword_lookups(call, entity, reader.ctx, skip)
            for arg in positional_args(call):
                lookups += criteria_lookups(arg, entity, reader.ctx)
        if name in django.UPSERT_METHODS:
            upsert(reader, call, entity, lookups)
            info.single_record = True
            lookups = []
        elif name in django.NORMALIZING_CREATE_METHODS:
            reader.emit(WRITE, normalized_create(reader, call, entity, name), STORE, saves=True)
        elif name in django.CREATE_METHODS:
            reader.emit(WRITE, stored_fields(call, entity, reader.ctx), STORE, saves=True)
        elif name in ("insert", "replace") and (call.args or call.keywords):
            stored = stored_fields(call, entity, reader.ctx)
            reader.emit(WRITE, stored, STORE)
        elif name in sqla.ON_CONFLICT_METHODS or name == "on_conflict":
            on_conflict(reader, call, entity, stored)
        elif name in django.UPDATE_METHODS:
            write_chain = True
            reader.emit(WRITE, stored_fields(call, entity, reader.ctx), STORE)
        elif name in django.DELETE_METHODS:
            write_chain = True
        elif name in django.BULK_CREATE_METHODS and positional_args(call):
            reader.bulk(positional_args(call)[0], saves=False)  # bulk_create bypasses save()
        elif name in django.BULK_UPDATE_METHODS:
            bulk_update(reader, call, entity)
        elif name in django.SINGLE_RECORD_METHODS:
            info.single_record = True
    reader.emit(WRITE if write_chain else READ, lookups, LOOKUP)
    info.lookups = [] if write_chain else lookups
    return info


def bulk_update(reader: ChainReader, call: ast.Call, entity: str) -> None:
    """``M.objects.bulk_update(objs, ["name"])``: each listed field assigned on a record that
    ``objs`` holds is written as assigned, and ``save()`` never runs (so the keys it derives
    from those fields are not derived: KD107)."""
    args = positional_args(call)
    fields = keyword(call, django.BULK_UPDATE_FIELDS_KWARG) or (args[1] if len(args) > 1 else None)
    if not args or fields is None:
        return
    names = field_names(fields, reader.ctx)
    for field_name, value, statement in reader.ctx.take_assigned(args[0], entity, names):
        reader.ctx.add(WRITE, Key(entity, field_name, value), reader.outer, STORE, reader.call_id, reader.via,
                       assigned_at=statement)


def field_names(expr: ast.expr, ctx: Context) -> List[str]:
    """``["name", "slug"]`` / ``[M.name]`` (peewee) -> the field names; [] for anything else."""
    expr = ctx.resolve(expr)
    if not isinstance(expr, (ast.List, ast.Tuple, ast.Set)):
        return []
    names = []
    for element in map(unstarred, expr.elts):
        name = ctx.string_value(element)
        column = column_of(element) if name is None else None
        name = column[1] if column is not None else name
        if name:
            names.append(name)
    return names


def normalized_create(reader: ChainReader, call: ast.Call, entity: str, method: str) -> List[Key]:
    """``User.objects.create_user(email=e)`` stores ``normalize_email(e)``."""
    positions, normalizers = django.NORMALIZING_CREATE_METHODS[method]
    named = list(zip(positions, positional_args(call))) + keyword_args(call)
    keys = []
    for field_name, expr in named:
        value = reader.ctx.eval(expr)
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


def upsert(reader: ChainReader, call: ast.Call, entity: str, lookups: List[Key]) -> None:
    """get_or_create/update_or_create: the lookup is read, then stored unless defaults override it."""
    defaults: List[Key] = []
    for name in django.UPSERT_DEFAULTS_KWARGS:
        value = keyword(call, name)
        if value is not None:
            defaults += mapping_fields(value, entity, reader.ctx)
    overridden = {k.field for k in defaults}
    reader.emit(READ, lookups, LOOKUP)
    reader.emit(WRITE, [k for k in lookups if k.field not in overridden], STORE, saves=True)
    reader.emit(WRITE, defaults, DEFAULTS, saves=True)


def on_conflict(reader: ChainReader, call: ast.Call, entity: str, stored: List[Key]) -> None:
    """``on_conflict_do_update(index_elements=[...], set_={...})`` (SQLAlchemy) / ``on_conflict(...)``
    (peewee): the stored conflict columns are read; the SET mapping is written as defaults."""
    target = keyword(call, "index_elements") or keyword(call, "conflict_target")
    columns = set()
    if isinstance(target, (ast.List, ast.Tuple)):
        for element in map(unstarred, target.elts):
            name = reader.ctx.string_value(element)
            column = column_of(element)
            columns.add(name if name is not None else (column[1] if column else ""))
    conflict_keys = [k for k in stored if not columns or k.field in columns]
    updates: List[Key] = []
    for kw in ("set_", "update"):
        value = keyword(call, kw)
        if value is not None:
            updates += mapping_fields(value, entity, reader.ctx)
    for arg in positional_args(call):
        updates += mapping_fields(arg, entity, reader.ctx)
    reader.emit(READ, conflict_keys, LOOKUP)
    reader.emit(WRITE, updates, DEFAULTS)
