"""Key columns of a project, found by the linter's own analysis (nothing is imported or run):

- unique declarations on natural keys — what KD3 reads (``analysis/uniqueness.py``);
- fields the key-flow analysis sees read *and* written by key (what KD1/KD2 treat as keys);
- columns listed under ``[tool.keydrift.audit] columns``.

Each is mapped to its table and column (``audit/tables.py``). Test and migration modules are
left out, as the rules leave them out.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Optional, Set, TextIO, Tuple

from keydrift.audit.model import KeyColumn, Skipped
from keydrift.audit.tables import ModelTable, framework_models, model_tables, module_layer
from keydrift.config import is_excluded
from keydrift.frameworks import schema
from keydrift.output.progress import Progress
from keydrift.types import Config
from keydrift.vocabulary import mentions_database

_SKIPPED_DIRECTORIES = frozenset({"__pycache__", "node_modules", "venv", "build", "dist", "migrations"})
_CONFIGURED = "[tool.keydrift.audit]"
# a file without these words declares nothing unique: it is not parsed for declarations
_UNIQUENESS_WORDS = re.compile(r"unique|primary_key|UNIQUE|Unique", re.I)
_KD1_SOURCE = "read and written by key"


@dataclass
class _Found:
    """Key fields by (entity, attribute), with where each was seen."""

    sources: Dict[Tuple[str, str], List[str]] = field(default_factory=dict)
    reads: Set[Tuple[str, str]] = field(default_factory=set)
    writes: Set[Tuple[str, str]] = field(default_factory=set)
    models: Dict[str, ModelTable] = field(default_factory=dict)
    tables_of_entity: Dict[str, str] = field(default_factory=dict)  # uniqueness' table -> class
    access_files: Dict[Tuple[str, str], List[str]] = field(default_factory=dict)
    layers: Set[str] = field(default_factory=set)  # the ORMs the project's modules import
    framework: Dict[str, ModelTable] = field(default_factory=dict)  # User -> auth_user
    layerless: List[Tuple[ast.Module, str]] = field(default_factory=list)  # modules importing none

    def add(self, entity: str, attribute: str, source: str) -> None:
        self.sources.setdefault((entity, attribute), []).append(source)


def project_files(paths: List[str], config: Config) -> Iterator[str]:
    for given in paths:
        if os.path.isfile(given) and given.endswith(".py"):
            yield given
            continue
        for directory, subdirectories, names in os.walk(given):
            subdirectories[:] = sorted(d for d in subdirectories if not _skip(os.path.join(directory, d), config))
            for name in sorted(names):
                path = os.path.join(directory, name)
                if name.endswith(".py") and not is_excluded(path, config):
                    yield path


def _skip(path: str, config: Config) -> bool:
    name = os.path.basename(path)
    return (name.startswith(".") or name in _SKIPPED_DIRECTORIES or name.endswith(".egg-info")
            or os.path.isfile(os.path.join(path, "pyvenv.cfg")) or is_excluded(path, config))


def key_columns(paths: List[str], config: Config, configured: List[Tuple[str, str, Optional[str]]],
                progress_stream: Optional[TextIO] = None) -> Tuple[List[KeyColumn], List[Skipped]]:
    """The key columns of the project under ``paths``, and the keys that map to no column.
    A long scan shows ``[n/N] path`` on ``progress_stream`` when it is a terminal."""
    from keydrift.audit import analysis_bridge  # loads the analysis

    found = _Found()
    files = list(project_files(paths, config))
    progress = Progress(progress_stream, len(files))
    try:
        for number, path in enumerate(files, start=1):
            progress.show(number, path)
            _read_file(path, config, found, analysis_bridge)
    finally:
        progress.clear()
    _layerless_models(found)
    for table, column, kind in configured:
        found.add(table, column, _CONFIGURED + (f" ({kind})" if kind else ""))
    kinds = {(t, c): k for t, c, k in configured if k}
    return _resolve(found, kinds)


def _layerless_models(found: _Found) -> None:
    """Models in modules that import no ORM (``class Page(TimeStamped)``, the base defined in
    another module) follow the project's ORM, when it has exactly one. The framework's own
    models come last: a project's ``User`` is its own."""
    for model in framework_models(found.layers):
        found.framework.setdefault(model.name, model)
    if len(found.layers) != 1:
        return
    layer = next(iter(found.layers))
    for tree, module in found.layerless:
        for model in model_tables(tree, module, layer):
            found.models.setdefault(model.name, model)
    found.layerless.clear()


def _read_file(path: str, config: Config, found: _Found, bridge: object) -> None:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
        text = data.decode("utf-8")
        tree = ast.parse(text)
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError):
        return  # `keydrift check` reports files it cannot read; the audit reads what it can
    module = getattr(bridge, "module_name")(path, config)
    if getattr(bridge, "not_production")(module):
        return
    if module_layer(tree) is None:
        found.layerless.append((tree, module))
    else:
        found.layers.add(module_layer(tree) or "")
        for model in model_tables(tree, module):
            found.models.setdefault(model.name, model)
    shown = os.path.relpath(path, config.root or ".")
    if _UNIQUENESS_WORDS.search(text):
        for entity, attribute, line, via, table_of in getattr(bridge, "unique_columns")(text, path, config, tree):
            found.add(entity, attribute, f"{shown}:{line} {via}")
            found.tables_of_entity.update(table_of)
    if not mentions_database(text):
        return
    for kind, entity, attribute in getattr(bridge, "key_accesses")(data, path, config):
        (found.reads if kind == "read" else found.writes).add((entity, attribute))
        found.sources.setdefault((entity, attribute), [])
        found.access_files.setdefault((entity, attribute), []).append(shown)


def _resolve(found: _Found, kinds: Dict[Tuple[str, str], str]) -> Tuple[List[KeyColumn], List[Skipped]]:
    columns: Dict[Tuple[str, str], KeyColumn] = {}
    skipped: List[Skipped] = []
    for (entity, attribute), sources in sorted(found.sources.items()):
        keyed = (entity, attribute) in found.reads and (entity, attribute) in found.writes
        if keyed:
            files = ", ".join(dict.fromkeys(found.access_files.get((entity, attribute), [])))
            sources = sources + [f"{_KD1_SOURCE} in {files}"]
        if not sources:
            continue  # only read, or only written: not a key
        table, column = _table_and_column(found, entity, attribute)
        kind = kinds.get((entity, attribute)) or schema.natural_key_kind(column) or schema.natural_key_kind(attribute)
        if kind is None and len(sources) == 1 and keyed:
            continue  # an id, a status, a flag: a lookup field, not a natural key
        key = columns.get((table, column))
        merged = tuple(dict.fromkeys((key.sources if key else ()) + tuple(sources)))
        columns[(table, column)] = KeyColumn(entity, attribute, table, column, kind, merged)
    return list(columns.values()), skipped


def _table_and_column(found: _Found, entity: str, attribute: str) -> Tuple[str, str]:
    model = (found.models.get(entity) or found.models.get(found.tables_of_entity.get(entity, ""))
             or found.framework.get(entity))
    if model is not None:
        return model.table, model.column(attribute)
    return entity, attribute  # a table named in SQL, a Core Table(...), a configured column
