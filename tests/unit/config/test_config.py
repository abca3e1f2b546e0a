"""Sweep configuration: YAML, --set overrides, DNNTune's sections, and errors that name the key's path."""

from pathlib import Path

import pytest

from edgebench.config.sweep_file import load_config, parse_override
from edgebench.errors import UsageError
from tests.paths import EXAMPLES, FIXTURES


def write(tmp_path, text: str) -> Path:
    path = tmp_path / "sweep.yaml"
    path.write_text(text)
    return path


def error_of(path, *overrides) -> UsageError:
    with pytest.raises(UsageError) as err:
        load_config(path, overrides)
    return err.value


def test_full_native_configuration(tmp_path):
    path = write(
        tmp_path,
        """
name: pi-sweep
models: [lenet, {name: squeezenet, input_shape: 3x32x32, num_classes: 5}]
batch_sizes: [1, 2, 4]
threads: [1, null]
cores: [0x1, f0, "0-1", [2, 3], 11, big]
frequencies: [600000, 1.2GHz, 800MHz]
precision: [fp32, bf16]
steps: 10
warmup: 2
infer_steps: 0
target_ci: 2%
max_steps: 300
max_time: 1m
sample_interval: 20ms
timeout: 10m
cooldown: {until_idle: true, within_c: 1.5, timeout: 5m, seconds: 30, between: models}
objective: energy-first
""",
    )
    c = load_config(path).config
    assert c.name == "pi-sweep"
    assert [m.name for m in c.models] == ["lenet", "squeezenet"]
    assert c.models[1].input_shape == (3, 32, 32) and c.models[1].num_classes == 5
    assert c.batch_sizes == [1, 2, 4] and c.threads == [1, None]
    # a bare token is a hex mask as in taskset, also when YAML reads it as a number (11 = cpu0 and cpu4)
    assert c.cores == [(0,), (4, 5, 6, 7), (0, 1), (2, 3), (0, 4), "big"]
    assert c.frequencies == [600_000, 1_200_000, 800_000]
    assert c.precision == ["fp32", "bf16"]
    assert (c.measured_steps, c.warmup, c.infer_steps) == (10, 2, 0)
    assert (c.target_ci_pct, c.max_steps, c.max_time_s) == (2.0, 300, 60.0)
    assert (c.sample_interval_ms, c.timeout_s) == (20.0, 600.0)
    assert c.cooldown.until_idle and c.cooldown.within_c == 1.5 and c.cooldown.timeout_s == 300
    assert c.cooldown.seconds == 30 and c.cooldown.between == "models"
    assert c.objective == "energy-first"


def test_defaults_and_scalars_as_one_element_axes(tmp_path):
    c = load_config(write(tmp_path, "batch_sizes: 8\ncores: 0x3\ncooldown: 120s\n")).config
    assert c.batch_sizes == [8] and c.cores == [(0, 1)]
    assert [m.name for m in c.models] == ["lenet"] and c.threads == [None] and c.frequencies is None
    assert c.cooldown.seconds == 120 and not c.cooldown.until_idle
    assert c.measured_steps == 20
    assert load_config(None, ["target_ci=1.5"]).config.measured_steps == 5  # adaptive: 5 is the minimum
    assert load_config(write(tmp_path, "cooldown: idle\n")).config.cooldown.until_idle
    assert load_config(None).config.batch_sizes == [1, 2, 4, 8, 16, 32]  # the MNN suite's


def test_set_overrides_any_key_with_yaml_values(tmp_path):
    path = write(tmp_path, "batch_sizes: [32]\ncooldown: {seconds: 5}\n")
    c = load_config(path, ["batch_sizes=[1,2,4]", "cooldown.seconds=60", "cores=0-1", "models=[lenet, alexnet]"]).config
    assert c.batch_sizes == [1, 2, 4] and c.cooldown.seconds == 60 and c.cores == [(0, 1)]
    assert [m.name for m in c.models] == ["lenet", "alexnet"]
    c = load_config(None, ["models=[lenet, squeezenet]", "models[1]={name: squeezenet, input_shape: 3x32x32}"]).config
    assert c.models[1].input_shape == (3, 32, 32)
    assert parse_override("frequencies=all") == ("frequencies", "all")
    assert parse_override("threads=") == ("threads", None)


@pytest.mark.parametrize(
    ("text", "overrides", "field", "words"),
    [
        ("batch_sizes: [1, 2, 0]", (), "sweep.yaml: batch_sizes[2]", "greater than or equal to 1"),
        ("batch_sizes: [1, two]", (), "sweep.yaml: batch_sizes[1]", "valid integer"),
        ("batch_size: [1]", (), "sweep.yaml: batch_size", "did you mean batch_sizes?"),
        ("cooldown: {seconds: 5, within: 2}", (), "sweep.yaml: cooldown.within", "did you mean within_c?"),
        ("cooldown: {timeout: soon}", (), "sweep.yaml: cooldown.timeout", "not a duration"),
        ("models: [lenet, resnet9000]", (), "sweep.yaml: models[1].name", "unknown model 'resnet9000'"),
        ("models: [{name: lenet, input_shape: 1x0}]", (), "sweep.yaml: models[0].input_shape", "not a shape"),
        ("cores: [0x1, zz]", (), "sweep.yaml: cores[1]", "neither a hex mask"),
        ("frequencies: [all, 600000]", (), "sweep.yaml: frequencies", "give all or a list"),
        ("frequencies: [fast]", (), "sweep.yaml: frequencies[0]", "not a frequency"),
        ("precision: int4", (), "sweep.yaml: precision[0]", "'fp32', 'bf16', 'fp16', 'int8' or 'int8-dynamic'"),
        ("backend: tensorflow", (), "sweep.yaml: backend[0]", "'torch'"),
        ("target_ci: lots", (), "sweep.yaml: target_ci", "not a percentage"),
        ("target_ci: 0.02", (), "sweep.yaml: target_ci", "ambiguous: write 2% for a fraction"),
        ("target_ci: 2%\nsteps: 50\nmax_steps: 10", (), "sweep.yaml: max_steps", "at least steps (50) and 2"),
        ("name: my sweep", (), "sweep.yaml: name", "letters, digits"),
        ("sample_interval: 0ms", (), "sweep.yaml: sample_interval", "greater than 0"),
        ("objective: fastest", (), "sweep.yaml: objective", "'latency-first' or 'energy-first'"),
        ("steps: 5", ("steps=0",), "--set steps", "greater than or equal to 1"),
        ("", ("cooldown.seconds=-1",), "--set cooldown.seconds", "greater than or equal to 0"),
        ("", ("batchsizes=[1]",), "--set batchsizes", "did you mean batch_sizes?"),
    ],
)
def test_errors_name_the_key_path(tmp_path, text, overrides, field, words):
    path = write(tmp_path, text)
    err = error_of(path, *overrides)
    assert err.field == field.replace("sweep.yaml", str(path))
    assert words in err.message
    assert "\n" not in str(err)


def test_file_level_errors(tmp_path):
    err = error_of(write(tmp_path, "models: [lenet\nbatch_sizes: [1]\n"))
    assert err.field.endswith("sweep.yaml") and "not valid YAML at line" in err.message
    err = error_of(write(tmp_path, "- lenet\n- alexnet\n"))
    assert "top level must be a mapping" in err.message
    err = error_of(tmp_path / "missing.yaml")
    assert "cannot be read" in err.message
    with pytest.raises(UsageError, match="KEY=VALUE"):
        load_config(None, ["batch_sizes"])


def test_dnntune_sections_become_a_sweep():
    loaded = load_config(EXAMPLES / "dnntune_mobilenet.yaml")
    c = loaded.config
    assert [m.name for m in c.models] == ["mobilenet_v2"]
    assert c.models[0].input_shape == (3, 224, 224)  # NHWC as TensorFlow writes it, read as CHW
    assert c.batch_sizes == [1] and c.threads == [4] and c.cores == ["big"]
    assert c.device == "cpu" and c.backend == ["torch"] and c.precision == ["fp32"]
    assert c.objective == "energy-first"
    notes = " ".join(loaded.notes)
    for key in ("model.file", "model.input_name", "processing.DNN_library", "cloud_CPU"):
        assert key in notes
    # DNNTune's profiling events are measured, not "not used": LLC misses through perf's cache events.
    assert c.counters == ("cache-references", "cache-misses")
    assert "LLCmiss is counted as perf's cache-references and cache-misses" in notes
    assert "CPUUtilization is recorded by the sampler" in notes and "Mem_footprint is recorded as peak memory" in notes
    assert "profiling_events" not in notes.split("is not used")[0].rsplit(";", 1)[-1]


@pytest.mark.parametrize(
    ("text", "field", "words"),
    [
        ("model: {name: mobilenet_v2, data_type: int4}", "model.data_type", "cannot be run here"),
        ("model: {name: mobilenet_v2, batch: 3}", "model.batch", "unknown key in DNNTune's model section"),
        ("model: {file: x.pb}", "model.name", "required key is missing"),
        ("model: {name: resnet9000}", "model.name", "unknown model"),
        ("model: {name: lenet}\nprocessing: {CPU_threads: many}", "processing.CPU_threads", "valid integer"),
        ("model: {name: lenet}\nprocessing: {CPU_affinity: middle}", "processing.CPU_affinity", "neither a hex mask"),
        ("model: {name: lenet}\nmodels: [alexnet]", "model.name", "also given as models"),
        ("processing: {processing_unit: NPU}", "processing.processing_unit", "not available"),
        ("model: {name: lenet}\nprocessing: {profiling_events: L2miss}", "processing.profiling_events",
         "'L2miss' is not an event edgebench can count"),
    ],
)  # fmt: skip
def test_dnntune_errors_name_the_dnntune_key(tmp_path, text, field, words):
    err = error_of(write(tmp_path, text))
    assert err.field == f"{tmp_path / 'sweep.yaml'}: {field}"
    assert words in err.message


def test_a_dnntune_framework_edgebench_cannot_run_is_a_note_and_the_rest_runs(tmp_path):
    # DNNTune's own slide names TensorFlow and MACE: once refused whole, now said in a note (the old refusal was
    # wrong: the file's models still run on the runtimes edgebench has).
    loaded = load_config(write(tmp_path, "model: {name: mobilenet_v2}\nprocessing: {framework: 'tensorflow, MACE'}"))
    assert loaded.config.backend is None  # nothing runnable named: the default backend (torch)
    notes = " ".join(loaded.notes)
    assert "processing.framework: edgebench cannot run tensorflow, MACE; it runs " in notes and "onnxruntime" in notes
    loaded = load_config(write(tmp_path, "model: {name: mobilenet_v2}\nprocessing: {framework: 'tensorflow, mnn'}"))
    assert loaded.config.backend == ["mnn"] and "this sweep runs mnn" in " ".join(loaded.notes)


def test_example_configurations_are_valid():
    for path in sorted(EXAMPLES.glob("*.yaml")):
        load_config(path)


def test_planning_errors_name_the_key_as_written(tmp_path, sysfs_tree):
    from edgebench.host.sysfs import SysFS
    from edgebench.sweep.plan import plan

    def plan_error(path, *overrides):
        loaded = load_config(path, overrides)
        with pytest.raises(UsageError) as err:
            plan(loaded.config, source=path, sysfs=SysFS(tmp_path / "none"), allowed=(0, 1))
        return loaded.relabel(err.value)

    assert plan_error(EXAMPLES / "dnntune_mobilenet.yaml").field.endswith(
        "dnntune_mobilenet.yaml: processing.CPU_affinity"
    )
    path = write(tmp_path, "cores: [0x1, f0]\n")
    assert plan_error(path).field == f"{path}: cores[1]"
    assert plan_error(path, "cores=[0x1, 0x2, 0x4]").field == "--set cores[2]"


DNNTUNE = FIXTURES / "dnntune"


def test_the_slides_own_dnntune_file_is_accepted_and_plans_on_a_device_without_clusters(tmp_path):
    from edgebench.host.sysfs import SysFS
    from edgebench.sweep.plan import plan

    loaded = load_config(DNNTUNE / "slide.yaml")
    c = loaded.config
    assert [m.name for m in c.models] == ["mobilenet_v2"] and c.batch_sizes == [1] and c.cores == ["all"]
    assert c.counters == ("cache-references", "cache-misses") and c.objective == "energy-first"
    notes = " ".join(loaded.notes)
    assert "model.file: path/to/mobilenet-v2.pb is not a format edgebench runs" in notes
    assert (
        "edgebench cannot run tensorflow, MACE; it runs torch, onnxruntime, mnn, litert, executorch, "
        "executorch-portable;" in notes
    )
    assert "big+little is every core" in notes
    (trial,) = [p.trial for p in plan(c, source=None, sysfs=SysFS(tmp_path / "none"), allowed=(0, 1)).trials]
    assert trial.cores is None and trial.threads == 4  # every core: the device has no cpufreq clusters


def test_a_dnntune_model_file_drives_the_trials(tmp_path):
    from edgebench.host.sysfs import SysFS
    from edgebench.sweep.plan import plan

    loaded = load_config(DNNTUNE / "model_file.yaml")
    notes = " ".join(loaded.notes)
    assert "model.name (two-inputs) is a label only: the trials run two_inputs.onnx" in notes
    runtime = "this sweep runs the model file's own runtime (onnxruntime for .onnx, mnn for .mnn, litert for .tflite)"
    assert runtime in notes
    (trial,) = [p.trial for p in plan(loaded.config, source=None, sysfs=SysFS(tmp_path), allowed=(0, 1)).trials]
    assert trial.model_file == str((DNNTUNE.parent / "models" / "two_inputs.onnx").resolve())
    assert (trial.model, trial.backend, trial.mode) == ("two_inputs.onnx", "onnxruntime", "infer")
    assert (trial.batch_size, trial.input_shape, trial.input_name, trial.output_name) == (2, (8,), "a", "y")


def test_a_dnntune_model_file_that_does_not_fit_is_refused_by_its_key(tmp_path):
    from edgebench.host.sysfs import SysFS
    from edgebench.sweep.plan import plan

    text = (DNNTUNE / "model_file.yaml").read_text().replace("input_name: a", "input_name: c")
    path = tmp_path / "dnntune.yaml"
    path.write_text(text.replace("../models/two_inputs.onnx", str(DNNTUNE.parent / "models" / "two_inputs.onnx")))
    loaded = load_config(path)
    with pytest.raises(UsageError) as err:
        try:
            plan(loaded.config, source=path, sysfs=SysFS(tmp_path), allowed=(0, 1))
        except UsageError as exc:
            raise loaded.relabel(exc) from None
    assert err.value.field == f"{path}: model.input_name" and "no input 'c'; its inputs: a, b" in err.value.message


def test_a_command_trial_is_labelled_by_what_it_runs_unless_given_a_model():
    """Tried: `run --command ./bench.sh` stored and printed the trial as `lenet` (the default model's name)."""
    from edgebench.config.trial import command_label, make_trial

    assert make_trial(command="./bench.sh", step_pattern="step").model == "bench.sh"
    assert make_trial(command="./bench.sh", step_pattern="step", model="my_net").model == "my_net"
    assert command_label("python train.py --steps 25") == "train.py"
    assert command_label("./runTrainDemo.out MnistBenchmark data 8 MobileNetV2") == "runTrainDemo.out"
    assert command_label("/data/local/tmp/benchmark_model --graph=m.tflite") == "benchmark_model"
    assert command_label("i=0; while true; do echo; done") == command_label("cd x && ./b") == "command"
