"""YAML and JSON from files other people wrote, read within bounds: one ``ValueError`` line, never a traceback.

Sweep files, target configurations, network profiles, stored records, rescue files and monitor folders are shared.
A billion-laughs YAML (aliases of aliases) expanded into a 312 MB error line; 5000-deep YAML and 100k-deep JSON
raised RecursionError.  Every YAML document edgebench reads goes through :class:`BoundedLoader` (a ``SafeLoader``
that counts aliases and nesting) and every JSON one through :func:`json_text`; configuration files through
:func:`edgebench.host.files.yaml_file`, which also bounds their size and reads them as UTF-8 text.  Imports nothing
of edgebench (the records read JSON through it).
"""

from __future__ import annotations

import json
from typing import Any

import yaml

#: Aliases one YAML document may use: a sweep file needs a handful; an alias of aliases multiplies.
MAX_ALIASES = 100
#: Nesting a YAML or JSON document may have: sweep files and records nest a few levels.
MAX_DEPTH = 100


class BoundedLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` (no arbitrary objects) that refuses more than :data:`MAX_ALIASES` aliases and nesting
    deeper than :data:`MAX_DEPTH`, so a small file cannot expand into gigabytes or exhaust the stack."""

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self._aliases = 0
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                raise yaml.composer.ComposerError(
                    None, None, f"more than {MAX_ALIASES} aliases (*name): refused", self.peek_event().start_mark
                )
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise yaml.composer.ComposerError(
                    None, None, f"nested deeper than {MAX_DEPTH} levels: refused", self.peek_event().start_mark
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


#: Values a YAML document may expand to, aliases followed (each one a copy): a sweep file holds tens.
MAX_VALUES = 100_000


def expanded_size(value: Any, limit: int = MAX_VALUES) -> int:
    """How many values ``value`` holds with every shared part counted each time it is used (what walking it costs),
    counted up to just past ``limit``."""
    count, stack = 0, [value]
    while stack and count <= limit:
        item = stack.pop()
        count += 1
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple | set):
            stack.extend(item)
    return count


def yaml_text(text: str, loader: type[BoundedLoader] = BoundedLoader) -> Any:
    """``text`` as YAML; a ``ValueError`` saying where and what is wrong, in one short line.  A document whose
    aliases expand it past :data:`MAX_VALUES` values (a billion laughs in a few lines) is refused too."""
    try:
        data = yaml.load(text, Loader=loader)
        if expanded_size(data) > MAX_VALUES:
            raise ValueError(f"its aliases expand it past {MAX_VALUES} values (aliases of aliases): refused")
        return data
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        problem = str(problem) if len(str(problem)) <= 120 else str(problem)[:100] + "..."
        raise ValueError(f"not valid YAML{where}: {problem}") from None
    except RecursionError:
        raise ValueError(f"not valid YAML: nested deeper than {MAX_DEPTH} levels") from None


def json_text(text: str | bytes) -> Any:
    """``text`` as JSON; a ``ValueError`` for anything that is not (nesting too deep for the parser included)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("not valid JSON: nested too deep") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"not valid JSON: not UTF-8 text ({exc.reason})") from None
