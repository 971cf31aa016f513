from urllib.parse import urlsplit, urlunsplit

from django.db import models


def canonical_url(url: str) -> str:
    """The one spelling of a site URL: scheme and host lowercased, "/" for an empty path.

    "HTTPS://Example.COM" becomes "https://example.com/". Only absolute URLs are accepted."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an absolute http(s) URL: {url!r}")
    return urlunsplit((parts.scheme, parts.netloc.lower(), parts.path or "/", parts.query, ""))


class Domain(models.Model):
    """A site a customer asked us to watch."""

    url = models.URLField(unique=True)
    owner_email = models.EmailField()
    added_at = models.DateTimeField(auto_now_add=True)

    def save(self, *args, **kwargs):
        self.url = canonical_url(self.url)
        super().save(*args, **kwargs)

    def __str__(self):
        return self.url


class AuditResult(models.Model):
    """The outcome of one audit of a domain."""

    url = models.URLField(db_index=True)
    final_url = models.URLField(max_length=2000, blank=True)
    status_code = models.PositiveSmallIntegerField()
    score = models.PositiveSmallIntegerField()
    audited_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-audited_at"]
