"""``keydrift.records.record``: a dataclass that compares, hashes, prints and is replaced as a
frozen one does; frozen in the test suite, so an assignment to a record fails here."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from typing import Optional, Tuple

import pytest

from keydrift import records
from keydrift.analysis.facts import Step, StepKind
from keydrift.records import record


@record
class _Pair:
    name: str
    parts: Tuple[str, ...] = ()


def test_the_suite_runs_with_frozen_records():
    assert records.FROZEN
    with pytest.raises(dataclasses.FrozenInstanceError):
        _Pair("a").name = "b"  # type: ignore[misc]


def test_a_record_compares_hashes_prints_and_is_replaced_by_value():
    first, second = _Pair("a", ("x",)), _Pair("a", ("x",))
    assert first == second and hash(first) == hash(second) and len({first, second}) == 1
    assert first != _Pair("b") and repr(first) == "_Pair(name='a', parts=('x',))"
    assert dataclasses.replace(first, name="b") == _Pair("b", ("x",))
    assert Step("case", ".lower()").kind is StepKind.CASE  # a __post_init__ still converts


@pytest.mark.parametrize("setting, frozen", [("1", True), ("", False), ("0", False)])
def test_outside_the_suite_a_record_is_an_unfrozen_dataclass_with_the_same_hash(setting, frozen):
    code = ("from keydrift.records import FROZEN; from keydrift.analysis.registry import Site; "
            "s = Site('a.py', 3); print(FROZEN, hash(s) == hash(Site('a.py', 3)), s == Site('a.py', 3), "
            "{s: 1}[Site('a.py', 3)])")
    env = dict(os.environ, KEYDRIFT_FROZEN_RECORDS=setting)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert done.stdout.split() == [str(frozen), "True", "True", "1"]


@record
class _Marked:
    name: str
    note: Optional[int] = dataclasses.field(default=None, compare=False)
    seen: int = dataclasses.field(default=0, hash=False)
    hidden: str = dataclasses.field(default="", repr=False)


@dataclasses.dataclass(unsafe_hash=True)
class _MarkedDataclass:
    name: str
    note: Optional[int] = dataclasses.field(default=None, compare=False)
    seen: int = dataclasses.field(default=0, hash=False)
    hidden: str = dataclasses.field(default="", repr=False)


@record
class _Single:
    name: str


@record
class _Empty:
    pass


def test_a_record_hashes_compares_and_prints_as_the_dataclass_it_stands_for():
    """The same tuples are hashed as a generated ``__hash__`` hashes (sets of records iterate in
    the same order), fields left out of comparison, hashing or ``repr`` are left out."""
    mine, theirs = _Marked("a", 3, 2, "h"), _MarkedDataclass("a", 3, 2, "h")
    assert hash(mine) == hash(theirs) == hash(("a", "h"))
    assert repr(mine) == repr(theirs).replace("_MarkedDataclass", "_Marked") == "_Marked(name='a', note=3, seen=2)"
    assert mine == _Marked("a", None, 2, "h") and mine != _Marked("a", 3, 1, "h") and mine != theirs
    assert hash(_Single("x")) == hash(("x",)) and _Single("x") == _Single("x")
    assert repr(_Single("x")) == "_Single(name='x')"
    assert hash(_Empty()) == hash(()) and _Empty() == _Empty() and repr(_Empty()) == "_Empty()"
    assert _Single("x").__eq__("x") is NotImplemented
    assert hash(Step("case", ".lower()")) == hash((StepKind.CASE, ".lower()"))


def test_every_dataclass_of_the_package_says_what_it_is():
    """A dataclass without a docstring gets one made from ``inspect.signature`` when it is created
    (40 us apiece, on every run's start); each says what it holds instead."""
    import dataclasses
    import importlib
    import pkgutil
    import sys

    import keydrift

    for info in pkgutil.walk_packages(keydrift.__path__, "keydrift."):
        if info.name.endswith("__main__"):
            continue  # runs the command
        try:
            importlib.import_module(info.name)
        except ImportError:  # an optional extra (the editor server's, the audit's) not installed
            continue
    undocumented = sorted(
        f"{name}.{attribute}" for name, module in list(sys.modules.items()) if name.startswith("keydrift")
        for attribute, value in vars(module).items()
        if isinstance(value, type) and dataclasses.is_dataclass(value) and value.__module__ == name
        and (value.__doc__ or "").startswith(value.__name__ + "("))
    assert undocumented == []


# Outside the suite a record's ``__init__`` is made from a template renamed to its fields
# (``records._assigning_init``): the shapes it takes, and those it leaves to ``dataclass``.
_SHAPES = '''
import dataclasses, inspect, sys
from typing import ClassVar, List
from keydrift.records import mutable, record, FROZEN

def shapes(decorate):
    @decorate
    class Empty:
        """no field"""

    @decorate
    class Plain:
        """fields, defaults, a field left out of comparisons"""
        name: str
        count: int = 2
        note: str = dataclasses.field(default="n", compare=False)
        kind: ClassVar[str] = "class attribute, no field"

    @decorate
    class Converted:
        """a __post_init__"""
        text: str
        def __post_init__(self):
            object.__setattr__(self, "text", self.text.upper())

    @decorate
    class Derived(Plain):
        """fields of a base, one more with a default"""
        extra: bool = False

    @decorate
    class Made:
        """a default_factory: dataclass's own __init__"""
        items: List[str] = dataclasses.field(default_factory=list)

    @decorate
    class Hidden:
        """a field __init__ leaves out: dataclass's own"""
        name: str
        size: int = dataclasses.field(default=0, init=False)
    return [Empty, Plain, Converted, Derived, Made, Hidden]

def described(cls):
    made = []
    for args, kwargs in [((), {}), (("a",), {}), (("a", 3), {}), ((), {"name": "b", "count": 4}),
                         (("a", 3, "m", True), {}), (("a",), {"extra": True}), ((["x"],), {}),
                         (("a",), {"nope": 1}), (("a", 1, "m", True, 5), {})]:
        try:
            made.append(repr(cls(*args, **kwargs)))
        except (TypeError, AttributeError) as error:
            made.append(type(error).__name__)
    signature = inspect.signature(cls.__init__)
    return [cls.__name__, [(p.name, p.kind.name, repr(p.default)) for p in signature.parameters.values()], made]

print(FROZEN)
print(repr([described(c) for c in shapes(record)]))
print(repr([described(c) for c in shapes(lambda c: dataclasses.dataclass(frozen=True)(c))]))
print(shapes(record)[1].__init__.__qualname__)
print(repr([described(c) for c in shapes(mutable)]))
print(repr([described(c) for c in shapes(dataclasses.dataclass)]))
Plain = shapes(mutable)[1]
changing = Plain("a")
changing.count = 5
print(repr(changing), changing == Plain("a", 5), changing != Plain("a"), Plain.__hash__ is None)
'''


def _run_shapes(setting: str) -> list:
    env = dict(os.environ, KEYDRIFT_FROZEN_RECORDS=setting)
    done = subprocess.run([sys.executable, "-c", _SHAPES], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


@pytest.mark.parametrize("setting", ["", "1"])
def test_a_records_init_takes_what_the_dataclass_init_takes(setting):
    frozen, as_records, as_dataclasses, qualname, as_mutable, as_plain_dataclasses, changed = _run_shapes(setting)
    assert frozen == str(bool(setting))
    assert as_records == as_dataclasses  # parameters, defaults, the objects made and the errors
    assert "Plain(name='a', count=3, note='n')" in as_records and "Converted(text='A')" in as_records
    assert qualname.endswith("Plain.__init__")
    assert as_mutable == as_plain_dataclasses
    assert changed == "shapes.<locals>.Plain(name='a', count=5, note='n') True True True"


def test_the_packages_records_take_the_same_parameters_made_from_the_template_or_by_dataclass():
    code = ("import importlib, inspect, pkgutil, keydrift, keydrift.records as records\n"
            "out = []\n"
            "for info in sorted(pkgutil.walk_packages(keydrift.__path__, 'keydrift.'), key=lambda i: i.name):\n"
            "    if info.name.endswith('__main__'): continue\n"
            "    module = importlib.import_module(info.name)\n"
            "    for name, value in sorted(vars(module).items()):\n"
            "        if isinstance(value, type) and hasattr(value, '__record_compared__') and value.__module__ == module.__name__:\n"
            "            parameters = [(p.name, p.kind.name, repr(p.default)) for p in inspect.signature(value.__init__).parameters.values()]\n"
            "            out.append((info.name, name, parameters, value.__init__.__globals__.get('_F') is records._FACTORY,\n"
            "                        hasattr(value, '__record_hashed__')))\n"
            "print(repr(out))")
    seen = {}
    for setting in ("", "1"):
        env = dict(os.environ, KEYDRIFT_FROZEN_RECORDS=setting)
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
        assert done.returncode == 0, done.stderr
        seen[setting] = eval(done.stdout)  # noqa: S307 - our own subprocess's repr of strings
    unfrozen, frozen = seen[""], seen["1"]
    assert len(unfrozen) >= 40
    # the same parameters, kinds and defaults, whichever made the __init__
    assert [item[:3] for item in unfrozen] == [item[:3] for item in frozen]
    assert sum(item[3] for item in unfrozen) >= 30  # most are made from the template outside the suite
    # frozen records get dataclass's own; ``mutable`` classes are made from the template in the suite too
    assert not any(templated for _, _, _, templated, is_record in frozen if is_record)
    assert all(templated for _, _, _, templated, is_record in frozen if not is_record)
    assert sum(not is_record for *_, is_record in frozen) >= 10
