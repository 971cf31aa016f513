"""Parsing: one tree, CPython's (flake8's when it gives one, never changed), within a size limit;
a check that finds nothing to fix never loads libcst."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap

import pytest

from keydrift.analysis.parsing import SourceRejected, parse

SOURCE = "import os\n\n\ndef f(u):  # note\n    return Page.objects.get(url=u.lower() )\n"


def test_the_tree_is_cpythons() -> None:
    tree = parse(SOURCE, "m.py")
    assert isinstance(tree, ast.Module)
    assert ast.dump(tree, include_attributes=True) == ast.dump(ast.parse(SOURCE), include_attributes=True)


def test_a_given_tree_is_not_parsed_again_nor_changed() -> None:
    given = ast.parse(SOURCE)
    before = ast.dump(given, include_attributes=True)
    assert parse(SOURCE, "m.py", tree=given) is given  # flake8's, shared with other plugins
    assert ast.dump(given, include_attributes=True) == before


@pytest.mark.parametrize("given", [False, True])
def test_the_size_limit_counts_the_whole_file(monkeypatch, given) -> None:
    from keydrift.analysis import parsing

    padding = "".join(f"def f{i}(a):\n    print(a, {i})\n" for i in range(60))
    source = padding + "def lookup(url):\n    return Page.objects.get(url=url)\n"
    tree = ast.parse(source) if given else None
    monkeypatch.setattr(parsing, "MAX_PARSED_CHARACTERS", len(source) - 1)
    with pytest.raises(SourceRejected) as raised:
        parse(source, "m.py", tree=tree)
    assert raised.value.beyond_limits
    monkeypatch.setattr(parsing, "MAX_PARSED_CHARACTERS", len(source))
    assert parse(source, "m.py", tree=tree).body[-1].name == "lookup"


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
