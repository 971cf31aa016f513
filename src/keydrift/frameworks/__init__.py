"""Framework knowledge as data: which calls read, write, transform or normalize keys.

One module per layer; the matching code lives in ``keydrift.analysis``. Modules hold tables
only: adding a layer or a call touches one file here.
"""
