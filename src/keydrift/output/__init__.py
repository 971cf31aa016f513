"""Output formats. Each formatter turns the sorted findings of a run into the full text to
print; ``FORMATTERS`` maps the ``--format`` names to them. The ``ReportContext`` carries the
project root, which SARIF and GitLab paths are relative to.

A formatter's module is imported when its format is first asked for: a run prints one format,
and a one-file check's start-up is paid on every save."""

from __future__ import annotations

import importlib
from typing import Callable, Dict, Iterator, Mapping, Optional, Sequence

from keydrift.output._common import ReportContext
from keydrift.types import Finding

Formatter = Callable[[Sequence[Finding], Optional[ReportContext]], str]

# --format name -> the module of keydrift.output whose ``format_findings`` it is
_MODULES = {"text": "text", "json": "json", "github": "github", "gitlab": "gitlab", "sarif": "sarif"}


class _Formatters(Mapping):  # type: ignore[type-arg]
    """The formatters by name, each module imported on first use."""

    def __init__(self) -> None:
        self._loaded: Dict[str, Formatter] = {}

    def __getitem__(self, name: str) -> Formatter:
        if name not in self._loaded:
            module = importlib.import_module(f"keydrift.output.{_MODULES[name]}")
            self._loaded[name] = module.format_findings
        return self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(_MODULES)

    def __len__(self) -> int:
        return len(_MODULES)


FORMATTERS: Mapping[str, Formatter] = _Formatters()

__all__ = ["FORMATTERS", "Formatter", "ReportContext"]
