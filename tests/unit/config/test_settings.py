"""Each Trial setting, declared once, is a `run` flag, a sweep constant and a sweep axis, refused in the same words."""

import importlib.util
import shutil
from types import SimpleNamespace

import pytest

from edgebench.cli import main
from edgebench.config.settings import BY_FIELD, SETTINGS
from edgebench.config.sweep_file import load_config
from edgebench.errors import UsageError
from edgebench.host.sysfs import SysFS
from edgebench.records.trial import Trial
from edgebench.sweep.plan import plan
from tests.paths import FIXTURES, ROOT

#: Two values per setting as a user types them (the second None: the field has one valid value here), and the
#: settings it needs beside it. A Trial field added without a declaration, or a declaration without a sample, fails.
PUSHED = FIXTURES / "command" / "train_stamp.result"
MODEL_FILE = str(FIXTURES / "models" / "two_inputs.onnx")
SAMPLES = {
    "model": ("alexnet", "squeezenet", {}),
    "mode": ("infer", None, {}),
    "input_name": ("a", "b", {"model": MODEL_FILE}),
    "output_name": ("y", "s", {"model": MODEL_FILE}),
    "batch_size": ("8", "16", {}),
    "steps": ("4", "6", {}),
    "min_time_s": ("1s", "500ms", {}),
    "warmup": ("1", "2", {}),
    "threads": ("1", "2", {}),
    "cores": ("0x1", "0-1", {}),
    "freq_khz": ("600MHz", "1.5GHz", {}),
    "input_shape": ("1x32x32", "1x36x36", {}),
    "num_classes": ("5", "7", {}),
    "preset": ("cifar10", "imagenet", {"model": "squeezenet"}),
    "data": ("mnist", None, {}),
    "sample_interval_ms": ("20ms", "5", {}),
    "infer_steps": ("0", "2", {}),
    "timeout_s": ("10m", "90s", {}),
    "device": ("cuda", "cuda:1", {}),
    "backend": ("torch", None, {}),
    "precision": ("bf16", "fp16", {}),
    "target_ci_pct": ("2%", "5", {}),
    "max_time_s": ("1m", "30s", {}),
    "seed": ("1", "2", {}),
    "until_accuracy": ("0.5", "0.8", {"data": "mnist"}),
    "eval_every": ("10", "20", {}),
    "max_steps": ("100", "200", {}),
    "memory_budget_bytes": ("4GiB", "512MiB", {}),
    "trace": ("layers", "ops", {}),
    "counters": ("task-clock,page-faults", "cache-misses", {}),
    "idle_s": ("200ms", "1s", {}),
    "estimate_energy": ("idle=2W,max=6W", "idle=1W, max=3W", {}),
    "sampler": ("native", "sh", {"command": "./bench", "step_pattern": "step"}),
    "command": ("./bench --steps 20", "./train.sh", {"step_pattern": "step"}),
    "step_pattern": ("^step .* done", "tflite-benchmark-model", {"command": "./bench"}),
    "push": (str(PUSHED), f"{PUSHED}:models/m.bin", {"command": "./bench", "step_pattern": "step"}),
    "repeats": ("3", "auto", {}),
    "finetune": ("lora", None, {"model": "lm_1m"}),
    "lora_rank": ("4", "16", {"model": "lm_1m", "finetune": "lora"}),
    "lora_alpha": ("8", "32", {"model": "lm_1m", "finetune": "lora"}),
    "lora_targets": ("q_proj,v_proj", "o_proj", {"model": "lm_1m", "finetune": "lora"}),
    "lora_impl": ("peft", None, {"model": "lm_1m", "finetune": "lora"}),
    "checkpointing": ("blocks", None, {"model": "lm_1m"}),
    "frozen_weights": ("int8", "torchao-int8", {"model": "lm_1m", "finetune": "lora"}),
    "pretrain_steps": ("5", "10", {"model": "lm_1m", "data": "shakespeare"}),
    "until_bits_per_byte": ("4.5", "unigram", {"model": "lm_1m", "data": "shakespeare"}),
    "contexts": ("64,128", "32", {"model": "lm_1m"}),
    "decode_tokens": ("8", "16", {"model": "lm_1m"}),
    "generations": ("1", "5", {"model": "lm_1m"}),
}
#: Fields whose only valid value here is their default (one backend so far).
ONLY_DEFAULT = {"backend"}


def test_every_trial_field_is_declared_once_with_a_sample():
    assert [s.field for s in SETTINGS if s.field not in Trial.model_fields] == []
    # cores_mask is not a setting: it is the text `cores` was typed as, carried for the MNN suite's folder names;
    # model_file and model_sha256 are what `--model path.onnx` resolves to (the file's path and bytes)
    derived = {"cores_mask", "model_file", "model_sha256", "data_sha256"}
    assert set(Trial.model_fields) - derived == set(BY_FIELD) == set(SAMPLES)
    for names in ([s.key for s in SETTINGS], [s.flag for s in SETTINGS], [s.attribute for s in SETTINGS]):
        assert len(names) == len(set(names))


class Captured(BaseException):  # not an Exception: a plan (--repeats) contains those as error results
    """Raised by the stand-in for run_trial: the Trial the command built, before anything runs."""

    def __init__(self, trial):
        super().__init__(trial)
        self.trial = trial


@pytest.fixture
def run_flags(monkeypatch, tmp_path, sysfs_tree):
    """``edgebench run`` with these flags, up to the Trial it would run (frequencies pinned in a copied tree)."""
    import edgebench.launch.trial

    def capture(trial, **_):
        raise Captured(trial)

    monkeypatch.setattr(edgebench.launch.trial, "run_trial", capture)
    tree = tmp_path / "rpi4"
    shutil.copytree(sysfs_tree("rpi4"), tree)

    def run(*flags):
        with pytest.raises(Captured) as caught:
            main(["run", "--no-store", "--sysfs-root", str(tree), *flags])
        return caught.value.trial

    return run


def flags_of(context):
    return [arg for field, text in context.items() for arg in (BY_FIELD[field].flag, text)]


def yaml_value(text):
    return f'"{text}"' if "," in text else text


def sweep_trials(*overrides):
    config = load_config(None, ["batch_sizes=32", *overrides]).config
    return [p.trial for p in plan(config, source=None, sysfs=SysFS("/nonexistent"), allowed=(0, 1)).trials]


@pytest.mark.parametrize("field", list(SAMPLES))
def test_each_setting_is_a_run_flag_a_sweep_constant_and_a_sweep_axis(field, run_flags):
    setting = BY_FIELD[field]
    first, second, context = SAMPLES[field]
    values = [v for v in (first, second) if v is not None]
    overrides = [f"{BY_FIELD[f].key}={yaml_value(t)}" for f, t in context.items()]

    from_flags = [getattr(run_flags(*flags_of(context), setting.flag, v), field) for v in values]
    if field not in ONLY_DEFAULT:
        assert setting.trial_default not in from_flags
    assert len(set(from_flags)) == len(values)

    constant, *repeats = sweep_trials(*overrides, f"{setting.key}={yaml_value(first)}")
    assert getattr(constant, field) == from_flags[0]
    assert all(t == constant for t in repeats) and len(repeats) == (from_flags[0] - 1 if field == "repeats" else 0)

    if field == "repeats":  # how often each configuration runs: one value for the sweep, never an axis
        with pytest.raises(UsageError, match="not a list"):
            sweep_trials(f"{setting.key}=[{', '.join(values)}]")
        return
    axis = sweep_trials(*overrides, f"{setting.key}=[{', '.join(map(yaml_value, values))}]")
    assert [getattr(t, field) for t in axis] == from_flags


@pytest.mark.parametrize(
    ("field", "bad"),
    [
        ("batch_size", "0"),
        ("batch_size", "many"),
        ("warmup", "-1"),
        ("cores", "zz"),
        ("precision", "int4"),
        ("mode", "eval"),
        ("sample_interval_ms", "0ms"),
        ("target_ci_pct", "0.02"),
        ("memory_budget_bytes", "lots"),
        ("idle_s", "soon"),
        ("min_time_s", "soon"),
        ("estimate_energy", "idle=9W,max=1W"),
        ("trace", "everything"),
        ("until_accuracy", "0.9"),  # needs data: refused by the Trial, when the sweep is planned
    ],
)
def test_a_bad_value_reads_the_same_from_run_and_from_a_sweep_file(field, bad, tmp_path, capsys):
    setting = BY_FIELD[field]
    assert main(["run", "--no-store", setting.flag, bad]) == 2
    cli_line = capsys.readouterr().err.strip()

    path = tmp_path / "sweep.yaml"
    path.write_text(f"{setting.key}: {yaml_value(bad)}\n")
    with pytest.raises(UsageError) as err:
        loaded = load_config(path)
        try:
            plan(loaded.config, source=path, sysfs=SysFS("/nonexistent"), allowed=(0, 1))
        except UsageError as exc:
            raise loaded.relabel(exc) from None
    where = f"{path}: {setting.key}" + ("[0]" if setting.plural_axis else "")
    assert err.value.field == where
    assert cli_line == f"edgebench: error: {setting.flag}: {err.value.message}"


def guide_page(name: str) -> str:
    """A guide page of the docs site (the user guide moved there from the README)."""
    return (ROOT / "docs" / "guide" / name).read_text()


def docs_hook():
    """``docs/hooks/reference.py``, the mkdocs hook that writes the generated tables, loaded by path as mkdocs does."""
    spec = importlib.util.spec_from_file_location("reference_hook", ROOT / "docs" / "hooks" / "reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(("page", "table", "names"), [
    ("first-trial.md", "run-options", lambda: [f"`{s.flag}`" for s in SETTINGS]),
    ("sweeps.md", "sweep-keys", lambda: [f"`{s.key}`" for s in SETTINGS]),
])  # fmt: skip
def test_the_guides_option_and_key_tables_are_generated_from_the_declarations(page, table, names):
    text = guide_page(page)
    assert f"<!-- generated: {table} -->" in text.splitlines()
    assert not [line for line in text.splitlines() if line.startswith("|")], "a hand-written table is back"
    built = docs_hook().on_page_markdown(text, page=SimpleNamespace(file=SimpleNamespace(src_path=page)),
                                         config=None, files=None)  # fmt: skip
    assert [name for name in names() if name not in built] == []


def test_a_guide_naming_an_unknown_table_fails_the_build():
    page = SimpleNamespace(file=SimpleNamespace(src_path="guide/x.md"))
    with pytest.raises(ValueError, match="no generated table 'nope'"):
        docs_hook().on_page_markdown("<!-- generated: nope -->\n", page=page, config=None, files=None)
