"""Facts as data: the vocabulary of the facts is enums, every cached record round-trips through
JSON with its types, and the registry is assembled from cached facts without parsing again what
did not change."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import List

import pytest
from hypothesis import given, settings, strategies as st

from keydrift.analysis.facts import (
    CASE, LOOKUP, READ, AccessKind, KeyAccess, Mismatch, Role, Shape, Step, StepKind, Value, step_kinds,
    steps_from_json, steps_to_json,
)
from keydrift.analysis.models import Constructor, Derivation, Rewrite
from keydrift.analysis.project import ModuleExport, forget_indexes, project_index
from keydrift.analysis.registry import KeyUse, ModelRewrite, ModuleKeys, Origin, Site, keys_from_json, keys_to_json
from keydrift.analysis.rows import RowSource
from keydrift.analysis.summaries import FunctionSummary, ReturnSummary, SummaryAccess, from_json, to_json
from keydrift.frameworks import transforms
from keydrift.projectwide import findings_for, forget
from keydrift.types import Config


# -- the vocabulary ---------------------------------------------------------------------------

def test_terms_are_their_strings_everywhere_a_string_was():
    assert CASE is StepKind.CASE and READ is AccessKind.READ and LOOKUP is Role.LOOKUP
    assert CASE == "case" and "case" in frozenset({CASE}) and CASE in frozenset({"case"})
    assert str(CASE) == "case" and f"{CASE}" == "case" and "%s" % CASE == "case"
    assert json.dumps([CASE, READ, Role.DEFAULTS, Origin.INPUT]) == '["case", "read", "defaults", "input"]'
    assert f"{Origin.INPUT}" == "input" and Origin("input") is Origin.INPUT
    assert sorted([StepKind.URL, "idna", StepKind.CASE]) == ["case", "idna", "url"]


def test_a_kind_spelled_as_a_string_becomes_its_member():
    step = Step("whitespace", ".strip()")
    assert step.kind is StepKind.WHITESPACE and step == Step(StepKind.WHITESPACE, ".strip()")
    assert step_kinds({"case"}) == frozenset({StepKind.CASE})
    assert all(type(k) is StepKind for k in step_kinds({"case", "slash"}))  # noqa: E721
    with pytest.raises(ValueError):
        Step("lowercase", ".lower()")  # not a kind: a typo in a table fails its tests, not silently


def test_a_mismatch_takes_its_shape_as_a_member():
    access = KeyAccess(READ, "Member", "email", Value(frozenset({"email"})), ast.Pass())
    assert Mismatch("write-transform", access, access).shape is Shape.WRITE_TRANSFORM
    with pytest.raises(ValueError):
        Mismatch("write-transformed", access, access)


def test_every_shape_a_kd1_rule_selects_is_a_shape():
    import keydrift.rules as rules_package

    selected = set()
    for path in Path(rules_package.__file__).parent.glob("*.py"):
        selected.update(re.findall(r'select\(facts, "([a-z-]+)"\)', path.read_text()))
    assert selected and selected <= {s.value for s in Shape}


def test_every_kind_the_transform_tables_name_is_a_step_kind():
    for table in (transforms.STRING_METHODS, transforms.FUNCTIONS):
        for name, kind in table.items():
            assert StepKind(kind) == kind, name


# -- JSON round trips -------------------------------------------------------------------------

texts = st.text(max_size=12)
kinds = st.sampled_from(list(StepKind))
steps = st.lists(st.builds(Step, kinds, texts), max_size=4).map(tuple)
absorbed = st.frozensets(kinds, max_size=3)
pairs = st.lists(st.tuples(texts, texts), max_size=3).map(tuple)
sites = st.builds(Site, texts, st.integers(1, 10_000), st.integers(0, 200), st.integers(0, 10_000))

summary_accesses = st.builds(
    SummaryAccess, st.sampled_from(list(AccessKind)), texts, texts, st.sampled_from(list(Role)),
    st.integers(0, 5), texts, steps, absorbed, texts, texts, pairs, texts)
row_sources = st.builds(
    RowSource, texts, st.lists(st.tuples(texts, texts), max_size=3).map(tuple),
    st.lists(texts, max_size=3).map(tuple), st.booleans(),
    st.lists(st.tuples(st.tuples(texts, texts), st.tuples(texts, texts)), max_size=2).map(tuple), st.booleans())
summaries = st.builds(
    FunctionSummary, texts, st.lists(texts, max_size=4).map(tuple),
    st.lists(summary_accesses, max_size=3).map(tuple),
    st.none() | st.builds(ReturnSummary, st.lists(st.integers(0, 5), max_size=3).map(tuple), steps, st.booleans()),
    st.none() | row_sources,
    st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), max_size=2).map(tuple))
key_uses = st.builds(
    KeyUse, st.sampled_from(list(AccessKind)), st.sampled_from(list(Role)), texts, texts, steps, absorbed,
    st.sampled_from(list(Origin)), texts, texts, texts, sites, pairs, texts, texts, st.booleans())
module_keys = st.builds(
    ModuleKeys, texts, st.lists(key_uses, max_size=4).map(tuple),
    st.lists(st.builds(ModelRewrite, texts, texts, steps, texts, sites), max_size=2).map(tuple),
    st.lists(st.tuples(texts, texts, absorbed), max_size=2).map(tuple))
fields = st.tuples(texts, texts)
exports = st.builds(
    ModuleExport,
    st.dictionaries(texts, summaries, max_size=2),
    st.dictionaries(fields, st.builds(Rewrite, steps, texts), max_size=2),
    st.dictionaries(fields, absorbed, max_size=2),
    st.dictionaries(texts, texts, max_size=2),
    st.sets(texts, max_size=2),
    module_keys,
    st.dictionaries(fields, st.lists(st.builds(Derivation, texts, steps, texts), min_size=1, max_size=2)
                    .map(tuple), max_size=2),
    st.dictionaries(texts, st.builds(Constructor, st.lists(texts, max_size=3).map(tuple),
                                     st.lists(st.tuples(texts, steps), max_size=2).map(tuple), texts), max_size=2),
    st.frozensets(fields, max_size=2),
    st.frozensets(fields, max_size=2),
    st.frozensets(texts, max_size=2),
    st.dictionaries(texts, st.tuples(texts, texts), max_size=2),
    st.dictionaries(texts, st.tuples(texts, texts), max_size=2))


def _through_json(data: object) -> object:
    return json.loads(json.dumps(data))


def _terms_typed(steps_seen: List[Step], *more: object) -> bool:
    return all(type(s.kind) is StepKind for s in steps_seen) and all(  # noqa: E721
        type(term) in (StepKind, AccessKind, Role, Origin) for term in more)


@settings(max_examples=60, deadline=None)
@given(steps)
def test_steps_round_trip(value):
    back = steps_from_json(_through_json(steps_to_json(value)))
    assert back == value and _terms_typed(list(back))


@settings(max_examples=60, deadline=None)
@given(summaries)
def test_function_summaries_round_trip_typed(summary):
    back = from_json(_through_json(to_json(summary)))
    assert back == summary
    for access in back.accesses:
        assert _terms_typed(list(access.steps), access.kind, access.role, *access.absorbs)


@settings(max_examples=60, deadline=None)
@given(module_keys)
def test_registry_facts_round_trip_typed(keys):
    back = keys_from_json(_through_json(keys_to_json(keys)))
    assert back == keys
    for use in back.uses:
        assert _terms_typed(list(use.steps), use.kind, use.role, use.origin, *use.absorbs)
    for rewrite in back.rewrites:
        assert _terms_typed(list(rewrite.steps))
    assert all(_terms_typed([], *kinds_) for _, _, kinds_ in back.absorbs)


@settings(max_examples=40, deadline=None)
@given(exports)
def test_module_exports_round_trip(export):
    back = ModuleExport.from_json(_through_json(export.to_json()))
    assert back == export
    model_steps = [s for r in back.rewrites.values() for s in r.steps]
    model_steps += [s for items in back.derivations.values() for d in items for s in d.steps]
    model_steps += [s for c in back.constructors.values() for _, steps in c.rewrites for s in steps]
    assert _terms_typed(model_steps, *(k for kinds in back.absorbs.values() for k in kinds))


def test_an_entry_naming_an_unknown_kind_is_refused():
    data = steps_to_json((Step(CASE, ".lower()"),))
    data[0][0] = "lowercase"
    with pytest.raises(ValueError):
        steps_from_json(data)


# -- facts of real code are typed -------------------------------------------------------------

MODELS = '''\
from django.db import models


class Member(models.Model):
    email = models.EmailField(unique=True)

    def save(self, *args, **kwargs):
        self.email = self.email.strip().lower()
        super().save(*args, **kwargs)
'''

STORE = '''\
from club.models import Member


def add(address):
    Member.objects.create(email=address.lower())


def find(address):
    return Member.objects.filter(email__iexact=address).first()
'''

VIEW = '''\
from club.models import Member
from club.store import add, find


def signup(request):
    if find(request.POST["email"]) is None:
        add(request.POST["email"])
    return Member.objects.get(email=request.POST["email"].strip())
'''


def _write(root: Path, files: dict) -> None:
    (root / "pyproject.toml").write_text("[tool.keydrift]\n")
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


@pytest.fixture()
def project(tmp_path, monkeypatch):
    forget()
    forget_indexes()
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, {"club/__init__.py": "", "club/models.py": MODELS, "club/store.py": STORE, "club/views.py": VIEW})
    yield tmp_path
    forget()
    forget_indexes()


def test_the_facts_of_analyzed_modules_are_typed_and_round_trip(project):
    index = project_index(Config(root=str(project), cache=False), use_cache=False)
    uses = []
    for name in ("models", "store", "views"):
        export = index.export_for_file(str(project / "club" / f"{name}.py"))
        assert ModuleExport.from_json(_through_json(export.to_json())) == export
        uses.extend(export.keys.uses)
        for summary in export.summaries.values():
            for access in summary.accesses:
                assert _terms_typed(list(access.steps), access.kind, access.role, *access.absorbs)
        for rewrite in export.rewrites.values():
            assert _terms_typed(list(rewrite.steps))
    assert {(u.kind, u.role) for u in uses} >= {(AccessKind.READ, Role.LOOKUP), (AccessKind.WRITE, Role.STORE)}
    for use in uses:
        assert _terms_typed(list(use.steps), use.kind, use.role, use.origin, *use.absorbs)
    iexact = [u for u in uses if u.function == "find"]
    assert iexact and iexact[0].absorbs == frozenset({StepKind.CASE})


# -- the registry from cached facts -----------------------------------------------------------

LEAF = '''\
from club.models import Member


def lookup_{n}(request):
    return Member.objects.filter(email=request.GET["e{n}"]).first()
'''


def _parses(monkeypatch) -> List[str]:
    """The files CPython parses from now on (every reader of code goes through ``ast.parse``)."""
    parsed: List[str] = []
    real = ast.parse

    def counting(source, filename="<unknown>", *args, **kwargs):
        parsed.append(str(filename))
        return real(source, filename, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", counting)
    return parsed


def _fresh_process() -> None:
    forget()
    forget_indexes()


def _relative(paths: List[str], root: Path) -> List[str]:
    return sorted(str(Path(p).resolve().relative_to(root.resolve())) for p in paths if p != "<unknown>")


def test_a_second_run_parses_only_the_changed_module(project, monkeypatch):
    _write(project, {f"club/leaf{n}.py": LEAF.format(n=n) for n in range(5)})
    config = Config(root=str(project))
    first = {name: [(f.code, f.line) for f in findings_for(name, config)]
             for name in ("club/leaf0.py", "club/leaf3.py", "club/views.py")}
    assert first["club/leaf0.py"] == [("KD108", 5)] and first["club/leaf3.py"] == [("KD108", 5)]
    _fresh_process()
    parsed = _parses(monkeypatch)
    (project / "club" / "leaf3.py").write_text(LEAF.format(n=3).replace(".first()", ".last()"))
    again = {name: [(f.code, f.line) for f in findings_for(name, config)] for name in first}
    assert again == first
    assert _relative(parsed, project) == ["club/leaf3.py"]
    assert len(parsed) == 1


def test_a_changed_module_is_parsed_again_with_the_modules_that_import_it(project, monkeypatch):
    _write(project, {f"club/leaf{n}.py": LEAF.format(n=n) for n in range(3)})
    config = Config(root=str(project))
    assert [(f.code, f.line) for f in findings_for("club/leaf1.py", config)] == [("KD108", 5)]
    _fresh_process()
    parsed = _parses(monkeypatch)
    (project / "club" / "store.py").write_text(STORE.replace("email__iexact=address", "email=address"))
    assert [(f.code, f.line) for f in findings_for("club/leaf1.py", config)] == [("KD108", 5)]
    # the importer's facts include the helper's summary: both are analyzed again, nothing else
    assert _relative(parsed, project) == ["club/store.py", "club/views.py"]


def test_an_unchanged_project_parses_nothing_in_a_new_process(project, monkeypatch):
    config = Config(root=str(project))
    before = [(f.code, f.line) for f in findings_for("club/views.py", config)]
    _fresh_process()
    parsed = _parses(monkeypatch)
    assert [(f.code, f.line) for f in findings_for("club/views.py", config)] == before
    assert parsed == []


def _check_output(capsys, root: Path) -> List[tuple]:
    from keydrift.cli import main

    capsys.readouterr()
    main(["check", "-j", "1", "--format", "json", "--exit-zero", str(root)])
    found = json.loads(capsys.readouterr().out)["findings"]
    return sorted((f["code"], Path(f["path"]).name, f["line"]) for f in found)


def test_the_cli_parses_only_the_changed_module_on_its_next_run(project, monkeypatch, capsys):
    from keydrift.config import clear_cache

    _write(project, {f"club/leaf{n}.py": LEAF.format(n=n) for n in range(5)})
    first = _check_output(capsys, project)
    assert ("KD108", "leaf3.py", 5) in first
    _fresh_process()
    clear_cache()
    parsed = _parses(monkeypatch)
    (project / "club" / "leaf3.py").write_text(LEAF.format(n=3).replace("request.GET", "request.POST"))
    assert _check_output(capsys, project) == first
    assert _relative(parsed, project) == ["club/leaf3.py"] and len(parsed) == 1


def test_a_cache_entry_naming_an_unknown_term_is_rebuilt_not_trusted(project, monkeypatch):
    _write(project, {f"club/leaf{n}.py": LEAF.format(n=n) for n in range(2)})
    config = Config(root=str(project))
    first = [(f.code, f.line) for f in findings_for("club/leaf1.py", config)]
    assert first == [("KD108", 5)]
    damaged = 0
    for entry in (project / ".keydrift_cache").glob("*.json"):
        text = entry.read_text()
        if '"case"' in text and not entry.name.startswith("g-"):
            entry.write_text(text.replace('"case"', '"lowercase"'))
            damaged += 1
        elif entry.name.startswith("g-"):
            entry.unlink()  # the registry's findings are rebuilt from the module entries
    assert damaged
    _fresh_process()
    parsed = _parses(monkeypatch)
    assert [(f.code, f.line) for f in findings_for("club/leaf1.py", config)] == first
    assert "club/models.py" in _relative(parsed, project)  # its entry was refused, so it was analyzed again
