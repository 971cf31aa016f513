"""KD401: normalizer parses its input with urlsplit/urlparse without ensuring a scheme."""

from __future__ import annotations

from typing import Iterator

from keydrift.analysis.facts import RawFinding
from keydrift.analysis.normalizers import KD401, defects_of, function_label, short_text
from keydrift.rules._base import Rule
from keydrift.rules._examples import Invalid, Valid
from keydrift.rules._kd4 import inspects_normalizers


@inspects_normalizers
class UrlsplitWithoutScheme(Rule):
    """A normalizer parses its input with `urlsplit`/`urlparse` before making sure it has a scheme.

    ## What it does
    Inside a normalizer, finds `urllib.parse.urlsplit`/`urlparse` (however imported:
    `from urllib.parse import urlsplit as us`, `import urllib.parse as up`) applied to the
    input when nothing before it guarantees a scheme — no `"://" in url` check, no
    `startswith("http")`, no `"https://" + url` — and nothing after it handles a missing one
    (an `if` testing `parts.scheme`/`parts.netloc`/`parts.hostname`). A parse used only to read
    `.scheme` is itself a check and is not reported, nor is a parse after an `if` whose test
    matches the input against a regular expression that requires a scheme
    (`if HTTP_URL.match(url):` with `HTTP_URL = re.compile(r"^https?://...")` at module level,
    `if not re.fullmatch(r"(?:https?|ftp)://\\S+", url): return None`): anchored at the start
    (`match`/`fullmatch`, or `^` for `search`), `://` reached through scheme characters only,
    not in an optional group (`^(?:https?://)?...` is no guard) nor beside an alternative
    without it (`^https://...|^/...`).

    ## Why is this bad?
    Without `//`, urllib reads the host as a path: `urlsplit("example.com")` has
    `netloc == ""`, `hostname is None` and `path == "example.com"` (cpython #122565;
    `urlsplit("example.com:8080")` even makes `example.com` the scheme). A normalizer that then
    lowercases the host, drops the port or rebuilds the URL silently does nothing — or maps
    every scheme-less input to the same key.

    ## Known problems
    The guard is recognized textually: any string literal holding `://` (or starting
    with `http`) before the parse (a regular expression's pattern counts only as described
    above), an `if` that raises after testing the input, or a later `if`
    on the parse's scheme/netloc/hostname. A normalizer whose callers always pass absolute URLs
    is reported all the same; state it with a check (`if "://" not in url: raise ValueError`).
    A parse whose result is only read for its path (`urlparse(value).path`, or `.path`/
    `.query`/`.params`/`.fragment` of the parse) uses no host and is not reported, nor is a
    round trip that puts the parse back together without touching its host
    (`urlunparse(urlparse(url))`, `urlparse(url)._replace(query="").geturl()`; through a name,
    a parse read only for its path parts and rebuilt with them replaced: `parts =
    urlparse(url)` ... `urlunparse(parts._replace(path=p))`), nor a parse of
    a parameter named like a path (`path`, `route`) rather than a URL.
    """

    CODE = "KD401"
    NAME = "urlsplit-without-scheme"
    SUMMARY = "normalizer parses its input with urlsplit/urlparse without ensuring a scheme"

    INVALID = (
        Invalid("""
            from urllib.parse import urlsplit, urlunsplit


            def canonical_url(url):
                parts = urlsplit(url.strip())  # expect: KD401
                return urlunsplit((parts.scheme, parts.netloc.lower(), parts.path, parts.query, ""))
            """),
    )
    VALID = (
        Valid("""
            from urllib.parse import urlsplit, urlunsplit


            def canonical_url(url):
                url = url.strip()
                if "://" not in url:
                    url = "https://" + url
                parts = urlsplit(url)
                return urlunsplit((parts.scheme, parts.netloc.lower(), parts.path, parts.query, ""))
            """),
        Valid("""
            from urllib.parse import urlsplit


            def canonical_scheme(url):
                return urlsplit(url).scheme or "https"
            """, note="Not reported: a parse used only to read the scheme is itself a check."),
    )

    def check(self, facts: object) -> Iterator[RawFinding]:
        for d in defects_of(facts, KD401):
            message = (f"{self.CODE} {function_label(d)} parses its input with {short_text(d.text)} without making "
                       f"sure it has a scheme: \"example.com\" has no netloc/hostname (it parses as a path), so the "
                       f"host is never canonicalized; add a scheme first (\"://\" check, \"https://\" prefix) or "
                       f"reject input without one")
            yield RawFinding(code=self.CODE, message=message, node=d.node,
                             fingerprint=(self.CODE, d.function, short_text(d.text)))
