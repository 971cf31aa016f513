"""Recognizers for document stores (pymongo, motor) and key-value stores (redis, caches)."""

from __future__ import annotations

import ast
import io
import tokenize
from typing import List, Optional, Sequence, Tuple

from keydrift.analysis.accesses import (
    ChainInfo,
    ChainReader,
    Context,
    Key,
    Link,
    dict_items,
    element_value,
    fstring_parts,
    keyword,
    positional_args,
)
from keydrift.analysis.facts import DEFAULTS, LOOKUP, READ, STORE, WRITE, Value
from keydrift.analysis.tree import all_argument_values, is_true, segment
from keydrift.analysis.values import code, dotted_name, last_name, merge_arguments
from keydrift.frameworks import pymongo_client as mongo
from keydrift.frameworks import redis_client as kv

ANY_FIELD = "*"  # key-value stores have one key per entry


# -- documents ---------------------------------------------------------------------------------

def collection_name(receiver: ast.expr, ctx: Context) -> str:
    receiver = ctx.resolve(receiver)
    index = _index(receiver)
    if index is not None:
        return ctx.string_value(index) or ""
    if isinstance(receiver, ast.Call) and last_name(receiver.func) == "get_collection" \
            and (receiver.args or receiver.keywords):
        return ctx.string_value(all_argument_values(receiver)[0]) or ""  # the first argument, whatever its form
    return last_name(receiver)


def _index(node: ast.expr) -> Optional[ast.expr]:
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
                keys += filter_keys(element_value(item), entity, ctx)
        elif not name.startswith("$"):
            value = _compared_value(element, ctx)
            if value is not None:
                keys.append(Key(entity, name, value))
    return keys


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
            reader.emit(WRITE, document_fields(element_value(element), entity, reader.ctx), STORE)


def _bulk_write(reader: ChainReader, entity: str, operations: ast.expr) -> None:
    comprehension = operations if isinstance(operations, (ast.ListComp, ast.GeneratorExp)) else None
    if comprehension is not None:
        ops = [comprehension.elt]
    else:
        ops = [element_value(e) for e in operations.elts] if isinstance(operations, (ast.List, ast.Tuple)) else []
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


# -- key-value stores --------------------------------------------------------------------------

def is_store(receiver: ast.expr, ctx: Context) -> bool:
    name = last_name(receiver) or dotted_name(receiver)
    if isinstance(receiver, ast.Subscript):  # caches["default"]
        name = last_name(receiver.value)
    if name and kv.STORE_NAME.search(name):
        return True
    bound = ctx.resolve(receiver)
    return isinstance(bound, ast.Call) and bool(kv.STORE_NAME.search(dotted_name(bound.func)))


def key_template(expr: ast.expr, ctx: Context) -> Tuple[str, Optional[Value]]:
    """``f"lockout:{ident}"`` -> ("lockout:{}", value of ident)."""
    expr = ctx.resolve(expr)
    parts: List[str] = []
    values: List[Value] = []
    template = fstring_parts(expr)
    if template is not None:
        for part in template:
            if isinstance(part, str):
                parts.append(part)
            else:
                literal = ctx.string_value(part.value)
                if literal is not None:  # f"{uid}#{suffix}" with suffix = "owners": part of the namespace
                    parts.append(literal)
                    continue
                parts.append("{}")
                values.append(ctx.eval(part.value))
    elif isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        for side in _flatten_add(expr):
            literal = ctx.string_value(side)
            if literal is not None:
                parts.append(literal)
            else:
                parts.append("{}")
                values.append(ctx.eval(side))
    elif isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mod) \
            and ctx.string_value(expr.left) is not None:
        parts.append(_format_placeholders(ctx.string_value(expr.left) or ""))
        right = expr.right
        items = [element_value(e) for e in right.elts] if isinstance(right, ast.Tuple) else [right]
        values = [ctx.eval(item) for item in items]
    else:
        literal = ctx.string_value(expr)
        if literal is not None:
            return literal, None
        return _opaque_template(expr, ctx), ctx.eval(expr)
    return "".join(parts), merge_arguments(values, code(expr))


def _opaque_template(expr: ast.expr, ctx: Context) -> str:
    """The namespace of a key built out of sight. A key made by a function
    (``_cooldown_key(user)``, ``make_key("owners", uid)``) is named by that function and its
    constant arguments: two key functions, or one generic function given two namespaces, build
    keys that never meet. Anything else is an unknown template ("{}")."""
    if not isinstance(expr, ast.Call):
        return "{}"
    callee = last_name(expr.func)
    if not callee:
        return "{}"
    arguments = []
    for arg in _arguments_in_order(expr):  # keyword arguments too, by their value
        if isinstance(arg, ast.Starred) or (isinstance(arg, ast.keyword) and arg.arg is None):
            literal = None
        else:
            literal = ctx.string_value(arg.value if isinstance(arg, ast.keyword) else arg)
        arguments.append(repr(literal) if literal is not None else "{}")
    return f"{callee}({', '.join(arguments)})"


def _arguments_in_order(call: ast.Call) -> List[ast.AST]:
    """The call's arguments in source order: positional ones, ``*spread`` (``ast.Starred``) and
    keyword ones (``ast.keyword``, ``**spread`` with ``arg`` None), as libcst's ``Call.args``."""
    return sorted([*call.args, *call.keywords], key=lambda a: (a.lineno, a.col_offset))


def _flatten_add(expr: ast.expr) -> List[ast.expr]:
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        return _flatten_add(expr.left) + _flatten_add(expr.right)
    return [expr]


def _format_placeholders(text: str) -> str:
    for placeholder in ("%s", "%d", "%r"):
        text = text.replace(placeholder, "{}")
    return text


def _store_key(expr: ast.expr, ctx: Context, container: str = "") -> Optional[Key]:
    template, value = key_template(expr, ctx)
    if value is None or not value.origins:
        return None
    entity = f"hash '{container}'" if container else f"cache key '{template}'"
    # the key value: what is interpolated into the template, with the steps applied to it
    return Key(entity, ANY_FIELD, Value(value.origins, value.steps, code(expr)))


def recognize_store_call(links: Sequence[Link], reader: ChainReader) -> Optional[ChainInfo]:
    method, call = links[-1]
    if call is None or not isinstance(call.func, ast.Attribute):
        return None
    ctx = reader.ctx
    if not is_store(call.func.value, ctx):
        return None
    args = positional_args(call)
    kind_position = _store_operation(method)
    if kind_position is None:
        return None
    kinds, position, member = kind_position
    if method in kv.VALUE_WRITES and len(call.args) + len(call.keywords) < 2 \
            and not any(isinstance(a, ast.Starred) for a in call.args) and all(k.arg for k in call.keywords):
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


def subscript_access(node: ast.Subscript, ctx: Context) -> Optional[Key]:
    """``cache[key]`` on a mapping store (cachetools and friends)."""
    index = _index(node)
    if index is None:
        return None
    if not is_store(node.value, ctx):
        return None
    key = _store_key(index, ctx)
    if key is not None and key.entity == "cache key '{}'":
        # a bare key into a mapping: the mapping is the namespace (``self._user_cache[text]`` and
        # ``self._submissions_cache[code]`` hold different things)
        key = Key(f"mapping '{code(node.value)}'", key.field, key.value)
    return key
