"""The one launch path: every command that runs a trial (``run``, ``sweep``, a fleet host's task, ``feasibility``,
``frameworks``, ``partition``'s traced trial) goes through here.

* :mod:`~edgebench.launch.agents` picks the device-side agent (Python, or ``sh`` for a ``--command`` trial) and
  hands it to the target, which only transports it;
* :mod:`~edgebench.launch.trial` places a trial, runs it on its target and measures it into a
  :class:`~edgebench.records.finished.FinishedTrial` (and measures a stored one again);
* :mod:`~edgebench.launch.cooldown` waits between trials for the device to cool;
* :mod:`~edgebench.launch.session` holds it together: the store checked before anything runs, the cool-down, the
  frequency pinned and restored on every way out (Ctrl-C and SIGTERM included), and each finished trial stored,
  or kept in a rescue file when the store fails.
"""
