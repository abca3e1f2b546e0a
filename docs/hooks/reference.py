"""An mkdocs hook that writes the reference pages from the code at build time: every setting
(``config/settings.py``), every result field (``records/result.py`` and the records it holds) and every command's
``--help``.  Nothing here is a hand copy, so the pages cannot drift from what edgebench accepts and stores.

mkdocs loads this file by path (``hooks:`` in ``mkdocs.yml``); it imports edgebench from the installed package
(``pip install -e '.[docs]'``).  It fetches nothing.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from typing import Any

from mkdocs.structure.files import File, Files

PAGES = {
    "reference/settings.md": "settings_page",
    "reference/results.md": "results_page",
    "reference/cli.md": "cli_page",
}


#: Where a guide page takes a generated table: ``<!-- generated: run-options -->`` on a line of its own.
MARKER = re.compile(r"^<!-- generated: ([a-z-]+) -->$", re.MULTILINE)
#: The tables a marker names (an unknown name fails the build).
TABLES = {"run-options": "run_options_table", "sweep-keys": "sweep_keys_table"}


def on_files(files: Files, config: Any) -> Files:
    for path, maker in PAGES.items():
        files.append(File.generated(config, path, content=globals()[maker]()))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    """The guides' option and key tables, generated where their markers stand, so no guide holds a hand copy."""

    def table(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in TABLES:
            raise ValueError(f"{page.file.src_path}: no generated table {name!r}; known: {', '.join(TABLES)}")
        return globals()[TABLES[name]]()

    return MARKER.sub(table, markdown)


def cell(text: Any) -> str:
    """A Markdown table cell: pipes escaped, one line, reStructuredText's ``code`` written as Markdown's."""
    return str(text).replace("|", "\\|").replace("\n", " ").replace("``", "`")


def code(text: Any) -> str:
    return f"`{text}`" if text not in (None, "") else ""


# --- settings ------------------------------------------------------------------------------------------------------


def type_name(annotation: Any) -> str:
    """``int | None`` for a field's annotation: constraints (``Annotated``) left out, unions written with ``|``."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return type_name(args[0])
    if origin in (typing.Union, types.UnionType):
        return " | ".join(type_name(a) for a in args)
    if origin is typing.Literal:
        return " | ".join(repr(a) for a in args)
    if origin is not None:
        name = getattr(origin, "__name__", None) or str(origin).removeprefix("typing.")
        return f"{name}[{', '.join('...' if a is Ellipsis else type_name(a) for a in args)}]"
    if annotation is type(None):
        return "None"
    return getattr(annotation, "__name__", None) or str(annotation).removeprefix("typing.")


def reads(setting: Any) -> str:
    """How a value is written: the parser's own docstring (the unit and its spellings), or the field's type."""
    from edgebench.records.trial import Trial

    annotation = type_name(
        setting.accepts if setting.accepts is not None else Trial.model_fields[setting.field].annotation
    )
    parser = setting.parse
    if parser is None:
        return f"`{annotation}`"
    inner = inspect.getclosurevars(parser).nonlocals.get("parser", parser) if parser.__closure__ else parser
    doc = (inspect.getdoc(inner) or "").split("\n\n")[0].replace("\n", " ")
    return f"`{annotation}`, read by `{inner.__name__}`: {doc}" if doc else f"`{annotation}` (`{inner.__name__}`)"


def settings_page() -> str:
    from edgebench.config.settings import SETTINGS

    lines = [
        "# Settings",
        "",
        "Generated from `edgebench.config.settings.SETTINGS` at build time. Every setting of a trial is a flag of",
        "`edgebench run` and a key of a sweep file, read by the same parser and refused in the same words. In a",
        "sweep file a scalar is a constant and a list an axis; a key marked *axis* is written in the plural and is",
        "always a list (a scalar reads as a one-element list).",
        "",
        "| flag | YAML key | value (unit, parser) | default | meaning |",
        "|---|---|---|---|---|",
    ]
    for s in SETTINGS:
        flag = f"`{s.flag}`" + (f", `{s.short}`" if s.short else "")
        key = f"`{s.key}`" + (" (axis)" if s.plural_axis else "")
        default = s.shown_default if s.shown_default is not None else f"`{s.trial_default!r}`"
        lines.append(f"| {flag} | {key} | {cell(reads(s))} | {cell(default)} | {cell(s.help)} |")
    return "\n".join(lines) + "\n"


def shown(setting: Any, default: Any) -> str:
    """A default as a guide shows it: the declared words (``one per core used``), else the value in code."""
    if setting is not None and setting.shown_default is not None:
        return cell(setting.shown_default)
    if default is None or default is False or default in ((), []):
        return ""
    return code(default)


def run_options_table() -> str:
    """Every option of ``edgebench run`` in the order ``--help`` lists them: the settings, then the run's own."""
    import typer

    from edgebench.cli import app
    from edgebench.config.settings import SETTINGS

    by_flag = {s.flag: s for s in SETTINGS}
    root = typer.main.get_command(app)
    run = root.commands["run"]  # type: ignore[attr-defined]  (a group: typer's own click)
    lines = ["| option | meaning | default |", "|---|---|---|"]
    for param in run.params:
        if param.param_type_name != "option" or getattr(param, "hidden", False):
            continue
        setting = by_flag.get(param.opts[0])
        default = param.show_default if isinstance(param.show_default, str) else param.default
        flags = ", ".join(code(o) for o in param.opts)
        lines.append(f"| {flags} | {cell(param.help or '')} | {shown(setting, default)} |")
    return "\n".join(lines) + "\n"


def sweep_keys_table() -> str:
    """Every key of a sweep file: each setting (an axis or a constant), then the keys of the sweep itself."""
    from edgebench.config.settings import SETTINGS
    from edgebench.config.sweep_file import SweepConfig

    lines = ["| key | meaning | default |", "|---|---|---|"]
    for s in SETTINGS:
        key = code(s.key) + (" (axis)" if s.plural_axis else "")
        default = code(list(s.sweep_default)) if s.sweep_default is not None else shown(s, s.trial_default)
        lines.append(f"| {key} | {cell(s.help)} | {default} |")
    declared = {s.key for s in SETTINGS} | {s.attribute for s in SETTINGS}
    comments = field_comments(SweepConfig)
    for name, info in SweepConfig.model_fields.items():
        if name in declared:
            continue
        meaning = comments.get(name) or info.description or first_paragraph(info.annotation)
        default = info.get_default(call_default_factory=True)
        if hasattr(default, "model_dump"):  # a section (cooldown): off unless given
            default = default.model_dump(exclude_defaults=True) or None
        lines.append(f"| {code(name)} | {cell(meaning)} | {shown(None, default) or 'none'} |")
    return "\n".join(lines) + "\n"


# --- result fields -------------------------------------------------------------------------------------------------


def field_comments(model: type) -> dict[str, str]:
    """The ``#:`` comment above each field of ``model``'s class body (what the code says a field means)."""
    comments: dict[str, str] = {}
    pending: list[str] = []
    try:
        source = inspect.getsource(model)
    except (OSError, TypeError):
        return comments
    for line in source.splitlines()[1:]:
        stripped = line.strip()
        if stripped.startswith("#:"):
            pending.append(stripped[2:].strip())
            continue
        match = re.match(r"\s+(\w+)\s*:", line)
        if match and pending:
            comments[match.group(1)] = " ".join(pending)
        if stripped:
            pending = []
    return comments


def first_paragraph(model: type) -> str:
    """The first paragraph of the record's own docstring (not one it inherits from pydantic's ``BaseModel``)."""
    return inspect.cleandoc(model.__dict__.get("__doc__") or "").split("\n\n")[0].replace("\n", " ")


def models_inside(annotation: Any) -> list[tuple[str, type]]:
    """The records a field holds, with the path step to reach them: ``""`` (the field itself), ``[]`` (a list's
    items) or ``.<name>`` (a mapping's values)."""
    from pydantic import BaseModel

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [("", annotation)]
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        return [found for arg in args for found in models_inside(arg)]
    if origin is list:
        return [("[]" + step, m) for step, m in models_inside(args[0])]
    if origin is dict:
        return [(".<name>" + step, m) for step, m in models_inside(args[1])]
    return []


def walk(model: type, prefix: str, rows: list[tuple[str, str, str]], seen: tuple[type, ...]) -> None:
    from edgebench.config.settings import BY_FIELD
    from edgebench.records.trial import Trial

    comments = field_comments(model)
    if model is Trial:  # a trial field without a comment of its own is a setting: its help says what it is
        comments = {**{f: f"{s.help} (`{s.flag}`)" for f, s in BY_FIELD.items()}, **comments}
    for name, info in model.model_fields.items():
        path = f"{prefix}{name}"
        inner = models_inside(info.annotation)
        meaning = comments.get(name) or info.description or ""
        if inner and not meaning:
            meaning = first_paragraph(inner[0][1])
        rows.append((path, type_name(info.annotation), meaning))
        for step, sub in inner:
            if sub not in seen:
                walk(sub, f"{path}{step}.", rows, (*seen, sub))


def result_rows() -> list[tuple[str, str, str]]:
    from edgebench.records.result import TrialResult

    rows: list[tuple[str, str, str]] = []
    walk(TrialResult, "", rows, (TrialResult,))
    return rows


def results_page() -> str:
    from edgebench.records.result import SCHEMA_VERSION
    from edgebench.records.result_schema import MOVES

    old_names: dict[str, list[str]] = {}
    for move in MOVES:
        old_names.setdefault(move.new, []).append(move.old)
    lines = [
        "# Result fields",
        "",
        f"Generated from `edgebench.records.result.TrialResult` (schema {SCHEMA_VERSION}) at build time: every field",
        "of the record `edgebench run --json` prints and the store keeps, by its path in the JSON object. `[]` is an",
        "item of a list, `<name>` a key of a mapping (a rail, a sensor). The schema-3 column is the flat name the",
        "trials table (CSV, Parquet) keeps; [Result schema 4](../result-schema-v4.md) says where each one went.",
        "",
        "| path (schema 4) | type | meaning | schema 3 |",
        "|---|---|---|---|",
    ]
    for path, kind, meaning in result_rows():
        old = ", ".join(f"`{o}`" for o in old_names.get(path, []))
        lines.append(f"| `{path}` | `{cell(kind)}` | {cell(meaning)} | {old} |")
    return "\n".join(lines) + "\n"


# --- commands ------------------------------------------------------------------------------------------------------


def command_helps() -> list[tuple[str, str]]:
    """``(edgebench run, its --help)`` for the top level and every command and subcommand, in the order
    ``edgebench --help`` lists them; rendered 100 columns wide as a terminal of that width would."""
    import typer
    from typer.testing import CliRunner

    from edgebench.cli import app

    runner = CliRunner()
    root = typer.main.get_command(app)
    found: list[tuple[str, str]] = []

    def visit(words: list[str], command: Any) -> None:
        result = runner.invoke(app, [*words, "--help"], env={"COLUMNS": "100", "TERM": "dumb"})
        if result.exit_code != 0:
            raise RuntimeError(f"edgebench {' '.join(words)} --help exited {result.exit_code}: {result.output}")
        found.append((" ".join(["edgebench", *words]), result.output.rstrip()))
        for name, sub in getattr(command, "commands", {}).items():  # a group (typer's own click, not ``click``)
            visit([*words, name], sub)

    visit([], root)
    return found


def cli_page() -> str:
    lines = [
        "# Commands",
        "",
        "Generated at build time from each command's `--help` (the text below is what the command prints).",
        "",
    ]
    for name, text in command_helps():
        lines += [f"## `{name}`", "", "```text", text, "```", ""]
    return "\n".join(lines)
