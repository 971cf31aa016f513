"""KD404: normalizer passes a prefix/suffix to strip(), which strips characters."""

from __future__ import annotations

from typing import Iterator

from keydrift.analysis.facts import RawFinding
from keydrift.analysis.normalizers import KD404, defects_of, function_label, short_text
from keydrift.rules._base import Rule
from keydrift.rules._examples import Invalid, Valid
from keydrift.rules._kd4 import inspects_normalizers


@inspects_normalizers
class StripWithWord(Rule):
    """A normalizer passes a prefix or suffix to `strip`/`lstrip`/`rstrip`, which take a set of characters.

    ## What it does
    Inside a normalizer, finds `lstrip("www.")`, `strip("www.")`, `rstrip(".com")`,
    `lstrip("https://")` — a `strip` family call whose argument reads as a word (two letters or
    more with `.`, `:`, `/` or `@`, or a repeated character) rather than a set of characters
    (`" "`, `"/"`, `"./"`).

    ## Why is this bad?
    `str.lstrip("www.")` removes any leading `w` and `.` characters, not the prefix `www.`:
    `"web.example.com".lstrip("www.")` is `"eb.example.com"` and `"www.wwf.org"` becomes
    `"f.org"`. Keys are silently mangled, and different inputs collide.

    ## Known problems
    A deliberate character set made of letters and punctuation (`strip("abc.")`) is
    reported too.
    """

    CODE = "KD404"
    NAME = "strip-with-word"
    SUMMARY = "normalizer passes a prefix/suffix to strip(), which strips characters"

    INVALID = (
        Invalid("""
            def normalize_host(host):
                return host.lower().lstrip("www.")  # expect: KD404
            """),
    )
    VALID = (
        Valid("""
            def normalize_host(host):
                return host.lower().removeprefix("www.")
            """, note="`removeprefix` (Python 3.9+) removes the word, not a set of characters:"),
        Valid("""
            def normalize_path(path):
                return path.strip("./")
            """, note="Not reported: a set of characters."),
    )

    def check(self, facts: object) -> Iterator[RawFinding]:
        for d in defects_of(facts, KD404):
            message = (f"{self.CODE} {function_label(d)} calls {short_text(d.text)}, which strips any of those "
                       f"characters, not that prefix/suffix (\"web.example.com\".lstrip(\"www.\") is "
                       f"\"eb.example.com\"); use removeprefix()/removesuffix()")
            yield RawFinding(code=self.CODE, message=message, node=d.node,
                             fingerprint=(self.CODE, d.function, short_text(d.text)))
