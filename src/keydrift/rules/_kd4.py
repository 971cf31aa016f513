"""Shared by the KD4 rules: which functions are inspected, as one documentation section."""

from __future__ import annotations

from typing import Type, TypeVar

from keydrift.rules._base import Rule

R = TypeVar("R", bound=Type[Rule])

NORMALIZER_SELECTION = """
## Configuration
With `[tool.keydrift] normalizers` set, exactly the listed functions are inspected (an
entry matches a function whose name is the entry's last component: `app.urls.canonical`
matches `def canonical`). Without it, functions named like normalizers are: `normalize*`,
`normalise*`, `canonical*`, `canonicalize*`, `clean_*url*`, `sanitize_*url|email|key|name*`
(also after a prefix: `_normalize`, `url_normalize`, `get_canonical_url`), and
`clean_`/`sanitize_`/`standardize_`/`norm_` names ending in a key word (`clean_email`,
`norm_host`); names about display text (`normalize_whitespace_in_text`, `normalize_title`,
`canonical_html`) are not key normalizers, nor are functions that build text for people to
read: a name about output (`sanitize_url_for_logging`, `normalize_url_for_display`) or a
function whose every call in its module is inside a logger call, `print`, `warnings.warn` or
a template render.
"""


def inspects_normalizers(rule: R) -> R:
    """Append the section on which functions are normalizers to a KD4 rule's documentation."""
    indent = "    "
    section = "".join(indent + line if line.strip() else line
                      for line in NORMALIZER_SELECTION.strip("\n").splitlines(True))
    rule.__doc__ = (rule.__doc__ or "").rstrip() + "\n\n" + section + "\n"
    return rule
