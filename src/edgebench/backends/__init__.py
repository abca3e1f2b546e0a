"""Backends: one folder per framework a trial can run on, each registered in ``edgebench.registry.BACKENDS``.

:mod:`.base` declares, without any framework, what a backend can do (:class:`~.base.Capabilities`) and the
session the worker drives (:class:`~.base.BackendSession`).
"""
