"""A lowered program's accuracy record is taken once per program and inputs, and never read back torn or edited."""

from __future__ import annotations

import json
from pathlib import Path

from edgebench.backends.executorch.lower import Lowered, cached_accuracy


def test_the_record_is_taken_once_per_program_and_inputs(tmp_path):
    program = tmp_path / "lenet-b2-infer-portable-fp16-abc.pte"
    program.write_bytes(b"program bytes")
    lowered = Lowered(str(program), "portable", "fp16", "infer", [0], [])
    taken = []

    def compute():
        taken.append(1)
        return {"top1_agreement": 0.99, "compared_samples": 256}

    inputs = [b"compare inputs", b"labels", b"2"]
    assert cached_accuracy(lowered, inputs, compute) == {"top1_agreement": 0.99, "compared_samples": 256}
    (sidecar,) = tmp_path.glob("*-accuracy-*.json")
    assert cached_accuracy(lowered, inputs, compute)["top1_agreement"] == 0.99 and len(taken) == 1
    cached_accuracy(lowered, [b"other inputs", b"labels", b"2"], compute)  # other inputs: taken for them
    assert len(taken) == 2
    seal = json.loads(sidecar.read_text())
    seal["body"] = seal["body"].replace("0.99", "1.0")  # edited: not used, taken again
    sidecar.write_text(json.dumps(seal))
    assert cached_accuracy(lowered, inputs, compute)["top1_agreement"] == 0.99 and len(taken) == 3
    program.write_bytes(b"another program under the same name")  # a replaced program: taken again
    cached_accuracy(lowered, inputs, compute)
    assert len(taken) == 4


def test_a_lowered_program_is_read_back_only_with_its_sealed_description(tmp_path, monkeypatch):
    """The sidecar describing a cached program (instructions, delegates) was read unsealed: a torn or edited one, or
    one beside a replaced program, described a program it was not made from."""
    from edgebench.backends.executorch.lower import cached

    monkeypatch.setenv("EDGEBENCH_CACHE_DIR", str(tmp_path))
    built = []

    def build(path):
        built.append(path)
        path.write_bytes(b"program %d" % len(built))
        return Lowered(str(path), "portable", "fp32", "infer", [0, 64], [], delegates=["none"])

    key = {"model": "lenet", "batch": 1}
    first = cached(key, "lenet-b1", build)
    assert cached(key, "lenet-b1", build) == first and len(built) == 1  # read back, not lowered again
    (sidecar,) = (tmp_path / "executorch").glob("*.json")
    seal = json.loads(sidecar.read_text())
    seal["body"] = seal["body"].replace('"none"', '"XnnpackBackend"')  # edited: lowered again
    sidecar.write_text(json.dumps(seal))
    assert cached(key, "lenet-b1", build).delegates == ["none"] and len(built) == 2
    Path(first.path).write_bytes(b"another program under the same name")  # replaced beside its sidecar
    cached(key, "lenet-b1", build)
    assert len(built) == 3
    sidecar.write_text(sidecar.read_text()[:40])  # torn
    cached(key, "lenet-b1", build)
    assert len(built) == 4
    assert cached({"model": "lenet", "batch": 2}, "lenet-b2", build).path != first.path and len(built) == 5
