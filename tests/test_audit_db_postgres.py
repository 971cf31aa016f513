"""`keydrift audit-db` against a real PostgreSQL server started for these tests (``pgserver``):
the post's scenario with its repair plan, read-only sessions, streaming in batches, and the
errors a user meets (wrong password, unreachable server, no permission, missing tables)."""

import os
import sys

import pytest

pytest.importorskip("sqlalchemy", reason="keydrift[db] is not installed")
pytest.importorskip("psycopg", reason="keydrift[db] is not installed")

from keydrift.audit import connect  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
import audit_scenario as scenario  # noqa: E402
from audit_scenario import audit, audit_json, column  # noqa: E402
import pgserver  # noqa: E402

FIXTURES = scenario.FIXTURES  # replaced by a temporary copy for each test (see below)
DJANGO = os.path.join(FIXTURES, "django_project")


@pytest.fixture(autouse=True)
def fixture_copies(tmp_path_factory, monkeypatch):
    copies = scenario.project_copies(tmp_path_factory.mktemp("projects"))
    monkeypatch.setitem(globals(), "FIXTURES", copies)
    monkeypatch.setitem(globals(), "DJANGO", os.path.join(copies, "django_project"))


@pytest.fixture(scope="module")
def server():
    try:
        started = pgserver.PostgresServer.start()
    except pgserver.Unavailable as exc:
        if os.environ.get("KEYDRIFT_REQUIRE_POSTGRES"):
            pytest.fail(f"PostgreSQL is required here: {exc}")
        pytest.skip(f"no PostgreSQL server can be started: {exc}")
    yield started
    started.stop()


@pytest.fixture
def scenario_db(server, request):
    name = "scenario_" + request.node.name.split("[")[-1].strip("]").replace("-", "_")[:40].lower()
    server.create_database(name)
    with server.connect(name) as connection:
        connection.autocommit = False
        scenario.build(connection, placeholder="%s")
    return name


def table_rows(server, database, table):
    with server.connect(database) as connection:
        return sorted(connection.execute(f"SELECT * FROM {table}").fetchall())


@pytest.mark.parametrize("name", ["django_project", "sqlalchemy_project"], ids=["django", "sqlalchemy"])
def test_scenario_and_plan(capsys, server, scenario_db, name, tmp_path):
    project = os.path.join(FIXTURES, name)
    plan = tmp_path / "repair.sql"
    before = {t: table_rows(server, scenario_db, t) for t in ("domains", "audit_results", "sites_account")}
    code, document, _ = audit_json(capsys, server.url(scenario_db), project, "--plan", str(plan))
    assert code == 1
    after = {t: table_rows(server, scenario_db, t) for t in ("domains", "audit_results", "sites_account")}
    assert after == before  # the audit wrote nothing
    domains = column(document, "domains.url")
    assert (domains["rows"], domains["groups"], domains["rows_in_groups"]) == (7, 2, 5)
    assert {g["normal_form"]: len(g["spellings"]) for g in domains["worst_groups"]} == scenario.EXPECTED_DOMAIN_GROUPS
    foreign = next(r for r in domains["references"] if r["via"] == "foreign key")
    assert (foreign["table"], foreign["rows"], foreign["total"]) == ("audit_results", 31, 36)
    accounts = column(document, "sites_account.email")
    assert (accounts["computed_in"], accounts["null_rows"], accounts["groups"]) == ("database", 2, 1)

    sql = plan.read_text()
    for _ in range(2):  # the second run is harmless
        with server.connect(scenario_db) as connection:
            connection.execute(sql)
    urls = sorted(row[1] for row in table_rows(server, scenario_db, "domains"))
    assert urls == ["https://example.com/", "https://shop.test/a", "not a url at all", "other.org"]
    results = table_rows(server, scenario_db, "audit_results")
    assert len(results) == scenario.ALL_RESULTS
    kept = {row[0] for row in table_rows(server, scenario_db, "domains")}
    assert {row[1] for row in results} <= kept
    code, document, _ = audit_json(capsys, server.url(scenario_db), project)
    assert code == 0 and not document["drift"]
    with server.connect(scenario_db) as connection:  # the suggested unique index holds
        with pytest.raises(Exception, match="duplicate key"):
            connection.execute("INSERT INTO sites_account VALUES (10, ' ALICE@X.com', NULL)")


def test_sessions_are_read_only(server, scenario_db):
    engine, _ = connect.open_engine(server.url(scenario_db))
    with engine.connect() as connection:
        with pytest.raises(Exception, match="read-only transaction"):
            connection.exec_driver_sql("DELETE FROM audit_results")


def test_streams_many_rows_in_batches(capsys, server, tmp_path):
    server.create_database("many")
    with server.connect("many") as connection:
        connection.execute("CREATE TABLE pages (id serial PRIMARY KEY, url text NOT NULL)")
        # 12,000 rows, 3 spellings for every 100th key: more than two batches of distinct values
        connection.execute("INSERT INTO pages (url) SELECT 'https://site' || i || '.test/p' FROM generate_series(1, 12000) i")
        connection.execute("INSERT INTO pages (url) SELECT 'https://SITE' || i || '.test/p/' FROM generate_series(100, 12000, 100) i")
        connection.execute("INSERT INTO pages (url) SELECT 'site' || i || '.test/p' FROM generate_series(100, 12000, 100) i")
    project = tmp_path / "p"
    project.mkdir()
    (project / "pyproject.toml").write_text('[tool.keydrift.audit]\ncolumns = ["pages.url"]\n')
    code, document, _ = audit_json(capsys, server.url("many"), str(project), "--top", "3")
    pages = column(document, "pages.url")
    assert code == 1 and pages["rows"] == 12240
    assert (pages["groups"], pages["rows_in_groups"]) == (120, 360)
    assert len(pages["worst_groups"]) == 3


def test_wrong_password_is_one_line_without_the_password(capsys, server, scenario_db):
    code, out, err = audit(capsys, server.url(scenario_db, password="Wr0ngPa55"), DJANGO)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "password authentication failed" in err and "Wr0ngPa55" not in err and ":***@" in err


def test_unreachable_server(capsys):
    port = pgserver._free_port()
    code, _, err = audit(capsys, f"postgresql://app:pw@127.0.0.1:{port}/app", DJANGO)
    assert code == 2 and err.count("\n") == 1 and "cannot connect to postgresql://app:***@127.0.0.1" in err


def test_missing_database(capsys, server):
    code, _, err = audit(capsys, server.url("no_such_db"), DJANGO)
    assert code == 2 and 'database "no_such_db" does not exist' in err


def test_database_without_the_tables(capsys, server):
    server.create_database("empty")
    code, out, err = audit(capsys, server.url("empty"), DJANGO)
    assert code == 2 and out == "" and "no table 'domains'" in err


def test_no_permission(capsys, server, scenario_db):
    with server.connect(scenario_db) as connection:
        connection.execute("DROP ROLE IF EXISTS reader")
        connection.execute("CREATE ROLE reader LOGIN PASSWORD 'reader-pw'")
        connection.execute("GRANT SELECT ON sites_account TO reader")
    code, out, err = audit(capsys, server.url(scenario_db, user="reader", password="reader-pw"), DJANGO)
    assert code == 1  # the readable column is audited, the others are skipped with the reason
    assert "sites_account.email" in out
    assert "domains.url: cannot be read: permission denied for table domains" in out
    with server.connect(scenario_db) as connection:
        connection.execute("REVOKE SELECT ON sites_account FROM reader")
    code, out, err = audit(capsys, server.url(scenario_db, user="reader", password="reader-pw"), DJANGO)
    assert code == 2 and "could be audited" in err.splitlines()[-1]


def test_driver_schemes(server, scenario_db):
    for driver in ("postgres", "postgresql+psycopg"):
        engine, shown = connect.open_engine(server.url(scenario_db, driver=driver))
        connect.check_connection(engine, shown)


def test_schema_option_and_quoted_names(capsys, server, tmp_path):
    server.create_database("schemas")
    with server.connect("schemas") as connection:
        connection.execute("CREATE SCHEMA shop")
        connection.execute('CREATE TABLE shop."Customers" (id int PRIMARY KEY, "Email" text UNIQUE)')
        connection.execute("""INSERT INTO shop."Customers" VALUES (1, 'Ann@x.org'), (2, 'ann@x.org '), (3, 'bo@x.org'),
                              (4, 'O''Hara\\q@x.org'), (5, 'o''hara\\q@x.org')""")
    project = tmp_path / "p"
    project.mkdir()
    (project / "pyproject.toml").write_text('[tool.keydrift.audit]\ncolumns = ["customers.email"]\n')
    code, _, err = audit(capsys, server.url("schemas"), str(project))
    assert code == 2 and "no table 'customers'" in err  # not in the default schema
    plan = tmp_path / "plan.sql"
    code, document, _ = audit_json(capsys, server.url("schemas"), str(project), "--schema", "shop", "--plan", str(plan))
    customers = column(document, "Customers.Email")
    assert code == 1 and (customers["groups"], customers["rows_in_groups"]) == (2, 4)
    with server.connect("schemas") as connection:
        connection.execute(plan.read_text())
        rows = connection.execute('SELECT id, "Email" FROM shop."Customers" ORDER BY id').fetchall()
    assert rows == [(1, "ann@x.org"), (3, "bo@x.org"), (4, "o'hara\\q@x.org")]
    code, _, _ = audit(capsys, server.url("schemas"), str(project), "--schema", "shop")
    assert code == 0
