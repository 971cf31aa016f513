"""DB-API ``execute(sql, params)``: the façade of ``layers/dbapi_sql.py``."""

from __future__ import annotations

from keydrift.analysis.layers.dbapi_sql import ROLES, Parameters, execute_accesses

__all__ = ["ROLES", "Parameters", "execute_accesses"]
