"""ONNX -> MNN through the converter's C++ binding (``_tools.mnnconvert``), with arguments this module controls.

Never the ``mnnconvert`` console script nor ``MNN.tools.mnnconvert``: that wrapper imports
``MNN.tools.utils.log``, which runs ``pip install aliyun-log-python-sdk`` when the SDK is missing and posts the
machine id and the conversion's details to a remote log service.  The binding does neither
(``tests/unit/backends/mnn/test_mnn.py`` converts under an audit hook that refuses sockets and subprocesses).

The binding returns ``True`` even when the conversion failed; success is read from its own output
(``Converted Success!``) and from the file it wrote, and a failure carries the converter's reason.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from edgebench.backends.mnn.quiet import fd_output_to

#: The converter's last line when it wrote a model.
_SUCCESS = "Converted Success!"
#: Tells MNN's model header who converted it (the converter otherwise logs that it fell back to ``MNNTest``).
BIZ_CODE = "edgebench"


class ConversionError(RuntimeError):
    """MNN's converter refused the graph; the message is its reason."""


@dataclass(frozen=True)
class Conversion:
    mnn_path: Path
    #: The converter's own output (progress, warnings), kept off stdout.
    log: str
    for_training: bool
    weight_quant_bits: int | None


def converter_argv(
    onnx_path: Path, mnn_path: Path, *, for_training: bool, weight_quant_bits: int | None = None
) -> list[str]:
    """The converter's command line, exactly as it is passed to the binding."""
    argv = ["mnnconvert", "-f", "ONNX", "--modelFile", str(onnx_path), "--MNNModel", str(mnn_path)]
    argv += ["--bizCode", BIZ_CODE]
    if for_training:  # keep BatchNorm and Dropout as ops, so the trainer rebuilds them with trainable weights
        argv.append("--forTraining")
    if weight_quant_bits is not None:
        argv += ["--weightQuantBits", str(weight_quant_bits)]
    return argv


def reason_of(log: str) -> str:
    """The converter's error lines, or its last line when it printed none."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line.lower() or "failed" in line.lower() or "not support" in line]
    return "; ".join(dict.fromkeys(errors)) if errors else (lines[-1] if lines else "the converter printed nothing")


def convert(
    onnx_path: str | Path, mnn_path: str | Path, *, for_training: bool, weight_quant_bits: int | None = None
) -> Conversion:
    """Convert ``onnx_path`` to ``mnn_path``; :class:`ConversionError` with MNN's reason when it refuses."""
    onnx_path, mnn_path = Path(onnx_path), Path(mnn_path)
    mnn_path.unlink(missing_ok=True)
    argv = converter_argv(onnx_path, mnn_path, for_training=for_training, weight_quant_bits=weight_quant_bits)
    with tempfile.NamedTemporaryFile("r", suffix=".log", encoding="utf-8", errors="replace") as log_file:
        with fd_output_to(log_file.name):
            import _tools  # MNN's C++ converter binding (in the MNN wheel), not MNN.tools; importing it prints

            _tools.mnnconvert(argv)
        log = Path(log_file.name).read_text(encoding="utf-8", errors="replace")
    if _SUCCESS not in log or not mnn_path.is_file() or mnn_path.stat().st_size == 0:
        raise ConversionError(f"MNN's converter refused {onnx_path.name}: {reason_of(log)}")
    return Conversion(mnn_path, log, for_training, weight_quant_bits)
