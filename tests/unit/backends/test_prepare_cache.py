"""A backend's preparation is kept in the derived-files cache: keyed by everything that decides it, made once, and
never served torn, edited or for a user's own model."""

import json

from edgebench.backends.prepare_child import cached_preparation, preparation_key
from edgebench.records.trial import Trial

MODULE = "edgebench.backends.mnn.prepare"


def trial(**fields) -> Trial:
    return Trial(**{"model": "lenet", "backend": "mnn", **fields})


def test_placement_does_not_change_the_key_and_what_is_made_does():
    base = preparation_key(MODULE, trial())
    assert base is not None
    for placed in ({"threads": 1}, {"cores": [0]}, {"repeats": 5}, {"idle_s": 0.0}, {"trace": "layers"}):
        assert preparation_key(MODULE, trial(**placed)) == base, placed
    for made in ({"batch_size": 8}, {"seed": 1}, {"mode": "infer"}, {"data": "mnist"}, {"precision": "fp16"}):
        assert preparation_key(MODULE, trial(**made)) != base, made
    assert preparation_key("edgebench.backends.onnxruntime.prepare", trial()) != base
    # how long an inference trial runs does not change its model and batch
    infer = preparation_key(MODULE, trial(mode="infer"))
    assert preparation_key(MODULE, trial(mode="infer", steps=50, warmup=9, infer_steps=0)) == infer
    assert preparation_key(MODULE, trial(mode="infer", batch_size=4)) != infer
    # nor a training trial's on a synthetic batch; on a dataset, the draws its epoch orders cover do (however the
    # trial's length is given)
    assert preparation_key(MODULE, trial(steps=50, warmup=9, target_ci_pct=2.0)) == base
    # inference passes change what ExecuTorch prepares for a training trial (an inference program), not MNN's files
    assert preparation_key(MODULE, trial(infer_steps=0)) == base
    executorch = "edgebench.backends.executorch.prepare"
    lowered = preparation_key(executorch, trial(backend="executorch"))
    assert preparation_key(executorch, trial(backend="executorch", infer_steps=0)) != lowered
    assert preparation_key(executorch, trial(backend="executorch", steps=50, infer_steps=3)) == lowered
    mnist = preparation_key(MODULE, trial(data="mnist", steps=20, warmup=3))
    assert preparation_key(MODULE, trial(data="mnist", steps=21, warmup=2)) == mnist  # 23 draws either way
    for longer in ({"steps": 50}, {"target_ci_pct": 2.0}, {"until_accuracy": 0.9}):
        assert preparation_key(MODULE, trial(data="mnist", warmup=3, **longer)) != mnist, longer


def test_a_users_model_or_text_is_never_cached(tmp_path):
    assert preparation_key(MODULE, trial(model="mypkg.mymodule:factory")) is None
    text = tmp_path / "corpus.txt"
    text.write_text("to be or not to be " * 100)
    assert preparation_key(MODULE, Trial(model="lm_1m", data=str(text))) is None


def test_made_once_then_copied_and_a_damaged_entry_is_made_again(tmp_path, monkeypatch):
    monkeypatch.setenv("EDGEBENCH_CACHE_DIR", str(tmp_path / "cache"))
    calls = []

    def prepare_into(folder):
        def prepare():
            calls.append(folder)
            (folder / "model.mnn").write_bytes(b"model bytes")
            return {"model_path": str(folder / "model.mnn"), "paths": [str(folder / "model.mnn")], "n": 3}

        return prepare

    first, second, third = (tmp_path / name for name in ("a", "b", "c"))
    for folder in (first, second, third):
        folder.mkdir()
    doc = cached_preparation("k1", first, prepare_into(first))
    assert doc["model_path"] == str(first / "model.mnn") and calls == [first]
    again = cached_preparation("k1", second, prepare_into(second))
    assert calls == [first]  # from the cache: the files copied into the new folder, the paths pointing there
    assert again == {"model_path": str(second / "model.mnn"), "paths": [str(second / "model.mnn")], "n": 3}
    assert (second / "model.mnn").read_bytes() == b"model bytes"
    # an entry whose file was changed after it was sealed is not used
    entry = tmp_path / "cache" / "prepared" / "k1"
    (entry / "model.mnn").write_bytes(b"edited")
    cached_preparation("k1", third, prepare_into(third))
    assert calls == [first, third]
    # nor one whose document was edited
    seal = json.loads((entry / "prepared.json").read_text())
    seal["body"] = seal["body"].replace('"n": 3', '"n": 4')
    (entry / "prepared.json").write_text(json.dumps(seal))
    fourth = tmp_path / "d"
    fourth.mkdir()
    assert cached_preparation("k1", fourth, prepare_into(fourth))["n"] == 3 and calls[-1] == fourth
