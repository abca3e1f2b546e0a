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
        "memory": "edgebench.sensors.meminfo:MemorySensor",
        "cpu_freq": "edgebench.sensors.cpufreq:CpuFreqSensor",
        "thermal": "edgebench.sensors.thermal:ThermalSensor",
        "process_memory": "edgebench.sensors.process_memory:ProcessMemorySensor",
        "rapl": "edgebench.sensors.rapl:RaplSensor",
        "jetson_power": "edgebench.sensors.jetson_power:JetsonPowerSensor",
        "jetson_gpu": "edgebench.sensors.jetson_gpu:JetsonGpuSensor",
        "power_supply": "edgebench.sensors.power_supply:PowerSupplySensor",
        "nvml": "edgebench.sensors.nvml:NvmlSensor",
    },
)

MODELS = Registry(
    "model",
    {
        "lenet": "edgebench.models.lenet:LENET",
        "googlenet": "edgebench.models.googlenet:GOOGLENET",
        "squeezenet": "edgebench.models.squeezenet:SQUEEZENET",
        "alexnet": "edgebench.models.alexnet:ALEXNET",
        "mobilenet_v2": "edgebench.models.mobilenet_v2:MOBILENET_V2",
        "squeezenet_1_1": "edgebench.models.squeezenet:SQUEEZENET_1_1",
        "inception_v3": "edgebench.models.inception_v3:INCEPTION_V3",
        "vgg16": "edgebench.models.vgg:VGG16",
        "vgg19": "edgebench.models.vgg:VGG19",
        "resnet50": "edgebench.models.resnet:RESNET50",
        "resnet101": "edgebench.models.resnet:RESNET101",
        "resnet152": "edgebench.models.resnet:RESNET152",
        "densenet40": "edgebench.models.densenet:DENSENET40",
        "densenet100": "edgebench.models.densenet:DENSENET100",
        "xception": "edgebench.models.xception:XCEPTION",
        "mobilenet_v1": "edgebench.models.mobilenet_v1:MOBILENET_V1",
        "shufflenet_v2_0.5x": "edgebench.models.shufflenet_v2:SHUFFLENET_V2",
        "deeplab_v3": "edgebench.models.deeplab_v3:DEEPLAB_V3",
        "char_cnn": "edgebench.models.char_cnn:CHAR_CNN",
        "rnn_ptb_small": "edgebench.models.rnn_ptb:RNN_PTB_SMALL",
        "seq2seq": "edgebench.models.seq2seq:SEQ2SEQ",
        "transformer": "edgebench.models.transformer:TRANSFORMER",
        "bert_base": "edgebench.models.bert:BERT_BASE",
        "deepspeech": "edgebench.models.deepspeech:DEEPSPEECH",
        "mnist_mlp": "edgebench.models.mlp:MNIST_MLP",
        "dcgan": "edgebench.models.dcgan:DCGAN_WORKLOAD",
        "dqn": "edgebench.models.dqn:DQN",
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
    },
)

#: Where a trial runs, by the scheme of its name (``local``; ``ssh://host``, ``adb://SERIAL`` add transports).
TARGETS = Registry("target", {"local": "edgebench.targets.local:LocalTarget"})

DATASETS = Registry(
    "dataset",
    {
        "mnist": "edgebench.data.mnist:MNIST",
        "shakespeare": "edgebench.data.text:SHAKESPEARE",
    },
)
