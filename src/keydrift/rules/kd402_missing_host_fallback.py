"""KD402: normalizer maps a URL without a host to an empty key instead of raising."""

from __future__ import annotations

from typing import Iterator

from keydrift.analysis.facts import RawFinding
from keydrift.analysis.normalizers import KD402, defects_of, function_label, short_text
from keydrift.rules._base import Rule
from keydrift.rules._examples import Invalid, Valid
from keydrift.rules._kd4 import inspects_normalizers


@inspects_normalizers
class MissingHostFallback(Rule):
    """A normalizer silently substitutes a default when a URL has no host.

    ## What it does
    Inside a normalizer, finds `parts.hostname or ""`, `parts.netloc or ""`,
    `(parts.hostname or "").lower()`, `host or "localhost"` (a name holding a hostname) and
    `getattr(parts, "hostname", "")`, when the normalizer never raises on a missing host (no
    `if not parts.hostname: raise ...`, no `assert`).

    ## Why is this bad?
    `hostname` is `None` for every scheme-less input (`"example.com"`, `"www.x.org/a"`), for
    `""` and for garbage. The fallback turns all of them into the same key — `""` — so
    unrelated records collide on it, and lookups by a bad value "succeed" against another
    record's row.

    ## Known problems
    Only a `raise` inside an `if` that tests the host (or an `assert` on it) counts as
    handling; returning `None` early is not recognized.
    """

    CODE = "KD402"
    NAME = "missing-host-fallback"
    SUMMARY = "normalizer maps a URL without a host to an empty key instead of raising"

    INVALID = (
        Invalid("""
            from urllib.parse import urlsplit


            def normalize_domain(url):
                if "://" not in url:
                    url = "https://" + url
                return (urlsplit(url).hostname or "").lower()  # expect: KD402
            """),
    )
    VALID = (
        Valid("""
            from urllib.parse import urlsplit


            def normalize_domain(url):
                host = urlsplit(url if "://" in url else "https://" + url).hostname
                if not host:
                    raise ValueError(f"no host in {url!r}")
                return host.lower()
            """),
    )

    def check(self, facts: object) -> Iterator[RawFinding]:
        for d in defects_of(facts, KD402):
            message = (f"{self.CODE} {function_label(d)} falls back to a constant when the URL has no host "
                       f"({short_text(d.text)}): every scheme-less, empty or malformed input gets the same key; "
                       f"raise on a missing host instead")
            yield RawFinding(code=self.CODE, message=message, node=d.node,
                             fingerprint=(self.CODE, d.function, short_text(d.text)))
