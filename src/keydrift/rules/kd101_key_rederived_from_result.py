"""KD101: the write key is re-derived from a fetch/audit/API result obtained with the read key."""

from __future__ import annotations

from typing import Iterator

from keydrift.analysis.facts import REMOTE, Mismatch, RawFinding
from keydrift.rules._base import Rule
from keydrift.rules._examples import Invalid, Valid
from keydrift.rules._kd1 import differing_steps, finding, read_line, select, short, target


def remote_step(m: Mismatch) -> str:
    """The re-derivation from the remote result, without the steps that shaped the request."""
    remote = [s.label for s in m.write.value.steps if s.kind == REMOTE]
    return remote[-1] if remote else differing_steps(m)


class KeyRederivedFromResult(Rule):
    """A record is selected by one key and written by a key re-derived from a call's result.

    ## What it does
    Finds a function that reads an entity by a key value and writes the same entity and field
    with a value that came back from a call made with that key: the final URL of a fetch that
    followed redirects, a field of an audit, crawl or API result, `requests.get(url).url`.

    A remote mapping whose every key is assigned onto a record that is then saved
    (`for k, v in payload.items(): setattr(obj, k, v)`, `obj.__dict__.update(payload)`, in the
    function or in a helper it calls) is the same shape: the payload's `id` becomes the key
    the record is saved under. A loop that tests the key (`if k == "id": continue`, an
    allow-list) is not reported.

    It also finds a write that picks its row (the `WHERE` of an `UPDATE`/`DELETE`, the lookup
    of a write) by a field of a *remote* result, when the function read the same entity by
    another field with the value the request was made with: rows selected by a job id and
    updated `WHERE url = <the URL the service reports>`. No read of that field is needed.

    ## Why is this bad?
    The value the call returns is usually not byte-identical to the one it was given
    (redirects, a trailing `/`, another casing, `www.`). The row is then stored under a key the
    next read never asks for: the job finds "no result yet" again and repeats forever, or an
    UPDATE by the new key silently matches nothing. Nothing raises.

    ## Known problems
    The analysis follows values inside one function. A result attribute that is, by contract,
    the very value passed in (an echo) is still reported; suppress it with `# noqa: KD101`.
    An object's method called with the key under a keyword that names no natural key
    (`page.create_alias(parent=p)`, unlike `client.get(url=u)`) is taken to return another
    object, not a value derived from the key. A key field of the record a helper found by this
    very key compared exactly (`clip = find_clip(token)` ... `filter(token=clip.token)`, the
    helper doing `filter(token=token)`) is not reported: an exact match holds the key as given;
    found case-insensitively, by a transformed key, or fetched over the network, it still is.
    """

    CODE = "KD101"
    NAME = "key-rederived-from-result"
    SUMMARY = "write key re-derived from a call's result made with the read key"

    INVALID = (
        Invalid("""
            def audit_all():
                for domain in Domain.objects.all():
                    if AuditResult.objects.filter(url=domain.url).exists():
                        continue
                    outcome = run_audit(domain.url)
                    AuditResult.objects.create(url=outcome.final_url, score=outcome.score)  # expect: KD101
            """),
        Invalid("""
            import requests

            def refresh(url):
                page = Page.objects.filter(url=url).first()
                if page is None:
                    response = requests.get(url)
                    Page.objects.create(url=response.url, body=response.text)  # expect: KD101
            """, note="A fetch that followed redirects returns another URL than it was given:"),
        Invalid("""
            import requests

            def finish_archive_jobs(conn):
                for (job_id,) in conn.execute("SELECT archive_job FROM bookmarks WHERE archived = 0"):
                    status = requests.get(f"https://archive.example/status/{job_id}").json()
                    conn.execute("UPDATE bookmarks SET archived = 1 WHERE url = ?",  # expect: KD101
                                 (status["original_url"],))
            """, note=("Rows selected by a job id, updated by the URL the remote service reports "
                       "(after a redirect, another URL than the bookmark's):")),
    )
    VALID = (
        Valid("""
            def audit_all():
                for domain in Domain.objects.all():
                    if AuditResult.objects.filter(url=domain.url).exists():
                        continue
                    outcome = run_audit(domain.url)
                    AuditResult.objects.create(url=domain.url, final_url=outcome.final_url,
                                               score=outcome.score)
            """, note=("Write by the key you read by, and keep the resolved value in a column of its "
                       "own (or canonicalize the key once, where the record is created):")),
        Valid("""
            def record_redirect(url):
                if Redirect.objects.filter(source=url).exists():
                    return
                outcome = run_audit(url)
                Redirect.objects.create(source=url, target=outcome.final_url)
            """, note="Not reported: the result is stored in another field than the one read by."),
        Valid("""
            import requests

            def finish_archive_jobs(conn):
                for (job_id,) in conn.execute("SELECT archive_job FROM bookmarks WHERE archived = 0"):
                    status = requests.get(f"https://archive.example/status/{job_id}").json()
                    conn.execute("UPDATE bookmarks SET archived = 1, archived_as = ? WHERE archive_job = ?",
                                 (status["original_url"], job_id))
            """, note="Update the row by the key it was selected by:"),
    )

    def check(self, facts: object) -> Iterator[RawFinding]:
        for m in select(facts, "rederived"):
            yield finding(self.CODE, m, (
                f"{target(m.write)} is written with {short(m.write.value.text)} "
                f"({differing_steps(m)}) but read by {short(m.read.value.text)} "
                f"(line {read_line()}); the next read will miss this row"))
        for m in select(facts, "remote-identity"):
            yield finding(self.CODE, m, (
                f"{target(m.write)} picks the row to write by {short(m.write.value.text)} "
                f"({remote_step(m)}), a value a remote service returned for "
                f"{short(m.read.value.text)}, read as {target(m.read)} (line {read_line()}); the service "
                "can answer with another spelling of the key (a redirect, a canonical form) and the "
                "write then misses the row it was meant for: write by the key the row was selected by"))
        for m in select(facts, "payload-copy"):
            via = f" by {m.read.via}" if m.read.via else ""
            name = short(m.read.value.text.rsplit(".", 1)[0])
            yield finding(self.CODE, m, (
                f"{m.write.via} saves {name} after every key of {short(m.write.value.text)} "
                f"({remote_step(m)}) was copied onto it{via} (line {read_line()}), `{m.write.field}` "
                f"not excluded: a payload that carries its own `{m.write.field}` replaces the local key "
                "and the save writes another row; skip the key fields when copying"))
