"""KD301: a model field is unique on a natural key that nothing canonicalizes."""

from __future__ import annotations

from typing import Iterator

from keydrift.analysis.facts import RawFinding
from keydrift.analysis.uniqueness import FIELD, describe, uncanonical_keys
from keydrift.rules._base import Rule
from keydrift.rules._examples import Invalid, Valid
from keydrift.types import Config


class UniqueFieldNotCanonicalized(Rule):
    """A unique model field holds a natural key that is never canonicalized on the way in.

    ## What it does
    Finds model fields declared unique — Django `models.X(unique=True)` and string
    `primary_key=True`, SQLAlchemy `Column(String, unique=True)` / `mapped_column(unique=True)`
    (also in a Core `Table(...)`), SQLModel `Field(unique=True)`, peewee `CharField(unique=True)`
    (also a column a SQLAlchemy `@declared_attr` method returns)
    — whose name says it is a natural key people type or other systems return (url, uri, link,
    href, email, host/hostname/domain, username/login/handle/nickname, slug, path, and `name`),
    when nothing in the module makes two spellings of one value equal.

    A field counts as canonicalized when the model rewrites it as it is stored (`save()`,
    `clean()`, `__init__`, a property setter, `@validates`, a `pre_save` receiver, through
    `lower()`/`slugify()`/a normalizer, or through a function of the module whose body calls
    one: `self.slug = _free_slug(self.name)` with `_free_slug` slugifying before it appends
    `-2`), when the column compares case-insensitively (CITEXT,
    `CI*Field`, a case-insensitive `db_collation`), when a functional unique constraint covers
    it (`UniqueConstraint(Lower("email"))`), when its field or type class stores a canonical
    value (a class in the module whose `get_prep_value`/`to_python`/`process_bind_param`
    lowercases or normalizes the whole value, or one named so: `LowercaseEmailField`; a type
    that lowercases only a part it cut out, `local, domain = v.rsplit("@", 1); domain.lower()`,
    does not count), when a unique shadow column is derived from it in a method
    (`self.username = v; self.uid = to_uid(v)` with `uid` unique, `to_uid` lowercasing), when
    a constructor rewrites its keyword argument (`kwargs["email"] = kwargs["email"].lower()`
    in `__init__(**kwargs)`), when the module stores it from `urlsplit(url).hostname` (already
    lowercase), when the module calls a
    normalizer named for the key (`normalize_email`, `slugify`) or writes it through one, or
    when a configured normalizer covers it (see Configuration).

    Not reported: opaque identifiers (a name with id, uuid, token, key, hash, sha, digest,
    code, number...: `external_id`, `url_hash`), non-text columns (integers, UUIDs, booleans,
    foreign keys), display text (`title`, `label`, `subject`: a unique title is a presentation
    choice, and "Hello" and "hello" may well be two titles), person names (`first_name`,
    `display_name`) and code identifiers (`model_name`, `file_name`): `<word>_name` is a key only
    for user, screen, login, account, host, domain, team, org, company, group, tag, category,
    channel, project, repo, site, workspace and tenant. A bare `name` is a key only when the
    model or table is one of those things (`Tag.name`, `ThreadCategory.name`, `teams.name`,
    `Handle.name`), not `Author.name` or the `name` of a migration or a job. Also not reported:
    fields whose values come from `choices=` (a list the code defines) or from a default the
    code generates (`default=uuid.uuid4`, a lambda or module function returning
    `get_random_string(32)` or `secrets.token_urlsafe()`: identifiers nobody types), relations
    (`ForeignKey`, `Column(String, ForeignKey("team.name"))`: the referenced table's key), and
    schema declared in test code (a `tests`/`test`/`testing` package, `test_*.py`,
    `*_tests.py`, `tests.py`, `conftest.py`) or migration code (a `migrations`/`alembic`
    package, a numbered revision file such as `0007_add_email.py`, or any module
    holding an alembic `down_revision` or a `class Migration`): fixtures and history, not the
    schema records are written through. Columns matched against keys rather than holding one
    (`url_pattern`, `host_glob`, `path_regex`), paths of files or code (`file_path`,
    `import_path`, `storage_path`, `Attachment.path`, `Plugin.path`), and the `name` of markup
    or schema things (`XmlElement.name`, `SchemaField.name`) or of an entity whose head noun is
    not a named kind of thing (`HomepageElement.name`) are not natural keys either. Nor are the
    keys of a Django model with `Meta.managed = False` that nothing beside it writes: the table
    belongs to another program (a mail filter's, a legacy system's), which fills it and owns
    its schema. When the module, a module beside it (a `create(email=...)` in `services.py`) or
    a form, serializer or admin beside it stores the key, the project writes its own values
    there and the key is reported as any other (a factory_boy factory is test data, not such
    a writer).
    A slug qualified as another source's (`external_slug`, `upstream_slug`, `remote_slug`,
    `dataset_slug`, `vendor_slug`) is that system's or data set's identifier, minted there and
    matched as it spells it; a URL, e-mail address, user or host name from elsewhere
    (`remote_url`, `external_username`) arrives in many spellings and stays a key. (Whether a
    key is only ever written from values the code or a data file defines is a question of the
    project's writes, which KD3 does not see beyond the modules beside the declaration; the
    name is the signal it has.)

    ## Why is this bad?
    The database compares bytes. `"Bob@Example.com"` and `"bob@example.com"` pass the unique
    check as two users; `"https://Example.com/a"` and `"https://example.com/a/"` as two pages.
    Every lookup by the other spelling misses, and every later "get or create" makes a
    duplicate that the unique constraint was meant to prevent.

    ## Known problems
    Beyond the declaring module, only the modules beside it (same package: services, views,
    managers) are consulted, for writes: when they store the key only through a canonicalizing
    step (`create(email=_canonical(email))`, a view's `create(email=request.POST["email"].lower())`)
    it counts as canonicalized, and so does a form or
    serializer beside it whose `clean_<field>`/`validate_<field>`, or whose field class
    (`email = LowercaseEmailField()`, its `to_python`/`to_internal_value`), lowercases or
    normalizes the key (`model = Member` in its `Meta`). Code in other packages is not seen unless a normalizer
    is configured for that kind of key; a module added beside the models later is noticed only when the models
    file itself is checked again (the results cache keys on the modules it read). The natural-key and opaque-identifier word
    lists are heuristics on names. A rewrite in `save()` counts even when it only strips
    whitespace.

    ## Configuration
    With `[tool.keydrift] normalizers` set, a field is considered canonicalized at the boundary
    when a configured normalizer's qualified name names its kind of key (`app.urls.canonical`
    covers url/uri/link/href fields, `accounts.normalize_email` email fields), or when a
    configured normalizer names no kind at all (`app.keys.normalize`) and the field is declared
    in a `boundary` module (in any module when no boundary is configured). Without
    configuration only what the module itself shows counts.
    """

    CODE = "KD301"
    NAME = "unique-field-not-canonicalized"
    SUMMARY = "unique field on a natural key that is never canonicalized"

    INVALID = (
        Invalid("""
            from django.db import models


            class User(models.Model):
                email = models.EmailField(unique=True)  # expect: KD301
            """),
    )
    VALID = (
        Valid("""
            from django.db import models


            class User(models.Model):
                email = models.EmailField(unique=True)

                def save(self, *args, **kwargs):
                    self.email = normalize_email(self.email)
                    super().save(*args, **kwargs)
            """, note="Normalize at the boundary, once, before the uniqueness check — in the model:"),
        Valid("""
            from django.db import models
            from django.db.models import UniqueConstraint
            from django.db.models.functions import Lower


            class User(models.Model):
                email = models.EmailField()

                class Meta:
                    constraints = [UniqueConstraint(Lower("email"), name="user_email_ci")]
            """, note="or let the database compare case-insensitively (for keys where case is the only variation):"),
        Valid("""
            from django.db import models


            class Article(models.Model):
                title = models.CharField(max_length=200, unique=True)
                external_id = models.CharField(max_length=64, unique=True)
            """, note="Not reported: display text and opaque identifiers are not natural keys."),
    )

    def check(self, facts: object) -> Iterator[RawFinding]:
        config: Config = getattr(facts, "config", None) or Config()
        for key in uncanonical_keys(facts):
            if key.declaration.kind != FIELD:
                continue
            target, detail = describe(key, config)
            yield RawFinding(
                code=self.CODE,
                message=f"{self.CODE} {target} is unique but never canonicalized {detail}",
                node=key.declaration.node,
                fingerprint=(self.CODE, key.declaration.entity, *(c for c, _ in key.columns)),
            )
