"""Document stores (pymongo, motor) and key-value stores (redis, caches): the façade of their
layers, ``layers/pymongo_client.py`` and ``layers/redis_client.py``."""

from __future__ import annotations

from keydrift.analysis.layers.pymongo_client import (
    collection_name,
    document_fields,
    filter_keys,
    recognize_collection_call,
    stored_document_keys,
)
from keydrift.analysis.layers.redis_client import (
    ANY_FIELD,
    is_store,
    key_template,
    recognize_store_call,
    subscript_access,
)

__all__ = [
    "ANY_FIELD", "collection_name", "document_fields", "filter_keys", "is_store", "key_template",
    "recognize_collection_call", "recognize_store_call", "stored_document_keys", "subscript_access",
]
