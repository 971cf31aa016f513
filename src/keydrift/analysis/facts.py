"""The analysis model (see docs/design.md): values, transformations, key accesses, mismatches."""

from __future__ import annotations

import ast
import enum
from dataclasses import field
from typing import FrozenSet, Iterable, List, Optional, Sequence, Tuple

from keydrift.records import record


class Term(str, enum.Enum):
    """A closed vocabulary of the facts: members are their string values (they compare and hash
    equal to them, print and serialize as them), so facts stay plain JSON and tables of framework
    knowledge may spell a kind as a string."""

    __str__ = str.__str__
    __format__ = str.__format__


class StepKind(Term):
    """What a transformation does to a key. CASE steps are absorbed by a case-insensitive read
    (``__iexact``, ``lower(col) = lower(?)``); nothing else is."""

    CASE = "case"
    WHITESPACE = "whitespace"
    SLASH = "slash"
    URL = "url"
    UNICODE = "unicode"
    IDNA = "idna"
    SLUG = "slug"
    NORMALIZER = "normalizer"
    FORMAT = "format"  # an f-string or concatenation that rebuilds the key
    CALL = "call"  # an unknown function applied to the key
    REDERIVED = "rederived"  # a field of a fetch/audit/API result obtained from the key
    FETCH = "fetch"  # the result of a fetch / redirect resolution itself
    REMOTE = "remote"  # like REDERIVED, for a field of a result that came over the network
    PART = "part"  # a part of the key kept by string surgery: ``.split("?")[0]``, ``[:-1]``


CASE, WHITESPACE, SLASH, URL = StepKind.CASE, StepKind.WHITESPACE, StepKind.SLASH, StepKind.URL
UNICODE, IDNA, SLUG, NORMALIZER = StepKind.UNICODE, StepKind.IDNA, StepKind.SLUG, StepKind.NORMALIZER
FORMAT, CALL, REDERIVED, FETCH = StepKind.FORMAT, StepKind.CALL, StepKind.REDERIVED, StepKind.FETCH
REMOTE, PART = StepKind.REMOTE, StepKind.PART


def step_kinds(kinds: Iterable[str]) -> FrozenSet[StepKind]:
    """Kinds spelled as strings (a table's ``{"case"}``), as members."""
    return frozenset(StepKind(k) for k in kinds)


@record
class Step:
    """One transformation applied to a value, e.g. Step(CASE, ".lower()"). ``node`` is the
    expression that applies it (in the module being analyzed), for rules that report there."""

    kind: StepKind  # a string of the kinds' vocabulary is taken as its member
    label: str
    node: Optional[ast.AST] = field(default=None, compare=False, hash=False, repr=False)

    def __post_init__(self) -> None:
        if type(self.kind) is not StepKind:  # noqa: E721 - members are strs: only the class tells
            object.__setattr__(self, "kind", StepKind(self.kind))


@record
class Value:
    """What the analysis knows of a key value: where it came from (``origins``: source texts
    such as ``domain.url`` or a parameter name) and the transformations applied since."""

    origins: FrozenSet[str]
    steps: Tuple[Step, ...] = ()
    text: str = ""  # the expression as written, for messages
    # Set when the value is the object a call returned (a response, an audit outcome): a field
    # read from it is a key *re-derived* from the call's arguments.
    result_of: str = ""

    def then(self, step: Step, text: str, result_of: str = "") -> "Value":
        return Value(self.origins, self.steps + (step,), text, result_of)

    def is_constant(self) -> bool:
        return not self.origins


class AccessKind(Term):
    READ = "read"
    WRITE = "write"


class Role(Term):
    """Where a key sits in the access, used to pick the finding's shape."""

    LOOKUP = "lookup"  # filter/get kwargs, WHERE of a SELECT, identity of an UPDATE/DELETE
    STORE = "store"  # the value stored: create kwargs, INSERT values, update(...) values
    DEFAULTS = "defaults"  # defaults= of get_or_create / set_ of an upsert
    BYPASSED = "bypassed"  # a key save() derives, left underived by a write that bypasses save()


READ, WRITE = AccessKind.READ, AccessKind.WRITE
LOOKUP, STORE, DEFAULTS, BYPASSED = Role.LOOKUP, Role.STORE, Role.DEFAULTS, Role.BYPASSED


@record
class KeyAccess:
    """A database read or write that selects or stores ``entity.field`` by ``value``."""

    kind: AccessKind
    entity: str  # model class, table name, collection, cache namespace
    field: str
    value: Value
    node: ast.AST  # where to report
    role: Role = LOOKUP
    call_id: int = 0  # accesses made by one call share it (lookup vs defaults of an upsert)
    # transformations the database applies to both sides when comparing (``__iexact``)
    absorbs: FrozenSet[StepKind] = frozenset()
    via: str = ""  # the call as the user wrote it, shortened for messages
    function: str = ""  # enclosing function's qualified name
    assigned_at: Optional[ast.AST] = None  # obj.field = v, for writes through save()
    rewritten_by: str = ""  # "User.save()" when the model rewrites the key as it is stored
    # For an access made inside a called function: the calls it went through, outermost first,
    # as (what, where) pairs: ("save_result()", "app/repo.py:40"); where is "" in this module.
    trace: Tuple[Tuple[str, str], ...] = ()
    # the access inside a function of this module, when imported from its summary
    inner_node: Optional[ast.AST] = field(default=None, compare=False, hash=False, repr=False)
    # the arms of if/elif/else statements the access is made in, as (statement, arm) pairs:
    # two accesses in different arms of one statement never run on one path
    arms: Tuple[Tuple[int, int], ...] = field(default=(), compare=False, hash=False, repr=False)

    def __post_init__(self) -> None:
        if self.absorbs and not all(type(k) is StepKind for k in self.absorbs):  # noqa: E721
            object.__setattr__(self, "absorbs", step_kinds(self.absorbs))


class Shape(Term):
    """How a read and a write of one key disagree: each KD1 rule reports one shape."""

    REDERIVED = "rederived"  # the write's key is a field of a result obtained with the read's
    WRITE_TRANSFORM = "write-transform"  # only the write transforms the key
    READ_TRANSFORM = "read-transform"  # only the read transforms it
    BOTH = "both"  # each side transforms it differently
    DEFAULTS = "defaults"  # an upsert's lookup against its own defaults/SET
    REASSIGNED = "reassigned"  # obj.field = transformed value, then save()
    BYPASSED = "bypassed"  # a write that skips the save() deriving the key
    REWRITTEN = "rewritten"  # the model's save() rewrites the key the read used as given
    REMOTE_IDENTITY = "remote-identity"  # a write picks its row by a remote result's field
    PAYLOAD_COPY = "payload-copy"  # a remote mapping copied onto a record, then saved


@record
class Mismatch:
    """A read and a write of the same entity.field from one origin through different steps."""

    shape: Shape  # a string of the shapes' vocabulary is taken as its member
    read: KeyAccess
    write: KeyAccess

    def __post_init__(self) -> None:
        if type(self.shape) is not Shape:  # noqa: E721 - members are strs: only the class tells
            object.__setattr__(self, "shape", Shape(self.shape))


@record
class RawFix:
    """What a fix needs (see ``types.FixFacts``), with the node to rewrite instead of its span."""

    target: ast.AST
    entity: str = ""
    field: str = ""
    normalizer: str = ""
    value: str = ""


@record
class RawFinding:
    """A finding before positions are known: rules produce these, the engine resolves nodes."""

    code: str
    message: str  # may contain {line:<id>} placeholders resolved with positions
    node: ast.AST
    related: Tuple[Tuple[ast.AST, str], ...] = ()
    fingerprint: Tuple[str, ...] = field(default=())
    fix: Optional[RawFix] = None  # set by rules whose fix needs more than the reported node


# -- serialization (the project index caches facts as JSON) ---------------------------------

def steps_to_json(steps: Iterable[Step]) -> List[List[str]]:
    """Steps as plain data: ``[[kind, label], ...]`` (nodes stay in the module they belong to)."""
    return [[s.kind.value, s.label] for s in steps]


def steps_from_json(data: Iterable[Sequence[str]]) -> Tuple[Step, ...]:
    """The steps ``steps_to_json`` wrote; an unknown kind is a ValueError (a damaged entry)."""
    return tuple(Step(StepKind(kind), str(label)) for kind, label in data)
