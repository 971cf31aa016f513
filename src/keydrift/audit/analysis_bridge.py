"""The audit's only doors into the linter's analysis, in one place: module names, unique
declarations (``analysis/declarations.py``, what KD3 reads) and key accesses (the key-flow analysis). Keeping
them here means a change of those modules' internals is met in one file."""

from __future__ import annotations

import ast
import os
from typing import Dict, Iterator, Optional, Tuple

from keydrift.analysis.boundary import is_test_module
from keydrift.analysis.normalizer_names import module_name_of
from keydrift.frameworks import schema
from keydrift.types import Config

UniqueColumn = Tuple[str, str, int, str, Dict[str, str]]  # entity, column, line, via, table -> class


def module_name(path: str, config: Config) -> str:
    return module_name_of(path, config)


def not_production(module: str) -> bool:
    """Test and migration modules: the rules ignore their schema, so does the audit."""
    from keydrift.analysis.declarations import not_production_schema

    return is_test_module(module) or not_production_schema(module)


def unique_columns(text: str, path: str, config: Config, tree: Optional[ast.Module] = None) -> Iterator[UniqueColumn]:
    """Columns of the unique declarations KD3 looks at (natural keys), canonicalized or not:
    the code may canonicalize today and the data still hold yesterday's spellings. ``tree``:
    CPython's tree of ``text`` when the caller has parsed it (it is read, not changed)."""
    import warnings

    from keydrift.analysis.declarations import SchemaReader, is_migration_script
    from keydrift.source import physical_lines
    from keydrift.analysis.tree import source_lines

    try:
        module = tree
        if module is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the analyzed code's invalid escapes are not ours to report
                module = ast.parse(text, filename=path)
        with source_lines(physical_lines(text)):
            if is_migration_script(module):
                return  # history of the schema, not the schema (as KD3 reads it)
            reader = SchemaReader(config)
            reader.read(module)
    except Exception:  # noqa: BLE001 - a file the analysis cannot read has no columns to give
        return
    facts = reader.facts
    if not facts.declarations:
        return
    for declaration in facts.declarations:
        for column in declaration.columns:
            name = column.rsplit(".", 1)[-1]
            if schema.natural_key_kind(name) is None or _label_name(name, declaration.entity, facts.table_of_class):
                continue
            yield (declaration.entity, name, getattr(declaration.node, "lineno", 0), declaration.via,
                   dict(facts.table_of_class))


def _label_name(column: str, entity: str, table_of_class: Dict[str, str]) -> bool:
    """A bare ``name`` is a key only of a thing people name (``Tag.name``), not of an author or a
    job: the same judgement as KD301's."""
    if schema.name_tokens(column) != (schema.NAME,):
        return False
    classes = {c for t, c in table_of_class.items() if t == entity}
    return not any(schema.names_kind_of_thing(e) for e in {entity} | classes)


def key_accesses(data: bytes, path: str, config: Config) -> Iterator[Tuple[str, str, str]]:
    """(read|write, entity, field) of every key access the key-flow analysis finds."""
    from keydrift.source import physical_lines
    from keydrift.analysis.module import analyze
    from keydrift.analysis.project import import_name_for, project_index
    from keydrift.analysis.tree import source_lines
    from keydrift.diskcache import digest
    from keydrift.source import decode_source

    try:
        project = project_index(config, use_cache=config.cache)
        file = os.path.abspath(path)
        name, is_package = import_name_for(file, project.root)
        text = decode_source(data)
        module = project.parse(file, digest(data), text, name)
        with source_lines(physical_lines(text)):
            facts = analyze(module, path, config, project, name, is_package, file).facts()
    except Exception:  # noqa: BLE001 - the linter reports what it cannot analyze; the audit goes on
        return
    for access in facts.accesses:
        yield access.kind, access.entity, access.field
