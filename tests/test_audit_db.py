"""`keydrift audit-db` against real SQLite databases: the post's scenario (a Django-style and an
SQLAlchemy-style project), the repair plan applied, bad input, and the pieces (normal forms,
table mapping, settings)."""

import ast
import hashlib
import os
import sqlite3
import sys
import textwrap

import pytest

pytest.importorskip("sqlalchemy", reason="keydrift[db] is not installed")

from keydrift.audit import connect, forms, settings, tables  # noqa: E402
from keydrift.audit.model import AuditError  # noqa: E402
from keydrift.cli import main  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
import audit_scenario as scenario  # noqa: E402
from audit_scenario import audit, audit_json, column  # noqa: E402

FIXTURES = scenario.FIXTURES  # replaced by a temporary copy for each test (see below)
PROJECTS = ["django_project", "sqlalchemy_project"]


@pytest.fixture(autouse=True)
def fixture_copies(tmp_path_factory, monkeypatch):
    monkeypatch.setitem(globals(), "FIXTURES", scenario.project_copies(tmp_path_factory.mktemp("projects")))


@pytest.fixture
def database(tmp_path):
    path = tmp_path / "app.db"
    connection = sqlite3.connect(path)
    scenario.build(connection)
    connection.close()
    return path


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- the post's scenario ----------------------------------------------------------------------

@pytest.mark.parametrize("project", PROJECTS)
def test_scenario_groups_rows_and_shares(capsys, database, project):
    code, document, _ = audit_json(capsys, f"sqlite:///{database}", os.path.join(FIXTURES, project))
    assert code == 1 and document["drift"] is True
    domains = column(document, "domains.url")
    assert domains["kind"] == "url" and domains["computed_in"] == "python"
    assert (domains["rows"], domains["groups"], domains["rows_in_groups"]) == (7, 2, 5)
    assert domains["invalid_values"] == 1  # "not a url at all" is its own key
    groups = {g["normal_form"]: g for g in domains["worst_groups"]}
    assert {k: len(g["spellings"]) for k, g in groups.items()} == scenario.EXPECTED_DOMAIN_GROUPS
    assert {s["value"] for s in groups["https://example.com/"]["spellings"]} == {
        "example.com", "example.com/", "https://Example.com"}
    assert domains["worst_groups"][0]["normal_form"] == "https://example.com/"  # worst first
    by_via = {(r["table"], r["column"], r["via"]): r for r in domains["references"]}
    foreign = by_via[("audit_results", "domain_id", "foreign key")]
    assert (foreign["rows"], foreign["total"]) == (scenario.DRIFT_RESULTS, scenario.ALL_RESULTS)
    assert foreign["share"] == pytest.approx(31 / 36, abs=1e-6)
    same_key = by_via[("audit_results", "url", "same key")]
    assert same_key["rows"] == 31  # results stored under a spelling of a drifting domain
    accounts = column(document, "sites_account.email")
    assert accounts["computed_in"] == "database"
    assert (accounts["rows"], accounts["null_rows"], accounts["groups"], accounts["rows_in_groups"]) == (5, 2, 1, 2)
    assert accounts["worst_groups"][0]["normal_form"] == "alice@x.com"


def test_key_columns_come_from_the_code(capsys, database):
    _, document, _ = audit_json(capsys, f"sqlite:///{database}", os.path.join(FIXTURES, "django_project"))
    sources = {f"{c['table']}.{c['column']}": " ".join(c["sources"]) for c in document["columns"]}
    assert "models.URLField(unique=True)" in sources["domains.url"]
    assert "read and written by key in sites/jobs.py" in sources["audit_results.url"]
    # Account has no db_table: Django's default <app_label>_<model>
    assert "sites_account.email" in sources


def test_text_report_shows_worst_groups_and_share(capsys, database):
    code, out, _ = audit(capsys, f"sqlite:///{database}", os.path.join(FIXTURES, "django_project"),
                         "--only", "domains.url")
    assert code == 1
    assert "2 keys written in more than one spelling, 5 rows in them (71.4% of the table)" in out
    assert out.index("'https://example.com/': 3 spellings") < out.index("'https://shop.test/a': 2 spellings")
    assert "audit_results.domain_id -> domains.id: 31 of 36 rows (86.1%)" in out


@pytest.mark.parametrize("project", PROJECTS)
def test_plan_repairs_and_a_second_audit_finds_nothing(capsys, database, project, tmp_path):
    plan = tmp_path / "repair.sql"
    before = digest(database)
    code, _, _ = audit(capsys, f"sqlite:///{database}", os.path.join(FIXTURES, project), "--plan", str(plan))
    assert code == 1
    assert digest(database) == before  # the audit never writes
    sql = plan.read_text()
    assert sql.count("BEGIN;") == 1 and sql.rstrip().endswith("COMMIT;")
    apply_plan(database, sql)
    connection = sqlite3.connect(database)
    urls = sorted(u for (u,) in connection.execute("SELECT url FROM domains"))
    assert urls == ["https://example.com/", "https://shop.test/a", "not a url at all", "other.org"]
    # the earliest example.com row (id 2) and every audit result are kept, re-pointed
    assert connection.execute("SELECT id FROM domains WHERE url = 'https://example.com/'").fetchone() == (2,)
    assert connection.execute("SELECT count(*) FROM audit_results").fetchone() == (scenario.ALL_RESULTS,)
    assert connection.execute("SELECT count(*) FROM audit_results WHERE domain_id = 2").fetchone() == (28,)
    orphans = connection.execute("SELECT count(*) FROM audit_results r LEFT JOIN domains d ON d.id = r.domain_id "
                                 "WHERE d.id IS NULL").fetchone()
    assert orphans == (0,)
    emails = sorted(e for (e,) in connection.execute("SELECT email FROM sites_account WHERE email IS NOT NULL"))
    assert emails == [" bob@y.org", "alice@x.com"]
    connection.close()
    code, document, _ = audit_json(capsys, f"sqlite:///{database}", os.path.join(FIXTURES, project))
    assert code == 0 and document["drift"] is False
    assert all(c["groups"] == 0 for c in document["columns"])
    # running the plan a second time is harmless
    state = dump(database)
    apply_plan(database, sql)
    assert dump(database) == state


def apply_plan(path, sql):
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA foreign_keys = ON")
    connection.isolation_level = None  # the plan has its own BEGIN/COMMIT
    connection.executescript(sql)
    connection.close()


def dump(path):
    connection = sqlite3.connect(path)
    tables = ["domains", "audit_results", "sites_account"]
    state = {t: sorted(map(repr, connection.execute(f"SELECT * FROM {t}"))) for t in tables}
    connection.close()
    return state


def test_unique_index_advice_for_sql_forms(capsys, database, tmp_path):
    plan = tmp_path / "repair.sql"
    audit(capsys, f"sqlite:///{database}", os.path.join(FIXTURES, "django_project"), "--plan", str(plan),
          "--only", "sites_account.email")
    sql = plan.read_text()
    assert 'CREATE UNIQUE INDEX IF NOT EXISTS sites_account_email_normal_key ON sites_account ((lower(trim(email))))' in sql
    apply_plan(database, sql)
    connection = sqlite3.connect(database)
    with pytest.raises(sqlite3.IntegrityError):
        connection.execute("INSERT INTO sites_account VALUES (9, 'ALICE@x.com', NULL)")
    connection.close()


def test_clean_database_exits_zero(capsys, tmp_path):
    path = sqlite_database(tmp_path / "clean.db", "CREATE TABLE domains (id INTEGER PRIMARY KEY, url TEXT UNIQUE)",
                           "INSERT INTO domains VALUES (?, ?)",
                           [(1, "https://a.test"), (2, "https://a.test/b"), (3, "https://A.test/B")])
    project = sqlalchemy_project(tmp_path / "p", "Domain", "domains", "url")
    code, document, _ = audit_json(capsys, f"sqlite:///{path}", project)
    assert code == 0
    # the path keeps its case: /b and /B are two keys
    assert column(document, "domains.url")["groups"] == 0


def sqlite_database(path, create, insert, rows):
    connection = sqlite3.connect(path)
    connection.execute(create)
    connection.executemany(insert, rows)
    connection.commit()
    connection.close()
    return path


def sqlalchemy_project(root, model, table, *unique_columns):
    fields = "".join(f"    {name} = Column(String, unique=True)\n" for name in unique_columns)
    return write_project(root, models=(
        "from sqlalchemy import Column, Integer, String\n"
        f"class {model}(Base):\n    __tablename__ = {table!r}\n    id = Column(Integer, primary_key=True)\n{fields}"))


def write_project(root, models, pyproject="", extra=None):
    os.makedirs(root / "app", exist_ok=True)
    (root / "pyproject.toml").write_text(textwrap.dedent(pyproject) or "[project]\nname = 'p'\n")
    (root / "app" / "__init__.py").write_text("")
    (root / "app" / "models.py").write_text(textwrap.dedent(models))
    for name, text in (extra or {}).items():
        (root / "app" / name).write_text(textwrap.dedent(text))
    return str(root)


# -- read-only ----------------------------------------------------------------------------------

def test_sqlite_connection_is_read_only(database):
    engine, _ = connect.open_engine(f"sqlite:///{database}")
    with engine.connect() as connection:
        with pytest.raises(Exception, match="readonly"):
            connection.exec_driver_sql("DELETE FROM domains")


# -- bad input ----------------------------------------------------------------------------------

@pytest.mark.parametrize("url, message", [
    ("sqlite:///{tmp}/missing.db", "no such database file"),
    ("oracle://scott:tiger@db/orcl", "unsupported database 'oracle'"),
    ("not a url", "not a database URL"),
    ("sqlite://", "name a database file"),
])
def test_bad_urls_are_one_line(capsys, tmp_path, url, message):
    code, out, err = audit(capsys, url.format(tmp=tmp_path), os.path.join(FIXTURES, "django_project"))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err and err.startswith("keydrift: error: ")


def test_password_is_never_printed(capsys):
    code, out, err = audit(capsys, "mysql://app:s3cret@db/app", os.path.join(FIXTURES, "django_project"))
    assert code == 2 and "s3cret" not in out + err and "app:***@db" in err


def test_url_from_environment(capsys, database, monkeypatch):
    monkeypatch.setenv("KEYDRIFT_DATABASE_URL", f"sqlite:///{database}")
    code, out, _ = audit(capsys, os.path.join(FIXTURES, "django_project"))
    assert code == 1 and "domains.url" in out
    monkeypatch.delenv("KEYDRIFT_DATABASE_URL")
    code, _, err = audit(capsys)
    assert code == 2 and "KEYDRIFT_DATABASE_URL" in err


def test_database_without_the_tables(capsys, tmp_path):
    path = tmp_path / "empty.db"
    sqlite3.connect(path).execute("CREATE TABLE unrelated (x INTEGER)").connection.close()
    code, out, err = audit(capsys, f"sqlite:///{path}", os.path.join(FIXTURES, "django_project"))
    assert code == 2 and out == ""
    assert "skipped domains.url: no table 'domains' in the database" in err
    assert "nothing to audit" in err.splitlines()[-1]


def test_non_text_null_and_invalid_values(capsys, tmp_path):
    path = sqlite_database(tmp_path / "odd.db", "CREATE TABLE pages (id INTEGER PRIMARY KEY, url TEXT, slug INTEGER)",
                           "INSERT INTO pages (url, slug) VALUES (?, ?)", [
                               (None, 1), (None, 2), ("http://[::1", 3), ("https://x.test:99999/", 4), ("", 5),
                               ("https://x.test/", 6), ("HTTPS://X.TEST", 7), ("::::", 8)])
    project = sqlalchemy_project(tmp_path / "p", "Page", "pages", "url", "slug")
    code, document, err = audit_json(capsys, f"sqlite:///{path}", project)
    assert code == 1
    pages = column(document, "pages.url")
    assert pages["null_rows"] == 2 and pages["invalid_values"] == 4
    assert [g["normal_form"] for g in pages["worst_groups"]] == ["https://x.test/"]
    assert document["skipped"] == [{"column": "pages.slug", "reason": "not a text column (INTEGER)"}]


def test_bad_configuration_is_one_line(capsys, database, tmp_path):
    project = write_project(tmp_path / "p", models="x = 1\n", pyproject="""
        [tool.keydrift.audit]
        columns = ["domains"]
    """)
    code, _, err = audit(capsys, f"sqlite:///{database}", project)
    assert code == 2 and "'columns' entry 'domains' is not like 'table.column'" in err


def test_configured_columns_and_references(capsys, database, tmp_path):
    project = write_project(tmp_path / "p", models="x = 1\n", pyproject="""
        [tool.keydrift.audit]
        columns = ["domains.url"]
        references = { "audit_results.url" = "domains.url" }
        url-steps = ["case", "slash"]
    """)
    code, document, _ = audit_json(capsys, f"sqlite:///{database}", project)
    domains = column(document, "domains.url")
    assert domains["normal_form"] == "URL: case, slash"
    # without the scheme step, example.com and https://Example.com are two keys
    assert {g["normal_form"] for g in domains["worst_groups"]} == {"example.com/", "https://shop.test/a"}
    assert {(r["table"], r["via"]) for r in domains["references"]} >= {("audit_results", "same key")}


def test_project_normalizer(capsys, database, tmp_path):
    project = write_project(tmp_path / "p", models="x = 1\n", pyproject="""
        [tool.keydrift.audit]
        columns = ["domains.url"]
    """, extra={"keys.py": """
        def normalize(url):
            if " " in url:
                raise ValueError("not a URL")
            return url.lower().split("://")[-1].rstrip("/")
    """})
    code, document, _ = audit_json(capsys, f"sqlite:///{database}", project, "--normalizer", "app.keys:normalize")
    domains = column(document, "domains.url")
    assert domains["normal_form"] == "the project's app.keys:normalize"
    assert domains["invalid_values"] == 1
    assert {g["normal_form"] for g in domains["worst_groups"]} == {"example.com", "shop.test/a"}
    code, _, err = audit(capsys, f"sqlite:///{database}", project, "--normalizer", "app.nothere:f")
    assert code == 2 and "cannot import app.nothere" in err


# -- the pieces ----------------------------------------------------------------------------------

@pytest.mark.parametrize("raw, normal", [
    ("example.com", "https://example.com/"),
    ("example.com/", "https://example.com/"),
    ("https://Example.com", "https://example.com/"),
    ("HTTP://WWW.Example.com:80/Path/", "http://example.com/Path"),
    ("https://example.com:443/a?q=B", "https://example.com/a?q=B"),
    ("https://example.com:8443/", "https://example.com:8443/"),
    ("https://user@Example.com/", "https://user@example.com/"),
    ("  https://example.com/a/  ", "https://example.com/a"),
    ("https://[::1]:8080/x", "https://[::1]:8080/x"),
    ("https://www.com", "https://www.com/"),
    ("https://example.com//", "https://example.com/"),
])
def test_url_normal_form(raw, normal):
    assert forms.normalize_url(raw) == normal


@pytest.mark.parametrize("raw", ["", "not a url at all", "http://[::1", "https://x.test:99999", "::::", "https://"])
def test_values_without_url_normal_form(raw):
    with pytest.raises(forms.NotNormalizable):
        forms.normalize_url(raw)


def test_url_steps_are_options():
    only_slash = frozenset({"slash"})
    assert forms.normalize_url("https://Example.com/a/", only_slash) == "https://Example.com/a"
    assert forms.url_form(only_slash).sql == "rtrim({}, '/')"  # computed by the database
    assert forms.normalize_url("https://www.a.test:443/", frozenset({"case"})) == "https://www.a.test:443/"
    with pytest.raises(AuditError, match="unknown step 'fragment'"):
        forms.parse_url_steps("case,fragment")


@pytest.mark.parametrize("source, module, expected", [
    ("from django.db import models\nclass Page(models.Model):\n    url = models.URLField(db_column='address')\n"
     "    site = models.ForeignKey('Site', on_delete=models.CASCADE)\n",
     "shop.models", {"Page": ("shop_page", {"url": "address", "site": "site_id"})}),
    ("from django.db import models\nclass Page(models.Model):\n    class Meta:\n        app_label = 'cms'\n",
     "shop.models.pages", {"Page": ("cms_page", {})}),
    ("from django.db import models\nclass Base(models.Model):\n    class Meta:\n        abstract = True\n",
     "shop.models", {}),
    ("import peewee\nclass UserAccount(peewee.Model):\n    email = peewee.CharField(column_name='mail')\n",
     "app.db", {"UserAccount": ("useraccount", {"email": "mail"})}),
    ("import peewee\nclass UserAccount(peewee.Model):\n    class Meta:\n        table_name = 'accounts'\n",
     "app.db", {"UserAccount": ("accounts", {})}),
    ("import peewee\nclass UserAccount(peewee.Model):\n    class Meta:\n        legacy_table_names = False\n",
     "app.db", {"UserAccount": ("user_account", {})}),
    ("from sqlalchemy import Column, String, Table\nclass Page(Base):\n    __table__ = Table('pages', metadata)\n",
     "app.models", {"Page": ("pages", {})}),
    ("from sqlalchemy.orm import mapped_column\nclass Page(Base):\n    __tablename__ = 'pages'\n"
     "    url: Mapped[str] = mapped_column('page_url', unique=True)\n",
     "app.models", {"Page": ("pages", {"url": "page_url"})}),
    ("class Helper(object):\n    pass\n", "app.util", {}),
    ("from flask_sqlalchemy import SQLAlchemy\nfrom sqlalchemy import String\nclass UserAccount(db.Model):\n"
     "    email = db.Column(String, unique=True)\n", "app.models", {"UserAccount": ("user_account", {})}),
    ("from sqlmodel import Field, SQLModel\nclass Hero(SQLModel, table=True):\n    name: str = Field(unique=True)\n",
     "app.models", {"Hero": ("hero", {})}),
])
def test_model_tables(source, module, expected):
    found = {m.name: (m.table, m.columns) for m in tables.model_tables(ast.parse(source), module)}
    assert found == expected


def test_masked_urls():
    assert connect.masked("postgresql://app:p@ss:w0rd@db:5432/x") == "postgresql://app:***@db:5432/x"
    assert connect.masked("sqlite:///app.db") == "sqlite:///app.db"


def test_settings_reject_unknown_keys(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text("[tool.keydrift.audit]\ncolumn = ['a.b']\n")
    with pytest.raises(AuditError, match="unknown key 'column'"):
        settings.load_settings(str(pyproject))
    pyproject.write_text("[tool.keydrift.audit]\ncolumns = ['a.b=colour']\n")
    with pytest.raises(AuditError, match="unknown kind 'colour'"):
        settings.load_settings(str(pyproject))


def test_audit_table_does_not_disturb_check(tmp_path, capsys):
    project = write_project(tmp_path / "p", models="x = 1\n", pyproject="""
        [tool.keydrift]
        exclude = ["build"]
        [tool.keydrift.audit]
        columns = ["domains.url"]
    """)
    assert main(["check", project, "--no-cache"]) == 0


def test_progress_bar():
    from keydrift.audit.audit import bar

    assert bar(0, 200, 10) == "[----------]   0%"
    assert bar(100, 200, 10) == "[#####-----]  50%"
    assert bar(300, 200, 10) == "[##########] 100%"
    assert bar(0, 0, 10) == "[##########] 100%"


def test_progress_is_shown_on_a_terminal_only(capsys, database, monkeypatch):
    import io

    from keydrift.output import progress

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setattr(progress, "DELAY", -1.0)
    monkeypatch.setattr(progress, "INTERVAL", 0.0)
    assert main(["audit-db", f"sqlite:///{database}", os.path.join(FIXTURES, "django_project"),
                 "--only", "domains.url"]) == 1
    assert "rows of domains.url" in terminal.getvalue() and "100%" in terminal.getvalue()
    assert "[4/4] " in terminal.getvalue()  # the scan of the project shows its files too
    assert main(["audit-db", f"sqlite:///{database}", os.path.join(FIXTURES, "django_project"),
                 "--only", "domains.url", "--quiet"]) == 1
    assert terminal.getvalue().count("rows of domains.url") == 1  # nothing more with --quiet


def test_not_a_database_file(capsys, tmp_path):
    path = tmp_path / "garbage.db"
    path.write_bytes(b"this is not a database" * 100)
    code, out, err = audit(capsys, f"sqlite:///{path}", os.path.join(FIXTURES, "django_project"))
    assert code == 2 and err.count("\n") == 1 and "file is not a database" in err


def test_blobs_and_numbers_in_text_columns(capsys, tmp_path):
    path = sqlite_database(tmp_path / "blobs.db", "CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT, url TEXT)",
                           "INSERT INTO users (email, url) VALUES (?, ?)",
                           [(b"\xff\xfe", b"\xff"), (b"\xff\xfe", 12), ("A@b.c", "https://a.test/"),
                            ("a@b.c", "https://A.test"), (7, 7.5)])
    project = write_project(tmp_path / "p", models="x = 1\n", pyproject="""
        [tool.keydrift.audit]
        columns = ["users.email", "users.url"]
    """)
    code, document, _ = audit_json(capsys, f"sqlite:///{path}", project, "--plan", str(tmp_path / "plan.sql"))
    assert code == 1
    assert column(document, "users.email")["groups"] == 1
    urls = column(document, "users.url")
    assert urls["groups"] == 1 and urls["invalid_values"] == 1  # the blob (SQLite stores 12 as text "12")


def test_raw_sql_keys_are_found(capsys, tmp_path):
    path = sqlite_database(tmp_path / "raw.db", "CREATE TABLE members (id INTEGER PRIMARY KEY, email TEXT)",
                           "INSERT INTO members (email) VALUES (?)", [("Bo@x.org",), ("bo@x.org",), ("cy@x.org",)])
    project = write_project(tmp_path / "p", models="x = 1\n", extra={"store.py": """
        def remember(db, email):
            row = db.execute("SELECT id FROM members WHERE email = ?", (email,)).fetchone()
            if row is None:
                db.execute("INSERT INTO members (email) VALUES (?)", (email.lower(),))
    """})
    code, document, _ = audit_json(capsys, f"sqlite:///{path}", project)
    members = column(document, "members.email")
    assert code == 1 and members["groups"] == 1
    assert any("read and written by key in app/store.py" in s for s in members["sources"])


def test_missing_driver_extra(capsys, database, monkeypatch):
    monkeypatch.setitem(sys.modules, "sqlalchemy", None)
    code, _, err = audit(capsys, f"sqlite:///{database}", os.path.join(FIXTURES, "django_project"))
    assert code == 2 and "pip install 'keydrift[db]'" in err and err.count("\n") == 1
    monkeypatch.undo()
    monkeypatch.setitem(sys.modules, "psycopg", None)
    code, _, err = audit(capsys, "postgresql://app:pw@127.0.0.1:1/app", os.path.join(FIXTURES, "django_project"))
    assert code == 2 and "needs psycopg 3" in err and "pw@" not in err


def keyed_by_url_project(tmp_path):
    return write_project(tmp_path / "p", models="x = 1\n", pyproject="""
        [tool.keydrift.audit]
        columns = ["sites.url"]
    """)


def test_plan_with_a_foreign_key_to_the_key_itself(capsys, tmp_path):
    path = tmp_path / "fk.db"
    connection = sqlite3.connect(path)
    connection.executescript("""
        CREATE TABLE sites (id INTEGER PRIMARY KEY, url TEXT UNIQUE);
        CREATE TABLE visits (id INTEGER PRIMARY KEY, site_url TEXT REFERENCES sites (url));
        INSERT INTO sites VALUES (3, 'https://a.test/'), (1, 'a.test'), (2, 'b.test');
        INSERT INTO visits (site_url) VALUES ('https://a.test/'), ('a.test'), ('a.test'), ('b.test');
    """)
    connection.close()
    plan = tmp_path / "plan.sql"
    code, document, _ = audit_json(capsys, f"sqlite:///{path}", keyed_by_url_project(tmp_path), "--plan", str(plan))
    sites = column(document, "sites.url")
    assert code == 1 and (sites["groups"], sites["rows_in_groups"]) == (1, 2)
    visits = sites["references"][0]
    assert (visits["table"], visits["referred_column"], visits["rows"], visits["total"]) == ("visits", "url", 3, 4)
    sql = plan.read_text()
    assert "foreign keys point at url itself: the kept spelling is left as it is" in sql
    apply_plan(path, sql)
    apply_plan(path, sql)
    connection = sqlite3.connect(path)
    # no creation column: the lowest primary key is kept, with its spelling
    assert connection.execute("SELECT id, url FROM sites ORDER BY id").fetchall() == [(1, "a.test"), (2, "b.test")]
    assert sorted(connection.execute("SELECT site_url FROM visits")) == [("a.test",)] * 3 + [("b.test",)]
    connection.close()
    code, _, _ = audit(capsys, f"sqlite:///{path}", keyed_by_url_project(tmp_path))
    assert code == 0


def test_plan_without_a_primary_key_is_left_to_a_person(capsys, tmp_path):
    path = sqlite_database(tmp_path / "nopk.db", "CREATE TABLE sites (url TEXT UNIQUE, note TEXT)",
                           "INSERT INTO sites VALUES (?, ?)", [("a.test", "x"), ("A.test/", "y")])
    plan = tmp_path / "plan.sql"
    code, _, _ = audit(capsys, f"sqlite:///{path}", keyed_by_url_project(tmp_path), "--plan", str(plan))
    sql = plan.read_text()
    assert code == 1 and "not merged: sites has no single-column primary key" in sql
    assert "DELETE" not in sql and "UPDATE" not in sql
    before = digest(path)
    apply_plan(path, sql)
    assert digest(path) == before


def test_plan_blocked_by_a_unique_foreign_key(capsys, tmp_path):
    path = tmp_path / "one.db"
    connection = sqlite3.connect(path)
    connection.executescript("""
        CREATE TABLE sites (id INTEGER PRIMARY KEY, url TEXT UNIQUE);
        CREATE TABLE profiles (id INTEGER PRIMARY KEY, site_id INTEGER UNIQUE REFERENCES sites (id));
        INSERT INTO sites VALUES (1, 'a.test'), (2, 'A.test');
        INSERT INTO profiles VALUES (1, 1), (2, 2);
    """)
    connection.close()
    plan = tmp_path / "plan.sql"
    audit(capsys, f"sqlite:///{path}", keyed_by_url_project(tmp_path), "--plan", str(plan))
    sql = plan.read_text()
    assert "profiles.site_id is unique" in sql and "DELETE" not in sql


def test_plan_with_a_normalizer_that_is_not_idempotent(capsys, tmp_path):
    path = sqlite_database(tmp_path / "www.db", "CREATE TABLE sites (id INTEGER PRIMARY KEY, url TEXT UNIQUE)",
                           "INSERT INTO sites VALUES (?, ?)",
                           [(1, "https://www.www.a.test"), (2, "https://WWW.www.a.test/"), (3, "https://www.a.test/")])
    plan = tmp_path / "plan.sql"
    code, document, _ = audit_json(capsys, f"sqlite:///{path}", keyed_by_url_project(tmp_path), "--plan", str(plan))
    # www.www.a.test -> www.a.test, whose own form is a.test: two groups of one spelling, one of two
    assert code == 1 and column(document, "sites.url")["groups"] == 1
    sql = plan.read_text()
    assert "not idempotent" in sql
    apply_plan(path, sql)  # runs without breaking the unique constraint
    connection = sqlite3.connect(path)
    assert connection.execute("SELECT id, url FROM sites ORDER BY id").fetchall() == [
        (1, "https://www.www.a.test"), (3, "https://www.a.test/")]
    connection.close()


def test_no_scratch_space_is_one_line(capsys, database, monkeypatch, tmp_path):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "does-not-exist"))
    code, out, err = audit(capsys, f"sqlite:///{database}", os.path.join(FIXTURES, "django_project"))
    assert code == 2 and out == "" and "cannot make a scratch file" in err and err.count("\n") == 1


def test_models_deriving_from_a_base_elsewhere_follow_the_project_orm(capsys, database, tmp_path):
    project = write_project(tmp_path / "p", models="""
        from django.db import models
        class Stamped(models.Model):
            created_at = models.DateTimeField(auto_now_add=True)
            class Meta:
                abstract = True
    """, extra={"accounts.py": """
        from app.models import Stamped
        class Account(Stamped):
            email = EmailField(unique=True)
            class Meta:
                app_label = "sites"
    """})
    code, document, _ = audit_json(capsys, f"sqlite:///{database}", project)
    assert [f"{c['table']}.{c['column']}" for c in document["columns"]] == ["sites_account.email"]


def test_plan_merges_two_key_tables_with_the_same_key(capsys, tmp_path):
    path = tmp_path / "two.db"
    connection = sqlite3.connect(path)
    connection.executescript("""
        CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT UNIQUE);
        CREATE TABLE invitations (id INTEGER PRIMARY KEY, email TEXT UNIQUE);
        INSERT INTO users VALUES (1, 'ann@x.org'), (2, 'Ann@x.org');
        INSERT INTO invitations VALUES (1, 'ANN@x.org'), (2, 'ann@X.org'), (3, 'bo@x.org');
    """)
    connection.close()
    project = write_project(tmp_path / "p", models="x = 1\n", pyproject="""
        [tool.keydrift.audit]
        columns = ["users.email", "invitations.email"]
    """)
    plan = tmp_path / "plan.sql"
    code, document, _ = audit_json(capsys, f"sqlite:///{path}", project, "--plan", str(plan))
    users = column(document, "users.email")
    assert code == 1 and users["references"][0]["rows"] == 2  # both invitations of ann
    apply_plan(path, plan.read_text())
    connection = sqlite3.connect(path)
    assert connection.execute("SELECT email FROM users").fetchall() == [("ann@x.org",)]
    assert sorted(connection.execute("SELECT email FROM invitations")) == [("ann@x.org",), ("bo@x.org",)]
    connection.close()


def test_framework_models_map_to_their_tables(capsys, tmp_path):
    path = sqlite_database(tmp_path / "auth.db", "CREATE TABLE auth_user (id INTEGER PRIMARY KEY, username TEXT UNIQUE)",
                           "INSERT INTO auth_user VALUES (?, ?)", [(1, "Ann"), (2, "ann "), (3, "bo")])
    project = write_project(tmp_path / "p", models="from django.db import models\n", extra={"views.py": """
        from django.contrib.auth.models import User

        def sign_up(request):
            name = request.POST["username"]
            if not User.objects.filter(username=name).exists():
                User.objects.create(username=name.strip())
    """})
    code, document, _ = audit_json(capsys, f"sqlite:///{path}", project)
    users = column(document, "auth_user.username")
    assert code == 1 and users["entity"] == "User" and users["groups"] == 1


def test_backslashes_and_quotes_survive_the_plan(capsys, tmp_path):
    path = sqlite_database(tmp_path / "q.db", "CREATE TABLE teams (id INTEGER PRIMARY KEY, team_name TEXT UNIQUE)",
                           "INSERT INTO teams VALUES (?, ?)", [(1, "O'Brien\\Ops"), (2, "o'brien\\ops "), (3, "x")])
    project = write_project(tmp_path / "p", models="x = 1\n", pyproject="""
        [tool.keydrift.audit]
        columns = ["teams.team_name"]
    """)
    plan = tmp_path / "plan.sql"
    audit(capsys, f"sqlite:///{path}", project, "--plan", str(plan))
    apply_plan(path, plan.read_text())
    connection = sqlite3.connect(path)
    assert connection.execute("SELECT id, team_name FROM teams ORDER BY id").fetchall() == [
        (1, "o'brien\\ops"), (3, "x")]
    connection.close()


def test_no_cache_writes_nothing_into_the_project(capsys, database, tmp_path):
    project = os.path.join(FIXTURES, "django_project")
    code, _, _ = audit(capsys, f"sqlite:///{database}", project, "--no-cache")
    assert code == 1 and not os.path.exists(os.path.join(project, ".keydrift_cache"))


def test_migration_scripts_declare_no_key_columns(capsys, database, tmp_path):
    project = write_project(tmp_path / "p", models="x = 1\n", extra={"r1a2b3.py": """
        from alembic import op

        revision = "r1a2b3"
        down_revision = None

        def upgrade():
            op.execute("CREATE TABLE legacy_sites (id INTEGER PRIMARY KEY, url TEXT UNIQUE)")
    """, "schema.py": """
        DDL = "CREATE TABLE domains (id INTEGER PRIMARY KEY, url TEXT UNIQUE)"
    """})
    code, document, _ = audit_json(capsys, f"sqlite:///{database}", project)
    assert [f"{c['table']}.{c['column']}" for c in document["columns"]] == ["domains.url"]
    assert any("schema.py" in s for s in column(document, "domains.url")["sources"])
    assert not any("legacy_sites" in s["column"] for s in document["skipped"])


def test_json_fields_are_stable(capsys, database):
    """The documented fields (README): added to, never removed or renamed without a new version."""
    _, document, _ = audit_json(capsys, f"sqlite:///{database}", os.path.join(FIXTURES, "django_project"))
    assert set(document) == {"version", "keydrift", "database", "drift", "columns", "skipped"}
    assert document["version"] == 1
    domains = column(document, "domains.url")
    assert set(domains) == {"table", "column", "entity", "field", "kind", "sources", "normal_form", "computed_in",
                            "rows", "null_rows", "invalid_values", "groups", "rows_in_groups", "share",
                            "worst_groups", "references"}
    assert set(domains["worst_groups"][0]) == {"normal_form", "rows", "spellings"}
    assert set(domains["worst_groups"][0]["spellings"][0]) == {"value", "rows"}
    assert set(domains["references"][0]) == {"table", "column", "via", "referred_column", "rows", "total", "share"}


def test_plan_for_a_column_in_a_composite_unique_constraint(capsys, tmp_path):
    path = tmp_path / "composite.db"
    connection = sqlite3.connect(path)
    connection.executescript("""
        CREATE TABLE pages (id INTEGER PRIMARY KEY, site INTEGER, url TEXT, UNIQUE (site, url));
        INSERT INTO pages VALUES (1, 1, 'a.test/x'), (2, 2, 'A.test/x/'), (3, 3, 'b.test');
    """)
    connection.close()
    project = write_project(tmp_path / "p", models="x = 1\n", pyproject="""
        [tool.keydrift.audit]
        columns = ["pages.url"]
    """)
    plan = tmp_path / "plan.sql"
    code, _, _ = audit(capsys, f"sqlite:///{path}", project, "--plan", str(plan))
    sql = plan.read_text()
    assert code == 1 and "multi-column unique constraint" in sql and "DELETE" not in sql
    apply_plan(path, sql)  # different sites: the rewrite fits the constraint
    connection = sqlite3.connect(path)
    assert connection.execute("SELECT url FROM pages ORDER BY id").fetchall() == [
        ("https://a.test/x",), ("https://a.test/x",), ("b.test",)]
    connection.close()


def test_a_bare_name_is_a_key_only_of_things_people_name(capsys, tmp_path):
    path = tmp_path / "names.db"
    connection = sqlite3.connect(path)
    connection.executescript("""
        CREATE TABLE app_tag (id INTEGER PRIMARY KEY, name TEXT UNIQUE);
        CREATE TABLE app_author (id INTEGER PRIMARY KEY, name TEXT UNIQUE);
        INSERT INTO app_tag VALUES (1, 'Python'), (2, 'python ');
        INSERT INTO app_author VALUES (1, 'Ann'), (2, 'ann');
    """)
    connection.close()
    project = write_project(tmp_path / "p", models="""
        from django.db import models
        class Tag(models.Model):
            name = models.CharField(max_length=50, unique=True)
        class Author(models.Model):
            name = models.CharField(max_length=50, unique=True)
    """)
    code, document, _ = audit_json(capsys, f"sqlite:///{path}", project)
    assert code == 1 and [f"{c['table']}.{c['column']}" for c in document["columns"]] == ["app_tag.name"]


def test_a_column_that_fails_half_way_leaves_no_plan_behind(capsys, database, tmp_path, monkeypatch):
    from keydrift.audit.queries import Queries

    def unreadable(*args, **kwargs):
        raise sqlite3.OperationalError("attempt to read a locked table")

    monkeypatch.setattr(Queries, "rows_of", unreadable)
    plan = tmp_path / "plan.sql"
    code, document, _ = audit_json(capsys, f"sqlite:///{database}", os.path.join(FIXTURES, "django_project"),
                                   "--plan", str(plan))
    skipped = {s["column"]: s["reason"] for s in document["skipped"]}
    assert "attempt to read a locked table" in skipped["domains.url"]
    sql = plan.read_text()
    assert "domains" not in sql and "UPDATE audit_results SET url" in sql  # the rewrite needs no rows_of
