"""KD406: normalizer adds a scheme or a slash unconditionally, so it is not idempotent."""

from __future__ import annotations

from typing import Iterator

from keydrift.analysis.facts import RawFinding
from keydrift.analysis.normalizers import KD406, PREFIX, defects_of, function_label, short_text
from keydrift.rules._base import Rule
from keydrift.rules._examples import Invalid, Valid
from keydrift.rules._kd4 import inspects_normalizers


@inspects_normalizers
class NormalizerNotIdempotent(Rule):
    """A normalizer unconditionally prefixes a scheme or appends a slash, so applying it twice changes the key.

    ## What it does
    Inside a normalizer, finds `"https://" + url`, `f"https://{url}"` applied to the input
    URL, and `url + "/"`, `f"{path}/"`, `path += "/"` applied to the input or a path, when
    nothing guards them: not inside an `if`/conditional expression, no earlier `if` testing
    `startswith`/`"://"`/`.scheme` (for a prefix) or `endswith`/`"/"` (for a slash), and no
    `rstrip("/")` just before the appended slash.

    ## Why is this bad?
    A normalizer must be idempotent: keys get normalized again — on re-import, in a
    lookup, by a second code path — and `normalize(normalize(x))` must equal `normalize(x)`.
    `"https://" + "https://x.com"` is `"https://https://x.com"`; `"a/" + "/"` is `"a//"`.
    The stored key and the looked-up key drift apart.

    ## Known problems
    Only the prefix/suffix shapes above are decided; other non-idempotent rewrites
    (appending a query parameter) are not. Any `if` around the expression counts as a guard.
    """

    CODE = "KD406"
    NAME = "normalizer-not-idempotent"
    SUMMARY = "normalizer adds a scheme or a slash unconditionally, so it is not idempotent"

    INVALID = (
        Invalid("""
            def canonical_url(url):
                return "https://" + url.strip()  # expect: KD406
            """),
    )
    VALID = (
        Valid("""
            def canonical_url(url):
                url = url.strip()
                if not url.startswith(("http://", "https://")):
                    url = "https://" + url
                return url
            """),
    )

    def check(self, facts: object) -> Iterator[RawFinding]:
        for d in defects_of(facts, KD406):
            message = f"{self.CODE} {function_label(d)} is not idempotent: {short_text(d.text)} " + (
                "prefixes a scheme unconditionally, so a second pass adds it again (\"https://https://x.com\"); "
                "prefix only when the value has no scheme (if \"://\" not in url)"
                if d.detail == PREFIX else
                "appends a slash unconditionally, so a second pass adds another (\"/docs//\"); "
                "strip before appending (x.rstrip(\"/\") + \"/\") or check endswith(\"/\")")
            yield RawFinding(code=self.CODE, message=message, node=d.node,
                             fingerprint=(self.CODE, d.function, short_text(d.text)))
