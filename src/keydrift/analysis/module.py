"""One module's analysis: its functions, their summaries, and calls resolved to summaries —
in this module, or through imports in the project index."""

from __future__ import annotations

import ast
import os
from dataclasses import replace
from typing import Dict, FrozenSet, Iterator, List, Optional, Sequence, Set, Tuple

from keydrift.analysis import imports, pairing
from keydrift.analysis.boundary import is_known_normalizer
from keydrift.analysis.chains import FORWARDED_FIELDS
from keydrift.analysis.forms import form_writes
from keydrift.analysis.helpernames import is_runner_name
from keydrift.analysis.facts import NORMALIZER, READ, WRITE, KeyAccess, Step, Value
from keydrift.analysis.keyflow import FunctionWalker, Instance, ModuleFacts, RewrittenFields, module_info
from keydrift.analysis.models import Constructor, Derivation, Rewrite
from keydrift.analysis.receivers import (
    class_infos, param_annotations, plain_string, resolvable_by_name, unique_method,
)
from keydrift.analysis.summaries import FunctionSummary, SummaryAccess, summarize_access, summarize_copies, summarize_return, summarize_rows
from keydrift.diskcache import file_digest
from keydrift.analysis.tree import (
    FUNCTION_TYPES, WITH_TYPES, FunctionNode, is_super_call, is_true, keyword_arg, parameter_names,
    positional_args,
)
from keydrift.frameworks.django_orm import DEFAULT_USER_MODEL
from keydrift.analysis.values import dotted_name, last_name
from keydrift.frameworks import task_queues as tasks
from keydrift.frameworks.data_access import RUNNER_SUPPLIED_PARAMS
from keydrift.records import record
from keydrift.types import Config, TableWrapper

STATIC_DECORATORS = frozenset({"staticmethod"})


@record
class FunctionUnit:
    """A function or method of the module, as the walker and its callers see it."""

    name: str  # qualified inside the module: "save_result", "Repo.save"
    node: FunctionNode
    class_name: str
    params: Tuple[str, ...]  # what callers pass (self/cls dropped)


@record
class Resolved:
    """A call resolved to the summary of the function it calls, and how to name it in messages."""

    summary: FunctionSummary
    label: str  # "save_result()" / "repo.save_result()"
    local: bool  # defined in this module (positions available)
    # a deferred call (``task.delay(u)``, ``queue.enqueue(f, u)``): the call the function will
    # get, whose arguments map to its parameters; it returns a handle, not the function's value
    deferred: Optional[ast.Call] = None


def _params(node: FunctionNode, in_class: bool) -> Tuple[str, ...]:
    names = list(parameter_names(node))
    static = any(last_name(d) in STATIC_DECORATORS for d in node.decorator_list)
    if (in_class and not static or _bound_task(node)) and names:
        names = names[1:]
    return tuple(names)


def _bound_task(node: FunctionNode) -> bool:
    """``@app.task(bind=True)``: the first parameter is the task itself, not an argument."""
    return any(isinstance(call, ast.Call) and any(k.arg == "bind" and is_true(k.value) for k in call.keywords)
               for call in node.decorator_list)


# Statements whose body may define functions (under a condition, a ``try``, a ``with``)
_BLOCK_TYPES = (ast.If, ast.Try, *WITH_TYPES)
# What ``function_units`` looks into, by exact type (every statement of a module is asked)
_UNIT_HOLDERS = frozenset({*FUNCTION_TYPES, ast.ClassDef, *_BLOCK_TYPES})


def function_units(body: Sequence[ast.stmt], prefix: str = "", class_name: str = "") -> List[FunctionUnit]:
    """The functions defined in ``body``, each followed by those defined in it, in source order."""
    units: List[FunctionUnit] = []
    _add_units(body, prefix, class_name, units)
    return units


def _add_units(body: Sequence[ast.stmt], prefix: str, class_name: str, units: List[FunctionUnit]) -> None:
    for node in body:
        if type(node) not in _UNIT_HOLDERS:
            continue
        if isinstance(node, FUNCTION_TYPES):
            name = f"{prefix}{node.name}"
            units.append(FunctionUnit(name, node, class_name, _params(node, bool(class_name))))
            _add_units(node.body, f"{name}.", "", units)
        elif isinstance(node, ast.ClassDef):
            _add_units(node.body, f"{prefix}{node.name}.", node.name, units)
        elif isinstance(node, _BLOCK_TYPES):
            _add_units(node.body, prefix, class_name, units)


def import_map(module: ast.Module, module_name: str, is_package: bool) -> Dict[str, Tuple[str, str]]:
    """Local name -> (module, symbol); symbol "" when the name is a module. The top-level
    imports, and those inside functions and blocks (``imports.inner_bindings``: an import put in
    the function that uses it to break an import cycle) whose name the module binds no other
    way: the calls of any function that says the name are resolved through it. A name imported
    in two places from two different sources, or also bound at the top level (a variable, a
    function, a class), is left out: which one a call means is not known."""
    found = {local: (source, symbol) for local, source, symbol in imports.bindings(module, module_name, is_package)
             if not source.startswith(".")}
    inner: Dict[str, Set[Tuple[str, str]]] = {}
    for local, source, symbol in imports.inner_bindings(module, module_name, is_package):
        if local not in found:
            inner.setdefault(local, set()).add((source, symbol))
    if inner:
        taken = _bound_at_top_level(module)
        for local, sources in inner.items():
            source, symbol = next(iter(sources))
            if len(sources) == 1 and local not in taken and not source.startswith("."):
                found[local] = (source, symbol)
    return found


def _bound_at_top_level(module: ast.Module) -> Set[str]:
    """The names the module's top level binds other than by an import (``_names_bound_by``)."""
    return {name for statement in module.body for name in _names_bound_by(statement, imports_too=False)}


def module_instances(module: ast.Module, classes: Set[str], imported: Dict[str, Tuple[str, str]]) -> Dict[str, str]:
    """Module-level variables each bound once, to an instance of a class the module defines or
    imports by name (``accounts = AccountRepo()``, a service or repository made once for the
    whole module): variable -> that class's name in the module. A variable bound again at the
    top level is left out (which instance a call meets is not known)."""
    made: Dict[str, str] = {}
    for statement in module.body:
        if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
            continue
        target, value = statement.targets[0], statement.value
        if isinstance(target, ast.Name) and isinstance(value, ast.Call) and isinstance(value.func, ast.Name) \
                and (value.func.id in classes or _names_a_class(value.func.id, imported)):
            made[target.id] = value.func.id
    if not made:
        return made
    bound: Dict[str, int] = {}
    for statement in module.body:
        for name in _names_bound_by(statement):
            bound[name] = bound.get(name, 0) + 1
    return {name: cls for name, cls in made.items() if bound.get(name) == 1 and name not in imported}


def _names_a_class(name: str, imported: Dict[str, Tuple[str, str]]) -> bool:
    """An imported name spelled as a class is (``AccountRepo``, not ``make_repo``)."""
    return bool(imported.get(name, ("", ""))[1]) and name[:1].isupper()


def _names_bound_by(statement: ast.stmt, imports_too: bool = True) -> Iterator[str]:
    """The names a top-level statement binds, its blocks' statements included: a function or a
    class, a variable (assigned, loop, ``with`` and ``except`` targets), and with ``imports_too``
    an import (``auth = importlib.import_module("app.auth")`` is one)."""
    pending: List[ast.AST] = [statement]
    while pending:
        node = pending.pop()
        if isinstance(node, (*FUNCTION_TYPES, ast.ClassDef)):
            yield node.name
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if imports_too:
                yield from ((alias.asname or alias.name).split(".")[0] for alias in node.names)
            continue
        targets: List[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets) if imports_too or imports.module_named(node) is None else []
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)):
            targets = [node.target]
        elif isinstance(node, WITH_TYPES):
            targets = [item.optional_vars for item in node.items if item.optional_vars is not None]
        elif isinstance(node, ast.ExceptHandler) and node.name:
            yield node.name
        yield from (name.id for target in targets for name in ast.walk(target) if isinstance(name, ast.Name))
        for holder in ("body", "orelse", "finalbody", "handlers"):
            pending.extend(getattr(node, holder, ()))


# Packages that hand on an instance one of their modules made, followed from an importer
_REEXPORTS_FOLLOWED = 2


class ModuleAnalysis:
    """Walks every function of a module once; summaries are computed on demand, so a caller
    sees its callees' summaries wherever they are defined."""

    def __init__(self, module: ast.Module, path: str, config: Config, project: object = None,
                 module_name: str = "", is_package: bool = False, file: str = "") -> None:
        self.module = module
        self.path = path
        self.config = config
        self.project = project
        self.module_name = module_name
        self.is_package = is_package
        self.file = file or os.path.abspath(path)  # where imports are looked up from
        self.info = module_info(module)
        self.units = {u.name: u for u in function_units(module.body)}
        self.classes = {n.name for n in module.body if isinstance(n, ast.ClassDef)}
        self.imports = import_map(module, module_name, is_package)
        # the names only an import inside a function or block binds (``import_map``)
        self.inner_imported = frozenset(self.imports).difference(
            local for local, _, _ in imports.bindings(module, module_name, is_package))
        self.class_infos = class_infos(module)
        self.instances = module_instances(module, self.classes, self.imports)
        self.module_imports: Optional[List[str]] = None
        self.app_imports: Dict[str, List[str]] = {}  # package -> modules its apps.py imports
        self.annotations: Dict[str, Dict[str, str]] = {}  # function -> parameter -> class
        self.walkers: Dict[str, FunctionWalker] = {}
        self.statement_of: Dict[int, ast.AST] = {}  # filled by the walkers: id(access node) -> statement
        self.summaries: Dict[str, Optional[FunctionSummary]] = {}
        self.in_progress: Set[str] = set()
        # summaries asked for while being made (a recursion): what was made then depends on
        # which function of the cycle was walked first
        self.recursions = 0
        self._facts: Optional[ModuleFacts] = None

    # -- walking and summaries --------------------------------------------------------------

    def walker(self, name: str) -> FunctionWalker:
        if name not in self.walkers:
            walker = FunctionWalker(self.info, name, self.config, self)
            if name == "<module>":
                walker.walk(self.module.body)
                form_writes(self.module, self, walker)
            else:
                unit = self.units[name]
                walker.class_name = unit.class_name
                self._rewritten_parameters(name, walker)
                walker.walk_suite(unit.node.body)
            self.walkers[name] = walker
        return self.walkers[name]

    def summary(self, name: str) -> Optional[FunctionSummary]:
        if name in self.summaries:
            return self.summaries[name]
        if name in self.in_progress:
            self.recursions += 1
            return None  # recursion: the summary is being computed
        if name not in self.units:
            return None
        self.in_progress.add(name)
        try:
            unit = self.units[name]
            walker = self.walker(name)
            accesses = tuple(filter(None, (summarize_access(a, unit.params, ()) or _forwarded(a, unit)
                                           for a in walker.accesses)))
            summary = FunctionSummary(name, unit.params, accesses, summarize_return(walker.returns, unit.params, walker.stored_forms),
                                      summarize_rows(walker.returned_rows),
                                      summarize_copies(walker.param_copies, unit.params))
        finally:
            self.in_progress.discard(name)
        self.summaries[name] = summary
        return summary

    def facts(self, path: str = "") -> ModuleFacts:
        """The module's facts for the rules, ``path`` naming the module in them (default: the
        analysis's). Computed once: the project index computes them when it summarizes a module
        for an importer (walking in this order, as a check would), and the module's own check
        takes them over."""
        if self._facts is None:
            facts = ModuleFacts(self.module, self.path, self.config, self.info)  # kept without this analysis (no cycle)
            for name in ["<module>", *self.units]:
                walker = self.walker(name)
                facts.accesses.extend(walker.accesses)
                scope = self.units[name].node if name in self.units else self.module
                facts.mismatches.extend(pairing.mismatches(walker.accesses + walker.underived_keys(), walker.row_reads, scope))
                facts.mismatches.extend(walker.extra_mismatches)
            self._facts = facts
        return replace(self._facts, path=path or self._facts.path, analysis=self)

    # -- models defined elsewhere -----------------------------------------------------------

    def imported_class(self, name: str) -> Optional[Tuple[object, str]]:
        """(export of the project module a class is imported from, its name there)."""
        if name in self.classes or name not in self.imports or self.project is None:
            return None
        module, symbol = self.imports[name]
        if not symbol:
            return None
        return self.project.module_export(module, self.file), symbol  # type: ignore[attr-defined]

    def primary_key(self, entity: str) -> str:
        """The primary key field a model declares, here or in the module it is imported from."""
        if entity in self.info.primary_keys:
            return self.info.primary_keys[entity]
        found = self.imported_class(entity)
        return found[0].primary_keys.get(found[1], "id") if found else "id"  # type: ignore[attr-defined]

    def is_validation_model(self, name: str) -> bool:
        """A pydantic-style class, declared here or in the module it is imported from."""
        if name in self.info.validation_models:
            return True
        found = self.imported_class(name)
        return bool(found) and found[1] in found[0].validation_models  # type: ignore[index,attr-defined]

    def constructor(self, name: str) -> Optional[Constructor]:
        """How calling a class fills its fields, declared here or where it is imported from."""
        if name in self.info.constructors:
            return self.info.constructors[name]
        found = self.imported_class(name)
        return found[0].constructors.get(found[1]) if found else None  # type: ignore[attr-defined]

    def derived_keys(self, target: Tuple[str, str]) -> Tuple[Derivation, ...]:
        """Keys the entity's save() derives from this field, declared here or where it is imported from."""
        if target in self.info.derivations:
            return self.info.derivations[target]
        found = self.imported_class(target[0])
        return found[0].derivations.get((found[1], target[1]), ()) if found else ()  # type: ignore[attr-defined]

    def is_relation(self, target: Tuple[str, str]) -> bool:
        """A relation field of the model (``models.relation_fields``), declared here or where the
        model is imported from (by name, or through an imported module: ``m.Order``)."""
        entity = target[0]
        if target in self.info.relations:
            return True
        found = self.imported_class(entity)
        if found is not None:
            return (found[1], target[1]) in found[0].relations  # type: ignore[attr-defined]
        if entity in self.classes or entity in self.imports or self.project is None:
            return False
        return entity[:1].isupper() and any(
            target in self.project.module_export(m, self.file).relations  # type: ignore[attr-defined]
            for m in self._imported_modules())

    def is_database_computed(self, target: Tuple[str, str]) -> bool:
        """A field whose value the database computes (``models.database_computed_fields``),
        declared here or where the model is imported from."""
        if target in self.info.computed:
            return True
        found = self.imported_class(target[0])
        return found is not None and (found[1], target[1]) in found[0].computed  # type: ignore[attr-defined]

    def model_key_facts(self, target: Tuple[str, str]) -> Tuple[Optional[Rewrite], FrozenSet[str]]:
        entity, field_name = target
        if entity in self.classes or self.project is None:
            return self.info.rewrites.get(target), self.info.field_absorbs.get(target, frozenset())
        if entity not in self.imports:
            return self._facts_through_module_alias(target)
        module, symbol = self.imports[entity]
        if not symbol:
            return None, frozenset()
        export = self.project.module_export(module, self.file)  # type: ignore[attr-defined]
        remote = (symbol, field_name)
        rewrite = export.rewrites.get(remote) or self._receiver_rewrite(module, remote)
        return rewrite, export.absorbs.get(remote, frozenset())

    def _receiver_rewrite(self, module: str, target: Tuple[str, str]) -> Optional[Rewrite]:
        """A ``pre_save`` receiver of the model in a module its app's ``apps.py`` imports:
        Django connects receivers by importing their module in ``AppConfig.ready()``, and
        nothing else need import it."""
        for name in self._signal_modules(module.rpartition(".")[0]):
            rewrite = self.project.module_export(name, self.file).rewrites.get(target)  # type: ignore[attr-defined]
            if rewrite is not None:
                return rewrite
        return None

    def _signal_modules(self, package: str) -> List[str]:
        """The project modules of ``package`` that its ``apps.py`` imports (in ``ready()`` or
        at its top level)."""
        if package not in self.app_imports:
            self.app_imports[package] = []
            apps = f"{package}.apps" if package else ""
            path = self.project.path_for(apps, self.file) if apps else None  # type: ignore[attr-defined]
            if path is not None:
                self.project.module_export(apps, self.file)  # type: ignore[attr-defined]  # a dependency
                self.app_imports[package] = [name for name in _imported_names(path, apps)
                                             if name.startswith(package + ".") and name != apps
                                             and self.project.path_for(name, self.file) is not None]  # type: ignore[attr-defined]
        return self.app_imports[package]

    def _facts_through_module_alias(self, target: Tuple[str, str]) -> Tuple[Optional[Rewrite], FrozenSet[str]]:
        """A model reached through an imported module (``core_models.Account``): its facts are
        in the first imported project module that declares them."""
        local = self.info.rewrites.get(target), self.info.field_absorbs.get(target, frozenset())
        if local[0] is not None or local[1] or not target[0][:1].isupper():
            return local
        for module in self._imported_modules():
            export = self.project.module_export(module, self.file)  # type: ignore[attr-defined]
            if target in export.rewrites or target in export.absorbs:
                return export.rewrites.get(target), export.absorbs.get(target, frozenset())
        return local

    def _imported_modules(self) -> List[str]:
        """Project modules imported as modules (``import app.models as m``, ``from app import
        models``), in import order."""
        if self.module_imports is None:
            found: List[str] = []
            for module, symbol in self.imports.values():
                full = f"{module}.{symbol}" if module and symbol else (symbol or module)
                if self.project.path_for(full, self.file) is not None:  # type: ignore[attr-defined]
                    found.append(full)
            self.module_imports = found
        return self.module_imports

    # -- call resolution --------------------------------------------------------------------

    def resolve(self, call: ast.Call, walker: FunctionWalker) -> Optional[Resolved]:
        func = call.func  # (deferred_call's first test in place: most calls are not deferred)
        deferred = deferred_call(call) if isinstance(func, ast.Attribute) and func.attr in _DEFERRING_METHODS else None
        if deferred is not None:
            found = self._resolve_direct(deferred, walker)
            return replace(found, label=f"{dotted_name(call.func) or 'task'}()", deferred=deferred) if found else None
        return self._resolve_direct(call, walker)

    def _resolve_direct(self, call: ast.Call, walker: FunctionWalker) -> Optional[Resolved]:
        func = call.func
        if isinstance(func, ast.Name):
            if func.id not in self.units and func.id not in self.imports or self._a_parameter_here(func.id, walker):
                return None  # (a builtin, a class, a local callable: nothing ``_by_name`` finds)
            return self._by_name(func.id, "", f"{func.id}()")
        if not isinstance(func, ast.Attribute):
            return None
        method = func.attr
        owner = func.value
        if isinstance(owner, ast.Name):
            label = f"{owner.id}.{method}()"
            if owner.id in ("self", "cls") and walker.class_name:
                return self._method_of_class(walker.class_name, method, label)
            class_name = self._class_of_variable(owner.id, walker)
            if class_name:
                return self._method_of_class(class_name, method, label)
            if owner.id in self.classes or owner.id in self.imports and not self._a_parameter_here(owner.id, walker):
                return self._by_name(owner.id, method, label)
            # nothing else tells a name's class (``_receiver_class`` would ask the same again)
            return self._only_definition(method, label)
        if is_super_call(owner):
            # a base's method, never the class's own (whose summary is being made); left
            # unresolved: a base the project defines is an entry point of its own (a framework
            # calls it for other classes), its accesses reported where it makes them
            return None
        dotted = dotted_name(owner)  # the callee's name is this and the method's (one walk of the chain)
        label = f"{dotted}.{method}()" if dotted else f"{method}()"
        if dotted in self.imports and not self.imports[dotted][1]:
            return self._external(self.imports[dotted][0], method, label)
        through_module = self._module_variable(owner)
        if through_module is not None:  # ``repo.accounts.add()``, ``repo`` a module
            found = self._instance_method(through_module[0], through_module[1], method, label)
            if found is not None:
                return found
        class_name = self._receiver_class(owner, walker)
        found = self._method_of_class(class_name, method, label) if class_name else None
        # ``self.store.save_user()`` in a class's own ``save_user``: a delegation to the object
        # it holds, never the method itself (whose summary is the one being made)
        held = isinstance(owner, ast.Attribute) and isinstance(owner.value, ast.Name) and owner.value.id == "self"
        return found or self._only_definition(method, label, walker.class_name if held else "")

    def _a_parameter_here(self, name: str, walker: FunctionWalker) -> bool:
        """Whether ``name``, bound by an import inside another function only, is a parameter of
        the function walked: there it is what the caller passes, not that import."""
        return name in self.inner_imported and self._parameter_of(name, walker)

    def _module_variable(self, owner: ast.expr) -> Optional[Tuple[str, str]]:
        """(module, variable) of ``m.variable`` where ``m`` is an imported module
        (``import app.repo as m``, or ``from app import repo`` naming a module of the project)."""
        if not isinstance(owner, ast.Attribute) or not isinstance(owner.value, ast.Name) or self.project is None:
            return None
        bound = self.imports.get(owner.value.id)
        if bound is None:
            return None
        module = bound[0] if not bound[1] else f"{bound[0]}.{bound[1]}" if bound[0] else bound[1]
        if self.project.path_for(module, self.file) is None:  # type: ignore[attr-defined]
            return None
        return module, owner.attr

    def _class_of_variable(self, name: str, walker: FunctionWalker) -> str:
        """A variable bound to ``Repo(...)``, or a parameter annotated ``Repo``."""
        bound = walker.state.bound.get(name)
        if isinstance(bound, ast.Call) and isinstance(bound.func, ast.Name):
            cls = bound.func.id
            if cls in self.classes or cls in self.imports:
                return cls
        if name in walker.state.values and name not in self._annotations(walker.function):
            return ""
        cls = self._annotations(walker.function).get(name, "")
        if not cls and name in self.instances and not self._parameter_of(name, walker):
            cls = self.instances[name]  # ``accounts = AccountRepo()`` at the top level
        return cls if cls in self.classes or cls in self.imports else ""

    def exported_instances(self) -> Dict[str, Tuple[str, str]]:
        """The module-level instances an importer may call methods of: variable -> (the module
        that defines its class, the class's name there)."""
        found: Dict[str, Tuple[str, str]] = {}
        for name, cls in self.instances.items():
            if cls in self.classes and self.module_name:
                found[name] = (self.module_name, cls)
            elif cls in self.imports and self.imports[cls][0]:
                found[name] = self.imports[cls]
        return found

    def exported_reexports(self) -> Dict[str, Tuple[str, str]]:
        """What a package's ``__init__`` takes from its modules under a lowercase name and hands
        on (``from .crud_user import user``: an instance, or a function): name -> (module,
        name there). Other modules' imports are not looked through (``_instance_method``)."""
        if not self.is_package:
            return {}
        return {name: bound for name, bound in self.imports.items()
                if bound[1] and name[:1].islower() and name not in self.inner_imported}

    def _parameter_of(self, name: str, walker: FunctionWalker) -> bool:
        unit = self.units.get(walker.function)
        return unit is not None and name in parameter_names(unit.node)

    def _rewritten_parameters(self, function: str, walker: FunctionWalker) -> None:
        """A parameter annotated with a class that rewrites fields in every instance it builds
        (``data: UserCreate`` whose ``@field_validator("email")`` lowercases): ``data.email``
        carries the rewrite, whoever built the object (a web framework, from the request)."""
        for param, class_name in self._annotations(function).items():
            made = self.constructor(class_name)
            if made is not None and made.rewrites:
                walker.state.instances[param] = Instance(class_name, RewrittenFields(param, dict(made.rewrites)))

    def _annotations(self, function: str) -> Dict[str, str]:
        if function not in self.annotations:
            unit = self.units.get(function)
            self.annotations[function] = param_annotations(unit.node) if unit is not None else {}
        return self.annotations[function]

    def _receiver_class(self, owner: ast.expr, walker: FunctionWalker, depth: int = 0) -> str:
        """The class of ``self.repo`` (assigned or annotated in the class), of ``repo`` and of
        ``self.get_repo()`` / ``self.hs.get_repo()`` (an accessor annotated ``-> Repo``)."""
        if depth > 4:
            return ""
        if isinstance(owner, ast.Name):
            if owner.id in ("self", "cls"):
                return walker.class_name
            return self._class_of_variable(owner.id, walker)
        if isinstance(owner, ast.Attribute):
            holder = self._receiver_class(owner.value, walker, depth + 1)
            cls = self._class_member(holder, owner.attr, "attributes")
        elif isinstance(owner, ast.Call) and isinstance(owner.func, ast.Attribute):
            holder = self._receiver_class(owner.func.value, walker, depth + 1)
            cls = self._class_member(holder, owner.func.attr, "returns")
        else:
            return ""
        return cls if cls in self.classes or cls in self.imports else ""

    def _class_member(self, class_name: str, name: str, table: str, depth: int = 0) -> str:
        """An attribute's or accessor's class, declared in the class or a base of this module."""
        info = self.class_infos.get(class_name)
        if info is None or depth > 4:
            return ""
        found = getattr(info, table).get(name, "")
        for base in info.bases if not found else ():
            found = self._class_member(base.rsplit(".", 1)[-1], name, table, depth + 1)
            if found:
                break
        return found

    def method_of_class(self, class_name: str, method: str) -> Optional[Resolved]:
        """``Class.method`` of the project as the class (of this module, or imported) defines or
        inherits it: a form's field class's conversion (``analysis/forms.py``)."""
        return self._method_of_class(class_name, method, f"{class_name}.{method}()")

    def _method_of_class(self, class_name: str, method: str, label: str, depth: int = 0) -> Optional[Resolved]:
        """The method as the class defines or inherits it (bases of this module, or imported)."""
        found = self._by_name(class_name, method, label)
        return found if found is not None else self._inherited(class_name, method, label, depth)

    def _inherited(self, class_name: str, method: str, label: str, depth: int = 0) -> Optional[Resolved]:
        """The method as a base of the class defines it (this module's, or imported)."""
        info = self.class_infos.get(class_name)
        if info is None or depth > 4:
            return None
        found = None
        for base in info.bases:
            head = base.split(".", 1)[0]
            if base in self.classes:
                found = self._method_of_class(base, method, label, depth + 1)
            elif head in self.imports:
                found = self._by_name(base if "." not in base else head, method if "." not in base
                                      else f"{base.split('.', 1)[1]}.{method}", label)
            if found is not None:
                return found
        return None

    def user_model(self) -> str:
        """The project's user model: ``AUTH_USER_MODEL = "accounts.Account"`` -> "Account"."""
        if self.project is None:
            return DEFAULT_USER_MODEL
        return self.project.user_model() or DEFAULT_USER_MODEL  # type: ignore[attr-defined]

    def _only_definition(self, method: str, label: str, holder: str = "") -> Optional[Resolved]:
        """A receiver nothing explains: the project's only class defining a distinctively named
        method (``store.add_threepid()``), unless that class is ``holder``, the class whose
        attribute the receiver is."""
        if not resolvable_by_name(method):
            return None
        if self.project is None:
            owners = [name for name in self.units if name.count(".") == 1 and name.endswith("." + method)]
            owners = [name for name in owners if name.split(".", 1)[0] != holder]
            return self._local(owners[0], label) if len(owners) == 1 else None
        found = unique_method(self.project.root, method, self.project.module_name_of,  # type: ignore[attr-defined]
                             self.project.cache)  # type: ignore[attr-defined]
        if found is None:
            return None
        module, qualified = found
        if module == self.module_name and qualified.split(".", 1)[0] == holder:
            return None
        if module == self.module_name:
            return self._local(qualified, label)
        return self._external(module, qualified, label)

    def _by_name(self, name: str, member: str, label: str) -> Optional[Resolved]:
        qualified = f"{name}.{member}" if member else name
        if qualified in self.units:
            return self._local(qualified, label)
        if name in self.imports:
            module, symbol = self.imports[name]
            if not symbol:
                return self._external(module, member, label) if member else None
            found = self._external(module, f"{symbol}.{member}" if member else symbol, label)
            if found is None and member:  # ``from app import repo``: a submodule
                found = self._external(f"{module}.{symbol}" if module else symbol, member, label)
            if found is None and member:  # ``from app.repo import accounts``: an instance made there
                found = self._instance_method(module, symbol, member, label)
            return found
        return None

    def _instance_method(self, module: str, variable: str, member: str, label: str) -> Optional[Resolved]:
        """The method ``member`` of the instance a project module binds to ``variable`` at its top
        level (``exported_instances``), as the module of its class summarizes it; through a
        package that hands the instance on (``exported_reexports``)."""
        for _ in range(_REEXPORTS_FOLLOWED + 1):
            if self.project is None or not module or "." in member:
                return None
            export = self.project.module_export(module, self.file)  # type: ignore[attr-defined]
            made = export.instances.get(variable)
            if made is not None:
                return self._external(made[0], f"{made[1]}.{member}", label)
            if variable not in export.reexports:  # ``from .crud_user import user`` in ``crud/__init__.py``
                return None
            module, variable = export.reexports[variable]
        return None

    def _local(self, qualified: str, label: str) -> Optional[Resolved]:
        summary = self.summary(qualified)
        return Resolved(summary, label, True) if summary is not None else None

    def _external(self, module: str, qualified: str, label: str) -> Optional[Resolved]:
        if self.project is None or not qualified:
            return None
        summary = self.project.summary(module, qualified, self.file)  # type: ignore[attr-defined]
        return Resolved(summary, label, False) if summary is not None else None

    # -- configured read/write wrappers ------------------------------------------------------

    def configured_wrapper(self, call: ast.Call) -> Optional[Tuple[str, str, str, str]]:
        """(kind, parameter, entity, field) when the call is a ``readers``/``writers`` entry."""
        if not (self.config.readers or self.config.writers):
            return None
        qualified = self._qualified_callee(call)
        for kind, entries in ((READ, self.config.readers), (WRITE, self.config.writers)):
            for entry in entries:
                function, _, rest = entry.partition(":")
                if not self._names_callee(function, qualified, call):
                    continue
                param, _, target = rest.partition("=")
                entity, _, field_name = target.partition(".")
                module = function.rsplit(".", 1)[0]
                return kind, param, entity or module, field_name or param
        return None

    def configured_table(self, call: ast.Call) -> Optional[TableWrapper]:
        """The ``tables`` entry the call is a call of, if any."""
        if not self.config.tables:
            return None
        qualified = self._qualified_callee(call)
        for entry in self.config.tables:
            if self._names_callee(entry.function, qualified, call):
                return entry
        return None

    def configured_argument(self, call: ast.Call, where: object, walker: FunctionWalker) -> Optional[ast.expr]:
        """The argument a configured entry names: by position at the call, or by parameter name
        (passed by keyword, or positionally when the callee resolves to a function whose
        parameters are known). An unresolved callee gives no argument: no access, not a guess."""
        positional = _unnamed(call)
        if isinstance(where, int):
            if any(spread for _, spread in positional[:where + 1]) or where >= len(positional):
                return None
            return positional[where][0]
        if not isinstance(where, str):
            return None
        named = keyword_arg(call, where)
        if named is not None:
            return named
        resolved = self.resolve(call, walker)
        params = resolved.summary.params if resolved is not None else ()
        if where not in params:
            return None
        index = params.index(where)
        if any(spread for _, spread in positional[:index + 1]) or index >= len(positional):
            return None
        return positional[index][0]

    @staticmethod
    def _names_callee(function: str, qualified: str, call: ast.Call) -> bool:
        """``app.db.fetch`` names the call by its qualified name; ``*.fetch`` names a method
        of that name on any receiver."""
        if function.startswith("*."):
            return isinstance(call.func, ast.Attribute) and call.func.attr == function[2:]
        return bool(qualified) and function == qualified

    def _qualified_callee(self, call: ast.Call) -> str:
        name = dotted_name(call.func)
        if not name:
            return ""
        head, _, rest = name.partition(".")
        if head in self.imports:
            module, symbol = self.imports[head]
            base = f"{module}.{symbol}" if symbol and module else (symbol or module)
            return f"{base}.{rest}" if rest else base
        if name in self.units and self.module_name:
            return f"{self.module_name}.{name}"
        return name

    def wrapper_argument(self, call: ast.Call, param: str, walker: FunctionWalker) -> Optional[ast.expr]:
        return self.configured_argument(call, param, walker)

    # -- importing a summary at a call site -------------------------------------------------

    def resolve_runner(self, call: ast.Call, walker: FunctionWalker
                       ) -> Optional[Tuple[Resolved, Dict[int, ast.expr]]]:
        """``run_in_transaction(fn, a, b)`` / ``runInteraction("desc", self.fn_txn, a)``: the
        function the runner calls, and the arguments it forwards (by the callee's parameter
        index; a first parameter named like a transaction or cursor is the runner's own)."""
        if not is_runner_name(last_name(call.func)):
            return None
        positional = _unnamed(call)
        for index, (value, spread) in enumerate(positional):
            if spread or not isinstance(value, (ast.Name, ast.Attribute)):
                continue
            resolved = self.resolve(ast.Call(func=value, args=[], keywords=[]), walker)
            if resolved is None:
                continue
            forwarded = positional[index + 1:]
            params = resolved.summary.params
            offset = 1 if params and params[0] in RUNNER_SUPPLIED_PARAMS and len(params) > len(forwarded) else 0
            arguments: Dict[int, ast.expr] = {}
            for position, (item, item_spread) in enumerate(forwarded):
                if item_spread:
                    break
                arguments[position + offset] = item
            for keyword in call.keywords:
                if keyword.arg is not None and keyword.arg in params:
                    arguments[params.index(keyword.arg)] = keyword.value
            return resolved, arguments
        return None

    def import_accesses(self, call: ast.Call, resolved: Resolved, walker: FunctionWalker,
                        call_id: int, arguments: Optional[Dict[int, ast.expr]] = None) -> List[KeyAccess]:
        if arguments is None:
            arguments = _arguments(resolved.deferred or call, resolved.summary.params)
        imported = []
        for access, field_name, arg in _placed(resolved.deferred or call, resolved.summary, arguments):
            value = walker.eval(arg)
            if not value.origins:
                continue
            if access.suffix:
                if value.steps:
                    continue
                value = Value(frozenset(o + access.suffix for o in value.origins), (), value.text + access.suffix)
            else:
                steps = tuple(Step(s.kind, s.label) for s in access.steps)  # nodes stay in the callee
                value = Value(value.origins, value.steps + steps, value.text)
            imported.append(KeyAccess(
                access.kind, access.entity, field_name, value, call, access.role, call_id,
                access.absorbs | self.info.field_absorbs.get((access.entity, field_name), frozenset()),
                access.via, walker.function, None, access.rewritten_by,
                ((resolved.label, "" if resolved.local else access.where),) + access.trace,
                access.node if resolved.local else None))
        return imported

    def copied_arguments(self, call: ast.Call, resolved: Resolved
                         ) -> List[Tuple[ast.expr, ast.expr]]:
        """(mapping argument, object argument) of each payload copy the callee makes."""
        arguments = _arguments(resolved.deferred or call, resolved.summary.params)
        return [(arguments[m], arguments[o]) for m, o in resolved.summary.copies if m in arguments and o in arguments]

    def returned_value(self, call: ast.Call, resolved: Resolved, walker: FunctionWalker, text: str,
                       arguments: Optional[Dict[int, ast.expr]] = None) -> Optional[Value]:
        returns = resolved.summary.returns
        if returns is None or resolved.deferred is not None:
            return None
        if arguments is None:
            arguments = _arguments(call, resolved.summary.params)
        values = [walker.eval(arguments[i]) for i in returns.params if i in arguments]
        carriers = [v for v in values if v.origins]
        if not carriers:
            return None
        origins = frozenset().union(*(v.origins for v in carriers))
        result_of = text if returns.is_result else ""
        if is_known_normalizer(resolved.summary.name, self.config.normalizers):
            # a normalizer is one step, named for it, at this call
            step = Step(NORMALIZER, f"{resolved.summary.name.rsplit('.', 1)[-1]}()", call)
            return Value(origins, carriers[0].steps + (step,), text, result_of)
        # the callee's own steps: their nodes belong to the callee, not to this call
        steps = tuple(Step(s.kind, s.label) for s in returns.steps)
        return Value(origins, carriers[0].steps + steps, text, result_of)


# ``_imported_names`` by (path, module name, the file's digest): every analysis of a module of an
# app asks it of the app's ``apps.py`` (a cold check of hyperkitty parsed its one apps.py 36 times)
_IMPORTED_NAMES: Dict[Tuple[str, str, str], List[str]] = {}
_IMPORTED_NAMES_KEPT = 1000


def _imported_names(path: str, module_name: str) -> List[str]:
    """Every module an import statement of the file names, in functions too (``from shop
    import signals`` -> shop, shop.signals); none when the file cannot be read or parsed. The
    file is read when its digest (``file_digest``: known already within a look) is new."""
    digest = file_digest(path)
    if digest is None:
        return []
    key = (path, module_name, digest)
    if key not in _IMPORTED_NAMES:
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            return []
        if len(_IMPORTED_NAMES) >= _IMPORTED_NAMES_KEPT:
            _IMPORTED_NAMES.clear()
        _IMPORTED_NAMES[key] = _names_imported_by(data, module_name)
    return list(_IMPORTED_NAMES[key])


def _names_imported_by(data: bytes, module_name: str) -> List[str]:
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    names: List[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = imports.absolute_module(node.module or "", node.level, module_name, False)
            if base:
                names += [base] + [f"{base}.{alias.name}" for alias in node.names if alias.name != "*"]
    return list(dict.fromkeys(names))


def _forwarded(access: KeyAccess, unit: FunctionUnit) -> Optional[SummaryAccess]:
    """A write of every keyword the function's ``**kwargs`` parameter holds, for its callers
    (parameter index -1: the keywords no named parameter takes)."""
    kwarg = unit.node.args.kwarg
    if access.field != FORWARDED_FIELDS or kwarg is None or access.value.origins != {kwarg.arg}:
        return None
    return SummaryAccess(access.kind, access.entity, access.field, access.role, -1, "", access.value.steps,
                         access.absorbs, access.rewritten_by, access.via, access.trace, node=access.node)


def _placed(call: ast.Call, summary: FunctionSummary, arguments: Dict[int, ast.expr]
            ) -> Iterator[Tuple[SummaryAccess, str, ast.expr]]:
    """(access, field, argument) of each summarized access the call gives an argument to; a
    write forwarded through ``**kwargs`` once per keyword argument no named parameter takes
    (written before any ``**spread``: what a spread holds is unknown)."""
    for access in summary.accesses:
        if access.field != FORWARDED_FIELDS:
            arg = arguments.get(access.param)
            if arg is not None:
                yield access, access.field, arg
            continue
        for keyword in call.keywords:
            if keyword.arg is None:
                break
            if keyword.arg not in summary.params:
                yield access, keyword.arg, keyword.value


# Every method name ``deferred_call`` reads (asked of every call resolved: one test for the others)
_DEFERRING_METHODS = frozenset(tasks.DIRECT_METHODS) | frozenset(tasks.PACKED_METHODS) | frozenset(tasks.ENQUEUE_METHODS)


def deferred_call(call: ast.Call) -> Optional[ast.Call]:
    """The call a task queue will make: ``f.delay(a)`` -> ``f(a)``,
    ``f.apply_async((a,), {"k": b})`` -> ``f(a, k=b)``, ``q.enqueue(f, a)`` -> ``f(a)``.
    The call made is built without positions, as it is written nowhere."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in _DEFERRING_METHODS:
        return None
    method = func.attr
    if method in tasks.DIRECT_METHODS and isinstance(func.value, (ast.Name, ast.Attribute)):
        return ast.Call(func=func.value, args=call.args, keywords=call.keywords)
    if method in tasks.PACKED_METHODS and isinstance(func.value, (ast.Name, ast.Attribute)):
        positional_kw, mapping_kw = tasks.PACKED_METHODS[method]
        plain = [a for a in call.args if not isinstance(a, ast.Starred)]
        packed = keyword_arg(call, positional_kw) or (plain[0] if plain else None)
        mapping = keyword_arg(call, mapping_kw) or (plain[1] if len(plain) > 1 else None)
        return ast.Call(func=func.value, **_unpacked(packed, mapping))
    if method in tasks.ENQUEUE_METHODS:
        plain = [a for a in call.args if not isinstance(a, ast.Starred)]
        index = tasks.ENQUEUE_METHODS[method]
        target = next((k.value for k in call.keywords if k.arg in tasks.ENQUEUE_FUNCTION_KEYWORDS), None)
        if target is not None:
            rest = _unpacked(keyword_arg(call, "args"), keyword_arg(call, "kwargs"))
        elif len(plain) > index:
            target = plain[index]
            rest = {"args": [a for a in call.args[call.args.index(target) + 1:] if not isinstance(a, ast.Starred)],
                    "keywords": [k for k in call.keywords if k.arg is not None]}
        if isinstance(target, (ast.Name, ast.Attribute)):
            return ast.Call(func=target, **rest)
    return None


def _unpacked(positional: Optional[ast.expr], mapping: Optional[ast.expr]) -> Dict[str, list]:
    """Arguments spelled as a tuple and a dict literal (``args=(a,), kwargs={"k": b}``), as the
    ``args`` and ``keywords`` of a call."""
    args: List[ast.expr] = []
    keywords: List[ast.keyword] = []
    if isinstance(positional, (ast.Tuple, ast.List)):
        args += [e for e in positional.elts if not isinstance(e, ast.Starred)]
    if isinstance(mapping, ast.Dict):
        for key, value in zip(mapping.keys, mapping.values):
            name = plain_string(key)
            if name is not None and name.isidentifier():
                keywords.append(ast.keyword(arg=name, value=value))
    return {"args": args, "keywords": keywords}


def _unnamed(call: ast.Call) -> List[Tuple[ast.expr, bool]]:
    """The arguments passed without a name, in order, each with whether it is spread: positional
    ones, ``*args`` and then ``**kwargs`` (value, True)."""
    return [(a.value, True) if isinstance(a, ast.Starred) else (a, False) for a in call.args] + [
        (k.value, True) for k in call.keywords if k.arg is None]


def _arguments(call: ast.Call, params: Tuple[str, ...]) -> Dict[int, ast.expr]:
    """The arguments by the callee's parameter index, up to the first spread one (``*args``,
    ``**kwargs``): where the arguments after it go is unknown."""
    out: Dict[int, ast.expr] = {}
    spread = [a for a in call.args if isinstance(a, ast.Starred)] + [k for k in call.keywords if k.arg is None]
    first = min((_position(node) for node in spread), default=None)
    for position, arg in enumerate(positional_args(call)):
        out[position] = arg
    for keyword in call.keywords:
        if keyword.arg is None or first is not None and _position(keyword) > first:
            break
        if keyword.arg in params:
            out[params.index(keyword.arg)] = keyword.value
    return out


def _position(node: ast.AST) -> Tuple[int, int]:
    """Where an argument is written (a keyword built for a deferred call has no position of its
    own: its value's)."""
    where = node if hasattr(node, "lineno") else getattr(node, "value", node)
    return getattr(where, "lineno", 0), getattr(where, "col_offset", 0)


def analyze(module: ast.Module, path: str, config: Config, project: object = None,
            module_name: str = "", is_package: bool = False, file: str = "") -> ModuleAnalysis:
    return ModuleAnalysis(module, path, config, project, module_name, is_package, file)
