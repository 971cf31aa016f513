"""``@record``: keydrift's facts and results as dataclasses that compare and hash by value and
are never changed once made.

A ``@dataclass(frozen=True)`` enforces the "never changed" part itself, at a price paid in every
process: two more generated methods per class when its module is imported (compiled one by
one: creating keydrift's dataclasses was half of importing the analysis), and an ``__init__``
that sets each field through ``object.__setattr__``. keydrift assigns to no record after it is
made, so outside its own test suite a record is a dataclass with ``unsafe_hash=True``: the same
``__eq__``, ``__hash__``, ``__repr__`` and ``dataclasses.replace``, without the guard (a cold
``--no-cache -j 1`` check of hyperkitty: 4.67G -> 4.45G instructions; a one-file check of
archivebox's ``core/models.py``: 2.54G -> 2.43G). The test suite sets ``KEYDRIFT_FROZEN_RECORDS=1``
(``tests/conftest.py``), which makes every record frozen, so code that assigns to one fails there.
A ``__post_init__`` that converts a field sets it with ``object.__setattr__``, as a frozen
dataclass must.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Type, TypeVar

T = TypeVar("T")

FROZEN = os.environ.get("KEYDRIFT_FROZEN_RECORDS", "") not in ("", "0")


def record(cls: Type[T]) -> Type[T]:
    """``@dataclass(frozen=True)``, without the guard outside the test suite (see above)."""
    made: Any = dataclass(frozen=True)(cls) if FROZEN else dataclass(unsafe_hash=True)(cls)
    return made  # type: ignore[no-any-return]
