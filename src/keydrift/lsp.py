"""``keydrift lsp``: a language server for editors, speaking LSP over stdin/stdout.

Diagnostics are published when a document is opened or saved, and after a short pause in
typing (``DEBOUNCE_SECONDS``) when it changes. The document's text is analyzed as it is in the
editor, under the configuration of the nearest ``pyproject.toml`` (the workspace folder is the
project root when there is none); imports are resolved through the process's project index,
which is kept between requests and revalidates each module by content hash. A diagnostic
carries the finding's related locations (the read, the write, ...) as related information; its
quick fixes are the finding's fix (keydrift.fixes; unsafe ones say so in their title) and one
that adds ``# noqa: KDxxx`` to the reported statement.

pygls is an optional dependency (``pip install 'keydrift[lsp]'``), imported only by
``build_server``; the helpers above it are plain Python. pygls 1.x and 2.x are supported.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import replace
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from keydrift import __version__
from keydrift.analysis.project import forget_indexes, keep_projects
from keydrift.config import (
    ConfigError, clear_cache, finding_allowed, is_excluded, load_config, root_without_pyproject,
)
from keydrift.engine import PARSE_ERROR, check_source
from keydrift.noqa import apply_noqa, noqa_insertion, source_lines  # noqa: F401 - noqa_insertion: API
from keydrift.projectwide import findings_for
from keydrift.results import one_look
from keydrift.output._common import bare_message
from keydrift.types import Config, Finding

DEBOUNCE_SECONDS = 0.3
# the projects whose indexes the server keeps: the services of a monorepo a user moves between
_PROJECTS_KEPT = 4
FIX_ALL = "source.fixAll.keydrift"  # the kind editors run on save ("source.fixAll")
SOURCE = "keydrift"
PYTHON_SUFFIXES = (".py", ".pyi")
CONFIG_FILE_NAME = "pyproject.toml"


# --- analysis of one document (no pygls) ----------------------------------------------------

def config_for(path: str, workspace_root: Optional[str]) -> Config:
    """The nearest pyproject.toml's configuration; without one, the file's repository or else
    the workspace folder is the project root, as in a CLI run from there."""
    config = load_config(path)
    if not config.config_file:
        root = root_without_pyproject(path, workspace_root)
        if root:
            config = replace(config, root=root)
    return config


def document_findings(text: str, path: str, config: Config) -> List[Finding]:
    """What the editor shows: the CLI's findings for the unsaved text, without parse errors
    (the editor reports those while the user types). Each check is one look at the files on
    disk (``one_look``): what it finds there holds for the check, and is looked at again for
    the next one (a module created since is found)."""
    if is_excluded(path, config):
        return []
    with one_look():
        findings = check_source(text, path, config)
        if _saved(text, path):  # the registry is built from the files on disk: their lines only
            findings = findings + findings_for(path, config)
    findings = [f for f in findings if f.code != PARSE_ERROR and finding_allowed(f, config)]
    return apply_noqa(findings, text)


def _saved(text: str, path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read() == text.encode("utf-8", "surrogatepass")
    except OSError:
        return False


# --- positions ------------------------------------------------------------------------------

def column_units(line: str, column: int, encoding: str = "utf-16") -> int:
    """A code-point column as the client counts it (LSP's default is UTF-16 code units)."""
    prefix = line[:column]
    if encoding == "utf-8":
        return len(prefix.encode("utf-8"))
    if encoding == "utf-32":
        return len(prefix)
    return len(prefix.encode("utf-16-le", "surrogatepass")) // 2


# --- debouncing -----------------------------------------------------------------------------

class Debouncer:
    """Runs the last callback scheduled for a key once no other came for ``delay`` seconds."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.pending: Dict[str, asyncio.TimerHandle] = {}

    def schedule(self, key: str, callback: Callable[[], None]) -> None:
        self.cancel(key)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # called outside the server's loop (pygls 1 may do so)
            loop = asyncio.get_event_loop()
        self.pending[key] = loop.call_later(self.delay, self._run, key, callback)

    def cancel(self, key: str) -> None:
        handle = self.pending.pop(key, None)
        if handle is not None:
            handle.cancel()

    def _run(self, key: str, callback: Callable[[], None]) -> None:
        self.pending.pop(key, None)
        callback()


# --- the server (pygls) ---------------------------------------------------------------------

def build_server() -> Any:
    """The pygls server with keydrift's features; ``start_io()`` runs it on stdin/stdout."""
    from lsprotocol import types

    server = _language_server_class()("keydrift", __version__)
    keep_projects(_PROJECTS_KEPT)
    linter = _Linter(server, types)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: Any, params: Any) -> None:
        linter.lint_now(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: Any, params: Any) -> None:
        linter.lint_soon(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: Any, params: Any) -> None:
        linter.saved(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: Any, params: Any) -> None:
        linter.closed(params.text_document.uri)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched_files_changed(ls: Any, params: Any) -> None:
        if any(change.uri.endswith("/" + CONFIG_FILE_NAME) for change in params.changes):
            linter.reload_configuration()

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL]))
    def code_action(ls: Any, params: Any) -> List[Any]:
        if not _wanted(params, types.CodeActionKind.QuickFix):
            return linter.fix_all_actions(params) if _wanted(params, FIX_ALL) else []
        return linter.fix_actions(params) + linter.noqa_actions(params) + (
            linter.fix_all_actions(params) if _wanted(params, FIX_ALL) else [])

    return server


def _language_server_class() -> Any:
    try:
        from pygls.lsp.server import LanguageServer  # pygls 2
    except ImportError:
        from pygls.server import LanguageServer  # pygls 1
    return LanguageServer


class _Linter:
    """The server's state: pending debounced runs and the configuration errors already shown."""

    def __init__(self, server: Any, types: Any) -> None:
        self.server = server
        self.types = types
        self.debouncer = Debouncer(DEBOUNCE_SECONDS)
        self.errors_shown: Set[str] = set()

    # -- events ---------------------------------------------------------------------------

    def lint_now(self, uri: str) -> None:
        self.debouncer.cancel(uri)
        self._publish(uri, self._diagnostics(uri))

    def lint_soon(self, uri: str) -> None:
        self.debouncer.schedule(uri, lambda: self.lint_now(uri))

    def saved(self, uri: str) -> None:
        if uri.endswith("/" + CONFIG_FILE_NAME):
            self.reload_configuration()
        else:
            self.lint_now(uri)

    def closed(self, uri: str) -> None:
        self.debouncer.cancel(uri)
        self._publish(uri, [])

    def reload_configuration(self) -> None:
        clear_cache()
        forget_indexes()
        self.errors_shown.clear()
        for uri in list(self._open_documents()):
            self.lint_now(uri)

    # -- diagnostics ----------------------------------------------------------------------

    def _diagnostics(self, uri: str) -> List[Any]:
        document = self._document(uri)
        path = _document_path(document)
        if not _is_python(document, path):
            return []
        try:
            config = config_for(path, self._workspace_root())
        except ConfigError as exc:
            self._show_error_once(f"keydrift: {exc}")
            return []
        text = document.source
        lines = source_lines(text)
        return [self._diagnostic(f, uri, path, lines) for f in document_findings(text, path, config)]

    def _diagnostic(self, finding: Finding, uri: str, path: str, lines: List[str]) -> Any:
        t = self.types
        related = [
            t.DiagnosticRelatedInformation(
                location=t.Location(uri=uri if r.path == path else _uri_for(r.path),
                                    range=self._point(lines if r.path == path else [], r.line, r.col)),
                message=r.note or "related")
            for r in finding.related
        ]
        return t.Diagnostic(
            range=self._line_range(lines, finding.line, finding.col),
            message=bare_message(finding),
            severity=t.DiagnosticSeverity.Warning,
            code=finding.code,
            source=SOURCE,
            related_information=related or None,
            data={"code": finding.code, "line": finding.line, "col": finding.col,
                  "end_line": max(finding.line, finding.end_line)},
        )

    def _line_range(self, lines: List[str], line: int, col: int) -> Any:
        """From the reported column to the end of the reported line."""
        t = self.types
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        start = t.Position(line=line - 1, character=self._units(text, col))
        end = t.Position(line=line - 1, character=self._units(text, len(text.rstrip())))
        return t.Range(start=start, end=end if end.character > start.character else start)

    def _point(self, lines: List[str], line: int, col: int) -> Any:
        t = self.types
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        position = t.Position(line=max(0, line - 1), character=self._units(text, col) if text else col)
        return t.Range(start=position, end=position)

    def _units(self, line: str, column: int) -> int:
        encoding = str(getattr(self.server.workspace, "position_encoding", None) or "utf-16")
        return column_units(line, column, encoding.lower())

    # -- code actions ---------------------------------------------------------------------

    def noqa_actions(self, params: Any) -> List[Any]:
        uri = params.text_document.uri
        text = self._document(uri).source
        actions = []
        for diagnostic in params.context.diagnostics:
            if diagnostic.source == SOURCE:
                action = self._noqa_action(uri, text, diagnostic)
                if action is not None:
                    actions.append(action)
        return actions

    def _fixable(self, uri: str) -> Optional[Tuple[str, str, Config]]:
        """The document's text, path and configuration, when it is Python keydrift can check."""
        document = self._document(uri)
        path = _document_path(document)
        if not _is_python(document, path):
            return None
        try:
            return document.source, path, config_for(path, self._workspace_root())
        except ConfigError:
            return None

    def fix_all_actions(self, params: Any) -> List[Any]:
        """One action applying every safe fix of the document (what editors run on save)."""
        uri = params.text_document.uri
        fixable = self._fixable(uri)
        if fixable is None:
            return []
        from keydrift.fixes.editor import fix_all_edit  # loads libcst: only when an action is asked for

        text, path, config = fixable
        edit = fix_all_edit(text, document_findings(text, path, config),
                            lambda fixed: document_findings(fixed, path, config), config)
        if edit is None:
            return []
        t = self.types
        return [t.CodeAction(title=edit.title, kind=FIX_ALL, edit=self._workspace_edit(uri, text, edit))]

    def fix_actions(self, params: Any) -> List[Any]:
        """Each keydrift diagnostic's fix, computed afresh from the document's text."""
        uri = params.text_document.uri
        ours = [d for d in params.context.diagnostics if d.source == SOURCE]
        fixable = self._fixable(uri) if ours else None
        if fixable is None:
            return []
        from keydrift.fixes.editor import fix_edit  # loads libcst: only when an action is asked for

        text, path, config = fixable
        findings = document_findings(text, path, config)
        actions = []
        for diagnostic in ours:
            for finding in findings:
                if _same_place(finding, diagnostic):
                    edit = fix_edit(text, finding, config)
                    if edit is not None:
                        actions.append(self._fix_action(uri, text, diagnostic, edit))
        return actions

    def _fix_action(self, uri: str, text: str, diagnostic: Any, edit: Any) -> Any:
        t = self.types
        title = edit.title if edit.safe else f"{edit.title} (unsafe fix)"
        return t.CodeAction(title=title, kind=t.CodeActionKind.QuickFix, diagnostics=[diagnostic],
                            is_preferred=edit.safe, edit=self._workspace_edit(uri, text, edit))

    def _workspace_edit(self, uri: str, text: str, edit: Any) -> Any:
        t = self.types
        lines = source_lines(text)
        start = t.Position(line=edit.line - 1, character=self._units(lines[edit.line - 1], edit.col))
        end = t.Position(line=edit.end_line - 1, character=self._units(lines[edit.end_line - 1], edit.end_col))
        return t.WorkspaceEdit(changes={uri: [t.TextEdit(range=t.Range(start=start, end=end), new_text=edit.text)]})

    def _noqa_action(self, uri: str, text: str, diagnostic: Any) -> Optional[Any]:
        t = self.types
        data = diagnostic.data if isinstance(diagnostic.data, dict) else {}
        code = str(data.get("code") or diagnostic.code or "")
        first = int(data.get("line") or diagnostic.range.start.line + 1)
        insertion = noqa_insertion(text, first, int(data.get("end_line") or first), code) if code else None
        if insertion is None:
            return None
        line, column, new_text = insertion
        position = t.Position(line=line - 1, character=self._units(source_lines(text)[line - 1], column))
        edit = t.TextEdit(range=t.Range(start=position, end=position), new_text=new_text)
        return t.CodeAction(title=f"Suppress {code} on this statement (# noqa: {code})",
                            kind=t.CodeActionKind.QuickFix, diagnostics=[diagnostic],
                            edit=t.WorkspaceEdit(changes={uri: [edit]}))

    # -- pygls 1.x / 2.x differences ------------------------------------------------------

    def _document(self, uri: str) -> Any:
        workspace = self.server.workspace
        get = getattr(workspace, "get_text_document", None) or workspace.get_document
        return get(uri)

    def _open_documents(self) -> List[str]:
        workspace = self.server.workspace
        documents = getattr(workspace, "text_documents", None)
        if documents is None:
            documents = getattr(workspace, "documents", {})
        return list(documents)

    def _workspace_root(self) -> Optional[str]:
        return getattr(self.server.workspace, "root_path", None)

    def _publish(self, uri: str, diagnostics: List[Any]) -> None:
        version = getattr(self._document(uri), "version", None)
        if hasattr(self.server, "text_document_publish_diagnostics"):
            self.server.text_document_publish_diagnostics(self.types.PublishDiagnosticsParams(
                uri=uri, diagnostics=diagnostics, version=version))
        else:
            self.server.publish_diagnostics(uri, diagnostics, version)

    def _show_error_once(self, message: str) -> None:
        if message in self.errors_shown:
            return
        self.errors_shown.add(message)
        t = self.types
        if hasattr(self.server, "window_show_message"):
            self.server.window_show_message(t.ShowMessageParams(type=t.MessageType.Error, message=message))
        else:
            self.server.show_message(message, t.MessageType.Error)


def _wanted(params: Any, kind: str) -> bool:
    """Whether the client asks for actions of ``kind`` (all kinds when it names none)."""
    only = [str(getattr(k, "value", k)) for k in getattr(params.context, "only", None) or ()]
    wanted = str(getattr(kind, "value", kind))
    return not only or any(wanted == k or wanted.startswith(k + ".") for k in only)


def _same_place(finding: Finding, diagnostic: Any) -> bool:
    data = diagnostic.data if isinstance(diagnostic.data, dict) else {}
    code = str(data.get("code") or diagnostic.code or "")
    line = int(data.get("line") or diagnostic.range.start.line + 1)
    column = data.get("col")
    return finding.code == code and finding.line == line and (column is None or finding.col == int(column))


def _is_python(document: Any, path: str) -> bool:
    return bool(path) and (path.endswith(PYTHON_SUFFIXES) or getattr(document, "language_id", "") == "python")


def _document_path(document: Any) -> str:
    path = getattr(document, "path", "") or ""
    return os.path.abspath(path) if path else ""


def _uri_for(path: str) -> str:
    from pygls.uris import from_fs_path

    return from_fs_path(os.path.abspath(path)) or path
