"""What a module's text alone tells of whether its functions may read or write a key.

The engine's prefilter analyzes a module whose text holds database vocabulary or a configured
wrapper (``relevant_by_text``); one without is analyzed only when it calls a method the project's
index may resolve to one next to database code, or imports a module whose functions read or
write a key. That last question is asked of the imported module's summaries, unless texts alone
settle it (``ProjectIndex.quiet_closure``): a module says none of ``may_touch_keys_by_text``'s
words, and neither does any module it imports, however deep. Those words are more than the
vocabulary: a database layer recognizes some reads and writes the vocabulary does not name
(a peewee model's ``Account.get(Account.email == e)``, a manager's ``self.get(...)``, a store
client bound by name, ``session.get(Model, pk)``, a helper named by a verb); each layer's route
says which, and ``_ROUTED`` is their text, made from the same framework tables.
"""

from __future__ import annotations

import re
from typing import Iterable

from keydrift.analysis.helpernames import helper_operation
from keydrift.analysis.receivers import calls_resolvable_methods
from keydrift.config import called_name
from keydrift.frameworks import dbapi_sql as dbapi
from keydrift.frameworks import django_orm as django
from keydrift.frameworks import model_classes as classes
from keydrift.frameworks import pymongo_client as mongo
from keydrift.frameworks import sqlalchemy_orm as sqla
from keydrift.patterns import lazy
from keydrift.types import Config
from keydrift.vocabulary import mentions_database


def relevant_by_text(text: str, config: Config) -> bool:
    """Database vocabulary or a configured wrapper: the module may read or write a key itself."""
    return mentions_database(text) or mentions_wrapper(text, config)


def mentions_wrapper(text: str, config: Config) -> bool:
    """A configured reader/writer wrapper is database vocabulary too."""
    return any(called_name(entry) in text for entry in (*config.readers, *config.writers, *config.tables))


def may_touch_keys_by_text(text: str, config: Config) -> bool:
    """Whether a function of the module may read or write a key other than through a function
    of a module it imports: ``relevant_by_text``, a chain a layer's route admits that the
    vocabulary does not name (``_ROUTED``), a call of a helper named by a verb, or of a method
    the index may resolve to one next to database code."""
    return relevant_by_text(text, config) or _ROUTED.search(text) is not None \
        or any(helper_operation(name) for name in set(_CALLED.findall(text))) or calls_resolvable_methods(text)


def _alternatives(names: Iterable[str]) -> str:
    return "|".join(sorted(map(re.escape, names)))


_ROUTED = lazy("|".join((
    # model_classes: a class-level call on a capitalized name (peewee)
    rf"\b[A-Z]\w*\s*\.\s*(?:{_alternatives(classes.MODEL_CLASS_METHODS)})\s*\(",
    # django_orm: a manager's or queryset's own methods, managers by name
    rf"\b(?:self|cls|super\s*\(\s*\))\s*\.\s*(?:{_alternatives(django.MANAGER_SELF_METHODS)})\s*\(",
    rf"objects\s*\.|\b(?:{_alternatives(django.MANAGERS)})\s*\.",
    # redis_client: a store named so (``frameworks.redis_client.STORE_NAME``), or made by a call named so
    r"(?i:redis|valkey|memcache|cache)|\b(?:r|rds|kv|mc|rc)\s*[.\[]",
    # sqlalchemy_orm: session.get(Model, pk), session.add(...), query(...), *_select(...)
    rf"\.\s*(?:{_alternatives(sqla.GET_BY_PK_METHODS)})\s*\(\s*[A-Z]",
    rf"\.\s*(?:{_alternatives(sqla.ADD_METHODS | sqla.ADD_ALL_METHODS)})\s*\(",
    rf"\b(?:{_alternatives(sqla.QUERY_METHODS)})\s*\(|_(?:select|insert|update|delete)\s*\(",
    # pymongo_client: a collection's methods; dbapi_sql: execute and fetch
    rf"\.\s*(?:{_alternatives({*mongo.READS, *mongo.UPDATES, *mongo.DELETES, *mongo.INSERT_ONE, *mongo.INSERT_MANY, *mongo.BULK_WRITE})})\s*\(",
    rf"\.\s*(?:{_alternatives(dbapi.EXECUTE_METHODS | dbapi.EXECUTE_MANY_METHODS)})\s*\(",
)))
_CALLED = lazy(r"([A-Za-z_]\w*)\s*\(")
