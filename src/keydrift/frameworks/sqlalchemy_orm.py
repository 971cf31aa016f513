"""SQLAlchemy 1.x and 2.0 (ORM and Core), SQLModel, Flask-SQLAlchemy sessions."""

from __future__ import annotations

from typing import Dict, FrozenSet

# session.query(Model) starts a read chain on Model.
QUERY_METHODS: FrozenSet[str] = frozenset({"query"})
# Statement constructors: first positional argument is the entity (a model or a Table).
SELECT_CONSTRUCTORS: FrozenSet[str] = frozenset({"select"})
INSERT_CONSTRUCTORS: FrozenSet[str] = frozenset({"insert"})
UPDATE_CONSTRUCTORS: FrozenSet[str] = frozenset({"update"})
DELETE_CONSTRUCTORS: FrozenSet[str] = frozenset({"delete"})
# Table-object methods: table.insert(), table.select(), table.update(), table.delete().
TABLE_METHODS: Dict[str, str] = {
    "insert": "insert", "select": "select", "update": "update", "delete": "delete",
}

# Chain methods whose arguments are comparison criteria; filter_by takes keywords.
CRITERIA_METHODS: FrozenSet[str] = frozenset({"filter", "where", "having"})
KEYWORD_CRITERIA_METHODS: FrozenSet[str] = frozenset({"filter_by"})
# Chain methods whose arguments are stored values.
VALUES_METHODS: FrozenSet[str] = frozenset({"values"})
# Upserts: the SET mapping may rewrite the conflict key.
ON_CONFLICT_METHODS: FrozenSet[str] = frozenset({"on_conflict_do_update", "on_duplicate_key_update"})
ON_CONFLICT_SET_KWARGS: FrozenSet[str] = frozenset({"set_", "update"})
# Query.update({...}) / Query.delete() at the end of a session.query chain.
QUERY_UPDATE_METHODS: FrozenSet[str] = frozenset({"update"})
QUERY_DELETE_METHODS: FrozenSet[str] = frozenset({"delete"})

# Attributes that hold related records (``owner = relationship("User")``), not a column.
RELATIONSHIP_CALLS: FrozenSet[str] = frozenset({"relationship", "relation", "dynamic_loader"})
# A column the database fills: ``server_default=FetchedValue()`` (a trigger), ``Computed("...")``;
# and a mapped SQL expression, ``column_property(func.lower(name))``.
SERVER_VALUE_CALLS: FrozenSet[str] = frozenset({"FetchedValue", "Computed"})
SERVER_VALUE_KEYWORDS = ("server_default", "server_onupdate")
COMPUTED_PROPERTY_CALLS: FrozenSet[str] = frozenset({"column_property"})
# A mapped attribute made by a method of the class (``@declared_attr def name(cls): return ...``).
DECLARED_ATTR = "declared_attr"
# The call that makes a column reference another table's column (``ForeignKey("users.id")``).
FOREIGN_KEY_CALL = "ForeignKey"
# SQLModel's ``Field(foreign_key="users.id")``.
FOREIGN_KEY_KEYWORD = "foreign_key"

# Session methods that read one record by primary key: session.get(Model, pk).
GET_BY_PK_METHODS: FrozenSet[str] = frozenset({"get", "get_one"})
# Session methods that store instances.
ADD_METHODS: FrozenSet[str] = frozenset({"add", "merge"})
ADD_ALL_METHODS: FrozenSet[str] = frozenset({"add_all"})
# Session methods that persist the pending changes of loaded records.
FLUSH_METHODS: FrozenSet[str] = frozenset({"commit", "flush", "add", "merge"})

# SQL functions applied to a column or value in criteria (func.lower(Model.email)).
SQL_FUNCTION_KINDS: Dict[str, str] = {
    "lower": "case", "upper": "case", "trim": "whitespace", "ltrim": "whitespace",
    "rtrim": "whitespace", "btrim": "whitespace",
}
# Column operators that compare case-insensitively.
CASE_INSENSITIVE_OPERATORS: FrozenSet[str] = frozenset({"ilike"})
# Column operators whose argument is a collection of key values.
MEMBERSHIP_OPERATORS: FrozenSet[str] = frozenset({"in_"})
