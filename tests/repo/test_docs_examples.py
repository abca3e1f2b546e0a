"""Every ``edgebench`` example of the docs site names a command that exists, with flags it takes, values they read.

The README's examples are run by tests/test_readme.py; the guides' examples mostly need a store with particular
trials, a board or a phone, so here each one is parsed as the command line would be (click's own parser, then the
settings' readers for every setting flag), which is where a guide goes stale: a renamed flag, a removed command,
a unit a setting no longer reads.  The generated reference pages are left out: they are the help itself.
"""

from __future__ import annotations

import itertools
import re
import shlex
from typing import Any

import pytest
import typer

from edgebench.cli import app
from edgebench.config.settings import SETTINGS, read_flag
from tests.paths import ROOT

DOCS = ROOT / "docs"
BY_FLAG = {s.flag: s for s in SETTINGS}


def examples() -> list[tuple[str, str]]:
    """``(page, command line)`` for every ``edgebench`` line of a shell block, continuation lines joined."""
    found = []
    for page in sorted(DOCS.rglob("*.md")):
        if "reference" in page.relative_to(DOCS).parts:
            continue
        for block in re.findall(r"```(?:sh|bash|console)\n(.*?)```", page.read_text(), re.S):
            for line in block.replace("\\\n", " ").splitlines():
                line = line.strip().removeprefix("$ ")
                if line.startswith("edgebench "):
                    line = re.split(r" #| \| | > ", line, maxsplit=1)[0].strip()  # comments, pipes, redirections
                    found.append((str(page.relative_to(DOCS)), line))
    return found


def parse(line: str) -> Any:
    """The context click builds for ``line`` down to its leaf command (raises on an unknown command or flag).

    Typer ships its own copy of click, so its groups and errors are told by what they do, not by click's classes.
    """
    args = shlex.split(line)[1:]
    command = typer.main.get_command(app)
    ctx = command.make_context("edgebench", args)
    while hasattr(command, "resolve_command"):
        name, command, rest = command.resolve_command(ctx, [*ctx._protected_args, *ctx.args])
        ctx = command.make_context(name, rest, parent=ctx)
    return ctx


def test_the_guides_have_examples_to_check():
    assert len(examples()) > 50


def is_synopsis(line: str) -> bool:
    """A usage line (``edgebench trials [--model M] [--last N]``, ``compare <a trial> <another>``), not a command."""
    return bool(re.search(r"\[-|<[a-z]|\|", line))


def command_of(words: list[str]) -> Any:
    """The leaf command the leading words of a usage line name."""
    command = typer.main.get_command(app)
    for word in words[1:]:
        if not hasattr(command, "commands") or word not in command.commands:
            break
        command = command.commands[word]
    return command


@pytest.mark.parametrize(("page", "line"), examples(), ids=[f"{p}:{i}" for i, (p, _) in enumerate(examples())])
def test_every_docs_example_parses_as_the_cli_reads_it(page, line):
    if is_synopsis(line):
        command = command_of(line.split())
        taken = {opt for p in command.params for opt in (*p.opts, *p.secondary_opts)}
        named = set(re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", line))
        assert named <= taken, f"{page}: `{line}` names {sorted(named - taken)}, which `{command.name}` does not take"
        return
    try:
        ctx = parse(line)
    except Exception as exc:  # typer's click's UsageError
        if not hasattr(exc, "format_message"):
            raise
        pytest.fail(f"{page}: `{line}`: {exc.format_message()}")
    # the flags this command declares from the settings (another command's --device may name a phone)
    declared = {opt: BY_FLAG[opt] for p in ctx.command.params for opt in p.opts if opt in BY_FLAG}
    declared = {opt: s for opt, s in declared.items() if s.help in (_help_of(ctx.command, opt) or "")}
    words = shlex.split(line)
    for word, value in itertools.pairwise([*words, ""]):
        flag, _, inline = word.partition("=")
        if flag in declared and not value.startswith("-") and not re.fullmatch(r"[A-Z_]+", inline or value):
            read_flag(declared[flag], inline or value)


def _help_of(command: Any, opt: str) -> str | None:
    return next((getattr(p, "help", None) for p in command.params if opt in p.opts), None)
