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
