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
