"""Recognizers for document stores (pymongo, motor) and key-value stores (redis, caches)."""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import libcst as cst

from keydrift.analysis.accesses import (
    ChainInfo,
    ChainReader,
    Context,
    Key,
    Link,
    keyword,
    positional_args,
)
from keydrift.analysis.facts import DEFAULTS, LOOKUP, READ, STORE, WRITE, Value
from keydrift.analysis.values import code, dotted_name, last_name, merge_arguments
from keydrift.frameworks import pymongo_client as mongo
from keydrift.frameworks import redis_client as kv

ANY_FIELD = "*"  # key-value stores have one key per entry


# -- documents ---------------------------------------------------------------------------------

def collection_name(receiver: cst.BaseExpression, ctx: Context) -> str:
    receiver = ctx.resolve(receiver)
    if isinstance(receiver, cst.Subscript) and len(receiver.slice) == 1:
        index = receiver.slice[0].slice
        if isinstance(index, cst.Index):
            return ctx.string_value(index.value) or ""
    if isinstance(receiver, cst.Call) and last_name(receiver.func) == "get_collection" and receiver.args:
        return ctx.string_value(receiver.args[0].value) or ""
    return last_name(receiver)


def filter_keys(expr: Optional[cst.BaseExpression], entity: str, ctx: Context) -> List[Key]:
    """``{"email": e}``, ``{"email": {"$eq": e}}``, ``{"email": {"$in": es}}``, ``{"$or": [...]}``."""
    expr = ctx.resolve(expr) if expr is not None else None
    if not isinstance(expr, cst.Dict):
        return []
    keys: List[Key] = []
    for element in expr.elements:
        if not isinstance(element, cst.DictElement):
            continue
        name = ctx.string_value(element.key)
        if name is None:
            continue
        if name in ("$or", "$and") and isinstance(element.value, (cst.List, cst.Tuple)):
            for item in element.value.elements:
                keys += filter_keys(item.value, entity, ctx)
        elif not name.startswith("$"):
            value = _compared_value(element.value, ctx)
            if value is not None:
                keys.append(Key(entity, name, value))
    return keys


def _compared_value(expr: cst.BaseExpression, ctx: Context) -> Optional[Value]:
    if not isinstance(expr, cst.Dict):
        return ctx.eval(expr)
    for element in expr.elements:
        if isinstance(element, cst.DictElement):
            operator = ctx.string_value(element.key)
            if operator in mongo.EQUALITY_OPERATORS:
                return ctx.eval(element.value)
            if operator in mongo.MEMBERSHIP_OPERATORS:
                return ctx.eval_element(element.value)
    return None


def stored_document_keys(expr: Optional[cst.BaseExpression], entity: str, ctx: Context) -> List[Key]:
    """Fields an update stores: ``{"$set": {...}}`` or a replacement document."""
    expr = ctx.resolve(expr) if expr is not None else None
    if not isinstance(expr, cst.Dict):
        return []
    keys: List[Key] = []
    for element in expr.elements:
        if not isinstance(element, cst.DictElement):
            continue
        name = ctx.string_value(element.key)
        if name in mongo.SET_OPERATORS:
            keys += document_fields(element.value, entity, ctx)
        elif name is not None and not name.startswith("$"):
            keys.append(Key(entity, name, ctx.eval(element.value)))
    return keys


def document_fields(expr: cst.BaseExpression, entity: str, ctx: Context,
                    comprehension: Optional[cst.BaseExpression] = None) -> List[Key]:
    expr = ctx.resolve(expr)
    if not isinstance(expr, cst.Dict):
        return []
    keys = []
    for element in expr.elements:
        if isinstance(element, cst.DictElement):
            name = ctx.string_value(element.key)
            if name is not None and not name.startswith("$"):
                value = (ctx.eval_in_comprehension(comprehension, element.value) if comprehension is not None
                         else ctx.eval(element.value))
                keys.append(Key(entity, name, value))
    return keys


def _is_true(expr: Optional[cst.BaseExpression]) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"


def _update(reader: ChainReader, entity: str, filter_expr: Optional[cst.BaseExpression],
            update_expr: Optional[cst.BaseExpression], upsert: bool) -> List[Key]:
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
    if call is None or not isinstance(call.func, cst.Attribute):
        return None
    ctx = reader.ctx
    args = positional_args(call)
    first = args[0] if args else keyword(call, "filter")
    if method in mongo.READS or method in mongo.UPDATES or method in mongo.DELETES:
        if first is None or not isinstance(ctx.resolve(first), cst.Dict):
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
        info.lookups = _update(reader, entity, first, second, _is_true(keyword(call, mongo.UPSERT_KEYWORD)))
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


def _insert_many(reader: ChainReader, entity: str, documents: cst.BaseExpression) -> None:
    if isinstance(documents, (cst.ListComp, cst.GeneratorExp)):
        reader.emit(WRITE, document_fields(documents.elt, entity, reader.ctx, documents), STORE)
    elif isinstance(documents, (cst.List, cst.Tuple)):
        for element in documents.elements:
            reader.emit(WRITE, document_fields(element.value, entity, reader.ctx), STORE)


def _bulk_write(reader: ChainReader, entity: str, operations: cst.BaseExpression) -> None:
    comprehension = operations if isinstance(operations, (cst.ListComp, cst.GeneratorExp)) else None
    if comprehension is not None:
        ops = [comprehension.elt]
    else:
        ops = [e.value for e in operations.elements] if isinstance(operations, (cst.List, cst.Tuple)) else []
    for op in ops:
        if not isinstance(op, cst.Call) or last_name(op.func) not in mongo.BULK_OPERATIONS:
            continue
        args = positional_args(op)
        if last_name(op.func) == "InsertOne":
            if args:
                reader.emit(WRITE, document_fields(args[0], entity, reader.ctx, comprehension), STORE)
            continue
        first = args[0] if args else keyword(op, "filter")
        second = args[1] if len(args) > 1 else None
        with reader.ctx.comprehension(comprehension):  # ``[UpdateOne({"url": u}, ...) for u in urls]``
            _update(reader, entity, first, second, _is_true(keyword(op, mongo.UPSERT_KEYWORD)))


# -- key-value stores --------------------------------------------------------------------------

def is_store(receiver: cst.BaseExpression, ctx: Context) -> bool:
    name = last_name(receiver) or dotted_name(receiver)
    if isinstance(receiver, cst.Subscript):  # caches["default"]
        name = last_name(receiver.value)
    if name and kv.STORE_NAME.search(name):
        return True
    bound = ctx.resolve(receiver)
    return isinstance(bound, cst.Call) and bool(kv.STORE_NAME.search(dotted_name(bound.func)))


def key_template(expr: cst.BaseExpression, ctx: Context) -> Tuple[str, Optional[Value]]:
    """``f"lockout:{ident}"`` -> ("lockout:{}", value of ident)."""
    expr = ctx.resolve(expr)
    parts: List[str] = []
    values: List[Value] = []
    if isinstance(expr, cst.FormattedString):
        for part in expr.parts:
            if isinstance(part, cst.FormattedStringText):
                parts.append(part.value)
            elif isinstance(part, cst.FormattedStringExpression):
                literal = ctx.string_value(part.expression)
                if literal is not None:  # f"{uid}#{suffix}" with suffix = "owners": part of the namespace
                    parts.append(literal)
                    continue
                parts.append("{}")
                values.append(ctx.eval(part.expression))
    elif isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        for side in _flatten_add(expr):
            literal = ctx.string_value(side)
            if literal is not None:
                parts.append(literal)
            else:
                parts.append("{}")
                values.append(ctx.eval(side))
    elif isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Modulo) \
            and ctx.string_value(expr.left) is not None:
        parts.append(_format_placeholders(ctx.string_value(expr.left) or ""))
        right = expr.right
        items = [e.value for e in right.elements] if isinstance(right, cst.Tuple) else [right]
        values = [ctx.eval(item) for item in items]
    else:
        literal = ctx.string_value(expr)
        if literal is not None:
            return literal, None
        return _opaque_template(expr, ctx), ctx.eval(expr)
    return "".join(parts), merge_arguments(values, code(expr))


def _opaque_template(expr: cst.BaseExpression, ctx: Context) -> str:
    """The namespace of a key built out of sight. A key made by a function
    (``_cooldown_key(user)``, ``make_key("owners", uid)``) is named by that function and its
    constant arguments: two key functions, or one generic function given two namespaces, build
    keys that never meet. Anything else is an unknown template ("{}")."""
    if not isinstance(expr, cst.Call):
        return "{}"
    callee = last_name(expr.func)
    if not callee:
        return "{}"
    arguments = []
    for arg in expr.args:
        literal = ctx.string_value(arg.value) if not arg.star else None
        arguments.append(repr(literal) if literal is not None else "{}")
    return f"{callee}({', '.join(arguments)})"


def _flatten_add(expr: cst.BaseExpression) -> List[cst.BaseExpression]:
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        return _flatten_add(expr.left) + _flatten_add(expr.right)
    return [expr]


def _format_placeholders(text: str) -> str:
    for placeholder in ("%s", "%d", "%r"):
        text = text.replace(placeholder, "{}")
    return text


def _store_key(expr: cst.BaseExpression, ctx: Context, container: str = "") -> Optional[Key]:
    template, value = key_template(expr, ctx)
    if value is None or not value.origins:
        return None
    entity = f"hash '{container}'" if container else f"cache key '{template}'"
    # the key value: what is interpolated into the template, with the steps applied to it
    return Key(entity, ANY_FIELD, Value(value.origins, value.steps, code(expr)))


def recognize_store_call(links: Sequence[Link], reader: ChainReader) -> Optional[ChainInfo]:
    method, call = links[-1]
    if call is None or not isinstance(call.func, cst.Attribute):
        return None
    ctx = reader.ctx
    if not is_store(call.func.value, ctx):
        return None
    args = positional_args(call)
    kind_position = _store_operation(method)
    if kind_position is None:
        return None
    kinds, position, member = kind_position
    if method in kv.VALUE_WRITES and len(call.args) < 2 and not any(a.star for a in call.args):
        return None  # cache.set(CacheEntry(cache_key=k, ...)): no key argument, no value
    if member:
        if len(args) <= position or not args:
            return None
        container, _ = key_template(args[0], ctx)
        key = _store_key(args[position], ctx, container)
    else:
        if not args and keyword(call, "key") is None:
            return None
        key = _store_key(args[0] if args else keyword(call, "key"), ctx)  # type: ignore[arg-type]
    if key is None:
        return None
    for kind in kinds:
        reader.emit(kind, [key], LOOKUP if kind == READ else STORE)
    return ChainInfo(key.entity)


def _store_operation(method: str) -> Optional[Tuple[Tuple[str, ...], int, bool]]:
    if method in kv.READS:
        return (READ,), kv.READS[method], False
    if method in kv.WRITES:
        return (WRITE,), kv.WRITES[method], False
    if method in kv.READ_WRITES:
        return (READ, WRITE), 0, False
    if method in kv.MEMBER_READS:
        return (READ,), kv.MEMBER_READS[method], True
    if method in kv.MEMBER_WRITES and kv.MEMBER_WRITES[method] >= 0:
        return (WRITE,), kv.MEMBER_WRITES[method], True
    return None


def subscript_access(node: cst.Subscript, ctx: Context) -> Optional[Key]:
    """``cache[key]`` on a mapping store (cachetools and friends)."""
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return None
    if not is_store(node.value, ctx):
        return None
    key = _store_key(node.slice[0].slice.value, ctx)
    if key is not None and key.entity == "cache key '{}'":
        # a bare key into a mapping: the mapping is the namespace (``self._user_cache[text]`` and
        # ``self._submissions_cache[code]`` hold different things)
        key = Key(f"mapping '{code(node.value)}'", key.field, key.value)
    return key
