"""``edgebench predict``: a configuration's step time (with an interval) from the device's stored traced trials,
or ``--validate``: the predictor's own held-out error on what is stored.  See docs/predict.md."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from edgebench.cli.options import StoreOption
from edgebench.errors import UsageError

INSTALL = "install the predictor's extra: pip install 'edgebench[predict]'"


def _check_sklearn() -> None:
    try:
        import sklearn  # noqa: F401
    except ImportError:
        raise UsageError("predict", f"scikit-learn is not installed; {INSTALL}") from None


def _cores(text: str | None) -> tuple[int, ...] | None:
    if text is None:
        return None
    from edgebench.host.cpuset import parse_cores

    try:
        return tuple(sorted(parse_cores(text)))
    except ValueError:
        raise UsageError("--cores", f"{text!r} is not a core list such as 0-3 or 4,5") from None


def predict(
    model: Annotated[list[str] | None, typer.Option(help="Model to predict (repeat for several).")] = None,
    batch_size: Annotated[list[int] | None, typer.Option(help="Batch size (repeat for several).")] = None,
    mode: Annotated[str, typer.Option(help="train (one training step) or infer (one forward pass).")] = "train",
    backend: Annotated[str, typer.Option(help="Backend whose stored trials to learn from.")] = "torch",
    threads: Annotated[
        int | None,
        typer.Option(help="Threads of the configuration predicted [default: the stored trials' most common]."),
    ] = None,
    cores: Annotated[str | None, typer.Option(help="Learn only from trials on this core set, e.g. 4-7.")] = None,
    target: Annotated[
        str, typer.Option(help="Device whose trials to learn from, as `run --target` named it.")
    ] = "local",
    preset: Annotated[str | None, typer.Option(help="Named input of the model (see `edgebench models`).")] = None,
    validate: Annotated[
        bool, typer.Option("--validate", help="Leave-one-model-out and leave-one-batch-size-out errors.")
    ] = False,
    plot: Annotated[Path | None, typer.Option(help="With --validate: draw the errors into this PNG.")] = None,
    store: StoreOption = None,
) -> int:
    """Predict step time, energy and peak memory of a configuration never run, from the device's traced trials."""
    if mode not in ("train", "infer"):
        raise UsageError("--mode", f"{mode!r} is not a mode; choose train or infer")
    if threads is not None and threads < 1:
        raise UsageError("--threads", "must be at least 1")
    if plot is not None and not validate:
        raise UsageError("--plot", "draws the --validate errors; add --validate")
    if not validate and not model:
        raise UsageError("--model", "name the model to predict (or give --validate)")
    if model and not batch_size:
        raise UsageError("--batch-size", "give the batch size to predict at")
    if any(b < 1 for b in batch_size or []):
        raise UsageError("--batch-size", "must be at least 1")
    from edgebench.registry import MODELS

    models = [MODELS.canonical(m.replace("-", "_")) for m in model or []]
    selection_cores = _cores(cores)
    _check_sklearn()
    from edgebench.predict.stored import Selection, load_observations

    observations, skipped = load_observations(store, Selection(target, backend, mode, selection_cores))
    from edgebench.predict import views

    for line in skipped:
        typer.echo(f"note: passed over {line}", err=True)
    if validate:
        from edgebench.predict.validate import leave_one_batch_size_out, leave_one_model_out

        checks = [leave_one_model_out(observations), leave_one_batch_size_out(observations)]
        views.print_validation(checks)
        if plot is not None:
            views.plot_validation(checks, plot)
            typer.echo(f"wrote {plot}")
        return 0
    from edgebench.predict.estimate import bootstrap_models
    from edgebench.predict.estimate import predict as predict_one
    from edgebench.predict.model import fit
    from edgebench.predict.observations import Config, graph_of_config

    fitted, boot = fit(observations), bootstrap_models(observations)
    if threads is None:
        counts = Counter(o.graph.config.threads for o in observations)
        threads = counts.most_common(1)[0][0]
    for name in models:
        for b in batch_size or []:
            graph = graph_of_config(Config(name, b, mode=mode, threads=threads, preset=preset))
            views.print_prediction(predict_one(graph, observations, model=fitted, boot=boot))
    return 0
