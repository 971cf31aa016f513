"""KD403: normalizer strips trailing slashes without putting the root "/" back."""

from __future__ import annotations

from typing import Iterator

from keydrift.analysis.facts import RawFinding
from keydrift.analysis.normalizers import KD403, PATH, defects_of, function_label, short_text
from keydrift.rules._base import Rule
from keydrift.rules._examples import Invalid, Valid
from keydrift.rules._kd4 import inspects_normalizers


@inspects_normalizers
class RootPathStripped(Rule):
    """A normalizer strips trailing slashes and turns the root path "/" into "".

    ## What it does
    Inside a normalizer, finds `path.rstrip("/")` (or `url.rstrip("/")`) on the input, a
    path or a rebuilt URL when the root is never put back: no `... or "/"`, no
    `if not path: path = "/"`, no `"/" if ... else ...`, no `rstrip("/") + "/"`, no
    `"/" + path.lstrip("/")` after it, and no enclosing `if path != "/"` / `if len(path) > 1`.
    Outside normalizers, in a function that stores or looks up records (database vocabulary in
    its body), finds the same `rstrip("/")` applied to a normalizer's result
    (`normalize_path(p).rstrip("/")`, or a name holding it) or to a parameter named for a path
    (`def serve(request, path): Page.objects.get(path=path.rstrip("/"))`) or to the path of
    the request a view serves (`request.path.rstrip("/")`); a whole URL
    (`url.rstrip("/")`) is left alone there. A path stripped and then put back
    next to its host (`parts._replace(path=parts.path.rstrip("/")).geturl()`) is not reported:
    `"https://x.com/"` and `"https://x.com"` are one URL.

    ## Why is this bad?
    `"/".rstrip("/")` is `""`: the home page's key becomes the empty string (and
    `"https://x.com/"` loses its path entirely), which collides with every other value that
    normalizes to nothing and no longer round-trips to a valid URL (readthedocs #11265).

    ## Known problems
    Any `or "/"` or assignment of `"/"` in the normalizer counts as putting the root
    back, even on another variable.
    """

    CODE = "KD403"
    NAME = "root-path-stripped"
    SUMMARY = 'normalizer strips trailing slashes without putting the root "/" back'

    INVALID = (
        Invalid("""
            def canonical_path(path):
                return path.rstrip("/")  # expect: KD403
            """),
    )
    VALID = (
        Valid("""
            def canonical_path(path):
                return path.rstrip("/") or "/"
            """),
        Valid("""
            def canonical_path(path):
                if path != "/":
                    path = path.rstrip("/")
                return path
            """, note="Not reported: the root is handled apart."),
    )

    def check(self, facts: object) -> Iterator[RawFinding]:
        for d in defects_of(facts, KD403):
            damage = ("the root path \"/\" becomes \"\"" if d.detail == PATH else
                      "a root-relative \"/\" becomes \"\" and \"https://x.com/\" loses its path")
            message = (f"{self.CODE} {function_label(d)} strips every trailing slash with {short_text(d.text)}: "
                       f"{damage}, one empty key for every root; put the root back "
                       f"({short_text(d.text)} or \"/\")")
            yield RawFinding(code=self.CODE, message=message, node=d.node,
                             fingerprint=(self.CODE, d.function, short_text(d.text)))
