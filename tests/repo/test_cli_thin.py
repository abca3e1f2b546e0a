"""``cli/`` stays a thin layer over the workflows (issue 36): it reads flags, calls one workflow, prints.  Held here
as two numbers a reader can check: the first-level parts above the records layer that ``cli/`` imports (lazy imports
inside functions included; the workflows, and what reads flags and prints), and the length of its functions."""

from __future__ import annotations

import ast

from tests.repo.test_layers import PACKAGE, declared_layers, imports

#: At most this many parts above ``records``: ``workflows``, and the parts that read flags and print.
MAX_PARTS = 5
#: What those parts are today: the workflows, the settings' flag readers, the views, and the signal that ends a
#: command as Ctrl-C does (``host.lifetime``).  Anything else the CLI wants is a workflow's to do.
ALLOWED = {"workflows", "config", "report", "host"}
#: No function of ``cli/`` is longer than this (signature, decorators and docstring included).
MAX_LINES = 80


def cli_parts() -> set[str]:
    layers = declared_layers()
    return {target for source, target, _ in imports() if source == "cli" and layers[target] > layers["records"]}


def test_cli_imports_the_workflows_and_what_reads_flags_and_prints():
    parts = cli_parts()
    assert "workflows" in parts
    assert len(parts) <= MAX_PARTS, sorted(parts)
    assert parts <= ALLOWED, f"cli/ reaches past the workflows into {sorted(parts - ALLOWED)}"


def function_lengths() -> dict[str, int]:
    """``{file:line name: lines}`` of every function (methods and nested ones too) under ``cli/``."""
    lengths = {}
    for path in sorted((PACKAGE / "cli").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                assert node.end_lineno is not None
                lengths[f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}"] = node.end_lineno - start + 1
    return lengths


def test_no_cli_function_is_long():
    lengths = function_lengths()
    assert lengths, "no function found under cli/"
    long = {where: n for where, n in lengths.items() if n > MAX_LINES}
    assert long == {}, f"cli/ functions over {MAX_LINES} lines (move the work into a workflow): {long}"
