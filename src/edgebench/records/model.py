"""The base of every pydantic record edgebench declares (trial records, configurations, analyses, study reports).

Its one setting, ``defer_build``: a record's validator is built on first use, not when its module is imported.
A command imports every record type through its subcommands' modules but uses a few; building them all at import
cost each command about 0.15 s before it did anything (``python -X importtime -m edgebench``).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Record(BaseModel):
    model_config = ConfigDict(defer_build=True)
