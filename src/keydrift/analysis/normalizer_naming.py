"""Which functions are normalizers, by their names alone (see ``normalizer_names``' docstring):
what KD4 inspects, what KD2 and KD3 recognize as a call to one, and what tells the engine and
the results cache that a test module holds no finding (``test_code``). Apart from
``normalizer_names`` because those two ask it of every test module, and a warm run must not
import the analysis to do so: this module imports only the framework tables.
"""

from __future__ import annotations

import functools
import re
from typing import FrozenSet, List, Tuple

from keydrift.frameworks import transforms
from keydrift.patterns import lazy
from keydrift.types import Config

KEY_WORDS = r"(?:url|uri|link|href|email|host|hostname|domain|username|login|path|slug|handle)"
EXTRA_NORMALIZER_NAME = lazy(
    rf"(?:^|_)(?:clean|sanitize|sanitise|standardi[sz]e|norm|canon)_\w*?{KEY_WORDS}(?:$|_|s\b)", re.I)
# Normalizers of display text, not keys.
DISPLAY_WORDS: FrozenSet[str] = frozenset({
    "whitespace", "text", "html", "markdown", "markup", "display", "newline", "newlines",
    "spaces", "space", "title", "caption", "label", "message", "content", "body", "quotes",
    "punctuation", "line", "lines", "indent", "indentation",
    # output: text for a log, a page or an error message, never stored as a key
    "log", "logs", "logging", "logger", "print", "printing", "output", "redact", "redacted",
    "mask", "masked", "debug", "error", "errors", "exception", "repr",
})

# What every name ``looks_like_normalizer`` accepts holds, lowercased (``transforms.NORMALIZER_NAME``
# and ``EXTRA_NORMALIZER_NAME``: normali[sz]e, canonical, clean_, saniti[sz]e_, standardi[sz]e_,
# norm_, canon_): a text without any of them defines no such function.
NORMALIZER_NAME_PARTS = ("normali", "canon", "clean_", "saniti", "standardi", "norm_")

_WORD = lazy(r"[a-z0-9]+")


def words(name: str) -> List[str]:
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    return _WORD.findall(spaced.lower())


@functools.lru_cache(maxsize=4096)
def looks_like_normalizer(name: str) -> bool:
    """The zero-config heuristic (see the module docstring)."""
    if not (transforms.NORMALIZER_NAME.search(name) or EXTRA_NORMALIZER_NAME.search(name)):
        return False
    return not any(w in DISPLAY_WORDS for w in words(name))


def is_normalizer_name(name: str, config: Config) -> bool:
    """A call to ``name`` normalizes (configured or heuristic): used to recognize calls."""
    return name in _configured_names(config) or looks_like_normalizer(name)


def is_normalizer(name: str, config: Config) -> bool:
    """A function definition named ``name`` is a normalizer KD4 inspects."""
    if config.normalizers:
        return name in _configured_names(config)
    return looks_like_normalizer(name)


def may_name_a_normalizer(text: str, config: Config) -> bool:
    """Whether ``text`` may hold the name of a function ``is_normalizer`` accepts: a configured
    one's name, or (without configuration) a part every heuristic name holds."""
    if config.normalizers:
        return any(name in text for name in _configured_names(config))
    lowered = text.lower()
    return any(part in lowered for part in NORMALIZER_NAME_PARTS)


def _configured_names(config: Config) -> FrozenSet[str]:
    return _last_components(tuple(config.normalizers))


@functools.lru_cache(maxsize=64)
def _last_components(names: Tuple[str, ...]) -> FrozenSet[str]:
    return frozenset(n.rsplit(".", 1)[-1] for n in names)
