"""The configured normalizers (``[tool.keydrift] normalizers``) as fixes call them: which one a
key field has, and the name that calls it from a module (importing it when needed)."""

from __future__ import annotations

from typing import Dict, Iterator, Optional, Set, Tuple

import libcst as cst

from keydrift.fixes._document import Document
from keydrift.frameworks.schema import name_tokens, natural_key_kind
from keydrift.types import Config

# Words of normalizer names that say what they do, not what they apply to.
_VERBS = frozenset({
    "normalize", "normalise", "normalized", "canonical", "canonicalize", "canonicalise", "clean", "sanitize",
    "sanitise", "standardize", "norm", "to", "get", "make", "key", "value", "for", "of",
})

Reference = Tuple[str, Tuple[Tuple[str, str], ...]]  # (code that names it, imports to add)


def normalizer_for_field(field: str, config: Config) -> Optional[str]:
    """The one configured normalizer whose name says it is for ``field`` (``normalize_email`` for
    ``email``, ``canonical_url`` for ``source_url``); None when none or several are."""
    if not field or field == "*":
        return None
    wanted = set(name_tokens(field)) - _VERBS
    kind = natural_key_kind(field)
    if kind:
        wanted.add(kind)
    found = [q for q in config.normalizers if wanted & (set(name_tokens(q.rpartition(".")[2])) - _VERBS)]
    return found[0] if len(found) == 1 else None


def reference(document: Document, qualified: str) -> Optional[Reference]:
    """How code of ``document`` calls ``qualified``: a name it already imports, or its last
    component together with the ``from module import name`` to add. None when that name is
    taken by something else in the module."""
    module, _, name = qualified.rpartition(".")
    if not module:
        return None
    imports = imported_names(document.module)
    for local, target in imports.items():
        if target == qualified:
            return local, ()
        if target == module:
            return f"{local}.{name}", ()
    if name in imports or name in _defined_names(document.module):
        return None
    return name, ((module, name),)


def qualified_name(document: Document, code: str) -> str:
    """``code`` (a called name as written: ``normalize_email``, ``accounts.normalize_email``)
    with its first component resolved through the module's imports."""
    head, _, rest = code.partition(".")
    target = imported_names(document.module).get(head)
    if target is None:
        return code
    return f"{target}.{rest}" if rest else target


def imported_names(module: cst.Module) -> Dict[str, str]:
    """Module-level imports: local name -> what it names (``from a.b import c as d``: d -> a.b.c;
    ``import a.b``: a -> a; ``import a.b as e``: e -> a.b)."""
    out: Dict[str, str] = {}
    for small in _module_statements(module):
        if isinstance(small, cst.ImportFrom) and not small.relative and small.module is not None \
                and not isinstance(small.names, cst.ImportStar):
            base = _dotted(small.module)
            for alias in small.names:
                name = _dotted(alias.name)
                out[_alias(alias) or name] = f"{base}.{name}"
        elif isinstance(small, cst.Import):
            for alias in small.names:
                name = _dotted(alias.name)
                local = _alias(alias)
                if local:
                    out[local] = name
                else:
                    out[name.partition(".")[0]] = name.partition(".")[0]
    return out


def _module_statements(module: cst.Module) -> Iterator[cst.BaseSmallStatement]:
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            yield from statement.body


def _defined_names(module: cst.Module) -> Set[str]:
    names: Set[str] = set()
    for statement in module.body:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            names.add(statement.name.value)
    for small in _module_statements(module):
        if isinstance(small, cst.Assign):
            names.update(t.target.value for t in small.targets if isinstance(t.target, cst.Name))
    return names


def _alias(alias: cst.ImportAlias) -> str:
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value
    return ""


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""
