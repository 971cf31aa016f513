"""The uniqueness declarations of one module and the evidence that canonicalizes their keys,
read in one walk over its statements (KD3; ``analysis/uniqueness.py`` decides what to report).

Declarations: model fields with ``unique=True``/``primary_key=True`` (also a column a
``@declared_attr`` method returns), ``UniqueConstraint``/``unique_together``/``Index(unique=True)``,
SQLAlchemy Core ``Table(...)``, SQL DDL strings (``analysis/ddl.py``), MongoDB unique indexes.
Evidence: field/type classes whose storing methods canonicalize the whole value, methods that
store a field through a canonicalizing call (``save()``, setters, ``@validates``,
``pre_save`` receivers), unique shadow columns derived from a key, functional unique indexes,
case-insensitive types and collations, normalizers the module calls.

Only the top-level expression of each statement and call arguments two levels deep are looked
at; class methods are read only when a key of their class needs them.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import field
from typing import Dict, FrozenSet, Iterator, List, Optional, Sequence, Set, Tuple, Union

from keydrift.analysis.boundary import is_test_module
from keydrift.analysis.ddl import OTHER, TEXT, canonical_check_columns, ddl_items, looks_like_ddl, mentions_uniqueness, short
from keydrift.analysis.normalizer_names import is_normalizer_name
from keydrift.analysis.tree import (
    FUNCTION_TYPES,
    FunctionNode,
    all_argument_values,
    child_nodes,
    concatenated_literals,
    elements,
    is_true,
    keyword_arg,
    unspread_positional_args,
    unstarred,
)
from keydrift.analysis.tree import string_literal as _string
from keydrift.analysis.values import code, dotted_name, last_name
from keydrift.frameworks import schema
from keydrift.patterns import lazy
from keydrift.records import mutable, record
from keydrift.types import Config

FIELD = "field"  # KD301
CONSTRAINT = "constraint"  # KD302

ORM = "orm"
SQL = "sql"
MONGO = "mongo"

_MAX_EXPRESSION_DEPTH = 2
_SAVING_METHODS = frozenset({"save", "clean", "full_clean", "before_save", "pre_save"}) | schema.ASSIGNING_METHODS


@record
class Declaration:
    """A uniqueness declaration over ``columns`` of ``entity`` (class or table name)."""

    kind: str  # FIELD or CONSTRAINT
    entity: str
    columns: Tuple[str, ...]
    node: ast.AST
    via: str  # how it is declared, for messages
    layer: str = "orm"  # ORM, SQL or MONGO: what a case-insensitive alternative looks like


@mutable
class _Column:
    """A column's type as declared, and what canonicalizes it (wholly or in part)."""

    type: str = OTHER
    canonical_by: str = ""
    partial_by: str = ""  # a field/type class that canonicalizes only a part of the value


@mutable
class _FieldClass:
    """A field class the module defines: whether it holds text and canonicalizes what it stores."""

    text: bool
    canonical: bool
    partial: bool = False  # its storing methods canonicalize a part of the value only


@mutable
class SchemaFacts:
    """What a module declares of its schema: uniqueness declarations, column types, canonical
    columns, and the names tables and columns go by."""

    declarations: List[Declaration] = field(default_factory=list)
    columns: Dict[Tuple[str, str], _Column] = field(default_factory=dict)
    canonical: Dict[Tuple[str, str], str] = field(default_factory=dict)  # (entity, column) -> why
    canonical_kinds: Dict[str, str] = field(default_factory=dict)  # kind -> normalizer called
    table_of_class: Dict[str, str] = field(default_factory=dict)  # table name -> class name
    column_of_attribute: Dict[Tuple[str, str], str] = field(default_factory=dict)
    # Django models of tables another program owns (``Meta.managed = False``): never migrated here
    unmanaged: Set[str] = field(default_factory=set)


_MIGRATION_PACKAGES = frozenset({"migrations", "alembic"})
# A numbered revision file (``0007_add_email``) or an alembic one (``3f2a1b9c8d7e_users``).
# A ``migrate.py`` that creates the tables at startup is the schema itself, not history.
_MIGRATION_NAME = lazy(r"^\d{3,}_|^[0-9a-f]{12}_")


def not_production_schema(module: str) -> bool:
    """Test code (``boundary.is_test_module``) and schema-migration code (a ``migrations``/
    ``alembic`` package, a numbered revision file)
    declare fixtures and history, not the schema the application writes through: a test
    model's unique ``username`` is not a key of any real record, and a past migration is not
    where a fix would go (the model it mirrors is reported)."""
    parts = module.split(".") if module else []
    return is_test_module(module) or any(p in _MIGRATION_PACKAGES or _MIGRATION_NAME.search(p) for p in parts)


def is_migration_script(module: ast.Module) -> bool:
    """A migration wherever it lives: an alembic revision (``down_revision = ...`` at module
    level) or a Django/peewee ``class Migration(migrations.Migration)``."""
    for statement in module.body:
        if isinstance(statement, ast.ClassDef) and statement.name == "Migration":
            return True
        target, _, _ = _assignment(statement)
        if isinstance(target, ast.Name) and target.id in ("down_revision", "revision"):
            return True
    return False


# Every declaration ``SchemaReader`` reads spells one of these (in any case): a unique or
# primary-key keyword (``unique=True``, ``primary_key=True``), a constraint call
# (``UniqueConstraint``), ``unique_together``, a ``Meta`` constraint list (peewee's
# ``indexes = ((("a", "b"), True),)`` says nothing else), or DDL (``UNIQUE``, ``PRIMARY KEY``).
_SPELLED = {word.lower() for word in (*schema.UNIQUE_KEYWORDS, *schema.UNIQUE_CONSTRAINT_CALLS,
                                      *schema.DJANGO_UNIQUE_TOGETHER, *schema.DJANGO_META_CONSTRAINTS)} | {"unique", "primary"}
_DECLARING_WORDS = sorted(w for w in _SPELLED if not any(other != w and other in w for other in _SPELLED))
_MAY_DECLARE = lazy("|".join(map(re.escape, _DECLARING_WORDS)), re.IGNORECASE)


def may_declare_a_key(text: str) -> bool:
    """Whether a module's text may hold a declaration ``SchemaReader`` reads (a unique key or
    a primary key): most modules spell none of ``_DECLARING_WORDS``, and reading their every
    statement and expression for declarations was 6% of a cold check."""
    return _MAY_DECLARE.search(text) is not None


# -- reading declarations ------------------------------------------------------------------

class SchemaReader:
    """Reads one module's uniqueness declarations and the evidence that canonicalizes keys,
    walking statements only (see the module docstring)."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.facts = SchemaFacts()
        self.field_classes: Dict[str, _FieldClass] = {}
        self.table_variables: Dict[str, str] = {}  # users_table -> "users"
        self.seen_strings: Set[int] = set()
        self.methods: Dict[str, List[FunctionNode]] = {}  # class -> its methods, not yet read
        self.functions: Dict[str, FunctionNode] = {}  # module-level functions, by name

    def read(self, module: ast.Module) -> None:
        self._field_classes(module.body)
        self._body(module.body, None)

    # statements ------------------------------------------------------------------------

    def _body(self, body: Sequence[ast.stmt], owner: Optional[str]) -> None:
        """``owner`` is the class whose body this is (fields are declared there), else None."""
        for statement in body:
            if isinstance(statement, ast.ClassDef):
                self._class(statement, owner)
            elif isinstance(statement, FUNCTION_TYPES):
                self._function(statement, owner)
            elif isinstance(statement, _COMPOUND_TYPES):
                for block in _blocks(statement):
                    self._body(block, owner)
            else:
                self._small(statement, owner)

    def _class(self, node: ast.ClassDef, owner: Optional[str]) -> None:
        if owner is not None and node.name == "Meta":
            self._meta(node, owner)
            return
        self._body(node.body, node.name)

    def _function(self, node: FunctionNode, owner: Optional[str]) -> None:
        if owner is not None:
            self.methods.setdefault(owner, []).append(node)  # read only if a key needs them
            if _has_decorator(node, schema.DECLARED_ATTRIBUTE_DECORATORS):
                self._declared_attribute(node, owner)
                return
        else:
            self.functions[node.name] = node
            self._pre_save_receiver(node)
        self._body(node.body, None)

    def _declared_attribute(self, node: FunctionNode, owner: str) -> None:
        """SQLAlchemy ``@declared_attr def email(cls): return Column("email", ..., unique=True)``
        declares the column the method returns, under the method's name."""
        for small in _small_statements(node.body):
            if isinstance(small, ast.Return) and isinstance(small.value, ast.Call):
                self._class_attribute(owner, node.name, None, small.value, small)

    def _pre_save_receiver(self, node: FunctionNode) -> None:
        """``@receiver(pre_save, sender=Post) def f(sender, instance, **kw):
        instance.slug = slugify(instance.title)`` makes Post.slug canonical."""
        sender = _receiver_sender(node)
        if not sender:
            return
        for attribute in self._canonicalized_attributes(node, "instance"):
            self._mark(sender, attribute, f"the pre_save receiver {node.name}()")

    def _canonicalized_attributes(self, node: FunctionNode, receiver: str) -> Iterator[str]:
        """``X`` of each ``receiver.X = <a canonicalizing call>`` in the function's body (also a
        call of a module function that canonicalizes: ``self.slug = _free_slug(self.name)``; and
        a local variable assigned one: ``slug = self.name.lower(); self.slug = slug``)."""
        locals_: Dict[str, ast.expr] = {}
        for small in _small_statements(node.body):
            target, _, value = _assignment(small)
            if isinstance(target, ast.Name) and value is not None:
                locals_[target.id] = value
            elif (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                    and target.value.id == receiver and value is not None):
                if isinstance(value, ast.Name) and value.id in locals_:
                    value = locals_[value.id]
                if self._canonicalizing_value(value):
                    yield target.attr

    def _small(self, small: ast.stmt, owner: Optional[str]) -> None:
        target, annotation, value = _assignment(small)
        if value is None and isinstance(small, (ast.Expr, ast.Return)):
            value = small.value
        docstring = isinstance(small, ast.Expr) and _is_literal_string(value)
        if value is None or docstring:
            return
        if owner is not None and isinstance(target, ast.Name):
            if self._class_attribute(owner, target.id, annotation, value, small):
                return
        if isinstance(target, ast.Name) and isinstance(value, ast.Call) and last_name(value.func) in schema.TABLE_CALLS:
            table = _string(unspread_positional_args(value)[0]) if unspread_positional_args(value) else None
            if table:
                self.table_variables[target.id] = table
        self._expression(value, 0)

    def _class_attribute(self, owner: str, name: str, annotation: Optional[ast.expr],
                         value: ast.expr, statement: ast.AST) -> bool:
        """A class-body assignment that declares schema; False when it is something else."""
        if name == "__tablename__" and _string(value):
            self.facts.table_of_class[_string(value) or ""] = owner
            return True
        if name in schema.SQLALCHEMY_TABLE_ARGS:
            for item in elements(value):
                if isinstance(item, ast.Call):
                    self._constraint_call(item, owner)
            return True
        if isinstance(value, ast.Call):
            return self._field(owner, name, annotation, value, statement)
        return False

    # model fields ----------------------------------------------------------------------

    def _field(self, owner: str, name: str, annotation: Optional[ast.expr], call: ast.Call,
               statement: ast.AST) -> bool:
        callee = last_name(call.func)
        if not (callee in schema.COLUMN_CALLS or callee.endswith("Field") or callee in schema.RELATION_FIELD_CALLS):
            return False
        column = self._column_name(call, name)
        if column != name:
            self.facts.column_of_attribute[(owner, name)] = column
        self.facts.columns[(owner, column)] = self._field_type(callee, call, annotation)
        unique = _true_keyword(call, schema.UNIQUE_KEYWORDS)
        if unique:
            via = f"{dotted_name(call.func) or callee}({unique}=True)"
            self.facts.declarations.append(Declaration(FIELD, owner, (column,), statement, via))
        return True

    def _column_name(self, call: ast.Call, name: str) -> str:
        positional = unspread_positional_args(call)
        explicit = _string(positional[0]) if positional and last_name(call.func) in schema.COLUMN_CALLS else None
        return explicit or _string(keyword_arg(call, "db_column")) or name

    def _field_type(self, callee: str, call: ast.Call, annotation: Optional[ast.expr]) -> _Column:
        if callee in schema.RELATION_FIELD_CALLS:
            return _Column(OTHER)  # the referenced table's key
        if any(keyword_arg(call, k) is not None for k in schema.ENUMERATION_KEYWORDS):
            return _Column(OTHER)  # values chosen from a list the code defines
        if self._generated_default(call):
            return _Column(OTHER)  # identifiers the code generates (default=uuid4): one spelling
        if _case_insensitive_collation(call):
            return _Column(TEXT, "a case-insensitive collation")
        if callee in schema.COLUMN_CALLS:
            return self._column_type(call, annotation)
        return self._class_kind(callee, "field")

    def _generated_default(self, call: ast.Call) -> bool:
        """The field's default generates a value (``default=uuid.uuid4``, ``default=lambda:
        token_urlsafe(16)``, a module function returning ``get_random_string(32)``)."""
        for name in schema.DEFAULT_KEYWORDS:
            default = keyword_arg(call, name)
            if default is None:
                continue
            if last_name(default) in schema.GENERATOR_CALLS:
                return True
            function = self.functions.get(last_name(default)) if isinstance(default, (ast.Name, ast.Attribute)) else None
            body = default.body if isinstance(default, ast.Lambda) else function
            if body is not None and any(isinstance(node, ast.Call) and last_name(node.func) in schema.GENERATOR_CALLS
                                        for node in ast.walk(body)):
                return True
        return False

    def _column_type(self, call: ast.Call, annotation: Optional[ast.expr]) -> _Column:
        if any(isinstance(arg, ast.Call) and last_name(arg.func) in schema.RELATION_FIELD_CALLS
               for arg in unspread_positional_args(call)):
            return _Column(OTHER)  # Column("team_name", String(50), ForeignKey("team.name"))
        for arg in unspread_positional_args(call):
            if _is_literal_string(arg) or (isinstance(arg, ast.JoinedStr) and concatenated_literals(arg)):
                continue  # the column's name (also written as literals concatenated with an f-string)
            type_expr = arg.func if isinstance(arg, ast.Call) else arg
            if last_name(type_expr) == "ForeignKey":
                return _Column(OTHER)
            if isinstance(arg, ast.Call) and _case_insensitive_collation(arg):
                return _Column(TEXT, "a case-insensitive collation")
            return self._class_kind(last_name(type_expr), "type")
        if annotation is not None and _annotation_is_text(annotation):
            return _Column(TEXT)
        return _Column(OTHER)

    def _class_kind(self, name: str, what: str) -> _Column:
        known = self.field_classes.get(name)
        if known is not None:
            return _Column(TEXT if known.text else OTHER, f"the {what} class {name}" if known.canonical else "",
                           f"the {what} class {name}" if known.partial else "")
        if name in schema.CANONICAL_TYPES or schema.CANONICAL_CLASS_NAME.search(name) or schema.is_case_insensitive_class(name):
            return _Column(TEXT, f"the {what} class {name}")
        if name in schema.TEXT_FIELD_CLASSES or name in schema.TEXT_COLUMN_TYPES:
            return _Column(TEXT)
        return _Column(OTHER)

    def _field_classes(self, body: Sequence[ast.stmt]) -> None:
        """Field and column-type classes defined in the module, in order (a subclass of a
        subclass resolves), with whether their storing methods canonicalize."""
        for node in body:
            if not isinstance(node, ast.ClassDef):
                continue
            bases = [last_name(unstarred(b)) for b in node.bases]
            text = any(self._is_text_class(b) for b in bases) or _impl_is_text(node)
            fieldish = text or any(b.endswith("Field") or b == "TypeDecorator" for b in bases)
            if not fieldish:
                continue
            inherited = any(self.field_classes.get(b, _FieldClass(False, False)).canonical for b in bases)
            storing = [m for m in node.body
                       if isinstance(m, FUNCTION_TYPES) and m.name in schema.STORING_METHODS]
            canonical = inherited or any(_canonicalizes_whole_value(m, self.config) for m in storing)
            partial = not canonical and any(_calls_canonicalizer(m.body, self.config) for m in storing)
            self.field_classes[node.name] = _FieldClass(text, canonical, partial)

    def _is_text_class(self, name: str) -> bool:
        known = self.field_classes.get(name)
        if known is not None:
            return known.text
        return name in schema.TEXT_FIELD_CLASSES or name in schema.TEXT_COLUMN_TYPES or schema.is_case_insensitive_class(name)

    # rewriting methods -------------------------------------------------------------------

    def read_methods(self, owner: str) -> None:
        for node in self.methods.pop(owner, ()):
            self._canonicalizing_method(node, owner)
            self._shadow_columns(node, owner)

    def _shadow_columns(self, node: FunctionNode, owner: str) -> None:
        """``self.username = value; self.uid = to_uid(value)`` in any method (a setter, save(),
        __init__) with ``uid`` unique: the canonical copy carries the uniqueness, so two
        spellings of the raw ``username`` collide on ``uid`` and the raw column is covered."""
        raw: Dict[str, Set[str]] = {}  # attribute -> roots of the values stored raw
        derived: Dict[str, Set[str]] = {}  # attribute -> roots of values stored canonicalized
        assigned: Counter[str] = Counter()
        for small in _small_statements(node.body):
            target, _, value = _assignment(small)
            if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                    and target.value.id == "self" and value is not None):
                continue
            roots = _value_roots(value)
            assigned[target.attr] += 1
            if self._canonicalizing_value(value):
                derived.setdefault(target.attr, set()).update(roots)
            else:
                raw.setdefault(target.attr, set()).update(roots)
        if not derived:
            return
        unique = {c for d in self.facts.declarations if d.entity == owner and len(d.columns) == 1
                  for c in d.columns}
        for shadow, sources in derived.items():
            column = self.facts.column_of_attribute.get((owner, shadow), shadow)
            if column not in unique or shadow in raw or assigned[shadow] > 1:
                continue  # "python", else "python_1": a copy made unique is no constraint on the key
            covered = {r[len("self."):] for r in sources if r.startswith("self.")}
            covered |= {attribute for attribute, raw_roots in raw.items() if raw_roots & sources}
            for attribute in covered - {shadow}:
                self._mark(owner, attribute,
                           f"the unique column {owner}.{shadow} derived from it in {node.name}()")

    def _canonicalizing_value(self, value: ast.expr) -> bool:
        """A value made by a canonicalizing call, or by a module function whose body makes one
        (``def _username_to_uid(name): return name.replace(".", "").lower()``)."""
        if _calls_canonicalizer(value, self.config):
            return True
        return isinstance(value, ast.Call) and any(
            _calls_canonicalizer(f.body, self.config)
            for f in (self.functions.get(last_name(value.func)),) if f is not None)

    def _canonicalizing_method(self, node: FunctionNode, owner: str) -> None:
        """``save()``/``clean()``/``__init__``/a setter/``@validates`` that stores a field
        through a canonicalizing call makes that field canonical."""
        decorated = _validated_fields(node)
        if decorated is not None:
            if _calls_canonicalizer(node.body, self.config):
                for name in decorated:
                    self._mark(owner, name, f"{owner}.{node.name}()")
            return
        if node.name not in _SAVING_METHODS:
            return
        for attribute in self._canonicalized_attributes(node, "self"):
            self._mark(owner, attribute, f"{owner}.{node.name}()")

    def _mark(self, entity: str, column: str, why: str) -> None:
        self.facts.canonical.setdefault((entity, column), why)

    # Django Meta / SQLAlchemy constraints ---------------------------------------------------

    def _meta(self, node: ast.ClassDef, owner: str) -> None:
        for small in _small_statements(node.body):
            target, _, value = _assignment(small)
            if not isinstance(target, ast.Name) or value is None:
                continue
            name = target.id
            if name == "db_table" and _string(value):
                self.facts.table_of_class[_string(value) or ""] = owner
            elif name == schema.DJANGO_MANAGED and isinstance(value, ast.Constant) and value.value is False:
                self.facts.unmanaged.add(owner)
            elif name in schema.DJANGO_UNIQUE_TOGETHER:
                for group in _string_groups(value):
                    self._declare(CONSTRAINT, owner, group, small, "unique_together")
            elif name in schema.DJANGO_META_CONSTRAINTS:
                for item in elements(value):
                    if isinstance(item, ast.Call):
                        self._constraint_call(item, owner)
                    elif isinstance(item, ast.Tuple):
                        self._peewee_index(item, owner)

    def _peewee_index(self, item: ast.Tuple, owner: str) -> None:
        """peewee ``indexes = ((("email",), True),)``: a unique multi-column index."""
        parts = [unstarred(e) for e in item.elts]
        if len(parts) == 2 and is_true(parts[1]):
            columns = tuple(s for s in (_string(e) for e in elements(parts[0])) if s)
            self._declare(CONSTRAINT, owner, columns, item, "a unique index in Meta.indexes")

    def _constraint_call(self, call: ast.Call, entity: Optional[str]) -> None:
        """``UniqueConstraint(...)`` / ``Index(..., unique=True)`` in a model or a Table."""
        name = last_name(call.func)
        if name in schema.UNIQUE_CONSTRAINT_CALLS:
            expressions = unspread_positional_args(call) + elements(keyword_arg(call, "fields"))
            self._constraint_columns(call, entity, expressions, "UniqueConstraint")
        elif name in schema.INDEX_CALLS and _true_keyword(call, frozenset({"unique"})):
            self._constraint_columns(call, entity, unspread_positional_args(call)[1:] + elements(keyword_arg(call, "fields")),
                                     "Index(unique=True)")
        elif name in schema.CHECK_CONSTRAINT_CALLS and entity:
            self._check_constraint(call, entity)

    def _check_constraint(self, call: ast.Call, entity: str) -> None:
        """A CHECK that holds a column to its canonical form (Django ``Q(email=Lower("email"))``,
        SQLAlchemy ``"email = lower(email)"``): every stored value is canonical, so a unique key
        over the column compares canonical values."""
        condition = next((v for v in map(lambda k: keyword_arg(call, k), schema.CHECK_CONDITION_KEYWORDS)
                          if v is not None), None)
        if condition is None and unspread_positional_args(call):
            condition = unspread_positional_args(call)[0]
        text = _string(condition) if condition is not None and _is_literal_string(condition) else None
        if text:
            for column in canonical_check_columns(text):
                self._mark(entity, column, f"the CHECK constraint {short(text)}")
        elif condition is not None:
            for column, value in _q_equalities(condition):
                if _canonical_reference(value, column):
                    self._mark(entity, column, f"the CheckConstraint {short(code(condition))}")

    def _constraint_columns(self, call: ast.Call, entity: Optional[str],
                            expressions: Sequence[ast.expr], via: str) -> None:
        plain: List[Tuple[str, str]] = []
        for expr in map(_unordered, expressions):
            if isinstance(expr, ast.Call) and last_name(expr.func) in schema.CANONICALIZING_SQL_FUNCTIONS:
                for owner, column in self._column_refs(expr, entity):
                    self._mark(owner, column, f"the functional unique index {short(code(expr))}")
                continue
            plain.extend(self._column_refs(expr, entity))
        owners = {owner for owner, _ in plain}
        if len(owners) == 1:
            self._declare(CONSTRAINT, owners.pop(), tuple(c for _, c in plain), call, via)

    def _column_refs(self, expr: ast.expr, entity: Optional[str]) -> List[Tuple[str, str]]:
        """Columns an index expression names: "email", email, User.email, users.c.email,
        F("email"), Lower("email"), func.lower(User.email)."""
        if _is_literal_string(expr):
            value = _string(expr)
            return [(entity, value)] if entity and value else []
        if isinstance(expr, ast.Name):
            return [(entity, expr.id)] if entity else []
        if isinstance(expr, ast.Attribute):
            owner = expr.value
            if isinstance(owner, ast.Attribute) and owner.attr == "c":
                table = self.table_variables.get(last_name(owner.value), last_name(owner.value))
                return [(table, expr.attr)]
            if isinstance(owner, ast.Name):
                return [(owner.id, expr.attr)]
            return []
        if isinstance(expr, ast.Call):
            refs: List[Tuple[str, str]] = []
            for arg in unspread_positional_args(expr):
                refs.extend(self._column_refs(arg, entity))
            return refs
        return []

    def _declare(self, kind: str, entity: str, columns: Tuple[str, ...], node: ast.AST, via: str,
                 layer: str = ORM) -> None:
        if columns:
            self.facts.declarations.append(Declaration(kind, entity, columns, node, via, layer))

    # expressions: Table(), Index(), create_index(), SQL strings, normalizer calls ---------------

    def _expression(self, expr: ast.expr, depth: int) -> None:
        if isinstance(expr, ast.Await):
            expr = expr.value
        if _is_literal_string(expr) or isinstance(expr, ast.JoinedStr):
            self._sql(expr)
        elif isinstance(expr, (ast.List, ast.Tuple)) and depth < _MAX_EXPRESSION_DEPTH:
            for element in expr.elts:
                self._expression(unstarred(element), depth + 1)
        elif isinstance(expr, ast.Call):
            self._call(expr, depth)

    def _call(self, call: ast.Call, depth: int) -> None:
        name = last_name(call.func)
        if name in schema.TABLE_CALLS:
            self._table(call)
            return
        if name in schema.INDEX_CALLS:
            self._constraint_call(call, None)
        elif name in schema.MONGO_INDEX_METHODS and isinstance(call.func, ast.Attribute):
            self._mongo_index(call, _collection(call.func.value), call)
        elif name in schema.MONGO_INDEXES_METHODS and isinstance(call.func, ast.Attribute):
            for model in elements(unspread_positional_args(call)[0] if unspread_positional_args(call) else None):
                if isinstance(model, ast.Call) and last_name(model.func) in schema.MONGO_INDEX_MODEL:
                    self._mongo_index(model, _collection(call.func.value), model)
        else:
            self._normalizer_call(name)
        if isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Call):
            self._call(call.func.value, depth)  # the receiver of a chain: normalize_email(e).lower()
        if depth < _MAX_EXPRESSION_DEPTH:
            for value in all_argument_values(call):  # source order, keywords included
                self._expression(value, depth + 1)

    def _normalizer_call(self, name: str) -> None:
        if name == "slugify":
            self.facts.canonical_kinds.setdefault(schema.SLUG, "slugify()")
        elif is_normalizer_name(name, self.config):
            for kind in kinds_named(name):
                self.facts.canonical_kinds.setdefault(kind, f"{name}()")

    def _table(self, call: ast.Call) -> None:
        """SQLAlchemy Core ``Table("users", metadata, Column(...), UniqueConstraint(...))``."""
        positional = unspread_positional_args(call)
        table = _string(positional[0]) if positional else None
        if not table:
            return
        for item in positional[1:]:
            if not isinstance(item, ast.Call):
                continue
            if last_name(item.func) == "Column":
                column = _string(unspread_positional_args(item)[0]) if unspread_positional_args(item) else None
                if column:
                    self._field(table, column, None, item, item)
            else:
                self._constraint_call(item, table)

    def _mongo_index(self, call: ast.Call, collection: str, node: ast.AST) -> None:
        """``create_index("email", unique=True)`` / ``[("email", 1)]`` / ``IndexModel(...)``.
        Alembic's ``op.create_index(name, table, columns, unique=True)`` (a migration) is not."""
        if not collection or len(unspread_positional_args(call)) > 1 or not _true_keyword(call, frozenset({"unique"})):
            return
        keys = unspread_positional_args(call)[0] if unspread_positional_args(call) else keyword_arg(call, "keys")
        columns = _mongo_keys(keys)
        collation = keyword_arg(call, "collation")
        if collation is not None and _mongo_case_insensitive(collation):
            return
        self._declare(CONSTRAINT, collection, columns, node, "a unique MongoDB index", MONGO)

    # SQL DDL ------------------------------------------------------------------------------

    def _sql(self, node: ast.expr) -> None:
        if id(node) in self.seen_strings:
            return
        self.seen_strings.add(id(node))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and not mentions_uniqueness(node.value):
            return  # no DDL that declares anything unique (looks_like_ddl would say no)
        text = _sql_text(node)
        if not text or not looks_like_ddl(text):
            return
        for item in ddl_items(text):
            kind, table, columns, detail = item
            if kind == "column":
                column, type_kind, canonical_by = columns[0], detail[0], detail[1]
                self.facts.columns.setdefault((table, column), _Column(type_kind, canonical_by))
            elif kind == "canonical":
                for column in columns:
                    self._mark(table, column, detail[0])
            else:
                self._declare(CONSTRAINT, table, columns, node, detail[0], SQL)


def _q_equalities(condition: ast.expr) -> Iterator[Tuple[str, ast.expr]]:
    """``field -> value`` of the equalities a Django condition requires all at once: the keywords
    of ``Q(...)`` (no lookup, or ``__exact``) and both sides of ``Q(...) & Q(...)``; an OR or a
    negation requires nothing of every row."""
    if isinstance(condition, ast.BinOp) and isinstance(condition.op, ast.BitAnd):
        yield from _q_equalities(condition.left)
        yield from _q_equalities(condition.right)
    elif isinstance(condition, ast.Call) and last_name(condition.func) in schema.DJANGO_CONDITION_CALLS:
        if keyword_arg(condition, "_connector") is not None or keyword_arg(condition, "_negated") is not None:
            return
        for keyword in condition.keywords:
            if keyword.arg and "__" not in keyword.arg.replace("__exact", ""):
                yield keyword.arg.replace("__exact", ""), keyword.value


def _canonical_reference(value: ast.expr, column: str) -> bool:
    """``Lower("email")``, ``Lower(F("email"))``, ``Lower(Trim("email"))``: canonicalizing
    functions around the column itself."""
    if not (isinstance(value, ast.Call) and last_name(value.func) in schema.CANONICALIZING_SQL_FUNCTIONS):
        return False
    arguments = unspread_positional_args(value)
    if len(arguments) != 1:
        return False
    inner = arguments[0]
    if isinstance(inner, ast.Call) and last_name(inner.func) in schema.DJANGO_FIELD_REFERENCES:
        inner = unspread_positional_args(inner)[0] if len(unspread_positional_args(inner)) == 1 else inner
    if _is_literal_string(inner):
        return _string(inner) == column
    return _canonical_reference(inner, column)


def kinds_named(name: str) -> Set[str]:
    """Key kinds a (qualified) function name names: ``accounts.normalize_email`` -> {email}."""
    words = [t for part in name.split(".") for t in schema.name_tokens(part)]
    return {schema.NORMALIZER_KIND_WORDS[w] for w in words if w in schema.NORMALIZER_KIND_WORDS}


# -- small syntax helpers -------------------------------------------------------------------------

# Statements that hold statement lists (``_blocks``); every other statement is a simple one.
_COMPOUND_TYPES: Tuple[type, ...] = tuple(t for t in (
    ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try,
    getattr(ast, "TryStar", None), getattr(ast, "Match", None)) if t is not None)


def _blocks(statement: ast.stmt) -> Iterator[Sequence[ast.stmt]]:
    """The statement lists nested in a compound statement (if/for/while/with/try/match); an
    ``elif`` is the ``If`` alone in ``orelse``."""
    body = getattr(statement, "body", None)
    if isinstance(body, list):
        yield body
    for handler in getattr(statement, "handlers", ()) or ():
        yield handler.body
    for case in getattr(statement, "cases", ()) or ():
        yield case.body
    for attribute in ("orelse", "finalbody"):
        extra = getattr(statement, attribute, None)
        if extra:
            yield extra


def _small_statements(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    """The simple statements of a body, those in nested if/for/while/with/try/match blocks
    included, nested function and class definitions left out."""
    for statement in body:
        if isinstance(statement, _COMPOUND_TYPES):
            for block in _blocks(statement):
                yield from _small_statements(block)
        elif not isinstance(statement, (*FUNCTION_TYPES, ast.ClassDef)):
            yield statement


Expression = Optional[ast.expr]


def _assignment(small: ast.AST) -> Tuple[Expression, Expression, Expression]:
    """(target, annotation, value) of ``x = v`` / ``x: T = v``; Nones otherwise."""
    if isinstance(small, ast.Assign) and len(small.targets) == 1:
        return small.targets[0], None, small.value
    if isinstance(small, ast.AnnAssign):
        return small.target, small.annotation, small.value
    return None, None, None


def _is_literal_string(node: Optional[ast.AST]) -> bool:
    """A (possibly implicitly concatenated) str or bytes literal, not an f-string."""
    return isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes))



def _unordered(expr: ast.expr) -> ast.expr:
    """``Lower("email").desc()`` -> ``Lower("email")``."""
    while (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute)
           and expr.func.attr in ("asc", "desc")):
        expr = expr.func.value
    return expr


def _true_keyword(call: ast.Call, names: FrozenSet[str]) -> str:
    """The first of ``names`` passed as ``=True``, or ""."""
    for keyword in call.keywords:
        if keyword.arg is not None and keyword.arg in names and is_true(keyword.value):
            return keyword.arg
    return ""


def _sql_text(node: ast.expr) -> Optional[str]:
    """A string's text; an f-string's placeholders become identifiers (``{TABLE}`` -> TABLE).
    An f-string implicitly concatenated with other literals is not read (implicitly concatenated
    literals are not one statement template)."""
    if isinstance(node, ast.JoinedStr):
        if concatenated_literals(node):
            return None
        parts = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                parts.append(str(part.value))
            elif isinstance(part, ast.FormattedValue):
                # a quoted identifier: {TABLE} must not read as the keyword TABLE
                parts.append(f'"{last_name(part.value) or "x"}"')
        return "".join(parts)
    return _string(node)


def _string_groups(node: ast.expr) -> List[Tuple[str, ...]]:
    """``unique_together``: ("a", "b") or [("a", "b"), ...]."""
    items = elements(node)
    if items and all(_string(i) is not None for i in items):
        return [tuple(_string(i) or "" for i in items)]
    return [tuple(s for s in (_string(e) for e in elements(i)) if s) for i in items]


def _collection(receiver: ast.expr) -> str:
    """``db.users`` -> users; ``db["users"]`` -> users; ``self.users`` -> users."""
    if isinstance(receiver, ast.Attribute):
        return receiver.attr
    if isinstance(receiver, ast.Subscript):
        index = receiver.slice
        if not isinstance(index, (ast.Tuple, ast.Slice)):
            return _string(index) or ""
        return ""
    if isinstance(receiver, ast.Name):
        return receiver.id
    return ""


def _mongo_keys(keys: Optional[ast.expr]) -> Tuple[str, ...]:
    name = _string(keys)
    if name:
        return (name,)
    out = []
    for item in elements(keys):
        parts = elements(item)
        key = _string(parts[0]) if parts else _string(item)
        if key:
            out.append(key)
    return tuple(out)


_MONGO_STRENGTH = lazy(r"strength\W*[:=]\s*(?:CollationStrength\.)?(\w+)")


def _mongo_case_insensitive(collation: ast.expr) -> bool:
    """``Collation("en", strength=2)`` / ``{"locale": "en", "strength": 1}`` ignore case."""
    match = _MONGO_STRENGTH.search(code(collation))
    return match is not None and match.group(1) in schema.MONGO_CASE_INSENSITIVE_STRENGTHS


def _case_insensitive_collation(call: ast.Call) -> bool:
    for key in ("db_collation", "collation"):
        value = keyword_arg(call, key)
        if value is not None and schema.is_case_insensitive_collation(code(value)):
            return True
    return False


_CONTAINERS = frozenset({"List", "list", "Dict", "dict", "Set", "set", "Tuple", "tuple", "Sequence"})


def _annotation_is_text(annotation: ast.expr) -> bool:
    """``Mapped[str]``, ``Mapped[Optional[str]]``, ``str``, ``str | None``; not ``List[str]``."""
    names = set(re.findall(r"\w+", code(annotation)))
    return bool(names & schema.TEXT_ANNOTATIONS) and not names & _CONTAINERS


def _impl_is_text(node: ast.ClassDef) -> bool:
    """A TypeDecorator with ``impl = String`` (or ``String(255)``)."""
    for small in _small_statements(node.body):
        target, _, value = _assignment(small)
        if isinstance(target, ast.Name) and target.id == "impl" and value is not None:
            type_expr = value.func if isinstance(value, ast.Call) else value
            return last_name(type_expr) in schema.TEXT_COLUMN_TYPES
    return False


def _validated_fields(node: FunctionNode) -> Optional[List[str]]:
    """Fields a validator/setter method converts: ``@validates("email")``,
    ``@field_validator("email")``, ``@email.setter`` (-> email and _email); None otherwise."""
    for expr in node.decorator_list:
        if isinstance(expr, ast.Attribute) and expr.attr == "setter":
            name = last_name(expr.value)
            return [name, f"_{name}"]
        if isinstance(expr, ast.Call) and last_name(expr.func) in schema.VALIDATOR_DECORATORS:
            return [s for s in (_string(a) for a in unspread_positional_args(expr)) if s]
    return None


def _receiver_sender(node: FunctionNode) -> str:
    for expr in node.decorator_list:
        if not (isinstance(expr, ast.Call) and last_name(expr.func) == "receiver"):
            continue
        arguments = all_argument_values(expr)  # the first in source order, keyword or not
        if arguments and last_name(arguments[0]) == "pre_save":
            sender = keyword_arg(expr, "sender")
            return last_name(sender) if sender is not None else ""
    return ""


def _has_decorator(node: FunctionNode, names: FrozenSet[str]) -> bool:
    """``@declared_attr``, ``@declarative.declared_attr``, ``@declared_attr.cascading``."""
    for expr in node.decorator_list:
        expr = expr.func if isinstance(expr, ast.Call) else expr
        if last_name(expr) in names or (isinstance(expr, ast.Attribute) and last_name(expr.value) in names):
            return True
    return False


def _value_roots(value: ast.expr) -> Set[str]:
    """Names and ``self.x`` attributes a value is computed from. Every identifier counts, also
    those ``ast`` keeps as plain strings: an attribute's name
    (``user.email`` -> user, email), a lambda's parameters, ``True``/``False``/``None``."""
    roots: Set[str] = set()
    stack: List[ast.AST] = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, ast.Attribute) and isinstance(current.value, ast.Name) \
                and current.value.id == "self":
            roots.add(f"self.{current.attr}")
            continue
        if isinstance(current, ast.Name):
            roots.add(current.id)
        elif isinstance(current, ast.Attribute):
            roots.add(current.attr)
        elif isinstance(current, ast.arg):
            roots.add(current.arg)
        elif isinstance(current, ast.Constant) and (current.value is None or isinstance(current.value, bool)):
            roots.add(str(current.value))
        elif isinstance(current, ast.Call):
            stack.extend(all_argument_values(current))  # not the callee's name
            if isinstance(current.func, ast.Attribute):
                stack.append(current.func.value)
            continue
        stack.extend(child_nodes(current))
    return roots


def _canonicalizes_whole_value(method: FunctionNode, config: Config) -> bool:
    """Whether a storing method of a field/type class canonicalizes the whole value, not only
    a part cut out of it: ``local, domain = value.rsplit("@", 1); domain.lower()`` leaves
    "Bob@x.org" and "bob@x.org" two keys; ``value.lower().rsplit("@", 1)`` does not."""
    parts: Set[str] = set()
    whole = False
    for small in _small_statements(method.body):
        target, _, value = _assignment(small)
        if value is not None and target is not None and (_cuts_part(value) or _value_roots(value) & parts):
            parts.update(n.id for n in _target_names(target))
        for call in _canonicalizing_calls(small, config):
            if not _call_subject_roots(call) & parts:
                whole = True
    return whole


def _cuts_part(value: ast.expr) -> bool:
    """``value.rsplit("@", 1)``, ``value.partition("@")``, ``value[i:]``."""
    stack: List[ast.AST] = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, ast.Call) and last_name(current.func) in schema.PART_CUTTING_METHODS:
            return True
        if isinstance(current, ast.Subscript):
            return True
        stack.extend(child_nodes(current))
    return False


def _target_names(target: ast.expr) -> Iterator[ast.Name]:
    if isinstance(target, ast.Name):
        yield target
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _target_names(unstarred(element))


_NESTED_SCOPES = (*FUNCTION_TYPES, ast.ClassDef, ast.Lambda)


def _canonicalizing_calls(node: Union[ast.AST, Sequence[ast.stmt]], config: Config) -> Iterator[ast.Call]:
    """Calls to lower()/slugify()/a normalizer in a small subtree (a node, or a body: a list
    of statements), nested definitions skipped."""
    stack: List[ast.AST] = list(reversed(node)) if isinstance(node, list) else [node]  # type: ignore[arg-type]
    while stack:
        current = stack.pop()
        if isinstance(current, ast.Call):
            name = last_name(current.func)
            if (name in schema.CANONICALIZING_CALLS or name.startswith(schema.SLUG_MAKER_PREFIXES)
                    or is_normalizer_name(name, config)):
                yield current
        if isinstance(current, _NESTED_SCOPES) and current is not node:
            continue
        stack.extend(child_nodes(current))


def _call_subject_roots(call: ast.Call) -> Set[str]:
    """What a canonicalizing call applies to: the receiver of ``x.lower()``, the arguments of
    ``slugify(x)`` / ``idna.encode(x)``."""
    roots = _value_roots(call.func.value) if isinstance(call.func, ast.Attribute) else set()
    for value in all_argument_values(call):
        roots |= _value_roots(value)
    return roots


def _calls_canonicalizer(node: Union[ast.AST, Sequence[ast.stmt]], config: Config) -> bool:
    """Whether the subtree calls lower()/slugify()/a normalizer; small subtrees only (a
    method body, an assigned value)."""
    return next(_canonicalizing_calls(node, config), None) is not None
