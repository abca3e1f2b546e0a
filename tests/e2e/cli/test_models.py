"""``edgebench models``: the listing a user reads, and its JSON."""

from tests.conftest import json_out


def test_models_json_lists_sizes_flops_and_references(cli):
    proc = cli("models", "lenet", "mobilenet_v1", "inception_v1", "--json")
    assert proc.returncode == 0, proc.stderr
    lenet, mobilenet, googlenet = json_out(proc)
    assert (lenet["name"], lenet["domain"], lenet["input_shape"], lenet["params"]) == (
        "lenet",
        "vision",
        [1, 28, 28],
        349_980,
    )
    assert mobilenet["forward_macs"] == 568_740_352 and mobilenet["forward_flops"] == 2 * 568_740_352
    assert 2.9 < mobilenet["train_flops_per_sample"] / mobilenet["forward_flops"] < 3.0
    assert googlenet["name"] == "googlenet" and {p["name"] for p in googlenet["presets"]} >= {"imagenet", "cifar10"}
    for ref in mobilenet["references"]:
        assert ref["source"] and ref["within_tolerance"] is True and ref["measured"] is not None


def test_models_table_shows_every_workload(cli):
    proc = cli("models", "--no-flops")
    assert proc.returncode == 0, proc.stderr
    for name in ("lenet", "resnet152", "deeplab_v3", "bert_base", "dqn", "dcgan", "deepspeech", "seq2seq"):
        assert name in proc.stdout
    assert "Published figures" in proc.stdout and "DNNTune" in proc.stdout


def test_models_preset_and_unknown_name(cli):
    r = json_out(cli("models", "resnet50", "--preset", "cifar10", "--no-flops", "--json"))[0]
    assert r["preset"] == "cifar10" and r["input_shape"] == [3, 32, 32] and r["params"] < 25_557_032
    proc = cli("models", "resnet9000")
    assert proc.returncode == 2 and "unknown model 'resnet9000'" in proc.stderr
