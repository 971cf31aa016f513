"""The prefilter's fast database-vocabulary test (``vocabulary.mentions_database``) gives the
answer of the vocabulary's definition (``DATABASE_VOCABULARY``) on every text."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from keydrift.vocabulary import DATABASE_VOCABULARY, mentions_database

CASES = Path(__file__).resolve().parent.parent / "fixtures" / "cases"

# Pieces of every alternative of the vocabulary, and what sits around them (boundaries, quotes,
# a word or a dot before, non-ASCII word characters and spaces).
_ATOMS = ["session", "select", "insert", "update", "delete", "(", " ", "\n", ".", "_", "a", "x", "r",
          "kv", "rds", "mc", "rc", "get", "hset", "incr", "exists", "Redis", "CACHE", "valkey", "[",
          "table", "_name", "=", "'", '"', "users", "{", "dict(", ",", "ModelForm", "BaseModelForm",
          "UserCreationForm", "UserChangeForm", "objects", "_or_create", "bulk_create", "_or_none",
          "filter", "_by", "execute", "many", "save", "where", "query", "merge", "create", "fetch",
          "row", "val", "find_one", "find", "_one", "_many", "count_documents", "_or_404", "9", "é",
          "\t", "s", "t", "\u3000", "\u0663"]


@pytest.mark.parametrize("text", [
    'x = Page.objects.get(url=u)', 'db.session.add(p)', 'sessions = 1', 'mysession = 2',
    'insert (x)', 'q.insert(x)', 'reinsert(x)', 'select(User)', 'cache.get(k)', 'MyCache[k]',
    'r.hget(k, f)', 'fr.hget(k, f)', 'table = "users"', 'mytable = "users"', 'class F(ModelForm):',
    'select_one("users", {"id": 1})', 'update_row(txn, "users", values=dict(a=1))',
    ' ("a", dict("users", {', '("users", {"id": 1})', 'f  \n ("users", {', 'é("users", {',
    '\u3000("users", {', 'nothing to see here', '',
])
def test_known_shapes(text: str) -> None:
    assert mentions_database(text) == (DATABASE_VOCABULARY.search(text) is not None)


def test_random_texts_agree() -> None:
    rng = random.Random(20261201)
    for _ in range(20_000):
        text = "".join(rng.choice(_ATOMS) for _ in range(rng.randint(1, 10)))
        assert mentions_database(text) == (DATABASE_VOCABULARY.search(text) is not None), repr(text)


def test_the_cases_agree() -> None:
    texts = [path.read_text(encoding="utf-8", errors="replace") for path in sorted(CASES.rglob("*.py"))]
    assert len(texts) > 100
    assert [mentions_database(t) for t in texts] == [DATABASE_VOCABULARY.search(t) is not None for t in texts]


def test_an_answer_is_searched_for_once_per_text(monkeypatch) -> None:
    """The same text asked about again (its check after the method index read it, the
    registry's look after its check) is answered from what was found, also when the answer
    came from another process (the method index's helper)."""
    from keydrift import vocabulary

    searched = []
    search = vocabulary._mentions_database
    monkeypatch.setattr(vocabulary, "_mentions_database", lambda text: searched.append(text) or search(text))
    monkeypatch.setattr(vocabulary, "_ANSWERS", {})
    text = "def save(user):\n    User.objects.create(email=user.email)\n"
    assert mentions_database(text) and mentions_database(text) and searched == [text]
    assert not mentions_database("x = 1\n") and searched == [text, "x = 1\n"]
    vocabulary.remember_answer(vocabulary.text_key("y = 2\n"), True)  # as another process found
    assert vocabulary.known_answer(vocabulary.text_key("y = 2\n")) is True
    assert vocabulary.known_answer(vocabulary.text_key("z = 3\n")) is None
    monkeypatch.setattr(vocabulary, "_ANSWERS_KEPT", 3)
    assert not mentions_database("w = 4\n") and len(vocabulary._ANSWERS) == 1  # kept afresh past the limit
