"""Scheduled jobs (run every 10 minutes by the scheduler)."""

import logging

from app.audit import run_audit
from app.models import AuditResult, Domain

log = logging.getLogger(__name__)


def audit_new_domains(batch_size: int = 50) -> int:
    """Audit each domain that has no audit result yet."""
    audited = 0
    for domain in Domain.objects.order_by("added_at")[:batch_size]:
        if AuditResult.objects.filter(url=domain.url).exists():
            continue
        outcome = run_audit(domain.url)
        AuditResult.objects.create(
            url=outcome.final_url,
            status_code=outcome.status_code,
            score=outcome.score,
        )
        audited += 1
    log.info("audited %d new domains", audited)
    return audited
