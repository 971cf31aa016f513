"""keydrift: find code paths that read a record by one key and write it by another."""

__version__ = "0.1.0"
