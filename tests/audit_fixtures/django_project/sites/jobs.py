from sites.audit import run_audit
from sites.models import AuditResult, Domain


def audit_all():
    for domain in Domain.objects.all():
        if AuditResult.objects.filter(url=domain.url).exists():
            continue
        outcome = run_audit(domain.url)
        AuditResult.objects.create(domain=domain, url=outcome.final_url, score=outcome.score)
