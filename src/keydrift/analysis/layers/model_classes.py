"""The class-level model layer (peewee, Flask-SQLAlchemy-style helpers), table
``frameworks/model_classes.py``: ``User.get(User.email == e)``, ``User.select().where(...)``,
``User.update(email=e).where(...)``. Read by the queryset reader the Django layer uses."""

from __future__ import annotations

from typing import Optional

from keydrift.analysis.chains import Chain, ChainInfo, Layer, Names, Route, is_model_name
from keydrift.analysis.layers.querysets import model_chain
from keydrift.frameworks import model_classes as classes


def recognize(chain: Chain) -> Optional[ChainInfo]:
    """``Model.<class method>(...)...`` on a model class (not a manager: that is Django's)."""
    if chain.base is None or not is_model_name(chain.base_name) or chain.first_call is None \
            or chain.first not in classes.MODEL_CLASS_METHODS:
        return None
    entity = chain.ctx.model_alias(chain.base_name)
    return model_chain(chain.reader, entity, chain.links, write_chain=chain.first in classes.WRITE_CHAIN_METHODS)


LAYER = Layer("model_classes", "chains started by a class-level call on a model", chain=recognize,
              route=Route(first=Names(classes.MODEL_CLASS_METHODS)))
