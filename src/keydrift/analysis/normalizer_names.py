"""Which functions are normalizers (what KD4 inspects, and what KD2/KD3 recognize as a call to
one), and how a module names ``urllib.parse``.

**Which functions are normalizers.** With ``[tool.keydrift] normalizers`` configured, exactly
the listed functions: a function matches an entry when the entry's last component is its name
(``app.urls.canonical`` matches ``def canonical``; ``app.urls.Canon.normalize`` a method named
``normalize``). Without configuration, the zero-config heuristic on the function's name:
``transforms.NORMALIZER_NAME`` (``normalize*``/``normalise*``, ``canonical*``/
``canonicalize*``, ``clean_*url*``, ``sanitize_*url|email|key|name*``, also after a prefix:
``_normalize``, ``url_normalize``, ``get_canonical_url``) plus ``clean_``/``sanitize_``/
``standardize_``/``norm_`` names that end in a key word (``clean_email``, ``norm_host``) —
except names that say they tidy display text (``normalize_whitespace_in_text``,
``normalize_title``, ``canonical_html``) or about output (``sanitize_url_for_logging``):
those are not key normalizers, and neither is a function whose result, wherever the module
calls it, goes only into a logger call, ``print`` or a template (judged by where it flows).
"""

from __future__ import annotations

import ast
from dataclasses import field
from typing import Dict, FrozenSet, Iterator, List, Sequence, Set, Tuple

from keydrift.analysis.imports import bindings, module_name_of  # noqa: F401 - module_name_of: callers' import
from keydrift.analysis.url_patterns import module_patterns
from keydrift.analysis.tree import FUNCTION_TYPES, WITH_TYPES, FunctionNode, child_nodes, is_elif
from keydrift.analysis.values import last_name
from keydrift.records import record
from keydrift.types import Config
from keydrift.analysis.normalizer_naming import (  # noqa: F401 - callers import these from here too
    is_normalizer, is_normalizer_name, looks_like_normalizer,
)

# -- which functions are normalizers (by name: ``normalizer_naming``) ------------------------

# Calls that take text for people to read: a normalizer whose result only ever goes there
# builds output, not keys (``logger.info("fetching %s", sanitize_url(u))``).
OUTPUT_RECEIVERS: FrozenSet[str] = frozenset({"logger", "log", "logging", "LOG", "LOGGER", "_log", "_logger"})
OUTPUT_FUNCTIONS: FrozenSet[str] = frozenset({
    "print", "warn", "render", "render_template", "format_html", "mark_safe", "escape",
})
URL_WORDS: FrozenSet[str] = frozenset({"url", "urls", "uri", "link", "href", "website", "homepage", "endpoint"})
PATH_WORDS: FrozenSet[str] = frozenset({"path", "pathname", "route"})


def normalizer_functions(module: ast.Module, config: Config) -> Iterator[Tuple[str, FunctionNode]]:
    """(qualified name, definition) of every normalizer, walking statements only."""
    for qualified, node in qualified_functions(module.body, ""):
        if is_normalizer(node.name, config):
            yield qualified, node


def qualified_functions(body: Sequence[ast.stmt], prefix: str) -> Iterator[Tuple[str, FunctionNode]]:
    """(qualified name, definition) of every function and method, nested functions aside. Looks
    into classes and the body of ``if``/``try``/``with`` and their ``else`` (not ``elif``,
    ``except`` or ``finally``)."""
    for node in body:
        if isinstance(node, FUNCTION_TYPES):
            yield f"{prefix}{node.name}", node
        elif isinstance(node, ast.ClassDef):
            yield from qualified_functions(suite(node.body), f"{prefix}{node.name}.")
        elif isinstance(node, (ast.If, ast.Try) + WITH_TYPES):
            yield from qualified_functions(suite(node.body), prefix)
            if isinstance(node, ast.Try) or (isinstance(node, ast.If) and not is_elif(node)):
                yield from qualified_functions(suite(node.orelse), prefix)


def suite(body: Sequence[ast.stmt]) -> Sequence[ast.stmt]:
    """The statements of a body (in ``ast`` a body is already its list of statements)."""
    return body



# -- urllib.parse names -----------------------------------------------------------------------

SPLIT_FUNCTIONS: FrozenSet[str] = frozenset({"urlsplit", "urlparse"})
REBUILD_FUNCTIONS: FrozenSet[str] = frozenset({"urlunsplit", "urlunparse", "urljoin"})
URL_PARSE_MODULES: FrozenSet[str] = frozenset({
    "urllib.parse", "urlparse", "six.moves.urllib.parse", "future.backports.urllib.parse",
    "urllib3.util.url",
})


@record
class UrlParseNames:
    """How the module names urllib.parse: ``from urllib.parse import urlsplit as us`` ->
    functions {"us": "urlsplit"}; ``import urllib.parse as up`` -> modules {"up"}; names
    imported from anywhere else (``from w3lib.url import urlparse``) are ``foreign``."""

    functions: Dict[str, str]
    modules: FrozenSet[str]
    foreign: FrozenSet[str]
    # module-level names bound to a regular expression's text (``URL = re.compile(r"^https?://")``)
    patterns: Dict[str, str] = field(default_factory=dict)


def url_parse_names(module: ast.Module) -> UrlParseNames:
    functions: Dict[str, str] = {}
    modules: Set[str] = set()
    foreign: Set[str] = set()
    for local, source, symbol in bindings(module):
        if not symbol:  # import x.y [as z]
            if source in URL_PARSE_MODULES:
                modules.add(local)
        elif source in URL_PARSE_MODULES:
            functions[local] = symbol
        elif source == "urllib" and symbol == "parse":
            modules.add(local)
        else:
            foreign.add(local)
    return UrlParseNames(functions, frozenset(modules), frozenset(foreign), module_patterns(module))


def output_only_functions(module: ast.Module) -> Set[str]:
    """Functions the module calls, every call sitting inside a call that takes text to read (a
    logger method, ``print``, ``warnings.warn``, a template render)."""
    verdicts: Dict[str, bool] = {}
    stack: List[Tuple[ast.AST, bool]] = [(module, False)]
    while stack:
        node, in_output = stack.pop()
        if isinstance(node, ast.Call):
            name = last_name(node.func)
            verdicts[name] = verdicts.get(name, True) and in_output
            in_output = in_output or _is_output_call(node)
        stack.extend((child, in_output) for child in child_nodes(node))
    return {name for name, only in verdicts.items() if only}


def _is_output_call(call: ast.Call) -> bool:
    func = call.func
    if isinstance(func, ast.Attribute):
        receiver = last_name(func.value)
        return receiver in OUTPUT_RECEIVERS or receiver.endswith(("logger", "_log")) or func.attr in OUTPUT_FUNCTIONS
    return last_name(func) in OUTPUT_FUNCTIONS
