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

import re
from dataclasses import dataclass, replace
from typing import Dict, FrozenSet, Iterator, List, Optional, Sequence, Set, Tuple

import libcst as cst

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
    suite as _suite,
    url_parse_names,
    words as name_words,
)
from keydrift.analysis.tree import string_literal as _literal
from keydrift.analysis.values import code, dotted_name, last_name
from keydrift.types import Config
from keydrift.vocabulary import DATABASE_VOCABULARY

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


@dataclass(frozen=True)
class Val:
    kind: str = OTHER
    parse_part: bool = False  # a part of a parse result (``parts.path``): rebuilt next to its host
    slash_stripped: bool = False  # rstrip("/")/removesuffix("/") applied: appending "/" is idempotent
    stripped_by: int = 0  # id() of that rstrip call: appending "/" afterwards also restores the root
    scheme_stripped: bool = False  # removeprefix("https://")/lstrip("http://"): prefixing one is idempotent


@dataclass(frozen=True)
class Defect:
    code: str
    function: str  # qualified name of the normalizer
    node: cst.CSTNode
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

    def __init__(self, qualified: str, node: cst.FunctionDef, names: UrlParseNames) -> None:
        self.qualified = qualified
        self.function = node
        self.names = names
        self.env: Dict[str, Val] = {}
        self.ancestors: List[cst.CSTNode] = []
        self.defects: List[Defect] = []
        # facts gathered while walking, in source order
        self.scheme_guarded = False  # a "://" literal or an input validation seen so far
        self.prefix_guarded = False  # an if-test on startswith/"://"/scheme seen so far
        self.append_guarded = False  # an if-test on endswith/"/" seen so far
        self.root_restored = False  # `or "/"`, `x = "/"`, `"/" if ... else ...` anywhere
        self.host_checked = False  # an if-test on the host that raises, or an assert
        self.scheme_handled_after: List[int] = []  # order indexes of if-tests on .scheme/.netloc
        self.order = 0
        self.pending_splits: List[Tuple[int, cst.Call]] = []
        self.pending_fallbacks: List[cst.CSTNode] = []
        self.pending_rstrips: List[Tuple[cst.Call, Val]] = []  # (call, what it strips)
        self.safe_rstrips: Set[int] = set()
        self.host_names: Set[str] = set()
        self.rebuilds = False  # the URL is put back together (urlunsplit, geturl, _replace)
        # KD407: names holding ``parts.hostname`` (None when the URL has no host)
        self.none_hosts: Set[str] = set()
        self.none_host_tested = False  # a test on the hostname seen so far
        self.pending_none_calls: List[Tuple[cst.Call, str]] = []  # (call, parameter it came from or "")
        self.none_host_params: Dict[str, str] = {}  # name holding a hostname -> its parameter

    # -- setup ----------------------------------------------------------------------------------

    def run(self) -> List[Defect]:
        self._bind_inputs()
        body = self.function.body
        statements = list(_suite(body)) if isinstance(body, cst.IndentedBlock) else [body]
        if statements and _is_docstring(statements[0]):
            statements = statements[1:]
        for statement in statements:
            self._walk(statement)
        self._finish()
        return self.defects

    def _bind_inputs(self) -> None:
        signature = self.function.params
        params = [p.name.value for p in (*signature.posonly_params, *signature.params, *signature.kwonly_params)]
        if params and params[0] in ("self", "cls"):
            params = params[1:]
        if not params:
            return
        function_words = set(name_words(self.function.name.value))
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
        stack: List[cst.CSTNode] = [self.function.body]
        while stack:
            node = stack.pop()
            if isinstance(node, cst.Call) and self._split_function(node.func) and node.args:
                if _root_name(node.args[0].value) in params:
                    return True
            if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
                continue
            stack.extend(node.children)
        return False

    def _split_function(self, func: cst.BaseExpression) -> str:
        """"urlsplit"/"urlparse" when ``func`` is urllib's, else ""."""
        if isinstance(func, cst.Name):
            name = self.names.functions.get(func.value)
            if name is not None:
                return name if name in SPLIT_FUNCTIONS else ""
            unbound = func.value not in self.names.foreign  # a star import, most likely
            return func.value if func.value in SPLIT_FUNCTIONS and unbound else ""
        if isinstance(func, cst.Attribute) and func.attr.value in SPLIT_FUNCTIONS:
            owner = dotted_name(func.value)
            return func.attr.value if owner in self.names.modules or owner in URL_PARSE_MODULES else ""
        return ""

    def _rebuild_function(self, func: cst.BaseExpression) -> bool:
        name = last_name(func)
        if isinstance(func, cst.Name):
            name = self.names.functions.get(name, name)
        return name in REBUILD_FUNCTIONS

    # -- walking --------------------------------------------------------------------------------

    def _walk(self, node: cst.CSTNode) -> None:
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            return  # nested definitions are other functions
        self.order += 1
        self._enter(node)
        self.ancestors.append(node)
        for child in node.children:
            self._walk(child)
        self.ancestors.pop()
        self._leave(node)

    def _enter(self, node: cst.CSTNode) -> None:
        test = getattr(node, "test", None)
        if isinstance(node, (cst.If, cst.IfExp, cst.While, cst.Assert)) and test is not None:
            self._none_host_test(test)
        elif isinstance(node, cst.BooleanOperation):
            self._none_host_test(node.left)
        elif isinstance(node, (cst.Try, cst.TryStar)) and node.handlers:
            self.none_host_tested = True  # an AttributeError is caught somewhere: not our call
        if isinstance(node, cst.If):
            self._if_test(node.test, node.body)
        elif isinstance(node, cst.IfExp):
            self._if_test(node.test, None)
            for branch in (node.body, node.orelse):
                if _literal(branch) == "/":
                    self.root_restored = True
        elif isinstance(node, cst.Assert):
            if _mentions(node.test, HOST_ATTRIBUTES, self.host_names):
                self.host_checked = True
        elif isinstance(node, cst.BooleanOperation):
            self._boolean(node)
        elif isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
            self._string(node)

    def _leave(self, node: cst.CSTNode) -> None:
        if isinstance(node, cst.Call):
            self._call(node)
        elif isinstance(node, cst.BinaryOperation):
            self._binary(node)
        elif isinstance(node, cst.FormattedString):
            self._fstring(node)
        elif isinstance(node, cst.Assign):
            for target in node.targets:
                self._assign(target.target, node.value)
        elif isinstance(node, cst.AnnAssign) and node.value is not None:
            self._assign(node.target, node.value)
        elif isinstance(node, cst.AugAssign):
            self._augmented(node)

    # -- facts -----------------------------------------------------------------------------------

    def _if_test(self, test: cst.BaseExpression, body: Optional[cst.BaseSuite]) -> None:
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

    def _string(self, node: cst.BaseExpression) -> None:
        value = _literal(node)
        if value is not None and _guarantees_scheme(value) and not self._in_docstring_like():
            self.scheme_guarded = True

    def _in_docstring_like(self) -> bool:
        return bool(self.ancestors) and isinstance(self.ancestors[-1], cst.Expr)

    def _boolean(self, node: cst.BooleanOperation) -> None:
        if not isinstance(node.operator, cst.Or):
            return
        right = _literal(node.right)
        if right == "/":
            self.root_restored = True
            self.safe_rstrips.update(id(n) for n in _call_chain(node.left))
        elif right is not None and _is_host_read(node.left, self.host_names):
            self.pending_fallbacks.append(node)

    def _none_host_test(self, test: cst.BaseExpression) -> None:
        """``if not parts.hostname``, ``if host is None``, ``host and host.lower()``."""
        if _mentions(test, frozenset({"hostname"}), self.none_hosts):
            self.none_host_tested = True

    def _none_host(self, node: cst.BaseExpression) -> Optional[str]:
        """For ``parts.hostname`` (or a name holding it): the parameter the parse result came
        from ("" when parsed here); None when ``node`` is no hostname."""
        if isinstance(node, cst.Name) and node.value in self.none_hosts:
            return self.none_host_params.get(node.value, "")
        if not (isinstance(node, cst.Attribute) and node.attr.value == "hostname"):
            return None
        if self.eval(node.value).kind == PARSED:
            return ""
        owner = node.value
        if isinstance(owner, cst.Name) and owner.value in self._parameters():
            return owner.value  # a parse result handed in by the caller (a str has no .hostname)
        return None

    def _parameters(self) -> List[str]:
        signature = self.function.params
        names = [p.name.value for p in (*signature.posonly_params, *signature.params, *signature.kwonly_params)]
        return [n for n in names if n not in ("self", "cls")]

    def _call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and not self.none_host_tested:
            origin = self._none_host(node.func.value)
            if origin is not None:
                self.pending_none_calls.append((node, origin))
        if self._rebuild_function(node.func) or last_name(node.func) in ("geturl", "_replace"):
            self.rebuilds = True
        split = self._split_function(node.func)
        if split and node.args:
            self._split_call(node)
            return
        name = last_name(node.func)
        if name == "getattr" and len(node.args) == 3 and _literal(node.args[1].value) in HOST_READS:
            self.pending_fallbacks.append(node)
        if not isinstance(node.func, cst.Attribute):
            return
        receiver = self.eval(node.func.value)
        args = [_literal(a.value) for a in node.args]
        if name in STRIP_METHODS and args and args[0] is not None:
            self._strip_call(node, name, args[0], receiver)
        elif name in CASE_METHODS and receiver.kind in (INPUT, REBUILT) and self._lowers_whole_url(node):
            self._add(KD405, node)

    def _split_call(self, node: cst.Call) -> None:
        arg = self.eval(node.args[0].value)
        probe = bool(self.ancestors) and isinstance(self.ancestors[-1], cst.Attribute) \
            and self.ancestors[-1].attr.value == "scheme"
        if arg.kind == INPUT and not self.scheme_guarded and not probe and not self._path_only_parse(node):
            self.pending_splits.append((self.order, node))

    def _path_only_parse(self, call: cst.Call) -> bool:
        """``urlparse(url).path``, or ``parts = urlparse(url)`` read only as ``parts.path``/
        ``.query``/``.params``/``.fragment``: the normalizer keeps the path of its input and
        never uses a host, so a missing scheme cannot leave a host uncanonicalized."""
        parent = self.ancestors[-1] if self.ancestors else None
        if self._round_trip(call):
            return True
        if isinstance(parent, cst.Attribute) and parent.value is call:
            return parent.attr.value in PATH_ATTRIBUTES
        if not (isinstance(parent, cst.Assign) and parent.value is call and len(parent.targets) == 1
                and isinstance(parent.targets[0].target, cst.Name)):
            return False
        name = parent.targets[0].target.value
        uses = list(_name_uses_after(self.function.body, parent, name))
        return bool(uses) and all(isinstance(up, cst.Attribute) and up.attr.value in PATH_ATTRIBUTES
                                  for up in uses)

    def _round_trip(self, call: cst.Call) -> bool:
        """``urlunparse(urlparse(url))``, ``urlparse(url).geturl()``,
        ``urlparse(path)._replace(query="").geturl()``: the parse result goes back together
        without its host being read or changed, so input without a scheme comes back as it was."""
        parent = self.ancestors[-1] if self.ancestors else None
        outer = self.ancestors[-2] if len(self.ancestors) > 1 else None
        if isinstance(parent, cst.Arg) and isinstance(outer, cst.Call) and outer.args \
                and outer.args[0] is parent:
            return self._rebuild_function(outer.func)
        if not (isinstance(parent, cst.Attribute) and parent.value is call):
            return False
        if parent.attr.value == "geturl":
            return True
        return parent.attr.value == "_replace" and isinstance(outer, cst.Call) and not any(
            a.keyword is not None and a.keyword.value in HOST_ATTRIBUTES for a in outer.args)

    def _strip_call(self, node: cst.Call, name: str, chars: str, receiver: Val) -> None:
        if looks_like_word(chars):
            self._add(KD404, node)
        elif name == "rstrip" and "/" in chars and receiver.kind in (INPUT, PATH, REBUILT):
            if not self._guarded_by_root_test():
                self.pending_rstrips.append((node, receiver))

    def _guarded_by_root_test(self) -> bool:
        """Inside ``if path != "/"`` / ``if len(path) > 1``: the root is never stripped."""
        for ancestor in self.ancestors:
            if isinstance(ancestor, (cst.If, cst.IfExp)):
                text = code(ancestor.test)
                if '"/"' in text or "'/'" in text or "len(" in text:
                    return True
        return False

    def _lowers_whole_url(self, node: cst.Call) -> bool:
        """Not when lowered only to read the host, or only to be compared or tested."""
        return not self._in_host_read() and not self._in_test(node)

    def _in_host_read(self) -> bool:
        """Inside the argument of ``urlsplit(...).hostname`` (or .netloc/.scheme)."""
        for outer, inner in zip(self.ancestors, self.ancestors[1:]):
            if (isinstance(outer, cst.Attribute) and outer.attr.value in HOST_ATTRIBUTES
                    and inner is outer.value and isinstance(inner, cst.Call) and self._split_function(inner.func)):
                return True
        return False

    def _in_test(self, node: cst.CSTNode) -> bool:
        chain = self.ancestors + [node]
        for ancestor, child in zip(chain, chain[1:]):
            if isinstance(ancestor, cst.Comparison):
                return True
            if isinstance(ancestor, (cst.If, cst.IfExp, cst.While, cst.Assert)) and child is ancestor.test:
                return True
        return False

    def _binary(self, node: cst.BinaryOperation) -> None:
        if not isinstance(node.operator, cst.Add):
            return
        left, right = _literal(node.left), _literal(node.right)
        if right is not None and _only_slashes(right):
            self._append(node, self.eval(node.left))
            if isinstance(node.left, cst.Call):
                self.safe_rstrips.add(id(node.left))
        elif left is not None and "://" in left:
            self._prefix(node, self.eval(node.right))
        elif left is not None and _only_slashes(left) and self.pending_rstrips \
                and self.eval(node.right).kind in (INPUT, PATH, REBUILT):
            self.root_restored = True  # "/" + path.lstrip("/") after the rstrip: never empty

    def _fstring(self, node: cst.FormattedString) -> None:
        """``f"https://{url}"`` prefixes a scheme; ``f"{path}/"`` appends a slash."""
        parts = list(node.parts)
        for index, part in enumerate(parts):
            if not isinstance(part, cst.FormattedStringExpression):
                continue
            before = parts[index - 1] if index else None
            after = parts[index + 1] if index + 1 < len(parts) else None
            value = self.eval(part.expression)
            if index == 1 and isinstance(before, cst.FormattedStringText) and "://" in before.value:
                self._prefix(node, value)
            if index == 1 and isinstance(before, cst.FormattedStringText) and _only_slashes(before.value) \
                    and self.pending_rstrips and value.kind in (INPUT, PATH, REBUILT):
                self.root_restored = True  # f"/{path.lstrip('/')}": never empty
            if index + 2 == len(parts) and isinstance(after, cst.FormattedStringText) and _only_slashes(after.value):
                self._append(node, value)

    def _prefix(self, node: cst.CSTNode, value: Val) -> None:
        if value.kind == INPUT and not value.scheme_stripped and not self.prefix_guarded and not self._conditional():
            self._add(KD406, node, PREFIX)

    def _append(self, node: cst.CSTNode, value: Val) -> None:
        if value.slash_stripped:
            self.safe_rstrips.add(value.stripped_by)
        if value.kind in (INPUT, PATH, REBUILT) and not value.slash_stripped \
                and not self.append_guarded and not self._conditional():
            self._add(KD406, node, APPEND)

    def _conditional(self) -> bool:
        return any(isinstance(a, (cst.If, cst.IfExp, cst.While)) for a in self.ancestors)

    def _augmented(self, node: cst.AugAssign) -> None:
        if isinstance(node.operator, cst.AddAssign) and isinstance(node.target, cst.Name):
            suffix = _literal(node.value)
            if suffix is not None and _only_slashes(suffix):
                self._append(node, self.eval(node.target))

    def _assign(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if _literal(value) == "/":
            self.root_restored = True
        if isinstance(target, cst.Name):
            origin = self._none_host(value)
            if origin is not None:
                self.none_hosts.add(target.value)
                self.none_host_params[target.value] = origin
            else:
                self.none_hosts.discard(target.value)
            evaluated = self.eval(value)
            self.env[target.value] = evaluated
            if _mentions(value, HOST_READS, self.host_names):
                self.host_names.add(target.value)
            else:
                self.host_names.discard(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            kind = self.eval(value).kind
            for index, element in enumerate(target.elements):
                if isinstance(element.value, cst.Name):
                    part = OTHER
                    if kind == PARSED:
                        part = SPLIT_TUPLE_KINDS[index] if index < len(SPLIT_TUPLE_KINDS) else PATH
                    self.env[element.value.value] = Val(part)
                    if part == HOST and index == 1:
                        self.host_names.add(element.value.value)

    def _add(self, code_: str, node: cst.CSTNode, detail: str = "") -> None:
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

    def eval(self, node: cst.BaseExpression) -> Val:
        if isinstance(node, cst.Name):
            return self.env.get(node.value, Val())
        if isinstance(node, cst.Attribute):
            base = self.eval(node.value)
            if base.kind == PARSED:
                if node.attr.value in HOST_ATTRIBUTES:
                    return Val(HOST)
                if node.attr.value in PATH_ATTRIBUTES:
                    return Val(PATH, parse_part=True)
            return Val()
        if isinstance(node, cst.Call):
            return self._eval_call(node)
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
            sides = (node.left, node.right)
            return self._eval_parts([self.eval(p) for p in sides], [_literal(p) or "" for p in sides])
        if isinstance(node, cst.FormattedString):
            return self._eval_parts(
                [self.eval(p.expression) for p in node.parts if isinstance(p, cst.FormattedStringExpression)],
                [p.value for p in node.parts if isinstance(p, cst.FormattedStringText)])
        if isinstance(node, cst.BooleanOperation):
            left = self.eval(node.left)
            return left if left.kind != OTHER else self.eval(node.right)
        if isinstance(node, cst.IfExp):
            body = self.eval(node.body)
            return body if body.kind != OTHER else self.eval(node.orelse)
        if isinstance(node, cst.Await):
            return self.eval(node.expression)
        return Val()

    def _eval_call(self, node: cst.Call) -> Val:
        func = node.func
        if self._split_function(func):
            return Val(PARSED)
        if self._rebuild_function(func):
            return Val(REBUILT)
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            receiver = self.eval(func.value)
            if method == "geturl" and receiver.kind == PARSED:
                return Val(REBUILT)
            if method == "_replace" and receiver.kind == PARSED:
                return receiver
            if method in KIND_PRESERVING_METHODS and receiver.kind != PARSED:
                return self._after_method(receiver, method, node)
            return Val()
        if last_name(func) in KIND_PRESERVING_FUNCTIONS and node.args:
            return self.eval(node.args[0].value)
        return Val()

    @staticmethod
    def _after_method(receiver: Val, method: str, node: cst.Call) -> Val:
        chars = _literal(node.args[0].value) if node.args else None
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

def _name_uses_after(body: cst.CSTNode, statement: cst.CSTNode, name: str) -> Iterator[Optional[cst.CSTNode]]:
    """The parent of each load of ``name`` after ``statement`` in source order (until ``name``
    is assigned again), nested definitions skipped."""
    seen = False
    stack: List[Tuple[cst.CSTNode, Optional[cst.CSTNode]]] = [(body, None)]
    while stack:
        node, parent = stack.pop()
        if node is statement:
            seen = True
            continue
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)) and node is not body:
            continue
        if seen and isinstance(node, cst.Assign) and any(
                isinstance(t.target, cst.Name) and t.target.value == name for t in node.targets):
            yield from _name_loads(node.value, node, name)
            return
        if seen and isinstance(node, cst.Name) and node.value == name:
            yield parent
            continue
        if isinstance(node, cst.Attribute):
            stack.append((node.value, node))  # the attribute's name is not a load
            continue
        stack.extend((child, node) for child in reversed(node.children))


def _name_loads(node: cst.CSTNode, parent: cst.CSTNode, name: str) -> Iterator[Optional[cst.CSTNode]]:
    if isinstance(node, cst.Name) and node.value == name:
        yield parent
        return
    if isinstance(node, cst.Attribute):
        yield from _name_loads(node.value, node, name)
        return
    for child in node.children:
        yield from _name_loads(child, node, name)


def _only_slashes(text: str) -> bool:
    return bool(text) and not text.strip("/")


def _is_docstring(statement: cst.CSTNode) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Expr)
            and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))


def _raises(body: cst.BaseSuite) -> bool:
    statements = _suite(body) if isinstance(body, cst.IndentedBlock) else [body]
    for statement in statements:
        smalls = statement.body if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else ()
        if any(isinstance(s, cst.Raise) for s in smalls):
            return True
    return False


def _mentions(node: cst.CSTNode, attributes: FrozenSet[str], names: Set[str]) -> bool:
    """Whether ``node`` reads one of ``attributes`` (``p.hostname``) or ``names``."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Attribute) and current.attr.value in attributes:
            return True
        if isinstance(current, cst.Name) and current.value in names:
            return True
        stack.extend(current.children)
    return False


def _is_host_read(node: cst.BaseExpression, host_names: Set[str]) -> bool:
    """``p.hostname`` / ``p.netloc`` / a name holding one."""
    if isinstance(node, cst.Attribute):
        return node.attr.value in HOST_READS
    return isinstance(node, cst.Name) and node.value in host_names


def _root_name(node: cst.BaseExpression) -> str:
    """``url.strip().lower()`` -> "url"."""
    while True:
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            node = node.func.value
        elif isinstance(node, (cst.Attribute, cst.Subscript)):
            node = node.value
        else:
            return node.value if isinstance(node, cst.Name) else ""


def _call_chain(node: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    """``a.rstrip("/").lower()`` -> the calls of the chain, outermost first."""
    while isinstance(node, cst.Call):
        yield node
        node = node.func.value if isinstance(node.func, cst.Attribute) else node.func


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
        if node.name.value in output_only:
            continue  # its result is only logged or shown: it builds text, not a key
        if names is None:
            names = url_parse_names(module)
        found = NormalizerReader(qualified, node, names).run()
        defects.extend(d for d in found if not (d.code == KD407 and d.detail
                                                and _callers_test_hostname(module, node.name.value)))
    defects.extend(_stripped_results(module, config, names or url_parse_names(module)))
    _last[:] = [(module, defects)]
    return defects


class ResultReader(NormalizerReader):
    """KD403 outside normalizers: a function that stores or looks up keys and strips trailing
    slashes off a normalizer's result (``key = normalize_path(p).rstrip("/")``) loses the
    root as a normalizer would. Only its KD403 defects are kept."""

    def __init__(self, qualified: str, node: cst.FunctionDef, names: UrlParseNames, config: Config) -> None:
        super().__init__(qualified, node, names)
        self.config = config

    def _bind_inputs(self) -> None:
        return None  # its parameters are not a normalizer's input

    def _eval_call(self, node: cst.Call) -> Val:
        if is_normalizer_name(last_name(node.func), self.config):
            return Val(PATH)
        return super()._eval_call(node)

    def run(self) -> List[Defect]:
        return [d for d in super().run() if d.code == KD403]


def _stripped_results(module: cst.Module, config: Config, names: UrlParseNames) -> Iterator[Defect]:
    for qualified, node in qualified_functions(module.body, ""):
        if is_normalizer(node.name.value, config) or not _strips_slash(node):
            continue
        if DATABASE_VOCABULARY.search(code(node)):
            yield from ResultReader(qualified, node, names, config).run()


def _strips_slash(function: cst.FunctionDef) -> bool:
    stack: List[cst.CSTNode] = [function.body]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Call) and last_name(node.func) == "rstrip" and node.args \
                and "/" in (_literal(node.args[0].value) or ""):
            return True
        stack.extend(node.children)
    return False


def _callers_test_hostname(module: cst.Module, name: str) -> bool:
    """Whether ``name`` is called in the module, and every call comes after a test of a
    hostname in the calling function (``if uri.hostname is None: return uri``)."""
    verdicts: List[bool] = []
    for function in _all_functions(module.body):
        verdicts.extend(_calls_after_host_test(function, name))
    return bool(verdicts) and all(verdicts)


def _all_functions(body: Sequence[cst.CSTNode]) -> Iterator[cst.FunctionDef]:
    for node in body:
        if isinstance(node, cst.FunctionDef):
            yield node
        elif isinstance(node, cst.ClassDef):
            yield from _all_functions(_suite(node.body))


def _calls_after_host_test(function: cst.FunctionDef, name: str) -> Iterator[bool]:
    """For each call of ``name`` in ``function`` (source order): was a hostname tested before?"""
    tested = False
    stack: List[cst.CSTNode] = [function.body]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        test = getattr(node, "test", None)
        if isinstance(node, (cst.If, cst.IfExp, cst.While, cst.Assert)) and test is not None \
                and _mentions(test, frozenset({"hostname"}), set()):
            tested = True
        if isinstance(node, cst.Call) and last_name(node.func) == name:
            yield tested
        stack.extend(reversed(node.children))


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
