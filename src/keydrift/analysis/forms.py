"""Django ``ModelForm``s as writes: a form whose ``Meta.model`` is ``M`` stores its fields on
``M`` when saved, each as ``cleaned_data[field]`` after the form's ``clean_<field>()``.

The write is recorded once, at the form class (where the stored form is decided), so a lookup
of the same field anywhere in the project meets it in the key registry. Which fields: those
``Meta.fields`` lists, else those the form declares or cleans (``Meta.exclude`` left out).
"""

from __future__ import annotations

import ast
from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple

from keydrift.analysis.accesses import Context, Key
from keydrift.analysis.facts import STORE, WRITE, Value
from keydrift.analysis.receivers import block
from keydrift.analysis.tree import FUNCTION_TYPES, FunctionNode
from keydrift.analysis.values import last_name
from keydrift.frameworks import django_forms as forms


def _assignments(body: Sequence[ast.stmt]) -> Iterator[Tuple[str, ast.expr]]:
    for statement in body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Name):
            yield statement.targets[0].id, statement.value


def _strings(node: ast.expr, ctx: Context) -> Optional[List[str]]:
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        values = [ctx.string_value(e.value if isinstance(e, ast.Starred) else e) for e in node.elts]
        return [v for v in values if v is not None]
    return None


def form_classes(body: Sequence[ast.stmt]) -> Iterator[ast.ClassDef]:
    """Model form classes: a base named like a model form, or a model form of the same module."""
    known: Set[str] = set()
    for node in body:
        if isinstance(node, ast.ClassDef):
            bases = {last_name(b.value if isinstance(b, ast.Starred) else b) for b in node.bases}
            if bases & forms.MODEL_FORM_BASES or bases & known:
                known.add(node.name)
                yield node
        elif isinstance(node, (ast.If, ast.Try)):
            yield from form_classes(node.body)


class FormFields:
    """What one model form stores: its model, its fields, and where each field is cleaned."""

    def __init__(self, form: ast.ClassDef, ctx: Context) -> None:
        self.form = form
        self.model = ""
        self.fields: List[str] = []
        self.cleaners: Dict[str, FunctionNode] = {}
        excluded: Set[str] = set()
        listed: Optional[List[str]] = None
        declared: List[str] = []
        body = block(form.body, form)
        for statement in body:
            if isinstance(statement, ast.ClassDef) and statement.name == "Meta":
                for name, value in _assignments(block(statement.body, statement)):
                    if name == "model":
                        self.model = last_name(value)
                    elif name == "fields":
                        listed = _strings(value, ctx)
                    elif name == "exclude":
                        excluded = set(_strings(value, ctx) or ())
            elif isinstance(statement, FUNCTION_TYPES) and statement.name.startswith(forms.CLEAN_PREFIX):
                field_name = statement.name[len(forms.CLEAN_PREFIX):]
                if field_name:
                    self.cleaners[field_name] = statement
        for name, value in _assignments(body):
            if isinstance(value, ast.Call) and last_name(value.func).endswith("Field"):
                declared.append(name)
        overrides_save = any(isinstance(s, FUNCTION_TYPES) and s.name == "save" for s in body)
        if listed is None and overrides_save:
            listed = []  # a save() override decides what is stored (walked as any method)
        candidates = listed if listed is not None else declared + [f for f in self.cleaners if f not in declared]
        self.fields = [f for f in candidates if f not in excluded]


def cleaned_value(field_name: str, cleaner: Optional[FunctionNode], returns: Sequence[Value]) -> Value:
    """``cleaned_data[field]`` with the steps its ``clean_<field>()`` applies (what it returns,
    when that comes from the cleaned data)."""
    origin = f"cleaned_data[{field_name!r}]"
    if cleaner is not None:
        for value in returns:
            if any(forms.CLEANED_DATA in o for o in value.origins):
                return Value(frozenset({origin}), value.steps, value.text)
    return Value(frozenset({origin}), (), origin)


def form_writes(module: ast.Module, analysis, walker) -> None:
    """Record each model form's stored fields as writes of the module-level walker."""
    for form in form_classes(module.body):
        fields = FormFields(form, walker)
        if not fields.model:
            continue
        entity = walker.model_alias(fields.model)
        for field_name in fields.fields:
            cleaner = fields.cleaners.get(field_name)
            returns: Sequence[Value] = ()
            if cleaner is not None:
                unit = f"{form.name}.{cleaner.name}"
                returns = analysis.walker(unit).returns if unit in analysis.units else ()
            node = cleaner if cleaner is not None else form
            walker.statement_of.setdefault(id(node), node)
            walker.add(WRITE, Key(entity, field_name, cleaned_value(field_name, cleaner, returns)), node, STORE,
                       next(walker.call_ids), f"{form.name}.save()", saves=True)
