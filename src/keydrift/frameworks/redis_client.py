"""redis-py (and valkey, aioredis), Django's cache framework, cachetools-style mapping stores.

The entity is the key's constant template (``f"lockout:{ident}"`` -> ``lockout:{}``); the key
value is what is interpolated into it.
"""

from __future__ import annotations

import re
from typing import Dict, FrozenSet

# Receivers that are key-value stores, by their name.
STORE_NAME = re.compile(r"(?i)(redis|valkey|cache|memcache|^r$|^rds$|^kv$|^mc$|^rc$)")

# method -> position of the key argument (for hashes and sets: the member/field argument).
READS: Dict[str, int] = {
    "get": 0, "exists": 0, "has_key": 0, "ttl": 0, "pttl": 0, "type": 0, "getex": 0,
}
WRITES: Dict[str, int] = {
    "set": 0, "setex": 0, "psetex": 0, "setnx": 0, "add": 0, "delete": 0, "incr": 0, "incrby": 0,
    "decr": 0, "decrby": 0, "expire": 0, "pexpire": 0, "getdel": 0, "getset": 0, "touch": 0,
}
# Writes that store a value under the key: with one argument, ``cache.set(entry)`` stores an
# object that carries its own key (redis-py's client-side cache, set-like containers), and the
# argument is not the key.
VALUE_WRITES: FrozenSet[str] = frozenset({"set", "setex", "psetex", "setnx", "add", "getset"})
READ_WRITES: FrozenSet[str] = frozenset({"get_or_set"})
# Hashes and sets: the container name is part of the entity, the member is the key.
MEMBER_READS: Dict[str, int] = {"hget": 1, "hexists": 1, "sismember": 1, "zscore": 1, "zrank": 1}
MEMBER_WRITES: Dict[str, int] = {"hset": 1, "hsetnx": 1, "hdel": 1, "hincrby": 1, "sadd": 1, "srem": 1,
                                 "zadd": -1, "zrem": 1}
