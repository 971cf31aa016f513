"""Reading CPython's trees and lines: the traversal every reader uses (``tree.child_nodes``) and
the lines as CPython numbers them (``source.physical_lines``), which every position relies on."""

from __future__ import annotations

import ast
import sys

import pytest

from keydrift.source import physical_lines


def test_lines_break_only_where_python_breaks_them() -> None:
    assert physical_lines("a\x0cb\rc\r\nd") == ["a\x0cb\r", "c\r\n", "d"]
    # str.splitlines breaks at these too; CPython does not, so neither do the positions
    assert physical_lines("a\x85b\u2028c\vd\x1ce\n") == ["a\x85b\u2028c\vd\x1ce\n"]
    assert physical_lines("x = 1\n") == ["x = 1\n"] and physical_lines("") == []


def test_a_node_found_by_its_line_is_on_that_physical_line() -> None:
    source = "s = '\x0c\u2028'\r\nt = 2\rPage.objects.get(url=u)\n"
    call = next(n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call))
    assert physical_lines(source)[call.lineno - 1].startswith("Page.objects.get(")


@pytest.mark.skipif(sys.version_info < (3, 10), reason="match statements")
def test_child_nodes_are_ast_children_without_operator_or_context_leaves():
    """The traversal every reader uses: the children ``ast.iter_child_nodes`` gives, in its
    order, less the shared operator and context singletons."""
    from keydrift.analysis.tree import _CHILD_READERS, _LEAF_TYPES, child_nodes

    source = ("def f(a, /, b=1, *c, d, **e):\n    global g\n    x = -a + b * 2 if not a and b or c else d\n"
              "    x += 1\n    del x\n    y = [i for i in c if i < 2 < 3]\n    z = {**e, 'k': v}\n"
              "    w = f'{a!r:>{b}}'\n    match a:\n        case {'k': 1, **rest} | [1, *more] if rest:\n"
              "            pass\n        case Point(x=0) as p:\n            pass\n    lambda q: (yield q)\n"
              "    with open(a) as h, open(b):\n        pass\n    try:\n        pass\n"
              "    except (E, F) as err:\n        raise X from err\n    import a.b as ab\n"
              "    from .m import n as nn\n    assert a, b\n    assert c\n    s = {a, b}\n"
              "    if (n := len(c)) > 1:\n        yield from c\n    elif n:\n        yield\n    else:\n"
              "        raise\n    for i in c:\n        break\n    while a:\n        continue\n"
              "    t = {k: v for k, v in e.items()}, {i for i in c}, (i for i in c), [*c], b[1:], f(a, k=b)\n"
              "    return await a, b[1:2, ::3], a.b\n")
    seen = set()
    for node in ast.walk(ast.parse(source)):
        seen.add(type(node))
        expected = [child for child in ast.iter_child_nodes(node) if not isinstance(child, _LEAF_TYPES)]
        assert child_nodes(node) == expected, ast.dump(node)
    # every node type read by hand-written fields (``_CHILD_READERS``) is among those compared
    assert set(_CHILD_READERS) <= seen, set(_CHILD_READERS) - seen
