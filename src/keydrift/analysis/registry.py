"""The project-wide key registry: every read and write of every ``entity.field`` in the project.

Each module contributes typed, serializable facts (``ModuleKeys``): one ``KeyUse`` per key access
its functions make — their own and those imported from the helpers they call — with the value's
transformation steps and provenance (the function, the helper chain, the concrete origin), and
what its model classes do to keys on their own (``save()`` overrides, receivers, validators,
case-insensitive columns). The facts of a module are computed from its source and the summaries
of its imports alone, so the project index caches them on disk by content hash, next to the
summaries (``analysis/project.py``).

``Registry`` assembles the facts of every module into one ``KeyRecord`` per entity and field:
the *lookups* of the key and its *stored form* (the evidence of every write and model rewrite).
The KD108-KD110 rules read it (see docs/design.md, "Project-wide key registry").
"""

from __future__ import annotations

import ast
import os
from collections import defaultdict
from dataclasses import field, replace
from typing import Any, Dict, FrozenSet, Iterable, List, Optional, Sequence, Tuple

from keydrift.analysis.facts import (
    CASE, CALL, FETCH, FORMAT, IDNA, LOOKUP, NORMALIZER, READ, REDERIVED, SLASH, SLUG, UNICODE, URL, WHITESPACE,
    WRITE, AccessKind, KeyAccess, Role, Step, StepKind, Term, step_kinds, steps_from_json, steps_to_json,
)
from keydrift.analysis import loop_sources
from keydrift.analysis.pairing import canonical_step
from keydrift.analysis.receivers import mentioned
from keydrift.analysis.routes import request_parameters
from keydrift.analysis.summaries import parameter_of
from keydrift.analysis.tree import string_literal
from keydrift.patterns import lazy
from keydrift.records import mutable, record
from keydrift.types import FixFacts

# Step kinds that canonicalize a key (the same input always gives the same stored form); other
# kinds (an unknown call, an f-string, a field of a fetch result, URL surgery) make a value's form
# unknowable, and such a use is left out of the registry's comparisons.
CANONICALIZING = frozenset({CASE, WHITESPACE, SLASH, UNICODE, IDNA, SLUG, NORMALIZER})
OPAQUE = frozenset({CALL, FORMAT, REDERIVED, FETCH, URL})

# Fields that identify a record without being a value someone types: never a natural key.
_SURROGATE_FIELD = lazy(r"^(?:id|pk|uuid|guid)$|_(?:id|pk|uuid)$|__(?:id|pk)$")
# Roots of origins that are what a client or a file sent (request data, a parsed body, a form).
_INPUT_ROOTS = frozenset({
    "request", "req", "body", "payload", "data", "params", "args", "form", "cleaned_data", "json",
    "query", "kwargs", "content", "message", "msg", "event", "options", "opts", "row", "record",
    "item", "entry", "line", "fields", "values", "POST", "GET", "environ", "argv", "headers",
})
_CONFIG_ROOTS = frozenset({"settings", "config", "conf", "cfg", "CONFIG", "SETTINGS", "environ", "app_config"})
# Attributes of these are records the database gave back (``request.user.email``).
_RECORD_PATHS = ("request.user.", "self.request.user.", "self.user.", "self.instance.", "self.object.")
_NAME = lazy(r"[A-Za-z_]\w*")
# a word of a key's constant text: what makes two keys' templates one namespace
_NAMESPACE_WORD = lazy(r"[A-Za-z]{2,}")
# a key built by a call (``layers/redis_client._opaque_template``): the callee's name
_OPAQUE_TEMPLATE = lazy(r"^(\w+)\(")
# how the text of a string literal starts (in parentheses, raw or u-prefixed)
_STRING_START = lazy(r"[\s(]*[rRuU]?['\"]")


class Origin(Term):
    """Where a key value comes from, as far as one function can tell."""

    CONSTANT = "constant"  # a literal: the same key everywhere
    PARAMETER = "parameter"  # the enclosing function's parameter: its callers say more
    INPUT = "input"  # request, form or body data, a parsed file's field
    CONFIG = "config"  # a configuration value
    RECORD = "record"  # a field of a record the database gave back: already in stored form
    LOCAL = "local"  # any other value computed in the function


@record
class Site:
    """A place in the project: the file relative to the project root, and the statement."""

    path: str
    line: int
    col: int = 0
    end_line: int = 0

    def text(self) -> str:
        return f"{self.path}:{self.line}"


@record
class KeyUse:
    """One read or write of ``entity.field`` seen from one function (helpers' included)."""

    kind: AccessKind
    role: Role
    entity: str
    field: str
    steps: Tuple[Step, ...]  # transformations of the value on its way to the key
    absorbs: FrozenSet[StepKind]  # step kinds the database ignores when comparing (``__iexact``)
    origin: Origin
    origin_text: str  # "request.POST['email']", a parameter name, ...
    value_text: str  # the expression as written at the access (or the call)
    function: str  # qualified inside its module: "AuthHandler.add_threepid", "<module>"
    site: Site  # the statement in ``function``: the access itself, or the call to a helper
    chain: Tuple[Tuple[str, str], ...] = ()  # helpers passed through: ("save_user()", "app/repo.py:40")
    rewritten_by: str = ""  # "User.save()" when the model rewrote the value as it was stored
    via: str = ""  # the database call, shortened
    # the value comes from a parameter (``request.POST["email"]`` too): a caller's use of the
    # same access, if the project has one, is the outermost and makes this one redundant
    forwarded: bool = False
    # a key written from a literal table of the module (or a literal): the strings it stores
    constants: Tuple[str, ...] = ()

    @property
    def own_steps(self) -> bool:
        return bool(self.steps)


@record
class ModelRewrite:
    """A model's own rewriting of a key whenever a record is saved (``save()``, receivers...)."""

    entity: str
    field: str
    steps: Tuple[Step, ...]
    by: str  # "User.save()"
    site: Site


@record
class ModuleKeys:
    """Everything one module contributes to the registry (plain data: cached as JSON)."""

    path: str  # relative to the project root
    uses: Tuple[KeyUse, ...] = ()
    rewrites: Tuple[ModelRewrite, ...] = ()
    absorbs: Tuple[Tuple[str, str, FrozenSet[StepKind]], ...] = ()  # (entity, field, kinds): CITEXT columns


EMPTY_KEYS = ModuleKeys("")


# -- building a module's facts --------------------------------------------------------------

def module_keys(analysis: Any, tree: ast.Module, path: str) -> ModuleKeys:
    """The registry facts of an analyzed module (``ModuleAnalysis``), its walkers already run or
    run here. ``path`` is the module's file relative to the project root."""
    uses: List[KeyUse] = []
    names = ["<module>", *analysis.units]
    tables = loop_sources.module_tables(tree)
    for name in names:
        walker = analysis.walker(name)
        params = analysis.units[name].params if name in analysis.units else ()
        # a route handler's query and body parameters are the client's input, not its callers' say
        inputs = request_parameters(analysis.units[name].node, analysis.is_validation_model) \
            if name in analysis.units else frozenset()
        loops = loop_sources.ScopeLoops(analysis.units[name].node if name in analysis.units else tree)
        seen = set()
        for access in walker.accesses:
            # (a model form's fields are written at module level, by the form's save: ``forms.py``)
            use = _use(access, access.function or name, params, path, analysis.statement_of, inputs)
            if use is not None and use.origin is Origin.CONSTANT:
                use = _literal(use)
            elif use is not None and not use.steps and use.origin not in (Origin.PARAMETER, Origin.RECORD):
                use = _walked_table(use, loops, params, tables)
            if use is not None and use not in seen:
                seen.add(use)
                uses.append(use)
    rewrites = tuple(
        ModelRewrite(entity, name, tuple(Step(s.kind, s.label) for s in r.steps), r.by,
                     _site_of(r.node, path))
        for (entity, name), r in analysis.info.rewrites.items())
    absorbs = tuple((entity, name, step_kinds(kinds)) for (entity, name), kinds in analysis.info.field_absorbs.items())
    return ModuleKeys(path, tuple(uses), rewrites, absorbs)


def _site_of(node: Optional[ast.AST], path: str) -> Site:
    """The statement's place (its line, byte column and last line); line 1 for anything else."""
    if not isinstance(node, ast.stmt):
        return Site(path, 1)
    return Site(path, node.lineno, node.col_offset, getattr(node, "end_lineno", None) or node.lineno)


def _use(access: KeyAccess, function: str, params: Tuple[str, ...], path: str,
         statement_of: Dict[int, ast.AST], inputs: FrozenSet[str] = frozenset()) -> Optional[KeyUse]:
    if not access.entity or not access.field or is_surrogate(access.field) \
            or (access.field == "*" and not is_namespaced_entry(access.entity)):
        return None
    statement = statement_of.get(id(access.node))
    if not isinstance(statement, ast.stmt):
        return None
    origin, origin_text = classify(access.value.origins, params)
    forwarded = parameter_of(access.value, params) is not None
    if origin is Origin.PARAMETER and _root(origin_text) in inputs:
        origin, forwarded = Origin.INPUT, False
    if _row_read(access, statement):
        origin = Origin.RECORD
    steps = tuple(Step(s.kind, s.label) for s in access.value.steps)
    if access.field == "*" and _key_function(access.entity):
        steps = _without_key_format(steps)
    if _parsed_from_request(origin_text, steps):
        # ``parse_json(request)["email"]``: a field of the request's parsed body is the client's
        # value as sent; the parse is not a transformation of a key
        origin, origin_text, steps = Origin.INPUT, origin_text + _field_part(steps[0].label), steps[1:]
    return KeyUse(
        access.kind, access.role, access.entity, access.field,
        steps, access.absorbs, origin, origin_text,
        access.value.text, function, _site_of(statement, path),
        tuple((what, where) for what, where in access.trace), access.rewritten_by, access.via, forwarded)


def _root(text: str) -> str:
    """``data`` of ``data.email``, ``email`` of ``email``."""
    found = _NAME.match(text)
    return found.group(0) if found else ""


def _literal(use: KeyUse) -> KeyUse:
    """A key written as a string literal stores that string."""
    if use.steps or not _STRING_START.match(use.value_text):
        return use  # not a literal: spare the parse
    try:  # not ast.literal_eval: its recursive closures make a cycle at each call
        value = string_literal(ast.parse(use.value_text.lstrip(" \t"), mode="eval").body)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return use
    return use if value is None else replace(use, constants=(value,))


def _walked_table(use: KeyUse, loops: loop_sources.ScopeLoops, params: Tuple[str, ...],
                  tables: Dict[str, ast.expr]) -> KeyUse:
    """A key taken from a collection by loops (``for s in group[1]["settings"]: ... s[0]``) has
    the origin of the collection the outermost loop walks, whatever its variables are named: a
    parameter's (the callers decide what is stored or looked up: a fixture table, like any
    argument) unless the parameter's name says input, or a literal table of the module's, whose
    strings are the keys stored (``constants``)."""
    source = loops.walked_from(use.origin_text)
    if source is None:
        return use
    if source.root in params:
        if _classify_one(source.root, ()) is Origin.INPUT:
            return use
        return replace(use, origin=Origin.PARAMETER, origin_text=source.root)
    table = tables.get(source.root)
    strings = loop_sources.literal_strings(table, source.path) if table is not None else None
    if strings is None:
        return use
    return replace(use, origin=Origin.CONSTANT, origin_text=source.root, constants=strings)


def _row_read(access: KeyAccess, statement: ast.AST) -> bool:
    """``for pk, slug in User.objects.values_list("id", "slug")``: the rows' key is read by the
    rows' own value (so that the function's writes pair with it); for the registry that value
    is a stored one, in the stored form, not a lookup form."""
    if access.kind != READ or not isinstance(statement, (ast.For, ast.AsyncFor)) or access.node is not statement.iter:
        return False
    bound = {n.id for n in ast.walk(statement.target) if isinstance(n, ast.Name)}
    roots = [_NAME.match(origin) for origin in access.value.origins]
    return bool(roots) and all(root is not None and root.group(0) in bound for root in roots)


_REQUEST_OBJECTS = frozenset({"request", "req", "self.request"})


def _parsed_from_request(origin_text: str, steps: Tuple[Step, ...]) -> bool:
    """A field of what a call made of the whole request object returned (its parsed body or
    form): the call reads input, it does not derive a key from one (``run_audit(request.POST[
    "url"]).final_url`` is made from a field, and stays a re-derivation)."""
    return bool(steps) and steps[0].kind == REDERIVED and origin_text in _REQUEST_OBJECTS


def _field_part(label: str) -> str:
    """``["email"]`` of ``parse(request)["email"]``, ``.email`` of ``parse(request).email``."""
    if label.endswith("..."):  # shortened: the field is cut off
        return ""
    cut = max(label.rfind("["), label.rfind("."), label.rfind(")") + 1)
    return label[cut:] if 0 < cut < len(label) else ""


def is_namespaced_entry(entity: str) -> bool:
    """A key-value store's entries under one constant namespace (``cache key 'lockout:{}'``,
    ``hash 'sessions'``, a key function's ``cache key 'cooldown_key({})'``): one key, wherever
    the project builds it. A key with no constant words (``cache key '{}:{}'``, the namespace a
    caller passes) names nothing, nor does a key that is a whole value's transformation
    (``cache key 'lower()'``: every cache keyed by a lowercased string), and a mapping is named
    by the code that holds it (``mapping 'self._cache'``), another mapping in another class."""
    kind, _, template = entity.partition(" '")
    if kind not in ("cache key", "hash"):
        return False
    function = _key_function(entity)
    if function:
        return "key" in function.lower()
    return bool(_NAMESPACE_WORD.search(template.replace("{}", "")))


def _key_function(entity: str) -> str:
    """The function a store's key is built by (``cache key 'failures_key({})'`` ->
    "failures_key"); "" for a key written as a template."""
    call = _OPAQUE_TEMPLATE.match(entity.partition(" '")[2])
    return call.group(1) if call is not None else ""


def _without_key_format(steps: Tuple[Step, ...]) -> Tuple[Step, ...]:
    """The steps of a value passed to a key function (``failures_key(name.lower())``) without
    the function's own formatting, the last step: every use of the namespace makes it alike."""
    return steps[:-1] if steps and steps[-1].kind == FORMAT else steps


def is_surrogate(field_name: str) -> bool:
    return bool(_SURROGATE_FIELD.search(field_name))


_PREFERENCE = (Origin.INPUT, Origin.CONFIG, Origin.LOCAL, Origin.RECORD, Origin.PARAMETER)


def classify(origins: Iterable[str], params: Tuple[str, ...]) -> Tuple[Origin, str]:
    """The most concrete origin of a value, and its text."""
    best: Optional[Tuple[int, Origin, str]] = None
    for text in sorted(origins):
        kind = _classify_one(text, params)
        rank = _PREFERENCE.index(kind)
        if best is None or rank < best[0]:
            best = (rank, kind, text)
    if best is None:
        return Origin.CONSTANT, ""
    return best[1], best[2]


_ATTRIBUTE_CHAIN = lazy(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$")
# an attribute of an element of a collection: elements with attributes are objects (records,
# principals), not values as a client sent them (those are strings, or mappings: ``[*]["email"]``)
_ELEMENT_FIELD = lazy(r"\[\*\](?:\.[A-Za-z_]\w*)+$")
# ... except the elements of a parsed request body: ``payload.users[*].email``, and a validation
# model named for input as web frameworks name them (``ticket_in: TicketIn``, ``ticket_in.labels``)
_BODY_ROOT = lazy(r"^(?:body|payload|json|[A-Za-z_]\w*_in)\b")


def _classify_one(text: str, params: Tuple[str, ...]) -> Origin:
    if _ELEMENT_FIELD.search(text) and not _BODY_ROOT.match(text):
        return Origin.RECORD  # ``for user in form.users.data: ... user.email``: an object's field
    collection = text
    while collection.endswith("[*]"):
        collection = collection[:-3]
    if "." in collection and (collection.split(".", 1)[0] not in ("self", "cls")
                              or collection.startswith(_RECORD_PATHS)):
        # an element of a collection comes from where the collection does: ``in_(user.all_emails)``
        # is a record's field; one the object keeps (``self._locations``, parsed from a request
        # path) is not taken for a record as ``self.email`` is; an element of a list passed in
        # (``tag_names[*]``) stays a value of its own: no caller's use carries its elements on
        text = collection
    if text.startswith(_RECORD_PATHS):
        return Origin.RECORD  # ``request.user.email``: the logged-in user's row
    if _ATTRIBUTE_CHAIN.match(text) and text.split(".", 1)[0] in params:
        return Origin.PARAMETER  # ``email``, ``user.email``: what the callers pass decides
    names = _NAME.findall(text)
    if not names:
        return Origin.LOCAL
    parts = names[1:] if names[0] in ("self", "cls") and len(names) > 1 else names
    if parts[0] in _CONFIG_ROOTS or "config" in parts[:2]:
        return Origin.CONFIG
    if any(p in _INPUT_ROOTS for p in parts[:3]):
        return Origin.INPUT
    if "[" not in text and "(" not in text and len(names) >= 2:
        return Origin.RECORD  # ``user.email``: an attribute of an object the function holds
    return Origin.LOCAL


# -- serialization --------------------------------------------------------------------------

def _site_json(site: Site) -> List[Any]:
    return [site.path, site.line, site.col, site.end_line]


def _site_from(data: Sequence[Any]) -> Site:
    return Site(str(data[0]), int(data[1]), int(data[2]), int(data[3]))


def keys_to_json(keys: ModuleKeys) -> Dict[str, Any]:
    return {
        "path": keys.path,
        "uses": [[u.kind, u.role, u.entity, u.field, steps_to_json(u.steps), sorted(u.absorbs), u.origin.value,
                  u.origin_text, u.value_text, u.function, _site_json(u.site), [list(c) for c in u.chain],
                  u.rewritten_by, u.via, u.forwarded, list(u.constants)] for u in keys.uses],
        "rewrites": [[r.entity, r.field, steps_to_json(r.steps), r.by, _site_json(r.site)] for r in keys.rewrites],
        "absorbs": [[e, f, sorted(k)] for e, f, k in keys.absorbs],
    }


def _use_from(entry: Sequence[Any]) -> KeyUse:
    (kind, role, entity, name, steps, absorbs, origin, origin_text, value_text, function, site, chain,
     rewritten_by, via, forwarded), constants = entry[:15], (entry[15] if len(entry) > 15 else ())
    return KeyUse(
        AccessKind(kind), Role(role), str(entity), str(name), steps_from_json(steps), step_kinds(absorbs),
        Origin(origin), str(origin_text), str(value_text), str(function), _site_from(site),
        tuple((str(w), str(p)) for w, p in chain), str(rewritten_by), str(via), bool(forwarded),
        tuple(str(c) for c in constants))


def keys_from_json(data: Dict[str, Any]) -> ModuleKeys:
    uses = tuple(_use_from(entry) for entry in data["uses"])
    rewrites = tuple(ModelRewrite(str(e), str(f), steps_from_json(s), str(by), _site_from(site))
                     for e, f, s, by, site in data["rewrites"])
    absorbs = tuple((str(e), str(f), step_kinds(kinds)) for e, f, kinds in data["absorbs"])
    return ModuleKeys(str(data["path"]), uses, rewrites, absorbs)


# -- the registry -----------------------------------------------------------------------------

Form = FrozenSet[Tuple[str, str]]  # canonical steps, order ignored: strip().lower() == lower().strip()


def form_of(steps: Sequence[Step], absorbs: FrozenSet[str] = frozenset()) -> Optional[Form]:
    """The stored or looked-up form a value has: its canonical steps, without the kinds the
    comparison absorbs; None when a step makes the form unknowable."""
    if any(s.kind in OPAQUE or s.kind not in CANONICALIZING for s in steps):
        return None
    return frozenset(canonical_step(s) for s in steps if s.kind not in absorbs)


def forms_disagree(first: Form, second: Form) -> bool:
    """Whether two forms give different keys for some input. Two different named normalizers
    (or one and a built-in step) may do the same thing inside: only a raw side against a
    canonical one, or built-in steps against other built-in steps, are known to differ."""
    if first == second:
        return False
    if not first or not second:
        return True
    return not any(kind == NORMALIZER for kind, _ in first | second)


def describe(form: Form) -> str:
    if not form:
        return "as given"
    labels = sorted(label for _, label in form)
    words = {"lower": "lowercased", "casefold": "casefolded", "upper": "uppercased", "strip": "stripped"}
    return " and ".join(words.get(l, f"through {l}()" if not l.endswith(")") else f"through {l}") for l in labels)


@record
class Evidence:
    """How one write (or the model itself) stores the key."""

    steps: Tuple[Step, ...]
    by: str  # the function or model method that decides the form
    site: Site
    use: Optional[KeyUse] = None  # None for a model rewrite


@mutable
class KeyRecord:
    """Every use of one ``entity.field`` in the project."""

    entity: str
    field: str
    lookups: List[KeyUse] = field(default_factory=list)
    writes: List[KeyUse] = field(default_factory=list)
    rewrites: List[ModelRewrite] = field(default_factory=list)
    absorbs: FrozenSet[str] = frozenset()
    # helpers that transform the key they are given, every caller's value stored through them
    # as it was passed (``add_threepid(address)`` lowercases, the servlets call it): they decide
    # the stored form, wherever their callers are
    deciders: List[KeyUse] = field(default_factory=list)

    def target(self) -> str:
        return self.entity if self.field == "*" else f"{self.entity}.{self.field}"

    def items(self) -> str:
        """What the key selects, for messages: a table's rows, a store's entries."""
        return "entries" if self.field == "*" else "rows"


class Registry:
    """The facts of every module of one project, grouped by entity and field."""

    def __init__(self, modules: Iterable[ModuleKeys], root: str = "") -> None:
        self.root = root  # the project root the sites' paths are relative to
        self.records: Dict[Tuple[str, str], KeyRecord] = {}
        rewrites: Dict[Tuple[str, str], List[ModelRewrite]] = defaultdict(list)
        for keys in modules:
            for use in keys.uses:
                record = self._record(use.entity, use.field)
                (record.writes if is_store(use) else record.lookups).append(use)
            for rewrite in keys.rewrites:
                rewrites[(rewrite.entity, rewrite.field)].append(rewrite)
            for entity, name, kinds in keys.absorbs:
                record = self._record(entity, name)
                record.absorbs = record.absorbs | kinds
        for (entity, name), found in rewrites.items():
            if len({tuple(r.steps) for r in found}) == 1:  # two models of one name that disagree: unknown
                self._record(entity, name).rewrites.extend(found)
        for record in self.records.values():
            writes = record.writes
            record.writes = _outermost(writes)
            record.lookups = _outermost(record.lookups)
            record.deciders = _deciders(writes, record.writes)

    def uncalled(self, use: KeyUse) -> bool:
        """Whether nothing in the project names the function of ``use`` (but its definition):
        no call, no reference handed to a dispatcher, no string. Read from the project's files
        (``receivers.mentioned``), so only asked of the few uses a finding depends on."""
        owner, _, name = use.function.rpartition(".")
        home = os.path.normpath(os.path.join(self.root, use.site.path))
        return bool(self.root) and not mentioned(self.root, name, home, owner.rsplit(".", 1)[-1])

    def _record(self, entity: str, name: str) -> KeyRecord:
        key = (entity, name)
        if key not in self.records:
            self.records[key] = KeyRecord(entity, name)
        return self.records[key]


def _outermost(uses: List[KeyUse]) -> List[KeyUse]:
    """Drop a use whose value is a parameter when a caller's use of the same access exists: the
    caller's use carries the concrete origin and every step on the way."""
    forwarded = set()
    by_chain = defaultdict(list)
    for use in uses:
        by_chain[(use.kind, use.role, use.chain[1:] if use.chain else None)].append(use)
    for use in uses:
        if not use.forwarded:
            continue
        for caller in by_chain.get((use.kind, use.role, use.chain), ()):
            if caller is use or not caller.chain:
                continue
            where = caller.chain[0][1]
            if (where and where.endswith(f"{use.site.path}:{use.site.line}")) or \
                    (not where and caller.site.path == use.site.path):
                forwarded.add(use)
                break
    return [u for u in uses if u not in forwarded]


def _deciders(writes: List[KeyUse], outermost: List[KeyUse]) -> List[KeyUse]:
    """The writes ``_outermost`` dropped that transform their parameter themselves, when every
    caller's use passes through with no step of its own."""
    kept = set(outermost)
    found = []
    for use in writes:
        if use in kept or use.origin is not Origin.PARAMETER or not use.steps:
            continue
        callers = [c for c in outermost if c.chain[1:] == use.chain and c.chain
                   and c.chain[0][1].endswith(f"{use.site.path}:{use.site.line}")]
        if callers and all(c.steps == use.steps for c in callers):
            found.append(use)
    return found


def opaque_origin(use: KeyUse) -> bool:
    """A value made by a call the analysis cannot see into (``secrets.token_hex(4)``,
    ``email.split("@")[0]``): its form is unknown. ``data.get("email")`` is data, not a call."""
    return "(" in use.origin_text.replace(".get(", "[")


def evidence(record: KeyRecord) -> List[Evidence]:
    """What decides the stored form: each write whose form is known, and the model's rewrites.
    A write of a parameter tells nothing unless the function transforms it itself."""
    found = [Evidence(use.steps, use.rewritten_by or use.function, use.site, use)
             for use in record.writes if tells_stored_form(use)]
    for rewrite in record.rewrites:
        if form_of(rewrite.steps):
            found.append(Evidence(rewrite.steps, rewrite.by, rewrite.site))
    return found


def is_store(use: KeyUse) -> bool:
    """A write that stores the key; the WHERE of an UPDATE or DELETE selects rows by the key: a
    lookup, not a store."""
    return use.kind == WRITE and use.role != LOOKUP


def _told_elsewhere(use: KeyUse) -> bool:
    """A value whose form, stored as it is, something else gave it: a parameter, or an
    attribute the object keeps (``self.x``; another object's attribute, ``g.identity.login``,
    is a value of its own)."""
    return use.origin is Origin.PARAMETER or use.origin is Origin.RECORD and use.origin_text.startswith(("self.", "cls."))


def tells_stored_form(use: KeyUse) -> bool:
    """A store whose value says the form rows are stored in (``evidence``): not a literal, not a
    parameter or a value the object keeps passed on as given (its callers decide, or whatever
    made the object: ``self.list_address`` set from what the command lowercased), not a value
    of an opaque call, and no step that makes the form unknowable."""
    if use.origin is Origin.CONSTANT or (_told_elsewhere(use) and not use.steps) or opaque_origin(use):
        return False
    return form_of(use.steps) is not None


def may_be_reported(use: KeyUse) -> bool:
    """Whether a registry rule can report a finding at ``use``: KD108 and KD109 report at a
    lookup that is ``reportable_lookup`` or ``entry_candidate``, KD110 at a store that
    ``tells_stored_form``. A module with no such use has no registry finding, whatever the other
    modules hold, so checking it alone needs no registry."""
    if is_store(use):
        return tells_stored_form(use)
    return reportable_lookup(use) or entry_candidate(use)


def entry_candidate(use: KeyUse) -> bool:
    """A lookup by a plain parameter, passed as given to a helper of another module (the function
    calls the data layer, it is not the layer): if nothing in the project calls the function, a
    framework or another program does, and the parameter is where the value enters
    (``Registry.uncalled``)."""
    if use.origin is not Origin.PARAMETER or use.steps or not _NAME.fullmatch(use.origin_text):
        return False
    name = use.function.rsplit(".", 1)[-1]
    if not use.chain or name.startswith("__") or name == "<module>":
        return False
    helper_file = use.chain[0][1].rpartition(":")[0].replace("\\", "/")
    return bool(helper_file) and not helper_file.endswith("/" + use.site.path) and helper_file != use.site.path


def reportable_lookup(use: KeyUse) -> bool:
    """A lookup whose value has a concrete origin (or is transformed right there) and a known form."""
    return compares_outside_values(use) and not (use.origin is Origin.PARAMETER and not use.steps)


def compares_outside_values(use: KeyUse) -> bool:
    """A lookup of values from outside the database, of a known form: not a literal, not a
    record's own field, not the result of a call the analysis cannot see into, nothing cut out
    of another value (a slug parsed out of the request's path: ``resolve(path).kwargs``). A
    plain parameter counts (``reportable_lookup`` leaves it to the callers)."""
    return use.origin not in (Origin.CONSTANT, Origin.RECORD) and not opaque_origin(use) \
        and form_of(use.steps) is not None


def elsewhere(first: Site, second: Site) -> bool:
    """In different modules."""
    return first.path != second.path


def compared(first: KeyUse, first_form: Optional[Form], second: KeyUse, second_form: Optional[Form]) -> bool:
    """Whether the registry rules compare two uses of one key whose forms are these: uses in
    different modules; in one module, uses in different functions of which exactly one passes
    the key as given (a signup view that lowercases, a login view beside it that does not).
    Two canonicalizations that differ inside one module are KD203's, and one function's uses
    KD101-KD107's."""
    if elsewhere(first.site, second.site):
        return True
    if same_function(first, second) or first_form is None or second_form is None:
        return False
    return bool(first_form) != bool(second_form)


@record
class ProjectFinding:
    """A finding the registry's rules make: located by ``Site`` (no syntax tree needed)."""

    code: str
    message: str
    site: Site
    related: Tuple[Tuple[Site, str], ...] = ()
    fingerprint: Tuple[str, ...] = ()
    fix: Optional[FixFacts] = None  # for keydrift.fixes: the statement, the value and its normalizer


def same_function(first: KeyUse, second: KeyUse) -> bool:
    return first.function == second.function and first.site.path == second.site.path


def stored_form(record: KeyRecord, absorbs: FrozenSet[str], near: Optional[KeyUse] = None) -> Optional[Tuple[Form, Evidence]]:
    """The one form every write (or the model's own rewrite) stores the key in, with the evidence
    to name; None when nothing is known or the writes disagree (KD110's business). With
    ``near`` (a lookup), the form is told by the evidence outside its function (a model's own
    rewrite: outside its module), and None unless the rules compare one of them with the lookup
    (``compared``: two canonicalizations that differ inside one module are KD203's)."""
    deciding = [Evidence(use.steps, use.function, use.site, use) for use in record.deciders]
    found = [*deciding, *evidence(record)]
    if near is not None:
        found = [e for e in found if (elsewhere(e.site, near.site) if e.use is None else not same_function(e.use, near))]
    model = [e for e in found if e.use is None]
    if model:  # the model rewrites the key on every save: that is the stored form
        form = form_of(model[0].steps, absorbs)
        return (form, model[0]) if form is not None else None
    forms = {form_of(e.steps, absorbs) for e in found}
    if len(forms) != 1 or None in forms:
        return None
    form = forms.pop()
    if near is not None:
        looked_up = form_of(near.steps, absorbs)
        found = [e for e in found if e.use is not None and compared(e.use, form, near, looked_up)]
        if not found:
            return None
    named = [e for e in found if e.steps] or found
    return form, named[0]  # type: ignore[return-value]
