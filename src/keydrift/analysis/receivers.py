"""Receivers of method calls: which class ``self.store``, ``repo`` or ``self.hs.get_store()`` is.

Three sources, most precise first:

1. what the module itself says: ``self.x = Repo(...)`` or ``self.x = x`` with ``x: Repo`` in a
   method, ``x: Repo`` in the class body, a parameter annotated ``Repo``, an accessor method
   annotated ``-> Repo`` (``ClassInfo``, built per module);
2. the classes a class inherits from, in the module or imported (mixins, base stores);
3. the project's only definition of a method of that name: a call ``<anything>.add_threepid(...)``
   whose receiver nothing above explains resolves to the one class of the project that defines
   ``add_threepid`` (``method_index``). Names with one token (``get``, ``save``) and names
   defined by several classes are never resolved this way.
"""

from __future__ import annotations

import ast
import os
import re
from contextlib import contextmanager
from dataclasses import field
from typing import Callable, Dict, FrozenSet, Iterable, Iterator, List, Mapping, NamedTuple, Optional, Sequence, Set, Tuple


from keydrift.analysis.imports import import_name_for
from keydrift.analysis.method_texts import FileMethods, file_record, read_regular_file, resolvable_by_name
from keydrift.diskcache import (
    CACHE_DIRECTORY, DiskCache, MethodsAnswer, code_fingerprint, current_look, digest, methods_asked,
)
from keydrift.analysis.tree import (
    FUNCTION_TYPES, FunctionNode, concatenated_literals, parameters, segment, string_literal,
)
from keydrift.analysis.values import dotted_name, last_name
from keydrift.filestate import files_state, files_state_once, forget_state, python_file_digests, python_files, state_of
from keydrift.forkhelp import made_by_a_helper
from keydrift.patterns import lazy
from keydrift.records import mutable
from keydrift.vocabulary import remember_answer

_CLASS = lazy(r"^([ \t]*)class[ \t]+(\w+)", re.M)
_METHOD = lazy(r"^([ \t]+)(?:async[ \t]+)?def[ \t]+(\w+)[ \t]*\(\s*(?:self|cls)\b", re.M)


@mutable
class ClassInfo:
    """What one class of the module declares about the objects it holds and returns."""

    bases: List[str] = field(default_factory=list)  # dotted names as written
    attributes: Dict[str, str] = field(default_factory=dict)  # self.x -> class name as written
    returns: Dict[str, str] = field(default_factory=dict)  # method -> annotated return class


def annotated_parts(annotation: Optional[ast.expr]) -> Tuple[Optional[ast.expr], List[ast.expr]]:
    """``Annotated[T, Query(), ...]`` -> (T, [Query(), ...]): the type and what the framework is
    told of it (FastAPI's ``Depends``, ``Body``, ``Query``); any other annotation -> (it, [])."""
    if isinstance(annotation, ast.Subscript) and last_name(annotation.value) == "Annotated" \
            and isinstance(annotation.slice, ast.Tuple) and annotation.slice.elts:
        first, *metadata = annotation.slice.elts
        return first, metadata
    return annotation, []


def annotation_class(annotation: Optional[ast.expr]) -> str:
    """``Repo``, ``"Repo"``, ``app.Repo``, ``Optional[Repo]``, ``Repo | None``, ``Annotated[Repo,
    Depends(...)]`` -> "Repo"."""
    annotation = annotated_parts(annotation)[0]
    if annotation is None:
        return ""
    if isinstance(annotation, ast.Constant):
        return _constant_class(annotation)
    if isinstance(annotation, ast.Subscript) and last_name(annotation.value) == "Optional" \
            and not isinstance(annotation.slice, (ast.Tuple, ast.Slice)):
        return annotation_class(annotation.slice)
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        sides = [annotation_class(annotation.left), annotation_class(annotation.right)]
        named = [s for s in sides if s and s != "None"]
        return named[0] if len(named) == 1 else ""
    if isinstance(annotation, (ast.Name, ast.Attribute)):
        name = last_name(annotation)
        return name if name and name[0].isupper() else ""
    return ""


def _constant_class(annotation: ast.Constant) -> str:
    """A string annotation read as written: one plain literal (``"Repo"``, ``'app.Repo'``), not a
    prefixed or implicitly concatenated one; ``None``/``True``/``False`` name themselves."""
    value = annotation.value
    if value is None or value is True or value is False:
        return str(value)
    if not isinstance(value, str):
        return ""
    written = segment(annotation)
    text = (written if written is not None else value).strip("'\"")
    return text.rsplit(".", 1)[-1] if re.fullmatch(r"[A-Za-z_][\w.]*", text) else ""


def param_annotations(function: FunctionNode) -> Dict[str, str]:
    out = {}
    for param in parameters(function):
        name = annotation_class(param.annotation)
        if name:
            out[param.arg] = name
    return out


def class_infos(module: ast.Module) -> Dict[str, ClassInfo]:
    """Every top-level class (and classes nested in if/try blocks) of the module."""
    infos: Dict[str, ClassInfo] = {}
    for cls in _classes(module.body):
        bases = [dotted_name(b.value if isinstance(b, ast.Starred) else b) for b in cls.bases]
        info = ClassInfo([b for b in bases if b])
        for statement in block(cls.body, cls):
            if isinstance(statement, FUNCTION_TYPES):
                returned = annotation_class(statement.returns)
                if returned:
                    info.returns[statement.name] = returned
                _self_attributes(statement, info.attributes)
            elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                name = annotation_class(statement.annotation)
                if name:
                    info.attributes.setdefault(statement.target.id, name)
        infos[cls.name] = info
    return infos


def _self_attributes(method: FunctionNode, attributes: Dict[str, str]) -> None:
    """``self.x = Repo(...)``, ``self.x: Repo = ...``, ``self.x = x`` with ``x: Repo``."""
    annotated = param_annotations(method)
    for statement in block(method.body, method):
        target: Optional[ast.expr] = None
        value: Optional[ast.expr] = None
        annotation: Optional[ast.expr] = None
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target, value = statement.targets[0], statement.value
        elif isinstance(statement, ast.AnnAssign):
            target, value, annotation = statement.target, statement.value, statement.annotation
        if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                and target.value.id == "self"):
            continue
        name = annotation_class(annotation)
        if not name and isinstance(value, ast.Call) and isinstance(value.func, (ast.Name, ast.Attribute)):
            called = last_name(value.func)
            name = called if called[:1].isupper() else ""
        if not name and isinstance(value, ast.Name):
            name = annotated.get(value.id, "")
        if name:
            attributes.setdefault(target.attr, name)


def _classes(body: Sequence[ast.stmt]) -> Iterator[ast.ClassDef]:
    for node in body:
        if isinstance(node, ast.ClassDef):
            yield node
        elif isinstance(node, (ast.If, ast.Try)):
            yield from _classes(node.body)


class _Span(NamedTuple):
    """A stretch of one line, for ``tree.segment``."""

    lineno: int
    col_offset: int
    end_lineno: int
    end_col_offset: int


def plain_string(node: Optional[ast.AST]) -> Optional[str]:
    """The value of a string written as one literal (``"email"``), not as implicitly
    concatenated ones (``"em" "ail"``), which the readers of names have never taken."""
    value = string_literal(node)
    return None if value is not None and concatenated_literals(node) else value  # type: ignore[arg-type]


def block(statements: Sequence[ast.stmt], header: Optional[ast.AST] = None) -> Sequence[ast.stmt]:
    """The statements of a body written as an indented block; none for a body written on its
    header's line (``def f(): return x``, ``class Meta: model = User``), which the readers of
    model facts, receivers and forms have always left out. Without the source lines, a body
    starting on the header's first line is taken for one written on it."""
    if not statements:
        return statements
    line, column = getattr(statements[0], "lineno", None), getattr(statements[0], "col_offset", None)
    if line is None or column is None:
        return statements  # built, not parsed
    before = segment(_Span(line, 0, line, column))
    if before is None:
        on_header = header is not None and line == getattr(header, "lineno", None)
    else:
        on_header = bool(before.strip())
    return () if on_header else statements


# -- names the project mentions ----------------------------------------------------------------

_TEXTS: Dict[str, Optional[List[Tuple[str, str]]]] = {}  # root -> (file, text) of its modules; None: too large
_MENTIONED: Dict[Tuple[str, str, str, str], bool] = {}
_MAX_KEPT_BYTES = 64_000_000


def mentioned(root: str, name: str, home: str = "", owner: str = "") -> bool:
    """Whether a module of the project names ``name`` anywhere but where it defines it
    (``def name(``): a call, a reference passed on, a string naming it. In ``owner``'s body in
    the file ``home``, ``self.store.name(...)`` is the class delegating to another object's
    method of the same name, not a call of its own. A project too large to read again counts
    every name as mentioned (the answer that claims nothing)."""
    key = (root, name, home, owner)
    if key not in _MENTIONED:
        texts = _project_texts(root)
        _MENTIONED[key] = texts is None or any(
            _names(text, name, _class_span(text, owner) if path == home and owner else None)
            for path, text in texts)
    return _MENTIONED[key]


def _project_texts(root: str) -> Optional[List[Tuple[str, str]]]:
    if root not in _TEXTS:
        # one project's texts at a time: a run over many projects (a monorepo, a corpus) asks
        # them project by project, and each can hold tens of megabytes
        _TEXTS.clear()
        texts: Optional[List[Tuple[str, str]]] = []
        size = 0
        for path in python_files(root):
            text = read_regular_file(path)
            size += len(text or "")
            if size > _MAX_KEPT_BYTES:
                texts = None
                break
            if text is not None:
                texts.append((os.path.normpath(path), text))  # type: ignore[union-attr]
        _TEXTS[root] = texts
    return _TEXTS[root]


_DELEGATION = lazy(r"\bself\.\w+\.\s*$")


def _names(text: str, name: str, delegating: Optional[Tuple[int, int]]) -> bool:
    """The word ``name`` in the text, other than after ``def`` (and, inside the ``delegating``
    span, other than as ``self.<attribute>.name``)."""
    start = text.find(name)
    while start >= 0:
        end = start + len(name)
        whole = (start == 0 or not _word_char(text[start - 1])) and (end == len(text) or not _word_char(text[end]))
        before = text[max(0, start - 80):start]
        if whole and not before.rstrip().endswith("def") and not (
                delegating and delegating[0] <= start < delegating[1] and _DELEGATION.search(before)):
            return True
        start = text.find(name, end)
    return False


def _class_span(text: str, owner: str) -> Optional[Tuple[int, int]]:
    """Where the body of class ``owner`` is in the text: up to the next line indented no deeper
    than its ``class`` statement."""
    for match in _CLASS.finditer(text):
        if match.group(2) != owner:
            continue
        indent = len(match.group(1).expandtabs())
        after = text.find("\n", match.end())
        for line in re.finditer(r"^([ \t]*)\S", text[after + 1:] if after >= 0 else "", re.M):
            if len(line.group(1).expandtabs()) <= indent:
                return match.start(), after + 1 + line.start()
        return match.start(), len(text)
    return None


def _word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


# -- the project's methods, by name ------------------------------------------------------------

# Asked of the index like a method name: the model ``AUTH_USER_MODEL`` names (no identifier).
USER_MODEL_ANSWER = "=user_model"


class MethodIndex:
    """The methods of a project's classes, by name. A file's module is named only when a name it
    defines is asked about: naming every file of a project costs more than the rest of a warm
    run's look at the index (which only checks the answers cached results recorded)."""

    def __init__(self, module_of: Callable[[str], str] = lambda path: path) -> None:
        self.defined: Dict[str, List[Tuple[str, str]]] = {}  # name -> [(file, "C.m")]
        # name -> the files with database vocabulary that define it
        self.in_database_files: Dict[str, List[str]] = {}
        self.settings: List[Tuple[str, str]] = []  # (file, model) of each AUTH_USER_MODEL setting
        self._module_of = module_of
        self._modules: Dict[str, str] = {}
        self._owners: Dict[str, List[Tuple[str, str]]] = {}
        self._database: Optional[FrozenSet[str]] = None
        self._answers: Dict[str, str] = {}
        self.state = ""  # the project's files as read (``project_state``)
        # what every answer is made from: the files' paths and what each gives the index
        self.facts = ""
        self._database_fingerprint: Optional[str] = None
        self._keep: Callable[[Dict[str, str]], None] = lambda made: None  # stores the index with ``made``
        self.look: Optional[object] = None  # the look they were last found the same in

    @property
    def owners(self) -> Mapping[str, List[Tuple[str, str]]]:
        """name -> [(module, "C.m")] of the classes defining it."""
        return _Owners(self)

    def owners_of(self, name: str) -> List[Tuple[str, str]]:
        found = self._owners.get(name)
        if found is None:
            named = ((self._module(path), qualified) for path, qualified in self.defined.get(name, ()))
            found = self._owners[name] = [(module, qualified) for module, qualified in named if module]
        return found

    def only_owner(self, name: str) -> Optional[Tuple[str, str]]:
        """(module, "C.m") of the one class defining ``name``; None for none or several (two
        modules named are enough to know)."""
        found: Optional[Tuple[str, str]] = None
        for path, qualified in self.defined.get(name, ()):
            module = self._module(path)
            if module:
                if found is not None:
                    return None
                found = (module, qualified)
        return found

    def answer(self, name: str) -> str:
        """What the index says of ``name`` (``method_answers``), as text."""
        found = self._answers.get(name)
        if found is None:
            if name == USER_MODEL_ANSWER:
                found = f"{name}={self.user_model}"
            else:
                only = self.only_owner(name)
                found = f"{name}={':'.join(only) if only else ''}{'+database' if self.is_database(name) else ''}"
            self._answers[name] = found
        return found

    def is_database(self, name: str) -> bool:
        """A distinctive name defined once, in a file with database vocabulary: a call of one may
        be a read or a write even where the calling file has no vocabulary of its own."""
        return any(self._module(p) for p in self.in_database_files.get(name, ())) and self.only_owner(name) is not None

    @property
    def database(self) -> FrozenSet[str]:
        if self._database is None:
            self._database = frozenset(name for name in self.in_database_files if self.is_database(name))
        return self._database

    def database_fingerprint(self) -> str:
        """A digest of the database methods and the class defining each (what decides whether a
        module without database vocabulary of its own takes part in the registry). Costly on a
        large project (every defining file's module named), so kept with the stored index for
        what the index is made from: an edit that defines no method finds it made."""
        if self._database_fingerprint is None:
            owned = sorted((name, tuple(self.owners[name][0])) for name in self.database)
            self._database_fingerprint = digest(repr(owned).encode("utf-8", "surrogatepass"))
            self._keep({"facts": self.facts, "database": self._database_fingerprint})
        return self._database_fingerprint

    @property
    def user_model(self) -> str:
        """The model class AUTH_USER_MODEL names, when a settings module sets it."""
        return next((model for path, model in self.settings if self._module(path)), "")

    def __eq__(self, other: object) -> bool:
        """The same answers (whichever names were asked about already)."""
        if not isinstance(other, MethodIndex):
            return NotImplemented
        return (dict(self.owners), self.database, self.user_model) == (dict(other.owners), other.database,
                                                                       other.user_model)

    __hash__ = None  # type: ignore[assignment]

    def _module(self, path: str) -> str:
        module = self._modules.get(path)
        if module is None:
            module = self._modules[path] = self._module_of(path)
        return module


class _Owners(Mapping):  # type: ignore[type-arg]
    """``MethodIndex.owners``: the names defined in a file with a module name."""

    def __init__(self, index: MethodIndex) -> None:
        self.index = index

    def __getitem__(self, name: str) -> List[Tuple[str, str]]:
        found = self.index.owners_of(name)
        if not found:
            raise KeyError(name)
        return found

    def __iter__(self) -> Iterator[str]:
        return (name for name in self.index.defined if self.index.owners_of(name))

    def __len__(self) -> int:
        return sum(1 for _ in self)


_METHOD_INDEXES: Dict[str, MethodIndex] = {}
_CALLED_METHOD = lazy(r"\.([A-Za-z_]\w*)\s*\(")


def forget() -> None:
    _METHOD_INDEXES.clear()
    _HOLDS.clear()
    forget_state()
    _TEXTS.clear()
    _MENTIONED.clear()


def forget_root(root: str) -> None:
    """Let go of one project's method index and texts (another project's turn has come)."""
    _METHOD_INDEXES.pop(root, None)
    _TEXTS.pop(root, None)
    forget_state(root)


def method_index(root: str, module_of: Callable[[str], str], cache: Optional[DiskCache] = None) -> MethodIndex:
    """The project's method index, built once per process; ``cache``: the project's cache,
    where what each file contributes is kept by the file's content (see ``FileMethods``)."""
    index = _METHOD_INDEXES.get(root)
    if index is not None and index.look is not current_look():
        index = _still_current(root, index)
    if index is None:
        index = _METHOD_INDEXES[root] = _index(root, module_of, cache or DiskCache(None))
        index.look = current_look()
    return index


def _still_current(root: str, index: MethodIndex) -> Optional[MethodIndex]:
    """The index, if the project's files are as it read them, checked once per look: a
    long-lived process (the editor server, where each check is one look) sees a method defined
    or removed in another file since. None when they changed: the index and what was answered
    from it are let go. Outside any look the index is built once per process."""
    look = current_look()
    if look is None:
        return index
    index.look = look
    if files_state(root) == index.state:
        return index
    forget_root(root)
    _HOLDS.clear()
    for key in [key for key in _MENTIONED if key[0] == root]:
        del _MENTIONED[key]
    return None


def called_database_methods(text: str, root: str, module_of: Callable[[str], str],
                            cache: Optional[DiskCache] = None) -> Iterator[Tuple[str, str]]:
    """(module, "Class.method") of each method the text calls that the project defines once, in
    a module with database vocabulary (``self.store.add_threepid(...)`` in a handler)."""
    if not calls_resolvable_methods(text):
        return  # nothing the index could hold: a file that calls none need not build it (a walk of the project)
    called = [m.group(1) for m in _CALLED_METHOD.finditer(text)]
    index = method_index(root, module_of, cache)
    seen: Set[str] = set()
    for name in called:
        if name not in seen and index.is_database(name):
            seen.add(name)
            yield index.only_owner(name)  # type: ignore[misc]


def calls_resolvable_methods(text: str) -> bool:
    """Whether the text calls a method ``called_database_methods`` would look up in the index."""
    return any(resolvable_by_name(m.group(1)) for m in _CALLED_METHOD.finditer(text))


def called_method_names(text: str) -> FrozenSet[str]:
    """The names of the methods the text calls that the index may resolve a receiver by."""
    return frozenset(name for name in (m.group(1) for m in _CALLED_METHOD.finditer(text)) if resolvable_by_name(name))


def method_answers(index: MethodIndex, names: Iterable[str]) -> str:
    """A digest of what the index answers for ``names``: each name's only definition, if it
    has one, and whether that is next to database code (``USER_MODEL_ANSWER``: the user model).
    A result that asked is recorded with it, and holds while it is the same: a second class
    defining the method, or the defining file deleted, changes it; so does a name of a call
    added to the module that resolves (the module's own digest changed too)."""
    resolved = (answer for answer in (index.answer(name) for name in sorted(names)) if not answer.endswith("="))
    return digest("\n".join(resolved).encode("utf-8", "surrogatepass"))  # a name resolving to nothing adds nothing


def recorded_answers(index: MethodIndex, names: Iterable[str]) -> str:
    """The value of a methods dependency: the project's files as the index read them (a later
    run that finds them the same need not build the index), what the index was made from (one
    that finds that the same, after an edit that defines no method, need not ask it anything),
    ``method_answers`` and the names asked, space-separated (one that finds the index changed
    asks it about them without reading the module again: they are its text's as analyzed, an
    editor's buffer included; were the module edited since, its own digest decides)."""
    asked = sorted(names)
    return MethodsAnswer(index.state, index.facts, method_answers(index, asked), " ".join(asked)).value()


# (methods dependency, value recorded) -> whether it holds: the index is built once per process
_HOLDS: Dict[Tuple[str, str], bool] = {}


def answers_hold(dependency: str, recorded: str) -> bool:
    """Whether the index answers now what a methods dependency recorded: the project's files
    are the same, or the answers for the names it asked are (``recorded_answers``)."""
    key = (dependency, recorded)
    if key not in _HOLDS:
        root, _ = methods_asked(dependency)
        state, facts, answers, names = MethodsAnswer.read(recorded)
        # every value records at least one name: one without is damaged (never holds)
        _HOLDS[key] = bool(names) and (state == project_state(root) or facts == _index_of(root).facts
                                       or method_answers(_index_of(root), names.split(" ")) == answers)
    return _HOLDS[key]


def _index_of(root: str) -> MethodIndex:
    return method_index(root, lambda path: import_name_for(path, root)[0],
                        DiskCache(os.path.join(root, CACHE_DIRECTORY)))


def project_state(root: str) -> str:
    """A digest of the project's Python files (names and contents) as the method index reads
    them, once per process; the index's own when it is built."""
    index = _METHOD_INDEXES.get(root)
    return index.state if index is not None else files_state_once(root)


def unique_method(root: str, method: str, module_of: Callable[[str], str],
                  cache: Optional[DiskCache] = None) -> Optional[Tuple[str, str]]:
    """(module, "Class.method") of the project's only class that defines ``method``."""
    return method_index(root, module_of, cache).only_owner(method)


# The stored index is written again when this many files' records were made anew (or files
# came or went): after an edit or two a process reads the few edited files again instead.
_RESTORE_AFTER_NEW_RECORDS = 8


def _index(root: str, module_of: Callable[[str], str], cache: DiskCache) -> MethodIndex:
    """The index from every file's ``FileMethods``: the stored ones of files whose content is
    the same (the index is rebuilt in every process that needs it, and it reads every file)."""
    key = "methods-" + digest(repr((os.path.abspath(root), code_fingerprint())).encode("utf-8", "surrogatepass")) \
        if cache.directory is not None else ""  # (nothing stored: keydrift's code need not be hashed)
    entry = cache.load(key) if key else None
    stored = _stored_file_methods(entry)
    kept: Dict[str, list] = {}
    index = MethodIndex(module_of)
    contents = python_file_digests(root)
    helped = _HelpedRecords(contents, stored) if _SHARED_WITH_A_HELPER else None
    facts: List[str] = []
    made = 0
    early = dict(_EARLY_RECORDS)
    _EARLY_RECORDS.clear()
    for path, content in contents:
        record = helped.record(path) if helped is not None else _usable(early.get(path), content)
        found = _file_methods(path, content, stored if record is None else {path: record}, kept)
        if found is None:
            continue
        made += kept[path] is not stored.get(path)
        facts.append(f"{path}\0{' '.join(found.methods)}\0{' '.join(found.database)}\0{found.user_model}")
        for qualified in found.methods:
            index.defined.setdefault(qualified.rsplit(".", 1)[-1], []).append((path, qualified))
        for name in found.database:
            index.in_database_files.setdefault(name, []).append(path)
        if found.user_model:
            index.settings.append((path, found.user_model))
    index.state = state_of(contents)
    index.facts = digest("\n".join(facts).encode("utf-8", "surrogatepass"))
    made_from = entry.get("facts") if entry else None
    if made_from == index.facts and isinstance(entry.get("database"), str):  # type: ignore[union-attr]
        index._database_fingerprint = entry["database"]  # type: ignore[index]
    index._keep = lambda also: cache.store(key, {"files": kept, **also})
    if made >= _RESTORE_AFTER_NEW_RECORDS or kept.keys() != stored.keys():
        index._keep({"facts": index.facts, "database": index._database_fingerprint} if index._database_fingerprint else {})
    return index


# Inside ``made_with_a_helper``: an index built from many files' texts shares the work with a
# forked helper process.
_SHARED_WITH_A_HELPER: List[bool] = []
# Below this many files to read, a helper process costs more than it saves.
_HELPED_FROM = 400


@contextmanager
def made_with_a_helper() -> Iterator[None]:
    """Inside the block, the method index of a project whose files must be read (nothing stored
    for them) is made by this process and a forked helper, half the files each: for the CLI,
    which builds it before forking its workers, with the second core idle meanwhile."""
    _SHARED_WITH_A_HELPER.append(True)
    try:
        yield
    finally:
        _SHARED_WITH_A_HELPER.pop()


class _HelpedRecords:
    """The records (as ``_file_methods`` keeps them) of the last half of the files to read, made
    by a helper process while this one reads the first half; collected when the first file of
    the helper's half comes up (a failed helper's files are read here, as the others)."""

    def __init__(self, contents: Sequence[Tuple[str, Optional[str]]], stored: Dict[str, list]) -> None:
        to_read = [(path, content) for path, content in contents
                   if content is not None and (stored.get(path) or [None])[0] != content]
        share = to_read[len(to_read) // 2:] if len(to_read) >= _HELPED_FROM else []
        self.digests = dict(share)
        self.first = share[0][0] if share else None
        self.collect = made_by_a_helper(list(self.digests), self._made) if share else None
        self.records: Dict[str, object] = {}

    def record(self, path: str) -> Optional[list]:
        if path == self.first and self.collect is not None:
            self.records, self.collect = self.collect(), None
        return _usable(self.records.get(path), self.digests.get(path))

    def _made(self, path: str) -> Optional[list]:
        return file_record(path, self.digests[path])


def _usable(found: object, content: Optional[str]) -> Optional[list]:
    """A record ``file_record`` made, as ``_file_methods`` keeps it, if it was made from the
    content ``content``; its vocabulary answer is remembered (the file's check asks again)."""
    if not (isinstance(found, list) and len(found) == 6 and found[0] == content):
        return None
    remember_read_answer(found)
    return found[:4]


def remember_read_answer(record: list) -> None:
    """Remember the vocabulary answer of a record ``file_record`` made."""
    if isinstance(record[4], bytes) and isinstance(record[5], bool):
        remember_answer(record[4], record[5])


# Records the early reader made (``early_reading``), by file: used by the first index built.
_EARLY_RECORDS: Dict[str, list] = {}


def take_early_records(records: object) -> None:
    """Keep what the early reader made for the index, and remember its vocabulary answers now:
    the prefilter asks them before the index is built."""
    for path, record in records.items() if isinstance(records, dict) else ():
        if isinstance(path, str) and isinstance(record, list) and len(record) == 6:
            _EARLY_RECORDS[path] = record
            remember_read_answer(record)


def _file_methods(path: str, content: Optional[str], stored: Dict[str, list],
                  kept: Dict[str, list]) -> Optional[FileMethods]:
    """A file's ``FileMethods``, stored under its digest ``content`` (``kept`` gets it); None
    for what is not a readable regular file."""
    if content is None:
        return None
    record = stored.get(path)
    if record is not None and record[0] == content:
        try:
            _, methods, database, user_model = record
            found = FileMethods(tuple(map(str, methods)), tuple(map(str, database)), str(user_model))
        except (TypeError, ValueError):
            found = None  # a damaged record is made again
        if found is not None:
            kept[path] = record
            return found
    text = read_regular_file(path)
    if text is None:
        return None
    found = FileMethods.of(text)
    kept[path] = [content, list(found.methods), list(found.database), found.user_model]
    return found


def _stored_file_methods(entry: Optional[dict]) -> Dict[str, list]:
    files = entry.get("files") if isinstance(entry, dict) else None
    return {p: r for p, r in files.items() if isinstance(r, list)} if isinstance(files, dict) else {}


