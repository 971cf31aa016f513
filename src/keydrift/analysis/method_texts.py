"""What the method index reads from a file's text alone: the methods it defines, those a call
may be resolved by, the ``AUTH_USER_MODEL`` it names. Imported by the index
(``receivers``) and by the early reader (``early_reading``), which runs before the analysis is
imported: this module imports nothing of the analysis's but the vocabulary and names' tokens."""

from __future__ import annotations

import os
import re
import stat
from typing import Dict, Iterator, NamedTuple, Optional, Tuple

from keydrift.analysis.helpernames import name_tokens
from keydrift.patterns import lazy
from keydrift.vocabulary import known_answer, mentions_database, text_key

MAX_FILE_BYTES = 2_000_000
_USER_MODEL_SETTING = lazy(r"^AUTH_USER_MODEL[ \t]*=[ \t]*[\"'][\w.]*\.(\w+)[\"']", re.M)


class FileMethods(NamedTuple):
    """What one file's text gives the method index: its methods ("Class.method"), the names of
    those a call may be resolved by when the file has database vocabulary, the model its
    ``AUTH_USER_MODEL`` setting names ("" if none)."""

    methods: Tuple[str, ...]
    database: Tuple[str, ...]
    user_model: str

    @staticmethod
    def of(text: str) -> "FileMethods":
        methods = tuple(methods_defined(text))
        # the anchored pattern is tried at every line: most files do not name the setting at all
        setting = _USER_MODEL_SETTING.search(text) if "AUTH_USER_MODEL" in text else None
        database = () if not methods or not mentions_database(text) else tuple(
            name for name in (qualified.rsplit(".", 1)[-1] for qualified in methods) if resolvable_by_name(name))
        return FileMethods(methods, database, setting.group(1) if setting else "")


def file_record(path: str, content: str) -> Optional[list]:
    """What a file of digest ``content`` gives the method index (as ``_file_methods`` keeps it),
    and the vocabulary answer its reading gave (for a file that defines methods), with its text's
    key: made by another process (``receivers._HelpedRecords``, ``early_reading``) and taken by
    the index with ``receivers._usable``."""
    text = read_regular_file(path)
    if text is None:
        return None
    found = FileMethods.of(text)
    key = text_key(text)
    return [content, list(found.methods), list(found.database), found.user_model, key, known_answer(key)]


def resolvable_by_name(method: str) -> bool:
    """Only distinctive names: two tokens or more, not a dunder (``add_threepid``, not ``get``)."""
    return not method.startswith("__") and len(name_tokens(method)) >= 2


def methods_defined(text: str) -> Iterator[str]:
    """"Class.method" for each method (first parameter ``self``/``cls``): its class is the last
    class statement before it that is indented less."""
    classes = statements(text, CLASS_KEYWORD, indented=False)
    upcoming = next(classes, None)
    last_at: Dict[int, Tuple[int, str]] = {}  # indent -> (start, name) of the last class so indented
    for start, indentation, name in statements(text, METHOD_KEYWORD, indented=True):
        # one pass over both (a module of hundreds of classes and thousands of methods)
        while upcoming is not None and upcoming[0] < start:
            last_at[len(upcoming[1].expandtabs())] = (upcoming[0], upcoming[2])
            upcoming = next(classes, None)
        indent = len(indentation.expandtabs())
        owners = [found for class_indent, found in last_at.items() if class_indent < indent]
        if owners:
            yield f"{max(owners)[1]}.{name}"


# ``_CLASS`` and ``_METHOD`` say which statements count; ``_statements`` finds the same ones
# about four times as fast, for the method index reads every file of the project before a
# parallel run's workers start. CPython's regex engine skips ahead only to a literal a pattern
# starts with, and those start with the line's indentation, so they were tried at every
# position; these start with the keyword, and what precedes it on its line is checked after.
CLASS_KEYWORD = lazy(r"class[ \t]+(\w+)")
METHOD_KEYWORD = lazy(r"def[ \t]+(\w+)[ \t]*\(\s*(?:self|cls)\b")


def statements(text: str, keyword: "re.Pattern[str]", indented: bool) -> Iterator[Tuple[int, str, str]]:
    """(start of its line, its indentation, its name) of each statement ``keyword`` finds that
    only spaces and tabs precede on its line: ``receivers._CLASS``'s matches, or with ``indented``
    ``_METHOD``'s (at least one space or tab, and ``async`` may come between)."""
    for match in keyword.finditer(text):
        line = text.rfind("\n", 0, match.start()) + 1
        indentation = text[line:match.start()]
        if indented:
            indentation = _before_async(indentation)
            if not indentation:
                continue
        if not indentation.strip(" \t"):
            yield line, indentation, match.group(1)


def _before_async(head: str) -> str:
    """What comes before ``async`` and its spaces in ``head`` (a line up to ``def``), or
    ``head`` itself when it does not end that way."""
    bare = head.rstrip(" \t")
    return bare[:-len("async")] if bare != head and bare.endswith("async") else head


def read_regular_file(path: str) -> Optional[str]:
    """The file's text, or None for what is not a readable regular file (a FIFO named ``x.py``
    must not block the run: it is opened without blocking and checked before reading)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return None
        with os.fdopen(descriptor, "rb", closefd=False) as handle:
            return handle.read(MAX_FILE_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(descriptor)
