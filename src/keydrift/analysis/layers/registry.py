"""The database layers, in the order the chain recognizer asks them, and the recognizer.

``recognize`` reads a call chain from its outermost call (``keyflow`` asks it for every call)
and asks the layers in three passes: every layer's ``call`` recognizer (the outermost call
alone: ``cursor.execute(sql, p)``, ``coll.find_one({...})``, ``cache.get(k)``,
``select_one("users", {...})``), then every ``chain`` recognizer (the chain from its base:
``Model.objects...``, ``Model.get(...)``, ``session.query(M)...``, ``select(M)...``), then every
``last`` recognizer (the last call on its receiver: ``get_object_or_404(M, ...)``,
``session.get(M, pk)``, ``session.add(M(...))``). The first layer that answers wins; a layer
that answers ``STOP`` ends the search with no access. A layer is asked only about the chains
its ``Route`` admits (by the names of the chain's first link, first call and last call); a layer
without a route is asked about every chain. Adding a layer: one module in this package defining
``LAYER = Layer(...)``, and one line below.
"""

from __future__ import annotations

import ast
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from keydrift.analysis.chains import (
    STOP,
    Chain,
    ChainInfo,
    ChainReader,
    Context,
    Layer,
    Link,
    Recognizer,
    is_model_name,
    unchain,
)
from keydrift.analysis.layers import (
    data_access,
    dbapi_sql,
    django_orm,
    model_classes,
    pymongo_client,
    redis_client,
    sqlalchemy_orm,
)
from keydrift.analysis.layers.querysets import is_manager
from keydrift.frameworks import django_orm as django
from keydrift.frameworks import model_classes as classes
from keydrift.frameworks import sqlalchemy_orm as sqla

LAYERS: Tuple[Layer, ...] = (
    dbapi_sql.LAYER,  # cursor.execute(sql, params)
    pymongo_client.LAYER,  # db.users.find_one({"email": e})
    redis_client.LAYER,  # cache.get(f"user:{uid}")
    data_access.LAYER,  # select_one("users", {"email": e})
    django_orm.LAYER,  # User.objects.filter(email=e); get_object_or_404(User, email=e)
    model_classes.LAYER,  # User.get(User.email == e) (peewee)
    sqlalchemy_orm.LAYER,  # session.query(User)...; select(User).where(...); session.get(User, pk)
)

PASSES = ("call", "chain", "last")


def recognize(call: ast.Call, ctx: Context, call_id: int) -> Optional[ChainInfo]:
    """Report the accesses of the chain whose outermost call is ``call``."""
    base, links = unchain(call)
    if not links:
        return None
    # (each step's first test made here: most chains are one call, which neither step changes)
    if type(base) is ast.Name and links[0][0] in _QUERY_REFINEMENTS:
        base, links = _through_variable(base, links, ctx)
    if len(links) > 1:
        base, links = _through_module_alias(base, links, ctx)
    recognizers = DISPATCH.recognizers(links)
    if not recognizers:
        return None  # most calls: no layer's names (``len(x)``, ``self.helper(y)``)
    info = _first_answer(Chain(base, links, ChainReader(ctx, call_id, call)), recognizers)
    if info is not None:
        info.calls = {id(c) for _, c in links if c is not None}
    return info


def ask(chain: Chain) -> Optional[ChainInfo]:
    """The first answer of the layers whose routes admit the chain, pass by pass."""
    return _first_answer(chain, DISPATCH.recognizers(chain.links))


def _first_answer(chain: Chain, recognizers: Sequence[Recognizer]) -> Optional[ChainInfo]:
    for recognizer in recognizers:
        found = recognizer(chain)
        if found is STOP:
            return None
        if found is not None:
            return found  # type: ignore[return-value]
    return None


class Dispatch:
    """Which recognizers to ask about a chain, in the order ``ask`` tries them: those of the
    layers whose routes admit the chain's names, and of every layer without a route. The walker
    asks about every call and a project calls few names many times, so the answer is remembered
    by the three names."""

    _REMEMBERED = 16384

    def __init__(self, layers: Sequence[Layer]) -> None:
        self.layers = tuple(layers)
        self._remembered: Dict[Tuple[str, str, str], Tuple[Recognizer, ...]] = {}
        # The routes turned around, layer ``i`` as bit ``1 << i``: for each of the three names
        # (first link, first call, last link), the layers that list a name and those that test
        # its shape; and the layers asked about every chain. Most triples are new (a call of a
        # name not called before), and one look-up per name replaces a test per layer.
        self._unrouted = 0
        self._listing: Tuple[Dict[str, int], ...] = ({}, {}, {})
        self._shapes: Tuple[List[Tuple[int, Callable[[str], bool]]], ...] = ([], [], [])
        for index, layer in enumerate(self.layers):
            bit = 1 << index
            if layer.route is None:
                self._unrouted |= bit
                continue
            route = layer.route
            for place, names in enumerate((route.first, route.first_call, route.last)):
                for name in names.listed:
                    self._listing[place][name] = self._listing[place].get(name, 0) | bit
                if names.shape is not None:
                    self._shapes[place].append((bit, names.shape))
        self._by_layers: Dict[int, Tuple[Recognizer, ...]] = {}

    def recognizers(self, links: Sequence[Link]) -> Tuple[Recognizer, ...]:
        first_call = ""
        for name, call in links:  # (a loop: asked for every call the walker meets)
            if call is not None:
                first_call = name
                break
        names = (links[0][0], first_call, links[-1][0])
        found = self._remembered.get(names)
        if found is None:
            if len(self._remembered) >= self._REMEMBERED:
                self._remembered.clear()
            found = self._remembered[names] = self._select(*names)
        return found

    def _select(self, first: str, first_call: str, last: str) -> Tuple[Recognizer, ...]:
        asked = self._unrouted
        for place, name in enumerate((first, first_call, last)):
            asked |= self._listing[place].get(name, 0)
            for bit, shape in self._shapes[place]:
                if not asked & bit and shape(name):  # (a layer admitted already is not tested again)
                    asked |= bit
        found = self._by_layers.get(asked)
        if found is None:
            chosen = [layer for index, layer in enumerate(self.layers) if asked & 1 << index]
            found = self._by_layers[asked] = tuple(recognizer for stage in PASSES for layer in chosen
                                                   if (recognizer := getattr(layer, stage)) is not None)
        return found


DISPATCH = Dispatch(LAYERS)


# Links that make a call a query a variable may hold and refine (``q = session.query(M)``).
_QUERY_STARTS = frozenset(django.MANAGERS | sqla.QUERY_METHODS | django.LOOKUP_METHODS | {"select", "where", "all"})
# What may follow a query held in a variable: more criteria, ordering, a terminal read, or a
# write of the rows it selects.
_QUERY_REFINEMENTS = frozenset(
    django.LOOKUP_METHODS | sqla.CRITERIA_METHODS | sqla.KEYWORD_CRITERIA_METHODS | django.SINGLE_RECORD_METHODS
    | django.UPDATE_METHODS | django.DELETE_METHODS
    | {"exists", "count", "all", "order_by", "limit", "offset", "distinct", "values", "values_list",
       "one", "scalar", "first", "aexists", "acount"})


def _through_variable(base: Optional[ast.expr], links: List[Link],
                      ctx: Context) -> Tuple[Optional[ast.expr], List[Link]]:
    """``q.filter_by(email=e).first()`` with ``q = session.query(M)`` (or refined since): the
    chain goes on from the query the variable holds."""
    if not isinstance(base, ast.Name) or links[0][0] not in _QUERY_REFINEMENTS:
        return base, links
    bound = ctx.resolve(base)
    inner = bound.value if isinstance(bound, ast.Await) else bound
    if not isinstance(inner, ast.Call) or not isinstance(inner.func, ast.Attribute):
        return base, links
    inner_base, inner_links = unchain(inner)
    names = {name for name, _ in inner_links}
    if not names & _QUERY_STARTS or inner_links[-1][0] in django.SINGLE_RECORD_METHODS:
        return base, links  # another call, or one record (``obj.save()`` persists it)
    return inner_base, inner_links + links


def _through_module_alias(base: Optional[ast.expr], links: List[Link],
                          ctx: Context) -> Tuple[Optional[ast.expr], List[Link]]:
    """``models.User.objects.get(...)`` / ``m.User.get(...)``: the model reached through a module
    (``from app import models as m``) is the chain's base; ``get_user_model().objects...`` is the
    project's user model."""
    if base is None and len(links) > 2 and links[0][0] in django.USER_MODEL_GETTERS \
            and links[0][1] is not None and is_manager(links[1][0]):
        return ast.Name(id=ctx.user_model(), ctx=ast.Load()), links[1:]
    # (the tests of the links first: most chains are one call, ``self.helper(x)``)
    if len(links) < 2 or links[0][1] is not None or type(base) is not ast.Name:
        return base, links
    if is_model_name(base.id) or base.id in ("self", "cls") or not is_model_name(links[0][0]):
        return base, links
    follower, follower_call = links[1]
    if is_manager(follower) or (follower_call is not None and follower in classes.MODEL_CLASS_METHODS):
        return ast.Name(id=links[0][0], ctx=ast.Load()), links[1:]
    return base, links
