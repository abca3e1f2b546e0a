"""The package's first-level parts form layers, as ``docs/architecture.md`` draws them: every import (lazy ones
inside functions included) goes to a part of the same layer or a lower one, and within a layer parts do not
import each other.  The table in the docs is the declaration; this test holds the code to it."""

from __future__ import annotations

import ast
import re

from tests.paths import ROOT

PACKAGE = ROOT / "src" / "edgebench"
DOC = ROOT / "docs" / "architecture.md"


def declared_layers() -> dict[str, int]:
    """``{part: layer}`` from the docs' layer table: rows ``| N | `a`, `b` | what it does |``, 0 at the bottom."""
    layers: dict[str, int] = {}
    for line in DOC.read_text().splitlines():
        match = re.match(r"^\|\s*(\d+)\s*\|([^|]+)\|", line)
        if match:
            for part in re.findall(r"`([\w.]+)`", match.group(2)):
                layers[part.removesuffix(".py")] = int(match.group(1))
    return layers


def imports() -> list[tuple[str, str, str]]:
    """``(importing part, imported part, where)`` for every import between two first-level parts."""
    found = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        module = ".".join(rel.parts).removesuffix(".__init__")
        source = module.split(".")[1] if "." in module else "__init__"
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    names = [".".join(base + ([node.module] if node.module else []))]
                elif node.module:
                    names = [node.module]
            for name in names:
                bits = name.split(".")
                if bits[0] == "edgebench" and len(bits) > 1 and bits[1] != source:
                    found.append((source, bits[1], f"{path.relative_to(ROOT)}:{node.lineno}"))
    return found


def test_every_part_has_a_layer():
    parts = {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir() if p.suffix == ".py" or p.is_dir()}
    parts -= {"__pycache__", "__init__", "__main__"}
    assert parts - set(declared_layers()) == set(), "parts missing from the table in docs/architecture.md"
    assert set(declared_layers()) - parts == set(), "parts in docs/architecture.md that the package lacks"


def test_imports_go_down_the_layers():
    layers = declared_layers()
    upward = [
        f"{where}: {source} (layer {layers[source]}) imports {target} (layer {layers[target]})"
        for source, target, where in imports()
        if source in layers and target in layers and layers[target] >= layers[source]
    ]
    assert upward == []
