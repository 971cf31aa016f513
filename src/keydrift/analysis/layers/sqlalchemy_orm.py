"""The SQLAlchemy layer (ORM and Core, SQLModel, Flask-SQLAlchemy sessions), table
``frameworks/sqlalchemy_orm.py``: ``session.query(M).filter_by(...)`` (read by the shared
queryset reader), statements ``select(M).where(M.url == u)``, ``insert(M).values(...)``,
``table.insert()``, and session calls ``session.get(M, pk)``, ``session.add(M(...))``."""

from __future__ import annotations

import ast
from typing import List, Optional, Sequence

from keydrift.analysis.chains import (
    Chain,
    ChainInfo,
    ChainReader,
    Key,
    Layer,
    Link,
    Names,
    Route,
    constructed_instances,
    is_model_name,
    positional_args,
)
from keydrift.analysis.facts import LOOKUP, READ, STORE, WRITE
from keydrift.analysis.layers.querysets import (
    criteria_lookups,
    keyword_lookups,
    model_chain,
    on_conflict,
    stored_fields,
)
from keydrift.analysis.values import last_name
from keydrift.frameworks import sqlalchemy_orm as sqla

MODULE_ALIASES = frozenset({"sa", "sqlalchemy", "postgresql", "sqlite", "mysql", "pg", "dialect"})


def recognize_chain(chain: Chain) -> Optional[ChainInfo]:
    base, links, ctx = chain.base, chain.links, chain.ctx
    # session.query(M)..., self.session.query(M)..., db.session.query(M)...
    query_at = _first_call_index(links)
    if query_at is not None and links[query_at][0] in sqla.QUERY_METHODS and base is not None:
        entity = _entity_arg(links[query_at][1])
        if entity in ("cls", "self"):  # session.query(cls) in a model's classmethod
            entity = ctx.enclosing_class()
        if entity:
            return _query_chain(chain.reader, entity, links[query_at + 1:])
    # select(M)..., insert(M)..., sa.update(M)..., table.insert()...
    first, first_call = chain.first, chain.first_call
    if first_call is not None:
        base_name = chain.base_name
        if base is not None and is_model_name(base_name):
            base_name = ctx.model_alias(base_name)  # the model the name stands for, as the ORM layers read it
        kind = _constructor_kind(first)
        if kind and positional_args(first_call) and (base is None or not is_model_name(base_name)):
            entity = _entity_arg(first_call)
            if entity and (base is None or base_name in MODULE_ALIASES or base_name.islower()):
                return statement_chain(chain.reader, kind, entity, links[1:])
        if kind and not positional_args(first_call) and base is not None and first in sqla.TABLE_METHODS:
            return statement_chain(chain.reader, kind, base_name, links[1:])
    return None


def recognize_session_call(chain: Chain) -> Optional[ChainInfo]:
    """``session.get(M, pk)``; ``session.add(M(...))`` / ``add_all([...])``."""
    final = chain.final_call()
    if final is None:
        return None
    base, name, call = final
    ctx = chain.ctx
    args = positional_args(call)
    if name in sqla.GET_BY_PK_METHODS and base is not None and len(args) >= 2:
        entity = last_name(args[0])
        if is_model_name(entity):
            key = Key(entity, ctx.primary_key(entity), ctx.eval(args[1]))
            chain.reader.emit(READ, [key], LOOKUP)
            return ChainInfo(entity, [key], single_record=True)
    if base is not None and (name in sqla.ADD_METHODS or name in sqla.ADD_ALL_METHODS) and args:
        chain.reader.bulk(args[0])
        return ChainInfo("") if constructed_instances(ctx.resolve(args[0])) else None
    return None


def statement_chain(reader: ChainReader, kind: str, entity: str, links: Sequence[Link]) -> ChainInfo:
    """SQLAlchemy select/insert/update/delete constructs and their method chains."""
    info = ChainInfo(entity)
    lookups: List[Key] = []
    stored: List[Key] = []
    for name, call in links:
        if call is None:
            continue
        if name in sqla.CRITERIA_METHODS:
            for arg in positional_args(call):
                lookups += criteria_lookups(arg, entity, reader.ctx)
        elif name in sqla.KEYWORD_CRITERIA_METHODS:
            lookups += keyword_lookups(call, entity, reader.ctx)
        elif name in sqla.VALUES_METHODS:
            new = stored_fields(call, entity, reader.ctx)
            stored += new
            reader.emit(WRITE, new, STORE)
        elif name in sqla.ON_CONFLICT_METHODS:
            on_conflict(reader, call, entity, stored)
    reader.emit(READ if kind == "select" else WRITE, lookups, LOOKUP)
    info.lookups = lookups if kind == "select" else []
    return info


def _entity_arg(call: Optional[ast.Call]) -> str:
    """The entity a constructor names: ``select(M)``, ``select(M.url)``, ``insert(table)``."""
    if call is None or not positional_args(call):
        return ""
    arg = positional_args(call)[0]
    if isinstance(arg, ast.Attribute) and is_model_name(last_name(arg.value)):
        return last_name(arg.value)
    return last_name(arg)


def _constructor_kind(name: str) -> str:
    for kind, names in (("select", sqla.SELECT_CONSTRUCTORS), ("insert", sqla.INSERT_CONSTRUCTORS),
                        ("update", sqla.UPDATE_CONSTRUCTORS), ("delete", sqla.DELETE_CONSTRUCTORS)):
        if name in names or name.endswith("_" + kind):
            return kind
    return ""


def _first_call_index(links: Sequence[Link]) -> Optional[int]:
    for index, (_, call) in enumerate(links):
        if call is not None:
            return index
    return None


def _query_chain(reader: ChainReader, entity: str, links: Sequence[Link]) -> ChainInfo:
    """``session.query(M).filter...``: a read, unless it ends in update()/delete()."""
    names = [n for n, c in links if c is not None]
    write_chain = any(n in sqla.QUERY_UPDATE_METHODS or n in sqla.QUERY_DELETE_METHODS for n in names)
    return model_chain(reader, entity, links, write_chain=write_chain)


def _is_constructor(name: str) -> bool:
    return bool(_constructor_kind(name))


LAYER = Layer("sqlalchemy_orm", "session.query chains, select/insert/update/delete statements, session calls",
              chain=recognize_chain, last=recognize_session_call,
              route=Route(first_call=Names(sqla.QUERY_METHODS, shape=_is_constructor),
                          last=Names(sqla.GET_BY_PK_METHODS | sqla.ADD_METHODS | sqla.ADD_ALL_METHODS)))
