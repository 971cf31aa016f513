"""Django ORM (and the peewee/Flask-SQLAlchemy class-level API shaped like it).

``Model.<manager>.<method>(...)`` chains: which methods carry lookups, which write, which
return a single record.
"""

from __future__ import annotations

from typing import Dict, FrozenSet, Tuple

# Attributes of a model class that are managers (``Model.objects``), plus any name ending in
# "objects" (``all_objects``, ``active_objects``).
MANAGERS: FrozenSet[str] = frozenset({"objects", "_default_manager", "_base_manager", "query"})


def is_manager(name: str) -> bool:
    """``objects``, ``_default_manager``, ``query`` (Flask-SQLAlchemy), any ``*objects``."""
    return name in MANAGERS or name.endswith("objects")


# How a model class body makes its manager from a manager or queryset class of the module:
# ``objects = PageManager()``, ``PageQuerySet.as_manager()``, ``PageManager.from_queryset(QS)()``.
MANAGER_FROM_QUERYSET = "from_queryset"
QUERYSET_AS_MANAGER = "as_manager"

# The first call of a chain on a manager's or queryset's own ``self`` (or on
# ``super().get_queryset()``) that makes it a query of the model it manages.
MANAGER_SELF_METHODS: FrozenSet[str] = frozenset({
    "get_queryset", "all", "filter", "exclude", "get", "get_or_create", "update_or_create", "create",
    "aget", "aget_or_create", "aupdate_or_create", "acreate",
})

# Methods whose keyword arguments (and Q(...) arguments) are lookups.
LOOKUP_METHODS: FrozenSet[str] = frozenset({
    "filter", "exclude", "get", "get_or_none", "filter_by", "get_or_create", "update_or_create",
    "aget", "aget_or_create", "aupdate_or_create", "afilter",
})

# Upserts: the lookups are both a read and the stored key; ``defaults`` may override them.
UPSERT_METHODS: FrozenSet[str] = frozenset({
    "get_or_create", "update_or_create", "aget_or_create", "aupdate_or_create",
})
UPSERT_DEFAULTS_KWARGS: FrozenSet[str] = frozenset({"defaults", "create_defaults"})

# Methods whose keyword arguments are stored values of a new record.
CREATE_METHODS: FrozenSet[str] = frozenset({"create", "acreate"})

# Methods that write the rows selected by the chain's lookups; their kwargs are stored values.
UPDATE_METHODS: FrozenSet[str] = frozenset({"update", "aupdate"})
DELETE_METHODS: FrozenSet[str] = frozenset({"delete", "adelete"})

BULK_CREATE_METHODS: FrozenSet[str] = frozenset({"bulk_create", "abulk_create"})
# ``bulk_update(objs, fields)``: writes the listed fields of records fetched and assigned
# before; like ``bulk_create`` and ``update()`` it never calls ``save()``.
BULK_UPDATE_METHODS: FrozenSet[str] = frozenset({"bulk_update", "abulk_update"})
BULK_UPDATE_FIELDS_KWARG = "fields"

# Manager methods that normalize fields before saving (Django's UserManager):
# method -> (positional field names, {field: the normalization applied}). normalize_email
# lowercases the domain; normalize_username (NFKC) changes no ASCII name, so it is left out.
NORMALIZING_CREATE_METHODS: Dict[str, Tuple[Tuple[str, ...], Dict[str, str]]] = {
    "create_user": (("username", "email", "password"), {"email": "normalize_email()"}),
    "create_superuser": (("username", "email", "password"), {"email": "normalize_email()"}),
}

# Chain ends that return one record (assigned to a variable, it is a record of the entity).
SINGLE_RECORD_METHODS: FrozenSet[str] = frozenset({
    "get", "aget", "first", "afirst", "last", "alast", "earliest", "latest", "get_or_none",
    "one", "one_or_none", "scalar", "scalar_one", "scalar_one_or_none",
})

# Instance methods that persist a record's fields.
SAVE_METHODS: FrozenSet[str] = frozenset({"save", "asave", "full_clean_and_save"})

# Lookup suffixes: which are key comparisons, and what the database absorbs.
EXACT_LOOKUPS: Dict[str, FrozenSet[str]] = {
    "exact": frozenset(),
    "iexact": frozenset({"case"}),
}
# Any other known suffix makes the lookup a non-key (range, containment, null checks).
OTHER_LOOKUPS: FrozenSet[str] = frozenset({
    "contains", "icontains", "gt", "gte", "lt", "lte", "startswith", "istartswith",
    "endswith", "iendswith", "range", "date", "year", "iso_year", "month", "day", "week",
    "week_day", "iso_week_day", "quarter", "time", "hour", "minute", "second", "isnull",
    "regex", "iregex", "search", "overlap", "contained_by", "has_key", "has_keys",
    "has_any_keys", "len", "trigram_similar", "unaccent",
})
# Membership lookups: each element of the collection is a key value.
IN_LOOKUPS: Dict[str, FrozenSet[str]] = {"in": frozenset()}
# Django's lookup function wrappers used inside Q/filter arguments.
Q_OBJECTS: FrozenSet[str] = frozenset({"Q"})
PRIMARY_KEY_ALIASES: FrozenSet[str] = frozenset({"pk"})
# Keywords of a relation field naming the referenced field when it is not the primary key
# (``ForeignKey(User, to_field="email")``; peewee ``ForeignKeyField(User, field=User.email)``):
# the column then holds that natural key, not a record's id.
REFERENCED_FIELD_KEYWORDS: Tuple[str, ...] = ("to_field", "to_fields", "field")
# Django names a relation's own column ``<field>_id`` (its attname).
RELATION_COLUMN_SUFFIX = "_id"
# A field the database computes from the row's other fields.
GENERATED_FIELD_CALLS = frozenset({"GeneratedField"})

# Calls that return the project's user model (settings.AUTH_USER_MODEL).
USER_MODEL_GETTERS: FrozenSet[str] = frozenset({"get_user_model"})
USER_MODEL_SETTING = "AUTH_USER_MODEL"
DEFAULT_USER_MODEL = "User"
# Attributes that hold the user record (``request.user``, ``self.instance.user``).
USER_ATTRIBUTES: FrozenSet[str] = frozenset({"user"})
