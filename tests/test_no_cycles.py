"""What a check leaves behind is freed by reference counting: no reference cycle holds an
analysis, a summary, a tree or a stack of frames. A cycle is freed only by a full collection,
which comes rarely in a process holding a project's index (``keydrift.collector``), so what it
reaches stays in memory meanwhile, and the collections that find it traverse everything."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path
from typing import Callable, List

from keydrift.analysis import sql
from keydrift.analysis.facts import AccessKind, Role
from keydrift.analysis.project import DemandedExport, forget_indexes, project_index
from keydrift.analysis.registry import KeyUse, Origin, _literal
from keydrift.config import load_config
from tests.test_demanded_exports import PROJECT, _check
from tests.test_project_index import write_project

SQL_PROJECT = {
    "app/__init__.py": "",
    "app/db.py": """
        def find(cursor, url):
            cursor.execute("SELECT id FROM pages WHERE url = %s", (url,))
            return cursor.fetchone()

        def broken(cursor, url):
            cursor.execute("SELECT FROM WHERE (( url = %s", (url.lower(),))

        def save(cursor, url):
            cursor.execute("INSERT INTO pages (url) VALUES (%s)", (url.strip(),))
    """,
}


def _cyclic_garbage(run: Callable[[], object]) -> List[object]:
    """What ``run`` leaves that only the cyclic collector would free."""
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        run()
        gc.collect()
        return list(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was_enabled:
            gc.enable()


def _of_the_analysis(garbage: List[object]) -> List[str]:
    """The garbage that holds what an analysis made: keydrift's objects, syntax trees, frames."""
    kinds = (type(o) for o in garbage)
    return sorted({f"{k.__module__}.{k.__qualname__}" for k in kinds
                   if k.__module__.startswith(("keydrift", "ast")) or k.__name__ in ("frame", "traceback")})


def _check_all(root: Path, names: List[str]) -> None:
    for name in names:
        _check(root, name, cache=False)


def test_exports_an_index_lets_go_of_leave_no_cycle(tmp_path: Path) -> None:
    """Exports made on demand for importers, their summaries asked through their mapping, then
    let go of while the index lives on (as it does between a large project's directories)."""
    write_project(tmp_path, PROJECT)
    forget_indexes()
    config = load_config(str(tmp_path / "app" / "tasks.py"))
    index = project_index(config, use_cache=False)
    near = str(tmp_path / "app" / "tasks.py")
    exports = [index.module_export(name, near) for name in ("app.repo", "app.store")]
    assert any(isinstance(export, DemandedExport) for export in exports)
    assert [export.summaries.get(name) is not None for export, name in zip(exports, ("save_result", "put"))] \
        == [True, True]

    def let_go() -> None:
        exports.clear()
        index.let_go_of_modules()

    garbage = _cyclic_garbage(let_go)
    forget_indexes()
    assert _of_the_analysis(garbage) == []


def test_checking_files_that_import_each_other_leaves_no_cycle(tmp_path: Path) -> None:
    write_project(tmp_path, PROJECT)
    forget_indexes()
    garbage = _cyclic_garbage(lambda: _check_all(tmp_path, ["app/tasks.py", "app/repo.py", "app/store.py"]))
    forget_indexes()
    assert _of_the_analysis(garbage) == []


def test_sql_the_parser_rejects_leaves_no_cycle(tmp_path: Path) -> None:
    write_project(tmp_path, SQL_PROJECT)
    forget_indexes()
    sql._parse_cached.cache_clear()
    garbage = _cyclic_garbage(lambda: _check_all(tmp_path, ["app/db.py"]))
    forget_indexes()
    assert _of_the_analysis(garbage) == []


def test_a_rejected_statement_does_not_keep_the_stack_that_asked() -> None:
    """sqlglot's parser keeps its errors, an error's traceback the parser's frames and, through
    them, every frame of the analysis that asked, with what they hold."""

    class Held:
        pass

    def asking() -> "weakref.ref[Held]":
        held = Held()
        assert sql._parse("SELECT FROM WHERE (( url = %s") is None
        return weakref.ref(held)

    gc.collect()
    gc.disable()
    try:
        assert asking()() is None
    finally:
        gc.enable()


def test_keys_written_as_literals_store_their_strings() -> None:
    def use(text: str, steps: tuple = ()) -> KeyUse:
        return KeyUse(AccessKind.WRITE, Role.STORE, "User", "email", steps, frozenset(), Origin.LOCAL, text, text,
                      "f", None)  # type: ignore[arg-type]

    assert _literal(use('"a@example.com"')).constants == ("a@example.com",)
    assert _literal(use('("user:"\n "a")')).constants == ("user:a",)
    assert _literal(use("r'x\\d'")).constants == ("x\\d",)
    for text in ('b"raw"', 'f"{prefix}a"', '"a".lower()', "email", "42", '"a" + b', "("):
        assert _literal(use(text)).constants == (), text
    assert _literal(use('"a"', steps=("lower",))).constants == ()
    assert _cyclic_garbage(lambda: [_literal(use('"k%d"' % i)) for i in range(50)]) == []
