"""Normal forms of keys: what two spellings of one key have in common.

Built in, per kind of key (``frameworks/schema.natural_key_kind``):

- URLs (``url``): each step can be turned off (``--url-steps``) —
  ``scheme``: a URL written without a scheme gets ``https://``;
  ``case``: scheme and host lowercased (the path keeps its case);
  ``port``: the scheme's default port dropped (``:80`` for http, ``:443`` for https);
  ``www``: a leading ``www.`` dropped from the host;
  ``slash``: trailing slashes of the path dropped, the root kept (``https://a.com/b/`` is
  ``https://a.com/b``, ``https://a.com`` is ``https://a.com/``).
  A value that is not a URL (no host, a bad port) cannot be normalized: it stays its own key
  and is counted.
- e-mail addresses, user names, hosts, slugs, names: case and surrounding spaces.
- paths: surrounding spaces and trailing slashes (the root ``/`` kept).

Forms that SQL can express (``lower``, ``trim``, ``rtrim``) are computed by the database; the
others, and a project normalizer named with ``--normalizer``, in Python.
"""

from __future__ import annotations

import importlib
import ipaddress
import os
import re
import sys
from dataclasses import dataclass
from typing import Callable, Dict, FrozenSet, Optional, Sequence, Tuple
from urllib.parse import urlsplit, urlunsplit

from keydrift.audit.model import AuditError
from keydrift.frameworks import schema

URL_STEPS: Tuple[str, ...] = ("scheme", "case", "port", "www", "slash")
DEFAULT_PORTS: Dict[str, int] = {"http": 80, "https": 443}
DEFAULT_SCHEME = "https"
_HOST = re.compile(r"^[^\s/?#@\[\]:]+$")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


class NotNormalizable(ValueError):
    """The value cannot be put in normal form; it stays its own key."""


@dataclass(frozen=True)
class NormalForm:
    """How a key column's values are normalized: in SQL (``sql`` is a template with ``{}`` for
    the column) or in Python (``function``)."""

    description: str
    sql: Optional[str] = None
    function: Optional[Callable[[str], str]] = None

    def apply(self, value: str) -> str:
        if self.function is None:
            raise AssertionError("a SQL normal form is computed by the database")
        return self.function(value)


# -- built-in forms ----------------------------------------------------------------------------

_CASE_AND_SPACE = NormalForm("case and surrounding spaces", sql="lower(trim({}))")
_PATH = NormalForm("surrounding spaces and trailing slashes",
                   sql="CASE WHEN rtrim(trim({0}), '/') = '' AND trim({0}) <> '' THEN '/' "
                       "ELSE rtrim(trim({0}), '/') END")
_SQL_FORMS: Dict[str, NormalForm] = {
    schema.EMAIL: _CASE_AND_SPACE,
    schema.USERNAME: _CASE_AND_SPACE,
    schema.HOST: _CASE_AND_SPACE,
    schema.SLUG: _CASE_AND_SPACE,
    schema.NAME: _CASE_AND_SPACE,
    schema.PATH: _PATH,
}


def builtin_form(kind: Optional[str], url_steps: FrozenSet[str]) -> Optional[NormalForm]:
    """The built-in normal form for a kind of key, or None when there is none."""
    if kind == schema.URL:
        return url_form(url_steps)
    return _SQL_FORMS.get(kind or "")


def url_form(steps: FrozenSet[str]) -> NormalForm:
    ordered = [s for s in URL_STEPS if s in steps]
    description = "URL: " + (", ".join(ordered) if ordered else "no steps")
    if set(ordered) <= {"slash"}:  # rtrim can say it: no URL parsing needed
        sql = "rtrim({}, '/')" if ordered else "{}"
        return NormalForm(description, sql=sql)
    return NormalForm(description, function=lambda value: normalize_url(value, steps))


def normalize_url(value: str, steps: FrozenSet[str] = frozenset(URL_STEPS)) -> str:
    text = value.strip()
    schemeless = not _SCHEME.match(text)
    if schemeless:  # "example.com/": https:// is added by the scheme step, else kept absent
        text = f"{DEFAULT_SCHEME if 'scheme' in steps else 'keydrift-none'}://{text.lstrip('/')}"
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise NotNormalizable(str(exc)) from None
    host = parts.hostname or ""
    if not parts.scheme or not _valid_host(host) or any(c.isspace() for c in parts.netloc):
        raise NotNormalizable("not a URL with a host")
    scheme = parts.scheme.lower() if "case" in steps else parts.scheme
    netloc = _netloc(parts, host, port, scheme, steps)
    path = (parts.path.rstrip("/") or "/") if "slash" in steps else parts.path
    normal = urlunsplit((scheme, netloc, path, parts.query, parts.fragment))
    return normal.split("://", 1)[1] if schemeless and "scheme" not in steps else normal


def _valid_host(host: str) -> bool:
    if ":" in host:  # urlsplit gives an IPv6 address without its brackets
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            return False
        return True
    return bool(_HOST.match(host))


def _netloc(parts: object, host: str, port: Optional[int], scheme: str, steps: FrozenSet[str]) -> str:
    netloc: str = getattr(parts, "netloc")
    userinfo, _, hostport = netloc.rpartition("@")
    if "case" not in steps:  # urlsplit lowercases hostname: take the written one
        host = hostport.rsplit(":", 1)[0] if port is not None or hostport.endswith(":") else hostport
    if "www" in steps and host.lower().startswith("www.") and host.count(".") >= 2:
        host = host[4:]
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"  # an IPv6 address
    if port is not None and not ("port" in steps and DEFAULT_PORTS.get(scheme.lower()) == port):
        host = f"{host}:{port}"
    return f"{userinfo}@{host}" if userinfo else host


def parse_url_steps(text: str) -> FrozenSet[str]:
    steps = frozenset(s.strip() for s in text.split(",") if s.strip())
    unknown = sorted(steps - set(URL_STEPS))
    if unknown:
        raise AuditError(f"--url-steps: unknown step {unknown[0]!r} (steps: {', '.join(URL_STEPS)})")
    return steps


# -- a normalizer of the project (imports the user's code: only when named) -----------------

def project_normalizer(spec: str, root: str) -> NormalForm:
    """``package.module:function`` imported from the project root. This runs the project's
    code, which keydrift otherwise never does: it happens only when the user names it."""
    module_name, _, function_name = spec.partition(":")
    if not module_name or not function_name:
        raise AuditError(f"--normalizer {spec!r}: expected MODULE:FUNCTION (app.keys:normalize_url)")
    sys.path.insert(0, os.path.abspath(root))
    try:
        module = importlib.import_module(module_name)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - the user's module may raise anything on import
        raise AuditError(f"--normalizer {spec}: cannot import {module_name}: "
                         f"{type(exc).__name__}: {exc}") from None
    finally:
        sys.path.remove(os.path.abspath(root))
    function = getattr(module, function_name, None)
    if not callable(function):
        raise AuditError(f"--normalizer {spec}: {module_name} has no function {function_name!r}")
    return NormalForm(f"the project's {spec}", function=_guarded(function))


def _guarded(function: Callable[[str], object]) -> Callable[[str], str]:
    def apply(value: str) -> str:
        try:
            result = function(value)
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - a rejected value stays its own key
            raise NotNormalizable(f"{type(exc).__name__}: {exc}") from None
        if not isinstance(result, str):
            raise NotNormalizable(f"the normalizer returned {type(result).__name__}")
        return result
    return apply


def parse_normalizers(specs: Sequence[str], root: str) -> Dict[str, NormalForm]:
    """``--normalizer [KIND=]MODULE:FUNCTION``: for one kind of key, or (without KIND, key
    ``""``) for every key column."""
    out: Dict[str, NormalForm] = {}
    for spec in specs:
        kind, equals, target = spec.partition("=")
        if not equals:
            kind, target = "", spec
        out[kind.strip()] = project_normalizer(target.strip(), root)
    return out
