"""Which paths belong under a project root."""

import os

import pytest

from keydrift.files import is_inside

ROOT = os.path.join(os.sep, "x", "app")


@pytest.mark.parametrize("path, inside", [
    (ROOT, True),
    (os.path.join(ROOT, "models.py"), True),
    (os.path.join(ROOT, "pkg", "views.py"), True),
    (ROOT + "2", False),  # a sibling whose name starts with the root's
    (os.path.join(ROOT + "2", "models.py"), False),
    (os.path.join(os.sep, "x", "models.py"), False),
])
def test_is_inside(path: str, inside: bool) -> None:
    assert is_inside(path, ROOT) is inside
    assert is_inside(path, ROOT + os.sep) is inside  # a root given with its trailing separator


def test_everything_is_inside_the_file_system_root() -> None:
    assert is_inside(os.path.join(ROOT, "a.py"), os.sep)
