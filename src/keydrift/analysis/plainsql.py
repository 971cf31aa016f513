"""Plain SQL: simple statements that bind no parameter, read without sqlglot.

Every key of a statement that binds no parameter has no parameter (``SqlKey.param`` is None),
so an ``execute()`` of it reports no key whatever the keys are (``layers/dbapi_sql.py``). What
such a call still depends on is whether sqlglot reads the text at all (``parse_sql`` is not
None: the call is DB-API SQL, not one for the other layers), and a loop over its rows on whether
it selects from a table (``select_shape``). For the statements of this grammar both answers are
known without sqlglot, whose import is a fifth of a one-file check (0.15 of 0.8 s of CPU); tests
parse each of its forms with sqlglot (``tests/test_plainsql.py``). Anything else goes to sqlglot.

    statement := PRAGMA name [= value | (value)]
               | SELECT (* | expr, ...) [FROM name [WHERE condition]]
               | INSERT [OR IGNORE | OR REPLACE] INTO name [(word, ...)] VALUES (expr, ...)
               | UPDATE name SET word = expr, ... [WHERE condition]
               | DELETE FROM name [WHERE condition]
    condition := expr = expr [AND | OR expr = expr ...]
    expr      := value | function(value) | count(*)
    value     := name | number | 'string'

Statements are separated by ``;`` (one may end the text). A name is a word, or two joined by a
dot; no word of a name is a keyword of sqlglot's dialects (``frameworks/sql_words.py``). A number
is digits with at most one decimal point; a string holds no quote, backslash or line break; a
function is one of ``PLAIN_FUNCTIONS``. So the text has no placeholder, comment, quoted
identifier or escape. Only with a sqlglot release whose keywords were checked
(``CHECKED_SQLGLOT_RELEASES``) is any text plain.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
from typing import Callable, List, Optional, Tuple

from keydrift.frameworks.sql_words import CHECKED_SQLGLOT_RELEASES, PLAIN_FUNCTIONS, SQL_KEYWORDS

# Longer texts are rarely this simple; reading them here would only delay sqlglot.
_LONGEST = 2000

_TOKEN = re.compile(
    r"""[ \t\r\n]*(?:
      (?P<name>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?)(?![\w.'])
    | (?P<number>\d+(?:\.\d+)?)(?![\w.'])
    | (?P<string>'[^'\\\r\n]*')(?![\w'])
    | (?P<punct>[(),=;*])
    )""",
    re.X | re.ASCII,
)
_TRAILING_SPACE = re.compile(r"[ \t\r\n]*", re.ASCII)

Token = Tuple[str, str]  # (kind, text; a name's upper-cased)

_RELEASE = re.compile(r"""^__version__ = version = ['"]([^'"]+)['"]""", re.M)


def binds_nothing(sql: str) -> bool:
    """Whether ``sql`` is plain SQL: sqlglot reads it (``parse_sql`` is not None) and it binds
    no parameter, so no key of it names a Python value."""
    return _read(sql) is not None


def selects_no_table(sql: str) -> bool:
    """Whether ``sql`` is plain SQL whose rows come from no table: its first statement is no
    SELECT, or one without FROM (``select_shape`` is None or names no table)."""
    first = _read(sql)
    return first is not None and first != "select from"


@functools.lru_cache(maxsize=1024)
def _read(sql: str) -> Optional[str]:
    """The first statement's verb ("select from" for a SELECT with FROM) when ``sql`` is plain
    SQL, else None."""
    if not isinstance(sql, str) or len(sql) > _LONGEST or sqlglot_release() not in CHECKED_SQLGLOT_RELEASES:
        return None
    tokens = _tokens(sql)
    if not tokens:
        return None
    reader = _Reader(tokens)
    first = reader.statement()
    while first is not None and reader.punct(";"):
        if reader.done():
            break
        if reader.statement() is None:
            return None
    return first if first is not None and reader.done() else None


@functools.lru_cache(maxsize=1)
def sqlglot_release() -> str:
    """The installed sqlglot's release, read from its version file without importing it
    (importing it is what reading plain SQL here saves); "" when it cannot be read."""
    try:
        spec = importlib.util.find_spec("sqlglot")
        if spec is None or not spec.origin:
            return ""
        with open(os.path.join(os.path.dirname(spec.origin), "_version.py"), encoding="utf-8") as handle:
            found = _RELEASE.search(handle.read())
    except (ImportError, ValueError, OSError):
        return ""
    return found.group(1) if found else ""


def _tokens(sql: str) -> Optional[List[Token]]:
    tokens: List[Token] = []
    at = 0
    end = _TRAILING_SPACE.match(sql, 0)
    while end is not None and end.end() < len(sql):
        match = _TOKEN.match(sql, at)
        if match is None:
            return None
        kind = match.lastgroup or ""
        text = match.group(kind)
        tokens.append((kind, text.upper() if kind == "name" else text))
        at = match.end()
        end = _TRAILING_SPACE.match(sql, at)
    return tokens


class _Reader:
    """A reading of the grammar above over the tokens, one statement at a time."""

    def __init__(self, tokens: List[Token]) -> None:
        self.tokens = tokens
        self.at = 0

    def statement(self) -> Optional[str]:
        """The statement's verb ("select from" for a SELECT with FROM), or None."""
        if self.word("PRAGMA"):
            return "pragma" if self.pragma() else None
        if self.word("SELECT"):
            return self.select()
        if self.word("INSERT"):
            return "insert" if self.insert() else None
        if self.word("UPDATE"):
            return "update" if self.name() and self.word("SET") and self.assignments() and self.where() else None
        if self.word("DELETE"):
            return "delete" if self.word("FROM") and self.name() and self.where() else None
        return None

    def pragma(self) -> bool:
        if not self.name():
            return False
        if self.punct("="):
            return self.value()
        if self.punct("("):
            return self.value() and self.punct(")")
        return True

    def select(self) -> Optional[str]:
        if not (self.punct("*") or self.listed(self.expr)):
            return None
        if not self.word("FROM"):
            return "select"
        return "select from" if self.name() and self.where() else None

    def insert(self) -> bool:
        if self.word("OR") and not (self.word("IGNORE") or self.word("REPLACE")):
            return False
        if not (self.word("INTO") and self.name()):
            return False
        if self.punct("(") and not (self.listed(self.column) and self.punct(")")):
            return False
        return self.word("VALUES") and self.punct("(") and self.listed(self.expr) and self.punct(")")

    def assignments(self) -> bool:
        return self.listed(lambda: self.column() and self.punct("=") and self.expr())

    def where(self) -> bool:
        """An optional WHERE condition; False when one starts and is not one."""
        if not self.word("WHERE"):
            return True
        while True:
            if not (self.expr() and self.punct("=") and self.expr()):
                return False
            if not (self.word("AND") or self.word("OR")):
                return True

    def listed(self, item: Callable[[], bool]) -> bool:
        """One or more ``item`` separated by commas."""
        while True:
            if not item():
                return False
            if not self.punct(","):
                return True

    def expr(self) -> bool:
        kind, text = self.peek()
        if kind == "name" and text.lower() in PLAIN_FUNCTIONS and self.peek(1) == ("punct", "("):
            self.at += 2
            argument = self.punct("*") if text == "COUNT" else False
            return (argument or self.value()) and self.punct(")")
        return self.value()

    def value(self) -> bool:
        if self.peek()[0] in ("number", "string"):
            self.at += 1
            return True
        return self.name()

    def name(self) -> bool:
        kind, text = self.peek()
        if kind != "name" or any(part in SQL_KEYWORDS for part in text.split(".")):
            return False
        self.at += 1
        return True

    def column(self) -> bool:
        """A name of one word (sqlglot reads no qualified column in an INSERT's list or a SET)."""
        return "." not in self.peek()[1] and self.name()

    def word(self, keyword: str) -> bool:
        if self.peek() != ("name", keyword):
            return False
        self.at += 1
        return True

    def punct(self, mark: str) -> bool:
        if self.peek() != ("punct", mark):
            return False
        self.at += 1
        return True

    def peek(self, ahead: int = 0) -> Token:
        at = self.at + ahead
        return self.tokens[at] if at < len(self.tokens) else ("", "")

    def done(self) -> bool:
        return self.at == len(self.tokens)
