"""Run an audit of one site: fetch it (following redirects) and score what came back."""

from dataclasses import dataclass

import requests

TIMEOUT_SECONDS = 20
USER_AGENT = "site-auditor/2.3 (+https://auditor.example/bot)"


@dataclass(frozen=True)
class AuditOutcome:
    final_url: str  # where the redirects ended, e.g. https://www.example.com/
    status_code: int
    score: int


def run_audit(url: str) -> AuditOutcome:
    response = requests.get(
        url,
        allow_redirects=True,
        timeout=TIMEOUT_SECONDS,
        headers={"User-Agent": USER_AGENT},
    )
    return AuditOutcome(
        final_url=response.url,
        status_code=response.status_code,
        score=_score(response),
    )


def _score(response: requests.Response) -> int:
    score = 100
    if not response.url.startswith("https://"):
        score -= 40
    if "strict-transport-security" not in response.headers:
        score -= 20
    if len(response.history) > 2:
        score -= 10
    if response.status_code >= 400:
        score = 0
    return max(score, 0)
