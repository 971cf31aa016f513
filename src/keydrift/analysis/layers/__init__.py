"""One module per database layer: its recognizer, next to its table in ``keydrift.frameworks``
(``layers/django_orm.py`` reads with ``frameworks/django_orm.py``). ``registry.py`` lists the
layers in the order the chain recognizer asks them; ``keydrift.analysis.chains`` is the
machinery they share. This package's ``__init__`` imports nothing, so that importing one layer
imports no other."""
