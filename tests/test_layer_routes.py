"""The layer registry's dispatch: a layer's route (the names of a chain's first link, first call
and last call its table can match) sends a call to its recognizers, a call with no layer's name
asks only the layers without a route, and on every annotated case each answer the layers give
comes from a layer whose route admits the chain (so routing changes no answer)."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

import pytest

from keydrift.analysis.chains import ChainInfo, Layer, Names, Route, unchain
from keydrift.analysis.layers import registry
from keydrift.analysis.layers.registry import DISPATCH, LAYERS, PASSES, Dispatch
from keydrift.engine import check_source
from keydrift.testing import case_config, case_files, find_cases

CASES_DIR = Path(__file__).resolve().parent.parent / "fixtures" / "cases"


def _links(source: str):
    call = ast.parse(source, mode="eval").body
    return unchain(call)[1]


def _asked(source: str, dispatch: Dispatch = DISPATCH) -> List[str]:
    """The layers whose recognizers the registry asks about the call, in the order asked."""
    owners = {recognizer: layer.name for layer in dispatch.layers
              for recognizer in (layer.call, layer.chain, layer.last) if recognizer is not None}
    names: List[str] = []
    for recognizer in dispatch.recognizers(_links(source)):
        if owners[recognizer] not in names:
            names.append(owners[recognizer])
    return names


@pytest.mark.parametrize("source, layer", [
    ("cur.execute(sql, (e,))", "dbapi_sql"),
    ("cur.executemany(sql, rows)", "dbapi_sql"),
    ("conn.fetchrow(sql, e)", "dbapi_sql"),
    ('db.users.find_one({"email": e})', "pymongo_client"),
    ("db.users.insert_many(docs)", "pymongo_client"),
    ('cache.get(f"user:{uid}")', "redis_client"),
    ('r.hset("h", k, v)', "redis_client"),
    ('select_one("users", {"email": e})', "data_access"),
    ('self.db.simple_upsert(table="users", keyvalues={"id": i})', "data_access"),
    ("User.objects.filter(email=e).exists()", "django_orm"),
    ("self.user_objects.get(email=e)", "django_orm"),
    ("get_object_or_404(User, email=e)", "django_orm"),
    ("Page(url=u).save()", "django_orm"),
    ("super().get_queryset().filter(url=u)", "django_orm"),
    ("self.filter(url=u)", "django_orm"),
    ("User.get(User.email == e)", "model_classes"),
    ("User.select().where(User.email == e)", "model_classes"),
    ("db.session.query(User).filter_by(email=e).first()", "sqlalchemy_orm"),
    ("select(User).where(User.email == e)", "sqlalchemy_orm"),
    ("sa.pg_insert(users).values(email=e)", "sqlalchemy_orm"),
    ("session.get(User, pk)", "sqlalchemy_orm"),
    ("session.add_all([User(email=e)])", "sqlalchemy_orm"),
])
def test_a_layers_names_route_the_call_to_it(source, layer):
    assert layer in _asked(source)


@pytest.mark.parametrize("source", [
    "len(x)",
    "self.compute_total(order)",
    "json.dumps(payload)",
    "items.append(item)",
    "template.render(context).strip()",
    "os.path.join(root, name)",
    "cur.executes(sql)",  # near misses of a layer's names
    "cache.gett(k)",
    "db.users.aggregate(pipeline)",
    "session.quer(User).first()",
    "request.headers.getall(name)",
])
def test_a_call_with_no_layers_name_asks_no_layer(source):
    assert _asked(source) == []


@pytest.mark.parametrize("source, not_asked", [
    ("User.objectz.get(email=e)", "django_orm"),  # not a manager: the store and session layers' ``get``
    ("users.find_one(e)", "redis_client"),
    ("session.query(User)", "dbapi_sql"),
    ("helper.save_draft(d)", "sqlalchemy_orm"),
    ("UUID(value)", "django_orm"),  # an all-capitals name: no model
])
def test_a_name_of_one_layer_asks_no_other(source, not_asked):
    assert not_asked not in _asked(source)


def _layer(name: str, route: Optional[Route] = None, **recognizers) -> Layer:
    return Layer(name, f"the {name} test layer", route=route, **recognizers)


def _never(chain) -> None:
    return None


def _also_never(chain) -> None:
    return None


def _nor_this(chain) -> None:
    return None


def test_a_layer_without_a_route_is_asked_about_every_call():
    routed = _layer("routed", Route(last=Names(frozenset({"fetch_one"}))), call=_never)
    unrouted = _layer("unrouted", call=_also_never)
    dispatch = Dispatch((routed, unrouted))
    assert dispatch.recognizers(_links("repo.fetch_one(k)")) == (_never, _also_never)
    assert dispatch.recognizers(_links("len(x)")) == (_also_never,)
    assert _asked("self.anything(y)", dispatch) == ["unrouted"]


def test_a_shape_routes_names_no_list_holds():
    shaped = _layer("shaped", Route(first=Names(shape=lambda name: name.startswith("fetch_"))), chain=_never)
    dispatch = Dispatch((shaped,))
    assert dispatch.recognizers(_links("fetch_user(k).value")) == (_never,)
    assert dispatch.recognizers(_links("user.load().fetch_all()")) == ()  # not the first link
    assert dispatch.recognizers(_links("refetch_user(k)")) == ()


def test_the_asked_recognizers_keep_the_registrys_order_pass_by_pass():
    """Every admitted ``call`` recognizer, then every ``chain`` one, then every ``last`` one."""
    everything = Route(last=Names(shape=lambda name: True))
    first = _layer("first", everything, chain=_never, last=_nor_this)
    second = _layer("second", everything, call=_also_never)
    dispatch = Dispatch((first, second))
    assert dispatch.recognizers(_links("x.y()")) == (_also_never, _never, _nor_this)


def test_the_registered_layers_all_declare_routes():
    """Every layer of the registry names what it can answer; a new layer may leave its route out
    (asked about every chain) until it knows."""
    assert all(layer.route is not None for layer in LAYERS)


class _AskingEveryLayer(Dispatch):
    """Asks every layer, as the registry did before routes, and notes each answer (``STOP``
    included) given by a layer whose route does not admit the chain."""

    def __init__(self, layers: Sequence[Layer]) -> None:
        super().__init__(layers)
        self.unrouted_answers: List[Tuple[str, Tuple[str, str, str]]] = []
        self.answers = 0

    def _select(self, first: str, first_call: str, last: str):
        names = (first, first_call, last)
        return tuple(self._noting(layer, recognizer, names) for stage in PASSES for layer in self.layers
                     if (recognizer := getattr(layer, stage)) is not None)

    def _noting(self, layer: Layer, recognizer, names: Tuple[str, str, str]):
        def noted(chain) -> Optional[ChainInfo]:
            found = recognizer(chain)
            if found is not None:
                self.answers += 1
                if layer.route is not None and not layer.route.admits(*names):
                    self.unrouted_answers.append((layer.name, names))
            return found
        return noted


def test_every_answer_on_the_cases_comes_from_a_layer_its_route_admits(monkeypatch):
    asking = _AskingEveryLayer(LAYERS)
    monkeypatch.setattr(registry, "DISPATCH", asking)
    for case in find_cases(CASES_DIR):
        config = dataclasses.replace(case_config(case), cache=False)
        for path in case_files(case):
            check_source(path.read_bytes(), str(path), config)
    assert asking.answers > 1000  # the cases exercise every layer
    assert asking.unrouted_answers == []
