"""The post's scenario as data: a `domains` table whose URLs were written in several spellings,
and the `audit_results` a drifting job wrote for them. Plain DB-API, for SQLite and PostgreSQL;
and the helpers both audit test modules run the command with."""

import datetime
import json
import os
import shutil

from keydrift.cli import main

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "audit_fixtures")

SCHEMA = [
    "CREATE TABLE domains (id INTEGER PRIMARY KEY, url VARCHAR(200) NOT NULL UNIQUE, created_at TIMESTAMP NOT NULL)",
    "CREATE TABLE audit_results (id INTEGER PRIMARY KEY, domain_id INTEGER NOT NULL REFERENCES domains (id), "
    "url VARCHAR(200) NOT NULL, score INTEGER, created_at TIMESTAMP)",
    "CREATE TABLE sites_account (id INTEGER PRIMARY KEY, email VARCHAR(200) UNIQUE, created_at TIMESTAMP)",
]

_DAY = datetime.datetime(2024, 1, 1)

# id, url, days after the first: example.com was added three times, the first one earliest
DOMAINS = [
    (1, "example.com/", 1),
    (2, "example.com", 0),
    (3, "https://Example.com", 2),
    (4, "other.org", 0),
    (5, "https://shop.test/a/", 3),
    (6, "https://shop.test/a", 4),
    (7, "not a url at all", 0),
]
# domain id -> (results the job wrote for it, the URL it wrote them under)
RESULTS = {1: (5, "https://example.com/"), 2: (20, "https://example.com/"), 3: (3, "https://example.com"),
           4: (4, "https://other.org/"), 5: (2, "https://shop.test/a/"), 6: (1, "https://shop.test/a"),
           7: (1, "not a url at all")}
ACCOUNTS = [(1, "Alice@x.com", 1), (2, "alice@x.com", 0), (3, " bob@y.org", 0), (4, None, 0), (5, None, 0)]

EXPECTED_DOMAIN_GROUPS = {"https://example.com/": 3, "https://shop.test/a": 2}
DRIFT_RESULTS = 5 + 20 + 3 + 2 + 1  # results pointing at domains in the two drifting groups
ALL_RESULTS = sum(count for count, _ in RESULTS.values())


def build(connection, placeholder="?"):
    cursor = connection.cursor()
    for statement in SCHEMA:
        cursor.execute(statement)
    mark = ", ".join([placeholder] * 3)
    cursor.executemany(f"INSERT INTO domains VALUES ({mark})",
                       [(i, url, _DAY + datetime.timedelta(days=d)) for i, url, d in DOMAINS])
    rows = []
    for domain, (count, url) in sorted(RESULTS.items()):
        for _ in range(count):
            rows.append((len(rows) + 1, domain, url, 50, _DAY))
    mark5 = ", ".join([placeholder] * 5)
    cursor.executemany(f"INSERT INTO audit_results VALUES ({mark5})", rows)
    cursor.executemany(f"INSERT INTO sites_account VALUES ({mark})",
                       [(i, e, _DAY + datetime.timedelta(days=d)) for i, e, d in ACCOUNTS])
    connection.commit()


def project_copies(directory):
    """The fixture projects copied into ``directory``: analyzing them writes its cache beside
    them, and the suite never writes into the checkout."""
    target = os.path.join(str(directory), "audit_fixtures")
    shutil.copytree(FIXTURES, target, ignore=shutil.ignore_patterns(".keydrift_cache", "__pycache__"))
    return target


def audit(capsys, *argv):
    code = main(["audit-db", *argv, "--quiet"])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def audit_json(capsys, *argv):
    code, out, err = audit(capsys, *argv, "--format", "json")
    return code, json.loads(out), err


def column(document, label):
    return next(c for c in document["columns"] if f"{c['table']}.{c['column']}" == label)
