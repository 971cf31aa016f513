"""Normalizers and the defects inside them (KD4).

Which functions are normalizers, and how a module names ``urllib.parse``:
``analysis/normalizer_names.py``.

**The input.** The first parameter after ``self``/``cls``, plus any parameter named like a URL
or path. It is a *URL* when its name or the function's says so (url, uri, link, href, website,
homepage, endpoint) or the function passes it to ``urlsplit``/``urlparse``; a *path* when named
so; otherwise KD401/KD403/KD405/KD406 have nothing to say about it.

**How the body is read.** One walk over the normalizer's body in source order (nested
functions skipped), with an environment ``name -> what the value is``: the input URL, a parse
result, a host part (``.hostname``/``.netloc``/``.scheme``), a path part, a rebuilt URL
(``urlunsplit``, ``geturl()``, an f-string with ``://``), or something else. Guards are
textual and order-based: a string literal holding ``://`` (or starting with ``http``, or
``//``) anywhere before a parse guarantees a scheme; an ``if`` that tests ``.scheme``/
``.netloc``/``.hostname`` after it handles the missing one.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import replace
from typing import Dict, FrozenSet, Iterator, List, Optional, Sequence, Set, Tuple

from keydrift.analysis.normalizer_names import (
    PATH_WORDS,
    REBUILD_FUNCTIONS,
    SPLIT_FUNCTIONS,
    URL_PARSE_MODULES,
    URL_WORDS,
    UrlParseNames,
    is_normalizer,
    is_normalizer_name,
    normalizer_functions,
    output_only_functions,
    qualified_functions,
    url_parse_names,
)
from keydrift.analysis.normalizer_naming import words as name_words
from keydrift.analysis import tree
from keydrift.analysis.url_patterns import is_pattern_argument, scheme_matched
from keydrift.analysis.tree import (
    FUNCTION_TYPES, FunctionNode, all_argument_values, child_nodes, parameter_names, segment, source_order_children,
)
from keydrift.analysis.tree import string_literal as _literal
from keydrift.analysis.values import code, dotted_name, last_name
from keydrift.records import record
from keydrift.types import Config
from keydrift.vocabulary import mentions_database

KD401 = "KD401"
KD402 = "KD402"
KD403 = "KD403"
KD404 = "KD404"
KD405 = "KD405"
KD406 = "KD406"
KD407 = "KD407"
PREFIX = "prefix"
APPEND = "append"

# -- values inside a normalizer --------------------------------------------------------------

INPUT = "input"  # the URL the normalizer was given (or derived from it as a whole)
PARSED = "parsed"  # a urlsplit/urlparse result
HOST = "host"  # scheme, netloc, hostname of a parse result
PATH = "path"  # path, query, fragment of a parse result, or a path input
REBUILT = "rebuilt"  # a whole URL put back together
OTHER = "other"

HOST_ATTRIBUTES: FrozenSet[str] = frozenset({"scheme", "netloc", "hostname", "port", "username", "password"})
HOST_READS: FrozenSet[str] = frozenset({"hostname", "netloc"})  # None/"" without a scheme
PATH_ATTRIBUTES: FrozenSet[str] = frozenset({"path", "query", "fragment", "params"})
SPLIT_TUPLE_KINDS = (HOST, HOST)  # scheme, netloc; the rest of the tuple are path parts
# str methods whose result is still the same kind of value (the whole URL stays a whole URL).
KIND_PRESERVING_METHODS: FrozenSet[str] = frozenset({
    "strip", "lstrip", "rstrip", "replace", "removeprefix", "removesuffix", "lower", "upper",
    "casefold", "encode", "decode", "expandtabs", "translate",
})
# Functions that return their argument's kind.
KIND_PRESERVING_FUNCTIONS: FrozenSet[str] = frozenset({"str", "unquote", "quote", "unquote_plus", "quote_plus"})
CASE_METHODS: FrozenSet[str] = frozenset({"lower", "casefold"})
STRIP_METHODS: FrozenSet[str] = frozenset({"strip", "lstrip", "rstrip"})


@record
class Val:
    """What a normalizer's value is at a point of its body: its kind, and the steps that decide
    whether appending or prefixing to it is idempotent."""

    kind: str = OTHER
    parse_part: bool = False  # a part of a parse result (``parts.path``): rebuilt next to its host
    slash_stripped: bool = False  # rstrip("/")/removesuffix("/") applied: appending "/" is idempotent
    stripped_by: int = 0  # id() of that rstrip call: appending "/" afterwards also restores the root
    scheme_stripped: bool = False  # removeprefix("https://")/lstrip("http://"): prefixing one is idempotent


@record
class Defect:
    """A defect found inside a normalizer (KD4xx), with the expression that shows it."""

    code: str
    function: str  # qualified name of the normalizer
    node: ast.AST
    text: str  # the offending expression, for messages
    detail: str = ""  # KD406: PREFIX or APPEND; KD403: PATH or a whole URL (INPUT, REBUILT)


def _guarantees_scheme(text: str) -> bool:
    """A literal that checks for or adds a scheme: "://", "https://", "http", "//"."""
    lowered = text.lower()
    return "://" in lowered or lowered.startswith("http") or lowered == "//"


def looks_like_word(chars: str) -> bool:
    """A strip() argument that is a prefix/suffix, not a set of characters: "www.", ".com",
    "https://" (two letters or more, plus punctuation of a URL or a repeated character)."""
    letters = sum(c.isalpha() for c in chars)
    if letters < 2:
        return False
    return any(c in ".:/@" for c in chars) or len(set(chars)) < len(chars)


class NormalizerReader:
    """One walk over one normalizer's body, in source order, collecting defects."""

    def __init__(self, qualified: str, node: FunctionNode, names: UrlParseNames) -> None:
        self.qualified = qualified
        self.function = node
        self.names = names
        self.env: Dict[str, Val] = {}
        self.ancestors: List[ast.AST] = []
        self.defects: List[Defect] = []
        # facts gathered while walking, in source order
        self.scheme_guarded = False  # a "://" literal or an input validation seen so far
        self.prefix_guarded = False  # an if-test on startswith/"://"/scheme seen so far
        self.append_guarded = False  # an if-test on endswith/"/" seen so far
        self.root_restored = False  # `or "/"`, `x = "/"`, `"/" if ... else ...` anywhere
        self.host_checked = False  # an if-test on the host that raises, or an assert
        self.scheme_handled_after: List[int] = []  # order indexes of if-tests on .scheme/.netloc
        self.order = 0
        self.pending_splits: List[Tuple[int, ast.Call]] = []
        self.pending_fallbacks: List[ast.AST] = []
        self.pending_rstrips: List[Tuple[ast.Call, Val]] = []  # (call, what it strips)
        self.safe_rstrips: Set[int] = set()
        self.host_names: Set[str] = set()
        self.rebuilds = False  # the URL is put back together (urlunsplit, geturl, _replace)
        # KD407: names holding ``parts.hostname`` (None when the URL has no host)
        self.none_hosts: Set[str] = set()
        self.none_host_tested = False  # a test on the hostname seen so far
        self.pending_none_calls: List[Tuple[ast.Call, str]] = []  # (call, parameter it came from or "")
        self.none_host_params: Dict[str, str] = {}  # name holding a hostname -> its parameter
        self.pieces: Dict[ast.AST, Optional[List[_Piece]]] = {}  # string node -> its literals

    # -- setup ----------------------------------------------------------------------------------

    def run(self) -> List[Defect]:
        self._bind_inputs()
        statements = list(self.function.body)
        if statements and _is_docstring(statements[0]):
            statements = statements[1:]
        for statement in statements:
            self._walk(statement)
        self._finish()
        return self.defects

    def _bind_inputs(self) -> None:
        params = list(parameter_names(self.function))
        if params and params[0] in ("self", "cls"):
            params = params[1:]
        if not params:
            return
        function_words = set(name_words(self.function.name))
        url_function = bool(function_words & URL_WORDS) or self._splits_parameter(params)
        path_function = bool(function_words & PATH_WORDS)
        for index, name in enumerate(params):
            words = set(name_words(name))
            if words & PATH_WORDS and not words & URL_WORDS:
                self.env[name] = Val(PATH)  # a parameter named path holds a path, parsed or not
            elif words & URL_WORDS or (index == 0 and url_function):
                self.env[name] = Val(INPUT)
            elif index == 0 and path_function:
                self.env[name] = Val(PATH)

    def _splits_parameter(self, params: List[str]) -> bool:
        """Whether the body passes a parameter (or a method chain on it) to urlsplit/urlparse."""
        stack: List[ast.AST] = list(self.function.body)
        while stack:
            node = stack.pop()
            if isinstance(node, ast.Call) and self._split_function(node.func):
                first = _first_argument(node)
                if first is not None and _root_name(first) in params:
                    return True
            if isinstance(node, _DEFINITIONS):
                continue
            stack.extend(child_nodes(node))
        return False

    def _split_function(self, func: ast.expr) -> str:
        """"urlsplit"/"urlparse" when ``func`` is urllib's, else ""."""
        if isinstance(func, ast.Name):
            name = self.names.functions.get(func.id)
            if name is not None:
                return name if name in SPLIT_FUNCTIONS else ""
            unbound = func.id not in self.names.foreign  # a star import, most likely
            return func.id if func.id in SPLIT_FUNCTIONS and unbound else ""
        if isinstance(func, ast.Attribute) and func.attr in SPLIT_FUNCTIONS:
            owner = dotted_name(func.value)
            return func.attr if owner in self.names.modules or owner in URL_PARSE_MODULES else ""
        return ""

    def _rebuild_function(self, func: ast.expr) -> bool:
        name = last_name(func)
        if isinstance(func, ast.Name):
            name = self.names.functions.get(name, name)
        return name in REBUILD_FUNCTIONS

    # -- walking --------------------------------------------------------------------------------

    def _walk(self, node: ast.AST) -> None:
        if isinstance(node, _DEFINITIONS):
            return  # nested definitions are other functions
        self.order += 1
        self._enter(node)
        self.ancestors.append(node)
        for child in source_order_children(node):
            self._walk(child)
        self.ancestors.pop()
        self._leave(node)

    def _enter(self, node: ast.AST) -> None:
        test = getattr(node, "test", None)
        if isinstance(node, (ast.If, ast.IfExp, ast.While, ast.Assert)) and test is not None:
            self._none_host_test(test)
        elif isinstance(node, ast.BoolOp):
            for value in node.values[:-1]:  # the values tested before the last one is taken
                self._none_host_test(value)
        elif isinstance(node, _TRY_TYPES) and node.handlers:  # type: ignore[attr-defined]
            self.none_host_tested = True  # an AttributeError is caught somewhere: not our call
        if isinstance(node, ast.If):
            self._if_test(node.test, node.body)
        elif isinstance(node, ast.IfExp):
            self._if_test(node.test, None)
            for branch in (node.body, node.orelse):
                if _literal(branch) == "/":
                    self.root_restored = True
        elif isinstance(node, ast.Assert):
            if _mentions(node.test, HOST_ATTRIBUTES, self.host_names):
                self.host_checked = True
        elif isinstance(node, ast.BoolOp):
            self._boolean(node)
        elif isinstance(node, (ast.Constant, ast.JoinedStr)) and not self._in_fstring(node):
            self._string(node)

    def _leave(self, node: ast.AST) -> None:
        if isinstance(node, ast.Call):
            self._call(node)
        elif isinstance(node, ast.BinOp):
            self._binary(node)
        elif isinstance(node, ast.JoinedStr) and not self._in_fstring(node):
            self._fstrings(node)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                self._assign(target, node.value)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            self._assign(node.target, node.value)
        elif isinstance(node, ast.AugAssign):
            self._augmented(node)

    # -- facts -----------------------------------------------------------------------------------

    def _if_test(self, test: ast.expr, body: Optional[List[ast.stmt]]) -> None:
        text = code(test)
        if any(w in text for w in ("startswith", "://", "http", ".scheme", "netloc")):
            self.prefix_guarded = True
        if "endswith" in text or '"/"' in text or "'/'" in text or "[-1]" in text:
            self.append_guarded = True
        if re.search(r"\.(?:scheme|netloc|hostname)\b", text):
            self.scheme_handled_after.append(self.order)
        raises = body is not None and _raises(body)
        if raises and _mentions(test, HOST_ATTRIBUTES, self.host_names):
            self.host_checked = True
        if raises and any(isinstance(v, Val) and v.kind == INPUT and re.search(rf"\b{re.escape(n)}\b", text)
                          for n, v in self.env.items()):
            self.scheme_guarded = True  # the input is validated (and rejected) before parsing
        if self._matches_scheme_pattern(test):
            self.scheme_guarded = True  # parsed only where a pattern requiring "<scheme>://" matched

    def _matches_scheme_pattern(self, test: ast.expr) -> bool:
        """``HTTP_URL.match(url)``, ``re.fullmatch(r"https?://\\S+", url)`` of the input."""
        for node in ast.walk(test):
            subject = scheme_matched(node, self.names.patterns) if isinstance(node, ast.Call) else None
            if subject is not None and self.eval(subject).kind == INPUT:
                return True
        return False

    def _in_fstring(self, node: ast.AST) -> bool:
        """A text part or a format spec of an f-string: a piece of a literal, not a string of its own."""
        parent = self.ancestors[-1] if self.ancestors else None
        return isinstance(parent, ast.JoinedStr) or isinstance(parent, ast.FormattedValue) and node is parent.format_spec

    def _string(self, node: ast.expr) -> None:
        """A string literal; an implicit concatenation also counts each literal of it and each
        run of plain literals from the second on (each is a string the code wrote)."""
        if self.scheme_guarded or is_pattern_argument(node, self.ancestors[-1] if self.ancestors else None):
            return  # nothing more to learn; a regular expression is judged as one (_if_test)
        value = _literal(node)
        if value is not None and _guarantees_scheme(value) and not self._in_docstring_like():
            self.scheme_guarded = True
            return
        if isinstance(node, ast.Constant) and not (value is not None and ("http" in value.lower() or "//" in value)):
            return  # no literal of a concatenation can guarantee a scheme either
        pieces = self._pieces(node)
        if pieces is None:
            return
        for index, piece in enumerate(pieces):
            texts = [p.value for p in pieces[index:]] if index else []
            if isinstance(piece.value, str) and _guarantees_scheme(piece.value) or (
                    len(texts) > 1 and all(isinstance(t, str) for t in texts) and _guarantees_scheme("".join(texts))):  # type: ignore[arg-type]
                self.scheme_guarded = True
                return

    def _pieces(self, node: ast.expr) -> Optional[List[_Piece]]:
        if node not in self.pieces:
            self.pieces[node] = _concatenated(node)
        return self.pieces[node]

    def _in_docstring_like(self) -> bool:
        return bool(self.ancestors) and isinstance(self.ancestors[-1], ast.Expr)

    def _boolean(self, node: ast.BoolOp) -> None:
        """``a or b or c`` is read as ``(a or b) or c``: each level is read, outermost first;
        only the innermost has a left operand that is not itself an ``or``."""
        if not isinstance(node.op, ast.Or):
            return
        values = node.values
        for index in range(len(values) - 1, 0, -1):
            right = _literal(values[index])
            if right == "/":
                self.root_restored = True
                if index == 1:
                    self.safe_rstrips.update(id(n) for n in _call_chain(values[0]))
            elif right is not None and index == 1 and _is_host_read(values[0], self.host_names):
                self.pending_fallbacks.append(node if len(values) == 2 else _leading_or(node))

    def _none_host_test(self, test: ast.expr) -> None:
        """``if not parts.hostname``, ``if host is None``, ``host and host.lower()``."""
        if _mentions(test, frozenset({"hostname"}), self.none_hosts):
            self.none_host_tested = True

    def _none_host(self, node: ast.expr) -> Optional[str]:
        """For ``parts.hostname`` (or a name holding it): the parameter the parse result came
        from ("" when parsed here); None when ``node`` is no hostname."""
        if isinstance(node, ast.Name) and node.id in self.none_hosts:
            return self.none_host_params.get(node.id, "")
        if not (isinstance(node, ast.Attribute) and node.attr == "hostname"):
            return None
        if self.eval(node.value).kind == PARSED:
            return ""
        owner = node.value
        if isinstance(owner, ast.Name) and owner.id in self._parameters():
            return owner.id  # a parse result handed in by the caller (a str has no .hostname)
        return None

    def _parameters(self) -> List[str]:
        return [n for n in parameter_names(self.function) if n not in ("self", "cls")]

    def _call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Attribute) and not self.none_host_tested:
            origin = self._none_host(node.func.value)
            if origin is not None:
                self.pending_none_calls.append((node, origin))
        if self._rebuild_function(node.func) or last_name(node.func) in ("geturl", "_replace"):
            self.rebuilds = True
        split = self._split_function(node.func)
        arguments = all_argument_values(node)
        if split and arguments:
            self._split_call(node)
            return
        name = last_name(node.func)
        if name == "getattr" and len(arguments) == 3 and _literal(arguments[1]) in HOST_READS:
            self.pending_fallbacks.append(node)
        if not isinstance(node.func, ast.Attribute):
            return
        receiver = self.eval(node.func.value)
        args = [_literal(a) for a in arguments]
        if name in STRIP_METHODS and args and args[0] is not None:
            self._strip_call(node, name, args[0], receiver)
        elif name in CASE_METHODS and receiver.kind in (INPUT, REBUILT) and self._lowers_whole_url(node):
            self._add(KD405, node)

    def _split_call(self, node: ast.Call) -> None:
        arg = self.eval(all_argument_values(node)[0])
        probe = bool(self.ancestors) and isinstance(self.ancestors[-1], ast.Attribute) \
            and self.ancestors[-1].attr == "scheme"
        if arg.kind == INPUT and not self.scheme_guarded and not probe and not self._path_only_parse(node):
            self.pending_splits.append((self.order, node))

    def _path_only_parse(self, call: ast.Call) -> bool:
        """``urlparse(url).path``, or ``parts = urlparse(url)`` read only as ``parts.path``/
        ``.query``/``.params``/``.fragment`` or put back together with only those replaced
        (``urlunparse(parts._replace(path=p))``): the normalizer keeps the path of its input and
        never uses a host, so a missing scheme cannot leave a host uncanonicalized."""
        parent = self.ancestors[-1] if self.ancestors else None
        if self._round_trip(call):
            return True
        if isinstance(parent, ast.Attribute) and parent.value is call:
            return parent.attr in PATH_ATTRIBUTES
        if not (isinstance(parent, ast.Assign) and parent.value is call and len(parent.targets) == 1
                and isinstance(parent.targets[0], ast.Name)):
            return False
        name = parent.targets[0].id
        uses = list(_name_uses_after(self.function.body, parent, name))
        return bool(uses) and all(self._reads_no_host(up) for up in uses)

    def _reads_no_host(self, use: Optional[ast.AST]) -> bool:
        """A use of a parse result that neither reads nor changes its host: a path attribute,
        or path parts replaced (``parts._replace(path=p)``, no ``netloc=`` and no ``**changes``).
        The parse merely put back together (``parts.geturl()``) is still reported."""
        if not isinstance(use, ast.Attribute):
            return False
        if use.attr in PATH_ATTRIBUTES:
            return True
        call = next((n for n in tree.walk(self.function) if isinstance(n, ast.Call) and n.func is use), None)
        return use.attr == "_replace" and call is not None and not call.args and all(
            k.arg is not None and k.arg not in HOST_ATTRIBUTES for k in call.keywords)

    def _round_trip(self, call: ast.Call) -> bool:
        """``urlunparse(urlparse(url))``, ``urlparse(url).geturl()``,
        ``urlparse(path)._replace(query="").geturl()``: the parse result goes back together
        without its host being read or changed, so input without a scheme comes back as it was."""
        parent = self.ancestors[-1] if self.ancestors else None
        outer = self.ancestors[-2] if len(self.ancestors) > 1 else None
        caller = _argument_of(call, parent, outer)
        if caller is not None:
            arguments = all_argument_values(caller)
            return bool(arguments) and arguments[0] is call and self._rebuild_function(caller.func)
        if not (isinstance(parent, ast.Attribute) and parent.value is call):
            return False
        if parent.attr == "geturl":
            return True
        return parent.attr == "_replace" and isinstance(outer, ast.Call) and outer.func is parent and not any(
            k.arg is not None and k.arg in HOST_ATTRIBUTES for k in outer.keywords)

    def _strip_call(self, node: ast.Call, name: str, chars: str, receiver: Val) -> None:
        if looks_like_word(chars):
            self._add(KD404, node)
        elif name == "rstrip" and "/" in chars and receiver.kind in (INPUT, PATH, REBUILT):
            if not self._guarded_by_root_test():
                self.pending_rstrips.append((node, receiver))

    def _guarded_by_root_test(self) -> bool:
        """Inside ``if path != "/"`` / ``if len(path) > 1``: the root is never stripped."""
        for ancestor in self.ancestors:
            if isinstance(ancestor, (ast.If, ast.IfExp)):
                text = code(ancestor.test)
                if '"/"' in text or "'/'" in text or "len(" in text:
                    return True
        return False

    def _lowers_whole_url(self, node: ast.Call) -> bool:
        """Not when lowered only to read the host, or only to be compared or tested."""
        return not self._in_host_read() and not self._in_test(node)

    def _in_host_read(self) -> bool:
        """Inside the argument of ``urlsplit(...).hostname`` (or .netloc/.scheme)."""
        for outer, inner in zip(self.ancestors, self.ancestors[1:]):
            if (isinstance(outer, ast.Attribute) and outer.attr in HOST_ATTRIBUTES
                    and inner is outer.value and isinstance(inner, ast.Call) and self._split_function(inner.func)):
                return True
        return False

    def _in_test(self, node: ast.AST) -> bool:
        chain = self.ancestors + [node]
        for ancestor, child in zip(chain, chain[1:]):
            if isinstance(ancestor, ast.Compare):
                return True
            if isinstance(ancestor, (ast.If, ast.IfExp, ast.While, ast.Assert)) and child is ancestor.test:
                return True
        return False

    def _binary(self, node: ast.BinOp) -> None:
        if not isinstance(node.op, ast.Add):
            return
        left, right = _literal(node.left), _literal(node.right)
        if right is not None and _only_slashes(right):
            self._append(node, self.eval(node.left))
            if isinstance(node.left, ast.Call):
                self.safe_rstrips.add(id(node.left))
        elif left is not None and "://" in left:
            self._prefix(node, self.eval(node.right))
        elif left is not None and _only_slashes(left) and self.pending_rstrips \
                and self.eval(node.right).kind in (INPUT, PATH, REBUILT):
            self.root_restored = True  # "/" + path.lstrip("/") after the rstrip: never empty

    def _fstrings(self, node: ast.JoinedStr) -> None:
        """An f-string, or each f-string of an implicit concatenation (``"https://" f"{host}"``:
        each f-string literal is read alone; the concatenation is not one template)."""
        pieces = self._pieces(node)
        if pieces is None:
            self._fstring(node)
            return
        expressions = iter([v for v in node.values if isinstance(v, ast.FormattedValue)])
        for piece in pieces:
            if piece.fstring is not None:
                values = [next(expressions, v) if isinstance(v, ast.FormattedValue) else v
                          for v in piece.fstring.values]
                self._fstring(_part_of(ast.JoinedStr(values=values, **piece.position), node))

    def _fstring(self, node: ast.JoinedStr) -> None:
        """``f"https://{url}"`` prefixes a scheme; ``f"{path}/"`` appends a slash."""
        parts = list(node.values)
        for index, part in enumerate(parts):
            if not isinstance(part, ast.FormattedValue):
                continue
            before = _text_part(parts[index - 1]) if index else None
            after = _text_part(parts[index + 1]) if index + 1 < len(parts) else None
            value = self.eval(part.value)
            if index == 1 and before is not None and "://" in before:
                self._prefix(node, value)
            if index == 1 and before is not None and _only_slashes(before) \
                    and self.pending_rstrips and value.kind in (INPUT, PATH, REBUILT):
                self.root_restored = True  # f"/{path.lstrip('/')}": never empty
            if index + 2 == len(parts) and after is not None and _only_slashes(after):
                self._append(node, value)

    def _prefix(self, node: ast.AST, value: Val) -> None:
        if value.kind == INPUT and not value.scheme_stripped and not self.prefix_guarded and not self._conditional():
            self._add(KD406, node, PREFIX)

    def _append(self, node: ast.AST, value: Val) -> None:
        if value.slash_stripped:
            self.safe_rstrips.add(value.stripped_by)
        if value.kind in (INPUT, PATH, REBUILT) and not value.slash_stripped \
                and not self.append_guarded and not self._conditional():
            self._add(KD406, node, APPEND)

    def _conditional(self) -> bool:
        return any(isinstance(a, (ast.If, ast.IfExp, ast.While)) for a in self.ancestors)

    def _augmented(self, node: ast.AugAssign) -> None:
        if isinstance(node.op, ast.Add) and isinstance(node.target, ast.Name):
            suffix = _literal(node.value)
            if suffix is not None and _only_slashes(suffix):
                self._append(node, self.eval(node.target))

    def _assign(self, target: ast.expr, value: ast.expr) -> None:
        if _literal(value) == "/":
            self.root_restored = True
        if isinstance(target, ast.Name):
            origin = self._none_host(value)
            if origin is not None:
                self.none_hosts.add(target.id)
                self.none_host_params[target.id] = origin
            else:
                self.none_hosts.discard(target.id)
            evaluated = self.eval(value)
            self.env[target.id] = evaluated
            if _mentions(value, HOST_READS, self.host_names):
                self.host_names.add(target.id)
            else:
                self.host_names.discard(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            kind = self.eval(value).kind
            for index, element in enumerate(target.elts):
                name = element.value if isinstance(element, ast.Starred) else element
                if isinstance(name, ast.Name):
                    part = OTHER
                    if kind == PARSED:
                        part = SPLIT_TUPLE_KINDS[index] if index < len(SPLIT_TUPLE_KINDS) else PATH
                    self.env[name.id] = Val(part)
                    if part == HOST and index == 1:
                        self.host_names.add(name.id)

    def _add(self, code_: str, node: ast.AST, detail: str = "") -> None:
        self.defects.append(Defect(code_, self.qualified, node, code(node), detail))

    def _finish(self) -> None:
        for order, call in self.pending_splits:
            if not any(after > order for after in self.scheme_handled_after):
                self._add(KD401, call)
        if not self.host_checked:
            for node in self.pending_fallbacks:
                self._add(KD402, node)
        if not self.root_restored:
            for call, stripped in self.pending_rstrips:
                if stripped.parse_part and self.rebuilds:
                    continue  # put back next to its host: "https://x.com" is "https://x.com/"
                if id(call) not in self.safe_rstrips:
                    self._add(KD403, call, stripped.kind)
        for call, origin in self.pending_none_calls:
            self._add(KD407, call, origin)

    # -- evaluation -----------------------------------------------------------------------------

    def eval(self, node: ast.expr) -> Val:
        if isinstance(node, ast.Name):
            return self.env.get(node.id, Val())
        if isinstance(node, ast.Attribute):
            base = self.eval(node.value)
            if base.kind == PARSED:
                if node.attr in HOST_ATTRIBUTES:
                    return Val(HOST)
                if node.attr in PATH_ATTRIBUTES:
                    return Val(PATH, parse_part=True)
            return Val()
        if isinstance(node, ast.Call):
            return self._eval_call(node)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            sides = (node.left, node.right)
            return self._eval_parts([self.eval(p) for p in sides], [_literal(p) or "" for p in sides])
        if isinstance(node, ast.JoinedStr):
            if self._pieces(node) is not None:
                return Val()  # an implicit concatenation is not one template: no value
            return self._eval_parts(
                [self.eval(p.value) for p in node.values if isinstance(p, ast.FormattedValue)],
                [text for text in map(_text_part, node.values) if text is not None])
        if isinstance(node, ast.BoolOp):
            for value in node.values[:-1]:  # ((a or b) or c): the first value of a kind, else the last
                first = self.eval(value)
                if first.kind != OTHER:
                    return first
            return self.eval(node.values[-1])
        if isinstance(node, ast.IfExp):
            body = self.eval(node.body)
            return body if body.kind != OTHER else self.eval(node.orelse)
        if isinstance(node, ast.Await):
            return self.eval(node.value)
        return Val()

    def _eval_call(self, node: ast.Call) -> Val:
        func = node.func
        if self._split_function(func):
            return Val(PARSED)
        if self._rebuild_function(func):
            return Val(REBUILT)
        if isinstance(func, ast.Attribute):
            method = func.attr
            receiver = self.eval(func.value)
            if method == "geturl" and receiver.kind == PARSED:
                return Val(REBUILT)
            if method == "_replace" and receiver.kind == PARSED:
                return receiver
            if method in KIND_PRESERVING_METHODS and receiver.kind != PARSED:
                return self._after_method(receiver, method, node)
            return Val()
        first = _first_argument(node)
        if last_name(func) in KIND_PRESERVING_FUNCTIONS and first is not None:
            return self.eval(first)
        return Val()

    @staticmethod
    def _after_method(receiver: Val, method: str, node: ast.Call) -> Val:
        first = _first_argument(node)
        chars = _literal(first) if first is not None else None
        if method in ("rstrip", "strip", "removesuffix") and chars is not None and "/" in chars:
            return replace(receiver, slash_stripped=True, stripped_by=id(node))
        if method in ("lstrip", "strip", "removeprefix", "replace") and chars is not None and _guarantees_scheme(chars):
            return replace(receiver, scheme_stripped=True)
        return receiver

    @staticmethod
    def _eval_parts(values: Sequence[Val], texts: Sequence[str]) -> Val:
        """A concatenation or f-string: a whole URL when it holds the input or a path after
        "://"; a path when it holds a path part."""
        if any(v.kind == INPUT for v in values):
            return Val(INPUT)
        if any(v.kind == PATH for v in values):
            return Val(REBUILT) if any("://" in t for t in texts) else Val(PATH)
        return Val()


# -- helpers ---------------------------------------------------------------------------------

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_TRY_TYPES = tuple(t for t in (ast.Try, getattr(ast, "TryStar", None)) if t is not None)
# Pattern nodes (3.10+; empty tuples on 3.9, where isinstance() is then always False).
_NAMED_PATTERNS = tuple(t for t in (getattr(ast, "MatchAs", None), getattr(ast, "MatchStar", None)) if t is not None)
_MAPPING_PATTERN = tuple(t for t in (getattr(ast, "MatchMapping", None),) if t is not None)
_CLASS_PATTERN = tuple(t for t in (getattr(ast, "MatchClass", None),) if t is not None)




def _first_argument(call: ast.Call) -> Optional[ast.expr]:
    arguments = all_argument_values(call)
    return arguments[0] if arguments else None


def _argument_of(node: ast.expr, parent: Optional[ast.AST], outer: Optional[ast.AST]) -> Optional[ast.Call]:
    """The call ``node`` is an argument of (directly, ``*node`` or ``key=node``), else None."""
    if isinstance(parent, ast.Call) and node is not parent.func:
        return parent
    if isinstance(parent, ast.Starred) and isinstance(outer, ast.Call) and parent in outer.args:
        return outer
    if isinstance(parent, ast.keyword) and isinstance(outer, ast.Call):
        return outer
    return None


def _leading_or(node: ast.BoolOp) -> ast.AST:
    """``a or b`` of ``a or b or c``, positioned over its source (the innermost ``or`` reported)."""
    first, second = node.values[0], node.values[1]
    return _part_of(ast.BoolOp(op=node.op, values=[first, second], lineno=node.lineno, col_offset=node.col_offset,
                               end_lineno=second.end_lineno, end_col_offset=second.end_col_offset), node)


def _part_of(part: ast.AST, whole: ast.AST) -> ast.AST:
    """A node built over part of ``whole``'s source, which ``ast`` has no node for: it is
    reported at its own position when ``whole`` is the module's (positions.py
    reads ``keydrift_part_of``)."""
    part.keydrift_part_of = whole  # type: ignore[attr-defined]
    return part


def _text_part(node: ast.AST) -> Optional[str]:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


# Names that are read like ``Name`` nodes although ``ast`` keeps them as plain strings (a keyword
# argument's name, a parameter, ``except ... as name``, ``global name``, imports, patterns).
def _identifiers(node: ast.AST) -> Tuple[str, ...]:
    if isinstance(node, (ast.keyword, ast.ExceptHandler, *_NAMED_PATTERNS)):
        name = getattr(node, "arg", None) if isinstance(node, ast.keyword) else node.name  # type: ignore[attr-defined]
        return (name,) if name else ()
    if isinstance(node, ast.arg):
        return (node.arg,)
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return tuple(node.names)
    if isinstance(node, ast.alias):
        return tuple(node.name.split(".")[:1]) + ((node.asname,) if node.asname else ())
    if isinstance(node, ast.ImportFrom):
        return tuple(node.module.split(".")[:1]) if node.module else ()
    if isinstance(node, _MAPPING_PATTERN):
        return (node.rest,) if node.rest else ()  # type: ignore[attr-defined]
    if isinstance(node, _CLASS_PATTERN):
        return tuple(node.kwd_attrs)  # type: ignore[attr-defined]
    return ()


def _name_uses_after(body: Sequence[ast.stmt], statement: ast.AST, name: str) -> Iterator[Optional[ast.AST]]:
    """The parent of each load of ``name`` after ``statement`` in source order (until ``name``
    is assigned again), nested definitions skipped."""
    seen = False
    stack: List[Tuple[ast.AST, Optional[ast.AST]]] = [(s, None) for s in reversed(body)]
    while stack:
        node, parent = stack.pop()
        if node is statement:
            seen = True
            continue
        if isinstance(node, (*_DEFINITIONS, ast.Lambda)):
            continue
        if seen and isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for t in node.targets):
            yield from _name_loads(node.value, node, name)
            return
        if seen and isinstance(node, ast.Name) and node.id == name:
            yield parent
            continue
        if seen and name in _identifiers(node):
            yield node  # ``f(name=...)``, ``except E as name``: not a read of a path attribute
        if isinstance(node, ast.Attribute):
            stack.append((node.value, node))  # the attribute's name is not a load
            continue
        stack.extend((child, node) for child in reversed(source_order_children(node)))


def _name_loads(node: ast.AST, parent: ast.AST, name: str) -> Iterator[Optional[ast.AST]]:
    if isinstance(node, ast.Name) and node.id == name:
        yield parent
        return
    if isinstance(node, ast.Attribute):
        yield from _name_loads(node.value, node, name)
        return
    if name in _identifiers(node):
        yield node
    for child in source_order_children(node):
        yield from _name_loads(child, node, name)


def _only_slashes(text: str) -> bool:
    return bool(text) and not text.strip("/")


def _is_docstring(statement: ast.stmt) -> bool:
    """A first statement that is a string (a plain or concatenated string, bytes too;
    a lone f-string is no docstring)."""
    if not isinstance(statement, ast.Expr):
        return False
    value = statement.value
    if isinstance(value, ast.Constant):
        return isinstance(value.value, (str, bytes))
    return isinstance(value, ast.JoinedStr) and _concatenated(value) is not None


def _raises(body: Sequence[ast.stmt]) -> bool:
    return any(isinstance(statement, ast.Raise) for statement in body)


def _mentions(node: ast.AST, attributes: FrozenSet[str], names: Set[str]) -> bool:
    """Whether ``node`` reads one of ``attributes`` (``p.hostname``) or ``names`` (an attribute's,
    a keyword argument's and a parameter's name count too)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, ast.Attribute) and (current.attr in attributes or current.attr in names):
            return True
        if isinstance(current, ast.Name) and current.id in names:
            return True
        if names and any(n in names for n in _identifiers(current)):
            return True
        stack.extend(child_nodes(current))
    return False


def _is_host_read(node: ast.expr, host_names: Set[str]) -> bool:
    """``p.hostname`` / ``p.netloc`` / a name holding one."""
    if isinstance(node, ast.Attribute):
        return node.attr in HOST_READS
    return isinstance(node, ast.Name) and node.id in host_names


def _root_name(node: ast.expr) -> str:
    """``url.strip().lower()`` -> "url"."""
    while True:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            node = node.func.value
        elif isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        else:
            return node.id if isinstance(node, ast.Name) else ""


def _call_chain(node: ast.expr) -> Iterator[ast.expr]:
    """``a.rstrip("/").lower()`` -> the calls of the chain, outermost first."""
    while isinstance(node, ast.Call):
        yield node
        node = node.func.value if isinstance(node.func, ast.Attribute) else node.func


# -- implicitly concatenated strings -----------------------------------------------------------

@record
class _Piece:
    """One literal of an implicit concatenation: its value (None for an f-string), and for an
    f-string its own tree and the position of its source."""

    value: object
    fstring: Optional[ast.JoinedStr]
    position: Dict[str, int]


_FSTRING_START = getattr(tokenize, "FSTRING_START", -1)
_FSTRING_END = getattr(tokenize, "FSTRING_END", -1)


def _concatenated(node: ast.expr) -> Optional[List[_Piece]]:
    """The literals of ``"a" "b"`` / ``"https://" f"{host}"`` (``ast`` folds them into one node;
    each literal is read on its own), None for a single literal or without the source."""
    text = segment(node)
    if text is None or not isinstance(node, (ast.Constant, ast.JoinedStr)):
        return None
    wrapped = f"({text})"
    lines = io.StringIO(wrapped).readlines()  # the rows tokenize counts
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(wrapped).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    spans: List[Tuple[Tuple[int, int], Tuple[int, int]]] = []
    depth = 0
    for token in tokens:
        if token.type == _FSTRING_START:
            if depth == 0:
                spans.append((token.start, token.start))
            depth += 1
        elif token.type == _FSTRING_END:
            depth -= 1
            if depth == 0:
                spans[-1] = (spans[-1][0], token.end)
        elif token.type == tokenize.STRING and depth == 0:
            spans.append((token.start, token.end))
    if len(spans) < 2:
        return None
    pieces = []
    for start, end in spans:
        source = _between(lines, start, end)
        try:
            parsed = ast.parse(source.strip(), mode="eval").body
        except SyntaxError:
            return None
        position = {"lineno": node.lineno + start[0] - 1, "col_offset": _byte_column(node, lines, start),
                    "end_lineno": node.lineno + end[0] - 1, "end_col_offset": _byte_column(node, lines, end)}
        if isinstance(parsed, ast.JoinedStr):
            pieces.append(_Piece(None, parsed, position))
        else:
            pieces.append(_Piece(getattr(parsed, "value", None), None, position))
    return pieces


def _between(lines: Sequence[str], start: Tuple[int, int], end: Tuple[int, int]) -> str:
    if start[0] == end[0]:
        return lines[start[0] - 1][start[1]:end[1]]
    middle = "".join(lines[start[0]:end[0] - 1])
    return lines[start[0] - 1][start[1]:] + middle + lines[end[0] - 1][:end[1]]


def _byte_column(node: ast.expr, lines: Sequence[str], where: Tuple[int, int]) -> int:
    """The UTF-8 column in the module of a (row, character column) in ``(`` + the node's text."""
    row, column = where
    if row == 1:
        return node.col_offset + len(lines[0][1:column].encode("utf-8"))
    return len(lines[row - 1][:column].encode("utf-8"))


# -- entry point -----------------------------------------------------------------------------

_last: List[Tuple[object, List[Defect]]] = []


def normalizer_defects(facts: object) -> List[Defect]:
    """Every KD4 defect of ``facts.module``; the six KD4 rules share one walk (the result for
    the last module is kept)."""
    module = getattr(facts, "module")
    if _last and _last[0][0] is module:
        return _last[0][1]
    config: Config = getattr(facts, "config", None) or Config()
    defects: List[Defect] = []
    names: Optional[UrlParseNames] = None
    output_only: Optional[Set[str]] = None
    for qualified, node in normalizer_functions(module, config):
        if output_only is None:
            output_only = output_only_functions(module) if not config.normalizers else set()
        if node.name in output_only:
            continue  # its result is only logged or shown: it builds text, not a key
        if names is None:
            names = url_parse_names(module)
        found = NormalizerReader(qualified, node, names).run()
        defects.extend(d for d in found if not (d.code == KD407 and d.detail
                                                and _callers_test_hostname(module, node.name)))
    defects.extend(_stripped_results(module, config, names or url_parse_names(module)))
    _last[:] = [(module, defects)]
    return defects


# ``request.path`` of the request a view serves (Django, Flask, Starlette's ``url.path`` aside).
REQUEST_OBJECTS = frozenset({"request", "req", "self.request"})
REQUEST_PATH_ATTRIBUTES = frozenset({"path", "path_info"})


class ResultReader(NormalizerReader):
    """KD403 outside normalizers: a function that stores or looks up keys and strips trailing
    slashes off a normalizer's result (``key = normalize_path(p).rstrip("/")``) or off a path
    it was given (``def serve(path): Page.objects.get(path=path.rstrip("/"))``, the request's
    ``request.path``) loses the
    root as a normalizer would. Only its KD403 defects are kept."""

    def __init__(self, qualified: str, node: FunctionNode, names: UrlParseNames, config: Config) -> None:
        super().__init__(qualified, node, names)
        self.config = config

    def _bind_inputs(self) -> None:
        """A parameter named for a path holds a path (the key of a record looked up or stored
        by path); its other parameters are not a normalizer's input."""
        params = list(parameter_names(self.function))
        for name in params[1:] if params and params[0] in ("self", "cls") else params:
            words = set(name_words(name))
            if words & PATH_WORDS and not words & URL_WORDS:
                self.env[name] = Val(PATH)

    def _eval_call(self, node: ast.Call) -> Val:
        if is_normalizer_name(last_name(node.func), self.config):
            return Val(PATH)
        return super()._eval_call(node)

    def eval(self, node: ast.expr) -> Val:
        if isinstance(node, ast.Attribute) and node.attr in REQUEST_PATH_ATTRIBUTES \
                and dotted_name(node.value) in REQUEST_OBJECTS:
            return Val(PATH)  # the path a view serves: "/" for the home page
        return super().eval(node)

    def run(self) -> List[Defect]:
        return [d for d in super().run() if d.code == KD403]


def _stripped_results(module: ast.Module, config: Config, names: UrlParseNames) -> Iterator[Defect]:
    lines = tree.current_source_lines()
    if not _may_call_rstrip(lines):
        return
    previous: Optional[Dict[ast.stmt, Optional[ast.stmt]]] = None
    for qualified, node in qualified_functions(module.body, ""):
        if is_normalizer(node.name, config) or not _may_call_rstrip(_function_lines(node, lines)) \
                or not _strips_slash(node):
            continue
        text = _definition_text(node)
        if not mentions_database(text):
            if previous is None:
                previous = _previous_statements(module)
            text = _leading_comments(node, previous, module) + text
        if mentions_database(text):
            yield from ResultReader(qualified, node, names, config).run()


def _definition_text(function: FunctionNode) -> str:
    """The function's source on one line, as the definition's text: its decorators (and
    comments between them), the comment after its last line and its block's footer included."""
    lines = tree.current_source_lines()
    text = segment(function)
    if lines is None or text is None:
        return code(function)
    first = min([function.lineno] + [d.lineno for d in function.decorator_list])
    head = " ".join(lines[first - 1:function.lineno - 1])  # before ``def`` on its line: indentation only
    last = function.end_lineno or function.lineno
    tail = lines[last - 1].encode("utf-8")[function.end_col_offset:].decode("utf-8", "replace")
    indent = _block_indent(function.body, lines)
    if indent is not None:  # the footer: comment lines up to the last one indented into the body
        end = last
        while end < len(lines) and (not lines[end].strip() or lines[end].lstrip().startswith("#")):
            end += 1
        footer = [i for i in range(last, end) if len(lines[i]) - len(lines[i].lstrip(" \t")) >= indent]
        tail += " " + " ".join(lines[last:footer[-1] + 1]) if footer else ""
    return " ".join(f"{head} {text}{tail}".split())


def _leading_comments(function: FunctionNode, previous: Dict[ast.stmt, Optional[ast.stmt]],
                      module: ast.Module) -> str:
    """The comment lines just above a definition that belong to it: not
    those at the top of the module (its header), nor those up to the last one indented into
    the block that ends before them (that block's footer)."""
    lines = tree.current_source_lines()
    if lines is None or (module.body and module.body[0] is function):
        return ""
    end = min([function.lineno] + [d.lineno for d in function.decorator_list]) - 1
    start = end
    while start > 0 and (not lines[start - 1].strip() or lines[start - 1].lstrip().startswith("#")):
        start -= 1
    sibling = previous.get(function)
    block = _last_block(sibling) if sibling is not None else None
    indent = _block_indent(block, lines) if block else None
    if indent is not None:
        footer = [i for i in range(start, end) if len(lines[i]) - len(lines[i].lstrip(" \t")) >= indent]
        start = footer[-1] + 1 if footer else start
    return " ".join(" ".join(lines[start:end]).split()) + " "


def _previous_statements(module: ast.Module) -> Dict[ast.stmt, Optional[ast.stmt]]:
    """Each statement's previous statement in its block (None for the first)."""
    previous: Dict[ast.stmt, Optional[ast.stmt]] = {}
    blocks: List[List[ast.stmt]] = [module.body]
    while blocks:
        block = blocks.pop()
        for index, statement in enumerate(block):
            previous[statement] = block[index - 1] if index else None
            blocks.extend(_blocks(statement))
    return previous


def _blocks(statement: ast.AST) -> List[List[ast.stmt]]:
    found = [getattr(statement, f, None) for f in ("body", "orelse", "finalbody")]
    found += [h.body for h in getattr(statement, "handlers", ())]
    found += [c.body for c in getattr(statement, "cases", ())]
    return [b for b in found if isinstance(b, list) and b and isinstance(b[0], ast.stmt)]


def _last_block(statement: ast.stmt) -> Optional[List[ast.stmt]]:
    """The block a compound statement ends with (an ``elif``'s for an ``if``)."""
    blocks = _blocks(statement)
    if not blocks:
        return None
    last = max(blocks, key=lambda b: (b[-1].end_lineno or 0, b[-1].end_col_offset or 0))
    if isinstance(statement, ast.If) and last is statement.orelse and len(last) == 1 \
            and isinstance(last[0], ast.If) and last[0].col_offset == statement.col_offset \
            and last[0].lineno != statement.lineno:
        return _last_block(last[0])  # elif
    return last


def _block_indent(block: List[ast.stmt], lines: Sequence[str]) -> Optional[int]:
    """The indentation of an indented block; None for a block on its header's line."""
    line = lines[block[0].lineno - 1]
    before = line.encode("utf-8")[:block[0].col_offset].decode("utf-8", "replace")
    return len(before) if not before.strip() else None


def _may_call_rstrip(lines: Optional[Sequence[str]]) -> bool:
    """False when no function can call ``rstrip``: the module's text (ASCII, so no identifier
    is spelled otherwise and normalized to it) never says it. Looking costs far less than
    walking every function."""
    return lines is None or any("rstrip" in line or not line.isascii() for line in lines)


def _function_lines(function: FunctionNode, lines: Optional[Sequence[str]]) -> Optional[Sequence[str]]:
    """The lines the function is written on (None without the module's lines, or when its
    positions do not fit them): most functions of a module that calls ``rstrip`` somewhere
    never do, and their text says so for less than a walk of their bodies."""
    end = getattr(function, "end_lineno", None)
    if lines is None or end is None or end > len(lines):
        return None
    return lines[function.lineno - 1:end]


def _strips_slash(function: FunctionNode) -> bool:
    stack: List[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Call) and last_name(node.func) == "rstrip":
            first = _first_argument(node)
            if first is not None and "/" in (_literal(first) or ""):
                return True
        stack.extend(child_nodes(node))
    return False


def _callers_test_hostname(module: ast.Module, name: str) -> bool:
    """Whether ``name`` is called in the module, and every call comes after a test of a
    hostname in the calling function (``if uri.hostname is None: return uri``)."""
    verdicts: List[bool] = []
    for function in _all_functions(module.body):
        verdicts.extend(_calls_after_host_test(function, name))
    return bool(verdicts) and all(verdicts)


def _all_functions(body: Sequence[ast.stmt]) -> Iterator[FunctionNode]:
    for node in body:
        if isinstance(node, FUNCTION_TYPES):
            yield node
        elif isinstance(node, ast.ClassDef):
            yield from _all_functions(node.body)


def _calls_after_host_test(function: FunctionNode, name: str) -> Iterator[bool]:
    """For each call of ``name`` in ``function`` (source order): was a hostname tested before?"""
    tested = False
    stack: List[ast.AST] = list(reversed(function.body))
    while stack:
        node = stack.pop()
        if isinstance(node, (*_DEFINITIONS, ast.Lambda)):
            continue
        test = getattr(node, "test", None)
        if isinstance(node, (ast.If, ast.IfExp, ast.While, ast.Assert)) and test is not None \
                and _mentions(test, frozenset({"hostname"}), set()):
            tested = True
        if isinstance(node, ast.Call) and last_name(node.func) == name:
            yield tested
        stack.extend(reversed(source_order_children(node)))


def defects_of(facts: object, code_: str) -> Iterator[Defect]:
    for defect in normalizer_defects(facts):
        if defect.code == code_:
            yield defect


# -- messages ---------------------------------------------------------------------------------

def short_text(text: str, limit: int = 50) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def function_label(defect: Defect) -> str:
    return f"{defect.function}()"
