"""The fake backend: steps that take a set time and may fail at a set step, with no framework imported.

A real plugin, registered like torch or MNN (``--backend fake``), so everything around a backend (the launcher,
the agent and worker, the sampler, the store, sweeps, resume, signals, a failing store) runs for real in seconds,
and a user can check a target or a store without installing a framework.  Its figures measure only sleeping and a
small busy loop: the trial's ``env`` says ``fake``, and nothing else should be read into them.

The steps are set through the environment of the process that runs the worker (set it before ``edgebench``):

- ``EDGEBENCH_FAKE_STEP_MS`` (default 5): how long each training or inference step takes;
- ``EDGEBENCH_FAKE_FAIL_AT`` (default none): the step (counting from 0, warm-up steps included) that raises,
  which stores the trial as ``crashed`` with the step in its reason;
- ``EDGEBENCH_FAKE_PROCESS_CV_PCT`` (default 0): each worker process's own offset, a log-normal factor of this
  spread (percent), as real processes differ;
- ``EDGEBENCH_FAKE_STEP_CV_PCT`` (default 0) and ``EDGEBENCH_FAKE_AR1`` (default 0): the steps' spread about the
  process's level (percent) and its lag-one autocorrelation, an AR(1) series as real steps are;
- ``EDGEBENCH_FAKE_SEED`` (default none): seeds the offset and the steps (every process then draws the same);
  unset, each process draws its own.
"""

from __future__ import annotations

from edgebench.backends.base import Backend, Capabilities

FAKE = Backend(
    name="fake",
    capabilities=Capabilities(modes=("train", "infer"), precisions=("fp32",), devices=("cpu",), trace_kinds=("none",)),
    session="edgebench.backends.fake.session:open_session",
    tasks="edgebench.backends.fake.session:task_session",
)
