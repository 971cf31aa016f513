"""The text of an expression (``values.code``): one spelling whatever the layout, the same when
asked again, and the names a binding's search for cycles follows (``keyflow._reaches``)."""

from __future__ import annotations

import ast
from typing import List

import pytest

from keydrift.source import physical_lines
from keydrift.analysis.keyflow import _reaches
from keydrift.analysis.tree import per_node, source_lines, walk
from keydrift.analysis.values import code


def _texts(source: str) -> List[str]:
    """The text of each expression statement's value, read with the module's lines current."""
    module = ast.parse(source)
    with source_lines(physical_lines(source)):
        return [code(statement.value) for statement in module.body if isinstance(statement, ast.Expr)]


@pytest.mark.parametrize("source", [
    "client.get(url, timeout=5)\n",
    "client.get(\n    url,\n    timeout = 5,\n)\n",
    "client.get(url,   timeout=5)\n",
    "client.get(  # the page\n    url, timeout=5)\n",
])
def test_a_call_has_one_spelling_whatever_its_layout(source):
    assert _texts(source) == ["client.get(url, timeout=5)"]


@pytest.mark.parametrize("source, text", [
    ("(user.email)\n", "(user.email)"),
    ("f((a))\n", "f((a))"),
    ("f(a)\n", "f(a)"),
    ("d[(a, b)]\n", "d[(a, b)]"),
    ("d[a, b]\n", "d[a, b]"),
    ("(\n  a +\n  b)\n", "( a + b)"),  # not a common shape: as written, whitespace collapsed
    ("sum(x for x in xs)\n", "sum(x for x in xs)"),
])
def test_parentheses_are_kept_where_written(source, text):
    assert _texts(source) == [text]


@pytest.mark.parametrize("source, text", [
    ('"a  b"\n', '"a  b"'),  # one literal: as written, its spaces kept
    ('"a" "b"\n', '"a" "b"'),
    ('"a"  "b"\n', '"a" "b"'),  # several literals: whitespace collapsed
    ('"say \\"hi\\""\n', '"say \\"hi\\""'),
    ("'''it's'''\n", "'''it's'''"),
    ('"back\\\\"\n', '"back\\\\"'),
    ("b'x'\n", "b'x'"),
    ("0x1F\n", "0x1F"),
])
def test_literals_are_their_text_as_written(source, text):
    assert _texts(source) == [text]


@pytest.mark.parametrize("source, text", [
    ('naïve.get("é",  k=1)\n', 'naïve.get("é", k=1)'),
    ('é = 1; (naïve.get)\n', "(naïve.get)"),
    ('f("é", (\n  a))\n', 'f("é", ( a))'),
])
def test_columns_of_lines_that_are_not_ascii_are_bytes(source, text):
    assert _texts(source)[-1] == text


def test_a_node_asked_twice_has_the_same_text():
    source = "session.query(User).filter((User.email == e)).first()\n"
    module = ast.parse(source)
    nodes = [n for n in walk(module) if isinstance(n, ast.expr)]
    with source_lines(physical_lines(source)):
        first = [code(n) for n in nodes]
        again = [code(n) for n in reversed(nodes)][::-1]
    assert first == again
    assert first[0] == "session.query(User).filter((User.email == e)).first()"


def test_the_text_of_another_module_is_read_from_its_own_lines():
    outer, inner = "f(a,\n  b)\n", "g( x )\n"
    outer_node, inner_node = ast.parse(outer).body[0].value, ast.parse(inner).body[0].value  # type: ignore[attr-defined]
    with source_lines(physical_lines(outer)):
        assert code(outer_node) == "f(a, b)"
        with source_lines(physical_lines(inner)):
            assert code(inner_node) == "g(x)"
        assert code(outer_node) == "f(a, b)"


def test_without_the_lines_a_node_is_unparsed():
    assert code(ast.parse("f( a ,b )").body[0].value) == "f(a, b)"  # type: ignore[attr-defined]


def _value(source: str) -> ast.expr:
    return ast.parse(source).body[0].value  # type: ignore[attr-defined]


def test_a_binding_that_leads_back_to_its_name_reaches_it():
    bound = {"nxt": _value("day + step")}
    assert _reaches(_value("nxt"), "day", bound)
    assert not _reaches(_value("nxt"), "week", bound)


def test_a_lambda_parameter_of_the_name_counts_but_is_not_followed():
    bound = {"x": _value("day")}
    assert _reaches(_value("sorted(rows, key=lambda day: day.at)"), "day", bound)
    assert not _reaches(_value("sorted(rows, key=lambda x: 1)"), "day", bound)
    assert _reaches(_value("sorted(rows, key=lambda y: x)"), "day", bound)


def test_a_search_past_its_budget_is_taken_for_a_cycle():
    bound = {f"v{i}": _value(f"v{i + 1} + 1") for i in range(300)}
    assert _reaches(_value("v0"), "missing", bound)
    assert not _reaches(_value("v250"), "missing", bound)


def test_per_node_makes_each_answer_once_while_the_lines_are_current() -> None:
    module = ast.parse("a = b\n")
    first, second = module.body[0].targets[0], module.body[0].value
    made: List[ast.AST] = []

    def make(node: ast.AST) -> str:
        made.append(node)
        return type(node).__name__

    with source_lines(["a = b\n"]):
        assert [per_node("t", n, make) for n in (first, second, first, second)] == ["Name"] * 4
        assert made == [first, second]
        assert per_node("other", first, make) == "Name" and len(made) == 3  # another memo
    with source_lines(["a = b\n"]):
        per_node("t", first, make)
        assert len(made) == 4  # thrown away with the lines it was made under
    per_node("t", first, make)
    per_node("t", first, make)
    assert len(made) == 6  # outside any lines: made every time


def test_per_node_keeps_nothing_when_making_raises() -> None:
    node = ast.parse("x\n").body[0]
    calls: List[int] = []

    def failing(_: ast.AST) -> str:
        calls.append(1)
        raise AttributeError("no positions")

    with source_lines(["x\n"]):
        for _ in range(2):
            with pytest.raises(AttributeError):
                per_node("t", node, failing)
    assert len(calls) == 2
