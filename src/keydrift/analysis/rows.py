"""Rows: what a loop over a query's result holds, so that a row's own key counts as a read.

``for page in Page.objects.filter(status="due")`` selects rows by something else than their
key, but each ``page.url`` the loop uses *is* the key the row is stored under: a write of
``Page.url`` by a transformation of it (an upsert by the fetched page's final address, an
``UPDATE ... WHERE url = normalize(page.url)``, ``page.url = page.url.rstrip("/")``) misses
the row. A query that compares a column with another entity's column (an anti-join: ``exclude
(url__in=Result.objects.values_list("url"))``, ``LEFT JOIN results r ON r.url = d.url WHERE
r.id IS NULL``, ``outerjoin(Result, Result.url == Domain.url)``) read that other column by the
row's value, so ``page.url`` is also a read of ``Result.url``.

This module describes rows (``RowSource``) from a recognized query call; the key-flow walker
binds them to loop variables and turns the row fields a loop uses into reads.
"""

from __future__ import annotations

import ast
from typing import Callable, Iterator, List, Optional, Tuple

from keydrift.analysis.accesses import Context, column_of, is_model_name, keyword_args, positional_args, unchain
from keydrift.analysis.tree import all_argument_values, child_nodes, is_true, string_literal
from keydrift.analysis.values import last_name
from keydrift.frameworks import dbapi_sql as dbapi
from keydrift.frameworks import django_orm as django
from keydrift.frameworks import sqlalchemy_orm as sqla
from keydrift.records import record

Column = Tuple[str, str]  # (entity, field)
Join = Tuple[Column, Column]

# Chain methods after which the result is not rows of the entity (a count, a write, one record).
NOT_ROWS = (django.UPDATE_METHODS | django.DELETE_METHODS | django.CREATE_METHODS | django.UPSERT_METHODS
            | django.BULK_CREATE_METHODS | django.BULK_UPDATE_METHODS | django.SINGLE_RECORD_METHODS
            | frozenset({"exists", "count", "aggregate", "aexists", "acount", "insert", "replace",
                         "scalar", "one", "one_or_none", "first"}))
# Methods that hand back the rows of the call they are applied to.
ROW_PASSING = frozenset({"all", "iterator", "fetchall", "fetchmany", "scalars", "mappings", "unique",
                         "yield_per", "execution_options", "distinct", "order_by", "limit", "offset",
                         "select_related", "prefetch_related", "only", "defer", "using", "tuples"})
# session.scalars(stmt) / session.execute(stmt): the rows of the statement passed.
STATEMENT_RUNNERS = frozenset({"scalars", "execute", "stream_scalars", "stream"})
_JOIN_METHODS = frozenset({"join", "outerjoin", "join_from", "outerjoin_from"})
_FLAT_CONTAINERS = frozenset({"set", "frozenset", "list", "tuple", "sorted"})


@record
class RowSource:
    """The rows of one query: ``entity`` for fields named on a whole record, the projected
    columns (by position and by name) when the query selects columns, and column pairs the
    query compared (``joins``)."""

    entity: str
    columns: Tuple[Column, ...] = ()
    names: Tuple[str, ...] = ()
    flat: bool = False  # each row is the one projected value (``values_list("url", flat=True)``)
    joins: Tuple[Join, ...] = ()
    records: bool = False  # rows are model instances: assigning a field and saving writes it

    def by_name(self, name: str) -> Optional[Column]:
        for column, named in zip(self.columns, self.names):
            if named == name and column[0] and column[1] != "*":
                return column
        if self.entity and (not self.columns or any(c[1] == "*" for c in self.columns)):
            return self.entity, name
        return None

    def by_index(self, index: int) -> Optional[Column]:
        if 0 <= index < len(self.columns):
            column = self.columns[index]
            if column[0] and column[1] != "*":
                return column
        return None

    def partners(self, column: Column) -> List[Column]:
        return [b for a, b in self.joins if a == column] + [a for a, b in self.joins if b == column]

    def single(self) -> Optional[Column]:
        """The one column every row holds (a projection of one field)."""
        return self.by_index(0) if len(self.columns) == 1 else None


def chain_rows(call: ast.Call, entity: str, ctx: Context) -> Optional[RowSource]:
    """Rows of a recognized ORM read chain (Django/peewee managers, ``session.query(M)``,
    ``select(M)``), or None for a write, an aggregate or a single record."""
    if not entity:
        return None
    _base, links = unchain(call)
    columns: Tuple[Column, ...] = ()
    names: Tuple[str, ...] = ()
    flat = False
    joins: List[Join] = []
    for name, link in links:
        if link is None:
            continue
        if name in NOT_ROWS:
            return None
        if name in ("values_list", "values"):
            fields = [ctx.string_value(a) for a in positional_args(link)]
            if not all(fields):
                return None
            names = tuple(f for f in fields if f)
            columns = tuple((entity, f) for f in names)
            flat = name == "values_list" and len(names) == 1 and _is_true(link, "flat")
        if name in django.LOOKUP_METHODS or name in sqla.CRITERIA_METHODS or name in _JOIN_METHODS:
            joins += _membership_joins(link, entity, ctx)
            joins += _column_joins(link)
            joins += _outer_ref_joins(link, entity, ctx)
    return RowSource(entity, columns, names, flat, tuple(joins), records=not columns)


def sql_rows(text: str) -> Optional[RowSource]:
    """Rows of a DB-API ``execute("SELECT ...")``."""
    from keydrift.analysis.sql import select_shape, selects_no_table

    if selects_no_table(text):  # known from the text, without sqlglot
        return None
    shape = select_shape(text)
    if shape is None or not shape.table:
        return None
    return RowSource(shape.table, shape.columns, shape.names, False, shape.joins)


def is_execute(call: ast.Call) -> bool:
    return isinstance(call.func, ast.Attribute) and call.func.attr in dbapi.EXECUTE_METHODS


def row_calls(node: ast.expr, resolve: Callable[[ast.expr], ast.expr]) -> Iterator[ast.expr]:
    """The expression a loop iterates and the calls whose rows it passes on, outermost first:
    ``session.scalars(stmt).all()`` -> itself, ``session.scalars(stmt)``, ``stmt`` (names
    resolved to what they are bound to)."""
    for _ in range(12):
        node = resolve(node)
        yield node
        if isinstance(node, ast.Await):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ROW_PASSING:
            node = node.func.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in STATEMENT_RUNNERS and positional_args(node):
            node = positional_args(node)[0]
        elif isinstance(node, ast.Call) and last_name(node.func) in _FLAT_CONTAINERS \
                and len(node.args) + len(node.keywords) == 1:
            # the one argument, whatever its kind (``*x`` -> x)
            node = all_argument_values(node)[0]
        else:
            return


def _is_true(call: ast.Call, keyword: str) -> bool:
    return any(k == keyword and is_true(v) for k, v in keyword_args(call))


def _membership_joins(call: ast.Call, entity: str, ctx: Context) -> List[Join]:
    """``url__in=Result.objects.values_list("url")`` (in ``filter`` or ``exclude``)."""
    joins = []
    for name, value in keyword_args(call):
        field_name, _, lookup = name.rpartition("__")
        if lookup != "in" or not field_name or "__" in field_name:
            continue
        other = ctx.projection(value)
        if other is not None:
            joins.append(((entity, field_name), other))
    return joins


def _column_joins(call: ast.Call) -> List[Join]:
    """``Result.url == Domain.url`` in ``outerjoin``/``join``/``filter``/``where``."""
    joins = []
    for arg in positional_args(call):
        comparisons = [arg] if isinstance(arg, ast.Compare) else [
            a for a in _and_terms(arg) if isinstance(a, ast.Compare)]
        for comparison in comparisons:
            if len(comparison.ops) != 1 or not isinstance(comparison.ops[0], ast.Eq):
                continue
            left, right = column_of(comparison.left), column_of(comparison.comparators[0])
            if left is not None and right is not None and left[:2] != right[:2]:
                joins.append((left[:2], right[:2]))
    return joins


def _and_terms(node: ast.expr) -> List[ast.expr]:
    if isinstance(node, ast.Call) and last_name(node.func) == "and_":
        return [t for a in positional_args(node) for t in _and_terms(a)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd):
        return _and_terms(node.left) + _and_terms(node.right)
    return [node]


def _outer_ref_joins(call: ast.Call, entity: str, ctx: Context) -> List[Join]:
    """``~Exists(Result.objects.filter(url=OuterRef("url")))``: Result.url read by the row's url."""
    joins = []
    for value in all_argument_values(call):
        for node in _calls_in(value, ctx):
            base, links = unchain(node)
            other = last_name(base) if base is not None else ""
            if not is_model_name(other):
                continue
            for name, link in links:
                if link is None or name not in django.LOOKUP_METHODS:
                    continue
                for field_name, value in keyword_args(link):
                    outer = _outer_ref(value)
                    if outer and "__" not in field_name:
                        joins.append(((entity, outer), (other, field_name)))
    return joins


def _outer_ref(value: ast.expr) -> str:
    if isinstance(value, ast.Call) and last_name(value.func) == "OuterRef" and (value.args or value.keywords):
        ref = all_argument_values(value)[0]  # the first argument in source order
        text = string_literal(ref)
        return text if text is not None and "__" not in text else ""
    return ""


def _calls_in(node: ast.AST, ctx: Context) -> Iterator[ast.Call]:
    """The calls in an expression, names resolved to what they are bound to (a subquery
    built on an earlier line)."""
    stack = [node]
    seen = 0
    while stack and seen < 200:
        current = stack.pop()
        seen += 1
        if isinstance(current, ast.Name):
            bound = ctx.resolve(current)
            if bound is not current:
                stack.append(bound)
            continue
        if isinstance(current, ast.Call):
            yield current
        stack.extend(child_nodes(current))
