"""Per-function key flow (stub, being written)."""
from __future__ import annotations
from dataclasses import dataclass, field
from typing import List
import libcst as cst
from keydrift.analysis.facts import Mismatch
from keydrift.types import Config


@dataclass
class ModuleFacts:
    mismatches: List[Mismatch] = field(default_factory=list)


def analyze_module(module: cst.Module, path: str, config: Config) -> ModuleFacts:
    return ModuleFacts()
