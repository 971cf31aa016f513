"""Words that must appear in code before keydrift looks at it closely: the text prefilter skips
files without them, and the function gate (``analysis/gating.py``) skips functions without them.
The gate's sets are built from the framework tables where they exist, so a new transformation
extends them."""

from __future__ import annotations

import re

from keydrift.frameworks import transforms

# Vocabulary of the database layers keydrift understands. A file with none of it cannot hold
# a read or a write, so it is never parsed.
DATABASE_VOCABULARY = re.compile(
    r"\.objects\b|_or_create\b|bulk_create\b|_or_none\b|\.filter(?:_by)?\s*\(|\.execute(?:many)?\s*\("
    r"|\bsession\b|(?<![.\w])(?:insert|select|update|delete)\s*\(|\.save\s*\(|\.where\s*\("
    r"|\.query\b|\.merge\s*\(|\.create\s*\(|\.fetch(?:row|val)?\s*\("
    r"|\.(?:find_one|find|insert_one|insert_many|update_one|update_many|replace_one|delete_one"
    r"|delete_many|find_one_and_\w+|count_documents|bulk_write)\s*\("
    r"|(?i:redis|valkey|cache)\w*\s*(?:\.|\[)|\b(?:r|kv|rds|mc|rc)\.(?:h?get|h?set\w*|exists|delete|incr\w*)\s*\("
    r"|_or_404\s*\("
    # in-house table helpers: select_one("users", {...}), update_row(txn, "users", ...), table="users"
    r"|\w\s*\(\s*(?:\w+\s*,\s*)?[\"'][A-Za-z_][\w.]*[\"']\s*,\s*(?:\w+\s*=\s*)?(?:\{|dict\()"
    r"|\btable(?:_?name)?\s*=\s*[\"'][A-Za-z_]"
    # model forms store their cleaned fields when saved (analysis/forms.py)
    r"|\b(?:ModelForm|BaseModelForm|UserCreationForm|UserChangeForm)\b"
)
# Vocabulary of normalization and schema declarations: files with it may hold a normalizer
# (KD2/KD4) or a uniqueness constraint (KD3) even without database calls.
NORMALIZER_VOCABULARY = re.compile(
    r"normali[sz]|canonical|urlsplit|urlparse|(?i:unique)|primary_key|PRIMARY\s+KEY|slugify|idna"
    r"|clean_\w*(?:url|email|host|domain)|saniti[sz]e_|standardi[sz]e_|\bnorm_"
)

# The same vocabulary, plus transformations of key values (the ``transforms`` tables), as the
# names a function's CPython tree holds (the function gate).
# Attributes: ``Model.objects``, ``cursor.execute``, ``url.lower``.
KEY_ATTRIBUTES = frozenset({
    "objects", "filter", "filter_by", "execute", "executemany", "executescript", "session", "save",
    "where", "query", "merge", "create", "fetch", "fetchrow", "fetchval", "find_one", "find",
    "insert_one", "insert_many", "update_one", "update_many", "replace_one", "delete_one",
    "delete_many", "find_one_and_update", "find_one_and_replace", "find_one_and_delete",
    "count_documents", "bulk_write", "get_or_create", "update_or_create", "bulk_create",
    "get_or_none", "encode", "urlsplit", "urlparse",
}) | frozenset(transforms.STRING_METHODS) | frozenset(transforms.FUNCTIONS)
# Plain names: SQL builders called bare, shortcuts, parsers and model-rewrite decorators.
KEY_NAMES = frozenset({
    "insert", "select", "update", "delete", "session", "get_object_or_404", "get_list_or_404",
    "urlsplit", "urlparse", "validates", "receiver", "listens_for", "pre_save",
}) | frozenset(transforms.FUNCTIONS) | frozenset(
    name.split(".", 1)[0] for name in transforms.FETCH_FUNCTIONS | set(transforms.QUALIFIED_FUNCTIONS))
# Parts of names: normalizers, stores and uniqueness, whatever they are called around them.
KEY_NAME_PARTS = ("normaliz", "normalis", "canonical", "redis", "valkey", "cache", "slugify", "idna",
                  "unique", "primary_key", "sanitiz", "sanitis", "standardiz", "standardis", "norm_")
# Short names of key-value clients (``r.get(key)``) and methods that override how a model stores.
STORE_CLIENTS = frozenset({"r", "kv", "rds", "mc", "rc"})
STORING_METHODS = frozenset({"save", "full_clean", "to_python", "get_prep_value", "from_db_value", "pre_save"})
