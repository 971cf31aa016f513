"""The rule registry: one code per rule, in order, each with its full documentation."""

from __future__ import annotations

import importlib
import re

import pytest

from keydrift.codes import ALL_CODES, FIXABLE_CODES, REGISTRY_CODES
from keydrift.fixes import FIXERS
from keydrift.rules import ALL_RULES, REGISTRY_RULES, find_rule
from keydrift.rules._base import REQUIRED_SECTIONS

FAMILIES = {"1", "2", "3", "4", "9"}


def test_codes_are_unique_and_in_order() -> None:
    codes = [rule.CODE for rule in ALL_RULES]
    assert len(codes) == len(set(codes))
    assert codes == sorted(codes)
    assert all(re.fullmatch(r"KD\d{3}", c) and c[2] in FAMILIES for c in codes)


def test_all_codes_are_the_rules_codes() -> None:
    assert ALL_CODES == tuple(rule.CODE for rule in ALL_RULES)


def test_the_registry_codes_are_the_registry_rules() -> None:
    assert REGISTRY_CODES == tuple(rule.CODE for rule in REGISTRY_RULES)


def test_the_fixable_codes_are_those_a_fix_is_registered_for() -> None:
    assert FIXABLE_CODES == tuple(sorted(FIXERS))


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.CODE)
def test_every_rule_is_documented(rule) -> None:
    assert rule.NAME and re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.NAME)
    assert rule.SUMMARY
    assert set(REQUIRED_SECTIONS) <= set(rule.sections()), rule.CODE
    assert find_rule(rule.CODE.lower()) is rule


@pytest.mark.parametrize("rule", [r for r in ALL_RULES if not r.CODE.startswith("KD9")], ids=lambda r: r.CODE)
def test_module_name_starts_with_the_code(rule) -> None:
    module = importlib.import_module(rule.__module__)
    assert module.__name__.rsplit(".", 1)[-1].startswith(rule.CODE.lower() + "_")
