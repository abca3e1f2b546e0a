"""YAML as edgebench reads a value, from a sweep file, ``--set key=value`` or a ``run`` flag.

Integers keep the text they were written as, because a core mask ``11`` is hex as in taskset, not eleven.
Reading a flag's text the way a sweep file's value is read is what makes ``--batch-size 0`` and
``batch_sizes: [0]`` the same value, refused in the same words.
"""

from __future__ import annotations

from typing import Any

import yaml

from edgebench.parsing import BoundedLoader, yaml_text


class LiteralInt(int):
    """An integer read from YAML that remembers how it was written (``0x11``, ``11``), for core masks."""

    text: str

    def __new__(cls, value: int, text: str) -> LiteralInt:
        self = super().__new__(cls, value)
        self.text = text
        return self


class _Loader(BoundedLoader):
    """YAML as usual (safe, aliases and nesting bounded), except that integers keep their source text (a core mask
    ``11`` is hex, as in taskset)."""


def _construct_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    return LiteralInt(yaml.SafeLoader.construct_yaml_int(loader, node), node.value)


_Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)


def _construct_unique_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    """A mapping that refuses a key given twice: YAML would keep the last silently, and half a sweep would vanish."""
    seen: dict[Any, yaml.Node] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node)  # type: ignore[no-untyped-call]
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"{key!r} is given twice (first at line {seen[key].start_mark.line + 1}); keep one",
                key_node.start_mark,
            )
        seen[key] = key_node
    return yaml.SafeLoader.construct_mapping(loader, node)


_Loader.add_constructor("tag:yaml.org,2002:map", _construct_unique_mapping)


def parse_yaml(text: str) -> Any:
    """``text`` as YAML (:func:`edgebench.parsing.yaml_text`: a ``ValueError`` line for anything it is not)."""
    return yaml_text(text, _Loader)


def read_scalar(text: str) -> Any:
    """A command-line value as YAML reads it (``8`` -> 8, ``[1, 2]`` -> a list); text YAML cannot read, as written."""
    try:
        return parse_yaml(text)
    except ValueError:
        return text
