"""Sweeps on a Ray cluster: devices advertised as Ray resources by the hosts that own them (``edgebench fleet
join``), the driver that places each trial on a free device and stores what comes back (the ``ray`` executor),
and what runs on a host for one trial.  The local executor (:mod:`edgebench.sweep.local`) and what every executor
is given (:mod:`edgebench.sweep.job`) are the sweep's own."""
