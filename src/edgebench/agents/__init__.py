"""The device-side agents: what runs where the device is, for one trial, and hands back one
:class:`~edgebench.records.bundle.TrialBundle`.

Two agents, because devices differ in what they can run.  :mod:`edgebench.agents.python` runs edgebench's own
workloads with the device's Python (the worker, the sampler, the idle baseline, the memory watchdog);
:mod:`edgebench.agents.sh` runs a ``--command`` trial (the user's own binary) with nothing but the device's POSIX
``sh``, for phones and boards without Python.  The launcher (:mod:`edgebench.launch.agents`) picks one; a target
only transports it.
"""
