"""The launch session: what every command that runs trials does around each one, in one place.

Order, and why:

1. the store is opened and verified before anything runs (:func:`open_store`), so a damaged or read-only store is
   refused before minutes of measurement, not after;
2. the frequency controls are checked before anything runs too (root, a cpufreq the device has), then held for the
   session and restored on every way out: Ctrl-C, SIGTERM (raised as an interrupt here), an error;
3. per trial: cool down (when asked), pin the trial's cores to its frequency (or release them), run it on the target
   under the agent it needs, measure it;
4. store it, or keep it in a rescue file when the store fails now (:func:`~edgebench.store.rescue.save_or_keep`).

A fleet host's task does 2 and 3 on the host that owns the device; the driver, the only writer, does 1 and 4.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from edgebench.errors import UsageError
from edgebench.host.frequency import FrequencyControl
from edgebench.host.lifetime import termination_as_interrupt
from edgebench.launch import trial as launch_trial
from edgebench.launch.cooldown import CooldownOutcome, Cooler, Tick
from edgebench.measure.trial import failed_result
from edgebench.records.finished import FinishedTrial
from edgebench.records.launch import LaunchContext
from edgebench.records.trial import Trial
from edgebench.store.rescue import NotStored, save_or_keep
from edgebench.store.sqlite import Store
from edgebench.targets import Target

#: Runs one trial on a target into a finished trial (:func:`~edgebench.launch.trial.run_trial`, looked up when a
#: trial runs; tests give a stand-in).
Runner = Callable[..., FinishedTrial]
NO_COOLDOWN = CooldownOutcome(0.0, "none")


def open_store(path: Path | None, *, no_store: bool = False) -> Store | None:
    """The store trials will be kept in, opened and checked page by page now (None with ``--no-store``).

    A damaged file can have an intact header, so opening it proves nothing; :meth:`Store.verify` reads it all,
    a fraction of a second against the minutes of the trials it protects.
    """
    if no_store:
        return None
    store = Store(path)
    try:
        store.verify()
    except BaseException:
        store.close()
        raise
    return store


@dataclass(frozen=True)
class Launched:
    """One trial through the launch path: the finished trial and what the session did around it."""

    finished: FinishedTrial
    cooled: CooldownOutcome
    #: The frequency each cpufreq policy of the trial's cores was pinned to (None: not pinned).
    freq_set_khz: dict[str, int] | None


class Launcher:
    """A launch session on one target (a context manager): see the module's docstring for what it does and why.

    ``pins_frequency``: some trial of the session sets a frequency, so the controls are checked on entry and
    restored on exit (``frequency_flag`` names the option a refusal is reported against; None: as the control
    words it).  ``contain_errors``: an error of the launcher itself (not of the trial, which comes back as a failed
    result anyway) becomes a stored ``error`` result instead of ending the session, as a sweep needs.
    """

    def __init__(
        self,
        target: Target,
        *,
        store: Store | None = None,
        cooler: Cooler | None = None,
        pins_frequency: bool = False,
        frequency_flag: str | None = None,
        journal: Path | None = None,
        is_root: Callable[[], bool] | None = None,
        notify: Callable[[str], None] = lambda _: None,
        runner: Runner | None = None,
        sample: bool = True,
        contain_errors: bool = False,
    ) -> None:
        self.target = target
        self.store = store
        self.cooler = cooler
        self.runner = runner
        self.sample = sample
        self.contain_errors = contain_errors
        self.control: FrequencyControl | None = None
        if pins_frequency:
            self.control = FrequencyControl(
                target.sysfs(), is_root=is_root or target.is_root, journal=journal, notify=notify
            )
        self._frequency_flag = frequency_flag
        self._stack = contextlib.ExitStack()

    def __enter__(self) -> Launcher:
        if self.control is not None:
            try:
                self.control.check()  # refuse before anything runs or is recorded
            except UsageError as exc:
                if self._frequency_flag is None:
                    raise
                message = exc.message.replace("leave frequencies out", f"leave {self._frequency_flag} out")
                raise UsageError(self._frequency_flag, message) from None
        with contextlib.ExitStack() as stack:
            stack.enter_context(termination_as_interrupt())
            if self.control is not None:
                stack.enter_context(self.control)
            self._stack = stack.pop_all()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        return self._stack.__exit__(kind, exc, tb)

    def launch(
        self,
        trial: Trial,
        *,
        cool_first: bool = False,
        tick: Tick = lambda _: None,
        cooled: Callable[[], None] = lambda: None,
        context: LaunchContext | None = None,
    ) -> Launched:
        """Cool down (when ``cool_first``; ``tick`` hears what is waited for), tell ``cooled``, pin or release the
        frequency, run and measure ``trial``.  ``context`` (its place in a sweep, its repeat) is recorded with it,
        completed with what was done here: the cool-down waited and the clocks each policy got."""
        waited = self.cooler.wait(tick) if cool_first and self.cooler is not None else NO_COOLDOWN
        cooled()
        freq_set = None
        if self.control is not None:
            if trial.freq_khz is not None:
                freq_set = self.control.pin(trial.cores, trial.freq_khz)
            else:
                self.control.release()
        context = context or LaunchContext()
        if context.sweep is not None:
            done = {"freq_set_khz": freq_set, "cooldown_s": round(waited.waited_s, 3)}
            if cool_first:
                done["cooldown_by"] = waited.rule
            context = context.model_copy(update={"sweep": context.sweep.model_copy(update=done)})
        # the trial's freq_khz is what was asked; the result records what each policy got
        finished = self._run(trial, context.model_copy(update={"freq_applied_khz": freq_set}))
        return Launched(finished, waited, freq_set)

    def _run(self, trial: Trial, context: LaunchContext) -> FinishedTrial:
        runner = self.runner or launch_trial.run_trial
        if not self.contain_errors:
            return runner(trial, target=self.target, sample=self.sample, context=context)
        try:
            return runner(trial, target=self.target, sample=self.sample, context=context)
        except Exception as exc:  # KeyboardInterrupt is not an Exception: it ends the session
            text = str(exc).strip()
            reason = f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}".rstrip(": ")
            context = context.model_copy(update={"target": self.target.name})
            result = failed_result(trial, launch_trial.new_trial_id(), "error", reason, [], {}, context)
            return FinishedTrial(result=result)

    def keep(self, finished: FinishedTrial, then: Callable[[], None] | None = None) -> None:
        """Store ``finished`` (a store that fails now keeps it in a rescue file and raises ``NotStored``), then call
        ``then`` (what prints it): a trial is kept before anything shows it, so that a failure in the showing (a
        label the terminal cannot take, a figure that will not format) cannot lose what was measured, and a store
        that fails does not keep the figures from the screen either."""
        try:
            if self.store is not None:
                save_or_keep(self.store, finished)
        except NotStored:
            if then is not None:
                then()
            raise
        if then is not None:
            then()
