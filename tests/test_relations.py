"""Relation fields: a record or its database id is not a natural key (analysis/models.py)."""

from __future__ import annotations

import ast
import textwrap

import pytest

from keydrift.analysis.models import relation_fields

DJANGO = '''
from django.db import models


class Card(models.Model):
    code = models.CharField(max_length=16)
    owner = models.ForeignKey("auth.User", on_delete=models.CASCADE)
    profile = models.OneToOneField("Profile", on_delete=models.CASCADE, to_field="id")
    tags = models.ManyToManyField("Tag")
    sent_to = models.ForeignKey("auth.User", to_field="email", on_delete=models.CASCADE)
'''

SQLALCHEMY = '''
class Invite(Base):
    id = Column(Integer, primary_key=True)
    member_id = Column(Integer, ForeignKey("members.id"))
    reviewer_id: Mapped[int] = mapped_column(ForeignKey(Member.id))
    member = relationship("Member")
    member_email = Column(String(200), ForeignKey("members.email"))
    team_id: int = Field(foreign_key="teams.id")
    title = Column(String(200))
'''

PEEWEE = '''
class Entry(Model):
    author = ForeignKeyField(User)
    editor = ForeignKeyField(User, field=User.username)
'''


def _relations(source: str):
    return relation_fields(ast.parse(textwrap.dedent(source)))


def test_django_relations_and_their_id_columns_hold_records():
    found = _relations(DJANGO)
    assert {("Card", "owner"), ("Card", "owner_id"), ("Card", "profile"), ("Card", "tags")} <= found
    assert ("Card", "code") not in found


def test_a_relation_to_another_field_holds_that_natural_key():
    assert not {("Card", "sent_to"), ("Card", "sent_to_id")} & _relations(DJANGO)
    assert ("Entry", "editor") not in _relations(PEEWEE)
    assert ("Entry", "author") in _relations(PEEWEE)


@pytest.mark.parametrize("name, relation", [
    ("member_id", True), ("reviewer_id", True), ("member", True), ("team_id", True),
    ("member_email", False), ("title", False), ("id", False),
])
def test_sqlalchemy_relations(name, relation):
    assert (("Invite", name) in _relations(SQLALCHEMY)) is relation
