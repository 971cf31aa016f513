"""``keydrift audit-db``: the key drift already in a database, found with what the linter knows
of the code's keys, and a repair plan (SQL, never run by keydrift).

Modules: ``discovery`` (key columns from the analysis and configuration), ``tables`` (models to
tables), ``connect`` (URLs, read-only connections, one-line errors), ``reflect`` (what the
database has), ``forms`` (normal forms), ``queries`` (the read-only SQL and a scratch store),
``audit`` (one column), ``plan`` (the repair), ``report`` (text and JSON), ``command`` (the
command line). SQLAlchemy and psycopg are imported only when the command runs
(``pip install 'keydrift[db]'``).
"""
