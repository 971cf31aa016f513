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

Only ``__init__`` is generated for each class. ``__eq__``, ``__hash__`` and ``__repr__`` are
shared functions that read the fields with an ``operator.attrgetter`` made when the class is:
they compare and hash the same tuples a dataclass's generated methods do (so hash values, and
the order of sets of records, are the same) and print the same text (archivebox's one-file
check 2.31G -> 2.25G instructions, hyperkitty's cold check 4.22G -> 4.18G).
"""

from __future__ import annotations

import os
import reprlib
from dataclasses import dataclass, fields
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Callable, Sequence, Tuple, Type, TypeVar

T = TypeVar("T")

FROZEN = os.environ.get("KEYDRIFT_FROZEN_RECORDS", "") not in ("", "0")


def _record(cls: Type[T]) -> Type[T]:
    """``@dataclass(frozen=True)``, without the guard outside the test suite (see above)."""
    made: Any = dataclass(frozen=FROZEN, eq=False, repr=False)(cls)
    declared = fields(made)
    hashed = [f.name for f in declared if (f.compare if f.hash is None else f.hash)]
    made.__record_compared__ = staticmethod(_values_of([f.name for f in declared if f.compare]))
    made.__record_hashed__ = staticmethod(_values_of(hashed))
    made.__record_shown__ = tuple(f.name for f in declared if f.repr)
    made.__eq__, made.__hash__, made.__repr__ = _equal, _hash, _shown
    return made  # type: ignore[no-any-return]


if TYPE_CHECKING:
    # what type checkers and editors see: a frozen dataclass (PEP 681), constructor and fields
    # included; without it they would see a class with no generated __init__
    from typing_extensions import dataclass_transform

    @dataclass_transform(frozen_default=True)
    def record(cls: Type[T]) -> Type[T]: ...
else:
    record = _record


def _values_of(names: Sequence[str]) -> Callable[[Any], Tuple[Any, ...]]:
    """The tuple of the named fields of a record (``attrgetter`` gives a bare value for one)."""
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda item: (one(item),)
    return attrgetter(*names) if names else (lambda item: ())  # type: ignore[return-value]


def _equal(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        return self.__record_compared__(self) == other.__record_compared__(other)
    return NotImplemented


def _hash(self: Any) -> int:
    return hash(self.__record_hashed__(self))


@reprlib.recursive_repr()
def _shown(self: Any) -> str:
    return f"{self.__class__.__qualname__}(" + ", ".join(
        f"{name}={getattr(self, name)!r}" for name in self.__record_shown__) + ")"
