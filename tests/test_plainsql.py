"""analysis/plainsql.py: plain SQL is read as sqlglot reads it, anything else is left to sqlglot.

For every statement the grammar admits, ``parse_sql`` is not None, binds no parameter and
``select_shape`` names a table only for a SELECT with FROM; the near misses are not plain."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keydrift.analysis import plainsql
from keydrift.analysis.plainsql import binds_nothing, selects_no_table, sqlglot_release
from keydrift.analysis.sql import parse_sql, select_shape
from keydrift.frameworks.sql_words import CHECKED_SQLGLOT_RELEASES, PLAIN_FUNCTIONS, SQL_KEYWORDS

DIALECTS = ("postgres", "sqlite", "mysql")

# With a release whose keywords were not checked nothing is plain (the tests below it),
# and what these tests read as plain is left to sqlglot.
checked_release = pytest.mark.skipif(
    sqlglot_release() not in CHECKED_SQLGLOT_RELEASES,
    reason=f"sqlglot {sqlglot_release()}: its keywords are not checked (frameworks/sql_words.py)")


def assert_read_as_sqlglot_reads(sql: str) -> None:
    assert binds_nothing(sql), sql
    statement = parse_sql(sql)
    assert statement is not None, sql
    assert statement.placeholder_style == "none"
    assert all(key.param is None for key in statement.keys), (sql, statement.keys)
    shape = select_shape(sql)
    assert selects_no_table(sql) == (shape is None or not shape.table), (sql, shape)


@pytest.mark.parametrize("sql", [
    "PRAGMA journal_mode",
    "PRAGMA journal_mode=wal;",
    "PRAGMA busy_timeout = 5000;",
    "PRAGMA synchronous = 1",
    "PRAGMA main.cache_size = 2000",
    "PRAGMA table_info(users)",
    "PRAGMA table_info('users')",
    "SELECT JSON('{\"a\": \"b\"}')",
    "SELECT 1",
    "SELECT count(*) FROM users",
    "SELECT * FROM users WHERE email = 'a@example.com'",
    "SELECT rowid FROM kd_interpolated_1 WHERE snapshot_id = kd_interpolated_3",
    "select lower(email), u.name2 from app.users where id = 3 and active = 1 or u.id = u.other",
    "INSERT OR IGNORE INTO kd_interpolated_1(snapshot_id) VALUES(kd_interpolated_3)",
    "INSERT OR REPLACE INTO t VALUES (1, 'x', 2.5)",
    "INSERT INTO users (email, name2) VALUES (lower('A@example.com'), 'x')",
    "UPDATE users SET email = lower(email), seen = 1 WHERE id = 3",
    "DELETE FROM kd_interpolated_1 WHERE snapshot_id=kd_interpolated_3",
    "DELETE FROM sessions",
    "PRAGMA foreign_keys = 1; DELETE FROM t; SELECT max(id) FROM t;",
    "  \n\tSELECT 1\n  ",
])
@checked_release
def test_plain_statements_are_read_as_sqlglot_reads_them(sql):
    assert_read_as_sqlglot_reads(sql)


@pytest.mark.parametrize("sql", [
    "SELECT * FROM t WHERE a = ?",  # placeholders
    "SELECT * FROM t WHERE a = %s",
    "SELECT * FROM t WHERE a = %(a)s",
    "SELECT * FROM t WHERE a = :a",
    "SELECT * FROM t WHERE a = $1",
    "SELECT 1 -- a comment",
    "SELECT /* a comment */ 1",
    "PRAGMA select",  # keywords where a name goes
    "PRAGMA x = SELECT",
    "SELECT a FROM from",
    "SELECT a FROM t WHERE if = 1",
    "SELECT order FROM t",
    "UPDATE t SET key = 1",
    "SELECT POWER(2)",  # functions: not listed, no argument, two, nested
    "SELECT lower()",
    "SELECT coalesce(a, b)",
    "SELECT lower(upper(a))",
    "SELECT count(*, a)",
    "SELECT lower(*)",
    "PRAGMA x = 'abc",  # strings: unterminated, with a quote, a backslash, a prefix
    "SELECT 'it''s'",
    "SELECT 'a\\'b'",
    "SELECT E'x'",
    "SELECT X'ab'",
    'SELECT "a" FROM t',  # quoted identifiers
    "SELECT `a` FROM t",
    "PRAGMA cache_size = -2000",  # signs, exponents, three-part names
    "SELECT 1e5",
    "SELECT 1.",
    "SELECT a.b.c FROM t",
    "SELECT 1 FROM",  # incomplete or extra
    "SELECT",
    "PRAGMA",
    "PRAGMA x y",
    "SELECT a b FROM t",
    "SELECT *, a FROM t",
    "DELETE FROM t WHERE a",
    "DELETE FROM t WHERE a = 1 AND",
    "INSERT INTO t(a) VALUES()",
    "INSERT INTO t() VALUES(1)",
    "INSERT INTO t(t.a) VALUES(1)",
    "UPDATE t SET t.a = 1",
    "INSERT OR ROLLBACK INTO t VALUES(1)",
    "SELECT 1;;",
    ";",
    "",
    "   ",
    "SELECT a FROM t WHERE a < 1",
    "SELECT a FROM t WHERE a IN (1, 2)",
    "SELECT a FROM t JOIN u",
    "REPLACE INTO t VALUES (1)",
    "CREATE TABLE t (a)",
    "SELECT\u00a01",  # a space Python's \s knows and SQL may not
    "SELECT ä FROM t",
    "SELECT 1" + ", 1" * 1000,  # longer than the plain texts read
])
def test_near_misses_are_left_to_sqlglot(sql):
    assert not binds_nothing(sql)
    assert not selects_no_table(sql)


def test_the_installed_release_is_read_without_importing_sqlglot():
    import sqlglot

    assert sqlglot_release() == sqlglot.__version__


def test_with_a_release_whose_keywords_were_not_checked_nothing_is_plain(monkeypatch):
    monkeypatch.setattr(plainsql, "sqlglot_release", lambda: "999.0.0")
    plainsql._read.cache_clear()
    try:
        assert not binds_nothing("PRAGMA journal_mode")
        assert not selects_no_table("SELECT 1")
    finally:
        plainsql._read.cache_clear()


def test_text_that_is_no_string_is_not_plain():
    assert not binds_nothing(None)  # type: ignore[arg-type]
    assert not selects_no_table(b"SELECT 1")  # type: ignore[arg-type]


@pytest.mark.parametrize("function", sorted(PLAIN_FUNCTIONS))
@pytest.mark.parametrize("argument", ["a", "t.a", "1", "2.5", "'x'", "'{\"k\": 1}'"])
@checked_release
def test_every_plain_function_is_read_in_every_place(function, argument):
    call = f"{function}({argument})"
    assert_read_as_sqlglot_reads(f"SELECT {call}, {call}")
    assert_read_as_sqlglot_reads(f"SELECT {call} FROM t WHERE {call} = {call}")
    assert_read_as_sqlglot_reads(f"INSERT INTO t(a) VALUES({call}); UPDATE t SET a = {call} WHERE b = {call}")


def _sqlglot_keyword_words():
    from sqlglot.dialects import Dialect
    from sqlglot.tokens import Tokenizer

    words = set()
    for tokenizer in (Tokenizer, *(Dialect.get_or_raise(d).tokenizer_class for d in DIALECTS)):
        for keyword in tokenizer.KEYWORDS:
            words.update(w.upper() for w in keyword.split() if re.fullmatch(r"[A-Za-z_]\w*", w))
    return words


@checked_release
def test_every_word_of_sqlglots_keywords_is_no_name():
    assert _sqlglot_keyword_words() <= SQL_KEYWORDS


def _words_sqlglots_parser_knows():
    """Words the parsers of sqlglot's dialects compare text with, and the functions they know,
    keywords aside: a name like these is still a name."""
    import sqlglot
    from sqlglot.dialects import Dialect

    home = os.path.dirname(sqlglot.__file__)
    sources = ["parser.py", "tokens.py", "tokenizer_core.py", "dialects/dialect.py",
               *(f"{folder}/{d}.py" for folder in ("parsers", "dialects") for d in DIALECTS), "parsers/base.py"]
    words = set()
    for source in sources:
        path = os.path.join(home, source)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as handle:
                words.update(re.findall(r'"([A-Z][A-Z0-9_]*)"', handle.read()))
    for dialect in DIALECTS:
        words.update(name.upper() for name in Dialect.get_or_raise(dialect).parser_class.FUNCTIONS
                     if isinstance(name, str) and re.fullmatch(r"[A-Za-z_]\w*", name))
    return sorted(words - SQL_KEYWORDS)


_EVERY_PLACE = (
    "PRAGMA {w}.{w} = {w}; PRAGMA {w}({w}); PRAGMA {w}",
    "SELECT {w}, {w}.{w}, lower({w}) FROM {w}.{w} WHERE {w} = {w} OR {w}.{w} = 1",
    "INSERT OR IGNORE INTO {w}({w}, {w}) VALUES({w}, {w}.{w}); UPDATE {w} SET {w} = {w}, {w} = 'x' "
    "WHERE {w} = {w} AND {w} = 1; DELETE FROM {w} WHERE {w} = {w}",
)


def _read_in_every_place(words):
    for word in words:
        for template in _EVERY_PLACE:
            assert_read_as_sqlglot_reads(template.format(w=word.lower()))


@checked_release
def test_words_sqlglots_parser_knows_are_names_everywhere_a_sample():
    """One word in twelve (all of them: the integration test below, about 20 s)."""
    _read_in_every_place(_words_sqlglots_parser_knows()[::12])


@checked_release
@pytest.mark.integration
def test_words_sqlglots_parser_knows_are_names_everywhere():
    _read_in_every_place(_words_sqlglots_parser_knows())


_NAME_PARTS = st.sampled_from([word for word in (
    "a", "id", "email", "rowid", "snapshot_id", "kd_interpolated_3", "Users", "wal", "_x", "t2", "normal", "name",
    "status", "data", "url", "count", "action", "lower", "json") if word.upper() not in SQL_KEYWORDS])
_NAMES = st.builds(lambda a, b: a if b is None else f"{a}.{b}", _NAME_PARTS, st.none() | _NAME_PARTS)
_SPACE = st.sampled_from([" ", "  ", "\n", "\t", " \r\n "])
_VALUES = _NAMES | st.integers(0, 10 ** 6).map(str) | st.just("2.5") \
    | st.text(st.characters(blacklist_characters="'\\\r\n", blacklist_categories=("Cs",)), max_size=12).map(
        lambda s: f"'{s}'")
_EXPRS = _VALUES | st.builds(lambda f, v: f"{f}({v})", st.sampled_from(sorted(PLAIN_FUNCTIONS)), _VALUES) \
    | st.just("count(*)")


def _listed(items):
    return st.lists(items, min_size=1, max_size=3).map(", ".join)


_CONDITIONS = st.lists(st.builds(lambda a, b: f"{a} = {b}", _EXPRS, _EXPRS), min_size=1, max_size=3).flatmap(
    lambda parts: st.lists(st.sampled_from([" AND ", " OR ", " and "]), min_size=len(parts) - 1,
                           max_size=len(parts) - 1).map(
        lambda joins: parts[0] + "".join(j + p for j, p in zip(joins, parts[1:]))))
_WHERE = st.none() | _CONDITIONS
_STATEMENTS = st.one_of(
    st.builds(lambda n, v, how: f"PRAGMA {n}" + ("" if v is None else f" = {v}" if how else f"({v})"),
              _NAMES, st.none() | _VALUES, st.booleans()),
    st.builds(lambda items, table, where: f"SELECT {items}" + ("" if table is None else f" FROM {table}")
              + ("" if table is None or where is None else f" WHERE {where}"),
              st.just("*") | _listed(_EXPRS), st.none() | _NAMES, _WHERE),
    st.builds(lambda how, table, columns, values: f"INSERT {how}INTO {table}"
              + ("" if columns is None else f"({columns})") + f" VALUES ({values})",
              st.sampled_from(["", "OR IGNORE ", "or replace "]), _NAMES, st.none() | _listed(_NAME_PARTS), _listed(_EXPRS)),
    st.builds(lambda table, sets, where: f"UPDATE {table} SET {sets}" + ("" if where is None else f" WHERE {where}"),
              _NAMES, _listed(st.builds(lambda n, v: f"{n} = {v}", _NAME_PARTS, _EXPRS)), _WHERE),
    st.builds(lambda table, where: f"DELETE FROM {table}" + ("" if where is None else f" WHERE {where}"),
              _NAMES, _WHERE),
)


@checked_release
@settings(max_examples=150, deadline=None)
@given(st.lists(_STATEMENTS, min_size=1, max_size=3), st.booleans(), _SPACE)
def test_every_statement_of_the_grammar_is_read_as_sqlglot_reads_it(statements, closed, space):
    sql = space + ";".join(statements) + (";" if closed else "") + space
    assert_read_as_sqlglot_reads(sql)


@checked_release
def test_a_check_that_meets_only_plain_sql_does_not_import_sqlglot(tmp_path):
    (tmp_path / "store.py").write_text(textwrap.dedent('''\
        import sqlite3

        def setup(path, table):
            db = sqlite3.connect(path)
            db.execute("PRAGMA journal_mode=wal;")
            for row in db.execute("SELECT JSON('{}')"):
                print(row)
            db.execute(f"DELETE FROM {table} WHERE snapshot_id = {table}_id")
            return db
        '''))
    code = ("import sys; from keydrift.engine import check_source; from keydrift.types import Config; "
            f"check_source(open('store.py').read(), 'store.py', Config(root={str(tmp_path)!r}, cache=False)); "
            "print('sqlglot' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
