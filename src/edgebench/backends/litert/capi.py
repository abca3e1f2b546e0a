"""LiteRT's op profiler, reached through the C API of the wheel's ``libLiteRt.so`` with ctypes.

Why ctypes: the Python ``Interpreter`` of ``ai-edge-litert`` exposes no profiler (its wrapper has no
``SetProfiler``), nor does its ``CompiledModel``; the same wheel's ``libLiteRt.so`` exports the C API
(``@@VERS_1.0``), whose compiled model records per-op events when the runtime option ``enable_profiling`` is set
(an opaque option ``runtime_options_string`` holding the TOML text ``enable_profiling = true``, what
``LrtSetRuntimeOptionsEnableProfiling`` serializes to: LiteRT ``litert/c/options/litert_runtime_options.cc``), and
XNNPACK's threads by the opaque option ``xnnpack`` (``num_threads = N``, ``litert/c/options/litert_cpu_options.cc``).

This relies on the C ABI of one wheel: the functions' signatures and the layout of ``ProfiledEventData``
(``litert/c/litert_profiler_event.h``: tag, event type, start and elapsed microseconds, two memory-usage records of
three 64-bit fields as the C++ ``tflite::profiling::memory::MemoryUsage`` is laid out, two metadata fields, the
source).  :data:`CHECKED` names the ai-edge-litert versions it was checked against (the ``litert`` extra pins
them); another version is refused in one line rather than misread.  ``tests/unit/backends/litert`` runs it on the
real wheel.

The compiled model is a different runtime path from the ``Interpreter`` the untraced trials time (it registers and
syncs its tensor buffers around every run, and the profiler records each operator): a traced trial's step times are
this path's, and say so (``env.litert_api``).
"""

from __future__ import annotations

import ctypes as C
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

#: ai-edge-litert versions whose libLiteRt.so this module's signatures and event layout were checked against.
CHECKED = ("2.3.",)
_CPU = 1  # kLiteRtHwAcceleratorCpu
_LOCK_READ, _LOCK_WRITE = 0, 1
_P = C.c_void_p
#: ``LiteRtProfilerEventType`` values (``tflite::Profiler::EventType``).
DEFAULT, OPERATOR_INVOKE, DELEGATE_OPERATOR_INVOKE, DELEGATE_PROFILED_OPERATOR_INVOKE = 1, 2, 4, 8


class _MemoryUsage(C.Structure):
    _fields_ = [("footprint_kb", C.c_int64), ("total_allocated", C.c_size_t), ("in_use_allocated", C.c_size_t)]


class _Event(C.Structure):
    _fields_ = [
        ("tag", C.c_char_p),
        ("event_type", C.c_int),
        ("start_us", C.c_uint64),
        ("elapsed_us", C.c_uint64),
        ("begin_mem", _MemoryUsage),
        ("end_mem", _MemoryUsage),
        ("metadata1", C.c_uint64),
        ("metadata2", C.c_uint64),
        ("source", C.c_int),
    ]


@dataclass(frozen=True)
class ProfiledEvent:
    """One profiler event: ``start_us`` on the monotonic clock (0 for an XNNPACK operator, which reports only its
    duration), ``index`` the operator's node index (TFLite's, or XNNPACK's within the delegate)."""

    tag: str
    kind: int
    start_us: int
    elapsed_us: int
    index: int


_SIGNATURES: dict[str, list[Any]] = {
    "LiteRtCreateEnvironment": [C.c_int, _P, C.POINTER(_P)],
    "LiteRtCreateModelFromFile": [_P, C.c_char_p, C.POINTER(_P)],
    "LiteRtCreateOptions": [C.POINTER(_P)],
    "LiteRtSetOptionsHardwareAccelerators": [_P, C.c_int],
    "LiteRtCreateOpaqueOptions": [C.c_char_p, _P, _P, C.POINTER(_P)],
    "LiteRtAddOpaqueOptions": [_P, _P],
    "LiteRtCreateCompiledModel": [_P, _P, _P, C.POINTER(_P)],
    "LiteRtGetModelSignature": [_P, C.c_size_t, C.POINTER(_P)],
    "LiteRtGetNumSignatureInputs": [_P, C.POINTER(C.c_size_t)],
    "LiteRtGetNumSignatureOutputs": [_P, C.POINTER(C.c_size_t)],
    "LiteRtGetSignatureInputTensorByIndex": [_P, C.c_size_t, C.POINTER(_P)],
    "LiteRtGetSignatureOutputTensorByIndex": [_P, C.c_size_t, C.POINTER(_P)],
    "LiteRtGetTensorName": [_P, C.POINTER(C.c_char_p)],
    "LiteRtGetRankedTensorType": [_P, _P],
    "LiteRtGetCompiledModelInputBufferRequirements": [_P, C.c_size_t, C.c_size_t, C.POINTER(_P)],
    "LiteRtGetCompiledModelOutputBufferRequirements": [_P, C.c_size_t, C.c_size_t, C.POINTER(_P)],
    "LiteRtCreateManagedTensorBufferFromRequirements": [_P, _P, _P, C.POINTER(_P)],
    "LiteRtGetTensorBufferSize": [_P, C.POINTER(C.c_size_t)],
    "LiteRtLockTensorBuffer": [_P, C.POINTER(_P), C.c_int],
    "LiteRtUnlockTensorBuffer": [_P],
    "LiteRtRunCompiledModel": [_P, C.c_size_t, C.c_size_t, _P, C.c_size_t, _P],
    "LiteRtCompiledModelGetProfiler": [_P, C.POINTER(_P)],
    "LiteRtStartProfiler": [_P],
    "LiteRtStopProfiler": [_P],
    "LiteRtResetProfiler": [_P],
    "LiteRtGetNumProfilerEvents": [_P, C.POINTER(C.c_int)],
    "LiteRtGetProfilerEvents": [_P, C.c_int, _P],
}


def check_version(version: str) -> None:
    """Refuse (one line) a wheel this module was not checked against."""
    if not version.startswith(CHECKED):
        raise RuntimeError(
            f"the LiteRT op profiler (--trace layers) reads libLiteRt.so's C API as ai-edge-litert "
            f"{'/'.join(v + 'x' for v in CHECKED)} lays it out; this machine has {version}: "
            "pip install 'edgebench[litert]' (it pins the checked versions), or trace nothing"
        )


def _library() -> Any:
    import ai_edge_litert

    check_version(ai_edge_litert.__version__)
    lib = C.CDLL(os.path.join(os.path.dirname(ai_edge_litert.__file__), "libLiteRt.so"))
    for name, argtypes in _SIGNATURES.items():
        function = getattr(lib, name)
        function.argtypes = argtypes
        function.restype = C.c_int  # LiteRtStatus
    return lib


class ProfiledModel:
    """A ``.tflite`` file as a LiteRT compiled model on the CPU (XNNPACK), with its profiler, its signature's
    input buffers filled from arrays and its outputs read back."""

    def __init__(self, path: str, threads: int) -> None:
        self._lib = lib = _library()
        libc = C.CDLL(None)
        libc.malloc.restype = _P
        libc.malloc.argtypes = [C.c_size_t]
        free = C.cast(libc.free, _P)
        self._env, self._model, options, self._compiled = _P(), _P(), _P(), _P()
        self._ok(lib.LiteRtCreateEnvironment(0, None, C.byref(self._env)), "creating the environment")
        self._ok(lib.LiteRtCreateModelFromFile(self._env, path.encode(), C.byref(self._model)), "loading the model")
        self._ok(lib.LiteRtCreateOptions(C.byref(options)), "creating options")
        self._ok(lib.LiteRtSetOptionsHardwareAccelerators(options, _CPU), "choosing the CPU")
        for identifier, toml in (
            (b"runtime_options_string", b"enable_profiling = true\n"),
            (b"xnnpack", f"num_threads = {threads}\n".encode()),
        ):
            payload = libc.malloc(len(toml) + 1)  # owned and freed by LiteRT
            C.memmove(payload, toml + b"\0", len(toml) + 1)
            opaque = _P()
            self._ok(lib.LiteRtCreateOpaqueOptions(identifier, payload, free, C.byref(opaque)), "an opaque option")
            self._ok(lib.LiteRtAddOpaqueOptions(options, opaque), "adding an opaque option")
        self._ok(lib.LiteRtCreateCompiledModel(self._env, self._model, options, C.byref(self._compiled)), "compiling")
        signature = _P()
        self._ok(lib.LiteRtGetModelSignature(self._model, 0, C.byref(signature)), "reading the signature")
        self.inputs = self._buffers(signature, True)
        self.outputs = self._buffers(signature, False)
        self._in = (_P * len(self.inputs))(*(b for _, b, _ in self.inputs))
        self._out = (_P * len(self.outputs))(*(b for _, b, _ in self.outputs))
        self._profiler = _P()
        self._ok(lib.LiteRtCompiledModelGetProfiler(self._compiled, C.byref(self._profiler)), "getting the profiler")

    @staticmethod
    def _ok(status: int, what: str) -> None:
        if status != 0:
            raise RuntimeError(f"LiteRT C API: {what} failed (LiteRtStatus {status})")

    def _buffers(self, signature: Any, inputs: bool) -> list[tuple[str, Any, int]]:
        """``(tensor name, buffer, size in bytes)`` of each input (or output) of the signature, in its order."""
        lib = self._lib
        count = C.c_size_t()
        counter = lib.LiteRtGetNumSignatureInputs if inputs else lib.LiteRtGetNumSignatureOutputs
        self._ok(counter(signature, C.byref(count)), "counting the signature's tensors")
        tensor_at = lib.LiteRtGetSignatureInputTensorByIndex if inputs else lib.LiteRtGetSignatureOutputTensorByIndex
        needs = (
            lib.LiteRtGetCompiledModelInputBufferRequirements
            if inputs
            else lib.LiteRtGetCompiledModelOutputBufferRequirements
        )
        out = []
        for i in range(count.value):
            tensor, requirements, buffer, name = _P(), _P(), _P(), C.c_char_p()
            ranked = C.create_string_buffer(1024)  # LiteRtRankedTensorType, passed back as it came
            self._ok(tensor_at(signature, i, C.byref(tensor)), "reading a signature tensor")
            self._ok(lib.LiteRtGetTensorName(tensor, C.byref(name)), "reading a tensor's name")
            self._ok(lib.LiteRtGetRankedTensorType(tensor, ranked), "reading a tensor's type")
            self._ok(needs(self._compiled, 0, i, C.byref(requirements)), "reading buffer requirements")
            self._ok(
                lib.LiteRtCreateManagedTensorBufferFromRequirements(self._env, ranked, requirements, C.byref(buffer)),
                "creating a tensor buffer",
            )
            size = C.c_size_t()
            self._ok(lib.LiteRtGetTensorBufferSize(buffer, C.byref(size)), "reading a buffer's size")
            out.append(((name.value or b"").decode(), buffer, size.value))
        return out

    def write(self, arrays: list[np.ndarray]) -> None:
        """Copy one array into each input buffer, in the signature's order (as its bytes: the model's dtype)."""
        for (name, buffer, size), array in zip(self.inputs, arrays, strict=True):
            data = np.ascontiguousarray(array)
            if data.nbytes > size:
                raise RuntimeError(f"input {name}: {data.nbytes} bytes do not fit its {size}-byte buffer")
            host = _P()
            self._ok(self._lib.LiteRtLockTensorBuffer(buffer, C.byref(host), _LOCK_WRITE), "locking an input")
            C.memmove(host, data.ctypes.data, data.nbytes)
            self._ok(self._lib.LiteRtUnlockTensorBuffer(buffer), "unlocking an input")

    def run(self) -> None:
        self._ok(
            self._lib.LiteRtRunCompiledModel(
                self._compiled, 0, len(self.inputs), self._in, len(self.outputs), self._out
            ),
            "running the model",
        )

    def read(self, index: int, dtype: Any) -> np.ndarray:
        """Output ``index``'s bytes as a flat array of ``dtype``."""
        _, buffer, size = self.outputs[index]
        host = _P()
        self._ok(self._lib.LiteRtLockTensorBuffer(buffer, C.byref(host), _LOCK_READ), "locking an output")
        try:
            return np.frombuffer((C.c_char * size).from_address(host.value or 0), dtype=dtype).copy()
        finally:
            self._lib.LiteRtUnlockTensorBuffer(buffer)

    def start_profiling(self) -> None:
        self._ok(self._lib.LiteRtResetProfiler(self._profiler), "resetting the profiler")
        self._ok(self._lib.LiteRtStartProfiler(self._profiler), "starting the profiler")

    def stop_profiling(self) -> None:
        self._ok(self._lib.LiteRtStopProfiler(self._profiler), "stopping the profiler")

    def events(self) -> list[ProfiledEvent]:
        """The events recorded since :meth:`start_profiling`, in the order they ended."""
        count = C.c_int()
        self._ok(self._lib.LiteRtGetNumProfilerEvents(self._profiler, C.byref(count)), "counting events")
        raw = (_Event * count.value)()
        self._ok(self._lib.LiteRtGetProfilerEvents(self._profiler, count.value, raw), "reading events")
        return [
            ProfiledEvent((e.tag or b"").decode(errors="replace"), e.event_type, e.start_us, e.elapsed_us, e.metadata1)
            for e in raw
        ]
