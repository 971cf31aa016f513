"""``@record``: keydrift's facts and results as dataclasses that compare and hash by value and
are never changed once made; ``@mutable``: the analysis's working state, dataclasses whose
fields are assigned, made the same way.

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

No method is compiled for a class. ``__eq__``, ``__hash__`` and ``__repr__`` are shared
functions that read the fields with an ``operator.attrgetter`` made when the class is: they
compare and hash the same tuples a dataclass's generated methods do (so hash values, and the
order of sets of records, are the same) and print the same text (archivebox's one-file check
2.31G -> 2.25G instructions, hyperkitty's cold check 4.22G -> 4.18G). ``__init__`` is the one
``dataclass`` would write, made from a template compiled once per shape of fields and renamed to
the class's (``_assigning_init``): the same parameters, defaults and ``__post_init__`` call;
only a class with a field the template does not take (``init=False``, keyword-only, an
``InitVar``) gets ``dataclass``'s own, as every frozen record does in the test suite.
Importing the command line and the analysis: 53 -> 47 ms, 2.5 ms of it before a one-file check
forks its helper.
"""

from __future__ import annotations

import os
import reprlib
from dataclasses import MISSING, Field, dataclass, fields
from operator import attrgetter
from types import CodeType, FunctionType
from typing import TYPE_CHECKING, Any, Callable, Dict, Sequence, Tuple, Type, TypeVar

T = TypeVar("T")

FROZEN = os.environ.get("KEYDRIFT_FROZEN_RECORDS", "") not in ("", "0")


def _record(cls: Type[T]) -> Type[T]:
    """``@dataclass(frozen=True)``, without the guard outside the test suite (see above)."""
    made: Any = _made(cls, frozen=FROZEN)
    declared = fields(made)
    hashed = [f.name for f in declared if (f.compare if f.hash is None else f.hash)]
    made.__record_compared__ = staticmethod(_values_of([f.name for f in declared if f.compare]))
    made.__record_hashed__ = staticmethod(_values_of(hashed))
    made.__record_shown__ = tuple(f.name for f in declared if f.repr)
    made.__eq__, made.__hash__, made.__repr__ = _equal, _hash, _shown
    return made  # type: ignore[no-any-return]


def mutable(cls: Type[T]) -> Type[T]:
    """``@dataclass``: fields that may be assigned, compared and printed by value, no hash (the
    analysis's working state, which it builds up field by field), made as a record is."""
    made: Any = _made(cls, frozen=False)
    declared = fields(made)
    made.__record_compared__ = staticmethod(_values_of([f.name for f in declared if f.compare]))
    made.__record_shown__ = tuple(f.name for f in declared if f.repr)
    own = cls.__dict__  # what the class defines itself stays, as with ``dataclass``
    if "__eq__" not in own:
        made.__eq__ = _equal
        if "__hash__" not in own:
            made.__hash__ = None  # what ``dataclass`` does for a class that compares and may change
    if "__repr__" not in own:
        made.__repr__ = _shown
    return made  # type: ignore[no-any-return]


def _made(cls: type, frozen: bool) -> type:
    """``dataclass(frozen=frozen)`` of the class, its ``__init__`` made from a template unless
    frozen or a field needs ``dataclass``'s own (``_fields_take_a_template``); no ``__eq__``,
    ``__hash__`` or ``__repr__`` generated (the shared ones below are set)."""
    templated = _fields_take_a_template(cls)
    made = dataclass(frozen=frozen, eq=False, repr=False, init=frozen or not templated)(cls)
    if templated:
        init = _assigning_init(made, fields(made))  # made in the suite too: a field it cannot take fails there
        if not frozen:
            made.__init__ = init  # type: ignore[misc]
    return made


def _fields_take_a_template(cls: type) -> bool:
    """Whether every field of the class (and of the dataclasses it derives from) is a parameter
    of ``__init__`` that a template takes (``_taken``), and none is named ``self``. Read before
    ``dataclass`` makes the class (it replaces a ``field()`` by its default);
    ``_assigning_init`` confirms it from the fields made."""
    for klass in cls.__mro__[-1:0:-1]:
        for declared in getattr(klass, "__dataclass_fields__", {}).values():
            if not _taken(declared):
                return False
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        text = annotation if isinstance(annotation, str) else repr(annotation)
        value = cls.__dict__.get(name)
        if name == "self" or "InitVar" in text or "KW_ONLY" in text or (isinstance(value, Field) and not _taken(value)):
            return False
    return True


def _taken(declared: Field) -> bool:  # type: ignore[type-arg]
    """A field the template takes: a parameter of ``__init__``, positional, not an ``InitVar``."""
    return declared.init and getattr(declared, "kw_only", False) is not True \
        and "INITVAR" not in str(getattr(declared, "_field_type", "")).upper()


class _Factory:
    """The default of a parameter whose field has a ``default_factory`` (as ``dataclass``'s)."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()

# Compiled ``__init__`` templates by their fields' kinds ("=": assigned as given, "f": made by
# its factory when not given) and whether ``__post_init__`` is called.
_TEMPLATES: Dict[Tuple[str, bool], CodeType] = {}


def _assigning_init(cls: type, declared: Sequence[Field]) -> Callable[..., None]:  # type: ignore[type-arg]
    """The ``__init__`` ``dataclass`` would generate for the fields, made from a template
    compiled once per shape (``_template``) and renamed to them with ``CodeType.replace``:
    ``dataclass`` compiles the source of each class's ``__init__`` when its module is imported,
    120 us a class, 6.5 of the 11 ms importing the analysis's 53 dataclasses took."""
    names = tuple(f.name for f in declared)
    defaults: list = []
    kinds = ""
    scope: Dict[str, Any] = {"_F": _FACTORY}
    for number, item in enumerate(declared):
        if not _taken(item) or item.name == "self":
            raise TypeError(f"{cls.__qualname__}.{item.name}: this field needs dataclass's own __init__")
        if item.default_factory is not MISSING:
            kinds += "f"
            scope[f"_d{number}"] = item.default_factory
            defaults.append(_FACTORY)
        else:
            kinds += "="
            if item.default is not MISSING:
                defaults.append(item.default)
            elif defaults:
                raise TypeError(f"non-default argument {item.name!r} follows default argument")
    template = _template(kinds, hasattr(cls, "__post_init__"))
    renamed = {f"_f{number}": name for number, name in enumerate(names)}
    code = template.replace(co_varnames=("self", *names), co_names=tuple(renamed.get(n, n) for n in template.co_names))
    if hasattr(code, "co_qualname"):  # Python 3.11+
        code = code.replace(co_qualname=f"{cls.__qualname__}.__init__")
    init = FunctionType(code, scope, "__init__", tuple(defaults) or None)
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


def _template(kinds: str, post_init: bool) -> CodeType:
    """``def __init__(self, _p0, ...)``, assigning ``self._f0 = _p0`` (or the factory's
    ``_d0()`` when ``_p0`` is ``_F``), for fields of these kinds."""
    found = _TEMPLATES.get((kinds, post_init))
    if found is None:
        lines = [f"self._f{n} = _p{n}" if kind == "=" else f"self._f{n} = _d{n}() if _p{n} is _F else _p{n}"
                 for n, kind in enumerate(kinds)]
        lines.append("self.__post_init__()" if post_init else "return None")
        parameters = "".join(f", _p{n}" for n in range(len(kinds)))
        namespace: Dict[str, Any] = {}
        exec(f"def __init__(self{parameters}):\n    " + "\n    ".join(lines), namespace)  # noqa: S102 - our own text
        found = _TEMPLATES[(kinds, post_init)] = namespace["__init__"].__code__
    return found


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
