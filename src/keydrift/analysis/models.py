"""What model classes declare about their keys: write-time rewriting and case-insensitive columns.

Write-time rewriting is code that transforms a key whenever a record is stored: a Django
``save()``/``clean()`` override (``self.email = self.email.lower()``), a ``pre_save`` receiver,
a SQLAlchemy ``@validates`` method. Lookups that pass the raw value then miss the stored row.
Also how calling a class fills its fields (``Constructor``): positional arguments in field
order, and a dataclass/attrs post-init hook's rewrites, which the built instance already has.
"""

from __future__ import annotations

import ast
from dataclasses import field
from typing import Dict, FrozenSet, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

from keydrift.analysis import imports
from keydrift.analysis.facts import Step, Value
from keydrift.analysis.receivers import block, plain_string
from keydrift.analysis.tree import (
    FUNCTION_TYPES, FunctionNode, all_argument_values, is_elif, keyword_arg, unspread_positional_args,
)
from keydrift.analysis.values import Evaluator, code, dotted_name, last_name
from keydrift.frameworks import django_orm as django
from keydrift.frameworks import schema
from keydrift.frameworks import sqlalchemy_orm as sqla
from keydrift.records import record

# Methods that run whenever a record is stored.
SAVING_METHODS = frozenset({"save", "clean", "full_clean", "before_save", "pre_save", "__init__"})
# Django runs ``clean()``/``full_clean()`` only from forms and explicit calls: ``save()``,
# ``create()`` and ``get_or_create()`` never do (mongoengine's ``save()`` does, via validate()).
DJANGO_VALIDATION_METHODS = frozenset({"clean", "full_clean"})
# Step kinds that rewrite a key in a constructor. ``self.conn_id = sanitize_conn_id(conn_id)``
# in ``__init__`` (an unknown function) is usually a validation or a conversion of the argument;
# a constructor that canonicalizes says so with a known step (``.lower()``, ``slugify()``...).
CONSTRUCTOR_REWRITE_KINDS = frozenset({"case", "whitespace", "slash", "url", "unicode", "idna", "slug", "normalizer"})
SIGNALS = frozenset({"pre_save"})
# Class decorators that generate ``__init__`` from the annotated fields, in order (dataclasses,
# attrs), and the hook the generated ``__init__`` calls once the fields are set.
FIELD_CLASS_DECORATORS = frozenset({
    "dataclass", "dataclasses.dataclass", "pydantic.dataclasses.dataclass",
    "attr.s", "attr.attrs", "attr.define", "attr.frozen", "attr.mutable", "attr.dataclass",
    "attrs.define", "attrs.frozen", "attrs.mutable", "define", "frozen", "mutable",
})
POST_INIT_METHODS = frozenset({"__post_init__", "__attrs_post_init__"})
# ``x: int = field(init=False)`` / ``attr.ib(init=False)``: not a parameter of ``__init__``.
FIELD_SPECIFIERS = frozenset({"field", "ib", "attrib"})
_NOT_FIELDS = frozenset({"ClassVar"})
_KEYWORD_ONLY_MARKER = "KW_ONLY"
VALIDATOR_DECORATORS = frozenset({"validates"})


@record
class Rewrite:
    """What a model does to a field when it stores it (``save()``, ``clean()``, a ``pre_save``
    receiver, ``@validates``): the steps, and who applies them."""

    steps: Tuple[Step, ...]
    by: str  # "User.save()"
    # the method or receiver that rewrites, for the project registry's locations; never serialized
    node: Optional[ast.AST] = field(default=None, compare=False, hash=False, repr=False)


@record
class Derivation:
    """A key field ``save()`` computes from another field: ``self.slug = slugify(self.title)``."""

    field: str  # the derived key (slug)
    steps: Tuple[Step, ...]
    by: str  # "Article.save()"


# Derived keys a save() override computes, by (entity, source field).
Derivations = Dict[Tuple[str, str], Tuple[Derivation, ...]]


@record
class Constructor:
    """How calling a class fills its instance's fields: the field each positional argument
    becomes (``Subscriber(email, "trial")``), and the rewrites the instance gets once built
    (a dataclass's ``__post_init__``: ``self.email = self.email.lower()``)."""

    positional: Tuple[str, ...]
    rewrites: Tuple[Tuple[str, Tuple[Step, ...]], ...] = ()
    by: str = ""  # "SignupRequest.__post_init__()"


# Constructors of the module's classes that declare one (a generated or written ``__init__``).
Constructors = Dict[str, Constructor]


# Compound statements whose blocks hold the statements read (``for`` and ``with`` async too).
_NESTING = (ast.If, ast.With, ast.AsyncWith, ast.Try, ast.For, ast.AsyncFor)
_COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.With, ast.AsyncWith, ast.FunctionDef,
             ast.AsyncFunctionDef, ast.ClassDef) + tuple(
    getattr(ast, name) for name in ("TryStar", "Match") if hasattr(ast, name))


def _small_statements(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    """Simple statements of a body, including those nested in if/with/try/for blocks (and their
    else block; of an ``elif`` chain, the first ``elif``'s own block)."""
    for statement in body:
        if isinstance(statement, _NESTING):
            yield from _small_statements(block(statement.body, statement))
            yield from _small_statements(_else_block(statement))
        elif not isinstance(statement, _COMPOUND):
            yield statement


def _else_block(statement: ast.stmt) -> Sequence[ast.stmt]:
    orelse: List[ast.stmt] = getattr(statement, "orelse", None) or []
    if isinstance(statement, ast.If) and is_elif(statement):
        return block(orelse[0].body, orelse[0])
    return block(orelse)


def _param_names(func: FunctionNode) -> List[str]:
    return [p.arg for p in func.args.args]


def _attribute_rewrites(func: FunctionNode, owner: str) -> Iterator[Tuple[str, Tuple[Step, ...]]]:
    """``owner.F = f(owner.F)`` in a function body -> (F, steps of f); in ``__init__`` also
    ``self.F = f(param)`` (the constructor stores its argument transformed). A frozen
    dataclass assigns with ``object.__setattr__(self, "F", value)``."""
    env: Dict[str, Value] = {}
    evaluator = Evaluator(env, {})
    params = set(_param_names(func)[1:]) if func.name == "__init__" else set()
    kwargs = _star_kwargs(func)
    for small in _small_statements(block(func.body, func)):
        small = _setattr_assignment(small) or small
        if not isinstance(small, ast.Assign) or len(small.targets) != 1:
            continue
        target = small.targets[0]
        if isinstance(target, ast.Name):  # lower_case = email.lower(); self.email = lower_case
            env[target.id] = evaluator.eval(small.value)
            continue
        keyword = _keyword_argument(target, kwargs)
        if keyword:  # kwargs["email"] = kwargs["email"].lower(); super().__init__(**kwargs)
            value = evaluator.eval(small.value)
            if value.steps and any(o.startswith(f"{kwargs}[") or o.startswith(f"{kwargs}.get(")
                                   for o in value.origins):
                yield keyword, value.steps
            continue
        if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                and target.value.id == owner):
            continue
        value = evaluator.eval(small.value)
        if value.steps and (f"{owner}.{target.attr}" in value.origins or value.origins & params
                            or any(o.startswith(f"{kwargs}[") for o in value.origins if kwargs)):
            yield target.attr, value.steps


def _setattr_assignment(statement: ast.stmt) -> Optional[ast.Assign]:
    """``object.__setattr__(self, "email", v)`` as the assignment ``self.email = v`` it makes."""
    call = statement.value if isinstance(statement, ast.Expr) else None
    if not (isinstance(call, ast.Call) and dotted_name(call.func) == "object.__setattr__"
            and len(call.args) == 3 and not call.keywords and isinstance(call.args[0], ast.Name)):
        return None
    name = plain_string(call.args[1])
    if not name or not name.isidentifier():
        return None
    target = ast.Attribute(value=call.args[0], attr=name, ctx=ast.Store())
    return ast.Assign(targets=[target], value=call.args[2])


def _derived_keys(cls: ast.ClassDef, derivations: Derivations) -> None:
    """``def save(self): self.slug = slugify(self.title)``: slug is derived from title whenever
    a record is saved, and only then (``bulk_create``, ``QuerySet.update`` do not call save())."""
    for node in block(cls.body, cls):
        if not (isinstance(node, FUNCTION_TYPES) and node.name == "save"):
            continue
        env: Dict[str, Value] = {}
        evaluator = Evaluator(env, {})
        for small in _small_statements(block(node.body, node)):
            if not (isinstance(small, ast.Assign) and len(small.targets) == 1):
                continue
            target = small.targets[0]
            if isinstance(target, ast.Name):  # slug = f"{self.name.lower()}-{suffix}"; self.slug = slug
                env[target.id] = evaluator.eval(small.value)
                continue
            if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                    and target.value.id == "self" and schema.natural_key_kind(target.attr)):
                continue
            value = evaluator.eval(small.value)
            sources = [o[len("self."):] for o in value.origins if o.startswith("self.") and "." not in o[5:]]
            if len(sources) != 1 or sources[0] == target.attr \
                    or not any(s.kind in CONSTRUCTOR_REWRITE_KINDS for s in value.steps):
                continue
            key = (cls.name, sources[0])
            derived = Derivation(target.attr, value.steps, f"{cls.name}.save()")
            derivations[key] = derivations.get(key, ()) + (derived,)


def constructor(cls: ast.ClassDef) -> Optional[Constructor]:
    """What calling the class does with its arguments, when the module shows it: a dataclass /
    attrs class's fields in order and its post-init rewrites, or a written ``__init__``'s
    parameters (each the field it is assigned to). A field class with bases may inherit fields
    that come first: its positional order is unknown then (keywords still map)."""
    methods = {node.name: node for node in block(cls.body, cls) if isinstance(node, FUNCTION_TYPES)}
    if _is_field_class(cls):
        fields = () if cls.bases else _init_fields(cls)
        hook = next((methods[name] for name in POST_INIT_METHODS if name in methods), None)
        rewrites = tuple((name, steps) for name, steps in (_attribute_rewrites(hook, "self") if hook else ())
                         if any(step.kind in CONSTRUCTOR_REWRITE_KINDS for step in steps))
        by = f"{cls.name}.{hook.name}()" if hook is not None else ""
        return Constructor(fields, rewrites, by)
    init = methods.get("__init__")
    if init is None:
        validated = tuple(_field_validator_rewrites(methods.values()))
        return Constructor((), validated, f"{cls.name}.{validated[0][0]} validator") if validated else None
    return Constructor(tuple(_assigned_field(init, param) for param in _param_names(init)[1:]))


def _field_validator_rewrites(methods: Iterable[FunctionNode]) -> Iterator[Tuple[str, Tuple[Step, ...]]]:
    """(field, steps) of each field a pydantic validator rewrites (``@field_validator("email")``
    returning ``value.strip().lower()``): the steps of what the method returns of its value
    argument, when every such return that changes it agrees."""
    for method in methods:
        fields = _validated_fields(method)
        params = _param_names(method)
        if not fields or len(params) < 2:
            continue
        steps = _returned_steps(method, params[1])
        if steps and any(step.kind in CONSTRUCTOR_REWRITE_KINDS for step in steps):
            for name in fields:
                yield name, steps


def _validated_fields(method: FunctionNode) -> List[str]:
    """The fields a validator decorator names (not ``"*"``: every field, each its own type)."""
    decorator = _decorator_call(method, schema.FIELD_VALIDATOR_DECORATORS)
    names = [plain_string(arg) for arg in decorator.args] if decorator is not None else []
    return [name for name in names if name and name.isidentifier()]


def _returned_steps(method: FunctionNode, value: str) -> Tuple[Step, ...]:
    """The one transformation the method's returns apply to ``value`` (returns of it unchanged,
    a ``None`` guard's, do not count); () when none, or when two returns disagree."""
    env: Dict[str, Value] = {value: Value(frozenset({value}), (), value)}
    evaluator = Evaluator(env, {})
    found: Set[Tuple[Step, ...]] = set()
    for small in _small_statements(block(method.body, method)):
        if isinstance(small, ast.Assign) and len(small.targets) == 1 and isinstance(small.targets[0], ast.Name):
            env[small.targets[0].id] = evaluator.eval(small.value)
        elif isinstance(small, ast.Return) and small.value is not None:
            returned = evaluator.eval(small.value)
            if value in returned.origins and returned.steps:
                found.add(tuple(returned.steps))
    return found.pop() if len(found) == 1 else ()


def _is_field_class(cls: ast.ClassDef) -> bool:
    for decorator in cls.decorator_list:
        name = dotted_name(decorator.func if isinstance(decorator, ast.Call) else decorator)
        if name in FIELD_CLASS_DECORATORS:
            return True
    return False


def _init_fields(cls: ast.ClassDef) -> Tuple[str, ...]:
    """The positional parameters of a generated ``__init__``: annotated fields in order, less
    class variables, ``init=False`` fields and what follows a ``KW_ONLY`` marker."""
    fields = []
    for statement in block(cls.body, cls):
        if not (isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)):
            continue
        annotation = last_name(statement.annotation.value if isinstance(statement.annotation, ast.Subscript)
                               else statement.annotation)
        if annotation == _KEYWORD_ONLY_MARKER:
            break
        if annotation in _NOT_FIELDS or _not_in_init(statement.value):
            continue
        fields.append(statement.target.id)
    return tuple(fields)


def _not_in_init(value: Optional[ast.expr]) -> bool:
    """``field(init=False)``, ``attr.ib(init=False)``, ``field(kw_only=True)``."""
    if not (isinstance(value, ast.Call) and last_name(value.func) in FIELD_SPECIFIERS):
        return False
    init, kw_only = keyword_arg(value, "init"), keyword_arg(value, "kw_only")
    return (isinstance(init, ast.Constant) and init.value is False) or (
        isinstance(kw_only, ast.Constant) and kw_only.value is True)


def _assigned_field(init: FunctionNode, param: str) -> str:
    """The attribute ``__init__`` stores a parameter in (``self.address = email.lower()`` ->
    "address"); the parameter's own name when no statement says."""
    evaluator = Evaluator({}, {})
    for small in _small_statements(block(init.body, init)):
        if isinstance(small, ast.Assign) and len(small.targets) == 1:
            target = small.targets[0]
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                    and target.value.id == "self" and param in evaluator.eval(small.value).origins:
                return target.attr
    return param


def _star_kwargs(func: FunctionNode) -> str:
    """The name of ``**kwargs`` of a constructor, else ""."""
    star = func.args.kwarg
    return star.arg if func.name == "__init__" and star is not None else ""


def _keyword_argument(target: ast.expr, kwargs: str) -> str:
    """``kwargs["email"]`` as an assignment target in a constructor -> "email"."""
    if not (kwargs and isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)
            and target.value.id == kwargs):
        return ""
    return plain_string(target.slice) or ""


def _decorator_call(func: FunctionNode, names: FrozenSet[str]) -> Optional[ast.Call]:
    for node in func.decorator_list:
        if isinstance(node, ast.Call) and last_name(node.func) in names:
            return node
    return None


def _validator_rewrites(func: FunctionNode) -> Iterator[Tuple[str, Tuple[Step, ...]]]:
    """SQLAlchemy ``@validates("email") def v(self, key, value): return value.lower()``."""
    decorator = _decorator_call(func, VALIDATOR_DECORATORS)
    params = _param_names(func)
    if decorator is None or len(params) < 3:
        return
    fields = [name for name in map(plain_string, decorator.args) if name is not None]
    evaluator = Evaluator({}, {})
    for small in _small_statements(block(func.body, func)):
        if isinstance(small, ast.Return) and small.value is not None:
            value = evaluator.eval(small.value)
            if params[2] in value.origins and value.steps:
                for name in fields:
                    yield name, value.steps
                return


def _signal_sender(func: FunctionNode) -> str:
    decorator = _decorator_call(func, frozenset({"receiver"}))
    arguments = all_argument_values(decorator) if decorator is not None else []
    if not arguments or last_name(arguments[0]) not in SIGNALS:
        return ""
    sender = keyword_arg(decorator, "sender")  # type: ignore[arg-type]
    return last_name(sender) if sender is not None else ""


def _case_insensitive(call: ast.Call) -> bool:
    """A field whose class, column type or collation ignores case (``frameworks/schema.py``
    holds the one list KD3 reads too)."""
    if schema.is_case_insensitive_class(last_name(call.func)):
        return True
    text = code(call)
    if any(t in text for t in schema.CASE_INSENSITIVE_TYPES):
        return True
    for keyword in call.keywords:
        if keyword.arg in ("db_collation", "collation"):
            if schema.is_case_insensitive_collation(code(keyword.value)):
                return True
    return False


def _lowering_types(module: ast.Module) -> FrozenSet[str]:
    """Column-type classes of the module whose ``process_bind_param`` returns the whole value
    lowercased (a ``TypeDecorator``): SQLAlchemy binds every value of such a column through it,
    the stored one and the one a lookup compares, so the column absorbs case like CITEXT."""
    names = set()
    for statement in module.body:
        if isinstance(statement, ast.ClassDef) and any(
                isinstance(m, FUNCTION_TYPES) and m.name == "process_bind_param" and _returns_lowered_param(m)
                for m in statement.body):
            names.add(statement.name)
    return frozenset(names)


def _returns_lowered_param(method: FunctionNode) -> bool:
    """``return value.lower()`` (or ``casefold()``) of the bound value, the method's second parameter."""
    params = _param_names(method)
    if len(params) < 2:
        return False
    returns = [n.value for n in ast.walk(method) if isinstance(n, ast.Return) and n.value is not None]
    return any(isinstance(r, ast.Call) and isinstance(r.func, ast.Attribute) and r.func.attr in ("lower", "casefold")
               and isinstance(r.func.value, ast.Name) and r.func.value.id == params[1] for r in returns)


def _column_type_names(call: ast.Call) -> FrozenSet[str]:
    """The class names of a column's positional arguments: ``Column(Lowered)``, ``Column("e", Lowered(320))``."""
    return frozenset(last_name(a.func if isinstance(a, ast.Call) else a) for a in call.args)


def _class_fields(cls: ast.ClassDef) -> Iterator[Tuple[str, ast.Call]]:
    for small in _small_statements(block(cls.body, cls)):
        target = small.targets[0] if isinstance(small, ast.Assign) else getattr(small, "target", None)
        value = getattr(small, "value", None)
        if isinstance(target, ast.Name) and isinstance(value, ast.Call):
            yield target.id, value


def _imports_django(module: ast.Module) -> bool:
    """Whether the module imports Django (and not mongoengine, whose documents also have
    ``clean()``): its model classes are Django models."""
    roots = {source.split(".", 1)[0] for _, source, _ in imports.bindings(module)}
    return "django" in roots and "mongoengine" not in roots


def model_facts(module: ast.Module, rewrites: Dict[Tuple[str, str], Rewrite],
                absorbs: Dict[Tuple[str, str], FrozenSet[str]], derivations: Optional[Derivations] = None) -> None:
    saving = SAVING_METHODS - DJANGO_VALIDATION_METHODS if _imports_django(module) else SAVING_METHODS
    lowering = _lowering_types(module)
    for statement in module.body:
        if isinstance(statement, ast.ClassDef):
            _class_facts(statement, rewrites, absorbs, saving, lowering)
            if derivations is not None:
                _derived_keys(statement, derivations)
        elif isinstance(statement, FUNCTION_TYPES):
            sender = _signal_sender(statement)
            params = _param_names(statement)
            if sender and len(params) >= 2:
                owner = "instance" if "instance" in params else params[1]
                for field_name, steps in _attribute_rewrites(statement, owner):
                    rewrites[(sender, field_name)] = Rewrite(steps, f"pre_save receiver {statement.name}()",
                                                             statement)


def _class_facts(cls: ast.ClassDef, rewrites: Dict[Tuple[str, str], Rewrite],
                 absorbs: Dict[Tuple[str, str], FrozenSet[str]], saving: FrozenSet[str] = SAVING_METHODS,
                 lowering: FrozenSet[str] = frozenset()) -> None:
    entity = cls.name
    for field_name, call in _class_fields(cls):
        if _case_insensitive(call) or _column_type_names(call) & lowering:
            absorbs[(entity, field_name)] = frozenset({"case"})
    for node in block(cls.body, cls):
        if not isinstance(node, FUNCTION_TYPES):
            continue
        if node.name in saving:
            for field_name, steps in _attribute_rewrites(node, "self"):
                if node.name == "__init__" and not any(s.kind in CONSTRUCTOR_REWRITE_KINDS for s in steps):
                    continue
                rewrites[(entity, field_name)] = Rewrite(steps, f"{entity}.{node.name}()", node)
        for field_name, steps in _validator_rewrites(node):
            rewrites[(entity, field_name)] = Rewrite(steps, f"{entity}.{node.name}()", node)


# A record's identity the database assigns: a relation that references it holds an id.
_IDENTITY_COLUMNS = frozenset({"id", "pk"})


def relation_fields(module: ast.Module) -> FrozenSet[Tuple[str, str]]:
    """(model, field) of each field the module's models declare as a relation to another
    record's identity: a Django/peewee ``ForeignKey``/``OneToOneField``/``ManyToManyField`` (and
    its ``<field>_id`` column), a SQLAlchemy ``relationship()``, a column with
    ``ForeignKey("users.id")``. Its value is a record or a database id, which has one spelling:
    re-binding or re-fetching the record changes no key. A relation to another field
    (``to_field="email"``, ``ForeignKey("users.email")``) holds that natural key and is none."""
    found: Set[Tuple[str, str]] = set()
    for statement in module.body:
        if not isinstance(statement, ast.ClassDef):
            continue
        for name, call in _class_fields(statement):
            if _holds_a_record(call):
                found.add((statement.name, name))
                if last_name(call.func) in schema.RELATION_FIELD_CALLS:
                    found.add((statement.name, name + django.RELATION_COLUMN_SUFFIX))
    return frozenset(found)


def _holds_a_record(call: ast.Call) -> bool:
    callee = last_name(call.func)
    if callee in sqla.RELATIONSHIP_CALLS:
        return True
    if callee in schema.RELATION_FIELD_CALLS:
        referenced = [keyword_arg(call, name) for name in django.REFERENCED_FIELD_KEYWORDS]
        return all(r is None or _identity(r) for r in referenced)
    if callee not in schema.COLUMN_CALLS:
        return False
    references = [a.args[0] if a.args else None for a in unspread_positional_args(call)
                  if isinstance(a, ast.Call) and last_name(a.func) == sqla.FOREIGN_KEY_CALL]
    keyword = keyword_arg(call, sqla.FOREIGN_KEY_KEYWORD)
    if keyword is not None:
        references.append(keyword)
    return bool(references) and all(r is not None and _identity(r) for r in references)


def _identity(reference: ast.expr) -> bool:
    """``"users.id"``, ``User.id``, ``"pk"``: the referenced column is the record's id."""
    text = plain_string(reference)
    name = text.rsplit(".", 1)[-1] if text is not None else last_name(reference)
    return name in _IDENTITY_COLUMNS


def database_computed_fields(module: ast.Module) -> FrozenSet[Tuple[str, str]]:
    """(model, field) of each field whose value the database computes from the row
    (``normalized_name = mapped_column(server_default=FetchedValue(), server_onupdate=
    FetchedValue())`` filled by a trigger, ``column_property(func.lower(name))``,
    ``Column(Text, Computed("lower(name)"))``, ``GeneratedField(expression=Lower("name"))``):
    the code never writes it, and a lookup can only put its argument through the database's
    own function."""
    found: Set[Tuple[str, str]] = set()
    for statement in module.body:
        if isinstance(statement, ast.ClassDef):
            found.update((statement.name, name) for name, call in _class_fields(statement) if _computed(call))
            found.update((statement.name, name) for name, call in _declared_attributes(statement) if _computed(call))
    return frozenset(found)


def _declared_attributes(cls: ast.ClassDef) -> Iterator[Tuple[str, ast.Call]]:
    """``@declared_attr def normalized_name(cls): return column_property(...)``: the call each
    such method returns."""
    for node in cls.body:
        if isinstance(node, FUNCTION_TYPES) and any(last_name(d) == sqla.DECLARED_ATTR for d in node.decorator_list):
            for inner in node.body:
                if isinstance(inner, ast.Return) and isinstance(inner.value, ast.Call):
                    yield node.name, inner.value


def _computed(call: ast.Call) -> bool:
    callee = last_name(call.func)
    if callee in sqla.COMPUTED_PROPERTY_CALLS or callee in django.GENERATED_FIELD_CALLS:
        return True
    if callee not in schema.COLUMN_CALLS:
        return False
    values = list(call.args) + [keyword_arg(call, name) for name in sqla.SERVER_VALUE_KEYWORDS]
    return any(isinstance(v, ast.Call) and last_name(v.func) in sqla.SERVER_VALUE_CALLS for v in values)


def managed_models(module: ast.Module) -> Dict[str, str]:
    """Manager and queryset classes of the module -> the model that makes its manager from them
    (``objects = PageManager()`` in ``class Page``). A class shared by two models manages no one
    model: its ``self`` queries are left unread."""
    found: Dict[str, str] = {}
    shared: Set[str] = set()
    for cls in module.body:
        if not isinstance(cls, ast.ClassDef):
            continue
        for small in cls.body:
            if isinstance(small, ast.Assign) and any(isinstance(t, ast.Name) and django.is_manager(t.id)
                                                     for t in small.targets):
                for name in _manager_classes(small.value):
                    if found.setdefault(name, cls.name) != cls.name:
                        shared.add(name)
    return {name: model for name, model in found.items() if name not in shared}


def _manager_classes(value: ast.expr) -> List[str]:
    """``PageManager()`` -> [PageManager]; ``PageQuerySet.as_manager()`` -> [PageQuerySet];
    ``PageManager.from_queryset(PageQuerySet)()`` -> [PageManager, PageQuerySet]."""
    if not isinstance(value, ast.Call):
        return []
    func = value.func
    if isinstance(func, ast.Name):
        return [func.id]
    if isinstance(func, ast.Attribute) and func.attr == django.QUERYSET_AS_MANAGER and isinstance(func.value, ast.Name):
        return [func.value.id]
    if isinstance(func, ast.Call) and isinstance(func.func, ast.Attribute) \
            and func.func.attr == django.MANAGER_FROM_QUERYSET and isinstance(func.func.value, ast.Name):
        return [func.func.value.id] + [a.id for a in func.args if isinstance(a, ast.Name)]
    return []
