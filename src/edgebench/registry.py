"""Plugin registries: a name maps to a ``"module:attr"`` string imported only when that plugin is chosen.

An explicit dict keeps the whole list on one screen, keeps heavy imports (torch, MNN, NVML) out of start-up,
and makes an import error surface when its plugin is asked for instead of being skipped silently.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any


class UnknownName(ValueError):
    """A name that no plugin of this kind has; the message lists the valid ones."""


class Registry:
    def __init__(self, kind: str, entries: Mapping[str, str], aliases: Mapping[str, str] | None = None) -> None:
        self.kind = kind
        self._entries = dict(entries)
        self._aliases = dict(aliases or {})

    def names(self) -> list[str]:
        return list(self._entries)

    def canonical(self, name: str) -> str:
        key = name.strip().lower()
        key = self._aliases.get(key, key)
        if key not in self._entries:
            raise UnknownName(f"unknown {self.kind} {name!r}; choose one of: {', '.join(self._entries)}")
        return key

    def __contains__(self, name: str) -> bool:
        try:
            self.canonical(name)
        except UnknownName:
            return False
        return True

    def load(self, name: str) -> Any:
        return import_target(self._entries[self.canonical(name)])


def import_target(target: str) -> Any:
    """Import ``"package.module:attr"`` (``attr`` may be dotted)."""
    module_name, _, attr = target.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in filter(None, attr.split(".")):
        obj = getattr(obj, part)
    return obj


SENSORS = Registry(
    "sensor",
    {
        "cpu_time": "edgebench.sensors.procstat:CpuTimeSensor",
        "process": "edgebench.sensors.process:ProcessSensor",
        "sched": "edgebench.sensors.sched:SchedSensor",
        "memory": "edgebench.sensors.meminfo:MemorySensor",
        "cpu_freq": "edgebench.sensors.cpufreq:CpuFreqSensor",
        "thermal": "edgebench.sensors.thermal:ThermalSensor",
        "process_memory": "edgebench.sensors.process_memory:ProcessMemorySensor",
        "rapl": "edgebench.sensors.rapl:RaplSensor",
        "jetson_power": "edgebench.sensors.jetson_power:JetsonPowerSensor",
        "jetson_gpu": "edgebench.sensors.jetson_gpu:JetsonGpuSensor",
        "power_supply": "edgebench.sensors.power_supply:PowerSupplySensor",
        "odpm": "edgebench.sensors.odpm:OdpmSensor",
        "nvml": "edgebench.sensors.nvml:NvmlSensor",
    },
)

#: The user's own ``module:factory`` model is a torch ``nn.Module``: the torch backend turns it into a workload.
CUSTOM_WORKLOAD = "edgebench.zoo.custom:custom_workload"

MODELS = Registry(
    "model",
    {
        "lenet": "edgebench.workloads.lenet:LENET",
        "googlenet": "edgebench.workloads.googlenet:GOOGLENET",
        "squeezenet": "edgebench.workloads.squeezenet:SQUEEZENET",
        "alexnet": "edgebench.workloads.alexnet:ALEXNET",
        "mobilenet_v2": "edgebench.workloads.mobilenet_v2:MOBILENET_V2",
        "squeezenet_1_1": "edgebench.workloads.squeezenet:SQUEEZENET_1_1",
        "inception_v3": "edgebench.workloads.inception_v3:INCEPTION_V3",
        "vgg16": "edgebench.workloads.vgg:VGG16",
        "vgg19": "edgebench.workloads.vgg:VGG19",
        "resnet50": "edgebench.workloads.resnet:RESNET50",
        "resnet101": "edgebench.workloads.resnet:RESNET101",
        "resnet152": "edgebench.workloads.resnet:RESNET152",
        "densenet40": "edgebench.workloads.densenet:DENSENET40",
        "densenet100": "edgebench.workloads.densenet:DENSENET100",
        "xception": "edgebench.workloads.xception:XCEPTION",
        "mobilenet_v1": "edgebench.workloads.mobilenet_v1:MOBILENET_V1",
        "shufflenet_v2_0.5x": "edgebench.workloads.shufflenet_v2:SHUFFLENET_V2",
        "deeplab_v3": "edgebench.workloads.deeplab_v3:DEEPLAB_V3",
        "char_cnn": "edgebench.workloads.char_cnn:CHAR_CNN",
        "rnn_ptb_small": "edgebench.workloads.rnn_ptb:RNN_PTB_SMALL",
        "seq2seq": "edgebench.workloads.seq2seq:SEQ2SEQ",
        "transformer": "edgebench.workloads.transformer:TRANSFORMER",
        "bert_base": "edgebench.workloads.bert:BERT_BASE",
        "deepspeech": "edgebench.workloads.deepspeech:DEEPSPEECH",
        "mnist_mlp": "edgebench.workloads.mlp:MNIST_MLP",
        "dcgan": "edgebench.workloads.dcgan:DCGAN_WORKLOAD",
        "dqn": "edgebench.workloads.dqn:DQN",
        "lm_1m": "edgebench.workloads.lm:LM_1M",
        "lm_10m": "edgebench.workloads.lm:LM_10M",
        "lm_30m": "edgebench.workloads.lm:LM_30M",
        "lm_100m": "edgebench.workloads.lm:LM_100M",
        "smollm2_135m": "edgebench.workloads.lm:SMOLLM2_135M",
        "mobilellm_125m": "edgebench.workloads.lm:MOBILELLM_125M",
        "qwen2.5_0.5b": "edgebench.workloads.lm:QWEN25_05B",
        "llama3.2_1b": "edgebench.workloads.lm:LLAMA32_1B",
        "tinyllama_1.1b": "edgebench.workloads.lm:TINYLLAMA_11B",
        "bert_tiny": "edgebench.workloads.lm:BERT_TINY",
        "bert_mini": "edgebench.workloads.lm:BERT_MINI",
    },
    aliases={
        "mobilenetv2": "mobilenet_v2",
        "mobilenet": "mobilenet_v2",
        "inception_v1": "googlenet",
        "squeezenet_1_0": "squeezenet",
        "squeezenet1_1": "squeezenet_1_1",
        "mobilenetv1": "mobilenet_v1",
        "shufflenet_v2": "shufflenet_v2_0.5x",
        "bert": "bert_base",
        "densenet40_12": "densenet40",
        "lm-1m": "lm_1m",
        "lm-10m": "lm_10m",
        "lm-30m": "lm_30m",
        "lm-100m": "lm_100m",
        "smollm2-135m": "smollm2_135m",
        "mobilellm-125m": "mobilellm_125m",
        "qwen2.5-0.5b": "qwen2.5_0.5b",
        "llama-3.2-1b": "llama3.2_1b",
        "tinyllama-1.1b": "tinyllama_1.1b",
    },
)

#: Where a trial runs, by the scheme of its name (``local``; ``ssh://host``, ``adb://SERIAL`` add transports).
TARGETS = Registry(
    "target",
    {
        "local": "edgebench.targets.local:LocalTarget",
        "ssh": "edgebench.targets.ssh:SshTarget",
        "adb": "edgebench.targets.adb:AdbTarget",
    },
)

#: How a sweep's trials reach devices (``--executor``): this machine one by one, or a Ray cluster's fleet.
EXECUTORS = Registry(
    "executor",
    {
        "local": "edgebench.sweep.local:LocalExecutor",
        "ray": "edgebench.fleet.raycluster:RayExecutor",
    },
)

DATASETS = Registry(
    "dataset",
    {
        "mnist": "edgebench.data.mnist:MNIST",
        "shakespeare": "edgebench.data.text:SHAKESPEARE",
        "speakers": "edgebench.data.text:SPEAKERS",
    },
)

#: Frameworks a trial can run on (``Trial.backend``): each entry is a framework-free
#: :class:`edgebench.backends.base.Backend` that names what it can do and imports its framework only to run.
BACKENDS = Registry(
    "backend",
    {
        "torch": "edgebench.backends.torch:TORCH",
        "onnxruntime": "edgebench.backends.onnxruntime:ONNXRUNTIME",
        "mnn": "edgebench.backends.mnn:MNN_BACKEND",
        "litert": "edgebench.backends.litert:LITERT",
        "executorch": "edgebench.backends.executorch:EXECUTORCH",
        "executorch-portable": "edgebench.backends.executorch:EXECUTORCH_PORTABLE",
        "command": "edgebench.backends.command:COMMAND",
        "fake": "edgebench.backends.fake:FAKE",
    },
    aliases={
        "pytorch": "torch",
        "ort": "onnxruntime",
        "onnx": "onnxruntime",
        # LiteRT is TensorFlow Lite's new name; DNNTune's files say TFLite
        "tflite": "litert",
        "tensorflow lite": "litert",
        "tensorflow-lite": "litert",
        "tensorflow_lite": "litert",
        "et": "executorch",
        "executorch_portable": "executorch-portable",
    },
)
