"""Class-level model APIs without a manager: peewee (``User.get(User.email == e)``,
``User.select().where(...)``, ``User.insert(email=e).on_conflict(...)``) and Flask-SQLAlchemy /
SQLModel-style helpers shaped like it (``User.get_or_create(email=e)``). Their chains are read
like Django querysets (the lookup and write tables are ``django_orm``'s)."""

from __future__ import annotations

from typing import FrozenSet

# Calls on a model class that start a model chain.
MODEL_CLASS_METHODS: FrozenSet[str] = frozenset({
    "select", "update", "delete", "insert", "replace", "get", "get_or_none", "get_or_create", "create",
    "get_by_id", "filter", "insert_many",
})
# Of those, the ones whose chain writes the rows it selects (its lookups identify them).
WRITE_CHAIN_METHODS: FrozenSet[str] = frozenset({"update", "delete"})
