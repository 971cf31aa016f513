from sqlalchemy import Column, DateTime, ForeignKey, Integer, String
from sqlalchemy.orm import declarative_base

Base = declarative_base()


class Domain(Base):
    __tablename__ = "domains"
    id = Column(Integer, primary_key=True)
    url = Column(String(200), unique=True, nullable=False)
    created_at = Column(DateTime, nullable=False)


class AuditResult(Base):
    __tablename__ = "audit_results"
    id = Column(Integer, primary_key=True)
    domain_id = Column(Integer, ForeignKey("domains.id"), nullable=False)
    url = Column(String(200), nullable=False)
    score = Column(Integer)
    created_at = Column(DateTime)


class Account(Base):
    __tablename__ = "sites_account"
    id = Column(Integer, primary_key=True)
    email = Column(String(200), unique=True)
    created_at = Column(DateTime)
