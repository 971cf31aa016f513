"""Key columns of DB-API SQL strings (docs/design.md, "Key field"), read with sqlglot.

``parse_sql(text)`` returns the statement kind, the placeholder style and one ``SqlKey`` per
column the statement looks a record up by, identifies it by, or stores:

- ``read``: an equality-like comparison in the WHERE/HAVING of a SELECT (including subqueries
  such as ``EXISTS``/``NOT EXISTS``/``IN (SELECT ...)`` anywhere, and the WHERE of an
  UPDATE/DELETE on a table other than the target: ``DELETE ... USING``, ``UPDATE ... FROM``)
  and in ``JOIN ... ON``;
- ``identify``: an equality-like comparison in the WHERE of an UPDATE/DELETE on its target;
- ``store``: INSERT column values (first row of VALUES only; INSERT ... SELECT and INSERT
  without a column list store nothing) and ``UPDATE ... SET col = value``;
- ``conflict-set``: ``ON CONFLICT ... DO UPDATE SET`` / ``ON DUPLICATE KEY UPDATE``; a value
  taken from the inserted row (``excluded.col``, MySQL ``VALUES(col)`` or ``AS new ... new.col``)
  is reported in ``from_excluded``.

Equality-like means ``=``/``==``, ``<=>``/``IS NOT DISTINCT FROM``, ``IN (?, ?)`` (one key per
listed value), ``IN ?`` and ``= ANY(?)`` (one key whose value is the whole sequence), ``LIKE``
and ``ILIKE``. ``ILIKE`` is reported as a plain comparison with ``"ilike"`` appended to
``column_funcs`` (outermost); the caller decides that it absorbs case. ``IS``, ``!=``, ``<``,
``>``, ``BETWEEN`` and comparisons under ``NOT`` are not keys. Comparisons joined by ``OR`` are
kept: each alternative still looks the record up by that column, and dropping them would hide
real reads. A comparison is a key only when one side holds exactly one column and the other
holds no column and at most one placeholder; a side holding no placeholder (a literal) gives
``param=None``. Comparisons nested in CASE, function arguments and the like are ignored.

``column_funcs``/``value_funcs`` list what wraps the column/value, innermost first: function
names lowercased as sqlglot normalizes them (``lcase`` -> ``lower``; ``rtrim``/``ltrim``/
``trim`` kept apart), ``concat`` for ``||``, ``collate <name>`` for COLLATE, sqlglot's node key
for other operators (``add``, ...). Casts, parentheses and ``ANY(...)`` are transparent.

Keys come in a depth-first walk of the tree: textual order, except that the keys of a
subquery may come after those of the clause around it. Several statements in one string
(``executescript``) are all read: ``keys`` and ``conflict_columns`` gather every statement,
``kind`` is that of the first select/insert/update/delete statement (``"other"`` when there is
none), and positional placeholders are numbered across the whole text, as drivers do.
``REPLACE INTO`` counts as an insert when it starts a statement.

Limits: placeholders are found by a scanner that knows '...' strings (doubled quotes and
backslash escapes), "..." and `...` identifiers, -- and /* */ comments and $tag$ strings;
a PostgreSQL ``?``/``?|`` JSON operator is taken for a placeholder. Tables named by a CTE or
a derived table are resolved to the underlying table only when that query selects from one
table and passes the column through (``*`` or the same name); otherwise the CTE/alias name is
reported. Unqualified columns go to the first table of the innermost query. Text whose first
word (after comments and parentheses) does not start a SQL statement is not parsed at all.
The first call imports sqlglot and gives its logger a NullHandler, so its fallback warnings
never reach stderr through Python's last-resort handler.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Dict, FrozenSet, Iterator, List, Optional, Set, Tuple, Union

from keydrift.patterns import lazy
from keydrift.records import record

READ = "read"
IDENTIFY = "identify"
STORE = "store"
CONFLICT_SET = "conflict-set"

Param = Union[int, str, None]


@record
class SqlKey:
    """One key column of a statement; see the module docstring for roles and funcs."""

    role: str
    table: str
    column: str
    param: Param
    column_funcs: Tuple[str, ...] = ()
    value_funcs: Tuple[str, ...] = ()
    from_excluded: str = ""


@record
class SqlStatement:
    """The keys an SQL statement reads or writes, its conflict target and its placeholder style."""

    kind: str  # "select" | "insert" | "update" | "delete" | "other"
    keys: Tuple[SqlKey, ...]
    conflict_columns: Tuple[str, ...]
    placeholder_style: str  # "qmark" | "format" | "pyformat" | "named" | "numeric" | "none"


def parse_sql(sql: str) -> Optional[SqlStatement]:
    """The keys of ``sql``, or None when it is not SQL or sqlglot cannot parse it.
    Memoized: editors re-check the same strings on every save."""
    return _parse_cached(sql) if isinstance(sql, str) else None


@functools.lru_cache(maxsize=2048)
def _parse_cached(sql: str) -> Optional[SqlStatement]:
    try:
        return _parse_sql(sql)
    except (Exception, RecursionError):  # a linter must survive any input
        return None


def _parse_sql(sql: str) -> Optional[SqlStatement]:
    if not _looks_like_sql(sql):
        return None
    text, params, style = _substitute(sql)
    statements = _parse(text)
    if statements is None:
        return None
    keys: List[SqlKey] = []
    conflicts: List[str] = []
    for statement in statements:
        keys.extend(_statement_keys(statement, params))
        conflicts.extend(c for c in _conflict_columns(statement) if c not in conflicts)
    kinds = [_kind(s) for s in statements]
    kind = next((k for k in kinds if k != "other"), "other")
    return SqlStatement(kind, tuple(keys), tuple(conflicts), style)


# --- text: the SQL gate and placeholders ------------------------------------------------

_SQL_START = frozenset(
    "select insert update delete replace with upsert merge values create drop alter truncate"
    " begin commit rollback savepoint release pragma explain analyze vacuum show copy lock"
    " grant revoke call declare reindex attach detach comment refresh listen notify prepare"
    " execute deallocate set".split()
)


def _looks_like_sql(sql: str) -> bool:
    """Cheap gate so arbitrary strings never reach sqlglot: the first word, after
    whitespace, comments and parentheses, must start a statement."""
    return _first_word(sql) in _SQL_START


def _first_word(sql: str) -> str:
    """The first word after whitespace, comments and parentheses, lower-cased."""
    i, n = 0, len(sql)
    while i < n:
        if sql[i].isspace() or sql[i] == "(":
            i += 1
        elif sql.startswith("--", i):
            i = _index(sql, "\n", i)
        elif sql.startswith("/*", i):
            i = _index(sql, "*/", i) + 2
        else:
            break
    j = i
    while j < n and sql[j].isalpha():
        j += 1
    return sql[i:j].lower()


def _index(text: str, sub: str, start: int) -> int:
    found = text.find(sub, start)
    return len(text) if found < 0 else found


# --- the text alone: what needs no parse ------------------------------------------------
# Importing sqlglot is a fifth of the CPU of a one-file check; these answers need only the text.

def binds_no_value(sql: str) -> bool:
    """Whether ``sql`` is SQL that binds no parameter: no key of it can name a Python value
    (each key's ``param`` is None; a value taken from the inserted row follows a stored value,
    and none is stored), so an ``execute()`` of it reports nothing, whether or not sqlglot can
    read the statement."""
    return isinstance(sql, str) and _looks_like_sql(sql) and not _substitute(sql)[1]


# Statements whose first word is one of these are never a SELECT (INSERT ... SELECT is an INSERT).
_NOT_A_SELECT = frozenset(
    "insert update delete replace create drop alter truncate pragma vacuum begin commit rollback"
    " savepoint release".split()
)


def selects_no_table(sql: str) -> bool:
    """Whether ``select_shape(sql)`` surely names no table: the text is not SQL, its first
    statement is no SELECT, or it is a SELECT with no FROM anywhere in the text."""
    if not isinstance(sql, str) or not _looks_like_sql(sql):
        return True
    verb = _first_word(sql)
    return verb in _NOT_A_SELECT or (verb == "select" and "from" not in sql.lower())


_SCAN = lazy(
    r"""
      '(?:[^'\\]|''|\\.)*'?                      # string literal
    | "(?:[^"]|"")*"?                            # quoted identifier
    | `[^`]*`?
    | --[^\n]*
    | /\*.*?(?:\*/|\Z)
    | \$(?P<tag>(?:[A-Za-z_]\w*)?)\$.*?(?:\$(?P=tag)\$|\Z)   # dollar-quoted string
    | (?P<pyformat>%\((?P<pname>[^)]*)\)s)
    | (?P<pct>%%)
    | (?P<format>%s)
    | (?P<qmark>\?)
    | (?<![\w$])\$(?P<dollar>\d+)
    | (?<![\w:]):(?P<colon>\d+)
    | (?<![\w:]):(?P<named>[A-Za-z_]\w*)
    | (?P<replace>\bREPLACE(?=\s+(?:LOW_PRIORITY\s+|DELAYED\s+)?INTO\b))
    """,
    re.S | re.X | re.I,
)
_MARK = "kdp"
_STYLES = {"qmark": "qmark", "format": "format", "pyformat": "pyformat", "named": "named",
           "dollar": "numeric", "colon": "numeric"}


def _substitute(sql: str) -> Tuple[str, Dict[str, Param], str]:
    """Replace each placeholder outside literals and comments by a ``:kdpN`` marker, which
    every sqlglot dialect parses as a placeholder; return the text, marker -> param, style."""
    out: List[str] = []
    params: Dict[str, Param] = {}
    style = "none"
    last = positional = 0
    for match in _SCAN.finditer(sql):
        kind = match.lastgroup
        if kind is None or kind == "tag":
            continue
        out.append(sql[last:match.start()])
        last = match.end()
        if kind == "pct":
            out.append("%")
        elif kind == "replace":
            out.append(_replace_into(sql, match.start()))
        else:
            marker = f"{_MARK}{len(params)}"
            params[marker], positional = _param(kind, match, positional)
            style = _STYLES[kind] if style == "none" else style
            out.append(f" :{marker} ")
    out.append(sql[last:])
    return "".join(out), params, style


def _replace_into(sql: str, start: int) -> str:
    """sqlglot parses MySQL's ``REPLACE INTO`` only as an opaque command; read it as the
    INSERT it is, but only where a statement starts (not in ``INSERT OR REPLACE INTO``)."""
    before = sql[:start].rstrip()
    return "INSERT" if not before or before.endswith(";") else sql[start:start + 7]


def _param(kind: str, match: "re.Match[str]", positional: int) -> Tuple[Param, int]:
    if kind in ("qmark", "format"):
        return positional, positional + 1
    if kind in ("dollar", "colon"):
        return int(match.group(kind)) - 1, positional
    return match.group("pname" if kind == "pyformat" else "named"), positional


# --- parsing -------------------------------------------------------------------------

_DIALECTS = ("postgres", "sqlite", "mysql")  # postgres first: "x" is an identifier there


@functools.lru_cache(maxsize=None)
def _sqlglot() -> Any:
    import logging  # with sqlglot, which imports it anyway: a check without SQL needs neither
    import sqlglot

    # sqlglot warns when it falls back to an opaque Command; without a handler Python's
    # last-resort handler would print that to the editor's stderr.
    logging.getLogger("sqlglot").addHandler(logging.NullHandler())
    return sqlglot


def import_sqlglot() -> None:
    """Import sqlglot now: a process about to fork workers that would each import it on their
    first SQL string (a third of a second of CPU apiece) imports it once for all of them."""
    _sqlglot()


# A statement executed in a loop is read twice, for its keys (``parse_sql``) and for its rows
# (``select_shape``): the second reading takes the first one's trees, which neither changes.
@functools.lru_cache(maxsize=64)
def _parse(text: str) -> Optional[List[Any]]:
    """The statements of the first dialect that parses ``text`` without opaque commands,
    else of the first that parses it at all."""
    sqlglot = _sqlglot()
    from sqlglot import exp

    fallback = None
    for dialect in _DIALECTS:
        try:
            statements = [s for s in sqlglot.parse(text, read=dialect) if s is not None]
        except (Exception, RecursionError) as error:
            _drop_frames(error)
            continue
        if not statements:
            continue
        if not any(isinstance(s, exp.Command) for s in statements):
            return statements
        fallback = fallback or statements
    return fallback


def _drop_frames(error: BaseException) -> None:
    """Let go of the frames a parser's error holds: the parser keeps its errors, and an error's
    traceback holds the parser's frames (a cycle) and through them the whole stack of the
    analysis that asked; only a full collection would free them."""
    seen: Set[int] = set()
    current: Optional[BaseException] = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        current.__traceback__ = None
        current = current.__context__ or current.__cause__


def _kind(statement: Any) -> str:
    from sqlglot import exp

    kinds = ((exp.Insert, "insert"), (exp.Update, "update"), (exp.Delete, "delete"),
             (exp.Select, "select"), (exp.Union, "select"), (exp.Intersect, "select"),
             (exp.Except, "select"))
    return next((name for cls, name in kinds if isinstance(statement, cls)), "other")


def _conflict_columns(statement: Any) -> Iterator[str]:
    from sqlglot import exp

    for insert in statement.find_all(exp.Insert):
        conflict = insert.args.get("conflict")
        for key in (conflict.args.get("conflict_keys") or []) if conflict else []:
            node = key.this if isinstance(key, exp.Ordered) else key
            if node.name:
                yield node.name.lower()


# --- keys ----------------------------------------------------------------------------


class _Ctx:
    """Per-statement lookups: marker -> param, CTE name -> query, scope -> sources."""

    def __init__(self, statement: Any, params: Dict[str, Param]) -> None:
        from sqlglot import exp

        self.params = params
        self.ctes = {c.alias_or_name.lower(): c.this for c in statement.find_all(exp.CTE)}
        self._sources: Dict[int, Dict[str, Any]] = {}
        self.clauses: Dict[int, Tuple[Any, Any]] = {}

    def sources(self, scope: Any) -> Dict[str, Any]:
        key = id(scope)
        if key not in self._sources:
            self._sources[key] = _scope_sources(scope)
        return self._sources[key]


def _statement_keys(statement: Any, params: Dict[str, Param]) -> Iterator[SqlKey]:
    from sqlglot import exp

    ctx = _Ctx(statement, params)
    comparisons = (exp.EQ, exp.NullSafeEQ, exp.Like, exp.ILike, exp.In)
    for node in statement.walk(bfs=False):  # depth-first: roughly textual order
        if isinstance(node, exp.Insert):
            yield from _insert_keys(node, ctx)
        elif isinstance(node, comparisons):
            yield from _comparison_keys(node, ctx)


def _insert_keys(insert: Any, ctx: _Ctx) -> Iterator[SqlKey]:
    from sqlglot import exp

    schema, values = insert.this, insert.expression
    if not isinstance(schema, exp.Schema) or not isinstance(values, exp.Values):
        return
    rows = values.expressions
    row = rows[0].expressions if rows and isinstance(rows[0], exp.Tuple) else rows[:1]
    if len(row) != len(schema.expressions):  # e.g. execute_values' `VALUES %s`
        return
    table = _table_name(schema.this)
    for ident, item in zip(schema.expressions, row):
        value = _value_side(item, ctx, frozenset())
        if value is not None:
            yield SqlKey(STORE, table, ident.name.lower(), value[0], (), value[1], value[2])


def _comparison_keys(node: Any, ctx: _Ctx) -> Iterator[SqlKey]:
    from sqlglot import exp

    context = None if node.args.get("negate") else _context(node, ctx)  # NOT LIKE, NOT IN
    if context is None:
        return
    role, scope = context
    excluded = _excluded_names(scope) if role == CONFLICT_SET else frozenset()
    for column_node, value_node in _operand_pairs(node, assignment=role in (STORE, CONFLICT_SET)):
        column = _column_side(column_node)
        value = _value_side(value_node, ctx, excluded)
        if column is None or value is None:
            continue
        resolved = _resolve(column[0], scope, ctx)
        if resolved is None:
            continue
        funcs = column[1] + (("ilike",) if isinstance(node, exp.ILike) else ())
        key_role = _refine_role(role, scope, resolved[0], ctx)
        yield SqlKey(key_role, resolved[0], resolved[1], value[0], funcs, value[1], value[2])


def _context(node: Any, ctx: _Ctx) -> Optional[Tuple[str, Any]]:
    """(role, scope node) of a comparison, or None when it is not a key position."""
    from sqlglot import exp

    parent = node.parent
    if isinstance(parent, exp.Update) and node.arg_key == "expressions":
        return STORE, parent
    if isinstance(parent, exp.OnConflict) and node.arg_key == "expressions":
        return (CONFLICT_SET, parent.parent) if isinstance(parent.parent, exp.Insert) else None
    clause, child = _clause(node, ctx.clauses)
    if isinstance(clause, exp.Join) and child.arg_key == "on":
        return READ, clause.parent
    scope = clause.parent if isinstance(clause, (exp.Where, exp.Having)) else None
    if isinstance(scope, (exp.Update, exp.Delete)):
        return IDENTIFY, scope
    return (READ, scope) if isinstance(scope, exp.Select) else None


def _clause(node: Any, memo: Dict[int, Tuple[Any, Any]]) -> Tuple[Any, Any]:
    """The first ancestor of a comparison that is not AND/OR/parentheses (or the ESCAPE of
    a LIKE), with the child it was reached from. Memoized per connective because a WHERE of
    thousands of ANDs is one deep chain that every comparison would climb again."""
    from sqlglot import exp

    path = []
    child, parent = node, node.parent
    while isinstance(parent, (exp.And, exp.Or, exp.Paren)) or (
        isinstance(parent, exp.Escape) and child.arg_key == "this"
    ):
        if id(parent) in memo:
            result = memo[id(parent)]
            break
        path.append(parent)
        child, parent = parent, parent.parent
    else:
        result = (parent, child)
    for connective in path:
        memo[id(connective)] = result
    return result


def _refine_role(role: str, scope: Any, table: str, ctx: _Ctx) -> str:
    """An UPDATE/DELETE identifies rows of its target; other tables in it are only read."""
    if role != IDENTIFY:
        return role
    target = _through(scope.this, "", ctx, 0)
    return role if target is not None and target[0] == table else READ


def _operand_pairs(node: Any, assignment: bool) -> Iterator[Tuple[Any, Any]]:
    """(column side, value side) candidates of a comparison or SET assignment."""
    from sqlglot import exp

    if isinstance(node, exp.In):
        if node.args.get("query") is None:
            for item in node.expressions or [node.args.get("field")]:
                if item is not None:
                    yield node.this, item
        return
    left, right = node.this, node.expression
    if isinstance(left, exp.Tuple) and isinstance(right, exp.Tuple):
        if len(left.expressions) == len(right.expressions):
            yield from zip(left.expressions, right.expressions)
        return
    yield left, right
    if not assignment and not isinstance(node, (exp.Like, exp.ILike)):
        yield right, left


def _column_side(node: Any) -> Optional[Tuple[Any, Tuple[str, ...]]]:
    """(the one column in ``node``, the functions wrapping it), or None."""
    from sqlglot import exp

    columns = list(node.find_all(exp.Column))
    if len(columns) != 1 or node.find(exp.Placeholder) is not None:
        return None
    funcs = _wrappers(columns[0], node)
    return None if funcs is None else (columns[0], funcs)


def _value_side(
    node: Any, ctx: _Ctx, excluded: FrozenSet[str]
) -> Optional[Tuple[Param, Tuple[str, ...], str]]:
    """(param, functions wrapping it, from_excluded) of a value, or None when the value is
    not a single placeholder, a literal, or (in a conflict SET) the inserted row's column."""
    from sqlglot import exp

    leaves = list(node.find_all(exp.Placeholder, exp.Column))
    leaves += [a for a in node.find_all(exp.Anonymous) if a.name.upper() == "VALUES"]
    if len(leaves) > 1:
        return None
    if not leaves:
        return None if node.find(exp.Select) else (None, (), "")
    leaf = leaves[0]
    funcs = _wrappers(leaf, node)
    if funcs is None:
        return None
    if isinstance(leaf, exp.Placeholder):
        return ctx.params.get(leaf.name), funcs, ""
    if isinstance(leaf, exp.Anonymous):  # MySQL VALUES(col)
        inner = leaf.expressions
        return (None, funcs, inner[0].name.lower()) if excluded and inner else None
    if leaf.table.lower() in excluded:
        return None, funcs, leaf.name.lower()
    return None


def _excluded_names(insert: Any) -> FrozenSet[str]:
    """Qualifiers naming the row being inserted: ``excluded`` and MySQL's ``VALUES ... AS new``."""
    alias = insert.expression.alias if insert.expression is not None else ""
    return frozenset(n.lower() for n in ("excluded", alias) if n)


def _wrappers(leaf: Any, top: Any) -> Optional[Tuple[str, ...]]:
    """Names of the nodes from ``leaf`` up to ``top``, innermost first; None when the path
    crosses a query (the leaf belongs to a subquery)."""
    from sqlglot import exp

    transparent = (exp.Paren, exp.Cast, exp.Any)
    names: List[str] = []
    node = leaf
    while node is not top:
        node = node.parent
        if node is None or isinstance(node, (exp.Select, exp.Subquery, exp.Union)):
            return None
        if not isinstance(node, transparent):
            names.append(_func_name(node))
    return tuple(names)


_TRIMS = {"LEADING": "ltrim", "TRAILING": "rtrim"}


def _func_name(node: Any) -> str:
    from sqlglot import exp

    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    if isinstance(node, exp.Trim):
        return _TRIMS.get(str(node.args.get("position") or "").upper(), "trim")
    if isinstance(node, exp.Collate):
        return f"collate {node.expression.name.lower()}".strip()
    if isinstance(node, exp.DPipe):
        return "concat"
    if isinstance(node, exp.Func):
        return node.sql_name().lower()
    return node.key


# --- tables ----------------------------------------------------------------------------


def _table_name(table: Any) -> str:
    return str(table.name).lower()


def _scope_sources(scope: Any) -> Dict[str, Any]:
    """Alias -> Table or aliased Subquery named in ``scope`` itself (not in nested queries),
    in textual order."""
    from sqlglot import exp

    nested = (exp.Select, exp.Union, exp.Intersect, exp.Except, exp.With, exp.CTE)
    sources: Dict[str, Any] = {}
    stack = list(reversed(list(scope.iter_expressions())))
    while stack:
        node = stack.pop()
        if isinstance(node, exp.Table):
            sources.setdefault(node.alias_or_name.lower(), node)
        elif isinstance(node, exp.Subquery):
            if node.alias:
                sources.setdefault(node.alias.lower(), node)
        elif not isinstance(node, nested):
            stack.extend(reversed(list(node.iter_expressions())))
    return sources


def _resolve(column: Any, scope: Any, ctx: _Ctx) -> Optional[Tuple[str, str]]:
    """(table, column) of a column used in ``scope``: its qualifier looked up from the
    innermost query outwards; unqualified, the first table of the innermost query."""
    from sqlglot import exp

    qualifier, name = column.table.lower(), column.name.lower()
    node = scope
    while node is not None:
        if isinstance(node, (exp.Select, exp.Update, exp.Delete, exp.Insert)):
            sources = ctx.sources(node)
            source = sources.get(qualifier) if qualifier else next(iter(sources.values()), None)
            if source is not None:
                base = _through(source, name, ctx, 0)
                return base or (qualifier or source.alias_or_name.lower(), name)
        node = node.parent
    return None


def _through(source: Any, column: str, ctx: _Ctx, depth: int) -> Optional[Tuple[str, str]]:
    """The base (table, column) behind a table, CTE or derived table, when it is plain."""
    from sqlglot import exp

    if isinstance(source, exp.Schema):
        source = source.this
    if isinstance(source, exp.Subquery):
        query = source.this
    elif isinstance(source, exp.Table):
        name = _table_name(source)
        query = ctx.ctes.get(name) if not source.args.get("db") else None
        if query is None:
            return name, column
    else:
        return None
    if depth > 8 or not isinstance(query, exp.Select):
        return None
    return _pass_through(query, column, ctx, depth)


def _pass_through(query: Any, column: str, ctx: _Ctx, depth: int) -> Optional[Tuple[str, str]]:
    from sqlglot import exp

    sources = list(ctx.sources(query).values())
    if len(sources) != 1:
        return None
    for projection in query.expressions:
        if isinstance(projection, exp.Star) or not column:
            return _through(sources[0], column, ctx, depth + 1)
        inner = projection.this if isinstance(projection, exp.Alias) else projection
        if projection.alias_or_name.lower() == column and isinstance(inner, exp.Column):
            return _through(sources[0], inner.name.lower(), ctx, depth + 1)
    return None


# --- rows of a SELECT: what each row holds, and which columns were matched to which ----------

Column = Tuple[str, str]  # (table, column)


@record
class SelectShape:
    """The rows a SELECT returns: its first table, the projected columns in order (with the
    names a row is indexed by), and the column pairs compared with each other (``JOIN ... ON
    r.url = d.url``, ``NOT EXISTS (... WHERE r.url = d.url)``, ``d.url NOT IN (SELECT url ...)``):
    each such column was read by the other's values."""

    table: str
    columns: Tuple[Column, ...]  # ("", "") for an expression, (table, "*") for a star
    names: Tuple[str, ...]
    joins: Tuple[Tuple[Column, Column], ...]


def select_shape(sql: str) -> Optional[SelectShape]:
    """The row shape of a SELECT statement, or None (not SQL, not a SELECT, unparsable)."""
    return _shape_cached(sql) if isinstance(sql, str) else None


@functools.lru_cache(maxsize=512)
def _shape_cached(sql: str) -> Optional[SelectShape]:
    try:
        return _select_shape(sql)
    except (Exception, RecursionError):  # a linter must survive any input
        return None


def _select_shape(sql: str) -> Optional[SelectShape]:
    from sqlglot import exp

    if not _looks_like_sql(sql):
        return None
    text, params, _style = _substitute(sql)
    statements = _parse(text)
    if not statements or not isinstance(statements[0], exp.Select):
        return None
    select = statements[0]
    ctx = _Ctx(select, params)
    sources = ctx.sources(select)
    first = next(iter(sources.values()), None)
    base = _through(first, "", ctx, 0) if first is not None else None
    table = base[0] if base else ""
    columns: List[Column] = []
    names: List[str] = []
    for projection in select.expressions:
        inner = projection.this if isinstance(projection, exp.Alias) else projection
        if isinstance(inner, exp.Star):
            columns.append((table, "*"))
        elif isinstance(inner, exp.Column) and isinstance(inner.this, exp.Star):
            columns.append((_resolve(inner, select, ctx) or ("", ""))[0], "*")
        elif isinstance(inner, exp.Column):
            columns.append(_resolve(inner, select, ctx) or ("", ""))
        else:
            columns.append(("", ""))
        names.append(projection.alias_or_name.lower())
    return SelectShape(table, tuple(columns), tuple(names), tuple(_column_pairs(select, ctx)))


def _column_pairs(select: Any, ctx: _Ctx) -> Iterator[Tuple[Column, Column]]:
    from sqlglot import exp

    for node in select.walk(bfs=False):
        if isinstance(node, exp.EQ):
            left, right = node.this, node.expression
            if isinstance(left, exp.Column) and isinstance(right, exp.Column):
                a, b = _resolve(left, node, ctx), _resolve(right, node, ctx)
                if a and b and a != b:
                    yield a, b
        elif isinstance(node, exp.In) and isinstance(node.this, exp.Column):
            query = node.args.get("query")
            inner = query.this if isinstance(query, exp.Subquery) else query
            if isinstance(inner, exp.Select) and len(inner.expressions) == 1:
                projected = inner.expressions[0]
                projected = projected.this if isinstance(projected, exp.Alias) else projected
                a = _resolve(node.this, node, ctx)
                b = _resolve(projected, inner, ctx) if isinstance(projected, exp.Column) else None
                if a and b and a != b:
                    yield a, b
