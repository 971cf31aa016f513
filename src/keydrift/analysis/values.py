"""Symbolic evaluation of expressions into key ``Value``s: origins plus transformation steps."""

from __future__ import annotations

import re
from typing import Callable, Dict, Iterable, List, Optional, Sequence

import libcst as cst

from keydrift.analysis.facts import (
    CALL,
    FETCH,
    FORMAT,
    IDNA,
    NORMALIZER,
    PART,
    REDERIVED,
    REMOTE,
    SLASH,
    Step,
    Value,
)
from keydrift.frameworks import transforms
from keydrift.frameworks.schema import natural_key_kind

_EMPTY_MODULE = cst.Module(body=[])
_MAX_LABEL = 48


def code(node: cst.CSTNode) -> str:
    """The node's source text on one line. Common expression shapes are rendered directly:
    libcst's code generator costs as much as the parse when called for every value."""
    text = _render(node)
    if text is None:
        text = " ".join(_EMPTY_MODULE.code_for_node(node).split())
    return text


def _render(node: cst.CSTNode) -> Optional[str]:
    if node.lpar if isinstance(node, cst.BaseExpression) else False:  # type: ignore[attr-defined]
        return None
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, (cst.SimpleString, cst.Integer, cst.Float)):
        return node.value
    if isinstance(node, cst.Attribute):
        base = _render(node.value)
        return None if base is None else f"{base}.{node.attr.value}"
    if isinstance(node, cst.Subscript):
        base = _render(node.value)
        parts = [_render(e.slice.value) if isinstance(e.slice, cst.Index) and not e.slice.star else None
                 for e in node.slice]
        if base is None or any(p is None for p in parts):
            return None
        return f"{base}[{', '.join(parts)}]"  # type: ignore[arg-type]
    if isinstance(node, cst.Call):
        func = _render(node.func)
        args = [_render_arg(a) for a in node.args]
        if func is None or any(a is None for a in args):
            return None
        return f"{func}({', '.join(args)})"  # type: ignore[arg-type]
    return None


def _render_arg(arg: cst.Arg) -> Optional[str]:
    value = _render(arg.value)
    if value is None:
        return None
    if arg.keyword is not None:
        return f"{arg.keyword.value}={value}"
    return f"{arg.star}{value}"


def dotted_name(node: cst.BaseExpression) -> str:
    """``a.b.c`` for a Name/Attribute chain, else ""."""
    parts: List[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return ".".join(reversed(parts))
    return ""


def last_name(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Attribute):
        return node.attr.value
    if isinstance(node, cst.Name):
        return node.value
    return ""


def constant(text: str) -> Value:
    return Value(frozenset(), (), text)


def fresh(text: str) -> Value:
    """A value the analysis cannot see through: its own origin."""
    return Value(frozenset({text}), (), text)


def merge_arguments(values: Sequence[Value], text: str) -> Optional[Value]:
    """The key carried by a call's arguments: union of origins, steps of the first carrier
    (of the first that came over the network, if any: ``Status(ok, job, payload["url"])`` is a
    remote result)."""
    carriers = [v for v in values if v.origins]
    if not carriers:
        return None
    origins = frozenset().union(*(v.origins for v in carriers))
    first = next((v for v in carriers if is_remote(v.steps)), carriers[0])
    return Value(origins, first.steps, text)


def is_remote(steps: Sequence[Step]) -> bool:
    return any(s.kind in (FETCH, REMOTE) for s in steps)


def _short(label: str) -> str:
    return label if len(label) <= _MAX_LABEL else label[: _MAX_LABEL - 3] + "..."


def _string_literal(node: cst.BaseExpression) -> Optional[str]:
    if isinstance(node, cst.SimpleString):
        try:
            value = node.evaluated_value
        except Exception:  # noqa: BLE001 - odd prefixes; treat as unknown text
            return None
        return value.decode("latin-1") if isinstance(value, bytes) else value
    return None


class Evaluator:
    """Evaluates expressions against an environment ``name -> Value``.

    ``records`` maps a variable holding a record fetched by key to the values its key fields
    were looked up by, so ``user.email`` after ``user = User.objects.get(email=e)`` is ``e``.
    """

    def __init__(self, values: Dict[str, Value], record_fields: Dict[str, Dict[str, Value]],
                 normalizers: Iterable[str] = (),
                 call_hook: Optional[Callable[[cst.Call, str], Optional[Value]]] = None) -> None:
        self.values = values
        self.record_fields = record_fields
        self.normalizers = frozenset(n.rsplit(".", 1)[-1] for n in normalizers)
        # what a call returns when the callee's summary is known
        self.call_hook = call_hook

    def eval(self, node: cst.BaseExpression) -> Value:
        handler = _HANDLERS.get(type(node))
        if handler is None:
            return fresh(code(node))
        return handler(self, node)

    # -- names, attributes, subscripts -------------------------------------------------------

    def _name(self, node: cst.Name) -> Value:
        known = self.values.get(node.value)
        if known is None:
            if node.value in transforms.BUILTIN_NAMES or _is_constant_name(node.value):
                return constant(node.value)
            return fresh(node.value)
        return Value(known.origins, known.steps, node.value, known.result_of)

    def _attribute(self, node: cst.Attribute) -> Value:
        text = code(node)
        if isinstance(node.value, cst.Name):
            fields = self.record_fields.get(node.value.value)
            if fields is not None and node.attr.value in fields:
                looked_up = fields[node.attr.value]
                return Value(looked_up.origins, looked_up.steps, text)
        base = self.eval(node.value)
        if base.result_of:
            return _rederive(base, text, f"{base.result_of}.{node.attr.value}")
        if isinstance(node.value, cst.Name) and node.value.value in self.values and base.origins \
                and not base.steps:
            # a field of what the name is bound to now, not of the name: ``row.email`` in two
            # loops over two collections are two values
            return Value(frozenset(f"{o}.{node.attr.value}" for o in base.origins), (), text)
        return fresh(text)

    def _subscript(self, node: cst.Subscript) -> Value:
        text = code(node)
        base = self.eval(node.value)
        if base.result_of:
            index = text[len(code(node.value)):]
            return _rederive(base, text, f"{base.result_of}{index}")
        if base.origins and len(node.slice) == 1:
            part = _part_of(base, node, text[len(code(node.value)):])
            if part is not None:
                return part
        return fresh(text)

    # -- calls ---------------------------------------------------------------------------------

    def _call(self, node: cst.Call) -> Value:
        text = code(node)
        if self.call_hook is not None:
            summarized = self.call_hook(node, text)
            if summarized is not None:
                return summarized
        func = node.func
        if isinstance(func, cst.Attribute):
            return self._method_call(node, func, text)
        name = dotted_name(func)
        return self._function_call(node, name, text) if name else fresh(text)

    def _args(self, node: cst.Call) -> List[Value]:
        return [self.eval(arg.value) for arg in node.args if arg.star == ""]

    def _method_call(self, node: cst.Call, func: cst.Attribute, text: str) -> Value:
        qualified = dotted_name(func)
        if qualified in transforms.QUALIFIED_FUNCTIONS or qualified in transforms.FETCH_FUNCTIONS:
            return self._function_call(node, qualified, text)
        method = func.attr.value
        receiver = self.eval(func.value)
        if receiver.origins and not (method == "replace" and any(a.keyword for a in node.args)):
            # (``dt.replace(tzinfo=None)`` is a datetime's, not a string's)
            step = self._string_method_step(node, method)
            if step is None and method in transforms.SPLIT_METHODS:
                args = ", ".join(code(a.value) for a in node.args)
                step = Step(PART, _short(f".{method}({args})"), node)
            if step is not None:
                return Value(receiver.origins, receiver.steps + (step,), text)
            if method in transforms.NEUTRAL_METHODS or _is_plain_encode(node, method):
                return Value(receiver.origins, receiver.steps, text)
        if receiver.result_of:
            return _rederive(receiver, text, f"{receiver.result_of}.{method}()")
        if method == "format" and _string_literal(func.value) is not None:
            carried = merge_arguments(self._args(node), text)
            return carried.then(Step(FORMAT, "str.format()", node), text) if carried else constant(text)
        return self._function_call(node, qualified or method, text, receiver_is_object=True)

    def _string_method_step(self, node: cst.Call, method: str) -> Optional[Step]:
        kind = transforms.STRING_METHODS.get(method)
        args = [code(a.value) for a in node.args]
        label = _short(f".{method}({', '.join(args)})")
        if method == "encode" and any("idna" in a.lower() for a in args):
            return Step(IDNA, label, node)
        if kind is None:
            return None
        if method in ("strip", "rstrip", "lstrip") and any("/" in a for a in args):
            return Step(SLASH, label, node)
        return Step(kind, label, node)

    def _function_call(self, node: cst.Call, name: str, text: str,
                       receiver_is_object: bool = False) -> Value:
        short_name = name.rsplit(".", 1)[-1]
        if receiver_is_object:
            args = [self.eval(arg.value) for arg in node.args if arg.star == "" and _carries_key(arg)]
        elif short_name in transforms.PART_TUPLE_FUNCTIONS:
            args = [self._parts(arg.value) for arg in node.args if arg.star == ""]
        else:
            args = self._args(node)
        if not receiver_is_object and (name in transforms.CONVERSIONS or short_name in transforms.CONVERSIONS):
            return Value(args[0].origins, args[0].steps, text) if args else fresh(text)
        carried = merge_arguments(args, text)
        if carried is None:
            return fresh(text)
        kind = self._transform_kind(name, short_name)
        label = f"{_short(name)}()"
        if kind == FETCH:
            return carried.then(Step(FETCH, label, node), text, result_of=_short(text))
        if kind is not None:
            return carried.then(Step(kind, label, node), text)
        return carried.then(Step(CALL, label, node), text, result_of=_short(text))

    def _parts(self, node: cst.BaseExpression) -> Value:
        """The key carried by the parts a URL is rebuilt from: every part's origins, and the
        transformations applied to the parts (a field of the split URL is a part of it, not a
        re-derived key)."""
        if not isinstance(node, (cst.Tuple, cst.List)):
            return self.eval(node)
        values = [self.eval(e.value) for e in node.elements]
        carriers = [v for v in values if v.origins]
        if not carriers:
            return constant(code(node))
        steps: List[Step] = []
        for value in carriers:
            steps += [s for s in value.steps if s.kind not in (CALL, FETCH, REDERIVED) and s not in steps]
        return Value(frozenset().union(*(v.origins for v in carriers)), tuple(steps), code(node))

    def _transform_kind(self, name: str, short_name: str) -> Optional[str]:
        if name in transforms.QUALIFIED_FUNCTIONS:
            return transforms.QUALIFIED_FUNCTIONS[name]
        if name in transforms.FETCH_FUNCTIONS or short_name in transforms.FETCH_FUNCTIONS:
            return FETCH
        if short_name in self.normalizers or transforms.NORMALIZER_NAME.search(short_name):
            return NORMALIZER
        return transforms.FUNCTIONS.get(short_name)

    # -- strings and operators -----------------------------------------------------------------

    def _fstring(self, node: cst.FormattedString) -> Value:
        text = code(node)
        parts = [p for p in node.parts if isinstance(p, cst.FormattedStringExpression)]
        literal = [p for p in node.parts if isinstance(p, cst.FormattedStringText) and p.value]
        carried = merge_arguments([self.eval(p.expression) for p in parts], text)
        if carried is None:
            return constant(text)
        if len(parts) == 1 and not literal and parts[0].format_spec is None and parts[0].conversion is None:
            return Value(carried.origins, carried.steps, text)
        # the template is the transformation: f"https://{h}/" and f"https://{h}" differ
        template = "".join(p.value if isinstance(p, cst.FormattedStringText) else "{}" for p in node.parts)
        return carried.then(Step(FORMAT, f'f"{template}"', node), text)

    def _binary(self, node: cst.BinaryOperation) -> Value:
        text = code(node)
        if not isinstance(node.operator, (cst.Add, cst.Modulo)) or not _builds_text(node):
            return fresh(text)  # arithmetic: another value, not a rebuilt key
        carried = merge_arguments([self.eval(node.left), self.eval(node.right)], text)
        if carried is None:
            return constant(text)
        left, right = _string_literal(node.left), _string_literal(node.right)
        if isinstance(node.operator, cst.Add):
            label = f"{left!r} + ..." if left is not None else (f"... + {right!r}" if right is not None else "concatenation")
        else:
            label = f"{left!r} % ..." if left is not None else "%-formatting"
        return carried.then(Step(FORMAT, label, node), text)

    def _boolean(self, node: cst.BooleanOperation) -> Value:
        left = self.eval(node.left)
        return left if left.origins else self.eval(node.right)

    def _if_exp(self, node: cst.IfExp) -> Value:
        """Either branch: both origins, and the steps of the branch that transforms more."""
        body, orelse = self.eval(node.body), self.eval(node.orelse)
        if not body.origins or not orelse.origins:
            return body if body.origins else orelse
        richer = body if len(body.steps) >= len(orelse.steps) else orelse
        return Value(body.origins | orelse.origins, richer.steps, code(node), richer.result_of)

    def _await(self, node: cst.Await) -> Value:
        return self.eval(node.expression)

    def _literal(self, node: cst.BaseExpression) -> Value:
        return constant(code(node))


def _carries_key(arg: cst.Arg) -> bool:
    """Whether an argument of an object's method passes the key the result is derived from: a
    positional argument, or a keyword named for a natural key (``client.get(url=u)``). A keyword
    naming a relation or an option (``page.create_alias(parent=p)``, ``obj.copy(owner=u)``)
    passes something the new object refers to, not a key it transforms."""
    return arg.keyword is None or natural_key_kind(arg.keyword.value) is not None


def _is_constant_name(name: str) -> bool:
    """``SITE_ID``, ``EAT``: module constants are settings, not the key of a record."""
    return len(name) > 1 and name.isupper()


def _builds_text(node: cst.BinaryOperation) -> bool:
    """``"https://" + host`` or ``"%s:%s" % (a, b)``: one side is a string literal."""
    strings = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)
    return isinstance(node.left, strings) or (isinstance(node.operator, cst.Add) and isinstance(node.right, strings)) \
        or (isinstance(node.left, cst.BinaryOperation) and isinstance(node.left.operator, cst.Add)
            and _builds_text(node.left))


def _rederive(base: Value, text: str, label: str) -> Value:
    """A field read from a call's result: the call step becomes a re-derivation (a remote one
    when the result, or what it was made from, came over the network)."""
    steps = base.steps
    while steps and steps[-1].kind in (CALL, FETCH, REDERIVED, REMOTE):
        steps = steps[:-1]
    kind = REMOTE if is_remote(base.steps) else REDERIVED
    return Value(base.origins, steps + (Step(kind, _short(label)),), text, _short(label))


def _part_of(base: Value, node: cst.Subscript, index: str) -> Optional[Value]:
    """``u.split("?")[0]`` and ``u[:-1]`` keep part of the key ``u``; an element of anything
    else (``row[0]``, ``request.GET["u"]``) is a value of its own."""
    element = node.slice[0].slice
    last = base.steps[-1] if base.steps else None
    if last is not None and last.kind == PART and isinstance(element, cst.Index) and last.label.endswith(")") \
            and last.label.split("(", 1)[0].lstrip(".") in transforms.SPLIT_METHODS:
        step = Step(PART, _short(last.label + index), last.node)
        return Value(base.origins, base.steps[:-1] + (step,), code(node))
    if isinstance(element, cst.Slice):
        return base.then(Step(PART, _short(index), node), code(node))
    return None


def _is_plain_encode(node: cst.Call, method: str) -> bool:
    return method == "encode" and not any("idna" in code(a.value).lower() for a in node.args)


_HANDLERS = {
    cst.Name: Evaluator._name,
    cst.Attribute: Evaluator._attribute,
    cst.Subscript: Evaluator._subscript,
    cst.Call: Evaluator._call,
    cst.FormattedString: Evaluator._fstring,
    cst.BinaryOperation: Evaluator._binary,
    cst.BooleanOperation: Evaluator._boolean,
    cst.IfExp: Evaluator._if_exp,
    cst.Await: Evaluator._await,
    cst.SimpleString: Evaluator._literal,
    cst.ConcatenatedString: Evaluator._literal,
    cst.Integer: Evaluator._literal,
    cst.Float: Evaluator._literal,
    cst.Ellipsis: Evaluator._literal,
}

NAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
