"""The analysis model (see docs/design.md): values, transformations, key accesses, mismatches."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import FrozenSet, Optional, Tuple

# Transformation kinds. CASE steps are absorbed by a case-insensitive read (``__iexact``,
# ``lower(col) = lower(?)``); nothing else is.
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


@dataclass(frozen=True)
class Step:
    """One transformation applied to a value, e.g. Step("case", ".lower()"). ``node`` is the
    expression that applies it (in the module being analyzed), for rules that report there."""

    kind: str
    label: str
    node: Optional[ast.AST] = field(default=None, compare=False, hash=False, repr=False)


@dataclass(frozen=True)
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


READ = "read"
WRITE = "write"

# Where a key sits in the access, used to pick the finding's shape.
LOOKUP = "lookup"  # filter/get kwargs, WHERE of a SELECT, identity of an UPDATE/DELETE
STORE = "store"  # the value stored: create kwargs, INSERT values, update(...) values
DEFAULTS = "defaults"  # defaults= of get_or_create / set_ of an upsert
BYPASSED = "bypassed"  # a key save() derives, left underived by a write that bypasses save()


@dataclass(frozen=True)
class KeyAccess:
    """A database read or write that selects or stores ``entity.field`` by ``value``."""

    kind: str  # READ or WRITE
    entity: str  # model class, table name, collection, cache namespace
    field: str
    value: Value
    node: ast.AST  # where to report
    role: str = LOOKUP
    call_id: int = 0  # accesses made by one call share it (lookup vs defaults of an upsert)
    # transformations the database applies to both sides when comparing (``__iexact``)
    absorbs: FrozenSet[str] = frozenset()
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


@dataclass(frozen=True)
class Mismatch:
    """A read and a write of the same entity.field from one origin through different steps."""

    shape: str  # see rules: rederived, write-transform, read-transform, both, defaults, reassigned
    read: KeyAccess
    write: KeyAccess


@dataclass(frozen=True)
class RawFix:
    """What a fix needs (see ``types.FixFacts``), with the node to rewrite instead of its span."""

    target: ast.AST
    entity: str = ""
    field: str = ""
    normalizer: str = ""
    value: str = ""


@dataclass(frozen=True)
class RawFinding:
    """A finding before positions are known: rules produce these, the engine resolves nodes."""

    code: str
    message: str  # may contain {line:<id>} placeholders resolved with positions
    node: ast.AST
    related: Tuple[Tuple[ast.AST, str], ...] = ()
    fingerprint: Tuple[str, ...] = field(default=())
    fix: Optional[RawFix] = None  # set by rules whose fix needs more than the reported node
