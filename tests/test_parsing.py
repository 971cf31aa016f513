"""Parsing: one tree, CPython's; the function gate gives the tree the analysis reads without
changing the one it was given (flake8's), and a check that finds nothing to fix never loads libcst."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap

import pytest

from keydrift.analysis.gating import reduced_tree
from keydrift.analysis.parsing import SourceRejected, parse

SOURCE = "import os\n\n\ndef f(u):  # note\n    return Page.objects.get(url=u.lower() )\n"
GATED = "def render(request, template):\n    logging.info(template)\n\ndef lookup(url):\n    return Page.objects.get(url=url)\n"


def test_the_tree_is_cpythons() -> None:
    tree = parse(SOURCE, "m.py")
    assert isinstance(tree, ast.Module)
    assert ast.dump(tree, include_attributes=True) == ast.dump(ast.parse(SOURCE), include_attributes=True)


def test_the_gate_gives_the_tree_the_analysis_reads() -> None:
    tree = parse(GATED, "m.py", lambda text, whole: reduced_tree(text, whole, "m"))
    assert [type(s).__name__ for s in tree.body[0].body] == ["Pass"]  # no key vocabulary: left out
    assert tree.body[0].body[0].lineno == 2
    assert isinstance(tree.body[1].body[0], ast.Return)  # a lookup: kept


def test_a_given_tree_is_not_parsed_again_nor_changed() -> None:
    given = ast.parse(GATED)
    before = ast.dump(given, include_attributes=True)
    tree = parse(GATED, "m.py", lambda text, whole: reduced_tree(text, whole, "m"), tree=given)
    assert ast.dump(given, include_attributes=True) == before  # flake8 shares it with other plugins
    assert tree.body[1] is given.body[1]  # kept code is the given tree's own nodes
    assert [type(s).__name__ for s in tree.body[0].body] == ["Pass"]


def test_the_size_limit_counts_what_the_gate_leaves(monkeypatch) -> None:
    from keydrift.analysis import parsing

    padding = "".join(f"def f{i}(a):\n    print(a, {i})\n" for i in range(60))
    source = padding + "def lookup(url):\n    return Page.objects.get(url=url)\n"
    monkeypatch.setattr(parsing, "MAX_PARSED_CHARACTERS", len(source) - 10)
    with pytest.raises(SourceRejected) as raised:
        parse(source, "m.py")
    assert raised.value.beyond_limits
    assert parse(source, "m.py", lambda text, whole: reduced_tree(text, whole, "m")).body[-1].name == "lookup"


def test_a_syntax_error_names_its_line() -> None:
    with pytest.raises(SourceRejected) as raised:
        parse("x = 1\nprint 'a'\n", "m.py")
    assert raised.value.line == 2 and not raised.value.beyond_limits


def test_checking_code_loads_no_libcst(tmp_path) -> None:
    """libcst is for rewriting code: checking a file (findings included) never imports it."""
    program = textwrap.dedent("""
        import sys
        from keydrift.engine import check_source
        from keydrift.types import Config

        source = "def f(u):\\n    Page.objects.get(url=u)\\n    Page.objects.create(url=u.lower())\\n"
        found = check_source(source, "app/views.py", Config(root=sys.argv[1], cache=False))
        print(sorted({f.code for f in found}), "libcst" in sys.modules)
    """)
    result = subprocess.run([sys.executable, "-c", program, str(tmp_path)], capture_output=True, text=True,
                            timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["['KD102']", "False"]
