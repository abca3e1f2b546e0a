"""Records stored by an earlier edgebench (result schema 3) load and render as they did then.

``fixtures/golden/store_v3`` is a real store written by edgebench at schema 3 (runs of lenet and mnist_mlp: an
energy estimate, a layer trace, an adaptive --target-ci run, a failed --memory-budget run and a two-trial sweep),
with what ``run``, ``layers``, ``compare`` and ``export`` printed from it at the time.  Every later change to the
records must keep these loading and rendering the same: the files are never regenerated.  A field added to the
result later adds an empty column to the trials CSV; every column that was there keeps its cells.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from rich.console import Console

from edgebench.report.summary import summary_table
from edgebench.store import Store
from tests.factories import copy_of_the_golden_store
from tests.paths import GOLDEN_STORE_DIR as GOLDEN


@pytest.fixture(scope="module")
def store_copy(tmp_path_factory) -> Path:
    return copy_of_the_golden_store(tmp_path_factory.mktemp("golden"))


def test_every_stored_record_loads_and_summarises_as_it_did(store_copy):
    with Store(store_copy) as store:
        results = store.query()
    assert len(results) == 6
    for result in results:
        console = Console(width=100, record=True, color_system=None, file=open(os.devnull, "w"))  # noqa: SIM115
        console.print(summary_table(result))
        assert console.export_text() == (GOLDEN / f"summary-{result.trial_id}.txt").read_text(), result.trial_id
