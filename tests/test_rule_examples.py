"""Every rule's documented examples are run: an ``INVALID`` example's findings, of every rule,
are exactly its ``# expect: CODE`` markers; a ``VALID`` example has none. See
``keydrift.rules._examples``."""

from __future__ import annotations

import pytest

from keydrift.rules import ALL_RULES
from keydrift.rules._examples import Invalid, Valid
from keydrift.testing import check_example, format_finding

EXAMPLES = [(rule, index, example) for rule in ALL_RULES for index, example in enumerate(rule.examples())]


def _id(item):
    rule, index, example = item
    return f"{rule.CODE}-{'valid' if example.valid else 'invalid'}-{index}"


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.CODE)
def test_every_rule_has_invalid_and_valid_examples(rule):
    """At least one example the rule reports and one near miss or fix it stays silent on."""
    assert rule.INVALID, f"{rule.CODE} has no INVALID example"
    assert rule.VALID, f"{rule.CODE} has no VALID example"
    assert all(not e.valid for e in rule.INVALID) and all(e.valid for e in rule.VALID), (
        f"{rule.CODE}: build INVALID with Invalid(...) and VALID with Valid(...)")


@pytest.mark.parametrize("item", EXAMPLES, ids=[_id(i) for i in EXAMPLES])
def test_example_findings_match_its_markers(item, tmp_path):
    """The documented example does what the documentation says, and nothing else."""
    rule, _, example = item
    own = [code for _, _, code in example.markers() if code == rule.CODE]
    if example.valid:
        assert not example.markers(), f"{rule.CODE}: a VALID example carries no marker"
    else:
        assert own, f"{rule.CODE}: an INVALID example marks at least one {rule.CODE}"
    result = check_example(example, f"{rule.CODE} example", tmp_path)
    if not result.ok:
        pytest.fail(result.report(), pytrace=False)


def test_markers_are_read_per_file_and_line():
    """``# expect:`` takes one code or several, comma-separated, on the line it ends."""
    example = Invalid({"a.py": "x = 1\ny = 2  # expect: KD101, KD202\n", "b.py": "z  # expect: KD301\n"})
    assert example.markers() == [("a.py", 2, "KD101"), ("a.py", 2, "KD202"), ("b.py", 1, "KD301")]


def test_a_finding_the_markers_do_not_name_fails_the_example(tmp_path):
    """An example that triggers another code than its markers say is reported as unexpected."""
    example = Valid("""
        def canonical_path(path):
            return path.rstrip("/")
        """)
    result = check_example(example, "probe", tmp_path)
    assert not result.ok and [f.code for f in result.unexpected] == ["KD403"], (
        "\n".join(map(format_finding, result.findings)))


def test_a_missing_finding_fails_the_example(tmp_path):
    """A marker where nothing is reported is missing."""
    example = Invalid("x = 1  # expect: KD101\n")
    result = check_example(example, "probe", tmp_path)
    assert not result.ok and len(result.missing) == 1


def test_documentation_shows_the_examples_and_their_configuration():
    """The rendered "Example" section holds the example's code, file names and table."""
    for rule in ALL_RULES:
        doc = rule.documentation()
        for example in rule.examples():
            for path, source in example.files:
                if not example.shown:
                    assert source.rstrip() in doc, f"{rule.CODE}: {path} not in its documentation"
            if example.config and not example.shown:
                assert example.config.strip() in doc


def test_sarif_rule_help_and_explain_show_the_examples(capsys):
    """SARIF's rule help carries the examples; `keydrift explain` also shows what keydrift
    reports on each invalid one, run at that moment."""
    from keydrift.cli import main
    from keydrift.output.sarif import rule_descriptor

    for rule in ALL_RULES:
        example = next(e for e in rule.INVALID if not e.shown) if any(not e.shown for e in rule.INVALID) else None
        help_text = rule_descriptor(rule)["help"]["markdown"]
        assert "## Example" in help_text and "## Use instead" in help_text
        if example is not None:
            assert example.files[-1][1].rstrip() in help_text
    assert main(["explain", "KD403"]) == 0
    out = capsys.readouterr().out
    assert "keydrift reports:\n```text\nexample.py:2:12: KD403 " in out
