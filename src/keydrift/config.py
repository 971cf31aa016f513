"""The ``[tool.keydrift]`` table of ``pyproject.toml``: finding it, validating it, and the
path-based filters it defines (``exclude``, ``per-file-ignores``).

Paths and globs follow flake8: a pattern without ``/`` matches any path component (so
``migrations`` or ``*_pb2.py`` match at any depth); a pattern with ``/`` is anchored at the
project root and matches the path or any of its parent directories.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import replace
from fnmatch import fnmatch
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from keydrift.codes import code_matches, rule_selected
from keydrift.patterns import lazy
from keydrift.roots import PYPROJECT, REPOSITORY_MARKERS, find_pyproject, import_root  # noqa: F401 - the config API
from keydrift.types import Config, Finding, TableWrapper


_LIST_KEYS = ("boundary", "normalizers", "exclude", "select", "ignore", "readers", "writers", "tables")
_PER_FILE_KEYS = ("per-file-ignores", "per_file_ignores")
KNOWN_KEYS = _LIST_KEYS + _PER_FILE_KEYS
# tables of their own, read by the command that uses them ([tool.keydrift.audit]: audit/settings.py)
SUBTABLES = ("audit",)

_CODE = lazy(r"[A-Z]+[0-9]*")
_DOTTED_NAME = lazy(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
# an in-house read or write wrapper: "app.db.fetch_by_url:url" or "app.db.fetch_by_url:url=Page.url"
_WRAPPER = lazy(r"(?:\*|[A-Za-z_]\w*)(?:\.[A-Za-z_]\w*)+:[A-Za-z_]\w*(?:=[A-Za-z_]\w*\.[A-Za-z_]\w*)?")
# an in-house table helper: "app.db.upsert: upsert table=table keys=keyvalues values=values";
# an argument is a parameter name, a position, or (the table only) a quoted table name
_TABLE_ENTRY = lazy(r"((?:\*|[A-Za-z_]\w*)(?:\.[A-Za-z_]\w*)+)\s*:\s*(select|insert|upsert|update|delete)"
                          r"((?:\s+(?:table|keys|values)=(?:[A-Za-z_]\w*|\d+|'[A-Za-z_][\w.]*'))+)")
_TABLE_ARGUMENT = lazy(r"(table|keys|values)=(\S+)")


class ConfigError(Exception):
    """An unreadable or invalid configuration; the message names the file and the key.
    ``path`` is the pyproject.toml at fault, when there is one."""

    path: str = ""


Fail = Callable[[str], ConfigError]  # builds the error for one file's table


# Loaded configurations (or the error loading them raised), per start directory and per file.
_BY_DIRECTORY: Dict[str, Union[Config, ConfigError]] = {}
_BY_FILE: Dict[str, Union[Config, ConfigError]] = {}


# Memos of what front ends derive from configurations, emptied with them (``derived_memo``).
_DERIVED: List[dict] = []


def clear_cache() -> None:
    _BY_DIRECTORY.clear()
    _BY_FILE.clear()
    _REPOSITORY_ROOTS.clear()
    for memo in _DERIVED:
        memo.clear()


def derived_memo() -> dict:
    """A memo of something a front end derives from the configurations loaded here (the one of
    each directory its files are in), emptied when they are (``clear_cache``)."""
    memo: dict = {}
    _DERIVED.append(memo)
    return memo


def load_config(start: str = ".") -> Config:
    """The configuration for a file or directory: the nearest pyproject.toml walking up from
    it. Without one, defaults rooted at the start directory's import root. Cached per directory."""
    directory = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(start) or ".")
    if directory not in _BY_DIRECTORY:
        pyproject = find_pyproject(directory)
        _BY_DIRECTORY[directory] = (
            _load_cached(pyproject) if pyproject else Config(root=import_root(directory)))
    return _unwrap(_BY_DIRECTORY[directory])


def load_config_or_parent(start: str) -> Tuple[Config, Optional[ConfigError]]:
    """``load_config``, except that a broken pyproject.toml gives way to the configuration above
    it (the nearest valid one, else the defaults), returned with the error so that the caller
    reports it. For a subtree's own configuration (a project template, a vendored package): the
    run's configuration, the one of its working directory, is loaded with ``load_config`` and
    stays an error."""
    try:
        return load_config(start), None
    except ConfigError as exc:
        if not exc.path:
            raise
        project = os.path.dirname(exc.path)
        above = os.path.dirname(project)
        if above == project or _repository_root(project) == project:  # nothing above to inherit
            return Config(root=import_root(project)), exc
        return load_config_or_parent(above)[0], exc


def fallback_note(error: ConfigError, config: Config) -> str:
    """One line for a broken subtree configuration: the error, and what is used instead."""
    subtree = display_path(os.path.dirname(error.path)) or "."
    instead = f"the configuration of {display_path(config.config_file)}" if config.config_file else "the defaults"
    return f"keydrift: warning: {error}; files under {subtree}{os.sep} are checked with {instead}"


def load_config_file(path: str) -> Config:
    """The configuration in an explicitly named pyproject.toml."""
    return _unwrap(_load_cached(os.path.abspath(path)))


def called_name(entry: Union[str, TableWrapper]) -> str:
    """What code calls a configured function by: ``app.db.fetch_by_url:url=Page.url`` and
    ``app.urls.canonical_url`` give ``fetch_by_url`` and ``canonical_url``."""
    if isinstance(entry, TableWrapper):
        return entry.function.rsplit(".", 1)[-1]
    return entry.partition(":")[0].rsplit(".", 1)[-1].strip()


def root_without_pyproject(path: str, fallback: Optional[str]) -> Optional[str]:
    """The project root of a file no pyproject.toml claims: the root of its repository, else
    ``fallback`` if the file lies below it. Imports are resolved from there rather than from the
    file's own directory, so ``app/views.py`` still sees ``app.store``."""
    repository = _repository_root(os.path.dirname(os.path.abspath(path)))
    if repository:
        return repository
    return fallback if fallback and _is_below(path, fallback) else None


_REPOSITORY_ROOTS: Dict[str, Optional[str]] = {}


def _repository_root(directory: str) -> Optional[str]:
    if directory not in _REPOSITORY_ROOTS:
        _REPOSITORY_ROOTS[directory] = _find_repository_root(directory)
    return _REPOSITORY_ROOTS[directory]


def _find_repository_root(directory: str) -> Optional[str]:
    while True:
        if any(os.path.exists(os.path.join(directory, marker)) for marker in REPOSITORY_MARKERS):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def _is_below(path: str, root: str) -> bool:
    relative = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    return not (relative == os.pardir or relative.startswith(os.pardir + os.sep))


def _unwrap(outcome: Union[Config, ConfigError]) -> Config:
    if isinstance(outcome, ConfigError):
        raise outcome
    return outcome


def _load_cached(pyproject: str) -> Union[Config, ConfigError]:
    if pyproject not in _BY_FILE:
        try:
            _BY_FILE[pyproject] = _parse_file(pyproject)
        except ConfigError as exc:
            exc.path = pyproject
            _BY_FILE[pyproject] = exc
    return _BY_FILE[pyproject]


def _parse_file(pyproject: str) -> Config:
    tomllib = _toml_reader()
    shown = display_path(pyproject)
    try:
        with open(pyproject, "rb") as handle:
            document = tomllib.load(handle)
    except OSError as exc:
        raise ConfigError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{shown}: invalid TOML: {exc}") from None
    table = document.get("tool", {})
    table = table.get("keydrift", {}) if isinstance(table, dict) else {}
    if not isinstance(table, dict):
        raise ConfigError(f"{shown}: [tool.keydrift] must be a table")
    return _build_config(table, os.path.dirname(pyproject), pyproject, shown)


def _build_config(table: Dict[str, Any], root: str, pyproject: str, shown: str) -> Config:
    def fail(message: str) -> ConfigError:
        return ConfigError(f"{shown}: [tool.keydrift] {message}")

    for key in table:
        if key in SUBTABLES:
            continue
        if key not in KNOWN_KEYS:
            raise fail(f"unknown key {key!r}{_suggestion(key)}")
    if all(k in table for k in _PER_FILE_KEYS):
        raise fail("set 'per-file-ignores' or 'per_file_ignores', not both")
    values = {key: _string_list(table.get(key, []), key, fail) for key in _LIST_KEYS}
    for key in ("readers", "writers"):
        for entry in values[key]:
            if not _WRAPPER.fullmatch(entry):
                raise fail(f"{key!r} entry {entry!r} is not like 'app.db.fetch_by_url:url' "
                           "(function:parameter, optionally '=Entity.field')")
    tables = tuple(_table_wrapper(entry, fail) for entry in values["tables"])
    for name in values["normalizers"]:
        if not _DOTTED_NAME.fullmatch(name):
            raise fail(f"'normalizers' entry {name!r} is not a qualified name "
                       "like 'app.urls.canonical'")
    per_file_key = next((k for k in _PER_FILE_KEYS if k in table), _PER_FILE_KEYS[0])
    per_file = _per_file_ignores(table.get(per_file_key, {}), per_file_key, fail)
    return Config(
        root=root,
        config_file=pyproject,
        boundary=tuple(values["boundary"]),
        normalizers=tuple(values["normalizers"]),
        readers=tuple(values["readers"]),
        writers=tuple(values["writers"]),
        tables=tables,
        exclude=tuple(values["exclude"]),
        per_file_ignores=per_file,
        select=_codes(values["select"], "select", fail),
        ignore=_codes(values["ignore"], "ignore", fail),
    )


def _table_wrapper(entry: str, fail: Fail) -> TableWrapper:
    """``"app.db.upsert: upsert table=table keys=keyvalues values=values"`` -> TableWrapper."""
    match = _TABLE_ENTRY.fullmatch(entry)
    arguments: Dict[str, Any] = {}
    if match is not None:
        for role, raw in _TABLE_ARGUMENT.findall(match.group(3)):
            if role in arguments:
                match = None
                break
            arguments[role] = int(raw) if raw.isdigit() else raw
    if match is None or "table" not in arguments or not ({"keys", "values"} & set(arguments)):
        raise fail(f"'tables' entry {entry!r} is not like 'app.db.upsert: upsert table=table "
                   "keys=keyvalues values=values' (function: operation, then table= and keys= or "
                   "values=, each a parameter name, a position or, for table, a quoted name)")
    table = arguments["table"]
    fixed_table = table[1:-1] if isinstance(table, str) and table.startswith("'") else ""
    return TableWrapper(match.group(1), match.group(2), None if fixed_table else table,
                        arguments.get("keys"), arguments.get("values"), fixed_table)


def _toml_reader() -> Any:
    """The TOML parser, imported when a pyproject.toml is first read (many projects have none)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.9/3.10 only
        import tomli as tomllib
    return tomllib


def _suggestion(key: str) -> str:
    import difflib  # only for a configuration with a mistake in it

    close = difflib.get_close_matches(key, KNOWN_KEYS, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _string_list(value: Any, key: str, fail: Fail) -> List[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise fail(f"{key!r} must be a list of non-empty strings, got {_describe(value)}")
    return [v.strip() for v in value]


def _codes(values: List[str], key: str, fail: Fail) -> Tuple[str, ...]:
    codes = tuple(v.upper() for v in values)
    for code in codes:
        if not _CODE.fullmatch(code):
            raise fail(f"{key!r} entry {code!r} is not a code or code prefix like 'KD1'")
    return codes


def _per_file_ignores(value: Any, key: str, fail: Fail) -> Dict[str, Tuple[str, ...]]:
    """A table ``{glob = [codes]}`` (a value may also be a "KD101,KD102" string), or a
    flake8-style string ``"glob1,glob2: CODE CODE"`` with entries separated by whitespace."""
    if isinstance(value, str):
        try:
            pairs = parse_flake8_mapping(value)
        except ValueError as exc:
            raise fail(f"{key!r}: {exc}") from None
    elif isinstance(value, dict):
        pairs = []
        for pattern, codes in value.items():
            if isinstance(codes, str):
                codes = [c for c in re.split(r"[\s,]+", codes) if c]
            pairs.append((pattern, _string_list(codes, f"{key}.{pattern}", fail)))
    else:
        raise fail(f"{key!r} must be a table of glob -> list of codes, got {_describe(value)}")
    mapping: Dict[str, Tuple[str, ...]] = {}
    for pattern, codes in pairs:
        mapping[pattern] = mapping.get(pattern, ()) + _codes(codes, f"{key}.{pattern}", fail)
    return mapping


def parse_flake8_mapping(text: str) -> List[Tuple[str, List[str]]]:
    """Parse flake8's ``per-file-ignores`` string: ``a.py,b/*.py: KD101,KD2  c.py:KD1``.
    After a colon, upper-case words are codes; the next other word starts a new entry."""
    pairs: List[Tuple[str, List[str]]] = []
    files: List[str] = []
    codes: List[str] = []
    in_codes = False
    for token in re.findall(r"[^\s:,]+|:", text):
        if token == ":":
            if in_codes or not files:
                raise ValueError(f"unexpected ':' in {text.strip()!r}")
            in_codes = True
        elif not in_codes:
            files.append(token)
        elif _CODE.fullmatch(token):
            codes.append(token)
        else:
            _close_entry(pairs, files, codes)
            files, codes, in_codes = [token], [], False
    if files and not in_codes:
        raise ValueError(f"expected 'glob: CODES' but found no ':' after {files[-1]!r}")
    if files:
        _close_entry(pairs, files, codes)
    return pairs


def _close_entry(pairs: List[Tuple[str, List[str]]], files: List[str], codes: List[str]) -> None:
    if not codes:
        raise ValueError(f"no codes after {files[-1]!r}:")
    pairs.extend((name, list(codes)) for name in files)


def _describe(value: Any) -> str:
    """``str 'x'`` for a scalar; just the type for a container, which may be long."""
    kind = type(value).__name__
    return kind if isinstance(value, (dict, list)) else f"{kind} {value!r}"


def display_path(path: str) -> str:
    """A path relative to the working directory when it lies below it, else absolute."""
    absolute = os.path.abspath(path)
    relative = os.path.relpath(absolute)
    return absolute if relative.startswith(os.pardir) else relative


# --- path filters -----------------------------------------------------------------------

def path_matches(path: str, patterns: Tuple[str, ...], root: str) -> bool:
    """flake8's matching: a pattern without ``/`` against every path component below the
    root; one with ``/`` anchored at the root, against the path and its parent directories."""
    if not patterns:
        return False
    absolute = os.path.abspath(path)
    root = os.path.abspath(root)
    relative = os.path.relpath(absolute, root)
    below_root = not (relative == os.pardir or relative.startswith(os.pardir + os.sep))
    components = (relative if below_root else absolute).split(os.sep)
    for pattern in patterns:
        bare = pattern.rstrip("/")
        if "/" in bare:
            anchored = os.path.normpath(os.path.join(root, bare))
            if any(fnmatch(p, anchored) for p in _self_and_parents(absolute)):
                return True
        elif any(fnmatch(c, bare) for c in components if c and c != os.curdir):
            return True
    return False


def _self_and_parents(path: str) -> List[str]:
    out = [path]
    while os.path.dirname(out[-1]) != out[-1]:
        out.append(os.path.dirname(out[-1]))
    return out


def is_excluded(path: str, config: Config) -> bool:
    return path_matches(path, config.exclude, config.root)


def ignored_codes_for(path: str, config: Config) -> Tuple[str, ...]:
    """The code prefixes that ``per-file-ignores`` turns off for this file."""
    codes: Tuple[str, ...] = ()
    for pattern, pattern_codes in config.per_file_ignores.items():
        if path_matches(path, (pattern,), config.root):
            codes += pattern_codes
    return codes


def finding_allowed(finding: Finding, config: Config) -> bool:
    """select/ignore and per-file-ignores (``# noqa`` is applied separately)."""
    if not rule_selected(finding.code, config):
        return False
    return not code_matches(finding.code, ignored_codes_for(finding.path, config))


def with_overrides(config: Config, select: Optional[Tuple[str, ...]] = None,
                   ignore: Optional[Tuple[str, ...]] = None) -> Config:
    """Command-line ``--select``/``--ignore`` replace their counterparts in the file."""
    changes: Dict[str, Tuple[str, ...]] = {}
    if select is not None:
        changes["select"] = select
    if ignore is not None:
        changes["ignore"] = ignore
    return replace(config, **changes) if changes else config


def parse_code_list(text: str, option: str) -> Tuple[str, ...]:
    """A comma-separated list of codes from the command line."""
    codes = tuple(c.strip().upper() for c in text.split(",") if c.strip())
    for code in codes:
        if not _CODE.fullmatch(code):
            raise ConfigError(f"{option}: {code!r} is not a code or code prefix like 'KD1'")
    return codes
