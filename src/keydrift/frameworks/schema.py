"""Schema vocabulary for KD3 (uniqueness on keys never canonicalized): which declarations make
a value unique, which column types hold text, which names are natural keys, and what makes a
unique column already canonical (case-insensitive types, collations, functional indexes).

Tables only; the matching code is in ``keydrift.analysis.declarations`` and ``.uniqueness``.
"""

from __future__ import annotations

import re
from typing import Dict, FrozenSet, Optional, Tuple

# -- natural keys ---------------------------------------------------------------------------

# Kinds of natural key, by the name token that announces them. A natural key is a value users
# type or other systems return, so two spellings of one thing arrive: case, slashes, dots.
URL = "url"
EMAIL = "email"
HOST = "host"
USERNAME = "username"
SLUG = "slug"
PATH = "path"
NAME = "name"

NATURAL_KEY_TOKENS: Dict[str, str] = {
    "url": URL, "uri": URL, "link": URL, "href": URL, "permalink": URL, "website": URL,
    "homepage": URL, "endpoint": URL,
    "email": EMAIL, "mail": EMAIL,
    "host": HOST, "hostname": HOST, "domain": HOST, "fqdn": HOST, "subdomain": HOST,
    "username": USERNAME, "login": USERNAME, "handle": USERNAME, "nickname": USERNAME,
    "slug": SLUG,
    "path": PATH, "pathname": PATH,
    "name": NAME,
}

# ``<qualifier>_name`` is a natural key only for these qualifiers (``user_name``, ``team_name``);
# ``first_name``, ``display_name``, ``file_name``, ``model_name`` are not keys users look up.
NAME_QUALIFIERS: Dict[str, str] = {
    "user": USERNAME, "screen": USERNAME, "login": USERNAME, "account": USERNAME,
    "host": HOST, "domain": HOST,
    "team": NAME, "org": NAME, "organization": NAME, "organisation": NAME, "company": NAME,
    "group": NAME, "tag": NAME, "category": NAME, "channel": NAME, "project": NAME,
    "repo": NAME, "repository": NAME, "site": NAME, "workspace": NAME, "tenant": NAME,
}

# A token that makes the value an opaque identifier: compared byte for byte by design, so it
# needs no canonicalization (``url_hash``, ``email_token``, ``external_id``, ``api_key``).
OPAQUE_TOKENS: FrozenSet[str] = frozenset({
    "id", "ids", "uuid", "guid", "ulid", "pk", "token", "key", "hash", "sha", "sha1", "sha256",
    "md5", "digest", "checksum", "fingerprint", "nonce", "secret", "signature", "sig", "code",
    "number", "num", "serial", "etag", "version", "counter", "idx",
})

# Values matched against keys rather than keys themselves: a LIKE pattern, a regular
# expression, a glob, a template (``url_pattern``, ``path_regex``, ``host_glob``).
PATTERN_TOKENS: FrozenSet[str] = frozenset({
    "pattern", "patterns", "regex", "regexp", "re", "glob", "wildcard", "mask", "template", "like",
    "match", "matcher", "rule",
})

# A ``path`` that names a file or a piece of code, not a URL path people type: compared byte
# for byte by the file system or the import system (``file_path``, ``import_path``,
# ``module_path``, ``handler_path``, ``storage_path``).
NON_URL_PATH_TOKENS: FrozenSet[str] = frozenset({
    "file", "filename", "filepath", "dir", "directory", "folder", "disk", "local", "storage", "fs",
    "upload", "media", "static", "module", "import", "dotted", "class", "python", "callable",
    "handler", "task", "function", "func", "package", "binary", "executable", "script", "log",
    "socket", "cache", "config", "settings", "template", "repo", "git", "source", "src", "abs",
    "relative", "rel", "object", "blob", "key",
})
# Head nouns of entities whose bare ``path`` is a file or code path (``Attachment.path``,
# ``Plugin.path``, ``ImportJob.path``).
NON_URL_PATH_ENTITIES: FrozenSet[str] = frozenset({
    "file", "attachment", "upload", "blob", "asset", "image", "media", "module", "plugin",
    "script", "template", "directory", "folder", "backup", "archive", "artifact", "package",
    "job", "task", "import", "export", "snapshot", "log", "repository", "repo", "volume", "mount",
})
# Markup and schema vocabulary: the ``name`` of an XML element, an HTML tag, a schema field or
# a node is an identifier the format defines, not a key people type.
MARKUP_ENTITY_TOKENS: FrozenSet[str] = frozenset({
    "xml", "html", "element", "elements", "node", "nodes", "attribute", "attributes", "schema",
    "field", "fields", "column", "columns", "xpath", "dom",
})

# Display text: uniqueness on it is a presentation choice, and "Hello" vs "hello" may well be
# two titles. Never treated as a natural key.
DISPLAY_TOKENS: FrozenSet[str] = frozenset({"title", "label", "caption", "heading", "subject"})

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def name_tokens(name: str) -> Tuple[str, ...]:
    """``sourceURL`` / ``source_url`` -> ("source", "url")."""
    spaced = _CAMEL.sub("_", name.strip("_"))
    return tuple(t.lower() for t in spaced.split("_") if t)


def natural_key_kind(name: str) -> Optional[str]:
    """The kind of natural key a field name announces, or None for opaque/unknown names."""
    tokens = name_tokens(name)
    if not tokens or any(t in OPAQUE_TOKENS or t in DISPLAY_TOKENS or t in PATTERN_TOKENS for t in tokens):
        return None
    if tokens[-1] == NAME:
        if len(tokens) == 1:
            return NAME
        return NAME_QUALIFIERS.get(tokens[-2])
    for token in reversed(tokens):
        kind = NATURAL_KEY_TOKENS.get(token)
        if kind == PATH and any(t in NON_URL_PATH_TOKENS for t in tokens):
            return None  # file_path, import_path: a file or code path, not a URL path
        if kind is not None and kind != NAME:
            return kind
    return None


# Words that qualify a slug as another source's identifier (``external_slug``, ``upstream_slug``,
# ``dataset_slug``): the other system or data set mints it and it is matched as that source
# spells it, so there is no second spelling for this project to fold. URLs, e-mail addresses,
# user and host names from elsewhere (``remote_url``, ``external_username``) stay keys: those
# arrive in many spellings.
FOREIGN_SOURCE_TOKENS: FrozenSet[str] = frozenset({
    "external", "remote", "upstream", "foreign", "vendor", "provider", "partner", "dataset", "data",
    "imported",
})


def names_foreign_slug(name: str) -> bool:
    """``external_slug``, ``dataset_slug``: a slug another source defines (see above)."""
    tokens = name_tokens(name)
    return len(tokens) > 1 and tokens[-1] == SLUG and any(t in FOREIGN_SOURCE_TOKENS for t in tokens[:-1])


# Words a class name ends with that say what kind of class it is, not what it holds
# (``TagBase``, ``DomainMixin``, ``UserModel``): the head noun is the word before them.
GENERIC_CLASS_TOKENS: FrozenSet[str] = frozenset({
    "base", "mixin", "model", "abstract", "record", "row", "entity", "table", "orm", "db", "obj",
})


def _head_first(tokens: Tuple[str, ...]) -> Tuple[str, ...]:
    """Tokens without the generic class words at the end (``TagBase`` -> ("tag",))."""
    while len(tokens) > 1 and tokens[-1] in GENERIC_CLASS_TOKENS:
        tokens = tokens[:-1]
    return tokens


def names_files_or_code(entity: str) -> bool:
    """Whether a bare ``path`` of ``entity`` is a file or code path (``Attachment.path``)."""
    tokens = _head_first(name_tokens(entity))
    return bool(tokens) and any(w in NON_URL_PATH_ENTITIES for w in _singulars(tokens[-1]))


def names_kind_of_thing(entity: str) -> bool:
    """Whether a bare ``name`` of ``entity`` is a natural key: the entity is a thing people name
    and look up by name (``Tag``, ``ThreadCategory``, ``Team``, a ``groups`` table, ``Handle``,
    ``Domain``), as ``tag_name`` or ``team_name`` would be. The name of a migration, a job, an
    author or a food item is a label the code or a person defines, not a key typed twice in two
    spellings."""
    tokens = _head_first(name_tokens(entity))
    if not tokens or any(t in MARKUP_ENTITY_TOKENS for t in tokens):
        return False
    # The head noun decides: a ``HomepageElement`` is an element (its name is a label the code
    # defines), a ``ThreadCategory`` a category, a ``DomainAlias`` an alias.
    for word in _singulars(tokens[-1]):
        if word in NAME_QUALIFIERS or NATURAL_KEY_TOKENS.get(word) in NAMED_KINDS:
            return True
    return False


# Natural-key kinds whose records are looked up by their name (``Domain.name``, ``Host.name``,
# ``Handle.name``); a ``Link`` or a ``Page`` is looked up by its address, not its name.
NAMED_KINDS: FrozenSet[str] = frozenset({HOST, USERNAME})


def _singulars(token: str) -> Tuple[str, ...]:
    """``categories`` -> category, ``tags`` -> tag, ``hosts`` -> host (table names)."""
    if token.endswith("ies") and len(token) > 4:
        return token, token[:-3] + "y"
    if token.endswith("s") and len(token) > 3:
        return token, token[:-1]
    return (token,)


# Two spellings of one natural key, per kind, for messages.
COLLIDING_SPELLINGS: Dict[str, str] = {
    URL: '"https://Example.com/a" and "https://example.com/a/" become two rows',
    EMAIL: '"Bob@Example.com" and "bob@example.com" become two rows',
    HOST: '"Example.com" and "example.com." become two rows',
    USERNAME: '"Alice" and "alice" become two rows',
    SLUG: '"My-Post" and "my-post" become two rows',
    PATH: '"/about" and "/about/" become two rows',
    NAME: '"Python" and "python " become two rows',
}

# Kinds a case-insensitive constraint fully canonicalizes; URLs and paths also need slashes,
# ports and percent-encoding settled, which only a normalizer does.
CASE_ONLY_KINDS: FrozenSet[str] = frozenset({EMAIL, HOST, USERNAME, SLUG, NAME})

# Words in a configured normalizer's qualified name that say which kinds it canonicalizes
# (``app.urls.canonical`` -> url, ``accounts.normalize_email`` -> email).
NORMALIZER_KIND_WORDS: Dict[str, str] = {
    "url": URL, "urls": URL, "uri": URL, "uris": URL, "link": URL, "links": URL, "href": URL,
    "email": EMAIL, "emails": EMAIL, "mail": EMAIL, "address": EMAIL,
    "host": HOST, "hosts": HOST, "hostname": HOST, "domain": HOST, "domains": HOST,
    "username": USERNAME, "usernames": USERNAME, "login": USERNAME, "handle": USERNAME,
    "user": USERNAME, "users": USERNAME,
    "slug": SLUG, "slugs": SLUG,
    "path": PATH, "paths": PATH,
    "name": NAME, "names": NAME,
}

# -- declarations ---------------------------------------------------------------------------

UNIQUE_KEYWORDS: FrozenSet[str] = frozenset({"unique", "primary_key"})

# Django / peewee / Tortoise / mongoengine field classes (last name of the callee) that hold text.
TEXT_FIELD_CLASSES: FrozenSet[str] = frozenset({
    "CharField", "EmailField", "URLField", "SlugField", "TextField", "FixedCharField",
    "StringField",
})
# SQLAlchemy column types that hold text.
TEXT_COLUMN_TYPES: FrozenSet[str] = frozenset({
    "String", "Unicode", "Text", "UnicodeText", "VARCHAR", "NVARCHAR", "CHAR", "NCHAR", "TEXT",
    "CLOB", "Varchar", "CITEXT", "CIText",
})
# Annotations of a text attribute: ``Mapped[str]``, SQLModel ``email: str``.
TEXT_ANNOTATIONS: FrozenSet[str] = frozenset({"str", "EmailStr", "HttpUrl", "AnyUrl", "AnyHttpUrl"})
# Calls that declare a SQLAlchemy/SQLModel column; their type is an argument or the annotation.
COLUMN_CALLS: FrozenSet[str] = frozenset({"Column", "mapped_column", "Field"})

# Relations: the column holds the referenced row's key (``email = ForeignKey("Email")``); its
# canonicalization belongs to the referenced table, so it is never text here.
RELATION_FIELD_CALLS: FrozenSet[str] = frozenset({
    "ForeignKey", "ForeignObject", "GenericForeignKey", "ParentalKey", "TreeForeignKey",
    "ForeignKeyField", "ManyToManyField", "OneToOneField", "ParentalManyToManyField", "ReferenceField",
    "LazyReferenceField", "DeferredForeignKey",
})
# A field whose values are chosen from a fixed list the code defines (``choices=``) is an
# enumeration, not a natural key people type.
ENUMERATION_KEYWORDS: FrozenSet[str] = frozenset({"choices"})
# A field whose default is a value the code generates (``default=uuid4``, a function or lambda
# returning ``get_random_string(32)``) holds identifiers nobody types: they have one spelling.
# uuid3/uuid5 are left out: they are derived from a name, which may come in two spellings.
DEFAULT_KEYWORDS: FrozenSet[str] = frozenset({"default", "default_factory"})
GENERATOR_CALLS: FrozenSet[str] = frozenset({
    "uuid1", "uuid4", "uuid6", "uuid7", "token_urlsafe", "token_hex", "token_bytes",
    "get_random_string", "urandom", "randbytes", "getrandbits",
})

# Separate constraints and indexes.
UNIQUE_CONSTRAINT_CALLS: FrozenSet[str] = frozenset({"UniqueConstraint"})
INDEX_CALLS: FrozenSet[str] = frozenset({"Index"})
TABLE_CALLS: FrozenSet[str] = frozenset({"Table"})
# A CHECK constraint (Django ``CheckConstraint(check=/condition=Q(...))``, SQLAlchemy
# ``CheckConstraint("sql")``), and Django's keywords for its condition and its ``Q`` object.
CHECK_CONSTRAINT_CALLS: FrozenSet[str] = frozenset({"CheckConstraint"})
CHECK_CONDITION_KEYWORDS: Tuple[str, ...] = ("condition", "check", "sqltext")
DJANGO_CONDITION_CALLS: FrozenSet[str] = frozenset({"Q"})
DJANGO_FIELD_REFERENCES: FrozenSet[str] = frozenset({"F"})
MONGO_INDEX_METHODS: FrozenSet[str] = frozenset({"create_index", "ensure_index"})
MONGO_INDEXES_METHODS: FrozenSet[str] = frozenset({"create_indexes"})
MONGO_INDEX_MODEL: FrozenSet[str] = frozenset({"IndexModel"})

# Meta/__table_args__ attributes that hold constraints.
DJANGO_META_CONSTRAINTS: FrozenSet[str] = frozenset({"constraints", "indexes"})
DJANGO_UNIQUE_TOGETHER: FrozenSet[str] = frozenset({"unique_together"})
# Base classes of factory_boy factories (``DjangoModelFactory``, ``SQLAlchemyModelFactory``):
# their ``Meta.model`` makes test records, not a form users type into
TEST_FACTORY_BASE_SUFFIX = "Factory"
# ``Meta.managed = False``: the table belongs to another program (no migrations made for it)
DJANGO_MANAGED = "managed"
SQLALCHEMY_TABLE_ARGS: FrozenSet[str] = frozenset({"__table_args__"})

# -- what makes a unique key canonical already ------------------------------------------------

# SQL functions and ORM expressions that canonicalize inside a functional unique index.
CANONICALIZING_SQL_FUNCTIONS: FrozenSet[str] = frozenset({
    "lower", "upper", "Lower", "Upper", "lcase", "ucase", "casefold", "trim", "Trim",
})
# Field/type class names that store a canonical value (``LowercaseEmailField``,
# sqlalchemy_utils ``EmailType`` which lowercases) or compare case-insensitively.
CANONICAL_CLASS_NAME = re.compile(r"lower|caseinsensitive|case_insensitive|normali[sz]ed|canonical|citext", re.I)
CANONICAL_TYPES: FrozenSet[str] = frozenset({"EmailType", "CIText", "CITEXT"})

# Methods of a custom field/type class that run on every stored value.
STORING_METHODS: FrozenSet[str] = frozenset({
    "get_prep_value", "to_python", "process_bind_param", "pre_save", "get_db_prep_value",
    "db_value", "coerce_compared_value", "process_literal_param",
})
# Methods of a model that run when a value is stored or assigned (beyond models.SAVING_METHODS).
ASSIGNING_METHODS: FrozenSet[str] = frozenset({"__init__", "__post_init__", "__setattr__"})
# SQLAlchemy's decorator of a class-body method whose result is the attribute (a column).
DECLARED_ATTRIBUTE_DECORATORS: FrozenSet[str] = frozenset({"declared_attr"})
# String methods that cut a part out of a value (``local, domain = email.rsplit("@", 1)``):
# canonicalizing only that part leaves the whole key uncanonical.
PART_CUTTING_METHODS: FrozenSet[str] = frozenset({"split", "rsplit", "partition", "rpartition"})
# Decorators of methods that validate/convert an attribute (SQLAlchemy, pydantic/SQLModel).
VALIDATOR_DECORATORS: FrozenSet[str] = frozenset({
    "validates", "validator", "field_validator", "setter", "before_validator",
})
# Decorators of a pydantic model's per-field validators (v1 ``@validator("email")``, v2
# ``@field_validator("email")``): what the method returns is the field's value in every instance.
FIELD_VALIDATOR_DECORATORS: FrozenSet[str] = frozenset({"validator", "field_validator"})
# String methods and functions that canonicalize a value stored by a custom field or save().
CANONICALIZING_CALLS: FrozenSet[str] = frozenset({
    "lower", "casefold", "upper", "strip", "rstrip", "lstrip", "slugify", "normalize",
    "removeprefix", "removesuffix", "encode",
})
# In-house slug makers named for slugify (``slugify_uniquely(name, Model)``): a slug with a
# ``-2`` suffix appended is still lowercase and dash-separated, so canonical by construction.
SLUG_MAKER_PREFIXES: Tuple[str, ...] = ("slugify_",)

# Case-insensitive SQL column types and collation names: the one list KD1 (what a column
# absorbs when compared) and KD3 (what makes a unique column canonical) both read.
# ``utf8mb4_general_ci``, ``NOCASE``, ``Latin1_General_CI_AS``, ICU ``und-u-ks-level2``
# (strength 1 or 2: case ignored), a collation named ``case_insensitive``.
CASE_INSENSITIVE_SQL_TYPES: FrozenSet[str] = frozenset({"citext"})
CASE_INSENSITIVE_COLLATION = re.compile(r"nocase|_ci\b|_ci_|[-_]ci\b|insensitive|ks-level[12]", re.I)
# Field/type classes that compare case-insensitively: PostgreSQL CITEXT, and Django's
# ``CICharField``/``CIEmailField``/``CITextField`` (a ``CI`` prefix before a capital).
CASE_INSENSITIVE_TYPES: FrozenSet[str] = frozenset({"CITEXT", "CIText", "citext"})


def is_case_insensitive_collation(text: str) -> bool:
    """Whether a collation name (or the source text naming it) ignores case."""
    return CASE_INSENSITIVE_COLLATION.search(text) is not None


def is_case_insensitive_class(name: str) -> bool:
    """``CIEmailField``, ``CITEXT``: a field or column type that compares case-insensitively."""
    return name in CASE_INSENSITIVE_TYPES or (name.startswith("CI") and name[2:3].isupper())


# MongoDB collation strengths 1 and 2 ignore case.
MONGO_CASE_INSENSITIVE_STRENGTHS: FrozenSet[str] = frozenset({"1", "2", "PRIMARY", "SECONDARY"})

# SQL text worth handing to the DDL reader: it starts (after comments) with CREATE or ALTER.
DDL_START = re.compile(r"^\s*(?:(?:--[^\n]*|/\*.*?\*/)\s*)*(?:create|alter)\b", re.I | re.S)
SQL_TEXT_TYPES: FrozenSet[str] = frozenset({
    "TEXT", "VARCHAR", "CHAR", "NVARCHAR", "NCHAR", "STRING", "CLOB", "NTEXT", "BPCHAR",
    "MEDIUMTEXT", "LONGTEXT", "TINYTEXT", "NAME",
})
