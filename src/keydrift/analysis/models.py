"""What model classes declare about their keys: write-time rewriting and case-insensitive columns.

Write-time rewriting is code that transforms a key whenever a record is stored: a Django
``save()``/``clean()`` override (``self.email = self.email.lower()``), a ``pre_save`` receiver,
a SQLAlchemy ``@validates`` method. Lookups that pass the raw value then miss the stored row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, FrozenSet, Iterator, List, Optional, Sequence, Tuple

import libcst as cst

from keydrift.analysis.imports import cst_bindings
from keydrift.analysis.facts import Step, Value
from keydrift.analysis.values import Evaluator, code, last_name
from keydrift.frameworks import schema

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
VALIDATOR_DECORATORS = frozenset({"validates"})


@dataclass(frozen=True)
class Rewrite:
    steps: Tuple[Step, ...]
    by: str  # "User.save()"
    # the method or receiver that rewrites, for the project registry's locations; never serialized
    node: Optional[cst.CSTNode] = field(default=None, compare=False, hash=False, repr=False)


@dataclass(frozen=True)
class Derivation:
    """A key field ``save()`` computes from another field: ``self.slug = slugify(self.title)``."""

    field: str  # the derived key (slug)
    steps: Tuple[Step, ...]
    by: str  # "Article.save()"


# Derived keys a save() override computes, by (entity, source field).
Derivations = Dict[Tuple[str, str], Tuple[Derivation, ...]]


def _block(node: cst.BaseSuite) -> Sequence[cst.CSTNode]:
    return node.body if isinstance(node, cst.IndentedBlock) else ()


def _small_statements(body: Sequence[cst.CSTNode]) -> Iterator[cst.BaseSmallStatement]:
    """Small statements of a body, including those nested in if/with/try blocks."""
    for statement in body:
        if isinstance(statement, cst.SimpleStatementLine):
            yield from statement.body
        elif isinstance(statement, (cst.If, cst.With, cst.Try, cst.For)):
            yield from _small_statements(_block(statement.body))
            orelse = getattr(statement, "orelse", None)
            if isinstance(orelse, (cst.Else, cst.If)):
                yield from _small_statements(_block(orelse.body))


def _param_names(func: cst.FunctionDef) -> List[str]:
    return [p.name.value for p in func.params.params]


def _attribute_rewrites(func: cst.FunctionDef, owner: str) -> Iterator[Tuple[str, Tuple[Step, ...]]]:
    """``owner.F = f(owner.F)`` in a function body -> (F, steps of f); in ``__init__`` also
    ``self.F = f(param)`` (the constructor stores its argument transformed)."""
    env: Dict[str, Value] = {}
    evaluator = Evaluator(env, {})
    params = set(_param_names(func)[1:]) if func.name.value == "__init__" else set()
    kwargs = _star_kwargs(func)
    for small in _small_statements(_block(func.body)):
        if not isinstance(small, cst.Assign) or len(small.targets) != 1:
            continue
        target = small.targets[0].target
        if isinstance(target, cst.Name):  # lower_case = email.lower(); self.email = lower_case
            env[target.value] = evaluator.eval(small.value)
            continue
        keyword = _keyword_argument(target, kwargs)
        if keyword:  # kwargs["email"] = kwargs["email"].lower(); super().__init__(**kwargs)
            value = evaluator.eval(small.value)
            if value.steps and any(o.startswith(f"{kwargs}[") or o.startswith(f"{kwargs}.get(")
                                   for o in value.origins):
                yield keyword, value.steps
            continue
        if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                and target.value.value == owner):
            continue
        value = evaluator.eval(small.value)
        if value.steps and (f"{owner}.{target.attr.value}" in value.origins or value.origins & params
                            or any(o.startswith(f"{kwargs}[") for o in value.origins if kwargs)):
            yield target.attr.value, value.steps


def _derived_keys(cls: cst.ClassDef, derivations: Derivations) -> None:
    """``def save(self): self.slug = slugify(self.title)``: slug is derived from title whenever
    a record is saved, and only then (``bulk_create``, ``QuerySet.update`` do not call save())."""
    for node in _block(cls.body):
        if not (isinstance(node, cst.FunctionDef) and node.name.value == "save"):
            continue
        evaluator = Evaluator({}, {})
        for small in _small_statements(_block(node.body)):
            if not (isinstance(small, cst.Assign) and len(small.targets) == 1):
                continue
            target = small.targets[0].target
            if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                    and target.value.value == "self" and schema.natural_key_kind(target.attr.value)):
                continue
            value = evaluator.eval(small.value)
            sources = [o[len("self."):] for o in value.origins if o.startswith("self.") and "." not in o[5:]]
            if len(sources) != 1 or sources[0] == target.attr.value \
                    or not any(s.kind in CONSTRUCTOR_REWRITE_KINDS for s in value.steps):
                continue
            key = (cls.name.value, sources[0])
            derived = Derivation(target.attr.value, value.steps, f"{cls.name.value}.save()")
            derivations[key] = derivations.get(key, ()) + (derived,)


def _star_kwargs(func: cst.FunctionDef) -> str:
    """The name of ``**kwargs`` of a constructor, else ""."""
    star = func.params.star_kwarg
    return star.name.value if func.name.value == "__init__" and star is not None else ""


def _keyword_argument(target: cst.BaseExpression, kwargs: str) -> str:
    """``kwargs["email"]`` as an assignment target in a constructor -> "email"."""
    if not (kwargs and isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name)
            and target.value.value == kwargs and len(target.slice) == 1):
        return ""
    index = target.slice[0].slice
    if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString):
        value = index.value.evaluated_value
        return value if isinstance(value, str) else ""
    return ""


def _decorator_call(func: cst.FunctionDef, names: FrozenSet[str]) -> Optional[cst.Call]:
    for decorator in func.decorators:
        node = decorator.decorator
        if isinstance(node, cst.Call) and last_name(node.func) in names:
            return node
    return None


def _validator_rewrites(func: cst.FunctionDef) -> Iterator[Tuple[str, Tuple[Step, ...]]]:
    """SQLAlchemy ``@validates("email") def v(self, key, value): return value.lower()``."""
    decorator = _decorator_call(func, VALIDATOR_DECORATORS)
    params = _param_names(func)
    if decorator is None or len(params) < 3:
        return
    fields = [a.value.evaluated_value for a in decorator.args
              if a.keyword is None and isinstance(a.value, cst.SimpleString)]
    evaluator = Evaluator({}, {})
    for small in _small_statements(_block(func.body)):
        if isinstance(small, cst.Return) and small.value is not None:
            value = evaluator.eval(small.value)
            if params[2] in value.origins and value.steps:
                for name in fields:
                    if isinstance(name, str):
                        yield name, value.steps
                return


def _signal_sender(func: cst.FunctionDef) -> str:
    decorator = _decorator_call(func, frozenset({"receiver"}))
    if decorator is None or not decorator.args or last_name(decorator.args[0].value) not in SIGNALS:
        return ""
    for arg in decorator.args:
        if arg.keyword is not None and arg.keyword.value == "sender":
            return last_name(arg.value)
    return ""


def _case_insensitive(call: cst.Call) -> bool:
    """A field whose class, column type or collation ignores case (``frameworks/schema.py``
    holds the one list KD3 reads too)."""
    if schema.is_case_insensitive_class(last_name(call.func)):
        return True
    text = code(call)
    if any(t in text for t in schema.CASE_INSENSITIVE_TYPES):
        return True
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in ("db_collation", "collation"):
            if schema.is_case_insensitive_collation(code(arg.value)):
                return True
    return False


def _class_fields(cls: cst.ClassDef) -> Iterator[Tuple[str, cst.Call]]:
    for small in _small_statements(_block(cls.body)):
        target = small.targets[0].target if isinstance(small, cst.Assign) else getattr(small, "target", None)
        value = getattr(small, "value", None)
        if isinstance(target, cst.Name) and isinstance(value, cst.Call):
            yield target.value, value


def _imports_django(module: cst.Module) -> bool:
    """Whether the module imports Django (and not mongoengine, whose documents also have
    ``clean()``): its model classes are Django models."""
    roots = {source.split(".", 1)[0] for _, source, _ in cst_bindings(module)}
    return "django" in roots and "mongoengine" not in roots


def model_facts(module: cst.Module, rewrites: Dict[Tuple[str, str], Rewrite],
                absorbs: Dict[Tuple[str, str], FrozenSet[str]], derivations: Optional[Derivations] = None) -> None:
    saving = SAVING_METHODS - DJANGO_VALIDATION_METHODS if _imports_django(module) else SAVING_METHODS
    for statement in module.body:
        if isinstance(statement, cst.ClassDef):
            _class_facts(statement, rewrites, absorbs, saving)
            if derivations is not None:
                _derived_keys(statement, derivations)
        elif isinstance(statement, cst.FunctionDef):
            sender = _signal_sender(statement)
            params = _param_names(statement)
            if sender and len(params) >= 2:
                owner = "instance" if "instance" in params else params[1]
                for field_name, steps in _attribute_rewrites(statement, owner):
                    rewrites[(sender, field_name)] = Rewrite(steps, f"pre_save receiver {statement.name.value}()",
                                                             statement)


def _class_facts(cls: cst.ClassDef, rewrites: Dict[Tuple[str, str], Rewrite],
                 absorbs: Dict[Tuple[str, str], FrozenSet[str]], saving: FrozenSet[str] = SAVING_METHODS) -> None:
    entity = cls.name.value
    for field_name, call in _class_fields(cls):
        if _case_insensitive(call):
            absorbs[(entity, field_name)] = frozenset({"case"})
    for node in _block(cls.body):
        if not isinstance(node, cst.FunctionDef):
            continue
        if node.name.value in saving:
            for field_name, steps in _attribute_rewrites(node, "self"):
                if node.name.value == "__init__" and not any(s.kind in CONSTRUCTOR_REWRITE_KINDS for s in steps):
                    continue
                rewrites[(entity, field_name)] = Rewrite(steps, f"{entity}.{node.name.value}()", node)
        for field_name, steps in _validator_rewrites(node):
            rewrites[(entity, field_name)] = Rewrite(steps, f"{entity}.{node.name.value}()", node)
