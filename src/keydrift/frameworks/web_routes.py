"""Web frameworks' route handlers: which functions a request calls, and which of their
parameters carry what the client sent (FastAPI's query and body parameters)."""

from __future__ import annotations

from typing import FrozenSet

# ``@app.get("/users")``, ``@router.post("/signup")``, ``@app.route("/u")``: a decorator call of
# one of these methods whose first argument is a path.
ROUTE_METHODS: FrozenSet[str] = frozenset({
    "get", "post", "put", "patch", "delete", "head", "options", "route", "api_route",
})
# The parameters a path names (``/users/{user_id}``, Flask ``/u/<int:user_id>``): identifiers in
# the application's own links, not values a client types.
PATH_PARAMETER = r"\{(\w+)(?::[^}]*)?\}|<(?:\w+:)?(\w+)>"
# Defaults that make a parameter something the framework builds (a dependency), not input.
DEPENDENCY_DEFAULTS: FrozenSet[str] = frozenset({"Depends", "Security", "Path"})
# A bare ``Depends()`` builds the annotated class from the request's query or form fields.
CLASS_DEPENDENCIES: FrozenSet[str] = frozenset({"Depends"})
# Annotations of a parameter a client sends as text: a query or form value (none: ``str``).
TEXT_ANNOTATIONS: FrozenSet[str] = frozenset({"str", "EmailStr"})
