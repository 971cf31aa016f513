"""Model forms as writes: a Django ``ModelForm`` or a Django REST framework ``ModelSerializer``
whose ``Meta.model`` is ``M`` stores its fields on ``M`` when saved, each as its cleaned value:
``cleaned_data[field]`` after the form's ``clean_<field>()``, ``validated_data[field]`` after
the serializer's ``validate_<field>(value)``, then through what the method that cleans the
data as a whole (``clean()``, ``validate(self, attrs)``) assigns to the field.

The write is recorded once, at the form class (where the stored form is decided), so a lookup
of the same field anywhere in the project meets it in the key registry. Which fields: those
``Meta.fields`` lists, else those the form declares or cleans (``Meta.exclude`` and a
serializer's ``Meta.read_only_fields`` left out); of a serializer, only those it validates
(``validate_<field>``, or a rewrite in ``validate``): the others may as well be what an API
shows as what it takes in. A form that overrides how it saves (``save``; a serializer's
``create``/``update``) and lists no fields is left to that method, walked as any.
"""

from __future__ import annotations

import ast
from typing import Any, Dict, FrozenSet, Iterator, List, Optional, Sequence, Tuple

from keydrift.analysis.accesses import Context, Key
from keydrift.analysis.facts import STORE, WRITE, Step, Value
from keydrift.analysis.receivers import block
from keydrift.analysis.tree import FUNCTION_TYPES, FunctionNode, name_assignments
from keydrift.analysis.values import dotted_name, last_name
from keydrift.frameworks import django_forms, drf_serializers
from keydrift.records import record


@record
class FormKind:
    """What a kind of model form is told by: its base classes, the prefix of its per-field
    cleaning methods, the name of the data it saves, whether a cleaning method gets the value
    as its argument (else it reads the data), the methods that decide what is saved when
    overridden, the ``Meta`` option naming fields it never saves ("" for none), and whether
    only the fields it cleans are known to be saved: a serializer is as often the shape of an
    API's output as of its input, and a field it validates is one it takes in."""

    bases: FrozenSet[str]
    cleaner_prefix: str
    data: str
    value_is_argument: bool
    saving_methods: FrozenSet[str]
    read_only: str = ""
    only_cleaned: bool = False
    # the method that cleans the data as a whole, after the fields (``clean``, ``validate``)
    whole_cleaner: str = ""
    # a field class's methods that convert the value it is given (``to_python``), outermost first
    field_converters: Tuple[str, ...] = ()


# Every kind of model form, one per framework table.
FORM_KINDS: Tuple[FormKind, ...] = (
    FormKind(django_forms.MODEL_FORM_BASES, django_forms.CLEAN_PREFIX, django_forms.CLEANED_DATA, False,
             django_forms.SAVING_METHODS, whole_cleaner=django_forms.CLEAN_METHOD,
             field_converters=django_forms.FIELD_CONVERTERS),
    FormKind(drf_serializers.MODEL_SERIALIZER_BASES, drf_serializers.VALIDATE_PREFIX, drf_serializers.VALIDATED_DATA,
             True, drf_serializers.SAVING_METHODS, drf_serializers.READ_ONLY_FIELDS, only_cleaned=True,
             whole_cleaner=drf_serializers.VALIDATE_METHOD, field_converters=drf_serializers.FIELD_CONVERTERS),
)


def _strings(node: ast.expr, ctx: Context) -> Optional[List[str]]:
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        values = [ctx.string_value(e.value if isinstance(e, ast.Starred) else e) for e in node.elts]
        return [v for v in values if v is not None]
    return None


def form_classes(body: Sequence[ast.stmt], known: Optional[Dict[str, FormKind]] = None
                 ) -> Iterator[Tuple[ast.ClassDef, FormKind]]:
    """Model form classes and their kind: a base named like a model form or serializer, or a
    model form of the same module (``known``: those met so far)."""
    known = {} if known is None else known
    for node in body:
        if isinstance(node, ast.ClassDef):
            kind = _kind(node, known)
            if kind is not None:
                known[node.name] = kind
                yield node, kind
        elif isinstance(node, (ast.If, ast.Try)):
            yield from form_classes(node.body, known)


def _kind(node: ast.ClassDef, known: Dict[str, FormKind]) -> Optional[FormKind]:
    bases = [last_name(b.value if isinstance(b, ast.Starred) else b) for b in node.bases]
    for base in bases:
        if base in known:
            return known[base]
        for kind in FORM_KINDS:
            if base in kind.bases:
                return kind
    return None


class FormFields:
    """What one model form stores: its model, its fields, and where each field is cleaned."""

    def __init__(self, form: ast.ClassDef, kind: FormKind, ctx: Context, analysis: Any = None) -> None:
        self.form = form
        self.kind = kind
        self.model = ""
        self.fields: List[str] = []
        self.cleaners: Dict[str, FunctionNode] = {}
        # the steps by which a declared field's class of the project converts its value
        self.converters: Dict[str, Tuple[Step, ...]] = {}
        self.whole: Optional[FunctionNode] = None  # the method that cleans the data as a whole
        self.rewrites: Dict[str, ast.expr] = {}  # what it assigns to a field of the data
        excluded: List[str] = []
        listed: Optional[List[str]] = None
        declared: List[str] = []
        body = block(form.body, form)
        for statement in body:
            if isinstance(statement, ast.ClassDef) and statement.name == "Meta":
                for name, value in name_assignments(block(statement.body, statement)):
                    if name == "model":
                        self.model = last_name(value)
                    elif name == "fields":
                        listed = _strings(value, ctx)
                    elif name == "exclude" or kind.read_only and name == kind.read_only:
                        excluded.extend(_strings(value, ctx) or ())
            elif isinstance(statement, FUNCTION_TYPES) and kind.whole_cleaner and statement.name == kind.whole_cleaner:
                self.whole = statement
                self.rewrites = _rewrites(statement, kind)
            elif isinstance(statement, FUNCTION_TYPES) and statement.name.startswith(kind.cleaner_prefix):
                field_name = statement.name[len(kind.cleaner_prefix):]
                if field_name:
                    self.cleaners[field_name] = statement
        for name, value in name_assignments(body):
            if isinstance(value, ast.Call) and last_name(value.func).endswith("Field"):
                declared.append(name)
                steps = _conversion(last_name(value.func), kind, analysis)
                if steps is not None:
                    self.converters[name] = steps
        overrides_save = any(isinstance(s, FUNCTION_TYPES) and s.name in kind.saving_methods for s in body)
        if listed is None and overrides_save:
            listed = []  # a save() override decides what is stored (walked as any method)
        candidates = listed if listed is not None else declared + [f for f in self.cleaners if f not in declared]
        candidates += [f for f in self.rewrites if listed is None and f not in candidates]
        cleaned = set(self.cleaners) | set(self.rewrites) | set(self.converters)
        self.fields = [f for f in candidates if f not in excluded and (f in cleaned or not kind.only_cleaned)]


def _conversion(class_name: str, kind: FormKind, analysis: Any) -> Optional[Tuple[Step, ...]]:
    """The steps by which a field class of the project (of the module, or imported) converts
    the value it is given (``to_internal_value``, ``to_python``: the first of the kind's it
    defines or inherits, read from its summary); None for a class the project does not define."""
    if analysis is None or not class_name:
        return None
    for method in kind.field_converters:
        found = analysis.method_of_class(class_name, method)
        returns = found.summary.returns if found is not None else None
        if returns is not None and returns.params == (0,) and not returns.is_result:
            return returns.steps
    return None


def _rewrites(method: FunctionNode, kind: FormKind) -> Dict[str, ast.expr]:
    """What the whole-data cleaning method assigns to a field of the data (``attrs["email"] =
    ...``, ``self.cleaned_data["email"] = ...``), by field: the last assignment."""
    names = set(_data_names(method, kind))
    found: Dict[str, ast.expr] = {}
    for node in ast.walk(method):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript):
            target = node.targets[0]
            field = target.slice
            if dotted_name(target.value) in names and isinstance(field, ast.Constant) and isinstance(field.value, str):
                found[field.value] = node.value
    return found


def _data_names(method: FunctionNode, kind: FormKind) -> List[str]:
    """How the whole-data cleaning method names the data: its argument (``validate(self,
    attrs)``), else the data's own name, bare or on ``self``."""
    if kind.value_is_argument:
        argument = _value_argument(method)
        return [argument] if argument else []
    return [kind.data, f"self.{kind.data}"]


def cleaned_value(field_name: str, cleaner: Optional[FunctionNode], returns: Sequence[Value],
                  kind: FormKind = FORM_KINDS[0]) -> Value:
    """``cleaned_data[field]`` (``validated_data[field]``) with the steps its cleaning method
    applies: what it returns, when that comes from the data (from its argument, for a kind
    whose cleaning method gets the value)."""
    origin = f"{kind.data}[{field_name!r}]"
    given = _value_argument(cleaner) if kind.value_is_argument else kind.data
    if cleaner is not None and given:
        for value in returns:
            if any(_comes_from(o, given, kind.value_is_argument) for o in value.origins):
                return Value(frozenset({origin}), value.steps, value.text)
    return Value(frozenset({origin}), (), origin)


def rewritten_value(stored: Value, field_name: str, rewrite: Value, names: Sequence[str]) -> Optional[Value]:
    """``stored`` (the field's cleaned value) through the steps the whole-data cleaning method
    applies to it (``attrs["email"].strip().lower()``); None when it stores something else in
    the field (a value made of another field, or of no field): the stored form is not told."""
    spellings = (f'["{field_name}"]', f"['{field_name}']", f'.get("{field_name}"', f".get('{field_name}'")
    for origin in rewrite.origins:
        if any(origin.startswith(name) and origin[len(name):].startswith(spellings) for name in names):
            return Value(stored.origins, stored.steps + rewrite.steps, rewrite.text)
    return None


def _value_argument(cleaner: Optional[FunctionNode]) -> str:
    """The parameter a ``validate_<field>(self, value)`` gets the value in."""
    if cleaner is None:
        return ""
    params = [a.arg for a in (*cleaner.args.posonlyargs, *cleaner.args.args)]
    return params[1] if len(params) >= 2 else ""


def _comes_from(origin: str, given: str, exactly: bool) -> bool:
    if exactly:
        return origin == given or origin.startswith((given + ".", given + "["))
    return given in origin


def form_writes(module: ast.Module, analysis, walker) -> None:
    """Record each model form's stored fields as writes of the module-level walker."""
    for form, kind in form_classes(module.body):
        fields = FormFields(form, kind, walker, analysis)
        if fields.model:
            module_level, walker.function = walker.function, f"{form.name}.save"  # what messages name
            try:
                _record_fields(form, fields, analysis, walker)
            finally:
                walker.function = module_level


def _record_fields(form: ast.ClassDef, fields: FormFields, analysis, walker) -> None:
    """Each stored field of one model form, as a write of the module-level walker."""
    entity = walker.model_alias(fields.model)
    for field_name in fields.fields:
        cleaner = fields.cleaners.get(field_name)
        returns: Sequence[Value] = ()
        if cleaner is not None:
            unit = f"{form.name}.{cleaner.name}"
            returns = analysis.walker(unit).returns if unit in analysis.units else ()
        node = cleaner if cleaner is not None else form
        stored = cleaned_value(field_name, cleaner, returns, fields.kind)
        if field_name in fields.converters:  # the field's class converts the value before any cleaning method
            stored = Value(stored.origins, fields.converters[field_name] + stored.steps, stored.text)
        if field_name in fields.rewrites and fields.whole is not None:
            rewritten = _through_whole_cleaner(stored, field_name, form, fields, analysis)
            if rewritten is None:
                continue  # the field gets another value there: its stored form is not told
            stored, node = rewritten, cleaner if cleaner is not None else fields.whole
        walker.statement_of.setdefault(id(node), node)
        walker.add(WRITE, Key(entity, field_name, stored), node, STORE, next(walker.call_ids), f"{form.name}.save()",
                   saves=True)


def _through_whole_cleaner(stored: Value, field_name: str, form: ast.ClassDef, fields: FormFields,
                           analysis) -> Optional[Value]:
    """``rewritten_value`` of the field, its rewrite evaluated where the method ends."""
    unit = f"{form.name}.{fields.whole.name}"  # type: ignore[union-attr]
    if unit not in analysis.units:
        return stored
    rewrite = analysis.walker(unit).eval(fields.rewrites[field_name])
    names = _data_names(fields.whole, fields.kind)  # type: ignore[arg-type]
    return rewritten_value(stored, field_name, rewrite, names)
