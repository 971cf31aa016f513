"""pymongo and motor collections (mongoengine querysets go through ``django_orm``)."""

from __future__ import annotations

from typing import Dict, FrozenSet

# method -> (position of the filter document, position of the update/replacement document or -1)
READS: Dict[str, int] = {
    "find_one": 0, "find": 0, "count_documents": 0, "distinct": 1, "find_raw_batches": 0,
}
# Writes whose filter identifies the documents and whose second argument stores values.
UPDATES: Dict[str, int] = {
    "update_one": 0, "update_many": 0, "replace_one": 0, "find_one_and_update": 0,
    "find_one_and_replace": 0,
}
DELETES: Dict[str, int] = {"delete_one": 0, "delete_many": 0, "find_one_and_delete": 0}
INSERT_ONE: FrozenSet[str] = frozenset({"insert_one", "insert"})
INSERT_MANY: FrozenSet[str] = frozenset({"insert_many"})
BULK_WRITE: FrozenSet[str] = frozenset({"bulk_write"})
# bulk_write operation classes: (filter position, document position)
BULK_OPERATIONS: Dict[str, int] = {
    "UpdateOne": 0, "UpdateMany": 0, "ReplaceOne": 0, "DeleteOne": 0, "DeleteMany": 0, "InsertOne": -1,
}
# Update operators whose fields are stored values; $setOnInsert stores only on upsert.
SET_OPERATORS: FrozenSet[str] = frozenset({"$set", "$setOnInsert"})
# Query operators that compare a key by equality ($in compares each element).
EQUALITY_OPERATORS: FrozenSet[str] = frozenset({"$eq"})
MEMBERSHIP_OPERATORS: FrozenSet[str] = frozenset({"$in"})
UPSERT_KEYWORD = "upsert"
# ``{"email": {"$regex": f"^{re.escape(e)}$", "$options": "i"}}``: a pattern anchored at both
# ends around one value is an equality; the ``i`` option (``re.IGNORECASE`` of a compiled
# pattern) makes it case-insensitive.
REGEX_OPERATOR = "$regex"
REGEX_OPTIONS = "$options"
REGEX_ESCAPES: FrozenSet[str] = frozenset({"escape", "re.escape"})
IGNORECASE_FLAGS: FrozenSet[str] = frozenset({"re.I", "re.IGNORECASE", "I", "IGNORECASE"})
