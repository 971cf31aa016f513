"""Code written for a newer Python than the running one is KD900 saying so: the version the
file needs and the one keydrift runs on, beside CPython's own message."""

from __future__ import annotations

import sys

import pytest

from keydrift.analysis.newer_syntax import newer_syntax
from keydrift.engine import check_source
from keydrift.types import Config

RUNNING = sys.version_info[:2]
READ = "\ndef g(u):\n    return Page.objects.get(url=u)\n"

NEWER = [  # (version, source, the line reported)
    ((3, 10), "match command:\n    case 'go':\n        pass\n", 1),
    ((3, 11), "try:\n    pass\nexcept* ValueError:\n    pass\n", 3),
    ((3, 12), "type Url = str\n", 1),
    ((3, 12), "def first[T](items: list[T]) -> T:\n    return items[0]\n", 1),
    ((3, 12), "class Box[T]:\n    pass\n", 1),
    ((3, 12), "def f(row):\n    return f\"{row[\"url\"]}\"\n", 2),
    ((3, 13), "def first[T = int](items: list[T]) -> T:\n    return items[0]\n", 1),
    ((3, 14), "def f(u):\n    return t\"{u}\"\n", 2),
    ((3, 14), "try:\n    pass\nexcept ValueError, TypeError:\n    pass\n", 3),
]

@pytest.mark.parametrize("version, source, line", NEWER, ids=[f"{v[0]}.{v[1]}-{i}" for i, (v, _, _) in enumerate(NEWER)])
def test_newer_syntax_is_named_with_both_versions(version, source, line):
    findings = check_source(source + READ, "new.py", Config(cache=False))
    if version <= RUNNING:  # this interpreter reads it: analyzed as usual
        assert not [f for f in findings if f.code == "KD900"], findings
        return
    (finding,) = findings
    assert finding.code == "KD900"
    assert f"uses syntax of Python {version[0]}.{version[1]} (" in finding.message
    assert finding.message.endswith(f"keydrift runs on Python {RUNNING[0]}.{RUNNING[1]}")
    assert finding.line == line


@pytest.mark.parametrize("source", [
    "def f(u):\n    print \"visiting\", u\n",  # Python 2
    "def f(u:\n    return u\n",  # a plain syntax error
    "def f(u):\n    return [u for u in]\n",
    "x = (1,\n",
])
def test_old_or_broken_code_is_not_blamed_on_the_version(source):
    (finding,) = check_source(source + READ, "bad.py", Config(cache=False))
    assert finding.code == "KD900" and "uses syntax of Python" not in finding.message


@pytest.mark.parametrize("source", [
    "type = 3\nmatch = re.match(p, s)\ncase = 1\n",
    "try:\n    pass\nexcept (ValueError, TypeError) as exc:\n    pass\n",
    "def f(u):\n    return 'don\\'t' + u\n",
])
def test_soft_keywords_used_as_names_are_plain_code(source):
    assert [f.code for f in check_source(source + READ, "ok.py", Config(cache=False))] == []


def test_the_table_answers_for_any_running_version():
    """On an older interpreter the same lines are recognized; on a new enough one, never."""
    assert newer_syntax(["match x:"], 1, "invalid syntax", running=(3, 9)) == ((3, 10), "a match statement")
    assert newer_syntax(["except* OSError:"], 1, "invalid syntax", running=(3, 10))[0] == (3, 11)
    assert newer_syntax(["type X = int"], 1, "invalid syntax", running=(3, 11))[0] == (3, 12)
    assert newer_syntax(["def f[T = int](): pass"], 1, "invalid syntax", running=(3, 12))[0] == (3, 13)
    for line in ("match x:", "except* OSError:", "type X = int", "def f[T](): pass", "x = t'{y}'"):
        assert newer_syntax([line], 1, "invalid syntax", running=(3, 14)) is None
    assert newer_syntax(["x = 1"], 5, "invalid syntax", running=(3, 9)) is None  # line out of range
