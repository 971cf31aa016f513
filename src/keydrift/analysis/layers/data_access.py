"""The in-house table-helper layer, table ``frameworks/data_access.py``:
``select_one("users", {"email": e})``, ``simple_upsert(table="users", keyvalues={...},
values={...})``, ``update_row(txn, "users", {"id": i}, {"email": e})``.

Zero-config, a call is a table helper when its name carries a verb (``frameworks/data_access``),
its table is a string literal naming an identifier, and its key (or values) argument is a dict
literal of column names. Configured helpers (``[tool.keydrift] tables``) are read by the
key-flow walker with ``emit_table_access``, their arguments found where the entry says.
"""

from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from keydrift.analysis.chains import Chain, ChainInfo, ChainReader, Layer, Names, Route, mapping_fields
from keydrift.analysis.helpernames import helper_operation
from keydrift.analysis.facts import DEFAULTS, LOOKUP, READ, STORE, WRITE
from keydrift.analysis.values import last_name
from keydrift.frameworks import data_access as da


def _keyword_in(call: ast.Call, names) -> Optional[ast.expr]:
    for keyword in call.keywords:
        if keyword.arg is not None and keyword.arg in names:
            return keyword.value
    return None


def _zero_config_shape(call: ast.Call, reader: ChainReader) -> Optional[Tuple[str, List[ast.expr]]]:
    """(table, [dict arguments after the table, in order]) for a literal-table helper call."""
    ctx = reader.ctx
    table_expr = _keyword_in(call, da.TABLE_KEYWORDS)
    positional = [a for a in call.args if not isinstance(a, ast.Starred)]  # also those after a ``*args``
    after: List[ast.expr] = []
    if table_expr is None:
        # the table is the first positional string; a transaction/cursor may come before it
        for index, arg in enumerate(positional[:2]):
            if ctx.string_value(arg) is not None:
                table_expr = arg
                after = positional[index + 1:]
                break
    else:
        after = positional
    if table_expr is None:
        return None
    table = ctx.string_value(table_expr)
    if table is None or not da.TABLE_NAME.match(table):
        return None
    return table, after


def _is_dict(expr: Optional[ast.expr], reader: ChainReader) -> bool:
    if expr is None:
        return False
    resolved = reader.ctx.resolve(expr)
    return isinstance(resolved, ast.Dict) or (isinstance(resolved, ast.Call) and last_name(resolved.func) == "dict")


def recognize_table_call(call: ast.Call, reader: ChainReader) -> Optional[ChainInfo]:
    """Report the accesses of one zero-config table-helper call; None when it is not one."""
    operation = helper_operation(last_name(call.func))
    if not operation:
        return None
    shape = _zero_config_shape(call, reader)
    if shape is None:
        return None
    table, after = shape
    dicts = [a for a in after if _is_dict(a, reader)]
    keys = _keyword_in(call, da.KEY_KEYWORDS)
    values = _keyword_in(call, da.VALUE_KEYWORDS)
    if keys is None and operation in (da.SELECT, da.UPDATE, da.DELETE, da.UPSERT) and dicts:
        keys = dicts.pop(0)
    if values is None and operation in (da.INSERT, da.UPDATE, da.UPSERT) and dicts:
        values = dicts.pop(0)
    if operation == da.INSERT and values is None and keys is not None:
        keys, values = None, keys
    if not _is_dict(keys, reader) and not _is_dict(values, reader):
        return None
    return emit_table_access(reader, operation, table, keys, values)


def emit_table_access(reader: ChainReader, operation: str, table: str,
                      keys_expr: Optional[ast.expr],
                      values_expr: Optional[ast.expr]) -> ChainInfo:
    ctx = reader.ctx
    keys = mapping_fields(keys_expr, table, ctx) if keys_expr is not None else []
    values = mapping_fields(values_expr, table, ctx) if values_expr is not None else []
    info = ChainInfo(table)
    if operation == da.SELECT:
        reader.emit(READ, keys, LOOKUP)
        info.lookups = keys
    elif operation == da.INSERT:
        reader.emit(WRITE, keys + values, STORE, saves=True)
    elif operation == da.UPSERT:
        # looked up by the key columns, which are stored unless the values override them
        overridden = {k.field for k in values}
        reader.emit(READ, keys, LOOKUP)
        reader.emit(WRITE, [k for k in keys if k.field not in overridden], STORE, saves=True)
        key_fields = {k.field for k in keys}
        reader.emit(WRITE, [k for k in values if k.field in key_fields], DEFAULTS, saves=True)
        reader.emit(WRITE, [k for k in values if k.field not in key_fields], STORE, saves=True)
        info.lookups = keys
    elif operation == da.UPDATE:
        reader.emit(WRITE, keys, LOOKUP)
        reader.emit(WRITE, values, STORE)
    elif operation == da.DELETE:
        reader.emit(WRITE, keys, LOOKUP)
    return info


def recognize(chain: Chain) -> Optional[ChainInfo]:
    return recognize_table_call(chain.last_call, chain.reader) if chain.last_call is not None else None


def _is_helper_name(name: str) -> bool:
    return bool(helper_operation(name))


LAYER = Layer("data_access", "calls of helpers named by a verb with a literal table and dicts of columns",
              call=recognize, route=Route(last=Names(shape=_is_helper_name)))
