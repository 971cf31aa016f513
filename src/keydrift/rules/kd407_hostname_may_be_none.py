"""KD407: normalizer calls a method on a URL's hostname, which is None when there is no host."""

from __future__ import annotations

from typing import Iterator

from keydrift.analysis.facts import RawFinding
from keydrift.analysis.normalizers import KD407, defects_of, function_label, short_text
from keydrift.rules._base import Rule
from keydrift.rules._examples import Invalid, Valid
from keydrift.rules._kd4 import inspects_normalizers


@inspects_normalizers
class HostnameMayBeNone(Rule):
    """A normalizer calls a method on `parts.hostname` without checking that there is one.

    ## What it does
    Inside a normalizer, finds a method call on the `hostname` of a `urlsplit`/`urlparse`
    result — `parts.hostname.lower()`, or `host = parts.hostname` then `host.encode("idna")`
    — when nothing before it tests the hostname (`if not parts.hostname: ...`,
    `if host is None`, `host and host.lower()`) and no `try` surrounds it. When the parse
    result is a parameter (a helper such as `_normalize_netloc(parts)`), the call is also
    accepted when every caller of the helper in the module tests the hostname before calling it.

    ## Why is this bad?
    `hostname` is `None` whenever the URL has no host — a scheme-less input (`"example.com/a"`),
    `"http:///path"`, `"file:///tmp/x"`, `"mailto:bob@x.org"`, an empty string — even after a
    check that the scheme is http(s). The normalizer then raises `AttributeError` on real input:
    the request that stores or looks up the key fails, or the batch that imports it stops.

    ## Known problems
    Any earlier test that mentions the hostname counts as handling it, whatever it does.
    A fallback (`(parts.hostname or "").lower()`) is not this rule's: it does not crash, and
    KD402 reports the empty key it makes.
    """

    CODE = "KD407"
    NAME = "hostname-may-be-none"
    SUMMARY = "normalizer calls a method on a URL's hostname, which is None when there is no host"

    INVALID = (
        Invalid("""
            from urllib.parse import urlsplit


            def normalize_url(url):
                parts = urlsplit(url)
                if parts.scheme not in ("http", "https"):
                    return url
                host = parts.hostname.lower()  # expect: KD407
                return f"{parts.scheme}://{host}{parts.path or '/'}"
            """),
    )
    VALID = (
        Valid("""
            from urllib.parse import urlsplit


            def normalize_url(url):
                parts = urlsplit(url)
                if parts.scheme not in ("http", "https") or not parts.hostname:
                    return url
                host = parts.hostname.lower()
                return f"{parts.scheme}://{host}{parts.path or '/'}"
            """, note="Handle the URL without a host first:"),
    )

    def check(self, facts: object) -> Iterator[RawFinding]:
        for d in defects_of(facts, KD407):
            source = (f"the parse result its caller passes in ({d.detail})" if d.detail
                      else "the parsed URL")
            message = (f"{self.CODE} {function_label(d)} calls {short_text(d.text)} on the hostname of "
                       f"{source}, which is None when the URL has no host (\"http:///a\", \"example.com\", "
                       f"\"\"): AttributeError on real input; test the hostname first "
                       f"(if not parts.hostname: ...)")
            yield RawFinding(code=self.CODE, message=message, node=d.node,
                             fingerprint=(self.CODE, d.function, short_text(d.text)))
