"""Django forms: which classes are model forms and how they clean their fields."""

from __future__ import annotations

from typing import FrozenSet, Tuple

# Base classes whose subclasses save a model instance (``Meta.model``) from their cleaned data.
MODEL_FORM_BASES: FrozenSet[str] = frozenset({
    "ModelForm", "BaseModelForm", "UserCreationForm", "UserChangeForm", "BaseUserCreationForm",
})
# ``clean_<field>()`` returns the value stored for the field.
CLEAN_PREFIX = "clean_"
CLEANED_DATA = "cleaned_data"
# ``clean()`` runs after the fields' own cleaning, and what it puts in ``cleaned_data``
# (``cleaned_data["email"] = cleaned_data["email"].lower()``) is what the model instance gets.
CLEAN_METHOD = "clean"
# Methods that, overridden, decide what is stored instead of the form's own save.
SAVING_METHODS: FrozenSet[str] = frozenset({"save"})
# A form field class's methods that turn what was posted into the cleaned value (``class
# LowercaseEmailField(forms.EmailField): def to_python(self, value): ...``), in the order a
# field runs them: ``clean`` calls ``to_python`` first.
FIELD_CONVERTERS: Tuple[str, ...] = ("clean", "to_python")
