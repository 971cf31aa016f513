"""Receivers of method calls (analysis/receivers.py): annotations, the project's method index."""

from __future__ import annotations

import ast
import os
import threading

import pytest

from keydrift.analysis import method_texts, receivers
from keydrift.analysis.tree import source_lines


@pytest.mark.parametrize("text, expected", [
    ("Repo", "Repo"), ("'Repo'", "Repo"), ("app.stores.Repo", "Repo"), ("Optional[Repo]", "Repo"),
    ("Repo | None", "Repo"), ("str", ""), ("List[Repo]", ""), ("Repo | Other", ""), ("'not a name!'", ""),
])
def test_annotation_class(text, expected):
    with source_lines([text]):
        assert receivers.annotation_class(ast.parse(text, mode="eval").body) == expected


def test_class_infos_read_init_assignments_annotations_and_accessors():
    source = ("class Handler(Base, mixins.Audit):\n"
              "    cache: Cache\n"
              "    def __init__(self, hs: 'Server', repo):\n"
              "        self.hs = hs\n        self.repo = Repo(repo)\n        self.count = 0\n"
              "    def get_store(self) -> Store:\n        return self._store\n")
    with source_lines(source.splitlines(keepends=True)):
        info = receivers.class_infos(ast.parse(source))["Handler"]
    assert info.bases == ["Base", "mixins.Audit"]
    assert info.attributes == {"cache": "Cache", "hs": "Server", "repo": "Repo"}
    assert info.returns == {"get_store": "Store"}


def test_methods_belong_to_the_class_indented_above_them():
    text = ("class A:\n    def add_user(self):\n        pass\n"
            "    class Meta:\n        def meta_thing(self):\n            pass\n"
            "def free(self):\n    pass\n"
            "class B:\n    async def find_user(self, x):\n        pass\n"
            "    async def add_user_address(\n        self,\n        address: str,\n    ) -> None:\n        pass\n"
            "def not_a_method(\n    user,\n):\n    pass\n")
    assert list(method_texts.methods_defined(text)) == ["A.add_user", "Meta.meta_thing", "B.find_user", "B.add_user_address"]


def _owners_one_by_one(text):
    """The rule ``_methods`` follows, spelled out: each method's class is the last class
    statement before it that is indented less."""
    classes = [(m.start(), len(m.group(1).expandtabs()), m.group(2)) for m in receivers._CLASS.finditer(text)]
    for match in receivers._METHOD.finditer(text):
        indent = len(match.group(1).expandtabs())
        before = [(start, name) for start, class_indent, name in classes
                  if start < match.start() and class_indent < indent]
        if before:
            yield f"{before[-1][1]}.{match.group(2)}"


def test_methods_found_in_one_pass_follow_the_rule_on_any_nesting():
    import random

    pieces = ["class {n}:\n", "    class {n}:\n", "\tclass {n}:\n", "        class {n}(Base):\n",
              "    def {n}(self):\n", "        def {n}(self, x):\n", "\tdef {n}(cls):\n", "def {n}(self):\n",
              "            async def {n}(self):\n", "    x = 1\n", "  \tdef {n}(self):\n"]
    chooser = random.Random(7)
    for _ in range(300):
        text = "".join(chooser.choice(pieces).format(n=f"N{i}") for i in range(chooser.randint(1, 40)))
        assert list(method_texts.methods_defined(text)) == list(_owners_one_by_one(text)), text


def test_statements_found_from_their_keyword_are_the_anchored_patterns_matches():
    import random

    indentations = ["", " ", "    ", "\t", " \t", "\f", "x ", "x = 1; "]
    prefixes = ["", "", "async ", "async\t", "async", "xasync ", "sub", "un", "(", "# "]
    keywords = ["class ", "class\t", "class", "def ", "def  ", "def\t", "def", "de"]
    rests = ["N1(self", "N1 (cls)", "N1(\n  self,", "N1(selfish", "N1(x, self", "N1:", "(self", "N1(\r\nself"]
    endings = ["\n", "\r\n", "\r", "", " def N2(self)\n"]
    chooser = random.Random(11)
    found = [0, 0]
    for _ in range(3000):
        text = "".join(chooser.choice(indentations) + chooser.choice(prefixes) + chooser.choice(keywords)
                       + chooser.choice(rests) + chooser.choice(endings) for _ in range(chooser.randint(0, 8)))
        for kind, (keyword, anchored, indented) in enumerate(((method_texts.CLASS_KEYWORD, receivers._CLASS, False),
                                                              (method_texts.METHOD_KEYWORD, receivers._METHOD, True))):
            expected = [(m.start(), m.group(1), m.group(2)) for m in anchored.finditer(text)]
            assert list(method_texts.statements(text, keyword, indented)) == expected, repr(text)
            found[kind] += len(expected)
    assert min(found) > 100  # the texts hold both kinds of statement, not only near misses


@pytest.mark.parametrize("text", [
    "class A:\n    async def add_user(self):\n", "class A:\n    async\tdef add_user(cls):\n",
    "class A:\n    xasync def add_user(self):\n", "class A:\n    asyncdef add_user(self):\n",
    "class A:\nasync def add_user(self):\n", "subclass A:\n    def add_user(self):\n",
    "class A:\n    undef add_user(self):\n", "class A:\r    def add_user(self):\n",
    "x = 1; class A:\n    def add_user(self):\n", "class A:\n    def add_user(\n        self,\n    ):\n",
])
def test_statements_at_line_starts_only(text):
    expected = [(m.start(), m.group(1), m.group(2)) for m in receivers._METHOD.finditer(text)]
    assert list(method_texts.statements(text, method_texts.METHOD_KEYWORD, indented=True)) == expected
    expected = [(m.start(), m.group(1), m.group(2)) for m in receivers._CLASS.finditer(text)]
    assert list(method_texts.statements(text, method_texts.CLASS_KEYWORD, indented=False)) == expected


def test_index_finds_methods_defined_once_and_skips_what_is_not_a_regular_file(tmp_path):
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "store.py").write_text(
        "class Store:\n    def add_user(self, email):\n        self.db.execute('INSERT', (email,))\n"
        "    def find_user(self, email):\n        return 1\n")
    (tmp_path / "app" / "other.py").write_text("class Other:\n    def find_user(self, e):\n        pass\n")
    os.mkfifo(tmp_path / "app" / "pipe.py")
    receivers.forget()
    result = {}
    worker = threading.Thread(target=lambda: result.update(index=receivers.method_index(
        str(tmp_path), lambda path: os.path.relpath(path, tmp_path)[:-3].replace(os.sep, "."))), daemon=True)
    worker.start()
    worker.join(20)
    assert "index" in result, "a FIFO named like a module blocked the index"
    index = result["index"]
    assert index.owners["add_user"] == [("app.store", "Store.add_user")]
    assert sorted(index.owners["find_user"]) == [("app.other", "Other.find_user"), ("app.store", "Store.find_user")]
    assert index.database == frozenset({"add_user"})  # find_user has two owners
    assert receivers.unique_method(str(tmp_path), "find_user", str) is None
    receivers.forget()


def test_the_stored_method_index_reads_again_only_the_files_that_changed(tmp_path, monkeypatch):
    """Each file's methods are stored under its content: a new process reads the unchanged
    ones from the cache, and an edited, added or removed file changes the index as a fresh
    build would; a damaged entry is built again."""
    from keydrift.diskcache import DiskCache

    project = tmp_path / "project"
    (project / "app").mkdir(parents=True)
    (project / "app" / "store.py").write_text(
        "class Store:\n    def add_user(self, email):\n        self.db.execute('INSERT', (email,))\n")
    (project / "app" / "other.py").write_text("class Other:\n    def find_user(self, e):\n        pass\n")
    cache = DiskCache(str(tmp_path / "cache"))
    read = []
    real = receivers.FileMethods.of
    monkeypatch.setattr(receivers.FileMethods, "of", staticmethod(lambda text: read.append(text) or real(text)))

    def build():
        receivers.forget()  # as a new process would
        read.clear()
        return receivers.method_index(str(project), lambda path: os.path.relpath(path, project)[:-3].replace(os.sep, "."),
                                      cache)

    first = build()
    assert len(read) == 2 and first.database == frozenset({"add_user"})
    again = build()
    assert read == [] and again == first
    (project / "app" / "other.py").write_text(
        "class Other:\n    def find_user_by_email(self, e):\n        return self.db.execute('SELECT', (e,))\n")
    (project / "app" / "extra.py").write_text("class Extra:\n    def add_user(self, e):\n        pass\n")
    edited = build()
    assert len(read) == 2  # other.py and extra.py
    assert sorted(edited.owners["add_user"]) == [("app.extra", "Extra.add_user"), ("app.store", "Store.add_user")]
    assert edited.database == frozenset({"find_user_by_email"}) and "find_user" not in edited.owners
    (project / "app" / "extra.py").unlink()
    assert build().database == frozenset({"add_user", "find_user_by_email"}) and read == []
    for entry in (tmp_path / "cache").glob("methods-*.json"):
        entry.write_text('{"keydrift": "junk"')
    assert build().database == frozenset({"add_user", "find_user_by_email"}) and len(read) == 2
    receivers.forget()


def _indexed_project(root, files):
    for number in range(files):
        vocabulary = "        return self.db.execute('SELECT', (e,))\n" if number % 3 else "        pass\n"
        (root / f"module_{number}.py").write_text(
            f"class Store{number}:\n    def find_user_{number}(self, e):\n{vocabulary}"
            f"    def shared_name(self):\n        pass\n" + ("AUTH_USER_MODEL = 'app.Member'\n" if number == 7 else ""))


def _index_of(root, cache=None):
    receivers.forget()  # as a new process would
    return receivers.method_index(str(root), lambda path: os.path.relpath(path, root)[:-3].replace(os.sep, "."), cache)


@pytest.mark.parametrize("helper", ["works", "fails", "cannot start"])
def test_an_index_made_with_a_helper_process_is_the_one_made_alone(tmp_path, monkeypatch, helper):
    """A parallel CLI run makes the method index with a forked helper reading half the files;
    the index is the same as one process makes, also when the helper fails (its files are read
    by the parent) or cannot be started; the stored index too."""
    from keydrift.diskcache import DiskCache

    (tmp_path / "project").mkdir()
    _indexed_project(tmp_path / "project", 30)
    alone = _index_of(tmp_path / "project", DiskCache(str(tmp_path / "alone")))
    monkeypatch.setattr(receivers, "_HELPED_FROM", 4)
    if helper == "fails":
        monkeypatch.setattr(receivers._HelpedRecords, "_made", lambda self, path: 1 / 0)
    elif helper == "cannot start":
        monkeypatch.setattr(receivers, "made_by_a_helper", lambda items, make: None)
    read = []
    real = receivers.FileMethods.of
    monkeypatch.setattr(receivers.FileMethods, "of", staticmethod(lambda text: read.append(text) or real(text)))
    with receivers.made_with_a_helper():
        helped = _index_of(tmp_path / "project", DiskCache(str(tmp_path / "helped")))
    assert helped == alone and helped.facts == alone.facts and helped.user_model == "Member"
    assert helped.database == alone.database and len(alone.database) == 20
    assert len(read) == (15 if helper == "works" else 30)  # the parent read the first half only
    from keydrift.vocabulary import known_answer, text_key

    texts = [path.read_text() for path in sorted((tmp_path / "project").glob("*.py"))]
    assert all(known_answer(text_key(text)) is not None for text in texts)  # the checks ask again
    stored = [sorted((tmp_path / name).glob("methods-*.json"))[0].read_text() for name in ("alone", "helped")]
    assert stored[0] == stored[1]
    receivers.forget()


def test_a_helper_process_sends_back_what_it_made_or_nothing():
    from keydrift import forkhelp

    collect = forkhelp.made_by_a_helper(["a", "bb", "ccc"], lambda item: [item, len(item), None])
    assert collect() == {"a": ["a", 1, None], "bb": ["bb", 2, None], "ccc": ["ccc", 3, None]}
    assert forkhelp.made_by_a_helper(["a"], lambda item: 1 / 0)() == {}
    assert forkhelp.made_by_a_helper(["a"], lambda item: object())() == {}  # not marshal-able


def test_the_stored_method_index_keeps_the_database_fingerprint_for_what_it_was_made_from(tmp_path, monkeypatch):
    """The fingerprint of the database methods' owners is stored with the index and used while
    the files' methods are the same (an edit that defines no method); the index is written
    again only once several files' records are new, and until then a process reads the edited
    files again."""
    import json

    from keydrift.diskcache import DiskCache

    project = tmp_path / "project"
    (project / "app").mkdir(parents=True)
    (project / "app" / "store.py").write_text(
        "class Store:\n    def add_user(self, email):\n        self.db.execute('INSERT', (email,))\n")
    helpers = [project / "app" / f"helper_{n}.py" for n in range(9)]
    for helper in helpers:
        helper.write_text("def helper():\n    return 1\n")
    cache = DiskCache(str(tmp_path / "cache"))
    read = []
    real = receivers.FileMethods.of
    monkeypatch.setattr(receivers.FileMethods, "of", staticmethod(lambda text: read.append(text) or real(text)))

    def build(with_cache=True):
        receivers.forget()  # as a new process would
        read.clear()
        return receivers.method_index(str(project), lambda path: os.path.relpath(path, project)[:-3].replace(os.sep, "."),
                                      cache if with_cache else None)

    fresh = build().database_fingerprint()
    (entry,) = (tmp_path / "cache").glob("methods-*.json")
    stored = json.loads(entry.read_text())
    assert stored["database"] == fresh
    entry.write_text(json.dumps({**stored, "database": "kept"}))
    assert build().database_fingerprint() == "kept" and read == []
    helpers[0].write_text("def helper():\n    return 1\n# add_user\n")
    written = entry.read_text()
    assert build().database_fingerprint() == "kept" and len(read) == 1  # no method defined or removed
    assert entry.read_text() == written  # one new record: not written again
    assert build().facts == build(with_cache=False).facts and len(read) == 10
    build()
    assert len(read) == 1  # the edited file, again
    (project / "app" / "store.py").write_text(
        "class Store:\n    def add_user(self, email):\n        self.db.execute('INSERT', (email,))\n"
        "    def remove_user(self, email):\n        self.db.execute('DELETE', (email,))\n")
    changed = build().database_fingerprint()
    assert changed not in ("kept", fresh) and changed == build(with_cache=False).database_fingerprint()
    assert build().database_fingerprint() == changed and len(read) == 0  # stored with the fingerprint
    for helper in helpers[1:]:
        helper.write_text("def helper():\n    return 2\n")
    build()
    assert len(read) == 8
    build()
    assert read == []  # eight new records: written again
    receivers.forget()


def test_mentioned_counts_calls_references_and_strings_but_not_definitions(tmp_path):
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "pool.py").write_text(
        "class Pool:\n"
        "    async def add_pusher(\n        self, key\n    ):\n"
        "        await self.store.add_pusher(key)\n"  # delegation to the object the class holds
        "    def start(self):\n        self.spawn(self._run)\n"
        "    def _run(self):\n        pass\n"
        "    def by_name(self):\n        pass\n"
        "class Client:\n"
        "    def go(self):\n        return self.pool.start()\n")
    (tmp_path / "app" / "routes.py").write_text("ROUTES = {'by_name': 'app.pool.Pool'}\n")
    receivers.forget()
    root = str(tmp_path)
    home = os.path.normpath(str(tmp_path / "app" / "pool.py"))
    assert not receivers.mentioned(root, "add_pusher", home, "Pool")  # defined, and delegated by its own class
    assert receivers.mentioned(root, "add_pusher")  # without knowing whose class: the delegation may be a call
    assert receivers.mentioned(root, "start", home, "Pool")  # called through another object elsewhere
    assert receivers.mentioned(root, "_run", home, "Pool")  # a reference handed on
    assert receivers.mentioned(root, "by_name", home, "Pool")  # a string naming it
    assert not receivers.mentioned(root, "never_defined_anywhere")
    receivers.forget()


def test_mentioned_keeps_the_texts_of_one_project_at_a_time(tmp_path):
    """Each project's texts can be tens of megabytes: asking about another project lets the
    first one's go, and asking the first again reads them again, with the same answers."""
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "calls.py").write_text("def helper():\n    pass\n\nhelper()\n")
    receivers.forget()
    one, two = str(tmp_path / "one"), str(tmp_path / "two")
    assert receivers.mentioned(one, "helper") and not receivers.mentioned(one, "absent")
    assert receivers.mentioned(two, "helper") and list(receivers._TEXTS) == [two]
    assert not receivers.mentioned(one, "other") and list(receivers._TEXTS) == [one]
    receivers.forget()
