"""Transformations of key values that are not tied to a database layer.

Kinds are the values of ``StepKind`` (``keydrift.analysis.facts``), spelled as strings: case,
whitespace, slash, url, unicode, idna, slug, normalizer, format, call, rederived, fetch; a test
checks each one is a member.
"""

from __future__ import annotations

import re
from typing import Dict, FrozenSet

# str methods that change a key's bytes, by kind.
STRING_METHODS: Dict[str, str] = {
    "lower": "case",
    "upper": "case",
    "casefold": "case",
    "capitalize": "case",
    "title": "case",
    "swapcase": "case",
    "strip": "whitespace",
    "lstrip": "whitespace",
    "rstrip": "whitespace",
    "removeprefix": "url",
    "removesuffix": "url",
    "replace": "format",
    "zfill": "format",
    "ljust": "format",
    "rjust": "format",
    "expandtabs": "whitespace",
    "normalize": "normalizer",
    "geturl": "url",
}

# str methods that cut the key into pieces: an element of the result keeps part of the key.
SPLIT_METHODS: FrozenSet[str] = frozenset({"split", "rsplit", "partition", "rpartition", "splitlines"})

# URL builders that take the parts as one tuple or list: ``urlunsplit((scheme, host, ...))``.
PART_TUPLE_FUNCTIONS: FrozenSet[str] = frozenset({"urlunsplit", "urlunparse"})

# Methods that return the value itself, converted: not a transformation of the key.
NEUTRAL_METHODS: FrozenSet[str] = frozenset({"decode", "copy", "__str__"})

# Functions that change a key's bytes, by the last component of their (qualified) name.
FUNCTIONS: Dict[str, str] = {
    "urljoin": "url",
    "urlunsplit": "url",
    "urlunparse": "url",
    "urldefrag": "url",
    "quote": "url",
    "quote_plus": "url",
    "unquote": "url",
    "unquote_plus": "url",
    "normpath": "url",
    "iri_to_uri": "url",
    "uri_to_iri": "url",
    "escape_uri_path": "url",
    "add_or_replace_parameter": "url",
    "safe_url_string": "url",
    "canonicalize_url": "normalizer",
    "url_normalize": "normalizer",
    "normalize_email": "normalizer",
    "normalize_username": "normalizer",
    # not ``clean_username``: a hook (Django's RemoteUserBackend, allauth's account adapter)
    # that validates and returns the name unchanged unless a project overrides it, and a
    # project's own definition is read from its code
    "slugify": "slug",
    "unidecode": "unicode",
    "to_ascii": "idna",
    "to_unicode": "idna",
    "punycode": "idna",
}

# Qualified functions whose kind depends on the module, checked before FUNCTIONS.
QUALIFIED_FUNCTIONS: Dict[str, str] = {
    "unicodedata.normalize": "unicode",
    "idna.encode": "idna",
    "idna.decode": "idna",
    "os.path.normpath": "url",
    "posixpath.normpath": "url",
}

# Calls whose result is a fetched response: an attribute of it (``.url``) is re-derived.
FETCH_FUNCTIONS: FrozenSet[str] = frozenset({
    "requests.get", "requests.head", "requests.post", "requests.put", "requests.request",
    "httpx.get", "httpx.head", "httpx.post", "httpx.request", "urlopen",
    "urllib.request.urlopen", "feedparser.parse", "socket.getfqdn", "socket.gethostbyaddr",
})

# A framework field's conversions of one value, called on ``super()`` by a field class that
# overrides them (``return super().to_python(value).lower()``): the base's conversion of the
# value given, which keeps it the same key (a base that trims is not seen).
BASE_CONVERSIONS: FrozenSet[str] = frozenset({"to_internal_value", "to_python", "clean", "get_prep_value"})

# Plain conversions: the value is the same key, in another type.
CONVERSIONS: FrozenSet[str] = frozenset({
    "str", "int", "float", "bool", "bytes", "UUID", "uuid.UUID", "Decimal", "decimal.Decimal",
    "repr", "ObjectId", "bson.ObjectId", "force_str", "force_text", "smart_str", "text_type",
    "cast", "typing.cast", "deepcopy", "copy", "bytearray", "memoryview", "list", "tuple", "set",
    "frozenset", "sorted",
})

# Builtin names are never the origin of a key (``as_type=str`` passes a type, not a value).
BUILTIN_NAMES: FrozenSet[str] = frozenset(n for n in dir(__import__("builtins")) if not n.startswith("_"))

# A function whose name says it normalizes (zero-config heuristic, also used by KD2).
NORMALIZER_NAME = re.compile(
    r"(?:^|_)(?:normali[sz]e|canonical(?:i[sz]e)?|canonicali[sz]e|clean_\w*url|saniti[sz]e_\w*(?:url|email|key|name))",
    re.IGNORECASE,
)
