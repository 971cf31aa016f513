"""[tool.keydrift]: discovery, validation, caching, exclude and per-file-ignores matching."""

from __future__ import annotations

import textwrap

import pytest

from keydrift import config as kdconfig
from keydrift.config import (
    ConfigError, finding_allowed, ignored_codes_for, is_excluded, load_config, load_config_file,
    parse_code_list, parse_flake8_mapping,
)
from keydrift.types import Config, Finding


@pytest.fixture(autouse=True)
def fresh_cache():
    kdconfig.clear_cache()
    yield
    kdconfig.clear_cache()


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def project(tmp_path, table):
    (tmp_path / ".git").mkdir(parents=True, exist_ok=True)  # keeps the search in tmp_path
    write(tmp_path / "pyproject.toml", "[tool.keydrift]\n" + textwrap.dedent(table))
    return tmp_path


def test_full_table_is_read(tmp_path):
    project(tmp_path, """
        boundary = ["app.api", "app.views.*"]
        normalizers = ["app.urls.canonical_url"]
        exclude = ["migrations", "src/generated/"]
        select = ["kd1", "KD9"]
        ignore = ["KD105"]
        [tool.keydrift.per-file-ignores]
        "tests/*" = ["KD101", "KD102"]
        "scripts/*.py" = "KD1, KD2"
    """)
    config = load_config(str(tmp_path / "app" / "models.py"))
    assert config == Config(
        root=str(tmp_path),
        config_file=str(tmp_path / "pyproject.toml"),
        boundary=("app.api", "app.views.*"),
        normalizers=("app.urls.canonical_url",),
        exclude=("migrations", "src/generated/"),
        per_file_ignores={"tests/*": ("KD101", "KD102"), "scripts/*.py": ("KD1", "KD2")},
        select=("KD1", "KD9"),
        ignore=("KD105",),
    )


def test_without_pyproject_the_start_directory_is_the_root(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "pkg").mkdir()
    assert load_config(str(tmp_path / "pkg")) == Config(root=str(tmp_path / "pkg"))


def test_pyproject_without_table_marks_the_root(tmp_path):
    (tmp_path / ".git").mkdir()
    write(tmp_path / "pyproject.toml", "[project]\nname = 'x'\n")
    config = load_config(str(tmp_path / "a" / "b" / "c.py"))
    assert config.root == str(tmp_path)
    assert config.config_file == str(tmp_path / "pyproject.toml")
    assert config.exclude == ()


def test_nearest_pyproject_wins_and_search_stops_at_repository_root(tmp_path):
    write(tmp_path / "pyproject.toml", "[tool.keydrift]\nexclude = ['outer']\n")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    assert load_config(str(repo / "x.py")).exclude == ()
    project(repo / "sub", "exclude = ['inner']\n")
    assert load_config(str(repo / "sub" / "pkg" / "x.py")).exclude == ("inner",)


def test_underscore_spelling_and_flake8_string(tmp_path):
    project(tmp_path, '''
        per_file_ignores = """
            tests/*,conftest.py: KD101,KD102
            migrations/*.py:KD1   legacy.py: KD9
        """
    ''')
    assert load_config(str(tmp_path)).per_file_ignores == {
        "tests/*": ("KD101", "KD102"),
        "conftest.py": ("KD101", "KD102"),
        "migrations/*.py": ("KD1",),
        "legacy.py": ("KD9",),
    }


def test_flake8_mapping_errors():
    for text in ("tests/*", "tests/*:", ": KD1", "a.py: KD1 : KD2"):
        with pytest.raises(ValueError):
            parse_flake8_mapping(text)
    assert parse_flake8_mapping("  ") == []


@pytest.mark.parametrize("table, expected", [
    ("boundry = ['app']",
     "pyproject.toml: [tool.keydrift] unknown key 'boundry' (did you mean 'boundary'?)"),
    ("colour = 'red'", "pyproject.toml: [tool.keydrift] unknown key 'colour'"),
    ("exclude = 'migrations'", "pyproject.toml: [tool.keydrift] 'exclude' must be a list "
                               "of non-empty strings, got str 'migrations'"),
    ("select = [1]", "[tool.keydrift] 'select' must be a list of non-empty strings, got list"),
    ("ignore = ['KD-1']", "[tool.keydrift] 'ignore' entry 'KD-1' is not a code or code prefix"),
    ("normalizers = ['not a name']", "'normalizers' entry 'not a name' is not a qualified name"),
    ("per-file-ignores = 3", "'per-file-ignores' must be a table of glob -> list of codes, got int 3"),
    ("per-file-ignores = {'a.py' = [2]}", "'per-file-ignores.a.py' must be a list of non-empty strings"),
    ("per-file-ignores = 'a.py'", "'per-file-ignores': expected 'glob: CODES'"),
    ("per-file-ignores = {}\nper_file_ignores = {}",
     "set 'per-file-ignores' or 'per_file_ignores', not both"),
])
def test_invalid_values_name_file_and_key(tmp_path, monkeypatch, table, expected):
    monkeypatch.chdir(tmp_path)
    project(tmp_path, table)
    with pytest.raises(ConfigError) as error:
        load_config(str(tmp_path))
    assert expected in str(error.value)
    assert str(error.value).startswith("pyproject.toml: ")


def test_broken_toml_and_non_table(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    write(tmp_path / "pyproject.toml", "[tool.keydrift]\nexclude = [\n")
    with pytest.raises(ConfigError, match=r"^pyproject\.toml: invalid TOML: "):
        load_config(".")
    kdconfig.clear_cache()
    write(tmp_path / "pyproject.toml", "[tool]\nkeydrift = 1\n")
    with pytest.raises(ConfigError, match=r"^pyproject\.toml: \[tool.keydrift\] must be a table"):
        load_config(".")


def test_file_outside_cwd_is_named_absolutely(tmp_path, monkeypatch):
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    project(tmp_path / "other", "bogus = 1\n")
    with pytest.raises(ConfigError, match=str(tmp_path / "other" / "pyproject.toml")):
        load_config(str(tmp_path / "other"))


def test_configs_and_errors_are_cached_per_directory(tmp_path):
    project(tmp_path, "exclude = ['one']\n")
    assert load_config(str(tmp_path)).exclude == ("one",)
    write(tmp_path / "pyproject.toml", "[tool.keydrift]\nexclude = [\n")
    assert load_config(str(tmp_path)).exclude == ("one",)  # still the cached one
    kdconfig.clear_cache()
    for _ in range(2):  # the error is cached too, and raised each time
        with pytest.raises(ConfigError):
            load_config(str(tmp_path / "x.py"))


def test_explicit_config_file(tmp_path):
    path = write(tmp_path / "conf" / "pyproject.toml", "[tool.keydrift]\nselect = ['KD1']\n")
    config = load_config_file(str(path))
    assert config.root == str(tmp_path / "conf")
    assert config.select == ("KD1",)
    with pytest.raises(ConfigError, match="cannot read"):
        load_config_file(str(tmp_path / "missing.toml"))


@pytest.mark.parametrize("pattern, path, excluded", [
    ("migrations", "app/migrations/0001_initial.py", True),
    ("migrations", "app/models.py", False),
    ("*_pb2.py", "proto/user_pb2.py", True),
    ("*_pb2.py", "proto/user.py", False),
    ("src/generated", "src/generated/deep/x.py", True),
    ("src/generated/", "src/generated/x.py", True),
    ("src/generated", "other/src/generated/x.py", False),
    ("src/*.py", "src/a.py", True),
    ("./scripts/*", "scripts/run.py", True),
    ("legacy.py", "pkg/legacy.py", True),
    ("build", "build", True),
])
def test_exclude_patterns(tmp_path, pattern, path, excluded):
    config = Config(root=str(tmp_path), exclude=(pattern,))
    assert is_excluded(str(tmp_path / path), config) is excluded


def test_exclude_is_relative_to_the_root(tmp_path, monkeypatch):
    # Components above the project root never match: a checkout under ~/build/ is not excluded.
    root = tmp_path / "build" / "project"
    (root / "app").mkdir(parents=True)
    config = Config(root=str(root), exclude=("build",))
    assert not is_excluded(str(root / "app" / "x.py"), config)
    monkeypatch.chdir(root)
    assert not is_excluded("app/x.py", config)
    assert is_excluded("build/x.py", config)


def test_per_file_ignores_and_finding_allowed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = Config(root=str(tmp_path), select=("KD1", "KD9"), ignore=("KD105",),
                    per_file_ignores={"tests/*": ("KD101",), "legacy.py": ("KD1",)})
    assert ignored_codes_for("tests/test_x.py", config) == ("KD101",)
    assert ignored_codes_for("pkg/legacy.py", config) == ("KD1",)
    assert ignored_codes_for("app/x.py", config) == ()

    def allowed(code, path):
        return finding_allowed(Finding(code, f"{code} m", path, 1, 0, 1), config)

    assert allowed("KD101", "app/x.py")
    assert not allowed("KD101", "tests/test_x.py")
    assert allowed("KD102", "tests/test_x.py")
    assert not allowed("KD102", "pkg/legacy.py")
    assert not allowed("KD105", "app/x.py")  # ignored
    assert not allowed("KD201", "app/x.py")  # not selected


def test_parse_code_list():
    assert parse_code_list("kd1, KD900,,", "--select") == ("KD1", "KD900")
    assert parse_code_list("", "--ignore") == ()
    with pytest.raises(ConfigError, match="--select: 'KD_1'"):
        parse_code_list("KD_1", "--select")
