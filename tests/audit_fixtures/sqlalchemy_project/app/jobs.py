from sqlalchemy import select

from app.models import AuditResult, Domain


def audit_all(session, run_audit):
    for domain in session.scalars(select(Domain)):
        seen = session.query(AuditResult).filter(AuditResult.url == domain.url).first()
        if seen is not None:
            continue
        outcome = run_audit(domain.url)
        session.add(AuditResult(domain_id=domain.id, url=outcome.final_url, score=outcome.score))
    session.commit()
