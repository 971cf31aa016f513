from django.db import models


class Domain(models.Model):
    url = models.URLField(unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "domains"


class AuditResult(models.Model):
    domain = models.ForeignKey(Domain, on_delete=models.CASCADE)
    url = models.URLField()
    score = models.IntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "audit_results"


class Account(models.Model):
    email = models.EmailField(unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
