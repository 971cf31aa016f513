"""The function gate: which function bodies the analysis never reads, the text it leaves (every kept
line where it was, valid Python) and the tree the analysis reads instead."""

from __future__ import annotations

import ast
import sys
import textwrap

import pytest

from keydrift.analysis.gating import physical_lines, reduced_source, reduced_tree


def reduce(source: str, module: str = "app.views", words=()) -> str:
    source = textwrap.dedent(source).lstrip("\n")
    reduced = reduced_source(source, ast.parse(source), module, words)
    ast.parse(reduced)  # still Python
    assert len(physical_lines(reduced)) == len(physical_lines(source))
    return reduced


def bodies_kept(source: str, **kwargs) -> bool:
    source = textwrap.dedent(source).lstrip("\n")
    return reduce(source, **kwargs) == source


def test_a_function_without_key_vocabulary_keeps_only_its_signature() -> None:
    reduced = reduce('''
        import logging

        @register(
            "x")
        def render(request, template):
            """Draw it."""
            context = {"a": 1}
            logging.info(template)
            return None

        def lookup(url):
            return Page.objects.get(url=url.lower())
    ''')
    assert reduced.splitlines()[2:9] == ['@register(', '    "x")', 'def render(request, template):', '    pass', '', '', '']
    assert "Page.objects.get(url=url.lower())" in reduced.splitlines()[11]


@pytest.mark.parametrize("body", [
    "    cursor.execute('SELECT 1')",  # database vocabulary
    "    return url.rstrip('/')",  # a transformation
    "    return make(u)",  # returns something made from a parameter
    "    store_it(u)",  # calls a name imported from the project
    "    cache.set(u, 1)",  # a store named like one
    "    db.users.create_index('email', unique=True)",  # a uniqueness declaration
    "    tidy(u)\n    CONFIG.setup()",  # calls a kept function (tidy)
])
def test_functions_that_can_matter_are_kept(body: str) -> None:
    source = f"from .repo import store_it\n\ndef task(u):\n{body}\n\ndef tidy(u):\n    return u.strip()\n"
    assert reduced_source(source, ast.parse(source), "app.tasks") == source


def test_callers_and_callees_of_kept_functions_are_kept() -> None:
    assert bodies_kept('''
        class Crawler:
            def known(self, url):
                self.session.scalar(url)

            def visit(self, url):
                if self.known(url):
                    log(url)

            def log_line(self, text):
                pass
    ''')


def test_a_configured_wrapper_name_is_vocabulary() -> None:
    source = "def f(conn, u):\n    push_page(conn, u)\n"
    assert reduced_source(source, ast.parse(source), "m", ("push_page",)) == source
    assert reduced_source(source, ast.parse(source), "m") != source


@pytest.mark.parametrize("source", [
    "def f(a): print(a)\n",  # a body on the header's line
    "class A:\n    def f(self): print(1)\n",
])
def test_bodies_that_share_a_line_are_left_alone(source: str) -> None:
    assert reduced_source(source, ast.parse(source), "m") == source


def test_line_endings_form_feeds_and_tabs_keep_their_lines() -> None:
    source = "def f(a):\r\n\tprint(a)\r\n\x0c\r\ndef g(u):\r\n\tPage.objects.get(url=u)\r\n"
    reduced = reduced_source(source, ast.parse(source), "m")
    assert reduced == "def f(a):\r\n\tpass\r\n\x0c\r\ndef g(u):\r\n\tPage.objects.get(url=u)\r\n"
    assert physical_lines("a\x0cb\rc\r\nd") == ["a\x0cb\r", "c\r\n", "d"]


def test_a_caller_of_an_imported_project_helper_is_kept_whatever_its_module_name() -> None:
    """The project index decides what an import names, not this module's own package name
    (a file checked from above its package has a longer module name)."""
    source = ("from feeds.repo import insert_feed\n\n"
              "async def discover(http, conn, url):\n    response = await http.get(url)\n"
              "    await insert_feed(conn, str(response.url))\n")
    tree = ast.parse(source)
    kept = reduced_source(source, tree, "cases.one.feeds.discover", (), lambda name: name == "feeds.repo")
    assert kept == source
    assert reduced_source(source, tree, "cases.one.feeds.discover", (), lambda name: False) != source


def _shape(tree: ast.AST) -> list:
    """Every node's type and start, and where each ``pass`` ends (a blanked function keeps the end
    CPython gave it in the whole text)."""
    shape = []
    for node in ast.walk(tree):
        shape.append((type(node).__name__, getattr(node, "lineno", None), getattr(node, "col_offset", None)))
        if isinstance(node, ast.Pass):
            shape.append((node.end_lineno, node.end_col_offset))
    return shape


@pytest.mark.parametrize("source", [
    "import logging\n\n@register(\n    'x')\ndef render(request, template):\n    \"\"\"Draw it.\"\"\"\n"
    "    logging.info(template)\n\ndef lookup(url):\n    return Page.objects.get(url=url.lower())\n",
    "def f(a):\r\n\tprint(a)\r\n\x0c\r\ndef g(u):\r\n\tPage.objects.get(url=u)\r\n",
    "try:\n    def f(a):\n        print(a)\nexcept E:\n    def g(a):\n        'doc'\n        print(a)\n"
    "else:\n    pass\nclass A:\n    if x:\n        async def h(self, q):\n            print(q)\n",
    "match x:\n    case 1:\n        def h(q):\n            print(q)\n",
    "def f(a): print(a)\n",
])
def test_the_reduced_tree_is_the_tree_of_the_reduced_text(source: str) -> None:
    tree = ast.parse(source)
    before = ast.dump(tree, include_attributes=True)
    reduced = reduced_source(source, tree, "m")
    analyzed, characters = reduced_tree(source, tree, "m")
    assert ast.dump(tree, include_attributes=True) == before  # flake8's tree is shared: never changed
    assert characters == len(reduced)
    assert (analyzed is tree) == (reduced == source)
    assert ast.dump(analyzed) == ast.dump(ast.parse(reduced))
    assert _shape(analyzed) == _shape(ast.parse(reduced))


@pytest.mark.skipif(sys.version_info < (3, 10), reason="match statements")
def test_child_nodes_are_ast_children_without_operator_or_context_leaves():
    """The traversal every reader uses: the children ``ast.iter_child_nodes`` gives, in its
    order, less the shared operator and context singletons."""
    from keydrift.analysis.tree import _LEAF_TYPES, child_nodes

    source = ("def f(a, /, b=1, *c, d, **e):\n    global g\n    x = -a + b * 2 if not a and b or c else d\n"
              "    x += 1\n    del x\n    y = [i for i in c if i < 2 < 3]\n    z = {**e, 'k': v}\n"
              "    w = f'{a!r:>{b}}'\n    match a:\n        case {'k': 1, **rest} | [1, *more] if rest:\n"
              "            pass\n        case Point(x=0) as p:\n            pass\n    lambda q: (yield q)\n"
              "    with open(a) as h, open(b):\n        pass\n    try:\n        pass\n"
              "    except (E, F) as err:\n        raise X from err\n    import a.b as ab\n"
              "    from .m import n as nn\n    return await a, b[1:2, ::3], a.b\n")
    for node in ast.walk(ast.parse(source)):
        expected = [child for child in ast.iter_child_nodes(node) if not isinstance(child, _LEAF_TYPES)]
        assert child_nodes(node) == expected, ast.dump(node)
