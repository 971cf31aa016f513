"""The document-store layer (pymongo, motor), table ``frameworks/pymongo_client.py``:
``db.users.find_one({"email": e})``, ``update_one(filter, {"$set": {...}}, upsert=True)``,
``insert_many([...])``, ``bulk_write([UpdateOne(...), ...])``. mongoengine querysets
(``User.objects(email=e)``) are read by the Django layer's chain reader."""

from __future__ import annotations

import ast
from typing import FrozenSet, List, Optional, Sequence, Tuple

from keydrift.analysis.tree import unstarred
from keydrift.analysis.chains import (
    Chain,
    ChainInfo,
    ChainReader,
    Context,
    Key,
    Layer,
    Link,
    Names,
    Route,
    dict_items,
    keyword,
    positional_args,
    subscript_index,
)
from keydrift.analysis.facts import CASE, DEFAULTS, LOOKUP, READ, STORE, WRITE, Value
from keydrift.analysis.tree import all_argument_values, is_true
from keydrift.analysis.values import dotted_name, last_name
from keydrift.frameworks import pymongo_client as mongo


def collection_name(receiver: ast.expr, ctx: Context) -> str:
    receiver = ctx.resolve(receiver)
    index = subscript_index(receiver)
    if index is not None:
        return ctx.string_value(index) or ""
    if isinstance(receiver, ast.Call) and last_name(receiver.func) == "get_collection" \
            and (receiver.args or receiver.keywords):
        return ctx.string_value(all_argument_values(receiver)[0]) or ""  # the first argument, whatever its form
    return last_name(receiver)


def filter_keys(expr: Optional[ast.expr], entity: str, ctx: Context) -> List[Key]:
    """``{"email": e}``, ``{"email": {"$eq": e}}``, ``{"email": {"$in": es}}``, ``{"$or": [...]}``."""
    expr = ctx.resolve(expr) if expr is not None else None
    if not isinstance(expr, ast.Dict):
        return []
    keys: List[Key] = []
    for key, element in dict_items(expr):
        name = ctx.string_value(key)
        if name is None:
            continue
        if name in ("$or", "$and") and isinstance(element, (ast.List, ast.Tuple)):
            for item in element.elts:
                keys += filter_keys(unstarred(item), entity, ctx)
        elif not name.startswith("$"):
            matched = _exact_pattern(element, ctx)
            value = matched[0] if matched is not None else _compared_value(element, ctx)
            if value is not None:
                keys.append(Key(entity, name, value, matched[1] if matched is not None else frozenset()))
    return keys


def _exact_pattern(expr: ast.expr, ctx: Context) -> Optional[Tuple[Value, FrozenSet[str]]]:
    """A regular expression that matches one value whole (``{"$regex": f"^{re.escape(e)}$",
    "$options": "i"}``, ``re.compile("^" + re.escape(e) + "$", re.I)``): the value, and
    ``case`` among what the comparison absorbs when it ignores case. None for anything else (a
    prefix or a substring search compares no key)."""
    expr = ctx.resolve(expr)
    pattern: Optional[ast.expr] = None
    insensitive = False
    if isinstance(expr, ast.Dict):
        for key, value in dict_items(expr):
            operator = ctx.string_value(key)
            if operator == mongo.REGEX_OPERATOR:
                pattern = value
            elif operator == mongo.REGEX_OPTIONS:
                insensitive = "i" in (ctx.string_value(value) or "")
    elif isinstance(expr, ast.Call) and dotted_name(expr.func) in ("re.compile", "compile") and expr.args:
        pattern = expr.args[0]
        flags = expr.args[1:] + [k.value for k in expr.keywords if k.arg == "flags"]
        insensitive = any(dotted_name(f) in mongo.IGNORECASE_FLAGS for flag in flags for f in ast.walk(flag))
    matched = _anchored_value(ctx.resolve(pattern), ctx) if pattern is not None else None
    if matched is None:
        return None
    return ctx.eval(matched), frozenset({CASE}) if insensitive else frozenset()


def _anchored_value(pattern: ast.expr, ctx: Context) -> Optional[ast.expr]:
    """``x`` of ``f"^{re.escape(x)}$"`` or ``"^" + re.escape(x) + "$"`` (``re.escape`` or not)."""
    if isinstance(pattern, ast.JoinedStr) and len(pattern.values) == 3:
        head, middle, tail = pattern.values
        inner = middle.value if isinstance(middle, ast.FormattedValue) and middle.format_spec is None else None
    elif isinstance(pattern, ast.BinOp) and isinstance(pattern.op, ast.Add) \
            and isinstance(pattern.left, ast.BinOp) and isinstance(pattern.left.op, ast.Add):
        head, inner, tail = pattern.left.left, pattern.left.right, pattern.right
    else:
        return None
    if inner is None or ctx.string_value(head) != "^" or ctx.string_value(tail) != "$":
        return None
    if isinstance(inner, ast.Call) and dotted_name(inner.func) in mongo.REGEX_ESCAPES and len(inner.args) == 1:
        return inner.args[0]
    return inner


def _compared_value(expr: ast.expr, ctx: Context) -> Optional[Value]:
    if not isinstance(expr, ast.Dict):
        return ctx.eval(expr)
    for key, value in dict_items(expr):
        operator = ctx.string_value(key)
        if operator in mongo.EQUALITY_OPERATORS:
            return ctx.eval(value)
        if operator in mongo.MEMBERSHIP_OPERATORS:
            return ctx.eval_element(value)
    return None


def stored_document_keys(expr: Optional[ast.expr], entity: str, ctx: Context) -> List[Key]:
    """Fields an update stores: ``{"$set": {...}}`` or a replacement document."""
    expr = ctx.resolve(expr) if expr is not None else None
    if not isinstance(expr, ast.Dict):
        return []
    keys: List[Key] = []
    for key, value in dict_items(expr):
        name = ctx.string_value(key)
        if name in mongo.SET_OPERATORS:
            keys += document_fields(value, entity, ctx)
        elif name is not None and not name.startswith("$"):
            keys.append(Key(entity, name, ctx.eval(value)))
    return keys


def document_fields(expr: ast.expr, entity: str, ctx: Context,
                    comprehension: Optional[ast.expr] = None) -> List[Key]:
    expr = ctx.resolve(expr)
    if not isinstance(expr, ast.Dict):
        return []
    keys = []
    for key, element in dict_items(expr):
        name = ctx.string_value(key)
        if name is not None and not name.startswith("$"):
            value = (ctx.eval_in_comprehension(comprehension, element) if comprehension is not None
                     else ctx.eval(element))
            keys.append(Key(entity, name, value))
    return keys


def _update(reader: ChainReader, entity: str, filter_expr: Optional[ast.expr],
            update_expr: Optional[ast.expr], upsert: bool) -> List[Key]:
    lookups = filter_keys(filter_expr, entity, reader.ctx)
    stored = stored_document_keys(update_expr, entity, reader.ctx)
    if upsert:
        # an upsert looks the document up by the filter and inserts the filter's values
        overridden = {k.field for k in stored}
        reader.emit(READ, lookups, LOOKUP)
        reader.emit(WRITE, [k for k in lookups if k.field not in overridden], STORE)
        reader.emit(WRITE, [k for k in stored if k.field in {l.field for l in lookups}], DEFAULTS)
        reader.emit(WRITE, [k for k in stored if k.field not in {l.field for l in lookups}], STORE)
        return lookups
    reader.emit(WRITE, lookups, LOOKUP)
    reader.emit(WRITE, stored, STORE)
    return []


def recognize_collection_call(links: Sequence[Link], reader: ChainReader) -> Optional[ChainInfo]:
    method, call = links[-1]
    if call is None or not isinstance(call.func, ast.Attribute):
        return None
    ctx = reader.ctx
    args = positional_args(call)
    first = args[0] if args else keyword(call, "filter")
    if method in mongo.READS or method in mongo.UPDATES or method in mongo.DELETES:
        if first is None or not isinstance(ctx.resolve(first), ast.Dict):
            return None
    elif method not in mongo.INSERT_ONE and method not in mongo.INSERT_MANY and method not in mongo.BULK_WRITE:
        return None
    entity = collection_name(call.func.value, ctx)
    if not entity:
        return None
    info = ChainInfo(entity)
    if method in mongo.READS:
        info.lookups = filter_keys(first, entity, ctx)
        reader.emit(READ, info.lookups, LOOKUP)
        info.single_record = method == "find_one"
    elif method in mongo.UPDATES:
        second = args[1] if len(args) > 1 else (keyword(call, "update") or keyword(call, "replacement"))
        info.lookups = _update(reader, entity, first, second, is_true(keyword(call, mongo.UPSERT_KEYWORD)))
        info.single_record = method.startswith("find_one")
    elif method in mongo.DELETES:
        reader.emit(WRITE, filter_keys(first, entity, ctx), LOOKUP)
    elif method in mongo.INSERT_ONE and first is not None:
        reader.emit(WRITE, document_fields(first, entity, ctx), STORE)
    elif method in mongo.INSERT_MANY and first is not None:
        _insert_many(reader, entity, ctx.resolve(first))
    elif method in mongo.BULK_WRITE and first is not None:
        _bulk_write(reader, entity, ctx.resolve(first))
    return info


def _insert_many(reader: ChainReader, entity: str, documents: ast.expr) -> None:
    if isinstance(documents, (ast.ListComp, ast.GeneratorExp)):
        reader.emit(WRITE, document_fields(documents.elt, entity, reader.ctx, documents), STORE)
    elif isinstance(documents, (ast.List, ast.Tuple)):
        for element in documents.elts:
            reader.emit(WRITE, document_fields(unstarred(element), entity, reader.ctx), STORE)


def _bulk_write(reader: ChainReader, entity: str, operations: ast.expr) -> None:
    comprehension = operations if isinstance(operations, (ast.ListComp, ast.GeneratorExp)) else None
    if comprehension is not None:
        ops = [comprehension.elt]
    else:
        ops = [unstarred(e) for e in operations.elts] if isinstance(operations, (ast.List, ast.Tuple)) else []
    for op in ops:
        if not isinstance(op, ast.Call) or last_name(op.func) not in mongo.BULK_OPERATIONS:
            continue
        args = positional_args(op)
        if last_name(op.func) == "InsertOne":
            if args:
                reader.emit(WRITE, document_fields(args[0], entity, reader.ctx, comprehension), STORE)
            continue
        first = args[0] if args else keyword(op, "filter")
        second = args[1] if len(args) > 1 else None
        with reader.ctx.comprehension(comprehension):  # ``[UpdateOne({"url": u}, ...) for u in urls]``
            _update(reader, entity, first, second, is_true(keyword(op, mongo.UPSERT_KEYWORD)))


def recognize(chain: Chain) -> Optional[ChainInfo]:
    return recognize_collection_call(chain.links, chain.reader)


COLLECTION_METHODS = frozenset({*mongo.READS, *mongo.UPDATES, *mongo.DELETES, *mongo.INSERT_ONE, *mongo.INSERT_MANY,
                                *mongo.BULK_WRITE})

LAYER = Layer("pymongo_client", "calls of a collection's methods with filter and update documents", call=recognize,
              route=Route(last=Names(COLLECTION_METHODS)))
