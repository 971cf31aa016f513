"""Pair the reads and writes of one function into mismatches (see docs/design.md)."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from typing import Dict, FrozenSet, List, Optional, Sequence, Tuple

from keydrift.analysis import tree
from keydrift.analysis.facts import (
    BYPASSED, CALL, CASE, DEFAULTS, FETCH, FORMAT, LOOKUP, NORMALIZER, PART, READ, REDERIVED, REMOTE, SLASH, SLUG, UNICODE,
    WHITESPACE, KeyAccess, Mismatch, Step,
)
from keydrift.analysis.values import is_remote, last_name
from keydrift.patterns import lazy

_REDERIVING = (REDERIVED, FETCH, REMOTE)


def canonical_step(step: Step) -> Tuple[str, str]:
    """Steps compare by kind and operation: SQL ``lower()`` and ``.lower()`` are one step."""
    label = step.label
    if label.startswith("SQL "):
        label = label[4:]
    if step.kind == "case":
        return step.kind, label.lstrip(".").split("(", 1)[0]
    if step.kind == "normalizer":  # BaseUserManager.normalize_email() is normalize_email()
        return step.kind, label.split("(", 1)[0].rsplit(".", 1)[-1]
    return step.kind, label


def steps_not_applied(applied: Tuple[Step, ...], steps: Tuple[Step, ...]) -> Tuple[Step, ...]:
    """The steps of a (idempotent) normalization that ``applied`` does not already contain."""
    done = {canonical_step(s) for s in applied}
    return tuple(s for s in steps if canonical_step(s) not in done)


def effective_steps(access: KeyAccess, absorbs: FrozenSet[str]) -> Tuple[Step, ...]:
    return tuple(s for s in access.value.steps if s.kind not in absorbs)


_IDEMPOTENT_KINDS = frozenset({CASE, WHITESPACE, SLASH, UNICODE, SLUG, NORMALIZER})
_PREFIX_SLICE = lazy(r"^\[:\d+\]$")


def _idempotent(step: Step) -> bool:
    """Applying the step twice is applying it once: ``.lower()``, ``.strip()``, a normalizer,
    a prefix cut ``[:32]`` (not ``[:-1]``, which cuts again)."""
    return step.kind in _IDEMPOTENT_KINDS or (step.kind == PART and bool(_PREFIX_SLICE.match(step.label)))


def collapse_repeats(steps: Tuple[Step, ...]) -> Tuple[Step, ...]:
    """A helper that truncates or lowercases a value its caller already truncated or lowercased
    (``pname = addr[:32]`` then ``get_or_create(policy_name=pname[:32])``) stores the same key."""
    kept: List[Step] = []
    for step in steps:
        if kept and _idempotent(step) and canonical_step(kept[-1]) == canonical_step(step):
            continue
        kept.append(step)
    return tuple(kept)


def split_steps(read: KeyAccess, write: KeyAccess) -> Tuple[Tuple[Step, ...], Tuple[Step, ...]]:
    """The steps only the read and only the write apply, after their common prefix."""
    absorbs = read.absorbs | write.absorbs
    rs = collapse_repeats(effective_steps(read, absorbs))
    ws = collapse_repeats(effective_steps(write, absorbs))
    common = 0
    while common < min(len(rs), len(ws)) and canonical_step(rs[common]) == canonical_step(ws[common]):
        common += 1
    return rs[common:], ws[common:]


def shape(read: KeyAccess, write: KeyAccess) -> str:
    if write.role == DEFAULTS and read.call_id == write.call_id:
        return "defaults"
    if write.assigned_at is not None:
        return "reassigned"
    if write.role == BYPASSED:
        return "bypassed"
    rs, ws = split_steps(read, write)
    if write.rewritten_by and not rs:
        return "rewritten"
    if not rs:
        return "rederived" if any(s.kind in _REDERIVING for s in ws) else "write-transform"
    if not ws:
        return "read-transform"
    return "both"


def _comparable(read: KeyAccess, write: KeyAccess) -> bool:
    if read.call_id == write.call_id and not (read.role == LOOKUP and (write.role == DEFAULTS or write.rewritten_by)):
        # within one call only an upsert's lookup vs its defaults/SET, or vs the value the
        # model's save() rewrites it to, can disagree
        return False
    if _exclusive(read, write):
        return False
    return bool(read.value.origins & write.value.origins)


def _exclusive(read: KeyAccess, write: KeyAccess) -> bool:
    """Made in two arms of one if/elif/else: no run makes both, so the read is not the lookup of
    the row this write makes (whether the two entry points agree is the key registry's
    question, asked of every read and write of the project, not of one function's path)."""
    arms = dict(read.arms)
    return any(arms.get(statement, arm) != arm for statement, arm in write.arms)


_CALL_TEXT = lazy(r"^([A-Za-z_][\w.]*)\(")


def _constructed_field(steps: Tuple[Step, ...]) -> bool:
    """The only step is a field of an object built by a class constructor with the key
    (``ClusterNode(host, port).name``). Against a side that transforms the key, the pair is
    undecidable: the constructor may compute that field with the very same transformation
    (``self.name = get_node_name(host, port)``), which the analysis does not see. Against a raw
    side it stays a re-derivation (KD101: ``WebhookIn(target=t).target`` is a parsed URL)."""
    if len(steps) != 1 or steps[0].kind != REDERIVED:
        return False
    match = _CALL_TEXT.match(steps[0].label)
    if match is None:
        return False
    callee = match.group(1).rsplit(".", 1)[-1]
    return callee[:1].isupper() and not callee.isupper()


def _other_fields(rs: Tuple[Step, ...], ws: Tuple[Step, ...]) -> bool:
    """Both sides part ways at a field of one record (``get_book(i).title`` against
    ``get_book(i).path``): two fields of a record fetched by one key are two values, not one key
    transformed two ways."""
    return bool(rs and ws) and rs[0].kind == REDERIVED and ws[0].kind == REDERIVED


def _other_templates(rs: Tuple[Step, ...], ws: Tuple[Step, ...]) -> bool:
    """Both sides part ways at two key templates whose constant text differs by more than a
    spelling (``f"Card_{i}"`` against ``f"Card_1{i}"``, ``f"{u}#owners"`` against
    ``f"{u}#members"``): two keys of two records, as demo data and key families make them. Two
    templates that differ only by case, whitespace or slashes (``f"https://{h}"`` against
    ``f"https://{h}/"``) are one key spelled two ways, and still pair."""
    if not (rs and ws and rs[0].kind == FORMAT and ws[0].kind == FORMAT):
        return False
    first, second = _template_text(rs[0].label), _template_text(ws[0].label)
    return first is not None and second is not None and first != second


def _template_text(label: str) -> Optional[str]:
    """The constant text of a template label (``f"Card_{}"``) without the characters a
    normalization changes; None when the label was shortened."""
    if label.endswith("...") or "{" not in label:
        return None
    return re.sub(r"[\s/\\]", "", label).lower()


def _literal(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes))


def _renames(steps: Tuple[Step, ...]) -> bool:
    """A step replaces one variable part of the key by another (``fqdn.replace(f".{old}",
    f".{new}")`` after a zone was renamed): the written key is another entity's key on purpose,
    not a spelling of the read one. A constant part replaced (``.replace(" ", "-")``, or
    ``.replace(" ", sep)``) is still a normalization."""
    for step in steps:
        call = step.node
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "replace" \
                and len(call.args) >= 2 and not _literal(call.args[0]) and not _literal(call.args[1]):
            return True
    return False


# A record's identity the database assigned (``pk``, ``id``): never spelled two ways.
_IDENTITY_FIELDS = frozenset({"pk", "id"})


def _record_identity(write: KeyAccess, ws: Tuple[Step, ...]) -> bool:
    """The write selects its row by the database id of a record the function was given back
    (``top = load_top(pk)`` ... ``filter(pk=top.pk).update(...)``): an id is no spelling of a key
    that a transformation could change; a helper returning another record (the root of a
    tree, a merged duplicate) makes another row the target on purpose. A natural key taken
    from such a record (``find_page(url).url``) is still a re-derivation."""
    if write.field not in _IDENTITY_FIELDS:
        return False
    return all(s.kind == REDERIVED and s.label.rsplit(".", 1)[-1] in _IDENTITY_FIELDS for s in ws)


def _found_exactly_by_this_key(read: KeyAccess, write: KeyAccess, ws: Tuple[Step, ...]) -> bool:
    """The write's key is the key field of the record a helper found by this very key, compared
    exactly (``clip = find_clip(token)`` ... ``filter(token=clip.token)``, the helper doing
    ``filter(token=token)``): a row an exact comparison found holds the key byte for byte as it
    was given, so the write selects the row the read found (or, when the helper returns another
    record, another row on purpose). Found case-insensitively (``url__iexact``) or by a key
    the helper transformed, the row's spelling may differ: still a re-derivation."""
    if len(ws) != 1 or ws[0].kind != REDERIVED or read.absorbs or read.value.steps or not read.trace:
        return False
    call, _, field = ws[0].label.rpartition(".")
    if ws[0].label.endswith("..."):
        # a long call's label is cut short, field and all: the field is the one the write's
        # value names (``label.text``)
        call, field = ws[0].label, write.value.text.rpartition(".")[2]
    callee = read.trace[0][0]
    # the call's other arguments (a session, the parent's id) narrow the search, and their
    # origins join the found record's
    return field == write.field and callee.endswith("()") and call.startswith(callee[:-2] + "(") \
        and read.value.origins <= write.value.origins


def _same_helper_other_call(read: KeyAccess, write: KeyAccess, reads: Sequence[Tuple[int, KeyAccess]]) -> bool:
    """The read and the write come from two calls of one helper, and the write's own call looks
    the key up exactly as it writes it (``ensure_tag(label)``, ``ensure_tag(label.lower())``):
    each call is consistent by itself; the read of one is not the lookup of the other's row."""
    if not read.trace or not write.trace or read.call_id == write.call_id:
        return False
    if read.trace[0][0] != write.trace[0][0]:
        return False
    return any(r.call_id == write.call_id and not any(split_steps(r, write)) for _, r in reads)


def _pick(candidates: Sequence[Tuple[int, KeyAccess]], write_index: int, write: KeyAccess) -> KeyAccess:
    same_call = [r for _, r in candidates if r.call_id == write.call_id]
    if same_call:
        return same_call[0]
    before = [(i, r) for i, r in candidates if i < write_index]
    return (before[-1] if before else candidates[0])[1]


# Steps that make another key of the same kind (a suffix, a counter, a helper's new name), as a
# de-duplication does; a normalization only spells the same key another way.
_NEW_KEY_KINDS = frozenset({FORMAT, CALL, PART})


def _deduplicated(read: KeyAccess, write: KeyAccess, ws: Tuple[Step, ...], scope: Optional[ast.AST]) -> bool:
    """Every step only the write applies is made in the arm of an ``if``/``while`` that runs when
    the read *found* its row (``if Space.objects.filter(name=name).exists(): name = f"{name} #{n}"``,
    ``while ...exists(): slug = f"{base}-{n}"``): the key is changed because the lookup found it
    taken, a de-duplication on purpose, not another spelling of the read key. A normalization
    there, or a new key made when the lookup found nothing, is still a mismatch."""
    if scope is None or not ws or any(s.kind not in _NEW_KEY_KINDS for s in ws):
        return False
    for statement in tree.walk(scope):
        if isinstance(statement, (ast.If, ast.While)):
            found = _found_arm(statement, read.node, scope)
            if found is not None and all(_made_in(found, s.node, write, scope) for s in ws):
                return True
    return False


def _counter_suffixed(ws: Tuple[Step, ...], scope: Optional[ast.AST]) -> bool:
    """Every step only the write applies formats in a counter of the loop it is made in
    (``while True: ... attempts += 1; name = f"{original} ({attempts})"``, ``for n in
    range(2, 50): candidate = f"{base}-{n}"``): the key is numbered until it is free, a
    de-duplication whatever the loop tests (a set of names seen, the database). A format in a
    loop without a counter, or a normalization there, is still a mismatch."""
    if scope is None or not ws or any(s.kind != FORMAT or s.node is None for s in ws):
        return False
    return all(_formats_a_counter(s.node, scope) for s in ws)


def _formats_a_counter(node: ast.AST, scope: ast.AST) -> bool:
    names = {n.id for n in tree.walk(node) if isinstance(n, ast.Name)}
    return any(isinstance(loop, (ast.While, ast.For, ast.AsyncFor)) and _within(loop.body, node)
               and bool(names & _loop_counters(loop)) for loop in tree.walk(scope))


_COUNTING_ITERATORS = frozenset({"range", "count"})


def _loop_counters(loop: "ast.While | ast.For | ast.AsyncFor") -> set:
    """Names the loop raises by a constant (``n += 1``), and the target of ``for n in range(...)``
    or ``itertools.count()``."""
    counters = {node.target.id for node in tree.walk(loop)
                if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add)
                and isinstance(node.target, ast.Name) and isinstance(node.value, ast.Constant)}
    if isinstance(loop, (ast.For, ast.AsyncFor)) and isinstance(loop.target, ast.Name) \
            and isinstance(loop.iter, ast.Call) and last_name(loop.iter.func) in _COUNTING_ITERATORS:
        counters.add(loop.target.id)
    return counters


def _made_in(arm: Sequence[ast.stmt], node: Optional[ast.AST], write: KeyAccess, scope: ast.AST) -> bool:
    """The step at ``node`` is made in ``arm``: there, or in a helper (its node unknown or outside
    the function) whose result the arm binds to the name the write stores (``name = unique(name)``)."""
    if node is not None and _within(arm, node):
        return True
    name = write.value.text
    return name.isidentifier() and (node is None or not _contains(scope, node)) and any(
        isinstance(statement, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in statement.targets)
        for statement in arm)


def _found_arm(statement: "ast.If | ast.While", read: ast.AST, scope: ast.AST) -> Optional[Sequence[ast.stmt]]:
    """The arm of ``statement`` that runs when its test's lookup (``read``) found a row, if the
    test asks that lookup (directly, or through a name bound to it: ``taken = q.exists()``)."""
    found = _test_found(statement.test, read, scope)
    if found is None:
        return None
    if isinstance(statement, ast.While):
        return statement.body if found else None
    return statement.body if found else statement.orelse


def _test_found(test: ast.expr, read: ast.AST, scope: ast.AST) -> Optional[bool]:
    """True: the test holds only if the lookup found a row; False: the test fails only if it did;
    None: the test does not tell (it does not ask the lookup, or ``force or exists()``)."""
    if isinstance(test, ast.BoolOp):
        told = [_test_found(value, read, scope) for value in test.values]
        decisive = isinstance(test.op, ast.And)  # ``a and exists()`` holds only if found
        return decisive if decisive in told else None
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _test_found(test.operand, read, scope)
        return None if inner is None else not inner
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        inner = _test_found(test.left, read, scope)
        if inner is None:
            return None
        return inner if not _compares_to_nothing(test.ops[0], test.comparators[0]) else not inner
    if _contains(test, read) or (isinstance(test, ast.Name) and _bound_to(test.id, read, scope)):
        return True
    return None


def _compares_to_nothing(op: ast.cmpop, right: ast.expr) -> bool:
    """``x is None``, ``x == 0``, ``x < 1``: true when the lookup found nothing."""
    nothing = isinstance(right, ast.Constant) and right.value in (None, 0)
    return (nothing and isinstance(op, (ast.Is, ast.Eq))) or (
        isinstance(op, ast.Lt) and isinstance(right, ast.Constant) and right.value == 1)


def _bound_to(name: str, read: ast.AST, scope: ast.AST) -> bool:
    return any(isinstance(node, ast.Assign) and _contains(node.value, read)
               and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
               for node in tree.walk(scope))


def _contains(node: ast.AST, target: ast.AST) -> bool:
    return any(inner is target for inner in tree.walk(node))


def _within(suite: Sequence[ast.stmt], node: ast.AST) -> bool:
    return any(_contains(statement, node) for statement in suite)


def mismatch_for(write_index: int, write: KeyAccess, reads: Sequence[Tuple[int, KeyAccess]],
                 scope: Optional[ast.AST] = None) -> Optional[Mismatch]:
    candidates = []
    for index, read in reads:
        if not _comparable(read, write):
            continue
        rs, ws = split_steps(read, write)
        if not rs and not ws:
            return None  # some read uses exactly the written key: the pair is consistent
        if (rs and _constructed_field(ws)) or (ws and _constructed_field(rs)):
            continue  # undecidable: see _constructed_field
        if _renames(rs) or _renames(ws) or _other_fields(rs, ws) or _other_templates(rs, ws) \
                or _same_helper_other_call(read, write, reads):
            continue
        if not rs and (_deduplicated(read, write, ws, scope) or _counter_suffixed(ws, scope)
                       or _record_identity(write, ws) or _found_exactly_by_this_key(read, write, ws)):
            continue
        candidates.append((index, read))
    if not candidates:
        return None
    read = _pick(candidates, write_index, write)
    return Mismatch(shape(read, write), read, write)


def mismatches(accesses: Sequence[KeyAccess], row_reads: Sequence[KeyAccess] = (),
               scope: Optional[ast.AST] = None) -> List[Mismatch]:
    """``row_reads``: fields of query rows the function used that are not keys of their own
    (a job id, a status): they tell how a row was selected (see ``remote_identity``).
    ``scope``: the function (or module) the accesses were made in, to see which ``if`` arms
    the lookups decide (see ``_deduplicated``)."""
    groups: Dict[Tuple[str, str], List[Tuple[int, KeyAccess]]] = defaultdict(list)
    for index, access in enumerate(accesses):
        if access.entity and access.field:
            groups[(access.entity, access.field)].append((index, access))
    found = []
    for items in groups.values():
        reads = [(i, a) for i, a in items if a.kind == READ]
        for index, write in items:
            if write.kind == READ or write.value.is_constant():
                continue
            mismatch = mismatch_for(index, write, reads, scope) if reads else None
            if mismatch is None and not any(_comparable(r, write) for _, r in reads):
                mismatch = remote_identity(index, write, accesses, row_reads)
            if mismatch is not None:
                found.append(mismatch)
    return found


def remote_identity(write_index: int, write: KeyAccess, accesses: Sequence[KeyAccess],
                    row_reads: Sequence[KeyAccess] = ()) -> Optional[Mismatch]:
    """A write that picks its row by a value from a remote result (``UPDATE t ... WHERE url =
    status["original_url"]``) made with a value the function read from the same entity by
    another field: no read of this field to pair with, yet the row was selected by another key
    and the remote side may answer with another spelling of it (a redirect, a canonical form),
    so the write matches no row or another one. The read by the other field stands as the read.
    A read made with the remote answer too (``filter(project__id=project.id)`` of the project the
    remote result built) selected its rows by that answer, not by another key: no read."""
    if write.role != LOOKUP or not any(s.kind == REMOTE for s in write.value.steps):
        return None
    candidates = [a for i, a in enumerate(accesses) if i < write_index] + list(row_reads)
    for read in candidates:
        if read.kind == READ and read.entity == write.entity and read.field != write.field \
                and read.value.origins & write.value.origins and not is_remote(read.value.steps):
            return Mismatch("remote-identity", read, write)
    return None
