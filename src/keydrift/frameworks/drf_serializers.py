"""Django REST framework: which serializer classes save a model instance and how they validate
their fields."""

from __future__ import annotations

from typing import FrozenSet, Tuple

# Base classes whose subclasses save a model instance (``Meta.model``) from their validated data.
MODEL_SERIALIZER_BASES: FrozenSet[str] = frozenset({"ModelSerializer", "HyperlinkedModelSerializer"})
# ``validate_<field>(self, value)`` gets the field's value and returns the value stored.
VALIDATE_PREFIX = "validate_"
VALIDATED_DATA = "validated_data"
# ``validate(self, attrs)`` gets every field's value and may rewrite them (``attrs["email"] =
# attrs["email"].lower()``) before the data is saved.
VALIDATE_METHOD = "validate"
# Methods that, overridden, decide what is stored instead of the serializer's own save.
SAVING_METHODS: FrozenSet[str] = frozenset({"create", "update", "save"})
# ``Meta`` option naming fields the serializer shows but never stores.
READ_ONLY_FIELDS = "read_only_fields"
# A field class's method that turns what the client sent into the value validated and stored
# (``class LowercaseEmailField(EmailField): def to_internal_value(self, data): ...``).
FIELD_CONVERTERS: Tuple[str, ...] = ("to_internal_value",)
