"""The on-disk cache under the project root: JSON entries by key, written atomically.

Every failure (a read-only tree, a corrupt or truncated entry, an entry of another keydrift
version or format) is a miss: the cache can make a run faster, never wrong.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from typing import Optional

from keydrift import __version__

CACHE_DIRECTORY = ".keydrift_cache"
CACHE_FORMAT = 5


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class DiskCache:
    """JSON entries by key; every failure (read-only tree, corrupt entry) is a cache miss."""

    def __init__(self, directory: Optional[str]) -> None:
        self.directory = directory

    def load(self, key: str) -> Optional[dict]:
        if self.directory is None:
            return None
        try:
            with open(os.path.join(self.directory, key + ".json"), encoding="utf-8") as handle:
                data = json.load(handle)
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("keydrift") != __version__ or data.get("format") != CACHE_FORMAT:
            return None
        return data

    def store(self, key: str, data: dict) -> None:
        if self.directory is None:
            return
        try:
            os.makedirs(self.directory, exist_ok=True)
            ignore = os.path.join(self.directory, ".gitignore")
            if not os.path.exists(ignore):
                self._write_atomically(ignore, "*\n")
            self._write_atomically(os.path.join(self.directory, key + ".json"), json.dumps(data))
        except OSError:
            self.directory = None  # read-only or full: stop trying for this run

    def _write_atomically(self, path: str, text: str) -> None:
        handle, temporary = tempfile.mkstemp(dir=self.directory, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(text)
            os.replace(temporary, path)
        finally:
            if os.path.exists(temporary):
                os.unlink(temporary)
