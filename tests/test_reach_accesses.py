"""Accesses the recognizers see in shapes that pair only across functions or modules (the
project-wide registry pairs them): model forms, related objects saved through attributes."""

from __future__ import annotations

import ast

from keydrift.analysis.module import analyze
from keydrift.analysis.tree import source_lines
from keydrift.types import Config


def accesses(source: str):
    found = []
    with source_lines(source.splitlines(keepends=True)):  # the analysis of a module runs inside its lines
        analysis = analyze(ast.parse(source), "app/forms.py", Config())
        for name in ["<module>", *analysis.units]:
            for access in analysis.walker(name).accesses:
                found.append((name, access.kind, access.entity, access.field, tuple(sorted(access.value.origins)),
                              tuple(step.label for step in access.value.steps)))
    return found


FORMS = '''
from django import forms
from django.contrib.auth.models import User


class ProfileForm(forms.ModelForm):
    nickname = forms.CharField()

    class Meta:
        model = User
        exclude = ("password", "nickname")

    def clean_email(self):
        email = self.cleaned_data["email"]
        return email


class SignupForm(ProfileForm):
    class Meta:
        model = User
        fields = ("email", "username")

    def clean_email(self):
        return self.cleaned_data["email"].lower()


class NotAModelForm(forms.Form):
    email = forms.EmailField()

    class Meta:
        model = User


class AccountForm(forms.ModelForm):
    email = forms.EmailField()

    class Meta:
        model = Profile

    def save(self, *args, **kwargs):
        user = self.instance.user
        user.email = self.cleaned_data["email"]
        user.save()
        self.instance.user.username = self.cleaned_data["username"]
        self.instance.user.save()
        return super().save(*args, **kwargs)
'''


def test_model_forms_store_their_fields_as_cleaned():
    found = accesses(FORMS)
    assert ("<module>", "write", "User", "email", ("cleaned_data['email']",), ()) in found
    assert ("<module>", "write", "User", "email", ("cleaned_data['email']",), (".lower()",)) in found
    assert ("<module>", "write", "User", "username", ("cleaned_data['username']",), ()) in found
    module_fields = [(entity, field) for name, _, entity, field, _, _ in found if name == "<module>"]
    # excluded fields, plain forms and forms whose save() decides are not module-level writes
    assert ("User", "nickname") not in module_fields and ("User", "password") not in module_fields
    assert ("Profile", "email") not in module_fields
    assert len(module_fields) == 3


def test_related_objects_saved_through_attributes():
    found = [a for a in accesses(FORMS) if a[0] == "AccountForm.save"]
    assert found == [
        ("AccountForm.save", "write", "User", "email", ('self.cleaned_data["email"]',), ()),
        ("AccountForm.save", "write", "User", "username", ('self.cleaned_data["username"]',), ()),
    ]


def test_attribute_of_an_unknown_class_is_not_a_record():
    found = accesses('''
def rename(self, value):
    owner = self.instance.owner
    owner.slug = value.lower()
    owner.save()
''')
    assert found == []
