"""Django ``ModelForm``s as writes: a form whose ``Meta.model`` is ``M`` stores its fields on
``M`` when saved, each as ``cleaned_data[field]`` after the form's ``clean_<field>()``.

The write is recorded once, at the form class (where the stored form is decided), so a lookup
of the same field anywhere in the project meets it in the key registry. Which fields: those
``Meta.fields`` lists, else those the form declares or cleans (``Meta.exclude`` left out).
"""

from __future__ import annotations

from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple

import libcst as cst

from keydrift.analysis.accesses import Context, Key
from keydrift.analysis.facts import STORE, WRITE, Value
from keydrift.analysis.values import last_name
from keydrift.frameworks import django_forms as forms


def _block(body: cst.BaseSuite) -> Sequence[cst.CSTNode]:
    return body.body if isinstance(body, cst.IndentedBlock) else ()


def _assignments(body: Sequence[cst.CSTNode]) -> Iterator[Tuple[str, cst.BaseExpression]]:
    for statement in body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1 \
                        and isinstance(small.targets[0].target, cst.Name):
                    yield small.targets[0].target.value, small.value


def _strings(node: cst.BaseExpression, ctx: Context) -> Optional[List[str]]:
    if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
        values = [ctx.string_value(e.value) for e in node.elements]
        return [v for v in values if v is not None]
    return None


def form_classes(body: Sequence[cst.CSTNode]) -> Iterator[cst.ClassDef]:
    """Model form classes: a base named like a model form, or a model form of the same module."""
    known: Set[str] = set()
    for node in body:
        if isinstance(node, cst.ClassDef):
            bases = {last_name(b.value) for b in node.bases}
            if bases & forms.MODEL_FORM_BASES or bases & known:
                known.add(node.name.value)
                yield node
        elif isinstance(node, (cst.If, cst.Try)):
            yield from form_classes(_block(node.body))


class FormFields:
    """What one model form stores: its model, its fields, and where each field is cleaned."""

    def __init__(self, form: cst.ClassDef, ctx: Context) -> None:
        self.form = form
        self.model = ""
        self.fields: List[str] = []
        self.cleaners: Dict[str, cst.FunctionDef] = {}
        excluded: Set[str] = set()
        listed: Optional[List[str]] = None
        declared: List[str] = []
        for statement in _block(form.body):
            if isinstance(statement, cst.ClassDef) and statement.name.value == "Meta":
                for name, value in _assignments(_block(statement.body)):
                    if name == "model":
                        self.model = last_name(value)
                    elif name == "fields":
                        listed = _strings(value, ctx)
                    elif name == "exclude":
                        excluded = set(_strings(value, ctx) or ())
            elif isinstance(statement, cst.FunctionDef) and statement.name.value.startswith(forms.CLEAN_PREFIX):
                field_name = statement.name.value[len(forms.CLEAN_PREFIX):]
                if field_name:
                    self.cleaners[field_name] = statement
        for name, value in _assignments(_block(form.body)):
            if isinstance(value, cst.Call) and last_name(value.func).endswith("Field"):
                declared.append(name)
        overrides_save = any(isinstance(s, cst.FunctionDef) and s.name.value == "save" for s in _block(form.body))
        if listed is None and overrides_save:
            listed = []  # a save() override decides what is stored (walked as any method)
        candidates = listed if listed is not None else declared + [f for f in self.cleaners if f not in declared]
        self.fields = [f for f in candidates if f not in excluded]


def cleaned_value(field_name: str, cleaner: Optional[cst.FunctionDef], returns: Sequence[Value]) -> Value:
    """``cleaned_data[field]`` with the steps its ``clean_<field>()`` applies (what it returns,
    when that comes from the cleaned data)."""
    origin = f"cleaned_data[{field_name!r}]"
    if cleaner is not None:
        for value in returns:
            if any(forms.CLEANED_DATA in o for o in value.origins):
                return Value(frozenset({origin}), value.steps, value.text)
    return Value(frozenset({origin}), (), origin)


def form_writes(module: cst.Module, analysis, walker) -> None:
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
                unit = f"{form.name.value}.{cleaner.name.value}"
                returns = analysis.walker(unit).returns if unit in analysis.units else ()
            node = cleaner if cleaner is not None else form
            walker.statement_of.setdefault(id(node), node)
            walker.add(WRITE, Key(entity, field_name, cleaned_value(field_name, cleaner, returns)), node, STORE,
                       next(walker.call_ids), f"{form.name.value}.save()", saves=True)
