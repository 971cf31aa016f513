"""Test modules that can hold no finding.

Test code (``boundary.is_test_module``: a module in a ``tests``/``test``/``testing`` package,
``test_*``, ``*_tests``, ``tests``, ``conftest``) holds no finding of KD1 (``rules/_kd1``), KD2
(``rules/_kd2``) or KD3 (``declarations.not_production_schema``), nor of the registry
(``projectwide``): each leaves tests out, for tests store fixtures in whatever form a test
needs. KD4 inspects the functions named like normalizers (``normalizer_naming``) wherever they
are. So a test module that defines none holds no finding at all: the engine does not analyze
it, and the results cache keeps no entry for it (answering costs less than reading one: the
module's name, and the names after ``def`` in its text). On the small corpus, 392 test modules
(97,000 of 246,000 lines) took 38% of a cold check's analysis.

Imports no parser: the results cache asks it on a warm run.
"""

from __future__ import annotations

from keydrift.analysis.boundary import is_test_module
from keydrift.analysis.imports import module_name_of
from keydrift.analysis.normalizer_naming import is_normalizer, may_name_a_normalizer
from keydrift.patterns import lazy
from keydrift.types import Config

# A function definition's name (``def`` or ``async def``). Without a ``\b`` before ``def``: with
# one, the search cannot skip ahead to the letters "def" (16 times slower over a test module,
# 0.15 ms against 0.01 ms); a name after ``xdef`` is one more name looked at, never one less.
_DEFINED_NAME = lazy(r"def\s+(\w+)")


def is_test_code(path: str, config: Config) -> bool:
    # every name ``is_test_module`` accepts holds "test", and a module's name is spelled from its path
    return "test" in path and is_test_module(module_name_of(path, config))


def defines_a_normalizer(text: str, config: Config) -> bool:
    """Whether the text defines a function KD4 would inspect (a superset: a ``def`` in a string
    or a comment counts too)."""
    if not may_name_a_normalizer(text, config):
        return False  # (most test modules: a few substring searches instead of every name)
    return any(is_normalizer(name, config) for name in set(_DEFINED_NAME.findall(text)))


def holds_no_finding(text: str, path: str, config: Config) -> bool:
    """Test code that defines no function KD4 would inspect."""
    return is_test_code(path, config) and not defines_a_normalizer(text, config)
