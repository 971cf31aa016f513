"""Parsing: libcst without its per-node validation gives the same tree, and validation is back
for everyone else afterwards."""

from __future__ import annotations

import libcst as cst
import pytest

from keydrift.analysis.parsing import parse_both

SOURCE = "import os\n\n\ndef f(u):  # note\n    return Page.objects.get(url=u.lower() )\n"


def test_the_tree_is_the_one_libcst_would_build() -> None:
    module, tree = parse_both(SOURCE, "m.py")
    assert module.deep_equals(cst.parse_module(SOURCE))
    assert module.code == SOURCE
    assert tree.body[1].name == "f"


def test_node_validation_is_restored_after_parsing() -> None:
    parse_both(SOURCE, "m.py")
    with pytest.raises(cst.CSTValidationError):
        cst.SimpleWhitespace("not whitespace")
