"""The Django ORM layer, table ``frameworks/django_orm.py``: chains through a model's manager
(``User.objects.filter(email=e).exists()``, ``cls.objects.get(...)`` in a model's classmethod,
mongoengine's ``User.objects(email=e)``, Flask-SQLAlchemy's ``User.query.filter_by(...)``),
``Model(...).save()``, and ``get_object_or_404(Model, ...)``. The queryset itself is read by
``layers/querysets.py``, which the class-level and SQLAlchemy layers share."""

from __future__ import annotations

from typing import Optional, Union

from keydrift.analysis.chains import (
    STOP,
    Chain,
    ChainInfo,
    Layer,
    Names,
    Route,
    Stop,
    is_model_name,
    positional_args,
)
from keydrift.analysis.facts import LOOKUP, READ
from keydrift.analysis.layers.querysets import is_manager, keyword_lookups, model_chain
from keydrift.analysis.values import last_name
from keydrift.frameworks import django_orm as django
from keydrift.frameworks import sqlalchemy_orm as sqla

# Shortcuts that look a record (or a list) up: ``get_object_or_404(Model, url=u)``.
SHORTCUTS = ("get_object_or_404", "get_list_or_404", "aget_object_or_404")


def recognize_chain(chain: Chain) -> Union[ChainInfo, None, Stop]:
    """``Model.objects...`` / ``cls.objects...``; ``Model(...).save()`` (any other chain started
    by a model constructor makes no access: STOP)."""
    base_name = chain.base_name
    if base_name in ("cls", "self") and is_manager(chain.first):  # cls.objects in a model's classmethod
        base_name = chain.ctx.enclosing_class()
    if chain.base is not None and is_model_name(base_name) and is_manager(chain.first) \
            and not _session_query(chain):
        return model_chain(chain.reader, chain.ctx.model_alias(base_name), chain.links)
    managed = _managed_query(chain)
    if managed is not None:
        return managed
    if chain.first_call is not None and is_model_name(chain.first) and chain.base is None:
        if len(chain.links) > 1 and chain.links[1][0] in django.SAVE_METHODS:
            chain.reader.instance_writes([chain.first_call])
            return ChainInfo(chain.first)
        return STOP
    return None


def _managed_query(chain: Chain) -> Optional[ChainInfo]:
    """``self.filter(url=u)`` / ``self.get_queryset().get(...)`` / ``super().get_queryset()...``
    in a manager or queryset class that a model of the module makes its manager from: a query
    of that model, as ``Page.objects.filter(url=u)`` is."""
    links = chain.links
    if chain.base is None and chain.first == "super" and len(links) > 1:
        links = links[1:]  # super().get_queryset()
    elif chain.base_name != "self":
        return None
    model = chain.ctx.managed_model()
    if not model or links[0][0] not in django.MANAGER_SELF_METHODS or links[0][1] is None:
        return None
    return model_chain(chain.reader, model, links)


def _session_query(chain: Chain) -> bool:
    """``Session.query(M)``: a capitalized scoped session called with the model; Flask-SQLAlchemy's
    ``Model.query`` is an attribute, never called (the SQLAlchemy layer reads the session's)."""
    return chain.first in sqla.QUERY_METHODS and bool(chain.links) and chain.links[0][1] is not None


def recognize_shortcut(chain: Chain) -> Optional[ChainInfo]:
    final = chain.final_call()
    if final is None:
        return None
    _, name, call = final
    args = positional_args(call)
    if name in SHORTCUTS and args:
        entity = last_name(args[0])
        lookups = keyword_lookups(call, entity, chain.ctx)
        chain.reader.emit(READ, lookups, LOOKUP)
        return ChainInfo(entity, lookups, single_record=name != "get_list_or_404")
    return None


def _manager_or_model(name: str) -> bool:
    """``*objects`` managers, and model constructors (``Page(url=u).save()``: any capitalized
    call, which ``recognize_chain`` answers with ``STOP`` unless it is saved)."""
    return is_manager(name) or is_model_name(name)


LAYER = Layer("django_orm", "manager chains, saved constructors, get_object_or_404",
              chain=recognize_chain, last=recognize_shortcut,
              route=Route(first=Names(django.MANAGER_SELF_METHODS | {"super"}, shape=_manager_or_model),
                          last=Names(frozenset(SHORTCUTS))))
