"""The key-value layer (redis, Django's and Flask's caches, cachetools mappings), table
``frameworks/redis_client.py``: ``cache.get(f"lockout:{ident}")``, ``r.hset(name, key, v)``,
``self._cache[key]``. The entity is the key's constant template, the value what is
interpolated into it."""

from __future__ import annotations

import ast
from typing import List, Optional, Sequence, Tuple

from keydrift.analysis.tree import arguments_in_order, unstarred
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
    fstring_parts,
    keyword,
    positional_args,
    subscript_index,
)
from keydrift.analysis.facts import LOOKUP, READ, STORE, WRITE, Value
from keydrift.analysis.values import code, dotted_name, last_name, merge_arguments
from keydrift.frameworks import redis_client as kv
from keydrift.patterns import lazy

ANY_FIELD = "*"  # key-value stores have one key per entry


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
    elif _format_call(expr, ctx):  # "lockout:{}".format(ident)
        parts.append(_format_fields(ctx.string_value(expr.func.value) or ""))  # type: ignore[attr-defined]
        values = [ctx.eval(unstarred(a)) for a in expr.args] + [ctx.eval(k.value) for k in expr.keywords]  # type: ignore[attr-defined]
    elif isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mod) \
            and ctx.string_value(expr.left) is not None:
        parts.append(_format_placeholders(ctx.string_value(expr.left) or ""))
        right = expr.right
        items = [unstarred(e) for e in right.elts] if isinstance(right, ast.Tuple) else [right]
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
    for arg in arguments_in_order(expr):  # keyword arguments too, by their value
        if isinstance(arg, ast.Starred) or (isinstance(arg, ast.keyword) and arg.arg is None):
            literal = None
        else:
            literal = ctx.string_value(arg.value if isinstance(arg, ast.keyword) else arg)
        arguments.append(repr(literal) if literal is not None else "{}")
    return f"{callee}({', '.join(arguments)})"



def _flatten_add(expr: ast.expr) -> List[ast.expr]:
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        return _flatten_add(expr.left) + _flatten_add(expr.right)
    return [expr]


def _format_call(expr: ast.expr, ctx: Context) -> bool:
    """``"lockout:{}".format(ident)``: a literal's ``format`` given the values to interpolate."""
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "format" \
        and ctx.string_value(expr.func.value) is not None and bool(expr.args or expr.keywords)


def _format_fields(text: str) -> str:
    """``str.format``'s replacement fields (``{}``, ``{0}``, ``{name!r:>10}``) as ``{}``; the
    doubled braces that stand for a brace kept as they are written."""
    kept = text.replace("{{", "\0").replace("}}", "\1")
    return _REPLACEMENT_FIELD.sub("{}", kept).replace("\0", "{{").replace("\1", "}}")


_REPLACEMENT_FIELD = lazy(r"\{[^{}]*\}")


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
    index = subscript_index(node)
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


def recognize(chain: Chain) -> Optional[ChainInfo]:
    return recognize_store_call(chain.links, chain.reader)


# The methods ``_store_operation`` knows: only chains ending in one are asked about.
STORE_METHODS = frozenset({*kv.READS, *kv.WRITES, *kv.READ_WRITES, *kv.MEMBER_READS, *kv.MEMBER_WRITES})

LAYER = Layer("redis_client", "reads and writes of a store's entries by key", call=recognize,
              route=Route(last=Names(STORE_METHODS)))
