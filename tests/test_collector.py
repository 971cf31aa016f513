"""The collector's pace: raised for a keydrift run, never lowered, and left alone when off; a check
run, whose processes are keydrift's alone, collects when its memory grew."""

from __future__ import annotations

import gc

import pytest

from keydrift import collector
from keydrift.collector import (
    GROWTH_KIB, YOUNG_THRESHOLD, between_files, collect_less_often, collecting_by_growth, collecting_by_growth_from_now,
)
from keydrift.flake8_plugin import KeydriftChecker


@pytest.fixture(autouse=True)
def restored(monkeypatch):
    threshold, enabled = gc.get_threshold(), gc.isenabled()
    monkeypatch.setattr(collector, "_ending_after_run", False)
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


def _peaks(monkeypatch, values):
    """The peak memory the collector reads, one value per reading (KiB)."""
    readings = iter(values)
    monkeypatch.setattr(collector, "_peak_kib", lambda: next(readings))
    collected = []
    monkeypatch.setattr(gc, "collect", lambda *generation: collected.append(generation) or 0)
    monkeypatch.setattr(gc, "freeze", lambda: collected.append("freeze"))
    return collected


def test_a_check_run_collects_in_full_only_when_its_peak_grew(monkeypatch):
    gc.enable()
    collected = _peaks(monkeypatch, [1000, 1000, 1000 + GROWTH_KIB - 1, 1000 + GROWTH_KIB, 1000 + GROWTH_KIB,
                                      1000 + 2 * GROWTH_KIB - 1, 1000 + 2 * GROWTH_KIB, 1000 + 2 * GROWTH_KIB])
    with collecting_by_growth():
        assert not gc.isenabled()
        between_files()  # the first file: where growth is counted from
        between_files()
        assert collected == []
        between_files()  # grown by the whole amount: one full collection, its survivors frozen
        assert collected == [(), "freeze"]
        between_files()
        assert collected == [(), "freeze"]
        between_files()
        assert collected == [(), "freeze", (), "freeze"]
    assert gc.isenabled()


def test_outside_a_check_run_nothing_is_collected_between_files(monkeypatch):
    collected = _peaks(monkeypatch, [10, 10 + 10 * GROWTH_KIB])
    between_files()
    between_files()
    assert collected == []


def test_a_run_where_collection_is_off_or_the_peak_unknown_changes_nothing(monkeypatch):
    gc.disable()
    with collecting_by_growth():
        assert not gc.isenabled()
    assert not gc.isenabled()
    gc.enable()
    monkeypatch.setattr(collector, "_peak_kib", lambda: None)
    with collecting_by_growth():
        assert gc.isenabled()
    assert gc.isenabled()


def test_a_check_run_in_process_gives_the_collector_back(tmp_path):
    from keydrift.cli import main

    gc.enable()
    (tmp_path / "m.py").write_text("x = 1\n")
    assert main(["check", "--no-cache", "-q", str(tmp_path)]) == 0
    assert gc.isenabled()


def test_what_a_run_froze_is_collected_again_after_it(tmp_path, monkeypatch):
    """Each full collection of a run freezes its survivors (the next ones pass the kept index
    over); a process that goes on after the run gets them back into its collector, so a cycle
    that was alive at a collection of the run is freed once it dies."""
    from keydrift.cli import main

    monkeypatch.setattr(collector, "GROWTH_KIB", 0)
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.py").write_text("x = 1\n")
    frozen_during_the_run = []
    real = collector.between_files

    def counting_the_frozen():
        real()
        frozen_during_the_run.append(gc.get_freeze_count())

    monkeypatch.setattr("keydrift.cli.between_files", counting_the_frozen)
    gc.enable()
    assert main(["check", "--no-cache", "-q", "-j", "1", str(tmp_path)]) == 0
    assert max(frozen_during_the_run) > 0
    assert gc.get_freeze_count() == 0 and gc.isenabled()


def test_a_check_run_frees_cycles_once_it_grew(tmp_path, monkeypatch):
    """With the peak read as ever growing, each file brings a collection: the run's cycles go."""
    from keydrift.cli import main

    monkeypatch.setattr(collector, "GROWTH_KIB", 0)
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.py").write_text("x = 1\n")
    freed = []

    class Cyclic:
        def __init__(self):
            self.me = self

        def __del__(self):
            freed.append(1)

    real = collector.between_files

    def leaving_a_cycle():
        Cyclic()
        real()

    monkeypatch.setattr("keydrift.cli.between_files", leaving_a_cycle)
    assert main(["check", "--no-cache", "-q", "-j", "1", str(tmp_path)]) == 0
    assert len(freed) >= 2  # each cycle left before the last file is freed by the next one



def test_a_host_that_froze_objects_of_its_own_keeps_them_frozen(tmp_path, monkeypatch):
    """A run in a process whose host froze objects (a server's start-up, frozen before it
    forks) freezes nothing: unfreezing what it froze at the end would unfreeze the host's too."""
    from keydrift.cli import main

    monkeypatch.setattr(collector, "GROWTH_KIB", 0)
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.py").write_text("x = 1\n")
    gc.enable()
    gc.freeze()
    try:
        assert gc.get_freeze_count() > 0
        called = []
        monkeypatch.setattr(gc, "freeze", lambda: called.append("freeze"))
        monkeypatch.setattr(gc, "unfreeze", lambda: called.append("unfreeze"))
        assert main(["check", "--no-cache", "-q", "-j", "1", str(tmp_path)]) == 0
        assert called == [] and gc.get_freeze_count() > 0 and gc.isenabled()
    finally:
        monkeypatch.undo()
        gc.unfreeze()

def test_a_run_that_ends_its_process_leaves_collection_off(tmp_path, monkeypatch):
    """``keydrift check`` from the command line exits right after the run: collection stays off
    (switched on, it would traverse all the run made just before exit discards it)."""
    from keydrift import cli

    exits = []

    def recorded_exit(code):
        exits.append(code)
        raise SystemExit(code)

    monkeypatch.setattr(cli.os, "_exit", recorded_exit)
    monkeypatch.setattr(cli.sys, "argv", ["keydrift", "check", "--no-cache", "-q", str(tmp_path)])
    gc.enable()
    (tmp_path / "m.py").write_text("x = 1\n")
    with pytest.raises(SystemExit):
        cli.run()
    assert exits == [0]
    assert not gc.isenabled()


@pytest.fixture
def pace_of_this_process(monkeypatch):
    """``collecting_by_growth_from_now`` changes the process for good: its state restored after."""
    monkeypatch.setattr(collector, "_by_growth", False)
    monkeypatch.setattr(collector, "_collected_at", None)


def test_a_process_that_ends_with_its_run_collects_by_growth_from_now_on(monkeypatch, pace_of_this_process):
    gc.set_threshold(YOUNG_THRESHOLD, 10, 10)
    gc.enable()
    collected = _peaks(monkeypatch, [500, 500, 500 + GROWTH_KIB - 1, 500 + GROWTH_KIB, 500 + GROWTH_KIB, 500 + GROWTH_KIB])
    collecting_by_growth_from_now()  # (reads the peak: whether it can be read)
    assert not gc.isenabled()
    between_files()  # where growth is counted from
    between_files()
    assert collected == []
    between_files()
    assert collected == [(), "freeze"]
    between_files()
    assert collected == [(), "freeze"]
    assert not gc.isenabled()  # for the rest of the process


@pytest.mark.parametrize("host", ["collection off", "a higher threshold", "no peak to read"])
def test_a_host_that_chose_its_collector_or_a_process_without_a_peak_keeps_it(monkeypatch, pace_of_this_process, host):
    gc.set_threshold(YOUNG_THRESHOLD * (3 if host == "a higher threshold" else 1), 10, 10)
    (gc.disable if host == "collection off" else gc.enable)()
    if host == "no peak to read":
        monkeypatch.setattr(collector, "_peak_kib", lambda: None)
    before = gc.get_threshold(), gc.isenabled()
    collecting_by_growth_from_now()
    assert (gc.get_threshold(), gc.isenabled()) == before
    collected = _peaks(monkeypatch, [10, 10 + 10 * GROWTH_KIB])
    between_files()
    between_files()
    assert collected == []


@pytest.mark.parametrize("worker", ["analyzing", "reading results", "not a worker"])
def test_a_flake8_worker_that_analyzes_takes_a_check_runs_pace(monkeypatch, tmp_path, pace_of_this_process, worker):
    """A flake8 worker ends with the run: once it holds the analysis (and the project's index
    with it), collection waits for memory to grow. A worker that reads stored results only, or
    a check in flake8's own process (``-j 1``, flake8's API in a process that lives on), keeps
    the raised threshold."""
    import ast
    import sys

    from keydrift import diskcache, flake8_plugin

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(flake8_plugin, "_in_a_worker", lambda: worker != "not a worker")
    monkeypatch.setattr(flake8_plugin, "_LOOK", [])
    monkeypatch.setattr(flake8_plugin, "_PACED", [])
    monkeypatch.setattr(diskcache, "_LOOKED", None)  # the worker's look, entered for good
    monkeypatch.setattr(flake8_plugin, "check_cached", lambda *args: [])
    monkeypatch.setattr(flake8_plugin, "findings_for", lambda *args, **kwargs: [])
    if worker == "reading results":
        monkeypatch.delitem(sys.modules, "keydrift.analysis.project", raising=False)
    else:
        import keydrift.analysis.project  # noqa: F401 - what an analyzing worker has loaded
    gc.set_threshold(YOUNG_THRESHOLD, 10, 10)
    gc.enable()
    (tmp_path / "m.py").write_text("x = 1\n")
    assert list(KeydriftChecker(ast.parse("x = 1\n"), "m.py", ["x = 1\n"]).run()) == []
    assert gc.isenabled() is (worker != "analyzing")
    assert collector._by_growth is (worker == "analyzing")
