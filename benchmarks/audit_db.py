"""`keydrift audit-db` on a large PostgreSQL table: time and peak memory.

Starts a throwaway PostgreSQL server (tests/pgserver.py: the machine's initdb/pg_ctl), fills
it with ``--rows`` rows in each of two key tables — ``pages.url`` (a URL: normalized in Python,
streamed through a server-side cursor) and ``users.email`` (normalized by the database) — plus
``hits`` rows pointing at pages through a foreign key, and about 1% of keys written in a
second and third spelling. Then runs the command as a user would, in a child process, with
``--plan``, and prints wall time and the child's peak resident memory (``ru_maxrss``).
Several sizes show whether memory grows with the table (it must not).

    python benchmarks/audit_db.py                       # 100,000 and 1,000,000 rows
    python benchmarks/audit_db.py --rows 1000000 --keep-output /tmp/audit.json

Not a test: it takes a minute or two.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
import pgserver  # noqa: E402

FILL = [
    "CREATE TABLE pages (id bigserial PRIMARY KEY, url text NOT NULL UNIQUE, created_at timestamptz NOT NULL)",
    "CREATE TABLE users (id bigserial PRIMARY KEY, email text UNIQUE, created_at timestamptz)",
    "CREATE TABLE hits (id bigserial PRIMARY KEY, page_id bigint NOT NULL REFERENCES pages (id), at timestamptz)",
    # the canonical spellings, then two other spellings of every 100th key
    "INSERT INTO pages (url, created_at) SELECT 'https://site' || i || '.example.org/p/' || (i % 97), "
    "now() - i * interval '1 second' FROM generate_series(1, {main}) i",
    "INSERT INTO pages (url, created_at) SELECT 'site' || i || '.example.org/p/' || (i % 97) || '/', now() "
    "FROM generate_series(100, {main}, 100) i",
    "INSERT INTO pages (url, created_at) SELECT 'HTTPS://Site' || i || '.example.org:443/p/' || (i % 97), now() "
    "FROM generate_series(200, {main}, 200) i",
    "INSERT INTO users (email, created_at) SELECT 'user' || i || '@example.org', now() FROM generate_series(1, {main}) i",
    "INSERT INTO users (email, created_at) SELECT 'User' || i || '@Example.org', now() FROM generate_series(100, {main}, 100) i",
    "INSERT INTO hits (page_id, at) SELECT 1 + (i * 7919) % {total_pages}, now() FROM generate_series(1, {hits}) i",
    "ANALYZE",
]


def fill(server, database, rows):
    server.create_database(database)
    main = rows - rows // 100 - rows // 200  # so that pages holds about `rows` rows
    total_pages = main + main // 100 + main // 200
    with server.connect(database) as connection:
        for statement in FILL:
            connection.execute(statement.format(main=main, total_pages=total_pages, hits=rows // 5))
        counts = {t: connection.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("pages", "users", "hits")}
    return counts


def run_audit(url, project, plan, output):
    keydrift = os.path.join(os.path.dirname(sys.executable), "keydrift")
    command = [keydrift, "audit-db", url, project, "--format", "json", "--plan", plan, "--output", output, "--quiet"]
    started = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)  # this child's own peak memory
    seconds = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise SystemExit(f"audit-db failed ({code}): {child.stderr.read().decode()}")
    return seconds, usage.ru_maxrss  # KiB on Linux


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, action="append", help="rows per key table (repeatable)")
    parser.add_argument("--keep-output", metavar="FILE", help="keep the last JSON report here")
    args = parser.parse_args()
    sizes = sorted(args.rows or [100_000, 1_000_000])
    server = pgserver.PostgresServer.start()
    work = tempfile.mkdtemp(prefix="keydrift-bench-")
    project = os.path.join(work, "project")
    os.makedirs(project)
    with open(os.path.join(project, "pyproject.toml"), "w") as handle:
        handle.write('[tool.keydrift.audit]\ncolumns = ["pages.url", "users.email"]\n')
    try:
        print("| rows per key table | pages / users / hits rows | drift groups (url, email) | time | peak RSS |")
        print("|---|---|---|---|---|")
        for rows in sizes:
            database = f"bench_{rows}"
            counts = fill(server, database, rows)
            output = args.keep_output or os.path.join(work, "audit.json")
            seconds, peak = run_audit(server.url(database), project, os.path.join(work, "plan.sql"), output)
            with open(output) as handle:
                report = json.load(handle)
            groups = {c["column"]: c["groups"] for c in report["columns"]}
            memory = f"{peak / 1024:.0f} MiB"
            print(f"| {rows:,} | {counts['pages']:,} / {counts['users']:,} / {counts['hits']:,} | "
                  f"{groups.get('url', 0):,}, {groups.get('email', 0):,} | {seconds:.1f} s | {memory} |", flush=True)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
