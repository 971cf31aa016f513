"""Unique keys a module declares, and whether anything canonicalizes them (KD3).

A *declaration* makes values unique: a model field with ``unique=True``/``primary_key=True``
(``FIELD``), or a separate constraint or index — ``UniqueConstraint``, ``unique_together``,
``Index(unique=True)``, SQL DDL, a MongoDB unique index (``CONSTRAINT``). A declared column
needs canonicalization when its name says it is a natural key (``frameworks/schema.py``:
url, email, host, username, slug, path, name), it holds text, and nothing in the module makes
two spellings of one value equal:

- the model rewrites it when stored (``facts.info.rewrites``; ``save()``/``clean()``/
  ``__init__``/setter/``@validates`` assigning it through a canonicalizing call);
- a unique shadow column is derived from it in a method (``self.uid = to_uid(self.username)``);
- the column compares case-insensitively (``facts.info.field_absorbs``, ``CI*Field``, CITEXT,
  a case-insensitive collation, a MongoDB collation of strength 1 or 2);
- a functional unique constraint covers it (``UniqueConstraint(Lower("email"))``,
  ``Index(func.lower(...), unique=True)``, ``CREATE UNIQUE INDEX ... (lower(email))``), or a
  SQL ``CHECK (email = lower(email))`` holds every stored value to its canonical form;
- its field/type class stores a canonical value (a class in the module whose
  ``get_prep_value``/``to_python``/``process_bind_param`` canonicalizes the whole value, not a
  part it cut out with ``split``/``partition``, or a class named so:
  ``LowercaseEmailField``, sqlalchemy_utils ``EmailType``);
- the module calls a normalizer named for its kind (``normalize_email``, ``slugify``) or writes
  it through a canonicalizing step (a KD1 key access), or with the ``.hostname`` of a parsed URL
  (which urllib lowercases), or the modules beside it in its package write it only so (their
  function summaries, and their registry facts' writes of values of their own, such as a
  view's ``request.POST["email"].lower()``, read through the project index), or a form or
  serializer beside it canonicalizes it through a field class of the project
  (``email = LowercaseEmailField()``, its registry write);
- a configured normalizer covers it (see ``configured_cover``).

A Django model with ``Meta.managed = False`` declares another program's table: its keys are
reported only when this project writes them (the module, a module beside it, or a form,
serializer or admin beside it).

The declarations and the evidence are read by ``analysis/declarations.py`` (SQL DDL strings by
``analysis/ddl.py``); this module decides which declared columns nothing canonicalizes and
words the messages. Cost: one walk over the module's statements (class and function bodies
included); SQL strings are parsed (sqlglot, imported lazily) only when they look like DDL.
"""

from __future__ import annotations

import ast
import os
from typing import Dict, FrozenSet, Iterator, List, Optional, Set, Tuple

from keydrift.analysis.ddl import TEXT, ddl_items
from keydrift.analysis.declarations import (
    CONSTRAINT,
    FIELD,
    MONGO,
    ORM,
    SQL,
    Declaration,
    SchemaFacts,
    SchemaReader,
    is_migration_script,
    kinds_named,
    may_declare_a_key,
    not_production_schema,
)
from keydrift.analysis.normalizer_names import is_normalizer_name, module_name_of
from keydrift.analysis.parsing import SourceRejected
from keydrift.analysis.tree import FUNCTION_TYPES, current_source_lines, name_assignments, walk
from keydrift.diskcache import digest
from keydrift.frameworks import django_forms, drf_serializers, schema
from keydrift.patterns import lazy
from keydrift.records import record
from keydrift.source import SourceError, decode_source
from keydrift.types import Config

# (entity, field) pairs
_Keys = Set[Tuple[str, str]]

# Step kinds of a KD1 write access that canonicalize the stored key.
CANONICALIZING_STEP_KINDS: FrozenSet[str] = frozenset({"case", "normalizer", "slug", "idna", "unicode"})


@record
class UncanonicalKey:
    """A declaration whose natural-key columns nothing canonicalizes: what KD301/KD302 report."""

    declaration: Declaration
    columns: Tuple[Tuple[str, str], ...]  # (column, natural-key kind)
    partial_by: str = ""  # "the type class IdnaEmail": canonicalizes only a part of the value


# -- entry point -------------------------------------------------------------------------------

_last: List[Tuple[object, List[UncanonicalKey]]] = []


def uncanonical_keys(facts: object) -> List[UncanonicalKey]:
    """The declarations of ``facts.module`` that KD3 reports. KD301 and KD302 share one walk:
    the result for the last module is kept."""
    module = getattr(facts, "module")
    if _last and _last[0][0] is module:
        return _last[0][1]
    config: Config = getattr(facts, "config", None) or Config()
    result: List[UncanonicalKey] = []
    lines = current_source_lines()  # (None outside an analysis: read every module then)
    if (lines is None or may_declare_a_key("".join(lines))) \
            and not not_production_schema(module_name_of(getattr(facts, "path", ""), config)) \
            and not is_migration_script(module):
        reader = SchemaReader(config)
        reader.read(module)
        result = list(_decide(reader, facts, config))
    _last[:] = [(module, result)]
    return result


# -- deciding ------------------------------------------------------------------------------------

def _decide(reader: "SchemaReader", facts: object, config: Config) -> Iterator[UncanonicalKey]:
    evidence = _Evidence(reader, facts, config)
    for declaration in reader.facts.declarations:
        columns = tuple(evidence.uncanonical_columns(declaration))
        if columns:
            partial = [evidence.partial_by(declaration, c) for c, _ in columns]
            yield UncanonicalKey(declaration, columns, next((p for p in partial if p), ""))


class _Evidence:
    """What makes a declared column canonical: the schema read here plus the module's facts."""

    def __init__(self, reader: "SchemaReader", facts: object, config: Config) -> None:
        self.reader = reader
        self.schema = reader.facts
        info = getattr(facts, "info", None)
        self.rewrites = getattr(info, "rewrites", {}) or {}
        self.absorbs = getattr(info, "field_absorbs", {}) or {}
        self.written = _canonically_written(facts)
        self.stored = _written(facts)
        self.facts = facts
        self._siblings: Optional[Tuple[_Keys, _Keys, _Keys]] = None
        self._forms: Optional[Tuple[_Keys, Set[str], _Keys]] = None
        self.module = module_name_of(getattr(facts, "path", ""), config)
        self.config = config

    def uncanonical_columns(self, declaration: Declaration) -> Iterator[Tuple[str, str]]:
        entity = self.schema.table_of_class.get(declaration.entity, declaration.entity)
        for column in declaration.columns:
            kind = schema.natural_key_kind(column.rsplit(".", 1)[-1])
            if kind is None or not _is_text(self.schema, declaration, entity, column):
                continue
            if kind == schema.NAME and schema.name_tokens(column.rsplit(".", 1)[-1]) == (schema.NAME,) \
                    and not any(schema.names_kind_of_thing(e) for e in {entity, declaration.entity}):
                continue  # Author.name, History.name: a label, not a key (Tag.name is one)
            if kind == schema.PATH and any(schema.names_files_or_code(e) for e in {entity, declaration.entity}):
                continue  # Attachment.path, Plugin.path: a file or code path
            if kind == schema.SLUG and schema.names_foreign_slug(column.rsplit(".", 1)[-1]):
                continue  # external_slug: another source's identifier, matched as it spells it
            names = _names_of(self.schema, entity, declaration.entity, column)
            if declaration.entity in self.schema.unmanaged and not self._stored_by_project(names):
                continue  # a table another program owns and fills: not this project's schema
            if not self._canonical(names, kind):
                yield column, kind

    def partial_by(self, declaration: Declaration, column: str) -> str:
        entity = self.schema.table_of_class.get(declaration.entity, declaration.entity)
        for name in _names_of(self.schema, entity, declaration.entity, column):
            known = self.schema.columns.get(name)
            if known is not None and known.partial_by:
                return known.partial_by
        return ""

    def _canonical(self, names: List[Tuple[str, str]], kind: str) -> bool:
        for owner, _ in names:
            self.reader.read_methods(owner)
        if any(self._canonical_name(name) for name in names):
            return True
        return kind in self.schema.canonical_kinds or configured_cover(kind, self.module, self.config)

    def _canonical_name(self, name: Tuple[str, str]) -> bool:
        column = self.schema.columns.get(name)
        return bool(self.schema.canonical.get(name) or name in self.rewrites or name in self.written
                    or "case" in self.absorbs.get(name, ()) or (column is not None and column.canonical_by)
                    or name in self._layers()[0] or self._written_canonically_beside(name))

    def _stored_by_project(self, names: List[Tuple[str, str]]) -> bool:
        """The module or the modules beside it write the key (any step), or a form, serializer
        or admin beside it stores the entity as users type it."""
        if any(name in self.stored or self._generic_writers(name[0]) for name in names):
            return True  # known without the summaries of the modules beside it
        canonical, raw, _ = self._written_beside()
        return any(name in canonical or name in raw for name in names)

    def _written_canonically_beside(self, name: Tuple[str, str]) -> bool:
        """The modules beside this one (the app's services, views, managers) write the key only
        through a canonicalizing step: ``create(email=_canonical(email))`` in ``service.py``; or
        a form or serializer beside it does, through a field class of the project (only such a
        field makes the writes beside worth reading when a form or the admin stores the entity)."""
        generic = self._generic_writers(name[0])
        if generic and name not in self._layers()[2]:
            return False  # a form or the admin beside it stores the key as users type it
        canonical, raw, by_forms = self._written_beside()
        if name in by_forms:
            return True  # a form or serializer beside it canonicalizes what users type (its field class)
        return not generic and name in canonical and name not in raw

    def _written_beside(self) -> Tuple[_Keys, _Keys, _Keys]:
        """``_sibling_writes``, asked last: it summarizes every function of the modules beside
        this one (and the functions they call), which the cheaper evidence often makes needless."""
        if self._siblings is None:
            self._siblings = _sibling_writes(self.facts)
        return self._siblings

    def _generic_writers(self, entity: str) -> bool:
        """A ModelForm, a serializer or the admin beside the model stores what users type, as
        typed, without a write keydrift sees (``model = Entity``, ``admin.site.register(Entity)``)."""
        return entity in self._layers()[1]

    def _layers(self) -> Tuple[_Keys, Set[str], _Keys]:
        if self._forms is None:
            analysis = getattr(self.facts, "analysis", None)
            module_name = getattr(analysis, "module_name", "") or ""
            self._forms = _form_layers(getattr(analysis, "file", "") or "", self.config,
                                       getattr(analysis, "project", None), module_name.rpartition(".")[0])
        return self._forms


def _names_of(facts: SchemaFacts, entity: str, raw_entity: str, column: str) -> List[Tuple[str, str]]:
    """Every (entity, name) the column may be known by: class or table, attribute or column."""
    entities = {entity, raw_entity} | {t for t, c in facts.table_of_class.items() if c == entity}
    names = [(e, column) for e in entities]
    for (owner, attribute), mapped in facts.column_of_attribute.items():
        if owner in entities and mapped == column:
            names.append((owner, attribute))
    return names


def _is_text(facts: SchemaFacts, declaration: Declaration, entity: str, column: str) -> bool:
    """A column of unknown type (declared elsewhere) is judged by its name alone."""
    for owner in (declaration.entity, entity):
        known = facts.columns.get((owner, column))
        if known is not None:
            return known.type == TEXT
    return declaration.kind == CONSTRAINT


def _written(facts: object) -> Set[Tuple[str, str]]:
    """(entity, field) the module writes at all (a KD1 write access, whatever its steps)."""
    return {(a.entity, a.field) for a in getattr(facts, "accesses", ()) or () if getattr(a, "kind", "") == "write"}


def _canonically_written(facts: object) -> Set[Tuple[str, str]]:
    """(entity, field) the module writes through a canonicalizing step (a KD1 access)."""
    out: Set[Tuple[str, str]] = set()
    for access in getattr(facts, "accesses", ()) or ():
        if getattr(access, "kind", "") != "write":
            continue
        if any(step.kind in CANONICALIZING_STEP_KINDS or _lowercase_host(step) for step in access.value.steps):
            out.add((access.entity, access.field))
    return out


# ``urlsplit(url).hostname`` (or urlparse's): urllib lowercases the host it returns.
_HOSTNAME_OF_PARSE = lazy(r"\burl(?:split|parse)\(.*\)\.hostname$")


_MAX_SIBLINGS = 40


def _sibling_writes(facts: object) -> Tuple[_Keys, _Keys, _Keys]:
    """(entity, field) written through a canonicalizing step, written raw, and written through
    a canonicalizing step by a model form's or serializer's save (``analysis/forms.py``: its
    field class converts the value), by the other modules of this module's package (read
    through the project index, so each is analyzed once and cached): by their functions'
    summaries (the writes of what their callers pass) and by their registry facts' writes of a
    value of their own (``request.POST["email"].lower()`` in a view; a literal tells nothing).
    Test and migration modules are left out."""
    canonical: Set[Tuple[str, str]] = set()
    raw: Set[Tuple[str, str]] = set()
    by_forms: Set[Tuple[str, str]] = set()
    analysis = getattr(facts, "analysis", None)  # the ModuleAnalysis: project index, module name
    project = getattr(analysis, "project", None)
    module_name = getattr(analysis, "module_name", "") or ""
    file = getattr(analysis, "file", "") or ""
    if project is None or not file:
        return canonical, raw, by_forms
    package = module_name.rsplit(".", 1)[0] if "." in module_name else ""
    for sibling in _sibling_modules(file, package):
        if not_production_schema(sibling):
            continue
        export = project.module_export(sibling, file)
        writes = [access for summary in export.summaries.values() for access in summary.accesses
                  if access.kind == "write"]
        # (the WHERE of an UPDATE counts, as in the summaries: the rows it selects are written)
        writes += [use for use in export.keys.uses if use.kind == "write" and use.origin not in _TOLD_BY_OTHERS]
        for access in writes:
            target = (access.entity, access.field)
            if any(s.kind in CANONICALIZING_STEP_KINDS or _lowercase_host(s) for s in access.steps):
                canonical.add(target)
                if _form_save(access):
                    by_forms.add(target)
            else:
                raw.add(target)
    return canonical, raw, by_forms


def _form_save(use: object) -> bool:
    """A registry write a model form's or serializer's save makes (``MemberForm.save()``, named
    by the form in ``analysis/forms.py``), not a view's or a model's own ``save()``."""
    function = getattr(use, "function", "")
    return function.endswith(".save") and getattr(use, "via", "") == f"{function}()"


# Origins of a registry use whose write says nothing of its own: a literal, and a parameter
# (the summaries carry it, with what the function does to it).
_TOLD_BY_OTHERS = frozenset({"constant", "parameter"})


_FORM_VALIDATOR = lazy(r"^(?:clean|validate)_(\w+)$")


def _form_layers(file: str, config: Config, project: object = None,
                 package: str = "") -> Tuple[_Keys, Set[str], _Keys]:
    """Forms, serializers and admin registrations in the modules beside ``file``: the
    (entity, field) pairs a ``clean_<field>``/``validate_<field>`` method canonicalizes
    (``return self.cleaned_data["email"].lower()``), the entities such a layer stores at all,
    and the (entity, field) pairs it declares with a field class of the project (``email =
    LowercaseEmailField()``: whether that class converts the value, its form's registry write
    tells). Read with ``ast`` (the whole file); nothing is imported or run. ``project``: the
    project index, whose trees these are (the summaries of the modules beside, and the
    registry, read the same files next), of the modules of ``package``."""
    validated: Set[Tuple[str, str]] = set()
    writers: Set[str] = set()
    converted: Set[Tuple[str, str]] = set()
    for path in _sibling_paths(file):
        try:
            tree = _sibling_tree(path, project, package)
        except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
        own = set(classes) | _imported_from_the_project(tree, package)
        for node in walk(tree):
            if isinstance(node, ast.ClassDef) and not _test_data_factory(node):
                entity = _meta_model(node)
                if entity:
                    writers.add(entity)
                    validated.update((entity, f) for f in _canonicalized_by_validators(node, config, classes))
                    converted.update((entity, f) for f, field_class in _declared_fields(node) if field_class in own)
            elif isinstance(node, ast.Call) and _ast_name(node.func) == "register" and node.args:
                writers.add(_ast_name(node.args[0]))
    return validated, writers, converted


def _declared_fields(node: ast.ClassDef) -> Iterator[Tuple[str, str]]:
    """(field, the class it is made by) of ``field = SomeField(...)`` in a form's body."""
    for name, value in name_assignments(node.body):
        if isinstance(value, ast.Call):
            yield name, _ast_name(value.func)


def _imported_from_the_project(tree: ast.Module, package: str) -> Set[str]:
    """Names a module imports from the project: by a relative import, or from a module of its
    own top-level package (``from app.fields import LowercaseEmailField`` in ``app.forms``)."""
    top = package.split(".", 1)[0]
    names: Set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and (node.level or top and (node.module or "").split(".", 1)[0] == top):
            names.update(alias.asname or alias.name for alias in node.names)
    return names


def _sibling_tree(path: str, project: object, package: str) -> ast.Module:
    """CPython's tree of a module beside the one checked: the project index's (parsed once,
    kept for the analyses that read the module next), or parsed here when the index does not
    give one (no index; a file it does not analyze, such as one past its size limit)."""
    with open(path, "rb") as handle:
        data = handle.read()
    if project is not None:
        name = os.path.basename(path)[:-3]
        try:
            return project.parse(path, digest(data), decode_source(data),  # type: ignore[attr-defined]
                                 f"{package}.{name}" if package else name)
        except (SourceRejected, SourceError, RecursionError, MemoryError, ValueError):
            pass  # parsed here as before: what the index rejects is still read for its classes
    return ast.parse(data)


def _test_data_factory(node: ast.ClassDef) -> bool:
    """A factory_boy factory (``class UserFactory(DjangoModelFactory): class Meta: model = User``)
    makes test records; it stores nothing users type."""
    return any(_ast_name(base).endswith(schema.TEST_FACTORY_BASE_SUFFIX) for base in node.bases)


def _meta_model(node: ast.ClassDef) -> str:
    """``class Meta: model = Subscription`` inside a form or serializer class."""
    for inner in node.body:
        if isinstance(inner, ast.ClassDef) and inner.name == "Meta":
            for statement in inner.body:
                if isinstance(statement, ast.Assign) and any(
                        isinstance(t, ast.Name) and t.id == "model" for t in statement.targets):
                    return _ast_name(statement.value)
    return ""


def _canonicalized_by_validators(node: ast.ClassDef, config: Config,
                                 classes: Optional[Dict[str, ast.ClassDef]] = None) -> Iterator[str]:
    """The fields a form's or serializer's ``clean_<field>``/``validate_<field>`` method
    canonicalizes, or whose field class of the module does (``email = LowercaseEmailField()``,
    its ``to_python``/``to_internal_value`` lowercasing)."""
    for method in node.body:
        match = _FORM_VALIDATOR.match(method.name) if isinstance(method, ast.FunctionDef) else None
        if match and _canonicalizes(method, config):
            yield match.group(1)
    for field_name, class_name in _declared_fields(node):
        field_class = (classes or {}).get(class_name)
        if field_class is not None and any(
                isinstance(m, FUNCTION_TYPES) and m.name in _FIELD_CONVERTERS and _canonicalizes(m, config)
                for m in field_class.body):
            yield field_name


def _canonicalizes(method: ast.AST, config: Config) -> bool:
    return any(isinstance(c, ast.Call) and (_ast_name(c.func) in schema.CANONICALIZING_CALLS
                                            or is_normalizer_name(_ast_name(c.func), config))
               for c in walk(method))


# A field class's methods that convert the value a form or serializer is given.
_FIELD_CONVERTERS = frozenset({*django_forms.FIELD_CONVERTERS, *drf_serializers.FIELD_CONVERTERS})


def _ast_name(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _sibling_modules(file: str, package: str) -> List[str]:
    prefix = f"{package}." if package else ""
    names = (os.path.basename(p)[:-3] for p in _sibling_paths(file))
    return [prefix + n for n in names if n.isidentifier()]


def _sibling_paths(file: str) -> List[str]:
    """The other ``.py`` files of the module's directory (at most ``_MAX_SIBLINGS``)."""
    if not file:
        return []
    directory = os.path.dirname(file)
    own = os.path.basename(file)
    try:
        names = sorted(n for n in os.listdir(directory) if n.endswith(".py") and n not in (own, "__init__.py"))
    except OSError:
        return []
    return [os.path.join(directory, n) for n in names[:_MAX_SIBLINGS]]


def _lowercase_host(step: object) -> bool:
    return getattr(step, "kind", "") == "rederived" and bool(_HOSTNAME_OF_PARSE.search(getattr(step, "label", "")))


def configured_cover(kind: str, module: str, config: Config) -> bool:
    """With ``[tool.keydrift] normalizers`` configured, a key kind is canonicalized at the
    boundary when a normalizer's qualified name names that kind (``app.urls.canonical`` covers
    URLs, ``accounts.normalize_email`` emails), or when a normalizer names no kind at all
    (``app.keys.normalize``) and the declaring module is a boundary module (every module, when
    no boundary is configured)."""
    if not config.normalizers:
        return False
    generic = False
    for normalizer in config.normalizers:
        kinds = kinds_named(normalizer)
        if kind in kinds:
            return True
        generic = generic or not kinds
    return generic and _in_boundary(module, config)


def _in_boundary(module: str, config: Config) -> bool:
    if not config.boundary:
        return True
    return any(module == b or module.startswith(b + ".") or module.endswith("." + b) for b in config.boundary)


__all__ = ["CONSTRAINT", "FIELD", "Declaration", "SchemaReader", "UncanonicalKey", "configured_cover",
           "ddl_items", "describe", "not_production_schema", "uncanonical_keys"]


# -- messages -----------------------------------------------------------------------------------

_WHY_NOT = {
    ORM: "no save()/validator rewrite, case-insensitive column or Lower() constraint",
    SQL: "no lower() index, CITEXT column or case-insensitive collation",
    MONGO: "no case-insensitive collation",
}


def describe(key: UncanonicalKey, config: Config) -> Tuple[str, str]:
    """(what is unique, why and what to do) for a KD3 message."""
    columns = ", ".join(f"{key.declaration.entity}.{c}" for c, _ in key.columns)
    kind = key.columns[0][1]
    why_not = _WHY_NOT[key.declaration.layer]
    if key.partial_by:
        why_not = f"{key.partial_by} canonicalizes only a part cut out of the value"
    spellings = schema.COLLIDING_SPELLINGS[kind]
    if config.normalizers:
        fix = f"call a normalizer for {kind} keys at the boundary and list it in [tool.keydrift] normalizers"
    elif all(k in schema.CASE_ONLY_KINDS for _, k in key.columns):
        fix = ("normalize it at the boundary (one normalizer, before the uniqueness check) "
               "or use a case-insensitive unique constraint")
    else:
        fix = "normalize it at the boundary (one normalizer, before the uniqueness check)"
    return columns, f"({why_not}): {spellings}; {fix}"
