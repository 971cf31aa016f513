"""analysis/sql.py: key columns, roles, placeholders and funcs of DB-API SQL strings."""

from __future__ import annotations

import subprocess
import sys

import pytest

from keydrift.analysis.sql import SqlKey, SqlStatement, parse_sql


def stmt(sql: str) -> SqlStatement:
    result = parse_sql(sql)
    assert result is not None, sql
    return result


def brief(sql: str):
    """(role, table, column, param) of every key, in order."""
    return [(k.role, k.table, k.column, k.param) for k in stmt(sql).keys]


def only_key(sql: str) -> SqlKey:
    keys = stmt(sql).keys
    assert len(keys) == 1, keys
    return keys[0]


# --- placeholder styles --------------------------------------------------------------


@pytest.mark.parametrize(
    "sql, style, params",
    [
        ("SELECT * FROM t WHERE a = ? AND b = ?", "qmark", [0, 1]),
        ("SELECT * FROM t WHERE a = %s AND b = %s", "format", [0, 1]),
        ("SELECT * FROM t WHERE a = %(first)s AND b = %(second)s", "pyformat", ["first", "second"]),
        ("SELECT * FROM t WHERE a = :first AND b = :second", "named", ["first", "second"]),
        ("SELECT * FROM t WHERE a = $1 AND b = $2", "numeric", [0, 1]),
        ("SELECT * FROM t WHERE a = :1 AND b = :2", "numeric", [0, 1]),
        ("SELECT * FROM t WHERE a = 'x' AND b = 2", "none", [None, None]),
    ],
)
def test_placeholder_styles(sql, style, params):
    result = stmt(sql)
    assert result.placeholder_style == style
    assert [(k.role, k.table, k.column) for k in result.keys] == [
        ("read", "t", "a"), ("read", "t", "b"),
    ]
    assert [k.param for k in result.keys] == params


def test_numeric_placeholders_keep_their_number_not_their_position():
    assert brief("UPDATE t SET a = $2 WHERE url = $1") == [
        ("store", "t", "a", 1), ("identify", "t", "url", 0),
    ]


def test_reused_named_placeholder():
    assert [k.param for k in stmt("SELECT * FROM t WHERE a = :u OR b = :u").keys] == ["u", "u"]


def test_placeholders_inside_string_literals_are_ignored():
    assert brief("SELECT * FROM t WHERE note = '?' AND url = ?") == [
        ("read", "t", "note", None), ("read", "t", "url", 0),
    ]


def test_placeholders_inside_comments_identifiers_and_dollar_strings_are_ignored():
    sql = (
        "SELECT $$ ? $$, $tag$ %s $tag$, 'it''s ?', \"odd?name\" FROM t -- WHERE x = ?\n"
        "WHERE /* y = ? */ url = ?"
    )
    assert brief(sql) == [("read", "t", "url", 0)]


def test_format_style_double_percent_is_a_literal_percent():
    keys = stmt("SELECT * FROM t WHERE a %% 2 = 0 AND b LIKE 'x%%' AND url = %s").keys
    assert [(k.column, k.param, k.column_funcs) for k in keys] == [
        ("a", None, ("mod",)), ("b", None, ()), ("url", 0, ()),
    ]


def test_postgres_casts_are_not_named_placeholders():
    key = only_key("SELECT * FROM t WHERE url::text = :url::text")
    assert (key.column, key.param, key.column_funcs, key.value_funcs) == ("url", "url", (), ())


# --- statement kinds -----------------------------------------------------------------


def test_select_where_is_read():
    result = stmt("SELECT id FROM urls WHERE url = ?")
    assert result.kind == "select"
    assert brief("SELECT id FROM urls WHERE url = ?") == [("read", "urls", "url", 0)]


def test_insert_values_are_store_keys():
    result = stmt("INSERT INTO urls (url, score) VALUES (?, ?)")
    assert result.kind == "insert"
    assert brief("INSERT INTO urls (url, score) VALUES (?, ?)") == [
        ("store", "urls", "url", 0), ("store", "urls", "score", 1),
    ]


def test_insert_value_funcs_and_literals():
    keys = stmt("INSERT INTO t (a, b, c) VALUES (%(a)s, lower(%(b)s), 'x')").keys
    assert [(k.column, k.param, k.value_funcs) for k in keys] == [
        ("a", "a", ()), ("b", "b", ("lower",)), ("c", None, ()),
    ]


def test_insert_multi_row_reads_first_row_only():
    assert brief("INSERT INTO t (a, b) VALUES (?, ?), (?, ?)") == [
        ("store", "t", "a", 0), ("store", "t", "b", 1),
    ]


def test_insert_select_stores_nothing_but_its_where_is_read():
    result = stmt("INSERT INTO t (a) SELECT a FROM u WHERE u.url = ?")
    assert result.kind == "insert"
    assert brief("INSERT INTO t (a) SELECT a FROM u WHERE u.url = ?") == [("read", "u", "url", 0)]


def test_insert_without_column_list_or_with_one_values_placeholder_stores_nothing():
    assert stmt("INSERT INTO t VALUES (?, ?)").keys == ()
    assert stmt("INSERT INTO t (a, b) VALUES %s").keys == ()  # psycopg2 execute_values


def test_insert_value_with_subquery_is_not_a_store_but_counts_its_placeholders():
    keys = brief("INSERT INTO t (a, b) VALUES ((SELECT id FROM u WHERE u.url = ?), ?)")
    assert sorted(keys) == [("read", "u", "url", 0), ("store", "t", "b", 1)]


@pytest.mark.parametrize(
    "sql",
    ["INSERT OR REPLACE INTO t (url) VALUES (?)", "REPLACE INTO t (url) VALUES (?)",
     "insert or replace into T (URL) values (?)"],
)
def test_replace_counts_as_insert(sql):
    result = stmt(sql)
    assert result.kind == "insert"
    assert brief(sql) == [("store", "t", "url", 0)]


def test_on_conflict_do_update():
    sql = (
        "INSERT INTO pages (url, score) VALUES (?, ?) "
        "ON CONFLICT (url) DO UPDATE SET url = excluded.url, score = ?, seen = lower(excluded.seen)"
    )
    result = stmt(sql)
    assert result.conflict_columns == ("url",)
    conflict = [k for k in result.keys if k.role == "conflict-set"]
    assert [(k.table, k.column, k.param, k.from_excluded, k.value_funcs) for k in conflict] == [
        ("pages", "url", None, "url", ()),
        ("pages", "score", 2, "", ()),
        ("pages", "seen", None, "seen", ("lower",)),
    ]


def test_on_conflict_do_nothing_has_conflict_columns_only():
    result = stmt("INSERT INTO t (url) VALUES (?) ON CONFLICT (url) DO NOTHING")
    assert result.conflict_columns == ("url",)
    assert brief("INSERT INTO t (url) VALUES (?) ON CONFLICT (url) DO NOTHING") == [
        ("store", "t", "url", 0),
    ]


def test_on_conflict_set_from_existing_row_is_not_a_key():
    sql = "INSERT INTO t (url, n) VALUES (?, 1) ON CONFLICT (url) DO UPDATE SET n = t.n + 1"
    assert [k for k in stmt(sql).keys if k.role == "conflict-set"] == []


def test_mysql_on_duplicate_key_update():
    sql = (
        "INSERT INTO t (url, score) VALUES (%s, %s) "
        "ON DUPLICATE KEY UPDATE url = VALUES(url), score = %s"
    )
    result = stmt(sql)
    assert result.kind == "insert"
    assert result.conflict_columns == ()
    assert [(k.role, k.column, k.param, k.from_excluded) for k in result.keys] == [
        ("store", "url", 0, ""), ("store", "score", 1, ""),
        ("conflict-set", "url", None, "url"), ("conflict-set", "score", 2, ""),
    ]


def test_mysql_row_alias_on_duplicate_key_update():
    sql = "INSERT INTO t (url) VALUES (%s) AS new ON DUPLICATE KEY UPDATE url = new.url"
    conflict = [k for k in stmt(sql).keys if k.role == "conflict-set"]
    assert [(k.column, k.from_excluded) for k in conflict] == [("url", "url")]


def test_update_set_and_where_follow_textual_order():
    result = stmt("UPDATE t SET a = ? WHERE url = ?")
    assert result.kind == "update"
    assert brief("UPDATE t SET a = ? WHERE url = ?") == [
        ("store", "t", "a", 0), ("identify", "t", "url", 1),
    ]


def test_update_set_from_own_column_is_not_a_store():
    assert brief("UPDATE t SET n = n + 1, m = ? WHERE url = ?") == [
        ("store", "t", "m", 0), ("identify", "t", "url", 1),
    ]


def test_update_from_other_table_is_read_there():
    sql = "UPDATE t AS x SET a = ? FROM u WHERE x.id = u.id AND u.k = ? AND x.url = ?"
    assert brief(sql) == [
        ("store", "t", "a", 0), ("read", "u", "k", 1), ("identify", "t", "url", 2),
    ]


def test_delete_where_is_identify():
    result = stmt("DELETE FROM t WHERE url = :url")
    assert result.kind == "delete"
    assert brief("DELETE FROM t WHERE url = :url") == [("identify", "t", "url", "url")]


def test_delete_with_subquery_reads_the_subquery_table():
    assert brief("DELETE FROM t WHERE id IN (SELECT id FROM u WHERE u.url = ?)") == [
        ("read", "u", "url", 0),
    ]


def test_other_statements_have_no_keys():
    result = stmt("CREATE TABLE t (url TEXT PRIMARY KEY)")
    assert (result.kind, result.keys, result.placeholder_style) == ("other", (), "none")


def test_several_statements_are_all_read():
    script = "BEGIN; UPDATE t SET a = ? WHERE url = ?; INSERT INTO log (url) VALUES (?); COMMIT"
    result = stmt(script)
    assert result.kind == "update"
    assert [(k.role, k.table, k.column, k.param) for k in result.keys] == [
        ("store", "t", "a", 0), ("identify", "t", "url", 1), ("store", "log", "url", 2),
    ]


# --- tables and aliases --------------------------------------------------------------


def test_alias_resolves_to_table():
    assert brief("SELECT * FROM urls u WHERE u.url = ?") == [("read", "urls", "url", 0)]


def test_schema_qualifier_quotes_and_case_are_dropped():
    sql = 'SELECT * FROM "Public"."Urls" AS U WHERE U."Url" = ?'
    assert brief(sql) == [("read", "urls", "url", 0)]
    assert brief("SELECT * FROM `shop`.`Urls` WHERE `URL` = ?") == [("read", "urls", "url", 0)]


def test_join_columns_go_to_their_tables():
    sql = (
        "SELECT * FROM urls u JOIN scores s ON s.url_id = u.id AND s.kind = ? "
        "WHERE u.url = ? AND name = ?"
    )
    assert brief(sql) == [
        ("read", "scores", "kind", 0), ("read", "urls", "url", 1), ("read", "urls", "name", 2),
    ]


def test_anti_join_and_not_exists_subquery():
    sql = (
        "SELECT a.id FROM a LEFT JOIN b ON b.url = a.url "
        "WHERE b.id IS NULL AND NOT EXISTS (SELECT 1 FROM r WHERE r.url = ?)"
    )
    assert brief(sql) == [("read", "r", "url", 0)]


def test_exists_subquery_with_unqualified_column_uses_inner_table():
    sql = "SELECT * FROM t WHERE EXISTS (SELECT 1 FROM r WHERE url = ?) AND t.k = ?"
    assert brief(sql) == [("read", "r", "url", 0), ("read", "t", "k", 1)]


def test_cte_and_derived_table_pass_through_to_base_table():
    assert brief("WITH x AS (SELECT * FROM pages) SELECT * FROM x WHERE x.url = ?") == [
        ("read", "pages", "url", 0),
    ]
    assert brief("SELECT * FROM (SELECT url FROM pages) s WHERE s.url = ?") == [
        ("read", "pages", "url", 0),
    ]


def test_cte_that_transforms_the_column_keeps_its_own_name():
    sql = "WITH c AS (SELECT lower(url) AS url FROM pages) SELECT * FROM c WHERE url = ?"
    assert brief(sql) == [("read", "c", "url", 0)]


def test_union_reads_both_sides():
    assert brief("SELECT id FROM a WHERE a.x = ? UNION SELECT id FROM b WHERE y = ?") == [
        ("read", "a", "x", 0), ("read", "b", "y", 1),
    ]


# --- comparisons ---------------------------------------------------------------------


def test_lower_on_both_sides():
    key = only_key("SELECT * FROM urls WHERE lower(url) = lower(?)")
    assert (key.column, key.param, key.column_funcs, key.value_funcs) == (
        "url", 0, ("lower",), ("lower",),
    )


def test_value_funcs_innermost_first():
    key = only_key("SELECT * FROM t WHERE url = trim(rtrim(?, '/'))")
    assert key.value_funcs == ("rtrim", "trim")
    assert key.column_funcs == ()


def test_column_funcs_innermost_first_and_normalized_names():
    key = only_key("SELECT * FROM t WHERE upper(ltrim(lcase(url))) = ?")
    assert key.column_funcs == ("lower", "ltrim", "upper")


def test_either_operand_order():
    key = only_key("SELECT * FROM t WHERE lower(?) = url")
    assert (key.column, key.param, key.value_funcs) == ("url", 0, ("lower",))


def test_double_equals_and_null_safe_equality():
    assert [k.column for k in stmt("SELECT * FROM t WHERE a == ? AND b <=> ?").keys] == ["a", "b"]
    assert [k.column for k in stmt("SELECT * FROM t WHERE a IS NOT DISTINCT FROM ?").keys] == ["a"]


def test_concat_cast_and_collate():
    keys = stmt(
        "SELECT * FROM t WHERE a = ? || '/' AND b = CAST(? AS TEXT) AND c = ? COLLATE NOCASE"
    ).keys
    assert [(k.column, k.param, k.value_funcs) for k in keys] == [
        ("a", 0, ("concat",)), ("b", 1, ()), ("c", 2, ("collate nocase",)),
    ]


def test_in_list_gives_one_key_per_placeholder():
    assert brief("SELECT * FROM t WHERE url IN (?, ?, ?)") == [
        ("read", "t", "url", 0), ("read", "t", "url", 1), ("read", "t", "url", 2),
    ]


def test_sequence_parameters_in_and_any():
    assert brief("SELECT * FROM t WHERE a IN %s AND b = ANY(%s)") == [
        ("read", "t", "a", 0), ("read", "t", "b", 1),
    ]


def test_in_subquery_is_not_a_key_on_the_outer_column():
    assert brief("SELECT * FROM t WHERE url IN (SELECT url FROM u WHERE u.k = ?)") == [
        ("read", "u", "k", 0),
    ]


def test_like_and_ilike():
    like, ilike, escaped = stmt(
        "SELECT * FROM t WHERE a LIKE ? AND lower(b) ILIKE ? AND c LIKE ? ESCAPE '!'"
    ).keys
    assert (like.column, like.column_funcs, like.value_funcs) == ("a", (), ())
    assert (ilike.column, ilike.param, ilike.column_funcs, ilike.value_funcs) == (
        "b", 1, ("lower", "ilike"), (),
    )
    assert (escaped.column, escaped.param) == ("c", 2)


def test_non_equality_comparisons_are_ignored():
    sql = (
        "SELECT * FROM t WHERE a < ? AND b > ? AND c BETWEEN ? AND ? AND d != ? AND e <> ? "
        "AND f IS ? AND g >= ? AND h = ?"
    )
    assert brief(sql) == [("read", "t", "h", 8)]


def test_negated_comparisons_are_ignored():
    sql = (
        "SELECT * FROM t WHERE NOT a = ? AND b NOT IN (?, ?) AND c NOT LIKE ? "
        "AND e NOT ILIKE ? AND d = ?"
    )
    assert brief(sql) == [("read", "t", "d", 5)]


def test_or_alternatives_are_still_reads():
    assert brief("SELECT * FROM t WHERE url = ? OR (alt_url = ? AND k = ?)") == [
        ("read", "t", "url", 0), ("read", "t", "alt_url", 1), ("read", "t", "k", 2),
    ]


def test_comparisons_outside_predicates_are_ignored():
    sql = "SELECT CASE WHEN a = ? THEN 1 END FROM t WHERE CASE WHEN b = ? THEN 1 END = 1 AND c = ?"
    assert brief(sql) == [("read", "t", "c", 2)]


def test_row_value_equality_pairs_columns():
    assert brief("SELECT * FROM t WHERE (a, b) = (?, ?)") == [
        ("read", "t", "a", 0), ("read", "t", "b", 1),
    ]


def test_ambiguous_sides_are_not_keys():
    sql = "SELECT * FROM t WHERE coalesce(a, b) = ? AND c = coalesce(?, ?) AND d = e AND ? = ?"
    assert stmt(sql).keys == ()


def test_having_is_read():
    assert brief("SELECT url, count(*) FROM t GROUP BY url HAVING url = ?") == [
        ("read", "t", "url", 0),
    ]


# --- robustness and caching -----------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["", "   ", "hello world", "update me later please", "with love, bob", "select from where",
     "SELECT 'unterminated", "-- just a comment", "/*" * 5000, "-- --" * 5000 + "!", "((((("],
)
def test_not_sql_or_unparseable_returns_none(text):
    assert parse_sql(text) is None


def test_non_string_returns_none():
    assert parse_sql(None) is None  # type: ignore[arg-type]
    assert parse_sql(["SELECT 1"]) is None  # type: ignore[arg-type]


def test_very_long_sql_does_not_crash():
    sql = "SELECT * FROM t WHERE " + " AND ".join(f"c{i} = ?" for i in range(1500))
    keys = stmt(sql).keys
    assert len(keys) == 1500
    assert (keys[-1].column, keys[-1].param) == ("c1499", 1499)


def test_deeply_nested_sql_does_not_raise():
    sql = "SELECT * FROM t WHERE a = " + "(" * 3000 + "?" + ")" * 3000
    result = parse_sql(sql)
    assert result is None or result.kind == "select"


def test_results_are_cached():
    sql = "SELECT * FROM cached_table WHERE url = ?"
    assert parse_sql(sql) is parse_sql(sql)


def test_results_are_immutable():
    key = only_key("SELECT * FROM t WHERE url = ?")
    with pytest.raises(Exception):
        key.column = "other"  # type: ignore[misc]


def test_importing_the_module_does_not_import_sqlglot():
    code = "import sys, keydrift.analysis.sql; print('sqlglot' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_fallback_to_command_prints_nothing(capfd):
    parse_sql("SELECT 1; VACUUM INTO 'x' WITH garbage ???")
    assert capfd.readouterr().err == ""


def test_a_statement_read_for_its_keys_and_its_rows_is_parsed_once():
    """``cursor.execute(sql)`` in a loop: ``parse_sql`` (its keys) and ``select_shape`` (its rows)
    read the same trees; sqlglot parses the text once."""
    from keydrift.analysis import sql

    text = "SELECT url, title FROM pages_read_twice WHERE id = %s"
    sql._parse.cache_clear()
    statement = parse_sql(text)
    shape = sql.select_shape(text)
    assert statement is not None and [(k.table, k.column) for k in statement.keys] == [("pages_read_twice", "id")]
    assert shape is not None and shape.columns == (("pages_read_twice", "url"), ("pages_read_twice", "title"))
    assert (sql._parse.cache_info().misses, sql._parse.cache_info().hits) == (1, 1)


# --- what the text alone tells: no parse, no sqlglot import ------------------------------------

from keydrift.analysis.sql import binds_no_value, select_shape, selects_no_table  # noqa: E402

# SQL that binds no parameter, in the shapes real code executes (literals, interpolated names,
# upserts taking the inserted row's values, placeholders only inside literals and comments).
WITHOUT_PARAMETERS = [
    "PRAGMA journal_mode=wal;",
    "SELECT JSON('{\"a\": \"b\"}')",
    "SELECT rowid FROM kd_interpolated_1 WHERE snapshot_id = kd_interpolated_3",
    "INSERT OR IGNORE INTO tags(name) VALUES('python')",
    "INSERT INTO t (url, n) VALUES ('a', 1) ON CONFLICT (url) DO UPDATE SET n = excluded.n",
    "INSERT INTO t (url, n) VALUES ('a', 1) ON DUPLICATE KEY UPDATE n = VALUES(n)",
    "UPDATE feeds SET stale = 1 WHERE url = 'x?y'",
    "DELETE FROM t WHERE a = ':named' -- and b = ?",
    "SELECT * FROM t WHERE price::text = '1' /* %s */",
    "  (SELECT 1)",
]
WITH_PARAMETERS = [
    "SELECT * FROM t WHERE a = ?",
    "SELECT * FROM t WHERE a = %s",
    "SELECT * FROM t WHERE a = %(a)s",
    "SELECT * FROM t WHERE a = :a",
    "SELECT * FROM t WHERE a = $1",
    "SELECT * FROM t WHERE a = :1",
    "INSERT INTO t (url) VALUES (?) ON CONFLICT (url) DO UPDATE SET n = excluded.n",
]


@pytest.mark.parametrize("sql", WITHOUT_PARAMETERS)
def test_sql_binding_no_parameter_has_no_key_naming_a_value(sql):
    assert binds_no_value(sql)
    statement = parse_sql(sql)
    assert statement is not None and all(key.param is None for key in statement.keys), statement


@pytest.mark.parametrize("sql", WITH_PARAMETERS + ["no SQL at all", "", "url = ?", "{}"])
def test_sql_binding_a_parameter_or_no_sql_is_parsed(sql):
    assert not binds_no_value(sql)


@pytest.mark.parametrize("sql", [
    "PRAGMA journal_mode", "INSERT INTO t SELECT * FROM u", "UPDATE t SET a = 1 FROM u WHERE t.id = u.id",
    "DELETE FROM t WHERE id IN (SELECT id FROM u)", "CREATE TABLE t (a int)", "SELECT 1", "SELECT JSON('{}')",
    "select lower('A') as x", "not sql", "BEGIN; SELECT * FROM t",
])
def test_rows_known_to_come_from_no_table(sql):
    assert selects_no_table(sql)
    shape = select_shape(sql)
    assert shape is None or not shape.table


@pytest.mark.parametrize("sql", [
    "SELECT url FROM feeds", "select * from t where a = ?", "WITH x AS (SELECT 1) SELECT * FROM x",
    "(SELECT a FROM t)", "SELECT 1 AS from_date", "VALUES (1)",
])
def test_rows_that_may_come_from_a_table_are_left_to_sqlglot(sql):
    assert not selects_no_table(sql)


def test_binding_no_value_is_told_by_the_text_whether_or_not_sqlglot_reads_it():
    # an execute() of it is DB-API SQL reporting no key, with any sqlglot release
    from keydrift.analysis.sql import _parse

    text = "SELECT FROM WHERE (("
    assert binds_no_value(text) and _parse(text) is None


def test_a_check_meeting_only_sql_without_parameters_does_not_import_sqlglot(tmp_path):
    (tmp_path / "store.py").write_text(
        "def setup(conn, table):\n"
        "    conn.execute('PRAGMA journal_mode=wal;')\n"
        "    conn.execute(f'INSERT OR IGNORE INTO {table}(name) VALUES(x)')\n"
        "    for row in conn.execute('SELECT JSON(1)'):\n"
        "        print(row)\n")
    code = ("import sys; from keydrift.engine import check_source; from keydrift.types import Config; "
            f"check_source(open('store.py').read(), 'store.py', Config(root={str(tmp_path)!r}, cache=False)); "
            "print('sqlglot' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
