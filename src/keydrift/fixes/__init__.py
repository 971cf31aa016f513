"""Fixes: mechanical repairs of findings, written with libcst (every comment and space a fix
does not touch is kept).

A fix is computed from a finding (its code, positions and ``Finding.fix`` facts) and the source
text; nothing here runs inside the analysis. Each rule's fix is one module with ``CODE`` (or
``CODES``) and ``fix(finding, document, config)``, registered in ``FIXERS`` below. Safe fixes
cannot change behaviour on valid input; unsafe ones change what is stored or looked up and are
applied only when asked for (``--unsafe-fixes``).
"""

from __future__ import annotations

import inspect
import sys
from typing import Dict, List, Optional

from keydrift.fixes import (
    kd1_normalize_both_sides, kd2_normalizer_at_boundary, kd401_urlsplit_without_scheme, kd402_missing_host_fallback,
    kd403_root_path_stripped, kd407_hostname_may_be_none,
)
from keydrift.fixes._base import Fix, Fixer
from keydrift.fixes._document import Document
from keydrift.types import Config, Finding

FIXERS: Dict[str, Fixer] = {
    kd401_urlsplit_without_scheme.CODE: kd401_urlsplit_without_scheme.fix,
    kd402_missing_host_fallback.CODE: kd402_missing_host_fallback.fix,
    kd403_root_path_stripped.CODE: kd403_root_path_stripped.fix,
    kd407_hostname_may_be_none.CODE: kd407_hostname_may_be_none.fix,
    **{code: kd1_normalize_both_sides.fix for code in kd1_normalize_both_sides.CODES},
    **{code: kd2_normalizer_at_boundary.fix for code in kd2_normalizer_at_boundary.CODES},
}


def fix_for(finding: Finding, document: Document, config: Config) -> Optional[Fix]:
    """The fix of ``finding`` in ``document``, if its rule has one and the code has its shape."""
    fixer = FIXERS.get(finding.code)
    return fixer(finding, document, config) if fixer is not None else None


def fixable_codes() -> List[str]:
    return sorted(FIXERS)


def fix_documentation(code: str) -> str:
    """What the fix of ``code`` does, from its module's docstring, as a Markdown section ("" for
    a rule without a fix)."""
    fixer = FIXERS.get(code.upper())
    module = sys.modules.get(getattr(fixer, "__module__", "")) if fixer is not None else None
    text = inspect.cleandoc(module.__doc__ or "") if module is not None else ""
    if not text:
        return ""
    return (f"## Fix\n{text}\n\nApplied by `keydrift check --fix` (an unsafe fix only with `--unsafe-fixes`) "
            f"and offered as a quick fix by the language server.\n")
