"""Which table a model class is stored in, and which column a field is, read statically.

One table per layer says how a layer names tables; the reader only looks at class
statements and their ``Meta`` (``ast``, no import of the analyzed code):

- Django: ``Meta.db_table``, else ``<app_label>_<model>`` (the app label is ``Meta.app_label``
  or the package holding the models module); ``db_column=``; a ``ForeignKey`` field ``x`` is
  the column ``x_id``.
- SQLAlchemy: ``__tablename__``, ``__table__ = Table("name", ...)``; ``Column("name", ...)`` /
  ``mapped_column("name", ...)``.
- Flask-SQLAlchemy: ``__tablename__``, else the class name in snake_case; SQLModel: the class
  name lowercased.
- peewee: ``Meta.table_name`` (or the older ``db_table``), else the class name lowercased
  (``legacy_table_names = False``: snake_case); ``column_name=``.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Dict, Iterator, Optional, Set

DJANGO = "django"
SQLALCHEMY = "sqlalchemy"
FLASK_SQLALCHEMY = "flask_sqlalchemy"  # SQLAlchemy, with table names made from class names
SQLMODEL = "sqlmodel"
PEEWEE = "peewee"

# the import that says which layer a module's models belong to
# (the more specific layers first: a Flask-SQLAlchemy module imports sqlalchemy too)
LAYER_IMPORTS: Dict[str, str] = {"django": DJANGO, "flask_sqlalchemy": FLASK_SQLALCHEMY, "sqlmodel": SQLMODEL,
                                 "sqlalchemy": SQLALCHEMY, "peewee": PEEWEE, "playhouse": PEEWEE}
_LAYER_ORDER = (DJANGO, FLASK_SQLALCHEMY, SQLMODEL, PEEWEE, SQLALCHEMY)
# Meta attributes naming the table, per layer
TABLE_META: Dict[str, tuple] = {DJANGO: ("db_table",), PEEWEE: ("table_name", "db_table")}
# keyword arguments naming a field's column, per layer
COLUMN_KEYWORDS: Dict[str, tuple] = {DJANGO: ("db_column",), PEEWEE: ("column_name",), SQLMODEL: ("sa_column_kwargs",)}
# calls whose first string argument is the column name (SQLAlchemy)
NAMED_COLUMN_CALLS = frozenset({"Column", "mapped_column"})
# relation fields stored as <name>_id
DJANGO_RELATIONS = frozenset({"ForeignKey", "OneToOneField"})
# models that ship with a framework, by the name the code uses for them
FRAMEWORK_TABLES: Dict[str, Dict[str, str]] = {
    DJANGO: {"User": "auth_user", "Group": "auth_group", "Permission": "auth_permission",
             "Site": "django_site", "Session": "django_session", "ContentType": "django_content_type",
             "EmailAddress": "account_emailaddress", "Token": "authtoken_token"},
}
_SNAKE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


@dataclass
class ModelTable:
    """A model class of the project and the table (and columns) it is stored in."""

    name: str  # class name
    table: str
    module: str
    columns: Dict[str, str] = field(default_factory=dict)  # attribute -> column (when they differ)

    def column(self, attribute: str) -> str:
        return self.columns.get(attribute, attribute)


def framework_models(layers: Set[str]) -> Iterator[ModelTable]:
    """The framework's own models (``User`` is ``auth_user`` in a Django project)."""
    for layer in sorted(layers):
        for name, table in FRAMEWORK_TABLES.get(layer, {}).items():
            yield ModelTable(name, table, layer)


def module_layer(tree: ast.Module) -> Optional[str]:
    """The ORM a module's imports name (the most specific one), or None."""
    layers = set()
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module]
        layers.update(LAYER_IMPORTS[n.split(".")[0]] for n in names if n.split(".")[0] in LAYER_IMPORTS)
    return next((layer for layer in _LAYER_ORDER if layer in layers), None)


def model_tables(tree: ast.Module, module: str, default_layer: Optional[str] = None) -> Iterator[ModelTable]:
    """The model classes of one module with their tables. ``default_layer`` is the project's ORM,
    for a module that imports none (its models derive from a base class defined elsewhere)."""
    layer = module_layer(tree) or default_layer
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.bases:
            found = _model_table(node, module, layer)
            if found is not None:
                yield found


def _model_table(node: ast.ClassDef, module: str, layer: Optional[str]) -> Optional[ModelTable]:
    attributes = _assignments(node.body)
    meta = next((b for b in node.body if isinstance(b, ast.ClassDef) and b.name == "Meta"), None)
    meta_values = _assignments(meta.body) if meta is not None else {}
    if _is_abstract(meta_values):
        return None
    table = _string(attributes.get("__tablename__")) or _table_call_name(attributes.get("__table__"))
    kind = SQLALCHEMY if table else layer
    if not table and kind in TABLE_META:
        table = next((_string(meta_values.get(k)) for k in TABLE_META[kind] if _string(meta_values.get(k))), None)
    if not table:
        table = _default_table(node.name, module, kind, meta_values)
    if not table:
        return None
    model = ModelTable(node.name, table, module)
    for name, value in attributes.items():
        column = _column_of(name, value, kind)
        if column and column != name:
            model.columns[name] = column
    return model


def _default_table(name: str, module: str, layer: Optional[str], meta: Dict[str, ast.expr]) -> Optional[str]:
    if layer == DJANGO:
        label = _string(meta.get("app_label")) or _app_label(module)
        return f"{label}_{name.lower()}" if label else None
    if layer == FLASK_SQLALCHEMY:
        return _SNAKE.sub("_", name).lower()
    if layer == SQLMODEL:
        return name.lower()
    if layer == PEEWEE:
        legacy = meta.get("legacy_table_names")
        if isinstance(legacy, ast.Constant) and legacy.value is False:
            return _SNAKE.sub("_", name).lower()
        return re.sub(r"[^\w]+", "_", name.lower())
    return None


def _app_label(module: str) -> str:
    """``shop.models`` / ``shop.models.pages`` -> ``shop``: the package holding the models."""
    parts = module.split(".")
    if "models" in parts:
        parts = parts[: parts.index("models")]
    else:
        parts = parts[:-1]
    return parts[-1] if parts else ""


def _column_of(name: str, value: ast.expr, layer: Optional[str]) -> Optional[str]:
    if not isinstance(value, ast.Call):
        return None
    callee = _last_name(value.func)
    for keyword in value.keywords:
        if keyword.arg in COLUMN_KEYWORDS.get(layer or "", ()) and _string(keyword.value):
            return _string(keyword.value)
    if callee in NAMED_COLUMN_CALLS and value.args and _string(value.args[0]):
        return _string(value.args[0])
    if layer == DJANGO and callee in DJANGO_RELATIONS:
        return f"{name}_id"
    return name


def _is_abstract(meta: Dict[str, ast.expr]) -> bool:
    value = meta.get("abstract")
    return isinstance(value, ast.Constant) and value.value is True


def _assignments(body: list) -> Dict[str, ast.expr]:
    out: Dict[str, ast.expr] = {}
    for statement in body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target, value = statement.targets[0], statement.value
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            target, value = statement.target, statement.value
        else:
            continue
        if isinstance(target, ast.Name):
            out[target.id] = value
    return out


def _table_call_name(value: Optional[ast.expr]) -> Optional[str]:
    if isinstance(value, ast.Call) and _last_name(value.func) == "Table" and value.args:
        return _string(value.args[0])
    return None


def _string(node: Optional[ast.expr]) -> Optional[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value:
        return node.value
    return None


def _last_name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""
