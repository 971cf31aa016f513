"""The DB-API SQL layer (sqlite3, psycopg, MySQLdb, asyncpg, aiosqlite, SQLAlchemy ``text()``),
table ``frameworks/dbapi_sql.py``: ``cursor.execute(sql, params)`` maps the SQL's key columns
to the Python values passed (the SQL itself is read by ``analysis/sql.py``)."""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Sequence, Tuple, Union

from keydrift.analysis.tree import unstarred
from keydrift.analysis.chains import (
    Chain,
    ChainInfo,
    ChainReader,
    Key,
    Layer,
    Names,
    Route,
    dict_items,
    fstring_parts,
    keyword_args,
    positional_args,
)
from keydrift.analysis.facts import DEFAULTS, LOOKUP, READ, STORE, WRITE, Step, Value
from keydrift.analysis.values import code, last_name
from keydrift.frameworks import dbapi_sql as dbapi

ROLES = {
    "read": (READ, LOOKUP),
    "identify": (WRITE, LOOKUP),
    "store": (WRITE, STORE),
    "conflict-set": (WRITE, DEFAULTS),
}


def _sql_text(node: ast.expr, reader: ChainReader) -> Optional[str]:
    node = reader.ctx.resolve(node)
    if isinstance(node, ast.Call) and last_name(node.func) in {w.rsplit(".", 1)[-1] for w in dbapi.SQL_TEXT_WRAPPERS}:
        args = positional_args(node)
        return _sql_text(args[0], reader) if args else None
    template = fstring_parts(node)
    if template is not None:
        return _template_text(template, reader)
    return reader.ctx.string_value(node)


def _template_text(template: List[Union[str, ast.FormattedValue]], reader: ChainReader) -> Optional[str]:
    """``f"UPDATE t SET {column} = ? WHERE url = ?"``: the SQL with each interpolation as an
    identifier of its own (a column or table name chosen at run time is no key keydrift can
    name; the placeholders still bind the parameters passed)."""
    parts = []
    for index, part in enumerate(template):
        if isinstance(part, str):
            parts.append(part)
            continue
        known = reader.ctx.string_value(part.value)  # a module constant: the table name
        parts.append(known if known is not None and known.isidentifier() else f"kd_interpolated_{index}")
    text = "".join(parts)
    return text if "{" not in text and "}" not in text else None


class Parameters:
    """The values bound to placeholders, by position and by name."""

    def __init__(self, positional: Sequence[ast.expr], named: Dict[str, ast.expr],
                 comprehension: Optional[ast.expr] = None) -> None:
        self.positional = list(positional)
        self.named = named
        self.comprehension = comprehension

    def expression(self, ref: Union[int, str, None]) -> Optional[ast.expr]:
        if isinstance(ref, int):
            return self.positional[ref] if ref < len(self.positional) else None
        if isinstance(ref, str):
            return self.named.get(ref)
        return None


def _parameters(call: ast.Call, many: bool, reader: ChainReader) -> Optional[Parameters]:
    args = positional_args(call)
    if len(args) > 2 and not many:  # asyncpg style: conn.fetch(sql, a, b)
        return Parameters(args[1:], {})
    params = args[1] if len(args) > 1 else None
    if params is None:
        for name, value in keyword_args(call):
            if name in ("parameters", "params", "args", "vars", "values"):
                params = value
    if params is None:
        return None
    params = reader.ctx.resolve(params)
    comprehension = None
    if many:
        if isinstance(params, (ast.ListComp, ast.GeneratorExp)):
            comprehension, params = params, params.elt
        elif isinstance(params, (ast.List, ast.Tuple)) and params.elts:
            params = unstarred(params.elts[0])
        else:
            return None
    return _bind(params, reader, comprehension)


def _bind(params: ast.expr, reader: ChainReader, comprehension: Optional[ast.expr]) -> Optional[Parameters]:
    if isinstance(params, (ast.Tuple, ast.List)):
        return Parameters([unstarred(e) for e in params.elts], {}, comprehension)
    if isinstance(params, ast.Dict):
        named = {}
        for key, value in dict_items(params):
            name = reader.ctx.string_value(key)
            if name is not None:
                named[name] = value
        return Parameters([], named, comprehension)
    if isinstance(params, ast.Call) and last_name(params.func) == "dict":
        return Parameters([], dict(keyword_args(params)), comprehension)
    return Parameters([params], {}, comprehension)


_COLLECTION_CALLS = frozenset({"tuple", "list", "set", "frozenset", "sorted"})


def _value(expr: ast.expr, params: Parameters, reader: ChainReader) -> Value:
    if params.comprehension is not None:
        return reader.ctx.eval_in_comprehension(params.comprehension, expr)
    resolved = reader.ctx.resolve(expr)
    if isinstance(resolved, (ast.ListComp, ast.GeneratorExp, ast.SetComp)) or (
            isinstance(resolved, ast.Call) and last_name(resolved.func) in _COLLECTION_CALLS):
        return reader.ctx.eval_element(resolved)  # IN %s / = ANY(%s): each element is a key
    return reader.ctx.eval(expr)


def execute_accesses(call: ast.Call, many: bool, reader: ChainReader) -> bool:
    """Report the key accesses of one execute call; False when it is not recognizable SQL."""
    args = positional_args(call)
    if not args:
        return False
    text = _sql_text(args[0], reader)
    if not text:
        return False
    from keydrift.analysis.sql import binds_no_value, parse_sql

    if binds_no_value(text):  # DB-API SQL without a key naming a value: nothing to parse for
        return True
    statement = parse_sql(text)
    if statement is None:
        return False
    params = _parameters(call, many, reader)
    stored: Dict[Tuple[str, str], Value] = {}
    emitted: List[Tuple[str, Key, str]] = []
    for key in statement.keys:
        value = _key_value(key, params, stored, reader)
        if value is None:
            continue
        kind, role = ROLES.get(key.role, (None, None))
        if kind is None:
            continue
        absorbs = frozenset({"case"}) if set(key.column_funcs) & dbapi.CASE_INSENSITIVE_COLUMN_FUNCS else frozenset()
        item = Key(key.table, key.column, value, absorbs)
        if key.role == "store":
            stored[(key.table, key.column)] = value
        emitted.append((kind, item, role))
    for (table, column), value in stored.items():
        if column in statement.conflict_columns:
            emitted.append((READ, Key(table, column, value), LOOKUP))
    for kind, item, role in emitted:
        reader.emit(kind, [item], role)
    return True


def _key_value(key, params: Optional[Parameters], stored: Dict[Tuple[str, str], Value],
               reader: ChainReader) -> Optional[Value]:
    if getattr(key, "from_excluded", ""):
        return stored.get((key.table, key.from_excluded))
    if params is None:
        return None
    expr = params.expression(key.param)
    if expr is None:
        return None
    value = _value(expr, params, reader)
    for func in key.value_funcs:
        kind = dbapi.SQL_FUNCTION_KINDS.get(func)
        if kind is not None:
            value = value.then(Step(kind, f"SQL {func}()"), f"{func}({code(expr)})")
    return value


def recognize_execute(chain: Chain) -> Optional[ChainInfo]:
    """``cursor.execute(sql, params)`` / ``executemany`` / asyncpg's ``conn.fetch(sql, a, b)``."""
    method, call = chain.last, chain.last_call
    if call is None or not (method in dbapi.EXECUTE_METHODS or method in dbapi.EXECUTE_MANY_METHODS):
        return None
    if execute_accesses(call, method in dbapi.EXECUTE_MANY_METHODS, chain.reader):
        return ChainInfo("")
    return None


LAYER = Layer("dbapi_sql", "execute() of SQL text with its parameters", call=recognize_execute,
              route=Route(last=Names(dbapi.EXECUTE_METHODS | dbapi.EXECUTE_MANY_METHODS)))
