"""Predicting a configuration never run, from the device's stored layer-traced trials (docs/predict.md): its step
time with an interval, energy and peak memory (:func:`predict_steps`); the predictor's own held-out error on what
is stored (:func:`validate_predictor`); and the trials that would most narrow the predictions asked, written as a
sweep file (``suggest`` in the request)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from edgebench.errors import UsageError
from edgebench.workflows.common import Notify, quiet

if TYPE_CHECKING:
    from edgebench.predict.estimate import Prediction
    from edgebench.predict.observations import Graph, Observation
    from edgebench.predict.step import Predictor
    from edgebench.predict.stored import Selection
    from edgebench.predict.suggest import Suggestion
    from edgebench.predict.untraced import HookCost
    from edgebench.predict.validate import Validation

INSTALL = "install the predictor's extra: pip install 'edgebench[predict]'"


@dataclass(frozen=True)
class PredictRequest:
    """The configurations to predict (each model at each batch size and thread count), the stored trials to learn
    from (a backend, mode, core set and target), and for :func:`validate_predictor` the plot, for ``suggest`` the
    number of trials to suggest and the sweep file they go to."""

    models: Sequence[str] = ()
    batch_sizes: Sequence[int] = ()
    mode: str = "train"
    backend: str = "torch"
    threads: Sequence[int] = ()
    cores: str | None = None
    target: str = "local"
    preset: str | None = None
    input_shape: str | tuple[int, ...] | None = None
    plot: Path | None = None
    suggest: int | None = None
    out: Path = Path("predict-suggest.yaml")
    store: Path | None = None
    #: The device whose trials to learn from, by its identity (host, ``[replayed TREE]`` for a copied tree's);
    #: None: this host's own where stored, else the one device stored.
    device: str | None = None


@dataclass(frozen=True)
class Predictions:
    """Each configuration's prediction, the tracer's calibrated cost (None: not calibrated), and with ``suggest``
    the trials suggested (best first) out of how many candidates, written to ``out``."""

    predictions: list[Prediction]
    hooks: HookCost | None
    suggestions: list[Suggestion] | None = None
    candidates: int = 0
    out: Path | None = None


def check_sklearn() -> None:
    """The predictor's models need scikit-learn (the ``predict`` extra): a one-line error without it."""
    try:
        import sklearn  # noqa: F401
    except ImportError:
        raise UsageError("predict", f"scikit-learn is not installed; {INSTALL}") from None


def input_shape(text: str | tuple[int, ...] | None) -> tuple[int, ...] | None:
    """``--input-shape 3x64x64`` as a shape, or the flag's one-line error."""
    if text is None or isinstance(text, tuple):
        return text
    from edgebench.config.flags import parse
    from edgebench.units import parse_shape

    return parse("--input-shape", text, parse_shape)


def predict_steps(
    request: PredictRequest,
    *,
    notify: Notify = quiet,
    on_prediction: Callable[[Prediction, HookCost | None], None] = lambda prediction, hooks: None,
) -> Predictions:
    """Learn from the device's stored traced trials and predict every configuration asked (``on_prediction`` hears
    each as it is made, with the tracer's calibrated cost); with ``suggest``, pick the trials that would most narrow
    them and write the sweep file."""
    from edgebench.predict.step import Predictor
    from edgebench.predict.suggest import with_threads
    from edgebench.predict.untraced import hook_cost

    models, shape, selection = _check(request, validating=False)
    observations = _observations(request, selection, notify)
    predictor = Predictor(observations, hook_cost(request.store, selection, observations))
    graphs, predictions = [], []
    for name in models:
        for b in request.batch_sizes:
            base = predictor.graph(name, b, mode=request.mode, threads=(list(request.threads) or [None])[0],
                                   preset=request.preset, input_shape=shape)  # fmt: skip
            for t in request.threads or [predictor.threads]:
                graph = with_threads(base, t)
                graphs.append(graph)
                predictions.append(predictor.prediction(graph))
                on_prediction(predictions[-1], predictor.hooks)
    if request.suggest is None:
        return Predictions(predictions, predictor.hooks)
    picks, candidates = _suggest(predictor, graphs, request, notify)
    return Predictions(predictions, predictor.hooks, picks, candidates, request.out)


def validate_predictor(request: PredictRequest, *, notify: Notify = quiet) -> list[Validation]:
    """The predictor's error on what is stored: each model left out in turn (and each batch size), predicted from
    the rest; the plot of predicted against measured is drawn where asked."""
    from edgebench.predict.validate import leave_one_batch_size_out, leave_one_model_out

    _, _, selection = _check(request, validating=True)
    observations = _observations(request, selection, notify)
    checks = [leave_one_model_out(observations), leave_one_batch_size_out(observations)]
    if request.plot is not None:
        from edgebench.report.predict import plot_validation

        plot_validation(checks, request.plot)
    return checks


def _check(r: PredictRequest, *, validating: bool) -> tuple[list[str], tuple[int, ...] | None, Selection]:
    """Every input checked before the store is read: the models by canonical name, the input, the selection."""
    if r.mode not in ("train", "infer"):
        raise UsageError("--mode", f"{r.mode!r} is not a mode; choose train or infer")
    if any(t < 1 for t in r.threads):
        raise UsageError("--threads", "must be at least 1")
    if r.plot is not None and not validating:
        raise UsageError("--plot", "draws the --validate errors; add --validate")
    if r.suggest is not None and validating:
        raise UsageError("--suggest", "suggests trials for the configurations asked; leave --validate out")
    if r.suggest is not None and r.suggest < 1:
        raise UsageError("--suggest", "must be at least 1 (the number of trials to suggest)")
    if not validating and not r.models:
        raise UsageError("--model", "name the model to predict (or give --validate)")
    if r.models and not r.batch_sizes:
        raise UsageError("--batch-size", "give the batch size to predict at")
    if any(b < 1 for b in r.batch_sizes):
        raise UsageError("--batch-size", "must be at least 1")
    shape = input_shape(r.input_shape)
    if r.suggest is not None:
        from edgebench.report.outputs import check_output_file

        check_output_file("--out", r.out, "predict-suggest.yaml")
    from edgebench.predict.stored import Selection
    from edgebench.registry import MODELS

    models = [MODELS.canonical(m.replace("-", "_")) for m in r.models]
    cores = _cores(r.cores)
    check_sklearn()
    return models, shape, Selection(r.target, r.backend, r.mode, cores, r.device)


def _observations(r: PredictRequest, selection: Selection, notify: Notify) -> list[Observation]:
    from edgebench.predict.stored import load_observations

    observations, skipped = load_observations(r.store, selection)
    for line in skipped:
        notify(f"note: passed over {line}")
    return observations


def _cores(text: str | None) -> tuple[int, ...] | None:
    if text is None:
        return None
    from edgebench.host.cpuset import parse_cores

    try:
        return tuple(sorted(parse_cores(text)))
    except ValueError:
        raise UsageError("--cores", f"{text!r} is not a core list such as 0-3 or 4,5") from None


def _suggest(
    predictor: Predictor, asked: list[Graph], r: PredictRequest, notify: Notify
) -> tuple[list[Suggestion], int]:
    """Count every candidate configuration, choose the ``r.suggest`` most informative, write them as a sweep."""
    from edgebench.predict.suggest import candidate_configs, suggest, sweep_yaml, with_threads

    assert r.suggest is not None
    configs = candidate_configs(predictor.observations, [g.config for g in asked])
    notify(f"counting {len(configs)} candidate configurations (FLOPs and bytes per layer)...")
    counted: dict[tuple[object, ...], Graph] = {}
    candidates = []
    for c in configs:
        key = (c.model, c.batch_size, c.mode, c.preset, c.input_shape)
        if key not in counted:
            counted[key] = predictor.graph(c.model, c.batch_size, mode=c.mode, preset=c.preset,
                                           input_shape=c.input_shape)  # fmt: skip
        candidates.append(with_threads(counted[key], c.threads))
    picks = suggest(asked, candidates, predictor.model, predictor.boot, predictor.observations, r.suggest)
    if not picks:
        raise UsageError(
            "--suggest",
            "nothing to suggest: every candidate (the stored and asked models at the stored and asked batch sizes "
            "and threads) is stored or asked already, or fewer than two trials are stored to judge the uncertainty",
        )
    r.out.write_text(sweep_yaml(picks, [g.config for g in asked], target=r.target, steps=20, warmup=3))
    return picks, len(candidates)
