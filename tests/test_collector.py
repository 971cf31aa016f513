"""The collector's pace: raised for a keydrift run, never lowered, and left alone when off."""

from __future__ import annotations

import gc

import pytest

from keydrift.collector import YOUNG_THRESHOLD, collect_less_often
from keydrift.flake8_plugin import KeydriftChecker


@pytest.fixture(autouse=True)
def restored():
    threshold, enabled = gc.get_threshold(), gc.isenabled()
    yield
    gc.set_threshold(*threshold)
    (gc.enable if enabled else gc.disable)()


def test_the_default_young_threshold_is_raised_and_the_older_ones_kept():
    gc.set_threshold(700, 10, 10)
    collect_less_often()
    assert gc.get_threshold() == (YOUNG_THRESHOLD, 10, 10)


def test_a_higher_threshold_the_host_chose_is_kept():
    gc.set_threshold(YOUNG_THRESHOLD * 5, 20, 30)
    collect_less_often()
    assert gc.get_threshold() == (YOUNG_THRESHOLD * 5, 20, 30)


@pytest.mark.parametrize("off_by", ["disable", "zero threshold"])
def test_collection_switched_off_stays_off(off_by):
    if off_by == "disable":
        gc.set_threshold(700, 10, 10)
        gc.disable()
    else:
        gc.set_threshold(0, 10, 10)
    collect_less_often()
    assert gc.get_threshold()[0] == (700 if off_by == "disable" else 0)
    assert gc.isenabled() == (off_by != "disable")


def test_the_flake8_plugin_sets_the_pace_when_flake8_hands_it_the_options():
    gc.set_threshold(700, 10, 10)
    KeydriftChecker.parse_options(type("Options", (), {"disable_noqa": False})())
    assert gc.get_threshold()[0] == YOUNG_THRESHOLD


def test_the_cli_sets_the_pace_for_its_run(tmp_path):
    from keydrift.cli import main

    gc.set_threshold(700, 10, 10)
    (tmp_path / "m.py").write_text("x = 1\n")
    assert main(["check", "--no-cache", "-q", str(tmp_path)]) == 0
    assert gc.get_threshold() == (YOUNG_THRESHOLD, 10, 10)
