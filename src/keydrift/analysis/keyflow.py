"""Per-function key flow: walk each function once, in source order, collecting key accesses
with the value each key had at that point; then pair reads and writes into mismatches."""

from __future__ import annotations

import ast
import itertools
import weakref
from contextlib import contextmanager, nullcontext
from copy import deepcopy
from dataclasses import field, replace
from typing import ContextManager, Dict, FrozenSet, Iterator, List, Optional, Sequence, Set, Tuple

from keydrift.analysis.tree import (
    LOOP_TYPES, WITH_TYPES, arguments_in_order, child_nodes, concatenated_literals, is_true, parameters,
    per_node, segment, source_order_children, source_order_walk, walk,
)

from keydrift.analysis import pairing, tree
from keydrift.analysis.models import (
    Constructor, Constructors, Derivations, Rewrite, constructor, database_computed_fields, managed_models, model_facts,
    relation_fields,
)
from keydrift.analysis.chains import FORWARDED_FIELDS, forwarded_mappings
from keydrift.analysis.accesses import (
    ChainInfo,
    ChainReader,
    Context,
    Key,
    constructed_instances,
    is_model_name,
    keyword_args,
    keyword_items,
    last_name,
    positional_args,
    recognize,
    unchain,
)
from keydrift.analysis.facts import BYPASSED, FORMAT, LOOKUP, PART, READ, REDERIVED, STORE, WRITE, KeyAccess, Mismatch, Step, Value
from keydrift.analysis.payloads import Copy, loop_copy, update_copy
from keydrift.analysis.rows import RowSource, chain_rows, is_execute, row_calls, sql_rows
from keydrift.analysis.stores import is_store, subscript_access
from keydrift.analysis.tablecalls import emit_table_access
from keydrift.analysis.values import Evaluator, code, dotted_name, unpacked_element, fresh, is_remote
from keydrift.budget import check_budget
from keydrift.frameworks.schema import natural_key_kind
from keydrift.frameworks import django_orm as django
from keydrift.frameworks import sqlalchemy_orm as sqla
from keydrift.records import mutable
from keydrift.types import Config

# Class methods of validation models that build an instance from a mapping.
VALIDATING_CONSTRUCTORS = frozenset({"model_validate", "parse_obj", "validate", "model_validate_json",
                                     "parse_raw", "from_dict"})
# Bases of classes that validate and coerce their input rather than store it.
VALIDATION_BASES = frozenset({"BaseModel", "BaseSettings", "RootModel", "Schema", "Struct"})
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
# Half the expressions ``scan`` meets: no call, subscript or comparison in them, nothing under them.
_NOTHING_TO_SCAN = frozenset({ast.Name, ast.Constant})
# Nodes whose only child is their ``value`` (``a.b``, ``k=v``, ``*rest``, ``await x``).
_VALUE_WRAPPERS = frozenset({ast.Attribute, ast.keyword, ast.Starred, ast.Await})
_MEMBERSHIP = frozenset({ast.In, ast.NotIn})
# Statements with bodies of their own (the rest are simple statements, written one after another on a line).
_TRY_TYPES = tuple(t for t in (ast.Try, getattr(ast, "TryStar", None)) if t is not None)
_MATCH_TYPE = getattr(ast, "Match", None)
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_COMPOUND = (ast.If, ast.While, *LOOP_TYPES, *WITH_TYPES, *_TRY_TYPES, *_DEFINITIONS,
             *((_MATCH_TYPE,) if _MATCH_TYPE is not None else ()))
_MAX_RESOLVE_DEPTH = 8
# How a container is filled, and what creates an empty one.
FILL_METHODS = frozenset({"append", "extend", "add", "appendleft"})
CONTAINER_CONSTRUCTORS = frozenset({"list", "set", "dict", "deque", "defaultdict", "OrderedDict"})
DICT_CONSTRUCTORS = frozenset({"dict", "defaultdict", "OrderedDict"})
# The methods whose calls ``FunctionWalker.persist`` reads (the rest write nothing).
_PERSISTING_METHODS = frozenset(django.SAVE_METHODS | sqla.ADD_METHODS | sqla.ADD_ALL_METHODS | sqla.FLUSH_METHODS)


@mutable
class Record:
    """A variable holding one record fetched by key (``obj = M.objects.get(url=u)``)."""

    entity: str
    fields: Dict[str, Value]
    pending: Dict[str, Tuple[Value, ast.stmt]] = field(default_factory=dict)

    def copy(self) -> "Record":
        return Record(self.entity, dict(self.fields), dict(self.pending))


def _found_fields(name: str, lookups: Sequence[Key], stored_forms: Set[str]) -> Dict[str, Value]:
    """The fields of the record ``name`` holds that the lookup that found it tells: a field
    compared exactly holds the value looked up; one compared ignoring what the lookup absorbs
    (``username__iexact=u``) holds the stored form of that value, which may differ from it (a
    field of the record: ``user.username``, added to ``stored_forms``)."""
    fields = {}
    for key in lookups:
        if key.absorbs:
            field_of = f"{name}.{key.field}"
            stored_forms.add(field_of)
            fields[key.field] = Value(frozenset({field_of}), (), field_of)
        else:
            fields[key.field] = key.value
    return fields


@mutable
class Instance:
    """A variable holding a new, unsaved model instance (``obj = M(url=u)``)."""

    entity: str
    fields: Dict[str, Value]

    def copy(self) -> "Instance":
        return Instance(self.entity, self.fields.copy())


class ValidatedFields(dict):  # type: ignore[type-arg]
    """The fields of a validation model built from a mapping (``M.model_validate(data)``,
    ``M(**data)``): field ``f`` is ``data["f"]`` as the model coerced it (``HttpUrl`` appends
    "/"), a re-derived value. Only instances of validation models hold these; they are never
    saved, so no field is ever listed."""

    def __init__(self, mapping: str, label: str) -> None:
        super().__init__()
        self.mapping = mapping
        self.label = label

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str)

    def __missing__(self, key: str) -> Value:
        m = self.mapping
        origins = frozenset({f'{m}["{key}"]', f"{m}['{key}']", f'{m}.get("{key}")', f"{m}.get('{key}')"})
        return Value(origins, (Step(REDERIVED, f"{self.label}.{key}"),), f"{self.label}.{key}")

    def copy(self) -> "ValidatedFields":
        return ValidatedFields(self.mapping, self.label)


class RewrittenFields(dict):  # type: ignore[type-arg]
    """The fields of a parameter annotated with a class that rewrites them in every instance
    (a pydantic validator, a dataclass's ``__post_init__``): ``param.f`` carries the rewrite.
    Lookups only: the object is not the record, so no field is ever listed for a save."""

    def __init__(self, param: str, rewrites: Dict[str, Tuple[Step, ...]]) -> None:
        super().__init__()
        self.param = param
        self.rewrites = rewrites

    def __contains__(self, key: object) -> bool:
        return key in self.rewrites

    def __missing__(self, key: str) -> Value:
        text = f"{self.param}.{key}"
        return Value(frozenset({text}), self.rewrites.get(key, ()), text)

    def copy(self) -> "RewrittenFields":
        return RewrittenFields(self.param, self.rewrites)


@mutable
class State:
    """The walker's environment at one point of a function: what each name is bound to."""

    values: Dict[str, Value] = field(default_factory=dict)
    bound: Dict[str, ast.expr] = field(default_factory=dict)
    records: Dict[str, Record] = field(default_factory=dict)
    instances: Dict[str, Instance] = field(default_factory=dict)
    # a list, set or dict bound to a name and filled statement by statement (``rows.append(x)``,
    # ``by_url[u] = M(url=u)``): the elements put in, for the batch write it is handed to
    filled: Dict[str, Tuple[ast.expr, ...]] = field(default_factory=dict)

    def copy(self) -> "State":
        return State(dict(self.values), dict(self.bound),
                     {k: v.copy() for k, v in self.records.items()},
                     {k: v.copy() for k, v in self.instances.items()}, dict(self.filled))

    def forget(self, name: str) -> None:
        self.values.pop(name, None)
        self.bound.pop(name, None)
        self.records.pop(name, None)
        self.instances.pop(name, None)
        self.filled.pop(name, None)


def _merged(before: dict, first: dict, second: dict) -> dict:
    """A name changed in either branch takes the changed binding (first branch wins ties)."""
    out = dict(second)
    for name, item in first.items():
        if name not in before or before[name] is not item or name not in second:
            out[name] = item
    return out


def merge_states(before: State, first: State, second: State) -> State:
    merged = State(_merged(before.values, first.values, second.values),
                   _merged(before.bound, first.bound, second.bound),
                   _merged(before.records, first.records, second.records),
                   _merged(before.instances, first.instances, second.instances),
                   _merged(before.filled, first.filled, second.filled))
    _drop_cycles(merged.bound, before.bound)
    return merged


# Expressions looked at to decide whether a binding leads back to its own name; past this many
# the binding is left out, as a cyclic one would be (a resolution lost, never a loop).
_CYCLE_SEARCH_BUDGET = 200


def _reaches(value: ast.expr, name: str, bound: Dict[str, ast.expr]) -> bool:
    """Whether ``value``, its names resolved through ``bound``, uses the variable ``name``:
    binding ``name`` to it would make ``bound`` cyclic (``nxt = day + step`` then ``day = nxt``),
    and every reader that follows bindings into expressions would never end."""
    pending, seen, looked = [value], set(), 0
    while pending:
        looked += 1
        if looked > _CYCLE_SEARCH_BUDGET:
            return True
        names, lambda_parameters = _names_used(pending.pop())
        if name in names or name in lambda_parameters:  # a parameter as ``_mentions`` counts it
            return True
        for used in names:
            if used in bound and used not in seen:
                seen.add(used)
                pending.append(bound[used])
    return False


def _names_used(value: ast.expr) -> Tuple[FrozenSet[str], FrozenSet[str]]:
    """The variables an expression uses and the parameters of the lambdas in it; once per
    expression of the module (every binding is searched again at each later binding)."""
    kind = type(value)
    if kind is ast.Name:  # (a name or a literal is answered without the memo)
        return frozenset((value.id,)), _NO_NAMES  # type: ignore[attr-defined]
    if kind is ast.Constant:
        return _NO_NAMES, _NO_NAMES
    return per_node("keyflow.names", value, _names_in)


_NO_NAMES: FrozenSet[str] = frozenset()


def _names_in(value: ast.AST) -> Tuple[FrozenSet[str], FrozenSet[str]]:
    names, lambda_parameters = set(), set()
    stack = [value]
    while stack:  # (``tree.walk`` inlined: a name or a literal has no child worth a look)
        node = stack.pop()
        kind = type(node)
        if kind is ast.Name:
            names.add(node.id)  # type: ignore[attr-defined]
        elif kind is ast.Attribute or kind is ast.keyword:
            stack.append(node.value)  # type: ignore[attr-defined]
        elif kind is ast.Call:  # (the order of the children does not matter here)
            stack.append(node.func)  # type: ignore[attr-defined]
            stack += node.args  # type: ignore[attr-defined]
            stack += node.keywords  # type: ignore[attr-defined]
        elif kind is not ast.Constant:
            if kind is ast.arg:
                lambda_parameters.add(node.arg)  # type: ignore[attr-defined]
            stack.extend(child_nodes(node))
    return frozenset(names), frozenset(lambda_parameters)


def _drop_cycles(bound: Dict[str, ast.expr], before: Dict[str, ast.expr]) -> None:
    """Two branches can each bind a name to the other's (``a = b + "x"`` in one, ``b = a + "y"``
    in the other): of the bindings a branch made, leave out those that lead back to themselves."""
    for name in [n for n, expr in bound.items() if before.get(n) is not expr]:
        expr = bound.pop(name)
        if not _reaches(expr, name, bound):
            bound[name] = expr


@mutable
class ModuleInfo:
    """Facts about the module gathered before any function is walked."""

    constants: Dict[str, ast.expr] = field(default_factory=dict)
    primary_keys: Dict[str, str] = field(default_factory=dict)
    # (entity, field) -> how the model rewrites the key whenever it is saved
    rewrites: Dict[Tuple[str, str], Rewrite] = field(default_factory=dict)
    # (entity, field) -> what the column itself absorbs (CITEXT, case-insensitive collation)
    field_absorbs: Dict[Tuple[str, str], FrozenSet[str]] = field(default_factory=dict)
    # classes that validate and coerce their fields (pydantic): not records, their fields are
    # re-derived values (``HttpUrl`` appends "/")
    validation_models: Set[str] = field(default_factory=set)
    # (entity, source field) -> keys the model's save() derives from it
    derivations: Derivations = field(default_factory=dict)
    # class -> how calling it fills its fields (positional order, dataclass post-init rewrites)
    constructors: Constructors = field(default_factory=dict)
    # module-level names bound to the user model: ``UserModel = get_user_model()``
    user_model_aliases: Set[str] = field(default_factory=set)
    # manager/queryset class -> the one model of the module that makes its manager from it
    managed_models: Dict[str, str] = field(default_factory=dict)
    # (entity, field) of relations to a record's id: never a natural key (models.relation_fields)
    relations: FrozenSet[Tuple[str, str]] = frozenset()
    # (entity, field) whose value the database computes (models.database_computed_fields)
    computed: FrozenSet[Tuple[str, str]] = frozenset()


@mutable
class ModuleFacts:
    """Everything the rules read about one module."""

    module: ast.Module
    path: str
    config: Config
    info: ModuleInfo
    accesses: List[KeyAccess] = field(default_factory=list)
    mismatches: List[Mismatch] = field(default_factory=list)
    analysis: object = None  # the ModuleAnalysis (imports, functions, project index)


class FunctionWalker(Context):
    """Walks one function body (or the module's top level) and collects its key accesses."""

    def __init__(self, module: ModuleInfo, function: str, config: Config, analysis: object = None) -> None:
        self.module = module
        self.function = function
        self.config = config
        # the ModuleAnalysis that resolves calls to summaries; it holds its walkers, so this is a
        # weak reference: an analysis let go is freed at once, not by a full collection
        self._analysis = None if analysis is None else weakref.ref(analysis)
        self.class_name = ""
        self.returns: List[Value] = []
        self.returned_rows: List[Optional[RowSource]] = []  # what each return hands back, as rows
        self.state = State()
        self.accesses: List[KeyAccess] = []
        # id(access node) -> its statement; shared by the module's walkers (helpers' accesses)
        self.statement_of: Dict[int, ast.stmt] = getattr(analysis, "statement_of", {})
        self.consumed: Set[int] = set()
        self.chains: Dict[int, ChainInfo] = {}
        self.call_ids = itertools.count(1)
        # id(query call) -> the rows it returns; cursor name -> rows of its last execute
        self.row_sources: Dict[int, RowSource] = {}
        self.cursor_rows: Dict[str, RowSource] = {}
        self.row_vars: Dict[str, RowSource] = {}  # loop variable -> the rows it runs over
        self.row_reads: List[KeyAccess] = []  # row fields used that are not keys (pairing.remote_identity)
        # payload copies (analysis/payloads.py): object name -> the copy of a remote mapping onto
        # it, until it is saved; copies of a parameter onto a parameter, for the summary
        self.overwritten: Dict[str, Tuple[ast.AST, Value, str]] = {}
        self.copy_calls: Dict[int, Tuple[ast.AST, Value, str]] = {}
        self.param_copies: List[Tuple[Value, str]] = []
        self.extra_mismatches: List[Mismatch] = []
        self.if_ids = itertools.count(1)
        self.bypass_writes: List[KeyAccess] = []  # keys save() derives, not derived by bulk writes
        # origins that are a key in its stored form, as a record found ignoring case holds it
        self.stored_forms: Set[str] = set()

    @property
    def analysis(self) -> object:
        return None if self._analysis is None else self._analysis()

    # -- Context --------------------------------------------------------------------------

    def evaluator(self) -> Evaluator:
        state = self.state
        fields = {}
        if state.instances or state.records:  # (an evaluator is made for every value read)
            fields = {name: inst.fields for name, inst in state.instances.items()}
            fields.update({name: rec.fields for name, rec in state.records.items()})
        return Evaluator(state.values, fields, self.config.normalizers, self._returned_value)

    def _returned_value(self, call: ast.Call, text: str) -> Optional[Value]:
        """What a call to a summarized function returns, in terms of its arguments. A database
        read returns stored records, not a transformation of its arguments."""
        if id(call) in self.chains or id(call) in self.consumed:
            return fresh(text)
        analysis = self.analysis
        if analysis is None:
            return None
        resolved = analysis.resolve(call, self)  # type: ignore[attr-defined]
        arguments = None
        if resolved is None:
            runner = analysis.resolve_runner(call, self)  # type: ignore[attr-defined]
            if runner is None:
                return None
            resolved, arguments = runner
        return analysis.returned_value(call, resolved, self, text, arguments)  # type: ignore[attr-defined]

    def eval(self, node: ast.expr) -> Value:
        return self.evaluator().eval(node)

    def eval_in_comprehension(self, comp: ast.expr, node: ast.expr) -> Value:
        with self._comprehension_scope(comp):
            return self.eval(node)

    def comprehension(self, comp: Optional[ast.expr]) -> ContextManager[None]:
        return self._comprehension_scope(comp) if comp is not None else nullcontext()

    def eval_element(self, node: ast.expr) -> Value:
        node = self.resolve(node)
        if isinstance(node, ast.Subscript) and _has_slice(node):
            return self.eval_element(node.value)  # ``urls[:10]``: a slice of the collection, same elements
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            return self.eval_in_comprehension(node, node.elt)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            values = [self.eval(e) for e in tree.elements(node)]
            carriers = [v for v in values if v.origins]
            if not carriers:
                return Value(frozenset(), (), code(node))
            return Value(frozenset().union(*(v.origins for v in carriers)), carriers[0].steps, code(node))
        if isinstance(node, ast.Call) and last_name(node.func) in ("set", "list", "tuple", "frozenset", "sorted") \
                and (node.args or node.keywords):
            return self.eval_element(_call_args(node)[0][0])
        return element_of(self.eval(node))

    def add(self, kind: str, key: Key, node: ast.AST, role: str, call_id: int, via: str,
            saves: bool = False, assigned_at: Optional[ast.stmt] = None) -> None:
        target = (key.entity, key.field)
        if self.is_relation(target) and not is_remote(key.value.steps):
            # a record or its id has one spelling: a helper re-binding or resolving it changes no
            # key. One a remote answer chose stays: the service picks the record (remote identity)
            return
        model_rewrite, model_absorbs = self.model_key_facts(target)
        absorbs = key.absorbs | model_absorbs
        value, rewritten_by = key.value, key.rewritten_by
        rewrite = model_rewrite if kind == WRITE and saves else None
        if rewrite is not None:
            added = pairing.steps_not_applied(value.steps, rewrite.steps)
            if added:
                value = Value(value.origins, value.steps + added, value.text)
                rewritten_by = rewrite.by
        self.accesses.append(KeyAccess(kind, key.entity, key.field, value, node, role, call_id,
                                       absorbs, via, self.function, assigned_at, rewritten_by))
        if kind == WRITE and role == STORE and not saves and self.analysis is not None:
            for derived in self.analysis.derived_keys(target):  # type: ignore[attr-defined]
                labels = " then ".join(s.label for s in derived.steps)
                self.bypass_writes.append(KeyAccess(
                    WRITE, key.entity, derived.field, key.value, node, BYPASSED, call_id, absorbs, via,
                    self.function, rewritten_by=f"{derived.by} ({labels})"))

    def model_key_facts(self, target: Tuple[str, str]) -> Tuple[Optional[Rewrite], FrozenSet[str]]:
        """How the entity's model rewrites or compares this key: declared in this module, or in
        the project module the model is imported from."""
        if self.analysis is not None:
            return self.analysis.model_key_facts(target)  # type: ignore[attr-defined]
        return self.module.rewrites.get(target), self.module.field_absorbs.get(target, frozenset())

    def is_relation(self, target: Tuple[str, str]) -> bool:
        """The entity's model declares the field a relation (``models.relation_fields``), in this
        module or in the project module the model is imported from."""
        if self.analysis is not None:
            return self.analysis.is_relation(target)  # type: ignore[attr-defined]
        return target in self.module.relations

    def string_value(self, node: ast.expr) -> Optional[str]:
        node = self.resolve(node)
        if isinstance(node, ast.Constant):  # implicitly concatenated literals are one constant
            return node.value if isinstance(node.value, str) else None
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.string_value(node.left), self.string_value(node.right)
            return left + right if left is not None and right is not None else None
        return None

    def resolve(self, node: ast.expr) -> ast.expr:
        if type(node) is not ast.Name and type(node) is not ast.Call:
            return node  # (only a name or a container's ``values()`` stands for another expression)
        for _ in range(_MAX_RESOLVE_DEPTH):
            node = self._filled_container(node)
            if not isinstance(node, ast.Name):
                return node
            target = self.state.bound.get(node.id) or self.module.constants.get(node.id)
            if target is None:
                return node
            node = target
        return node

    def _filled_container(self, node: ast.expr) -> ast.expr:
        """A container filled element by element stands for a literal of its elements: a
        comprehension handed to ``extend`` as itself, else a list (``d.values()`` too)."""
        values_only = False
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args \
                and not node.keywords and node.func.attr == "values":
            node, values_only = node.func.value, True
        if not isinstance(node, ast.Name) or node.id not in self.state.filled:
            return node
        elements = self.state.filled[node.id]
        if self._is_dict(node.id):  # filled item by item: each element a one-item dict
            items = [e for e in elements if isinstance(e, ast.Dict) and e.keys]
            if values_only:
                return _list([self._element_expression(i.values[0]) for i in items])
            bound = self.state.bound.get(node.id)
            keys = list(bound.keys) if isinstance(bound, ast.Dict) else []
            values = list(bound.values) if isinstance(bound, ast.Dict) else []
            return ast.Dict(keys=keys + [i.keys[0] for i in items], values=values + [i.values[0] for i in items])
        if len(elements) == 1 and isinstance(elements[0], _COMPREHENSIONS):
            return elements[0]
        return _list([self._element_expression(e) for e in elements if not isinstance(e, _COMPREHENSIONS)])

    def _element_expression(self, node: ast.expr) -> ast.expr:
        """``rows.append(obj)`` after ``obj = M(...)``: the element is the constructor call."""
        if isinstance(node, ast.Name) and node.id not in self.state.filled:
            bound = self.state.bound.get(node.id)
            if isinstance(bound, ast.Call):
                return bound
        return node

    def fill(self, call: ast.Call) -> None:
        """``rows.append(x)``, ``rows.extend([...])``, ``seen.add(x)``: remember the elements of a
        container bound to an empty or literal list/set/dict."""
        func = call.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
            return
        name, method = func.value.id, func.attr
        args = positional_args(call)
        if method not in FILL_METHODS or len(args) != 1 or not self._is_container(name):
            return
        added: Tuple[ast.expr, ...] = (args[0],)
        if method == "extend":
            extended = self.resolve(args[0])
            if isinstance(extended, (ast.List, ast.Tuple, ast.Set)):
                added = tuple(tree.elements(extended))
            elif not isinstance(extended, _COMPREHENSIONS):
                return
        self.state.filled[name] = self.state.filled.get(name, ()) + added

    def fill_item(self, owner: str, key: ast.expr, value: ast.expr) -> None:
        """``by_url[u] = M(url=u)``: the dict's values are what a batch write gets."""
        if self._is_dict(owner):
            self.state.filled[owner] = self.state.filled.get(owner, ()) + (ast.Dict(keys=[key], values=[value]),)

    def _is_dict(self, name: str) -> bool:
        bound = self.state.bound.get(name)
        return isinstance(bound, ast.Dict) or (
            isinstance(bound, ast.Call) and last_name(bound.func) in DICT_CONSTRUCTORS)

    def _is_container(self, name: str) -> bool:
        if name in self.state.filled:
            return True
        bound = self.state.bound.get(name)
        if isinstance(bound, (ast.List, ast.Set, ast.Dict)):
            return True
        return isinstance(bound, ast.Call) and last_name(bound.func) in CONTAINER_CONSTRUCTORS

    def take_assigned(self, objs: ast.expr, entity: str, fields: Sequence[str]
                      ) -> List[Tuple[str, Value, ast.stmt]]:
        taken: List[Tuple[str, Value, ast.stmt]] = []
        for name in self._held_records(objs):
            record = self.state.records[name]
            if record.entity != entity:
                continue
            for field_name in fields:
                if field_name in record.pending:
                    value, statement = record.pending.pop(field_name)
                    taken.append((field_name, value, statement))
        return taken

    def _held_records(self, objs: ast.expr) -> List[str]:
        """Names of records in a list display or a list filled statement by statement."""
        if isinstance(objs, ast.Name) and objs.id in self.state.filled:
            elements: Sequence[ast.expr] = self.state.filled[objs.id]
        else:
            resolved = self.resolve(objs)
            elements = tree.elements(resolved) if isinstance(resolved, (ast.List, ast.Tuple, ast.Set)) else []
        names = [e.id for e in elements if isinstance(e, ast.Name) and e.id in self.state.records]
        return list(dict.fromkeys(names))

    def primary_key(self, entity: str) -> str:
        if self.analysis is not None:
            return self.analysis.primary_key(entity)  # type: ignore[attr-defined]
        return self.module.primary_keys.get(entity, "id")

    def is_validation_model(self, name: str) -> bool:
        if self.analysis is not None:
            return self.analysis.is_validation_model(name)  # type: ignore[attr-defined]
        return name in self.module.validation_models

    def enclosing_class(self) -> str:
        return self.class_name

    def managed_model(self) -> str:
        return self.module.managed_models.get(self.class_name, "")

    def user_model(self) -> str:
        if self.analysis is None:
            return django.DEFAULT_USER_MODEL
        return self.analysis.user_model()  # type: ignore[attr-defined]

    def related_model(self, attribute: str) -> str:
        """The model a related-object attribute holds: ``.user`` -> ``User`` (or the project's
        user model), ``.owner_profile`` -> ``OwnerProfile`` when the module knows that class."""
        if self.analysis is None:
            return ""
        name = "".join(part.capitalize() for part in attribute.split("_") if part)
        known = self.analysis.classes | set(self.analysis.imports)  # type: ignore[attr-defined]
        if name in known:
            return self.model_alias(name)
        return self.user_model() if attribute in django.USER_ATTRIBUTES else ""

    def model_alias(self, name: str) -> str:
        bound = self.state.bound.get(name)
        if name in self.module.user_model_aliases or (bound is not None and _is_user_model_call(bound)):
            return self.user_model()
        return name

    # -- statements -----------------------------------------------------------------------

    def walk(self, body: Sequence[ast.stmt]) -> None:
        lines: Optional[Dict[int, ast.stmt]] = None  # made when first needed: most bodies access nothing
        accesses = self.accesses
        for statement in body:
            before = len(accesses)
            self.statement(statement)
            if len(accesses) > before:  # most statements access nothing
                if lines is None:
                    lines = _statement_lines(body) if len(body) > 1 else _NO_STATEMENT_LINES
                self._note_statement(before, lines.get(id(statement), statement))

    def walk_suite(self, suite: Sequence[ast.stmt]) -> None:
        """A compound statement's body (a list of statements in ``ast``, however it is written)."""
        self.walk(suite)

    def _note_statement(self, before: int, statement: ast.stmt) -> None:
        """Remember the innermost statement of each new access: its line, for other modules."""
        for access in self.accesses[before:]:
            if access.node is not None:
                self.statement_of.setdefault(id(access.node), statement)

    def statement(self, node: ast.stmt) -> None:
        check_budget()
        _STATEMENT_READERS.get(type(node), FunctionWalker.small_statement)(self, node)

    def _if(self, node: ast.If) -> None:
        self.branches(node.test, node.body, node.orelse, node.col_offset)

    def _loop(self, node: ast.For) -> None:
        self.scan(node.iter)
        self.forget_target(node.target)
        if isinstance(node.target, ast.Name):
            self.state.values[node.target.id] = self.loop_variable(node.target.id, node.iter)
        rows = self.rows_of(node.iter)
        if rows is not None:
            self.bind_rows(node.target, rows, node.body, node.iter)
        copied = loop_copy(node)
        if copied is not None:
            self.note_copy(copied)
        self.walk_suite(node.body)
        self.walk_suite(node.orelse)

    def _while(self, node: ast.While) -> None:
        self.scan(node.test)
        self.walk_suite(node.body)
        self.walk_suite(node.orelse)

    def _with(self, node: ast.With) -> None:
        for item in node.items:
            self.scan(item.context_expr)
            if item.optional_vars is not None:
                self.forget_target(item.optional_vars)
                if isinstance(item.optional_vars, ast.Name):  # with urlopen(u) as resp: resp is the result
                    self.state.values[item.optional_vars.id] = self.eval(item.context_expr)
        self.walk_suite(node.body)

    def _try(self, node: ast.Try) -> None:
        self.walk_suite(node.body)
        for handler in node.handlers:
            self.walk_suite(handler.body)
        for extra in (node.orelse, node.finalbody):
            self.walk_suite(extra)

    def _match(self, node: ast.AST) -> None:
        self.scan(node.subject)  # type: ignore[attr-defined]
        for case in node.cases:  # type: ignore[attr-defined]
            self.walk_suite(case.body)

    def branches(self, test: ast.expr, body: Sequence[ast.stmt], orelse: Sequence[ast.stmt],
                 column: Optional[int] = None) -> None:
        """An ``if`` (at ``column``) and its arms; an ``orelse`` that is one ``if`` at the same
        column is an ``elif`` (one more arm), one indented deeper is an ``else`` block."""
        self.scan(test)
        statement = next(self.if_ids)
        before = self.state
        self.state = before.copy()
        start = len(self.accesses)
        self.walk_suite(body)
        self._mark_arm(start, (statement, 0))
        first = self.state
        self.state = before.copy()
        start = len(self.accesses)
        elif_ = _elif(orelse, column)
        if elif_ is not None:
            self.branches(elif_.test, elif_.body, elif_.orelse, elif_.col_offset)
        elif orelse:
            self.walk_suite(orelse)
        self._mark_arm(start, (statement, 1))
        self.state = merge_states(before, first, self.state)

    def _mark_arm(self, start: int, arm: Tuple[int, int]) -> None:
        for index in range(start, len(self.accesses)):
            access = self.accesses[index]
            self.accesses[index] = replace(access, arms=(arm,) + access.arms)

    def _assignment(self, node: ast.Assign) -> None:
        value = node.value
        if type(value) not in _NOTHING_TO_SCAN:
            self.scan(value)
        for target in node.targets:
            self.assign(target, value, node)

    def _annotated_assignment(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.scan(node.value)
            self.assign(node.target, node.value, node)

    def _augmented_assignment(self, node: ast.AugAssign) -> None:
        self.scan(node.value)
        if isinstance(node.target, ast.Name):
            name = node.target.id
            current = self.eval(node.target)
            self.state.values[name] = current.then(Step(FORMAT, "augmented assignment"), code(node))
            self.state.bound.pop(name, None)

    def _expression_statement(self, node: ast.Expr) -> None:
        value = node.value
        if type(value) not in _NOTHING_TO_SCAN:
            self.scan(value)
        if type(value) is ast.Call:
            self.fill(value)

    def _return(self, node: ast.Return) -> None:
        value = node.value
        if value is not None:
            if type(value) not in _NOTHING_TO_SCAN:
                self.scan(value)
            self.returns.append(self.eval(value))
            self.returned_rows.append(self.rows_of(value))

    def small_statement(self, node: ast.stmt) -> None:
        """The simple statements without a reader of their own (``assert``, ``raise``, ``del``):
        the calls in their expressions."""
        # ``raise E from cause``: the cause is context for the traceback, not a key; not scanned
        cause = node.cause if type(node) is ast.Raise else None  # type: ignore[attr-defined]
        for child in child_nodes(node):
            if type(child) not in _NOTHING_TO_SCAN and isinstance(child, ast.expr) and child is not cause:
                self.scan(child)

    def _read_nothing(self, node: ast.AST) -> None:
        """A statement or expression that holds nothing to read here (``import``, ``pass``, a
        name, a literal), or a nested function or class, walked on its own."""

    def assign(self, target: ast.expr, value: ast.expr, statement: ast.stmt) -> None:
        if isinstance(target, ast.Name):
            self.bind(target.id, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            names = tree.elements(target)
            unpacked = self.unpacked(names, value)
            for element in names:
                self.forget_target(element)
            self.state.values.update(unpacked)
            self.unpack_parts(names, value)
            chain = self.record_source(value)
            if chain is not None and chain.single_record and names and isinstance(names[0], ast.Name):
                self.state.records[names[0].id] = Record(chain.entity, _found_fields(names[0].id, chain.lookups, self.stored_forms))
                self.state.values.pop(names[0].id, None)
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
            self.assign_field(target.value.id, target.attr, value, statement)
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Attribute):
            owner = dotted_name(target.value)  # self.instance.user.email = v
            entity = self.related_model(target.value.attr)
            if owner and entity and owner not in self.state.records:
                self.state.records[owner] = Record(entity, {})
            if owner:
                self.assign_field(owner, target.attr, value, statement)
        elif isinstance(target, ast.Subscript):
            key = subscript_access(target, self)
            if key is not None:
                self.add(WRITE, key, statement, STORE, next(self.call_ids), code(target))
            elif isinstance(target.value, ast.Name):
                index = single_index(target)
                if index is not None:
                    self.fill_item(target.value.id, index, value)

    def unpacked(self, targets: Sequence[ast.expr], value: ast.expr) -> Dict[str, Value]:
        """What a parameter rebound by ``a, b = ...`` holds (``name, hash = found``: a field of
        the lookup's result, no longer the caller's argument), evaluated before any name is
        bound (``a, b = b, a``). Other names stay values of their own, known by their name."""
        params = self.parameter_names()
        if not any(isinstance(t, ast.Name) and t.id in params for t in targets):
            return {}
        if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(targets) \
                and not any(isinstance(e, ast.Starred) for e in (*targets, *value.elts)):
            return {t.id: self.eval(v) for t, v in zip(targets, value.elts) if isinstance(t, ast.Name) and t.id in params}
        base = self.eval(value)
        found = {}
        for index, target in enumerate(targets):
            if isinstance(target, ast.Starred):
                break
            if isinstance(target, ast.Name) and target.id in params:
                found[target.id] = unpacked_element(base, f"{code(value)}[{index}]", index)
        return found

    def parameter_names(self) -> Tuple[str, ...]:
        unit = getattr(self.analysis, "units", {}).get(self.function)
        return tuple(getattr(unit, "params", ()) or ())

    def unpack_parts(self, targets: Sequence[ast.expr], value: ast.expr) -> None:
        """``scheme, _, rest = url.partition("://")``: each name keeps a part of the key."""
        evaluated = self.eval(value)
        last = evaluated.steps[-1] if evaluated.steps else None
        if last is None or last.kind != PART or not last.label.endswith(")"):
            return
        for index, target in enumerate(targets):
            if isinstance(target, ast.Name):
                step = Step(PART, f"{last.label}[{index}]", last.node)
                self.state.values[target.id] = Value(evaluated.origins, evaluated.steps[:-1] + (step,), target.id)

    def bind(self, name: str, value: ast.expr) -> None:
        evaluated = self.eval(value)
        previous = self.state.bound.get(name)
        copy = self.copy_calls.get(id(_unwrap(value))) if self.copy_calls else None
        if copy is not None:  # ``book = copy_fields(book, payload)``: the copier returns its object
            self.overwritten[name] = copy
        self.state.forget(name)
        self.state.values[name] = evaluated
        if not _reaches(value, name, self.state.bound):  # ``x = [c for c in x]`` must not resolve to itself
            self.state.bound[name] = value
        else:
            refined = _refined(value, name, previous)
            if refined is not None:
                self.state.bound[name] = refined
        inner = _unwrap(value)
        chain = self.record_source(value)
        if chain is not None and chain.single_record and chain.entity:
            self.state.records[name] = Record(chain.entity, _found_fields(name, chain.lookups, self.stored_forms))
            self.state.values.pop(name, None)
        elif isinstance(inner, ast.Call) and self._validated_mapping(inner) is not None:
            mapping = self._validated_mapping(inner)
            self.state.instances[name] = Instance(last_name(inner.func) if not isinstance(inner.func, ast.Attribute)
                                                  else last_name(inner.func.value),
                                                  ValidatedFields(code(mapping), _short_call(inner)))  # type: ignore[arg-type]
        elif isinstance(inner, ast.Call) and self.constructed(inner) is not None:
            self.state.instances[name] = self.constructed(inner)  # type: ignore[assignment]
        elif isinstance(inner, ast.Call) and constructed_instances(inner) \
                and not self.is_validation_model(last_name(inner.func)):
            entity = last_name(inner.func)
            fields = {k: self.eval(v) for k, v in keyword_items(inner, self)}
            fields.update({FORWARDED_FIELDS: self.eval(m) for m in forwarded_mappings(inner, self)})
            self.state.instances[name] = Instance(entity, fields)
        elif isinstance(inner, ast.Attribute) and self.related_model(inner.attr):
            # ``user = self.instance.user``: a related record, saved through the variable
            self.state.records[name] = Record(self.related_model(inner.attr), {})

    def constructed(self, call: ast.Call) -> Optional[Instance]:
        """An instance of a class whose constructor the project shows: each positional argument
        is the field it is passed to, and the class's post-init rewrites (a dataclass's
        ``self.email = self.email.lower()``) apply to the fields as built. None when an
        argument cannot be placed (a ``*spread``, more positional arguments than known)."""
        entity = last_name(call.func)
        made = self.constructor(entity) if is_model_name(entity) else None
        if made is None or self.is_validation_model(entity):
            return None
        if any(isinstance(a, ast.Starred) for a in call.args) or len(call.args) > len(made.positional):
            return None
        fields = {name: self.eval(arg) for name, arg in zip(made.positional, call.args)}
        fields.update({name: self.eval(value) for name, value in keyword_items(call, self)})
        for name, steps in made.rewrites:
            if name in fields:
                value = fields[name]
                added = pairing.steps_not_applied(value.steps, steps)
                fields[name] = Value(value.origins, value.steps + added, value.text)
        return Instance(entity, fields)

    def constructor(self, entity: str) -> Optional[Constructor]:
        if self.analysis is not None:
            return self.analysis.constructor(entity)  # type: ignore[attr-defined]
        return self.module.constructors.get(entity)

    def _validated_mapping(self, call: ast.Call) -> Optional[ast.expr]:
        """The mapping a validation model is built from: ``M.model_validate(data)``,
        ``M.parse_obj(data)``, ``M(**data)``."""
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in VALIDATING_CONSTRUCTORS \
                and self.is_validation_model(last_name(func.value)):
            args = _call_args(call)
            if args and not args[0][1]:
                return args[0][0]
        if not call.args and len(call.keywords) == 1 and call.keywords[0].arg is None \
                and self.is_validation_model(last_name(func)):  # the one argument a ``**`` spread
            return call.keywords[0].value
        return None

    def record_source(self, value: ast.expr) -> Optional[ChainInfo]:
        """The read chain a single record comes from: ``M.objects.get(...)``, or
        ``session.scalars(select(M).where(...)).first()`` / ``session.execute(stmt).scalar_one()``."""
        inner = _unwrap(value)
        chain = self.chains.get(id(inner))
        if chain is not None or not isinstance(inner, ast.Call):
            return chain
        func = inner.func
        if not (isinstance(func, ast.Attribute) and func.attr in django.SINGLE_RECORD_METHODS):
            return None
        receiver = _unwrap(func.value)
        if isinstance(receiver, ast.Call) and (receiver.args or receiver.keywords):
            statement = _unwrap(self.resolve(_call_args(receiver)[0][0]))
            found = self.chains.get(id(statement))
            if found is not None and found.lookups:
                return ChainInfo(found.entity, found.lookups, single_record=True)
        return None

    def assign_field(self, owner: str, field_name: str, value: ast.expr, statement: ast.stmt) -> None:
        evaluated = self.eval(value)
        if owner in self.state.records:
            self.state.records[owner].pending[field_name] = (evaluated, statement)
        elif owner in self.state.instances:
            self.state.instances[owner].fields[field_name] = evaluated

    def forget_target(self, target: ast.expr) -> None:
        if isinstance(target, ast.Name):
            self.state.forget(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self.forget_target(element)
        elif isinstance(target, ast.Starred):
            self.forget_target(target.value)

    # -- expressions ----------------------------------------------------------------------

    def scan(self, node: ast.AST) -> None:
        """Find the database calls in an expression and report their accesses."""
        read = _EXPRESSION_READERS.get(type(node))  # by type: one look-up, most nodes need no reader
        if read is None:
            self._scan_children(node)
        else:
            read(self, node)

    def _scan_call(self, node: ast.Call) -> None:
        if id(node) in self.consumed:  # a link of a chain recognized from its outermost call
            self._scan_children(node)
            return
        info = self.configured_table_call(node) if self.config.tables else None
        if info is None:
            info = recognize(node, self, next(self.call_ids))
        if info is None:
            self.call_summary(node)
            func = node.func
            if type(func) is ast.Attribute:  # (only method calls persist or copy: ``obj.save()``)
                if func.attr in _PERSISTING_METHODS:
                    self.persist(node)
                if func.attr == "update":  # ``obj.__dict__.update(data)``
                    copied = update_copy(node)
                    if copied is not None:
                        self.note_copy(copied)
            self._scan_children(node)
            return
        self.consumed |= info.calls
        self.chains[id(node)] = info
        self._scan_children(node)
        self.note_rows(node, info)  # after the arguments: a subquery in them is known by then

    def _scan_subscript(self, node: ast.Subscript) -> None:
        self.store_read(node)
        self._scan_children(node)

    def _scan_compare(self, node: ast.Compare) -> None:
        if len(node.ops) == 1 and type(node.ops[0]) in _MEMBERSHIP:  # ``key in cache``
            self.membership_read(node)
        self._scan_children(node)

    def _scan_comprehension(self, node: ast.expr) -> None:
        with self._comprehension_scope(node):
            self._scan_children(node)

    def _scan_children(self, node: ast.AST) -> None:
        """``scan`` each child in source order, without the call for names and literals (half
        the children) and past the nodes whose one child is their value (``a.b.c``, ``k=v``,
        ``*rest``, ``await f()``), which ``scan`` itself does nothing for."""
        if type(node) is ast.Call and not (node.args and node.keywords):  # type: ignore[attr-defined]
            # (most calls: positional or named arguments only, already in source order)
            children = [node.func, *node.args, *node.keywords]  # type: ignore[attr-defined]
        else:
            children = source_order_children(node)
        for child in children:
            child_type = type(child)
            while child_type in _VALUE_WRAPPERS:
                child = child.value  # type: ignore[attr-defined]
                child_type = type(child)
            if child_type not in _NOTHING_TO_SCAN:  # (``scan`` inlined: a look-up per child)
                read = _EXPRESSION_READERS.get(child_type)
                if read is None:
                    self._scan_children(child)
                else:
                    read(self, child)

    def configured_table_call(self, call: ast.Call) -> Optional[ChainInfo]:
        """A call of a ``[tool.keydrift] tables`` helper: its table and dicts where configured."""
        if not self.config.tables or self.analysis is None:  # (the analysis's configuration: the same)
            return None
        entry = self.analysis.configured_table(call)  # type: ignore[attr-defined]
        if entry is None:
            return None
        def argument(where: object) -> Optional[ast.expr]:
            return self.analysis.configured_argument(call, where, self)  # type: ignore[attr-defined]
        table = entry.fixed_table
        if not table:
            table_expr = argument(entry.table)
            table = self.string_value(table_expr) if table_expr is not None else None
        info = ChainInfo("")
        if table:  # a table known only at run time: no access, not a guess
            reader = ChainReader(self, next(self.call_ids), call)
            info = emit_table_access(reader, entry.operation, table, argument(entry.keys), argument(entry.values))
        info.calls = {id(call)}
        return info

    def lambda_body(self, node: ast.Lambda) -> None:
        """A lambda handed to a cache wrapper or a runner (``get_or_set(k, lambda: load(u))``)
        runs with the values around it; its own parameters are unknown."""
        saved = self.state
        self.state = saved.copy()
        for param in parameters(node):
            self.state.forget(param.arg)
        for extra in (node.args.vararg, node.args.kwarg):
            if extra is not None:
                self.state.forget(extra.arg)
        try:
            self.scan(node.body)
        finally:
            self.state = saved

    def store_read(self, node: ast.Subscript) -> None:
        key = subscript_access(node, self)
        if key is not None:
            self.add(READ, key, node, LOOKUP, next(self.call_ids), code(node))

    # -- rows of queries ------------------------------------------------------------------

    def note_rows(self, call: ast.Call, info: ChainInfo) -> None:
        """Remember the rows a recognized query returns (and a cursor's, after its execute)."""
        rows: Optional[RowSource] = None
        if is_execute(call):
            args = positional_args(call)
            text = self.string_value(args[0]) if args else None
            rows = sql_rows(text) if text else None
            if rows is not None and isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name):
                self.cursor_rows[call.func.value.id] = rows
        elif not info.single_record:
            rows = chain_rows(call, info.entity, self)
        if rows is not None:
            self.row_sources[id(call)] = rows

    def rows_of(self, iterable: ast.expr) -> Optional[RowSource]:
        for node in row_calls(iterable, self.resolve):
            found = self.row_sources.get(id(node))
            if found is None and isinstance(node, ast.Name):
                found = self.cursor_rows.get(node.id)
            if found is None and isinstance(node, (ast.List, ast.Tuple)):
                found = self._element_rows(tree.elements(node))
            if found is None:
                found = self._returned_rows(node)
            if found is not None:
                return found
        return None

    def _element_rows(self, elements: Sequence[ast.expr]) -> Optional[RowSource]:
        """A list filled with rows of one loop (``found.append(row)``) or with one field of
        them (``urls.append(row["url"])``): rows, or one column of them."""
        found: Optional[RowSource] = None
        for element in elements:
            rows = self._element_row(element)
            if rows is None or (found is not None and rows != found):
                return None
            found = rows
        return found

    def _element_row(self, element: ast.expr) -> Optional[RowSource]:
        if isinstance(element, ast.Name):
            return self.row_vars.get(element.id)
        owner = element.value if isinstance(element, (ast.Attribute, ast.Subscript)) else None
        if not isinstance(owner, ast.Name) or owner.id not in self.row_vars:
            return None
        column = _row_field(element, owner.id, self.row_vars[owner.id])
        if column is None:
            return None
        return RowSource(column[0], (column,), (column[1],), True)

    def projection(self, node: ast.expr) -> Optional[Tuple[str, str]]:
        for inner in row_calls(node, self.resolve):
            if isinstance(inner, (ast.SetComp, ast.ListComp, ast.GeneratorExp)):
                return self._comprehension_projection(inner)
            rows = self.row_sources.get(id(inner)) or self._returned_rows(inner)
            if rows is not None:
                return rows.single()
        return None

    def _returned_rows(self, node: ast.expr) -> Optional[RowSource]:
        """The rows a summarized function returns (``done = audited_urls()``)."""
        if not isinstance(node, ast.Call) or self.analysis is None:
            return None
        resolved = self.analysis.resolve(node, self)  # type: ignore[attr-defined]
        return resolved.summary.rows if resolved is not None and resolved.deferred is None else None

    def _comprehension_projection(self, comp: ast.expr) -> Optional[Tuple[str, str]]:
        """``{r.url for r in Result.objects.all()}``, ``{row[0] for row in cur.fetchall()}``."""
        generators = comp.generators  # type: ignore[attr-defined]
        if len(generators) != 1:
            return None
        clause = generators[0]
        rows = self.rows_of(clause.iter)
        if rows is None:
            return None
        uses = _row_uses(clause.target, rows, [comp.elt])  # type: ignore[attr-defined]
        element = code(comp.elt)  # type: ignore[attr-defined]
        return next((column for text, column in uses if text == element), None)

    def bind_rows(self, target: ast.expr, rows: RowSource, body: Sequence[ast.stmt],
                  anchor: ast.expr) -> None:
        """A loop over query rows: each key field of the row the body uses was read by the
        row's own value (and so was every column the query compared it with)."""
        if isinstance(target, ast.Name):
            self.row_vars[target.id] = rows
            if rows.records and is_model_name(rows.entity):
                self.state.records[target.id] = Record(rows.entity, {})
        for text, column, used in _row_use_nodes(target, rows, body):
            partners = rows.partners(column)
            value = self._row_value(used)
            if not partners and natural_key_kind(column[1]) is None:
                # a job id, a status, a date: not a key the row is stored under, only how it was selected
                self.row_reads.append(KeyAccess(READ, column[0], column[1], value, anchor, LOOKUP,
                                                function=self.function))
                continue
            for entity, field_name in [column] + partners:
                self.add(READ, Key(entity, field_name, value), anchor, LOOKUP, next(self.call_ids), code(anchor))

    def _row_value(self, node: ast.expr) -> Value:
        """A row's field as the body will evaluate it (``row.url`` is a field of what ``row``
        is bound to), so the row's read and the body's uses of it are one value."""
        return self.eval(node)

    def membership_read(self, node: ast.Compare) -> None:
        """``key in cache`` reads the store (a comparison of one ``in`` or ``not in``)."""
        store = node.comparators[0]
        column = self.projection(store)
        if column is not None:  # ``url in done`` where done = set(Result.objects.values_list("url"))
            self.add(READ, Key(column[0], column[1], self.eval(node.left)), node, LOOKUP, next(self.call_ids),
                     code(node))
        elif is_store(store, self):
            subscript = ast.Subscript(value=store, slice=node.left, ctx=ast.Load())
            key = subscript_access(subscript, self)
            if key is not None:
                self.add(READ, key, node, LOOKUP, next(self.call_ids), code(node))

    def call_summary(self, call: ast.Call) -> None:
        """A call to a summarized function makes the accesses the function makes; a call to a
        configured reader or writer wrapper is a read or write by its key parameter."""
        analysis = self.analysis
        if analysis is None:
            return
        configured = self.config.readers or self.config.writers
        wrapper = analysis.configured_wrapper(call) if configured else None  # type: ignore[attr-defined]
        if wrapper is not None:
            kind, param, entity, field_name = wrapper
            argument = analysis.wrapper_argument(call, param, self)  # type: ignore[attr-defined]
            if argument is not None:
                self.add(kind, Key(entity, field_name, self.eval(argument)), call,
                         LOOKUP if kind == READ else STORE, next(self.call_ids), code(call), saves=kind == WRITE)
            return
        resolved = analysis.resolve(call, self)  # type: ignore[attr-defined]
        arguments = None
        if resolved is None:
            runner = analysis.resolve_runner(call, self)  # type: ignore[attr-defined]
            if runner is not None:
                resolved, arguments = runner
        if resolved is not None and resolved.summary.copies:
            self.copies_in_call(call, resolved)
        if resolved is not None and resolved.summary.accesses:
            imported = analysis.import_accesses(call, resolved, self, next(self.call_ids),  # type: ignore[attr-defined]
                                                arguments)
            self.accesses.extend(imported)

    def underived_keys(self) -> List[KeyAccess]:
        """Keys save() would derive, left out by a write that bypasses it and does not store them
        itself (``bulk_create([M(title=t, slug=s)])`` sets the slug)."""
        stored = {(a.call_id, a.entity, a.field) for a in self.accesses if a.kind == WRITE}
        return [w for w in self.bypass_writes if (w.call_id, w.entity, w.field) not in stored]

    # -- payload copies ---------------------------------------------------------------------

    def note_copy(self, copied: Copy) -> None:
        """Every key of a mapping assigned onto an object: remembered until the object is saved
        when the mapping came over the network, kept for the summary when both are parameters."""
        if not isinstance(copied.target, ast.Name):
            return
        mapping = self.eval(copied.mapping)
        if is_remote(mapping.steps):
            self.overwritten[copied.target.id] = (copied.node, mapping, "")
        elif mapping.origins:
            self.param_copies.append((mapping, copied.target.id))

    def copies_in_call(self, call: ast.Call, resolved: object) -> None:
        """A call to a function that copies a parameter mapping onto a parameter object."""
        for mapping_expr, target in self.analysis.copied_arguments(call, resolved):  # type: ignore[attr-defined]
            mapping = self.eval(mapping_expr)
            if not is_remote(mapping.steps):
                continue
            copy = (call, mapping, resolved.label)  # type: ignore[attr-defined]
            self.copy_calls[id(call)] = copy
            if isinstance(target, ast.Name):
                self.overwritten[target.id] = copy

    def save_overwritten(self, name: str, call: ast.Call) -> None:
        """``obj.save()`` after a remote mapping was copied onto obj: its key came from the payload."""
        copy = self.overwritten.pop(name, None)
        if copy is None:
            return
        node, mapping, via = copy
        record = self.state.records.get(name) or self.state.instances.get(name)
        entity = record.entity if record is not None else ""
        key = self.primary_key(entity) if entity else "id"
        read = KeyAccess(READ, entity or name, key, fresh(f"{name}.{key}"), node, LOOKUP, via=via,
                         function=self.function)
        write = KeyAccess(WRITE, entity or name, key, mapping, call, STORE, via=code(call), function=self.function)
        self.extra_mismatches.append(Mismatch("payload-copy", read, write))

    def persist(self, call: ast.Call) -> None:
        """``obj.save()``, ``session.add(obj)``, ``session.commit()``: pending key changes are written."""
        func = call.func
        if not isinstance(func, ast.Attribute):
            return
        method = func.attr
        receiver = func.value
        if method in django.SAVE_METHODS and isinstance(receiver, ast.Name):
            self.save_variable(receiver.id, call)
            self.save_overwritten(receiver.id, call)
        elif method in django.SAVE_METHODS and isinstance(receiver, ast.Attribute):
            owner = dotted_name(receiver)
            if owner in self.state.records:
                self.save_variable(owner, call)
        elif method in sqla.ADD_METHODS or method in sqla.ADD_ALL_METHODS:
            for arg in positional_args(call):
                elements = tree.elements(arg) if isinstance(arg, (ast.List, ast.Tuple)) else []
                for item in [arg] + elements:
                    if isinstance(item, ast.Name):
                        self.save_variable(item.id, call)
                        self.save_overwritten(item.id, call)
        if method in sqla.FLUSH_METHODS:
            for name, record in self.state.records.items():
                if record.pending:
                    self.save_variable(name, call)

    def save_variable(self, name: str, call: ast.Call) -> None:
        call_id = next(self.call_ids)
        via = code(call)
        record = self.state.records.get(name)
        if record is not None:
            for field_name, (value, statement) in record.pending.items():
                self.add(WRITE, Key(record.entity, field_name, value), call, STORE, call_id, via,
                         saves=True, assigned_at=statement)
            record.pending.clear()
        instance = self.state.instances.get(name)
        if instance is not None:
            for field_name, value in instance.fields.items():
                self.add(WRITE, Key(instance.entity, field_name, value), call, STORE, call_id, via, saves=True)

    def loop_variable(self, name: str, iterable: ast.expr) -> Value:
        """``for u in urls``: u is an element of ``urls`` (its own origin only when the iterable
        carries none: a name reused by two loops over two collections is two values)."""
        element = self.eval_element(iterable)
        return Value(element.origins or frozenset({name}), element.steps, name)

    @contextmanager
    def _comprehension_scope(self, comp: ast.expr) -> Iterator[None]:
        values = self.state.values
        saved: Dict[str, Optional[Value]] = {}
        for clause in getattr(comp, "generators", ()):
            single = clause.target.id if isinstance(clause.target, ast.Name) else None
            element = self.loop_variable(single, clause.iter) if single else None
            for name in _target_names(clause.target):
                saved.setdefault(name, values.get(name))
                values.pop(name, None)
            if single and element is not None:
                values[single] = element
        try:
            yield
        finally:
            for name, value in saved.items():
                if value is None:
                    values.pop(name, None)
                else:
                    values[name] = value


# How ``FunctionWalker.statement`` reads each statement (by its type: the walker meets every
# statement, so one look-up instead of a chain of ``isinstance`` tests); the rest are simple
# statements read by ``small_statement``. Definitions are walked on their own, and ``import``,
# ``pass`` or ``global`` hold no expression.
_STATEMENT_READERS = {
    ast.If: FunctionWalker._if, ast.While: FunctionWalker._while,
    **{kind: FunctionWalker._loop for kind in LOOP_TYPES},
    **{kind: FunctionWalker._with for kind in WITH_TYPES},
    **{kind: FunctionWalker._try for kind in _TRY_TYPES},
    **({_MATCH_TYPE: FunctionWalker._match} if _MATCH_TYPE is not None else {}),
    ast.Assign: FunctionWalker._assignment, ast.AnnAssign: FunctionWalker._annotated_assignment,
    ast.AugAssign: FunctionWalker._augmented_assignment, ast.Expr: FunctionWalker._expression_statement,
    ast.Return: FunctionWalker._return,
    **{kind: FunctionWalker._read_nothing for kind in (*_DEFINITIONS, ast.Import, ast.ImportFrom, ast.Pass,
                                                      ast.Break, ast.Continue, ast.Global, ast.Nonlocal)},
}
# How ``FunctionWalker.scan`` reads the expressions that need more than a scan of their children.
_EXPRESSION_READERS = {
    ast.Call: FunctionWalker._scan_call, ast.Subscript: FunctionWalker._scan_subscript,
    ast.Compare: FunctionWalker._scan_compare, ast.Lambda: FunctionWalker.lambda_body,
    **{kind: FunctionWalker._scan_comprehension for kind in _COMPREHENSIONS},
    **{kind: FunctionWalker._read_nothing for kind in (*_NOTHING_TO_SCAN, *_DEFINITIONS)},
}


def _row_uses(target: ast.expr, rows: RowSource, scope: Sequence[ast.AST]
              ) -> List[Tuple[str, Tuple[str, str]]]:
    """(expression text, column) for each row value used: the loop variable itself when each
    row is one value, the names of an unpacked row by position, ``row.f``, ``row["f"]`` and
    ``row[0]`` in ``scope``."""
    return [(text, column) for text, column, _ in _row_use_nodes(target, rows, scope)]


def _row_use_nodes(target: ast.expr, rows: RowSource, scope: Sequence[ast.AST]
                   ) -> List[Tuple[str, Tuple[str, str], ast.expr]]:
    """``_row_uses`` with the expression of each use (its first occurrence)."""
    if isinstance(target, (ast.Tuple, ast.List)):
        found = [(e.id, rows.by_index(i), e) for i, e in enumerate(tree.elements(target)) if isinstance(e, ast.Name)]
        return [(t, c, e) for t, c, e in found if c is not None]
    if not isinstance(target, ast.Name):
        return []
    if rows.flat:
        single = rows.single()
        return [(target.id, single, target)] if single is not None else []
    uses: Dict[str, Tuple[Tuple[str, str], ast.expr]] = {}
    for root in scope:
        for node in source_order_walk(root):
            column = _row_field(node, target.id, rows)
            if column is not None:
                uses.setdefault(code(node), (column, node))  # type: ignore[arg-type]
    return [(text, column, node) for text, (column, node) in uses.items()]


def _row_field(node: ast.AST, name: str, rows: RowSource) -> Optional[Tuple[str, str]]:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == name:
        return rows.by_name(node.attr)
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == name:
        index = single_index(node)
        if isinstance(index, ast.Constant) and isinstance(index.value, str):
            return rows.by_name(index.value)
        if isinstance(index, ast.Constant) and isinstance(index.value, int) and not isinstance(index.value, bool):
            return rows.by_index(index.value)
    return None


def _short_call(call: ast.Call) -> str:
    text = code(call)
    return text if len(text) <= 40 else text[:37] + "..."


def _mentions(node: ast.AST, name: str) -> bool:
    """Whether the expression uses the variable ``name`` (``session.query(M)`` names an
    attribute ``query`` and a keyword is a parameter name: neither is a use; a lambda's
    parameter of that name counts, as it did when parameters were names)."""
    return any((isinstance(n, ast.Name) and n.id == name) or (isinstance(n, ast.arg) and n.arg == name)
               for n in walk(node))


def _refined(value: ast.expr, name: str, previous: Optional[ast.expr]) -> Optional[ast.expr]:
    """``q = q.filter_by(email=e)`` with ``q`` bound to ``session.query(M)``: the whole chain
    ``session.query(M).filter_by(email=e)``, so a later ``q.first()`` reads with its criteria."""
    if not isinstance(previous, ast.Call):
        return None
    inner = _unwrap(value)
    if not isinstance(inner, ast.Call):
        return None
    base, links = unchain(inner)
    if not (isinstance(base, ast.Name) and base.id == name) or not links:
        return None
    # a fresh copy of the chain with ``previous`` (itself, not a copy) in place of the name; the
    # copied nodes keep their positions, so findings point at the code as written
    return deepcopy(inner, {id(base): previous})


def element_of(value: Value) -> Value:
    """An element of a collection value: origins ``urls`` become ``urls[*]``."""
    return Value(frozenset(f"{o}[*]" for o in value.origins), value.steps, value.text)


def _target_names(target: ast.expr) -> List[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for e in tree.elements(target) for n in _target_names(e)]
    return []


def _unwrap(node: ast.expr) -> ast.expr:
    return node.value if isinstance(node, ast.Await) else node


# -- ast shapes -----------------------------------------------------------------------------


def _call_args(call: ast.Call) -> List[Tuple[ast.expr, str]]:
    """Every argument in source order as (value, star)
    (``star`` is "*" or "**" for a spread, "" for a positional or named argument)."""
    return [(a.value, "*") if isinstance(a, ast.Starred)
            else (a.value, "" if a.arg is not None else "**") if isinstance(a, ast.keyword)
            else (a, "") for a in arguments_in_order(call)]


def _has_slice(node: ast.Subscript) -> bool:
    """``urls[:10]``, ``grid[1:, 0]``: a slice among the subscript's indices."""
    index = node.slice
    return isinstance(index, ast.Slice) or (
        isinstance(index, ast.Tuple) and any(isinstance(e, ast.Slice) for e in index.elts))


def single_index(node: ast.Subscript) -> Optional[ast.expr]:
    """The one index of ``d[k]`` (a parenthesized tuple ``d[(a, b)]`` is one index), or None
    for a slice or several indices (``d[a, b]``, whose tuple starts at its first element)."""
    index = node.slice
    if isinstance(index, ast.Slice):
        return None
    if isinstance(index, ast.Tuple) and index.elts:
        first = index.elts[0]
        if any(isinstance(e, ast.Slice) for e in index.elts) or (
                (index.lineno, index.col_offset) == (first.lineno, first.col_offset)):
            return None
    return index


def _list(elements: List[ast.expr]) -> ast.List:
    """A list display made by the walker (no position: its text is rendered, not read)."""
    return ast.List(elts=elements, ctx=ast.Load())


def _elif(orelse: Sequence[ast.stmt], column: Optional[int]) -> Optional[ast.If]:
    """The ``elif`` of an ``if`` at ``column``: ``ast`` writes it as an ``orelse`` holding one
    ``if``, like an ``else:`` block holding one, which is indented deeper."""
    if column is None or len(orelse) != 1 or not isinstance(orelse[0], ast.If):
        return None
    return orelse[0] if orelse[0].col_offset == column else None


_NO_STATEMENT_LINES: Dict[int, ast.stmt] = {}  # a body of one statement (only read)


def _statement_lines(body: Sequence[ast.stmt]) -> Dict[int, ast.stmt]:
    """The statement that stands for simple statements written after another on one line
    (``a = 1; b = f()``): the line, which stood for its first statement. Each statement of a
    one-line suite (``if x: a = 1; b = f()``) was noted on its own."""
    lines: Dict[int, ast.stmt] = {}
    for previous, statement in zip(body, body[1:]):
        # two simple statements on one line are separated by ``;``
        if previous.end_lineno != statement.lineno or isinstance(previous, _COMPOUND) \
                or isinstance(statement, _COMPOUND):
            continue
        if not lines and _one_line_suite(body, None):
            return {}
        lines[id(statement)] = lines.get(id(previous), previous)
    return lines


def _one_line_suite(body: Sequence[ast.stmt], header: Optional[ast.stmt]) -> bool:
    """Whether the body is written on its header's line (``if x: a; b``), not as an indented
    block: code before its first statement on that line. Without the source text, whether it
    starts on the header's first line."""
    first = body[0]
    before = segment(ast.Pass(lineno=first.lineno, col_offset=0, end_lineno=first.lineno,
                              end_col_offset=first.col_offset))
    if before is None:
        return header is not None and first.lineno == header.lineno
    return bool(before.strip().lstrip("\ufeff"))



# -- module ---------------------------------------------------------------------------------

def module_info(module: ast.Module) -> ModuleInfo:
    info = ModuleInfo()
    for statement in module.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
            if isinstance(target, ast.Name) and _is_string_literal(statement.value):
                info.constants[target.id] = statement.value
            elif isinstance(target, ast.Name) and _is_user_model_call(statement.value):
                info.user_model_aliases.add(target.id)
        elif isinstance(statement, ast.ClassDef):
            key = _primary_key_field(statement)
            if key:
                info.primary_keys[statement.name] = key
            if any(last_name(b.value if isinstance(b, ast.Starred) else b) in VALIDATION_BASES
                   for b in statement.bases):
                info.validation_models.add(statement.name)
            made = constructor(statement)
            if made is not None:
                info.constructors[statement.name] = made
    info.managed_models = managed_models(module)
    model_facts(module, info.rewrites, info.field_absorbs, info.derivations)
    info.relations = relation_fields(module)
    info.computed = database_computed_fields(module)
    return info



def _is_string_literal(node: ast.expr) -> bool:
    """A string or bytes literal, or implicitly concatenated ones (with f-strings among them;
    a lone f-string is not one: its value is made at run time)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (str, bytes))
    return isinstance(node, ast.JoinedStr) and concatenated_literals(node)



def _is_user_model_call(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and last_name(node.func) in django.USER_MODEL_GETTERS


def _primary_key_field(cls: ast.ClassDef) -> str:
    if cls.body and _one_line_suite(cls.body, cls):
        return ""  # ``class M(Model): id = ...``: a one-line suite, never read here
    for small in cls.body:
        if isinstance(small, ast.Assign):
            target: Optional[ast.expr] = small.targets[0]
        elif isinstance(small, (ast.AnnAssign, ast.AugAssign)):
            target = small.target
        else:
            continue
        value = small.value
        if isinstance(target, ast.Name) and isinstance(value, ast.Call):
            for name, arg in keyword_args(value):
                if name == "primary_key" and is_true(arg):
                    return target.id
    return ""
