"""Text from data into the places that give text a meaning: one function per sink, declared here once.

Labels, notes, reasons, command lines, model and sensor names come from stores, result folders and devices other
people made.  Each sink edgebench writes reads some characters as instructions, so data goes through the sink's
function below, which makes it show as the characters it is:

* Rich (the terminal tables): ``[bold]``, ``[/red]`` are markup; an unbalanced ``[/b]`` in a label raised
  ``MarkupError`` and ``[blink]`` vanished.  :func:`rich_text`.
* HTML (the report): ``<``, ``&`` and quotes; and inside a ``<script>`` element, JSON whose strings hold
  ``</script>`` or ``<!--`` ends or breaks the script.  :func:`html_text`, :func:`script_json`.
* matplotlib (``plot``, ``--plot``): ``$...$`` is a TeX formula its parser may reject.  :func:`plain_pyplot` turns
  that parsing off for every text of the figure, so nothing needs escaping there.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

#: A ``[`` with the backslashes before it; whether it opens what Rich's parser takes for a tag is decided as Rich
#: does (``rich.markup.RE_TAGS``).
_BRACKET = re.compile(r"(\\*)\[")
_TAG = re.compile(r"\[[a-z#/@][^[]*?]")
_TRAILING = re.compile(r"(\\+)$")


def rich_text(text: object) -> str:
    """``text`` as Rich shows it literally, alone or between tags (``f"[red]{rich_text(x)}[/red]"``).

    Rich reads ``k`` backslashes before a tag as ``k // 2`` of them and escapes the tag when ``k`` is odd, and drops
    the one backslash before any other ``[``; ``rich.markup.escape`` handles only the first case (``\\[`` lost its
    backslash).  A trailing run of backslashes is doubled, so that it cannot escape a tag that follows it; shown
    alone it reads doubled (as with Rich's own escape)."""
    value = str(text)

    def bracket(match: re.Match[str]) -> str:
        run = len(match.group(1))
        tag = _TAG.match(value, match.end() - 1) is not None
        return "\\" * (2 * run + 1 if tag else run + 1) + "["

    escaped = _BRACKET.sub(bracket, value)
    return _TRAILING.sub(lambda m: m.group(1) * 2, escaped)


def html_text(text: object) -> str:
    """``text`` as HTML character data or an attribute value (quotes included); Plotly's labels read it the same."""
    return html.escape(str(text), quote=True)


#: What a JSON document inside ``<script>`` must not hold as such: ``<`` (``</script>``, ``<!--``, ``<script``),
#: ``>`` and ``&`` for good measure, and the two line separators old JavaScript parsers end a string at.
_SCRIPT_SAFE = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def script_json(value: Any) -> str:
    """``value`` as JSON that an HTML ``<script>`` element holds whole (``JSON.parse`` reads back the same value)."""
    text = json.dumps(value, separators=(",", ":"), allow_nan=False)
    return "".join(_SCRIPT_SAFE.get(c, c) for c in text) if any(c in text for c in _SCRIPT_SAFE) else text


#: matplotlib settings under which a text is drawn as the characters it holds.
PLAIN_TEXT_RC = {"text.usetex": False, "text.parse_math": False}


def plain_pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend (no display), with TeX and ``$`` formulas off for every text of
    the figures it draws; ``ImportError`` when matplotlib is not installed (each caller names its extra)."""
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams.update(PLAIN_TEXT_RC)
    import matplotlib.pyplot as plt

    return plt
