"""KD405: normalizer lowercases the whole URL, path and query included."""

from __future__ import annotations

from typing import Iterator

from keydrift.analysis.facts import RawFinding
from keydrift.analysis.normalizers import KD405, defects_of, function_label, short_text
from keydrift.rules._base import Rule
from keydrift.rules._examples import Invalid, Valid
from keydrift.rules._kd4 import inspects_normalizers


@inspects_normalizers
class WholeUrlLowercased(Rule):
    """A normalizer lowercases a whole URL instead of only its scheme and host.

    ## What it does
    Inside a normalizer whose input is a URL (named url/uri/link/href/..., or passed to
    `urlsplit`), finds `.lower()`/`.casefold()` applied to the input URL or to a rebuilt one
    (`urlunsplit(...)`, `parts.geturl()`, an f-string joining a path after `://`). Lowercasing
    only to compare (`url.lower().startswith("http")`) or only to read the host
    (`urlsplit(url.lower()).hostname`) is not reported, nor is lowercasing `.netloc`,
    `.hostname` or `.scheme`.

    ## Why is this bad?
    Only the scheme and host are case-insensitive. Paths, queries and fragments are not:
    `/Docs/API` and `/docs/api` can be different pages, `?id=AbC` and `?id=abc` different
    records, and signed URLs stop verifying. Lowercasing the whole URL merges distinct keys.

    ## Known problems
    A site known to be case-insensitive may lowercase on purpose; say so with
    `# noqa: KD405`.
    """

    CODE = "KD405"
    NAME = "whole-url-lowercased"
    SUMMARY = "normalizer lowercases the whole URL, path and query included"

    INVALID = (
        Invalid("""
            def canonical_url(url):
                return url.strip().lower()  # expect: KD405
            """),
    )
    VALID = (
        Valid("""
            from urllib.parse import urlsplit, urlunsplit


            def canonical_url(url):
                scheme, netloc, path, query, _ = urlsplit(url if "://" in url else "https://" + url)
                return urlunsplit((scheme.lower(), netloc.lower(), path or "/", query, ""))
            """, note="Lowercase the scheme and the host only:"),
        Valid("""
            def canonical_url(url):
                if not url.lower().startswith(("http://", "https://")):
                    url = "https://" + url
                return url
            """, note="Not reported: lowercasing only to compare."),
    )

    def check(self, facts: object) -> Iterator[RawFinding]:
        for d in defects_of(facts, KD405):
            message = (f"{self.CODE} {function_label(d)} lowercases the whole URL ({short_text(d.text)}): paths and "
                       f"queries are case-sensitive, so distinct pages get one key; lowercase only the scheme and host")
            yield RawFinding(code=self.CODE, message=message, node=d.node,
                             fingerprint=(self.CODE, d.function, short_text(d.text)))
