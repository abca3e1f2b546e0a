"""``edgebench models`` counts a model once: later listings read the counts from the cache, without torch."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys

from edgebench.graph.cache import fingerprint
from edgebench.host.files import write_sealed
from tests.conftest import json_out


def listing_imports_torch(cache) -> tuple[str, bool]:
    code = (
        "import contextlib, io, sys; from edgebench.cli import main; out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out): main(['models', 'lenet', 'alexnet', '--json'])\n"
        "print(repr(out.getvalue())); print('torch' in sys.modules)"
    )
    env = dict(os.environ, EDGEBENCH_CACHE=str(cache))
    lines = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    listing, imported = lines.stdout.strip().splitlines()
    return ast.literal_eval(listing), imported == "True"


def test_the_second_listing_reads_the_counts_without_building_a_model(tmp_path):
    cache = tmp_path / "counts.json"
    first, imported = listing_imports_torch(cache)
    assert imported and cache.exists()
    second, imported = listing_imports_torch(cache)
    assert second == first and not imported
    lenet = json.loads(second)[0]
    assert lenet["params"] > 0 and lenet["forward_flops"] > 0


def test_counts_from_other_model_code_are_not_used(cli):
    cli.cache_path = cache = cli.store_path.parent / "model-counts.json"
    planted = {"lenet|params|(1, 28, 28)|10|": 1, "lenet|flops|(1, 28, 28)|10": [2, 6]}
    write_sealed(cache, {"counts": planted}, fingerprint())
    (lenet,) = json_out(cli("models", "lenet", "--json"))
    assert (lenet["params"], lenet["forward_flops"]) == (1, 2)  # read from the cache: these are its keys
    write_sealed(cache, {"counts": planted}, "another-version")
    (lenet,) = json_out(cli("models", "lenet", "--json"))
    assert lenet["params"] > 1 and lenet["forward_flops"] > 2  # counted again
