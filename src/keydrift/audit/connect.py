"""Database URLs and read-only connections.

URLs are SQLAlchemy's (``sqlite:///app.db``, ``postgresql://user:pw@host/db``); a PostgreSQL URL
without a driver uses psycopg 3. Connections are read-only where the driver allows it: SQLite
files are opened with the ``mode=ro`` URI, PostgreSQL sessions start with
``default_transaction_read_only``. Every failure becomes one ``AuditError`` line with the
password masked.
"""

from __future__ import annotations

import os
import re
from typing import Any, Tuple

from keydrift.audit.model import AuditError

ENVIRONMENT_VARIABLE = "KEYDRIFT_DATABASE_URL"
INSTALL_HINT = "install it with: pip install 'keydrift[db]'"
# seconds to wait for a server before saying it is unreachable
CONNECT_TIMEOUT = 10
# schemes accepted, and the driver each one runs on
_DRIVERS = {
    "sqlite": "sqlite",
    "postgresql": "postgresql+psycopg",
    "postgres": "postgresql+psycopg",
    "postgresql+psycopg": "postgresql+psycopg",
}
# greedy up to the last "@": a password may hold "@" itself; masking too much is harmless
_PASSWORD = re.compile(r"(://[^:/@]*:).*(@)")


def database_url(given: str) -> str:
    """The URL from the command line, else from ``KEYDRIFT_DATABASE_URL``."""
    url = given or os.environ.get(ENVIRONMENT_VARIABLE, "")
    if not url:
        raise AuditError(f"no database URL: pass one (sqlite:///app.db, postgresql://...) "
                         f"or set {ENVIRONMENT_VARIABLE}")
    return url


def masked(url: str) -> str:
    """The URL as it may be printed: its password replaced by ``***``."""
    return _PASSWORD.sub(r"\1***\2", url)


def sqlalchemy() -> Any:
    try:
        import sqlalchemy as sa
    except ImportError:
        raise AuditError(f"`keydrift audit-db` needs SQLAlchemy; {INSTALL_HINT}") from None
    return sa


def open_engine(url: str) -> Tuple[Any, str]:
    """A read-only SQLAlchemy engine for ``url`` and the URL's printable form. Nothing is
    connected yet (``check_connection`` does)."""
    sa = sqlalchemy()
    shown = masked(url)
    try:
        parsed = sa.engine.make_url(url)
    except Exception:  # noqa: BLE001 - SQLAlchemy raises ArgumentError, ValueError, ...
        raise AuditError(f"not a database URL: {shown} (expected sqlite:///FILE or "
                         "postgresql://USER:PASSWORD@HOST/DATABASE)") from None
    driver = _DRIVERS.get(parsed.drivername)
    if driver is None:
        raise AuditError(f"unsupported database {parsed.drivername!r} in {shown}: "
                         "keydrift audits sqlite and postgresql databases")
    if driver == "sqlite":
        return _sqlite_engine(sa, parsed, shown), shown
    return _postgresql_engine(sa, parsed.set(drivername=driver), shown), shown


def _sqlite_engine(sa: Any, parsed: Any, shown: str) -> Any:
    import sqlite3

    path = parsed.database or ""
    if not path or path == ":memory:":
        raise AuditError(f"{shown}: name a database file (sqlite:///path/to/app.db)")
    if not os.path.isfile(path):
        raise AuditError(f"{shown}: no such database file: {path}")
    uri = "file:" + _uri_path(os.path.abspath(path)) + "?mode=ro"

    def connect() -> Any:
        return sqlite3.connect(uri, uri=True, check_same_thread=False)

    return sa.create_engine("sqlite://", creator=connect)


def _uri_path(path: str) -> str:
    from urllib.parse import quote

    return quote(path.replace(os.sep, "/"), safe="/:")


def _postgresql_engine(sa: Any, parsed: Any, shown: str) -> Any:
    try:
        import psycopg  # noqa: F401 - the driver SQLAlchemy will load
    except ImportError:
        raise AuditError(f"auditing PostgreSQL needs psycopg 3; {INSTALL_HINT}") from None
    options = "-c default_transaction_read_only=on"
    return sa.create_engine(parsed, pool_size=2, max_overflow=2,
                            connect_args={"options": options, "connect_timeout": CONNECT_TIMEOUT,
                                          "application_name": "keydrift audit-db"})


def check_connection(engine: Any, shown: str) -> None:
    """Connect once, so that a bad password or an unreachable server is one clear line."""
    try:
        with engine.connect() as connection:
            connection.exec_driver_sql("SELECT 1")
    except Exception as exc:  # noqa: BLE001 - every driver error becomes one line
        raise AuditError(f"cannot connect to {shown}: {driver_message(exc, shown)}") from None


def driver_message(exc: BaseException, shown: str = "") -> str:
    """The first meaningful line of a driver error, without SQLAlchemy's decoration or any
    password."""
    inner = getattr(exc, "orig", None) or exc
    lines = [line.strip() for line in str(inner).splitlines() if line.strip()]
    text = lines[0] if lines else type(inner).__name__
    text = re.sub(r"^\(\S+\)\s*", "", text)
    text = re.sub(r"^connection failed:\s*", "", text)
    return _PASSWORD.sub(r"\1***\2", text)
