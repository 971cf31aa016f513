"""In-house table helpers: the façade of ``layers/data_access.py`` (the key-flow walker reads
configured helpers with ``emit_table_access``)."""

from __future__ import annotations

from keydrift.analysis.layers.data_access import emit_table_access, recognize_table_call

__all__ = ["emit_table_access", "recognize_table_call"]
