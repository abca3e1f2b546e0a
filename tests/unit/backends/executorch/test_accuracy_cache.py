"""A lowered program's accuracy record is taken once per program and inputs, and never read back torn or edited."""

from __future__ import annotations

import json

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
