"""Recognizers: turn database calls into key accesses (the façade of ``keydrift.analysis.layers``).

The recognizers live one module per database layer in ``keydrift.analysis.layers`` (each next
to its table in ``keydrift.frameworks``), registered in ``layers/registry.py``; the machinery
they share (``Key``, ``ChainInfo``, ``Context``, ``ChainReader``, ``unchain``, the argument
helpers) is ``keydrift.analysis.chains``. This module keeps the names the key-flow walker and
the row, payload and form readers import from it.
"""

from __future__ import annotations

from keydrift.analysis.chains import (
    Chain,
    ChainInfo,
    ChainReader,
    Context,
    Key,
    Layer,
    Link,
    column_of,
    constructed_instances,
    dict_items,
    fstring_parts,
    is_model_name,
    keyword,
    keyword_args,
    keyword_items,
    mapping_fields,
    positional_args,
    unchain,
)
from keydrift.analysis.layers.querysets import (
    criteria_lookups,
    keyword_lookups,
    parse_lookup,
    stored_fields,
)
from keydrift.analysis.layers.registry import LAYERS, recognize
from keydrift.analysis.values import code, dotted_name, last_name

__all__ = [
    "Chain", "ChainInfo", "ChainReader", "Context", "Key", "LAYERS", "Layer", "Link", "code", "column_of",
    "constructed_instances", "criteria_lookups", "dict_items", "dotted_name",
    "fstring_parts", "is_model_name", "keyword", "keyword_args", "keyword_items", "keyword_lookups",
    "last_name", "mapping_fields", "parse_lookup", "positional_args", "recognize", "stored_fields",
    "unchain",
]
