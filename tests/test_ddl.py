"""SQL DDL read as KD3 facts (analysis/ddl.py): CHECK constraints that hold a key to its
canonical form. (The rest of the DDL reading is tested in test_kd3_kd4.py.)"""

import textwrap

import pytest

from keydrift.analysis.ddl import ddl_items, looks_like_ddl
from keydrift.engine import check_source
from keydrift.types import Config


def canonical(text):
    return {(table, columns) for kind, table, columns, _ in ddl_items(text) if kind == "canonical"}


@pytest.mark.parametrize("ddl, expected", [
    ("CREATE TABLE t (email TEXT UNIQUE, CHECK (email = lower(email)))", {("t", ("email",))}),
    ("CREATE TABLE t (email TEXT UNIQUE CHECK (LOWER(email) = email))", {("t", ("email",))}),
    ("CREATE TABLE t (h TEXT UNIQUE, CONSTRAINT c CHECK ((h = upper(trim(h))) AND h <> ''))", {("t", ("h",))}),
    ("ALTER TABLE t ADD CONSTRAINT c CHECK (slug = lower(slug))", {("t", ("slug",))}),
])
def test_check_equal_to_its_canonical_form_canonicalizes_the_column(ddl, expected):
    assert canonical(ddl) == expected


@pytest.mark.parametrize("ddl", [
    "CREATE TABLE t (email TEXT UNIQUE, CHECK (email <> lower(email)))",
    "CREATE TABLE t (email TEXT UNIQUE, CHECK (email = lower(email) OR email LIKE 'x%'))",
    "CREATE TABLE t (email TEXT UNIQUE, CHECK (email = lower(login)))",
    "CREATE TABLE t (email TEXT UNIQUE, CHECK (lower(email) = lower(email)))",
    "CREATE TABLE t (email TEXT UNIQUE, CHECK (email = email COLLATE NOCASE))",
    "CREATE TABLE t (email TEXT UNIQUE, CHECK (length(email) < 255))",
])
def test_other_checks_hold_nothing(ddl):
    assert canonical(ddl) == set()


def test_an_alter_table_adding_only_a_check_is_read():
    assert looks_like_ddl("ALTER TABLE t ADD CONSTRAINT c CHECK (slug = lower(slug))")


def test_check_in_one_string_covers_the_unique_index_in_another():
    text = textwrap.dedent('''
        def setup(conn):
            conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT, login TEXT)")
            conn.execute("ALTER TABLE users ADD CONSTRAINT c CHECK (email = lower(email))")
            conn.execute("CREATE UNIQUE INDEX ix ON users (email)")
            conn.execute("CREATE UNIQUE INDEX ix2 ON users (login)")
    ''')
    found = [(f.code, f.line) for f in check_source(text, "app/db.py", Config(cache=False)) if f.code.startswith("KD3")]
    assert found == [("KD302", 6)]
