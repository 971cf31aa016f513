"""``--format sarif``: valid SARIF 2.1.0 (checked against the official schema), rules with the
documentation ``explain`` prints, related locations and a code flow per finding, paths relative
to the project root, fingerprints that survive edits which move code.

The schema is read from the shared folder next to the checkout (``../shared/schemas/``), which
asks that it not be copied into the project; where that folder is absent the schema check is
skipped and the structural checks still run.
"""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from keydrift import cli
from keydrift import config as kdconfig
from keydrift.analysis.project import forget_indexes
from keydrift.cli import main
from keydrift.output import sarif
from keydrift.output._common import ReportContext
from keydrift.rules import ALL_RULES
from keydrift.types import Finding, Location

SCHEMA = Path(__file__).resolve().parents[2] / "shared" / "schemas" / "sarif-schema-2.1.0.json"

JOBS = textwrap.dedent("""\
    from app.models import AuditResult, Domain
    from app.audit import run_audit


    def audit_new_domains():
        for domain in Domain.objects.all():
            if AuditResult.objects.filter(url=domain.url).exists():
                continue
            outcome = run_audit(domain.url)
            AuditResult.objects.create(url=outcome.final_url, score=outcome.score)
""")


@pytest.fixture(autouse=True)
def project(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text("[tool.keydrift]\n")
    monkeypatch.chdir(tmp_path)
    kdconfig.clear_cache()
    forget_indexes()
    yield tmp_path
    kdconfig.clear_cache()
    forget_indexes()


def validate(document):
    if not SCHEMA.is_file():
        pytest.skip(f"the SARIF schema is not at {SCHEMA} (shared folder absent)")
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(schema).validate(document)


def sarif_of(capsys, *args):
    status = main(["check", "--format", "sarif", "--no-cache", *args])
    out = capsys.readouterr().out
    return status, json.loads(out)


def write(path, text):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_real_finding_is_valid_sarif_with_rules_from_the_documentation(project, capsys):
    write("app/__init__.py", "")
    write("app/jobs.py", JOBS)
    status, document = sarif_of(capsys)
    assert status == 1
    validate(document)
    [run] = document["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [rule.CODE for rule in ALL_RULES]
    for rule, descriptor in zip(ALL_RULES, rules):
        assert descriptor["name"] == rule.NAME
        assert descriptor["shortDescription"]["text"] == rule.SUMMARY
        assert descriptor["help"] == {"text": rule.documentation(), "markdown": rule.documentation()}
        assert descriptor["fullDescription"]["text"] == rule.documentation().split("\n\n")[0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == project.as_uri() + "/"
    [result] = [r for r in run["results"] if r["ruleId"] == "KD101"]
    assert rules[result["ruleIndex"]]["id"] == "KD101"
    assert result["level"] == "warning"
    [location] = result["locations"]
    assert location["physicalLocation"]["artifactLocation"] == {"uri": "app/jobs.py", "uriBaseId": "%SRCROOT%"}
    assert location["physicalLocation"]["region"]["startLine"] == 10
    read, write_ = result["relatedLocations"][:2]
    assert read["message"]["text"] == "read by domain.url"
    assert read["physicalLocation"]["region"]["startLine"] == 7
    assert write_["message"]["text"].startswith("written with outcome.final_url")
    steps = result["codeFlows"][0]["threadFlows"][0]["locations"]
    assert [s["location"]["message"]["text"] for s in steps] == [
        r["message"]["text"] for r in result["relatedLocations"]]


def test_fingerprints_survive_lines_added_above_and_paths_are_relative_to_the_root(project, capsys):
    write("app/__init__.py", "")
    write("app/jobs.py", JOBS)
    os.chdir("app")  # the root is the project's, wherever keydrift runs from
    _, before = sarif_of(capsys, "jobs.py")
    write("jobs.py", "import logging\n\nlog = logging.getLogger(__name__)\n\n" + JOBS)
    forget_indexes()
    _, after = sarif_of(capsys, "jobs.py")
    [old] = [r for r in before["runs"][0]["results"] if r["ruleId"] == "KD101"]
    [new] = [r for r in after["runs"][0]["results"] if r["ruleId"] == "KD101"]
    assert new["locations"][0]["physicalLocation"]["region"]["startLine"] == 14
    assert new["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "app/jobs.py"
    assert new["partialFingerprints"] == old["partialFingerprints"]


def fake_findings(text, path):
    related = (Location(path, 3, 11, "read by domain.url"),
               Location(path, 5, 14, "written with outcome.final_url"),
               Location("lib/helpers.py", 9, 4, "write inside save()"))
    finding = Finding("KD101", "KD101 Page.url is written [sic]", path, 6, 8, 7, related,
                      ("KD101", "Page", "url", "rederived", "audit"))
    return [finding, finding]  # the same finding twice: a loop writing two rows, say


def test_related_locations_code_flow_duplicates_and_paths_outside_the_root(project, capsys, monkeypatch):
    monkeypatch.setattr(cli, "check_cached", lambda source, path, config: fake_findings(source, path))
    write("app/audit.py", "")
    outside = project.parent / f"{project.name}-elsewhere.py"
    outside.write_text("")
    status, document = sarif_of(capsys, "app/audit.py", str(outside))
    assert status == 1
    validate(document)
    results = document["runs"][0]["results"]
    assert len(results) == 4
    inside = [r for r in results if r["locations"][0]["physicalLocation"]["artifactLocation"].get("uriBaseId")]
    elsewhere = [r for r in results if r not in inside]
    assert elsewhere[0]["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": outside.as_uri()}
    first, second = inside
    assert first["partialFingerprints"] != second["partialFingerprints"]
    assert [r["message"]["text"] for r in first["relatedLocations"]] == [
        "read by domain.url", "written with outcome.final_url", "write inside save()"]
    assert [r["id"] for r in first["relatedLocations"]] == [0, 1, 2]
    flow = first["codeFlows"][0]["threadFlows"][0]["locations"]
    assert [step["executionOrder"] for step in flow] == [1, 2, 3]
    assert flow[2]["location"]["physicalLocation"]["artifactLocation"] == {
        "uri": "lib/helpers.py", "uriBaseId": "%SRCROOT%"}
    assert first["locations"][0]["physicalLocation"]["region"] == {"startLine": 6, "startColumn": 9, "endLine": 7}


def test_no_findings_is_a_valid_log_with_an_empty_run(project):
    document = sarif.sarif_log([], ReportContext(root=str(project)))
    validate(document)
    assert document["runs"][0]["results"] == []
    assert document["version"] == "2.1.0"


def test_odd_paths_are_percent_encoded(project):
    finding = Finding("KD900", "KD900 cannot parse the file", str(project / "my app" / "x#1.py"), 1, 0, 1)
    document = sarif.sarif_log([finding], ReportContext(root=str(project)))
    validate(document)
    location = document["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "my%20app/x%231.py"
    assert document["runs"][0]["results"][0]["level"] == "note"
