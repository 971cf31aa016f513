"""The hash keydrift keys its caches and memos by: BLAKE2b with a 32-byte digest.

Taken from CPython's ``_blake2`` module, which is what ``hashlib.blake2b`` is (hashlib prefers
it to OpenSSL's): importing ``hashlib`` loads OpenSSL's library, 3.4 ms of the start of every
run (a one-file check takes about 0.2 s), and only this hash is needed. BLAKE2b reads about
0.9 GB/s here, against OpenSSL's SHA-256 at 1.7 GB/s with the processor's SHA instructions: a
one-file check of a 120-module project hashes 1.9 MB (1 ms more), a whole-project check about
five times its project's source.

What users keep (report fingerprints, ``output/_common.short_hash``) stays SHA-256.
"""

from __future__ import annotations

try:
    from _blake2 import blake2b as _blake2b
except ImportError:  # an interpreter without CPython's module
    from hashlib import blake2b as _blake2b

DIGEST_SIZE = 32


def hasher(data: bytes = b""):  # type: ignore[no-untyped-def] - the hash object's type is private
    """A hash object fed ``data`` (``update`` adds more)."""
    return _blake2b(data, digest_size=DIGEST_SIZE)


def hex_digest(data: bytes) -> str:
    return _blake2b(data, digest_size=DIGEST_SIZE).hexdigest()


def raw_digest(data: bytes) -> bytes:
    return _blake2b(data, digest_size=DIGEST_SIZE).digest()
