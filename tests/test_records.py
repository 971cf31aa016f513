"""``keydrift.records.record``: a dataclass that compares, hashes, prints and is replaced as a
frozen one does; frozen in the test suite, so an assignment to a record fails here."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from typing import Tuple

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
