"""# noqa comments: flake8's syntax, real comments only, any line of the reported statement."""

from __future__ import annotations

import pytest

from keydrift.noqa import ALL_CODES, apply_noqa, is_suppressed, noqa_lines
from keydrift.types import Finding


def finding(code="KD101", line=1, end_line=0):
    return Finding(code, f"{code} message", "m.py", line, 0, end_line)


@pytest.mark.parametrize("comment, code, suppressed", [
    ("# noqa", "KD101", True),
    ("# NOQA", "KD900", True),
    ("# NoQa: KD101", "KD101", True),
    ("# noqa: KD101", "KD102", False),
    ("# noqa:KD101,KD102", "KD102", True),
    ("# noqa: KD101 KD102", "KD102", True),
    ("# noqa: KD1", "KD105", True),
    ("# noqa:KD1", "KD900", False),
    ("# noqa: kd101", "KD101", True),
    ("# noqa: E501", "KD101", False),
    ("# type: ignore  # noqa: KD101", "KD101", True),
    ("# noqa: see the ticket", "KD101", True),  # like flake8: not codes, so a bare noqa
    ("# no qa", "KD101", False),
    ("# noqa : KD102", "KD101", True),  # like flake8: the colon must follow noqa
])
def test_comment_syntax(comment, code, suppressed):
    source = f"x = Model.objects.get(url=u)  {comment}\n"
    assert is_suppressed(finding(code), noqa_lines(source)) is suppressed


def test_any_line_of_the_statement_counts():
    source = (
        "AuditResult.objects.create(\n"  # 1
        "    url=outcome.final_url,\n"  # 2
        "    score=outcome.score,\n"  # 3
        ")  # noqa: KD101\n"  # 4
        "other()  # noqa\n"  # 5
    )
    noqa = noqa_lines(source)
    assert noqa == {4: frozenset({"KD101"}), 5: ALL_CODES}
    assert is_suppressed(finding(line=1, end_line=4), noqa)
    assert is_suppressed(finding(line=2, end_line=3), noqa) is False
    assert is_suppressed(finding(line=1, end_line=1), noqa) is False
    assert is_suppressed(finding(line=3, end_line=0), noqa) is False


def test_noqa_inside_strings_does_nothing():
    source = (
        'query = "SELECT 1  # noqa"\n'
        'doc = """\n'
        '# noqa\n'
        '"""\n'
        "x = f'{a}  # noqa'  # real comment\n"
    )
    assert noqa_lines(source) == {}


def test_untokenizable_source_falls_back_to_each_line():
    source = 'x = Model.objects.get(  # noqa: KD900\ny = """never closed\n'
    assert noqa_lines(source) == {1: frozenset({"KD900"})}


def test_bytes_with_coding_cookie_crlf_and_bom():
    latin = "# -*- coding: latin-1 -*-\nx = 'caf\xe9'  # noqa: KD102\n".encode("latin-1")
    assert noqa_lines(latin) == {2: frozenset({"KD102"})}
    crlf = b"a = 1\r\nb = 2  # noqa\r\n"
    assert noqa_lines(crlf) == {2: ALL_CODES}
    bom = b"\xef\xbb\xbfa = 1  # noqa: KD1\n"
    assert noqa_lines(bom) == {1: frozenset({"KD1"})}
    undecodable = b"a = '\xff'  # noqa\n"
    assert noqa_lines(undecodable) == {1: ALL_CODES}


def test_apply_noqa_filters_and_keeps_order():
    source = "a()\nb()  # noqa: KD102\nc()  # noqa\n"
    findings = [finding("KD101", 1), finding("KD101", 2), finding("KD102", 2), finding("KD900", 3)]
    assert apply_noqa(findings, source) == [finding("KD101", 1), finding("KD101", 2)]
    assert apply_noqa([], source) == []


def test_a_file_is_tokenized_only_when_noqa_is_on_a_reported_line(monkeypatch):
    from keydrift import noqa

    tokenized = []
    real = noqa._comments
    monkeypatch.setattr(noqa, "_comments", lambda text: tokenized.append(1) or real(text))
    source = "x = 1  # noqa\ny = Model.objects.get(url=u)\nz = 3  # noqa: KD101\n"
    assert apply_noqa([finding(line=2)], source) == [finding(line=2)] and tokenized == []
    assert apply_noqa([finding(line=2, end_line=3)], source) == [] and tokenized == [1]
    # a line break tokenize does not count: the fallback's numbering is asked too
    untokenizable = 'x = """\ry = 1  # noqa\n'
    assert apply_noqa([finding(line=2)], untokenizable) == []
