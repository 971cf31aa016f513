"""KD3 (uniqueness on keys never canonicalized) and KD4 (defects inside normalizers): the
detection logic that the annotated cases under fixtures/cases do not pin down one by one."""

import textwrap
from pathlib import Path

import pytest

from keydrift.analysis import normalizer_names, normalizers, uniqueness
from keydrift.engine import check_source
from keydrift.frameworks import schema
from keydrift.rules import RULES_BY_CODE
from keydrift.rules._base import REQUIRED_SECTIONS
from keydrift.types import Config

KD3_KD4 = sorted(c for c in RULES_BY_CODE if c.startswith(("KD3", "KD4")))
CONFIGURED = Config(root=".", normalizers=("app.urls.canonical",), boundary=("app.models",), cache=False)


def found(source, path="app/mod.py", config=None, family=("KD3", "KD4")):
    """(code, line) of the KD3/KD4 findings for a dedented snippet."""
    text = textwrap.dedent(source)
    return [(f.code, f.line) for f in check_source(text, path, config or Config(cache=False)) if f.code.startswith(family)]


def codes(source, **kwargs):
    return [code for code, _ in found(source, **kwargs)]


# -- documentation ------------------------------------------------------------------------------

@pytest.mark.parametrize("code", KD3_KD4)
def test_rule_documents_required_sections_and_configuration(code):
    sections = RULES_BY_CODE[code].sections()
    assert set(REQUIRED_SECTIONS) <= set(sections), sections
    assert "Configuration" in sections


# -- natural keys ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name, kind", [
    ("email", schema.EMAIL), ("email_address", schema.EMAIL), ("contactEmail", schema.EMAIL),
    ("url", schema.URL), ("source_url", schema.URL), ("homepage", schema.URL), ("href", schema.URL),
    ("hostname", schema.HOST), ("domain_name", schema.HOST), ("fqdn", schema.HOST),
    ("username", schema.USERNAME), ("user_name", schema.USERNAME), ("login", schema.USERNAME),
    ("handle", schema.USERNAME), ("slug", schema.SLUG), ("path", schema.PATH),
    ("name", schema.NAME), ("team_name", schema.NAME),
])
def test_natural_key_names(name, kind):
    assert schema.natural_key_kind(name) == kind


@pytest.mark.parametrize("name", [
    "id", "external_id", "uuid", "api_token", "url_hash", "email_token", "pdf_sha256",
    "idempotency_key", "title", "subject", "first_name", "display_name", "file_name", "model_name",
    "created_at", "status",
])
def test_opaque_and_display_names_are_not_natural_keys(name):
    assert schema.natural_key_kind(name) is None


# -- KD301 / KD302 ------------------------------------------------------------------------------

def test_plain_unique_email_is_reported_at_its_line():
    assert found('''
        from django.db import models

        class User(models.Model):
            email = models.EmailField(unique=True)
    ''') == [("KD301", 5)]


def test_message_says_what_why_and_what_to_do():
    [finding] = check_source("class User(Model):\n    email = models.EmailField(unique=True)\n", "m.py",
                             Config(cache=False))
    assert finding.message.startswith("KD301 User.email is unique but never canonicalized")
    assert '"Bob@Example.com" and "bob@example.com" become two rows' in finding.message
    assert "case-insensitive unique constraint" in finding.message


def test_non_text_and_foreign_key_columns_are_not_reported():
    assert codes('''
        class Link(Base):
            url_id = Column(Integer, unique=True)
            url = Column(Integer, unique=True)
            path = mapped_column(ForeignKey("paths.id"), unique=True)
            slug = models.ForeignKey(Slug, unique=True, on_delete=models.CASCADE)
    ''') == []


def test_mapped_annotation_decides_the_type_without_a_type_argument():
    assert codes('''
        class Member(Base):
            username: Mapped[str] = mapped_column(unique=True)
            nickname: Mapped[int] = mapped_column(unique=True)
            handle: Mapped[Optional[str]] = mapped_column(unique=True)
    ''') == ["KD301", "KD301"]


@pytest.mark.parametrize("declaration", [
    'email = CICharField(max_length=200, unique=True)',
    'email = models.EmailField(unique=True, db_collation="case_insensitive")',
    'email = Column(CITEXT, unique=True)',
    'email = Column(String(200, collation="NOCASE"), unique=True)',
    'email = Column(LowerCaseString(200), unique=True)',
    'email = LowercaseEmailField(unique=True)',
    'email = Column(EmailType, unique=True)',
])
def test_case_insensitive_or_canonical_columns_are_silent(declaration):
    assert codes(f"class User(Base):\n    {declaration}\n") == []


def test_rewrite_in_save_init_setter_and_validator_is_canonicalization():
    assert codes('''
        class A(models.Model):
            email = models.EmailField(unique=True)
            def save(self, *args, **kwargs):
                if self.email:
                    self.email = self.email.lower()
                super().save(*args, **kwargs)

        class B(Base):
            handle = Column(String, unique=True)
            def __init__(self, handle):
                self.handle = normalize_handle(handle)

        class C(Base):
            _login = Column("login", String, unique=True)
            @hybrid_property
            def login(self):
                return self._login
            @login.setter
            def login(self, value):
                self._login = value.casefold()

        class D(SQLModel, table=True):
            email: str = Field(unique=True)
            @field_validator("email")
            def lower_email(cls, value):
                return value.lower()
    ''') == []


def test_rewrite_of_another_field_does_not_count():
    assert codes('''
        class A(models.Model):
            email = models.EmailField(unique=True)
            name = models.CharField(max_length=20)
            def save(self, *args, **kwargs):
                self.name = self.name.lower()
                super().save(*args, **kwargs)
    ''') == ["KD301"]


def test_custom_field_class_that_lowercases_in_get_prep_value():
    source = '''
        class KeyField(models.CharField):
            def get_prep_value(self, value):
                return super().get_prep_value(value).lower()

        class PlainField(models.CharField):
            pass

        class Tag(models.Model):
            name = KeyField(max_length=20, unique=True)
            slug = PlainField(max_length=20, unique=True)
    '''
    assert found(source) == [("KD301", 11)]


def test_type_decorator_that_normalizes_in_process_bind_param():
    assert codes('''
        class Url(TypeDecorator):
            impl = String
            def process_bind_param(self, value, dialect):
                return canonical_url(value)

        class Page(Base):
            url = Column(Url, unique=True)
    ''') == []


def test_functional_unique_constraint_covers_the_field_and_plain_one_does_not():
    assert found('''
        class Customer(models.Model):
            number = models.CharField(max_length=10, unique=True)
            email = models.EmailField()
            handle = models.CharField(max_length=30)

            class Meta:
                constraints = [
                    models.UniqueConstraint(Lower("email").desc(), name="ci_email"),
                    models.UniqueConstraint(fields=["handle"], name="uq_handle"),
                ]
    ''') == [("KD302", 10)]


@pytest.mark.parametrize("source", [
    "class A(Model):\n    class Meta:\n        constraints = [UniqueConstraint(fields=['email'], name='u')]\n",
    "SCHEMA = 'CREATE TABLE pages (url TEXT PRIMARY KEY)'\n",
    "def clean_email(raw):\n    return raw.lstrip('mailto:')\n",
])
def test_engine_prefilter_lets_kd3_kd4_vocabulary_through(source):
    assert codes(source) != []


def test_sqlalchemy_functional_index_and_composite_constraint():
    assert found('''
        class User(Base):
            __tablename__ = "users"
            __table_args__ = (
                Index("ix_email", func.lower(email), unique=True),
                UniqueConstraint("org_id", "username"),
            )
            id = Column(Integer, primary_key=True)
            email = Column(String, nullable=False)
            username = Column(String, nullable=False)

        Index("ix_user_username", User.username, unique=True)
    ''') == [("KD302", 6), ("KD302", 12)]


def test_unique_together_forms():
    assert codes('''
        class Page(models.Model):
            site = models.ForeignKey(Site, on_delete=models.CASCADE)
            path = models.CharField(max_length=200)
            class Meta:
                unique_together = ("site", "path")

        class Alias(models.Model):
            site = models.ForeignKey(Site, on_delete=models.CASCADE)
            slug = models.SlugField()
            class Meta:
                unique_together = (("site", "slug"),)
    ''') == ["KD302", "KD302"]


def test_core_table_columns_and_constraints():
    assert found('''
        users = Table(
            "users", metadata,
            Column("id", Integer, primary_key=True),
            Column("email", String(320), unique=True),
            Column("login", String(64)),
            UniqueConstraint("login"),
        )
    ''') == [("KD301", 5), ("KD302", 7)]


# -- SQL DDL ------------------------------------------------------------------------------------

def test_ddl_items_read_columns_constraints_and_functional_indexes():
    items = uniqueness.ddl_items(
        "CREATE TABLE t (id INTEGER PRIMARY KEY, email TEXT UNIQUE, n INT UNIQUE, "
        "login CITEXT UNIQUE, CONSTRAINT uq UNIQUE (slug));"
        "CREATE UNIQUE INDEX ix ON t (lower(email)); CREATE UNIQUE INDEX ix2 ON t (handle)")
    unique = {(table, columns) for kind, table, columns, _ in items if kind == "unique"}
    canonical = {(table, columns) for kind, table, columns, _ in items if kind == "canonical"}
    types = {columns[0]: detail for kind, _, columns, detail in items if kind == "column"}
    assert unique == {("t", ("id",)), ("t", ("email",)), ("t", ("n",)), ("t", ("login",)),
                      ("t", ("slug",)), ("t", ("handle",))}
    assert canonical == {("t", ("email",))}
    assert types["email"] == ("text", "") and types["n"][0] == "other"
    assert types["login"] == ("text", "a CITEXT column")


def test_ddl_items_alter_table_and_malformed_sql():
    assert uniqueness.ddl_items("ALTER TABLE users ADD CONSTRAINT uq UNIQUE (email)") == (
        ("unique", "users", ("email",), ("ALTER TABLE ... ADD UNIQUE",)),)
    assert uniqueness.ddl_items("CREATE UNIQUE INDEX ON (((") == ()


def test_ddl_in_strings_functions_and_text_calls():
    assert found('''
        def setup(conn):
            conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT UNIQUE, age INT UNIQUE)")
            conn.execute(text("CREATE UNIQUE INDEX ix ON accounts (lower(login))"))
            conn.execute(text("CREATE UNIQUE INDEX ix2 ON accounts (handle COLLATE NOCASE)"))
            conn.execute(f"CREATE UNIQUE INDEX ix3 ON {TABLE} (username)")
            conn.execute("SELECT email FROM users WHERE email = ?", (email,))
    ''') == [("KD302", 3), ("KD302", 6)]


def test_ddl_functional_index_covers_the_model_of_the_table():
    assert codes('''
        class User(Base):
            __tablename__ = "users"
            email = Column(String, unique=True)

        def migrate(conn):
            conn.execute("CREATE UNIQUE INDEX ix ON users (lower(email))")
    ''') == []


# -- MongoDB --------------------------------------------------------------------------------------

def test_mongo_unique_indexes_and_collations():
    assert found('''
        def indexes(db):
            db.users.create_index("email", unique=True)
            db["users"].create_index([("login", 1), ("tenant_id", 1)], unique=True)
            db.users.create_index("handle", unique=True, collation={"locale": "en", "strength": 2})
            db.users.create_index("nickname", unique=True, collation=Collation("en", strength=3))
            db.users.create_index("username")
            db.tokens.create_index("token", unique=True)
            op.create_index("ix_users_email", "users", ["email"], unique=True)
    ''') == [("KD302", 3), ("KD302", 4), ("KD302", 6)]


# -- configured normalizers -----------------------------------------------------------------------

def test_configured_normalizer_covers_the_kinds_it_names():
    assert uniqueness.configured_cover(schema.URL, "app.models", CONFIGURED)
    assert not uniqueness.configured_cover(schema.EMAIL, "app.models", CONFIGURED)


def test_generic_configured_normalizer_covers_boundary_modules_only():
    config = Config(normalizers=("app.keys.normalize_key",), boundary=("app.models",))
    assert uniqueness.configured_cover(schema.EMAIL, "app.models", config)
    assert not uniqueness.configured_cover(schema.EMAIL, "app.other", config)
    assert uniqueness.configured_cover(schema.EMAIL, "anything", Config(normalizers=("keys.normalize",)))


def test_zero_config_module_normalizer_call_covers_its_kind():
    assert codes('''
        class Manager(BaseUserManager):
            def create_user(self, email):
                email = self.normalize_email(email).lower()
                return self.model(email=email)

        class User(AbstractBaseUser):
            email = models.EmailField(unique=True)
            username = models.CharField(max_length=20, unique=True)
    ''') == ["KD301"]


# -- which functions are normalizers --------------------------------------------------------------

@pytest.mark.parametrize("name", [
    "normalize_url", "normalise_url", "canonical_url", "canonicalize", "get_canonical_url",
    "url_normalize", "_normalize", "clean_url", "clean_email", "sanitize_url", "norm_host",
    "canonical", "standardize_domain",
])
def test_zero_config_normalizer_names(name):
    assert normalizer_names.looks_like_normalizer(name)


@pytest.mark.parametrize("name", [
    "normalize_whitespace_in_text", "normalize_title", "canonical_html", "fetch_url",
    "clean", "url_for", "cleanup_sessions",
])
def test_names_that_are_not_key_normalizers(name):
    assert not normalizer_names.looks_like_normalizer(name)


def test_configured_normalizers_are_authoritative():
    source = '''
        def canonical(u):
            return u.lstrip("www.")

        def normalize_host(h):
            return h.lstrip("www.")
    '''
    assert found(source, config=CONFIGURED) == [("KD404", 3)]
    assert found(source) == [("KD404", 3), ("KD404", 6)]


def test_module_name_of_paths():
    config = Config(root="/proj")
    assert normalizer_names.module_name_of("/proj/app/models.py", config) == "app.models"
    assert normalizer_names.module_name_of("/proj/app/__init__.py", config) == "app"
    assert normalizer_names.module_name_of("app/urls.py", Config(root="/elsewhere")) == "app.urls"


# -- KD401 ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("imports, call", [
    ("from urllib.parse import urlsplit", "urlsplit(url)"),
    ("from urllib.parse import urlparse as parse", "parse(url)"),
    ("import urllib.parse", "urllib.parse.urlparse(url)"),
    ("import urllib.parse as up", "up.urlsplit(url.strip())"),
    ("from urllib import parse", "parse.urlsplit(url)"),
])
def test_kd401_recognizes_urllib_however_imported(imports, call):
    assert codes(f"{imports}\n\ndef normalize_url(url):\n    return {call}.netloc\n") == ["KD401"]


def test_kd401_ignores_other_libraries_urlparse():
    assert codes("from w3lib.url import urlparse\n\ndef normalize_url(url):\n    return urlparse(url)\n") == []


@pytest.mark.parametrize("body", [
    'if "://" not in url:\n        url = "https://" + url\n    return urlsplit(url)',
    'if not url.startswith(("http://", "https://")):\n        raise ValueError(url)\n    return urlsplit(url)',
    'return urlsplit(url if "://" in url else "//" + url)',
    'parts = urlsplit(url)\n    if not parts.netloc:\n        parts = urlsplit("https://" + url)\n    return parts',
    'if not urlsplit(url).scheme:\n        url = "https://" + url\n    return url',
    'if not looks_valid(url):\n        raise ValueError(url)\n    return urlsplit(url)',
])
def test_kd401_guards(body):
    assert codes(f"from urllib.parse import urlsplit\n\ndef normalize_url(url):\n    {body}\n") == []


def test_kd401_docstring_mentioning_a_scheme_is_no_guard():
    assert codes('''
        from urllib.parse import urlsplit

        def canonical_url(url):
            """https://Example.com -> https://example.com"""
            parts = urlsplit(url)
            return parts._replace(netloc=parts.netloc.lower()).geturl()
    ''') == ["KD401"]


def test_kd401_round_trip_reads_no_host():
    assert codes('''
        from urllib.parse import urlparse, urlsplit, urlunparse

        def normalize_url(url):
            return urlunparse(urlparse(url))

        def canonical_url(url):
            return urlsplit(url)._replace(fragment="").geturl()
    ''') == []


# -- KD402 ----------------------------------------------------------------------------------------

def test_kd402_fallbacks_and_a_raise_that_handles_them():
    base = ('from urllib.parse import urlsplit\n\ndef normalize_host(url):\n'
            '    p = urlsplit(url if "://" in url else "https://" + url)\n')
    assert codes(base + '    return (p.hostname or "").lower()\n') == ["KD402"]
    assert codes(base + '    return getattr(p, "netloc", "")\n') == ["KD402"]
    assert codes(base + '    host = p.hostname\n    return host or "localhost"\n') == ["KD402"]
    handled = '    if not p.hostname:\n        raise ValueError(url)\n    return (p.hostname or "").lower()\n'
    assert codes(base + handled) == []
    assert codes(base + '    host = p.hostname or ""\n    assert host, url\n    return host\n') == []


# -- KD403 ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("body, expected", [
    ('return path.rstrip("/")', ["KD403"]),
    ('return path.rstrip("/") or "/"', []),
    ('path = path.rstrip("/")\n    return path or "/"', []),
    ('path = path.rstrip("/")\n    if not path:\n        path = "/"\n    return path', []),
    ('return path.rstrip("/") + "/"', []),
    ('path = path.rstrip("/")\n    return f"{path}/"', []),
    ('if len(path) > 1:\n        path = path.rstrip("/")\n    return path', []),
    ('return path.rstrip(" ")', []),
    ('return self_prefix.rstrip("/")', []),
])
def test_kd403_root_restoration(body, expected):
    assert codes(f"def canonical_path(path):\n    {body}\n") == expected


# -- KD404 ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("chars, word", [
    ("www.", True), (".com", True), ("https://", True), ("mailto:", True), ("www", True),
    ("/", False), (" \t\n", False), ("./", False), ("<>", False), (".", False), ("abc", False),
])
def test_kd404_prefix_words_versus_character_sets(chars, word):
    assert normalizers.looks_like_word(chars) is word


# -- KD405 ----------------------------------------------------------------------------------------

SPLIT = "urlsplit(url if '://' in url else 'https://' + url)"


@pytest.mark.parametrize("body, expected", [
    ("return url.strip().lower()", ["KD405"]),
    (f"return urlunsplit({SPLIT}).casefold()", ["KD405"]),
    (f"p = {SPLIT}\n    return f'{{p.scheme}}://{{p.netloc}}{{p.path}}'.lower()", ["KD405"]),
    (f"p = {SPLIT}\n    return p._replace(netloc=p.netloc.lower()).geturl()", []),
    ("return urlsplit('//' + url.lower()).hostname", []),
    ("if url.lower().startswith('http'):\n        return url\n    return 'https://' + url", []),
    (f"p = {SPLIT}\n    return (p.scheme + '://' + p.netloc).lower()", []),
])
def test_kd405_whole_url_versus_host(body, expected):
    source = f"from urllib.parse import urlsplit, urlunsplit\n\ndef normalize_url(url):\n    {body}\n"
    assert codes(source) == expected


def test_kd405_needs_a_url_input():
    assert codes("def normalize_email(email):\n    return email.strip().lower()\n") == []
    assert codes("def normalize(value):\n    return value.lower()\n") == []


# -- KD406 ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("body, expected", [
    ('return "https://" + url', ["KD406"]),
    ('return f"https://{url}"', ["KD406"]),
    ('return url + "/"', ["KD406"]),
    ('url += "/"\n    return url', ["KD406"]),
    ('return url if "://" in url else "https://" + url', []),
    ('if url.startswith("http"):\n        return url\n    return "https://" + url', []),
    ('return "https://" + url.removeprefix("https://")', []),
    ('return url.rstrip("/") + "/"', []),
    ('if not url.endswith("/"):\n        url += "/"\n    return url', []),
    ('p = urlsplit(url if "://" in url else "https://" + url)\n    return "https://" + p.netloc', []),
    ('return urlsplit("https://" + url).netloc', ["KD406"]),
])
def test_kd406_idempotence_guards(body, expected):
    source = f"from urllib.parse import urlsplit\n\ndef normalize_url(url):\n    {body}\n"
    assert codes(source) == expected


def test_kd4_ignores_nested_functions_and_non_normalizers():
    assert codes('''
        from urllib.parse import urlsplit

        def fetch(url):
            return urlsplit(url).hostname.lower()

        def normalize_url(url):
            def helper(u):
                return urlsplit(u)
            return url
    ''') == []


@pytest.mark.parametrize("pattern, anchored, expected", [
    (r"^https?://[A-Za-z0-9-_/?=&#.]+$", False, True),
    (r"(?:https?|ftp)://\S+", True, True),
    (r"\Ahttps?://", False, True),
    (r"^(?i)https?://x", True, True),
    (r"^[a-z][a-z0-9+.-]*://", True, True),
    (r"^(https?://[^/]+)/?$", True, True),
    (r"^(?P<scheme>https?)://", True, True),
    (r"https?://", False, False),  # search() without an anchor
    (r"^(?:https?://)?[\w.]+$", True, False),  # the scheme group is optional
    (r"^(https?)?://x", True, False),
    (r"^[a-z]*://", True, False),
    (r"^https://\S+$|^[\w.-]+/[\w.-]+$", True, False),  # an alternative without a scheme
    (r"^(https?://x|/p)", True, False),
    (r"^(https?|ftp://)x", True, False),
    (r"^/|http://", True, False),
    (r"://x", True, False),
])
def test_a_pattern_requires_a_scheme_only_when_every_match_starts_with_one(pattern, anchored, expected):
    from keydrift.analysis.url_patterns import requires_scheme

    assert requires_scheme(pattern, anchored) is expected


# -- the modules beside a model ------------------------------------------------------------------

_BESIDE = {
    "app/__init__.py": "",
    "app/models.py": """
        from django.db import models


        class Member(models.Model):
            email = models.EmailField(unique=True)
        """,
    "app/services.py": """
        from app.models import Member


        def join(email):
            return Member.objects.create(email=email.strip().lower())
        """,
}
_ADMIN = """
    from django.contrib import admin

    from app.models import Member

    admin.site.register(Member)
    """


def _beside(tmp_path, files, monkeypatch):
    """KD3's findings in app/models.py, and whether the summaries of the modules beside it were read."""
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(text))
    (tmp_path / "pyproject.toml").write_text("[tool.keydrift]\n")
    read = []
    real = uniqueness._sibling_writes
    monkeypatch.setattr(uniqueness, "_sibling_writes", lambda facts: read.append(True) or real(facts))
    from keydrift.analysis.project import forget_indexes

    forget_indexes()
    path = tmp_path / "app" / "models.py"
    config = Config(root=str(tmp_path), cache=False, select=("KD3",))
    findings = [f.code for f in check_source(path.read_text(), str(path), config)]
    forget_indexes()
    return findings, bool(read)


def test_a_canonical_write_beside_the_model_covers_its_key(tmp_path, monkeypatch):
    assert _beside(tmp_path, _BESIDE, monkeypatch) == ([], True)


def test_an_admin_beside_the_model_stores_as_typed_without_reading_the_writes_beside(tmp_path, monkeypatch):
    """The admin registration decides (users type the key there, as typed): the summaries of
    every function beside the model, and of the functions they call, are not needed."""
    files = {**_BESIDE, "app/admin.py": _ADMIN}
    assert _beside(tmp_path, files, monkeypatch) == (["KD301"], False)


def test_the_modules_beside_are_parsed_once_for_their_forms_and_their_writes(tmp_path, monkeypatch):
    """The forms and admin registrations beside a model, and then the writes of the same
    modules, are read from one tree per module (the project index's)."""
    import ast

    parsed = []
    real = ast.parse
    monkeypatch.setattr(ast, "parse", lambda source, *args, **kwargs: parsed.append(
        source if isinstance(source, str) else source.decode()) or real(source, *args, **kwargs))
    assert _beside(tmp_path, _BESIDE, monkeypatch) == ([], True)
    assert sum("def join(" in source for source in parsed) == 1


# KD3 reads a module's declarations only when its text spells a word every declaration does
# (``declarations.may_declare_a_key``).
_DECLARING_SHAPES = [
    "class Page(models.Model):\n    url = models.URLField(unique=True)\n",
    "class Page(Model):\n    url = CharField()\n    class Meta:\n        indexes = (((\"url\",), True),)\n",
    "class Page(Base):\n    __table_args__ = (UniqueConstraint(\"url\"),)\n",
    "class Meta:\n    unique_together = [(\"a\", \"b\")]\n",
    "db.pages.create_index(\"url\", unique=True)\n",
    "SQL = 'CREATE TABLE pages (url TEXT Primary Key)'\n",
    "id = Column(Integer, primary_key=True)\n",
]


@pytest.mark.parametrize("text", _DECLARING_SHAPES)
def test_every_declaration_shape_spells_a_declaring_word(text):
    from keydrift.analysis.declarations import may_declare_a_key

    assert may_declare_a_key(text)


def test_a_module_without_a_declaring_word_is_not_read_for_declarations():
    from keydrift.analysis.declarations import may_declare_a_key

    assert not may_declare_a_key("def tidy(url):\n    return url.strip()\n")


def test_no_case_declares_a_key_the_text_gate_would_skip():
    """Over every module of the annotated cases: what the schema reader reads as a declaration
    is in a text the gate lets through."""
    import ast as python_ast

    from keydrift.analysis.declarations import SchemaReader, may_declare_a_key
    from keydrift.types import Config

    cases = Path(__file__).resolve().parent.parent / "fixtures" / "cases"
    declaring = 0
    for path in sorted(cases.rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            module = python_ast.parse(text)
        except SyntaxError:
            continue
        reader = SchemaReader(Config())
        reader.read(module)
        if reader.facts.declarations:
            declaring += 1
            assert may_declare_a_key(text), path
    assert declaring >= 20
