"""Test code is analyzed only when it defines a function KD4 inspects: KD1, KD2, KD3 and the
registry leave tests out, so the rest of a test module could only cost time
(``analysis/test_code``)."""

from __future__ import annotations

import textwrap

import pytest

from keydrift import timing
from keydrift.engine import check_source
from keydrift.types import Config

# a key looked up as typed and stored lowercased: KD1 in application code
MISMATCH = '''\
def signup(request):
    email = request.POST["email"]
    if not User.objects.filter(email=email).exists():
        User.objects.create(email=email.lower())
'''

# a URL normalizer that lowercases the whole URL, path included (KD405), and loses the
# host's fallback (KD402)
NORMALIZER = '''\
from urllib.parse import urlsplit


def normalize_host(url):
    p = urlsplit(url if "://" in url else "https://" + url)
    return (p.hostname or "").lower()
'''


def _analyzed(text: str, path: str, config: Config = Config(cache=False)):
    """(codes found, whether the engine analyzed the file)."""
    timing.reset()
    codes = sorted(f.code for f in check_source(textwrap.dedent(text), path, config))
    return codes, timing.counters().get("files analyzed", 0) == 1


@pytest.mark.parametrize("path", ["app/views.py", "app/contest.py", "app/latest.py", "app/test.py",
                                  "app/testing_tools.py", "app/connection_test.py"])
def test_application_code_is_analyzed(path):
    codes, analyzed = _analyzed(MISMATCH, path)
    assert analyzed
    assert any(code.startswith("KD1") for code in codes)


@pytest.mark.parametrize("path", ["tests/test_views.py", "app/tests/test_signup.py", "app/tests.py",
                                  "test/signup.py", "testing/helpers.py", "app/signup_tests.py",
                                  "conftest.py", "app/tests/factories.py"])
def test_test_code_without_normalizers_is_not_analyzed(path):
    assert _analyzed(MISMATCH, path) == ([], False)


@pytest.mark.parametrize("path", ["tests/test_urls.py", "tests/helpers.py", "conftest.py"])
def test_a_normalizer_in_test_code_is_still_inspected(path):
    codes, analyzed = _analyzed(NORMALIZER, path)
    assert analyzed
    assert codes == _analyzed(NORMALIZER, "app/urls.py")[0]
    assert "KD402" in codes


def test_a_method_or_an_async_normalizer_counts():
    method = "class Helpers:\n    async def normalize_url(self, url):\n        return url\n"
    assert _analyzed(MISMATCH + method, "tests/test_views.py")[1]


def test_names_that_only_look_alike_do_not():
    """A display-text tidier is no normalizer KD4 inspects; a call to a normalizer (not a
    definition) gives KD4 nothing to inspect either."""
    text = MISMATCH + "def normalize_whitespace(text):\n    return ' '.join(text.split())\n" \
        + "def check(url):\n    assert normalize_url(url)\n"
    assert _analyzed(text, "tests/test_views.py") == ([], False)


def test_configured_normalizers_decide():
    configured = Config(cache=False, normalizers=("app.urls.canon",))
    canon = MISMATCH + "def canon(url):\n    return url.lower()\n"
    assert _analyzed(canon, "tests/test_views.py", configured)[1]
    # with normalizers configured, only those are inspected: a heuristic name no longer counts
    assert not _analyzed(NORMALIZER, "tests/test_urls.py", configured)[1]


_NAME_PIECES = ["normalize", "normalise", "Normalize", "canonical", "canonicalise", "Canon", "clean", "sanitize",
                "sanitise", "standardize", "standardise", "norm", "url", "email", "host", "key", "name", "slug",
                "path", "handle", "login", "domain", "text", "get", "to", "x", "_", "__", "s", "URL", "Email"]


def test_every_name_the_heuristic_accepts_holds_one_of_the_parts():
    """``normalizer_naming.NORMALIZER_NAME_PARTS`` lets a test module without any of them go
    unread name by name: every name ``looks_like_normalizer`` accepts must hold one."""
    import random

    from keydrift.analysis.normalizer_naming import NORMALIZER_NAME_PARTS, looks_like_normalizer

    rng = random.Random(20261202)
    accepted = 0
    for _ in range(20_000):
        name = "".join(rng.choice(_NAME_PIECES) + rng.choice(["", "_"]) for _ in range(rng.randint(1, 4)))
        if looks_like_normalizer(name):
            accepted += 1
            assert any(part in name.lower() for part in NORMALIZER_NAME_PARTS), name
    assert accepted > 1000


def test_a_test_module_naming_no_normalizer_part_is_not_read_name_by_name(monkeypatch):
    from keydrift.analysis import normalizer_naming, test_code

    asked = []
    monkeypatch.setattr(test_code, "is_normalizer", lambda name, config: asked.append(name) or False)
    assert not test_code.defines_a_normalizer(MISMATCH, Config(cache=False))
    assert asked == []
    assert not test_code.defines_a_normalizer(MISMATCH + "def clean_up(x):\n    pass\n", Config(cache=False))
    assert "clean_up" in asked
    assert normalizer_naming.may_name_a_normalizer("def canon(u): pass", Config(normalizers=("app.canon",)))
    assert not normalizer_naming.may_name_a_normalizer("def normalize(u): pass", Config(normalizers=("app.canon",)))
