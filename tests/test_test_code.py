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
