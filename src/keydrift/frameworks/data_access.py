"""In-house data-access layers: helpers that take a table name and dicts of column -> value
(``select_one("users", {"email": e})``, ``upsert(table, keyvalues, values)``), and runners that
call a function with forwarded arguments (``run_in_transaction(fn, *args)``).

Recognized zero-config by shape: a literal table name plus a dict literal of columns, passed to
a function whose name carries one of the verbs below. Projects describe other wrappers with
``[tool.keydrift] tables`` (see ``keydrift.config``).
"""

from __future__ import annotations

import re
from typing import Dict, FrozenSet

# Operations a table helper performs.
SELECT = "select"
INSERT = "insert"
UPSERT = "upsert"
UPDATE = "update"
DELETE = "delete"
OPERATIONS: FrozenSet[str] = frozenset({SELECT, INSERT, UPSERT, UPDATE, DELETE})

# Name tokens of a helper (split at "_" and camelCase) -> its operation; the last verb token in
# the name wins (``select_or_insert`` inserts). ``get``/``find`` alone are too common (a dict's
# ``get(key, default)``) and count only in compound names (``get_row``, ``simple_get_one``).
VERB_TOKENS: Dict[str, str] = {
    "select": SELECT, "get": SELECT, "find": SELECT, "fetch": SELECT, "lookup": SELECT,
    "load": SELECT, "count": SELECT, "exists": SELECT, "read": SELECT,
    "insert": INSERT, "create": INSERT, "add": INSERT,
    "upsert": UPSERT, "merge": UPSERT,
    "update": UPDATE, "set": UPDATE, "modify": UPDATE,
    "delete": DELETE, "remove": DELETE,
}
BARE_NAMES_NOT_HELPERS: FrozenSet[str] = frozenset({
    "get", "find", "set", "add", "update", "read", "load", "count", "merge", "lookup", "fetch",
    "create", "delete", "remove", "exists", "modify",
})

# Keyword names of the table argument and of the dicts.
TABLE_KEYWORDS: FrozenSet[str] = frozenset({"table", "table_name", "tablename", "collection"})
KEY_KEYWORDS: FrozenSet[str] = frozenset({
    "keyvalues", "key_values", "where", "filters", "criteria", "conditions", "keys", "match",
    "lookup", "filter_by", "by",
})
VALUE_KEYWORDS: FrozenSet[str] = frozenset({
    "values", "updatevalues", "update_values", "insertion_values", "data", "row", "fields",
    "record", "document", "set_",
})

# A table name: an identifier, possibly schema-qualified (not a URL, a path or a message).
TABLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$")

# Runners that call their function argument with the arguments that follow it, sometimes
# passing a transaction or connection first: matched on name tokens of the callee.
RUNNER_TOKENS: FrozenSet[str] = frozenset({
    "interaction", "transaction", "txn", "executor", "thread", "threadpool", "connection",
})
RUNNER_NAMES: FrozenSet[str] = frozenset({
    "run_in_transaction", "runInteraction", "run_interaction", "runWithConnection",
    "run_with_connection", "run_in_executor", "run_in_threadpool", "deferToThread",
    "defer_to_thread", "to_thread", "run_sync", "sync_to_async", "database_sync_to_async",
    "in_transaction", "with_transaction", "atomic_call",
})
# A first parameter with one of these names is what the runner supplies, not a forwarded value.
RUNNER_SUPPLIED_PARAMS: FrozenSet[str] = frozenset({
    "txn", "tx", "transaction", "cursor", "cur", "conn", "connection", "session", "db", "c",
})
