"""Function summaries: what a function does with its parameters, in terms a caller can reuse.

A summary lists the key accesses whose value comes from a parameter (with the steps the
function applies on the way) and what the function returns in terms of its parameters. Callers
import the accesses at the call site, so a read in the caller and a write in the helper pair up.
Summaries are plain data (no syntax nodes) so the project index can cache them on disk.
"""

from __future__ import annotations

import ast
from dataclasses import field
from typing import AbstractSet, Any, Dict, FrozenSet, List, Optional, Tuple

from keydrift.analysis.facts import (
    AccessKind, KeyAccess, Role, Step, StepKind, Value, step_kinds, steps_from_json, steps_to_json,
)
from keydrift.analysis.rows import RowSource
from keydrift.records import record

Trace = Tuple[Tuple[str, str], ...]  # ((what, where), ...): "save_result()", "app/repo.py:40"


@record
class SummaryAccess:
    """A read or write a function makes of a key its caller passes (as parameter ``param``)."""

    kind: AccessKind
    entity: str
    field: str
    role: Role
    param: int  # index into FunctionSummary.params
    suffix: str  # ".url" when the key is an attribute of the parameter
    steps: Tuple[Step, ...]
    absorbs: FrozenSet[StepKind]
    rewritten_by: str
    via: str
    trace: Trace
    where: str = ""  # "app/repo.py:40", filled when the summary leaves its module
    # the access node, for positions inside the module that owns it; never serialized
    node: Optional[ast.AST] = field(default=None, compare=False, hash=False, repr=False)


@record
class ReturnSummary:
    """What a function returns, in terms of its parameters: which, and through which steps."""

    params: Tuple[int, ...]  # every parameter the returned value comes from
    steps: Tuple[Step, ...]
    is_result: bool  # the function returns an object derived from the parameter (a response)


@record
class FunctionSummary:
    """What a caller needs to know of a function: the keys it reads and writes by its
    parameters, what it returns, the rows it returns, the mappings it copies onto objects."""

    name: str
    params: Tuple[str, ...]  # parameters a caller passes, without self/cls
    accesses: Tuple[SummaryAccess, ...] = ()
    returns: Optional[ReturnSummary] = None
    rows: Optional[RowSource] = None  # the function returns rows of a query (or one column of them)
    # (mapping parameter, object parameter): every key of the mapping is assigned onto the object
    copies: Tuple[Tuple[int, int], ...] = ()

    def param_index(self, name: str) -> int:
        return self.params.index(name) if name in self.params else -1


def parameter_of(value: Value, params: Tuple[str, ...]) -> Optional[Tuple[int, str]]:
    """Which parameter a value comes from: (index, attribute suffix). The first parameter it
    comes from; the parameter itself before an attribute of it (``project.name if ... else
    project``), else the shortest attribute path. Never the set's iteration order, which
    changes with the string hash seed of each process."""
    for index, name in enumerate(params):
        if name in value.origins:
            return index, ""
        attributes = [origin[len(name):] for origin in value.origins
                      if origin.startswith(name + ".") and "(" not in origin]
        if attributes:
            return index, min(attributes, key=lambda suffix: (len(suffix), suffix))
    return None


def summarize_access(access: KeyAccess, params: Tuple[str, ...], trace: Trace) -> Optional[SummaryAccess]:
    found = parameter_of(access.value, params)
    if found is None:
        return None
    index, suffix = found
    if suffix and access.value.steps:
        return None
    return SummaryAccess(access.kind, access.entity, access.field, access.role, index, suffix,
                         access.value.steps, access.absorbs, access.rewritten_by, access.via,
                         trace + access.trace, node=access.node)


def summarize_return(values: List[Value], params: Tuple[str, ...],
                     stored_forms: AbstractSet[str] = frozenset()) -> Optional[ReturnSummary]:
    """The returned value in terms of the parameters: every parameter any return statement
    returns, with the steps of the return that transforms most. None when a return may be the
    key in its stored form instead (``stored_forms``: the fields of records the function found
    ignoring case)."""
    sources: List[int] = []
    best: Optional[Value] = None
    for value in values:
        indexes = [i for i, name in enumerate(params) if name in value.origins]
        if not indexes:
            continue
        if not value.origins.isdisjoint(stored_forms):
            # ``user.username if user else username``: the parameter, or the key as stored in
            # the record found by it: a caller cannot take it for its argument as given
            return None
        sources += [i for i in indexes if i not in sources]
        if best is None or len(value.steps) > len(best.steps):
            best = value
    if best is None:
        return None
    return ReturnSummary(tuple(sorted(sources)), best.steps, bool(best.result_of))


def summarize_copies(copies: List[Tuple[Value, str]], params: Tuple[str, ...]) -> Tuple[Tuple[int, int], ...]:
    """Payload copies of a parameter mapping onto a parameter object, by parameter index."""
    found = []
    for mapping, target in copies:
        source = parameter_of(mapping, params)
        if source is not None and not source[1] and target in params:
            pair = (source[0], params.index(target))
            if pair not in found:
                found.append(pair)
    return tuple(found)


def summarize_rows(returned: List[Optional[RowSource]]) -> Optional[RowSource]:
    """The rows every ``return`` of the function hands back, when they agree."""
    kept = [r for r in returned if r is not None]
    return kept[0] if kept and all(r == kept[0] for r in kept) else None


def _rows_json(rows: Optional[RowSource]) -> Optional[Dict[str, Any]]:
    if rows is None:
        return None
    return {"entity": rows.entity, "columns": [list(c) for c in rows.columns], "names": list(rows.names),
            "flat": rows.flat, "joins": [[list(a), list(b)] for a, b in rows.joins], "records": rows.records}


def _rows_from(data: Optional[Dict[str, Any]]) -> Optional[RowSource]:
    if not data:
        return None
    return RowSource(str(data["entity"]), tuple((str(e), str(f)) for e, f in data["columns"]),
                     tuple(str(n) for n in data["names"]), bool(data["flat"]),
                     tuple(((str(a[0]), str(a[1])), (str(b[0]), str(b[1]))) for a, b in data["joins"]),
                     bool(data["records"]))


# -- serialization (the project index caches summaries as JSON) -----------------------------

def to_json(summary: FunctionSummary) -> Dict[str, Any]:
    return {
        "name": summary.name,
        "params": list(summary.params),
        "accesses": [{
            "kind": a.kind, "entity": a.entity, "field": a.field, "role": a.role, "param": a.param,
            "suffix": a.suffix, "steps": steps_to_json(a.steps), "absorbs": sorted(a.absorbs),
            "rewritten_by": a.rewritten_by, "via": a.via, "trace": [list(t) for t in a.trace],
            "where": a.where,
        } for a in summary.accesses],
        "returns": None if summary.returns is None else {
            "params": list(summary.returns.params), "steps": steps_to_json(summary.returns.steps),
            "is_result": summary.returns.is_result,
        },
        "rows": _rows_json(summary.rows),
        "copies": [list(c) for c in summary.copies],
    }


def from_json(data: Dict[str, Any]) -> FunctionSummary:
    returns = data.get("returns")
    return FunctionSummary(
        name=str(data["name"]),
        params=tuple(str(p) for p in data["params"]),
        accesses=tuple(SummaryAccess(
            AccessKind(a["kind"]), str(a["entity"]), str(a["field"]), Role(a["role"]), int(a["param"]),
            str(a["suffix"]), steps_from_json(a["steps"]), step_kinds(a["absorbs"]), str(a["rewritten_by"]),
            str(a["via"]), tuple((str(w), str(p)) for w, p in a["trace"]), str(a["where"]),
        ) for a in data["accesses"]),
        returns=None if returns is None else ReturnSummary(
            tuple(int(p) for p in returns["params"]), steps_from_json(returns["steps"]), bool(returns["is_result"])),
        rows=_rows_from(data.get("rows")),
        copies=tuple((int(m), int(o)) for m, o in data.get("copies", ())),
    )
