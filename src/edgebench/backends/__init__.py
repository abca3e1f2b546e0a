"""Backends: one folder per runtime a trial can run on, each registered in ``edgebench.registry.BACKENDS``.

Only the runtimes and what a runtime itself needs live here (sessions, training steps, quantization, run-time
tracing, a user's model file fed to a runtime); the models' torch definitions are :mod:`edgebench.zoo`, and what is
read of a model without running it (layer graphs, counts, static features, the ONNX export two runtimes build from)
is :mod:`edgebench.graph`.

:mod:`.base` declares, without any framework, what a backend can do (:class:`~.base.Capabilities`) and the
session the worker drives (:class:`~.base.BackendSession`).
"""
