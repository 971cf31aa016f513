"""Which parameters of a route handler hold what the client sent (``frameworks/web_routes.py``).

FastAPI fills a handler's parameters from the request: a parameter the path does not name,
annotated as text (or not at all) is a query value; one annotated with a validation model
(pydantic) is the parsed body. Those are input, as ``request.GET["email"]`` is: a lookup by
one compares what the client typed. Path parameters (the application's own links), dependencies
(``Depends(...)``) and parameters of any other type are not: an ``Annotated`` alias such as
``CurrentUser`` may be the logged-in user's row. ``Annotated[str, Query()]`` is read as its
type, with a ``Depends``/``Path`` among its metadata taken as the default.
"""

from __future__ import annotations

import ast
from typing import Callable, FrozenSet, Iterator, Optional, Set

from keydrift.analysis.receivers import annotated_parts, plain_string
from keydrift.analysis.tree import FunctionNode
from keydrift.analysis.values import last_name
from keydrift.frameworks import web_routes
from keydrift.patterns import lazy

_PATH_PARAMETER = lazy(web_routes.PATH_PARAMETER)


def request_parameters(function: FunctionNode, is_validation_model: Callable[[str], bool]) -> FrozenSet[str]:
    """The parameters of ``function`` that hold the client's input; empty unless it is a route
    handler (a decorator ``@x.get("/path")``, ``@x.route("/path")``...)."""
    path = _route_path(function)
    if path is None:
        return frozenset()
    in_path: Set[str] = {name for match in _PATH_PARAMETER.finditer(path) for name in match.groups() if name}
    return frozenset(arg.arg for arg, default in _parameters(function)
                     if arg.arg not in in_path and arg.arg not in ("self", "cls") and _from_request(arg, default,
                                                                                                   is_validation_model))


def _from_request(arg: ast.arg, default: Optional[ast.expr], is_validation_model: Callable[[str], bool]) -> bool:
    """A value the framework reads from the request: text or a validation model, not made by a
    dependency; or a class the framework builds from the request's fields (``form_data:
    OAuth2PasswordRequestForm = Depends()``: a bare ``Depends()`` calls the annotated class).
    ``Annotated[T, Depends(...)]`` is T with that default; ``Annotated[T, Body()]``, T."""
    annotation, metadata = annotated_parts(arg.annotation)
    made_by = default if _dependency(default) else next((m for m in metadata if _dependency(m)), None)
    if made_by is not None:
        return _class_from_request(annotation, made_by)
    return _input_annotation(annotation, is_validation_model)


def _class_from_request(annotation: Optional[ast.expr], default: Optional[ast.expr]) -> bool:
    return isinstance(default, ast.Call) and not default.args and not default.keywords \
        and last_name(default.func) in web_routes.CLASS_DEPENDENCIES \
        and isinstance(annotation, (ast.Name, ast.Attribute)) and last_name(annotation)[:1].isupper()


def _route_path(function: FunctionNode) -> Optional[str]:
    for decorator in function.decorator_list:
        if isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute) \
                and decorator.func.attr in web_routes.ROUTE_METHODS and decorator.args:
            path = plain_string(decorator.args[0])
            if path is not None and path.startswith("/"):
                return path
    return None


def _parameters(function: FunctionNode) -> Iterator[tuple]:
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    yield from zip(positional, defaults)
    yield from zip(args.kwonlyargs, args.kw_defaults)


def _dependency(default: Optional[ast.expr]) -> bool:
    return isinstance(default, ast.Call) and last_name(default.func) in web_routes.DEPENDENCY_DEFAULTS


def _input_annotation(annotation: Optional[ast.expr], is_validation_model: Callable[[str], bool]) -> bool:
    """Text (``str``, ``EmailStr``, also optional: ``Optional[str]``, ``str | None``), none, or a
    validation model's name."""
    if annotation is None:
        return True
    if isinstance(annotation, ast.Subscript) and last_name(annotation.value) == "Optional":
        return _input_annotation(annotation.slice, is_validation_model)
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        sides = [s for s in (annotation.left, annotation.right)
                 if not (isinstance(s, ast.Constant) and s.value is None)]
        return len(sides) == 1 and _input_annotation(sides[0], is_validation_model)
    if isinstance(annotation, (ast.Name, ast.Attribute)):
        name = last_name(annotation)
        return name in web_routes.TEXT_ANNOTATIONS or is_validation_model(name)
    return False
