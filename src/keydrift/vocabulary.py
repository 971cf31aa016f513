"""Words that must appear in code before keydrift looks at it closely: the text prefilter skips
files without them."""

from __future__ import annotations

from typing import Dict, Optional

from keydrift.digests import raw_digest
from keydrift.patterns import lazy


# Vocabulary of the database layers keydrift understands. A file with none of it cannot hold
# a read or a write, so it is never parsed.
DATABASE_VOCABULARY = lazy(
    r"\.objects\b|_or_create\b|bulk_create\b|_or_none\b|\.filter(?:_by)?\s*\(|\.execute(?:many)?\s*\("
    r"|\bsession\b|(?<![.\w])(?:insert|select|update|delete)\s*\(|\.save\s*\(|\.where\s*\("
    r"|\.query\b|\.merge\s*\(|\.create\s*\(|\.fetch(?:row|val)?\s*\("
    r"|\.(?:find_one|find|insert_one|insert_many|update_one|update_many|replace_one|delete_one"
    r"|delete_many|find_one_and_\w+|count_documents|bulk_write)\s*\("
    r"|(?i:redis|valkey|cache)\w*\s*(?:\.|\[)|\b(?:r|kv|rds|mc|rc)\.(?:h?get|h?set\w*|exists|delete|incr\w*)\s*\("
    r"|_or_404\s*\("
    # in-house table helpers: select_one("users", {...}), update_row(txn, "users", ...), table="users"
    r"|\w\s*\(\s*(?:\w+\s*,\s*)?[\"'][A-Za-z_][\w.]*[\"']\s*,\s*(?:\w+\s*=\s*)?(?:\{|dict\()"
    r"|\btable(?:_?name)?\s*=\s*[\"'][A-Za-z_]"
    # model forms and serializers store their cleaned fields when saved (analysis/forms.py)
    r"|\b(?:ModelForm|BaseModelForm|UserCreationForm|UserChangeForm)\b"
    r"|\b(?:Hyperlinked)?ModelSerializer\b"
    # a SQLAlchemy session named otherwise (``db: Session = Depends(get_db)`` ... ``db.add(user)``)
    r"|\b(?:Async)?Session\b"
)


# ``DATABASE_VOCABULARY`` says what counts; ``mentions_database`` finds it about three times as
# fast, for the prefilter reads every file of a project, some twice. CPython's regex engine skips
# ahead only to a character every alternative can start with, so each alternative here starts
# with a literal character and checks the word boundary or the ``.`` before it by a look-behind
# after that character; the alternatives are grouped by that character (at a candidate position
# the engine tries each top-level alternative in turn, passing over those whose first literal
# differs); the in-house table helper's alternative (which starts at any word character) is found
# from its ``(`` instead. tests/test_prefilter.py holds the two to the same answers.
_STORE_CALL = r"\.(?:h?get|h?set\w*|exists|delete|incr\w*)\s*\("
_DATABASE_BY_LITERALS = lazy(
    r"\.(?:objects\b|filter(?:_by)?\s*\(|execute(?:many)?\s*\(|save\s*\(|where\s*\(|query\b|merge\s*\("
    r"|create\s*\(|fetch(?:row|val)?\s*\(|(?:find_one|find|insert_one|insert_many|update_one|update_many"
    r"|replace_one|delete_one|delete_many|find_one_and_\w+|count_documents|bulk_write)\s*\()"
    r"|_or_(?:create\b|none\b|404\s*\()|bulk_create\b"
    r"|s(?:(?<!\ws)ession\b|(?<![.\w]s)elect\s*\()"
    r"|i(?<![.\w]i)nsert\s*\(|u(?<![.\w]u)pdate\s*\(|d(?<![.\w]d)elete\s*\("
    r"|r(?:(?i:edis)\w*\s*[.[]|(?<!\wr)(?:ds|c)?" + _STORE_CALL + ")"
    r"|R(?i:edis)\w*\s*[.[]|[vV](?i:alkey)\w*\s*[.[]|[cC](?i:ache)\w*\s*[.[]"
    r"|k(?<!\wk)v" + _STORE_CALL + r"|m(?<!\wm)c" + _STORE_CALL +
    r"|t(?<!\wt)able(?:_?name)?\s*=\s*[\"'][A-Za-z_]"
    r"|M(?<!\wM)odel(?:Form|Serializer)\b|B(?<!\wB)aseModelForm\b|U(?<!\wU)ser(?:Creation|Change)Form\b"
    r"|H(?<!\wH)yperlinkedModelSerializer\b|S(?<!\wS)ession\b|A(?<!\wA)syncSession\b"
)
_TABLE_HELPER_CALL = lazy(r"\(\s*(?:\w+\s*,\s*)?[\"'][A-Za-z_][\w.]*[\"']\s*,\s*(?:\w+\s*=\s*)?(?:\{|dict\()")


# ``mentions_database``'s answers by the text's digest (``text_key``): the same texts are asked
# about again, by the check of a module after the method index read it (the CLI's workers
# inherit the parent's answers), and by the registry's look at a module after its check.
_ANSWERS: Dict[bytes, bool] = {}
_ANSWERS_KEPT = 200_000  # a long-lived process (the editor server) starts afresh past this


def mentions_database(text: str) -> bool:
    """Whether ``text`` holds ``DATABASE_VOCABULARY`` (the same answer, faster)."""
    key = text_key(text)
    found = _ANSWERS.get(key)
    if found is None:
        found = _mentions_database(text)
        remember_answer(key, found)
    return found


def text_key(text: str) -> bytes:
    """The key of a text's answer: the digest of its bytes (a digest costs a twentieth of the search)."""
    return raw_digest(text.encode("utf-8", "surrogatepass"))


def known_answer(key: bytes) -> Optional[bool]:
    """The answer given for the text of ``key`` in this process (None if it was not asked)."""
    return _ANSWERS.get(key)


def remember_answer(key: bytes, answer: bool) -> None:
    """Keep an answer, given here or by another process for the text of ``key``."""
    if len(_ANSWERS) >= _ANSWERS_KEPT:
        _ANSWERS.clear()
    _ANSWERS[key] = bool(answer)


def _mentions_database(text: str) -> bool:
    if _DATABASE_BY_LITERALS.search(text):
        return True
    call = _TABLE_HELPER_CALL.search(text)
    while call is not None:  # every "(" (not finditer: one call may hold another, ``dict(``)
        if _word_before(text, call.start()):
            return True
        call = _TABLE_HELPER_CALL.search(text, call.start() + 1)
    return False


def _word_before(text: str, end: int) -> bool:
    """Whether a word character (``\\w``) comes before ``end``, past any whitespace (``\\s``)."""
    index = end - 1
    while index >= 0 and text[index].isspace():
        index -= 1
    return index >= 0 and (text[index].isalnum() or text[index] == "_")


# Vocabulary of normalization and schema declarations: files with it may hold a normalizer
# (KD2/KD4) or a uniqueness constraint (KD3) even without database calls.
NORMALIZER_VOCABULARY = lazy(
    r"normali[sz]|canonical|urlsplit|urlparse|(?i:unique)|primary_key|PRIMARY\s+KEY|slugify|idna"
    r"|clean_\w*(?:url|email|host|domain)|saniti[sz]e_|standardi[sz]e_|\bnorm_"
)

# Methods that override how a model stores.
STORING_METHODS = frozenset({"save", "full_clean", "to_python", "get_prep_value", "from_db_value", "pre_save"})
