"""What distorts a measurement, each rule declared once: the launcher refuses or notes it before a trial runs, and
the result carries the same note."""

from __future__ import annotations

#: A sampler using more of a core than this competes with the trial it measures: the result says so.
SAMPLER_CPU_NOTE_PCT = 10.0
#: Threads beyond this many per core used are refused: they only queue for the cores and each holds memory.
MAX_THREADS_PER_CORE = 4


def thread_oversubscription(threads: int, cores: int) -> str | None:
    """Why ``threads`` on ``cores`` cores cannot run (a :class:`ValueError`), or a note on what it distorts.

    One rule for ``run`` and ``sweep``: up to :data:`MAX_THREADS_PER_CORE` per core is a measurement of
    oversubscription and only noted; beyond it the threads mostly wait, and thousands of them exhaust memory.
    """
    if threads > MAX_THREADS_PER_CORE * cores:
        raise ValueError(
            f"{threads} threads on {cores} core{'s' if cores > 1 else ''} is more than {MAX_THREADS_PER_CORE} per "
            f"core ({MAX_THREADS_PER_CORE * cores}); give at most that, or more cores"
        )
    if threads > cores:
        return (
            f"{threads} threads on {cores} core{'s' if cores > 1 else ''}: {threads - cores} wait for a core at any "
            "moment, so step times include their queueing"
        )
    return None


def command_counters_note(tool: str | None, *, per_step: bool) -> str:
    """What a ``--command`` trial's perf counts cover: the command's whole process tree, and per step only where
    edgebench's own launcher read them at each step line (this machine)."""
    how = (
        "opened by edgebench's launcher on the command's process before it ran, inherited by every child and thread"
        if tool == "launcher"
        else f"`{tool} stat` on the device ran the command"
    )
    if per_step:
        return (
            f"perf counters cover the command's whole process tree ({how}); per step: between the readings at two "
            "step lines as the launcher passed them on; the whole run's total also holds start-up and exit"
        )
    return (
        f"perf counters cover the command's whole process tree ({how}), over its whole run only (start-up and "
        "the time after the last step included): no per-step counts "
        + ("(its output has no step lines)" if tool == "launcher" else "(the device's tool reads at exit only)")
    )
