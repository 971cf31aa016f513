"""DB-API 2.0 drivers (sqlite3, psycopg, MySQLdb, asyncpg, aiosqlite) and SQLAlchemy text()."""

from __future__ import annotations

from typing import Dict, FrozenSet

# cursor.execute(sql, params) / conn.execute(sql, params): one parameter set.
EXECUTE_METHODS: FrozenSet[str] = frozenset({"execute", "fetch", "fetchrow", "fetchval"})
# cursor.executemany(sql, seq_of_params): the parameters are a sequence of rows.
EXECUTE_MANY_METHODS: FrozenSet[str] = frozenset({"executemany"})
# asyncpg passes parameters positionally after the SQL: conn.fetch(sql, a, b).
VARARG_PARAMETER_METHODS: FrozenSet[str] = frozenset({"fetch", "fetchrow", "fetchval"})
# Wrappers around SQL text that keep it SQL: text("...").
SQL_TEXT_WRAPPERS: FrozenSet[str] = frozenset({"text", "sql.SQL", "SQL"})

# SQL functions on a placeholder or column, as transformation kinds.
SQL_FUNCTION_KINDS: Dict[str, str] = {
    "lower": "case", "upper": "case", "trim": "whitespace", "ltrim": "whitespace",
    "rtrim": "whitespace", "btrim": "whitespace",
}
# Column wrappers meaning a case-insensitive comparison.
CASE_INSENSITIVE_COLUMN_FUNCS: FrozenSet[str] = frozenset({"lower", "upper", "ilike"})
