"""Module-level variables through which an importer reaches none of the module's functions
(``analysis.inert_names``): the prefilter asks nothing of the module for them."""

from __future__ import annotations

import ast
import textwrap

import pytest

from keydrift.analysis.inert_names import inert_names

HEADER = """
    import os
    from pathlib import Path
    from app.store import make_store

    def helper(value):
        return value

    class Store:
        LIMIT = 3
"""


def inert(body: str) -> frozenset:
    text = textwrap.dedent(HEADER) + textwrap.dedent(body)
    return inert_names(ast.parse(text), text.splitlines(keepends=True))


@pytest.mark.parametrize("body", [
    "NAME = 1\n",
    "NAME: int = 1\n",
    "NAME: int\n",
    "NAME = os.environ.get('NAME', 'x')\n",
    "NAME = Path(__file__).parent / 'data'\n",
    "OTHER = 2\nNAME = f'{OTHER}-x'\n",
    "NAME = {'a': [1, 2], 'b': (3,)}\n",
    "NAME = make_store()\n",  # another module's code: nothing of this module's is reached
    "if os.name == 'nt':\n    NAME = 1\nelse:\n    NAME = 2\n",
    "try:\n    NAME = 1\nexcept ImportError:\n    NAME = 2\n",
    "NAME = 1\nNAME += 1\n",
    "NAME, OTHER = 1, 2\n",
    # the words of its strings and comments name nothing
    "NAME = 'helper'\n",
    'NAME = """Store\nhelper"""  # helper\n',
    "NAME = os.environ.get('NAME')\n",
    "NAME = f'{os.sep}helper'\n",
])
def test_a_variable_bound_only_to_data_is_inert(body: str) -> None:
    assert "NAME" in inert(body)


@pytest.mark.parametrize("body", [
    "NAME = helper\n",  # the function itself
    "NAME = Store()\n",  # an instance of a class of the module: its methods
    "NAME = Store.LIMIT\n",
    "NAME = helper(1)\n",  # what the module's code returned
    "NAME = {'run': helper}\n",
    "NAME = lambda value: value\n",
    "ALIAS = helper\nNAME = ALIAS\n",  # through a variable that is not inert
    "NAME = 1\nNAME = helper\n",  # bound twice, once to a function
    "NAME = {}\nNAME['run'] = helper\n",  # written into afterwards
    "NAME = object()\nNAME.run = helper\n",
    "for NAME in (1, 2):\n    pass\n",
    "with open('x') as NAME:\n    pass\n",
    "OTHER = (NAME := 3)\n",
    "NAME = 1\ndef setup():\n    global NAME\n    NAME = Store()\n",
    "from app.other import NAME\n",  # a name it imports itself: another module's, asked of it
    "NAME = 1\ndef __getattr__(name):\n    return helper\n",  # any name may be computed
    "match os.name:\n    case 'nt':\n        NAME = helper\n",
    "NAME = 1\ndel NAME\n",
    "NAME = f'{helper}'\n",  # code inside an f-string
    "NAME = [  # don't\n    helper,\n]\n",  # a quote in a comment starts no string
    "NAME = 'it' 's' + helper.__name__\n",
    "NAME = 'a\\'b' + helper.__name__\n",  # an escaped quote ends no string
])
def test_a_variable_that_may_lead_to_the_modules_code_is_not_inert(body: str) -> None:
    assert "NAME" not in inert(body)


def test_functions_classes_and_imports_are_never_inert() -> None:
    found = inert("SETTING = 1\n")
    assert found == {"SETTING"}
    assert not {"helper", "Store", "os", "Path", "make_store", "LIMIT"} & found
