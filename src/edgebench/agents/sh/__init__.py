"""The POSIX-``sh`` agent of a ``--command`` trial: ``sampler.sh`` runs the user's workload and samples the device's
files on the device (no Python needed there); :mod:`~edgebench.agents.sh.run` pushes it through the target's shell
and bundles what it recorded, :mod:`~edgebench.agents.sh.counting` wraps the workload in a perf-event counter."""
