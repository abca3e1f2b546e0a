"""``edgebench predict``: a configuration's step time (with an interval) from the device's stored traced trials,
or ``--validate``: the predictor's own held-out error on what is stored.  See docs/predict.md."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from edgebench.cli.options import StoreOption
from edgebench.errors import UsageError

if TYPE_CHECKING:
    from edgebench.predict.observations import Graph
    from edgebench.predict.step import Predictor

INSTALL = "install the predictor's extra: pip install 'edgebench[predict]'"


def check_sklearn() -> None:
    try:
        import sklearn  # noqa: F401
    except ImportError:
        raise UsageError("predict", f"scikit-learn is not installed; {INSTALL}") from None


def parse_input_shape(text: str | None) -> tuple[int, ...] | None:
    """``--input-shape 3x64x64`` as a shape, or the flag's one-line error."""
    if text is None:
        return None
    from edgebench.units import parse_shape

    try:
        return parse_shape(text)
    except ValueError as exc:
        raise UsageError("--input-shape", str(exc)) from None


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
        list[int] | None,
        typer.Option(help="Threads of the configuration predicted (repeat) [default: the stored trials' most common]."),
    ] = None,
    cores: Annotated[str | None, typer.Option(help="Learn only from trials on this core set, e.g. 4-7.")] = None,
    target: Annotated[
        str, typer.Option(help="Device whose trials to learn from, as `run --target` named it.")
    ] = "local",
    preset: Annotated[str | None, typer.Option(help="Named input of the model (see `edgebench models`).")] = None,
    input_shape: Annotated[
        str | None, typer.Option(help="Per-sample input of the model predicted, e.g. 3x64x64 [default: its own].")
    ] = None,
    validate: Annotated[
        bool, typer.Option("--validate", help="Leave-one-model-out and leave-one-batch-size-out errors.")
    ] = False,
    plot: Annotated[Path | None, typer.Option(help="With --validate: draw the errors into this PNG.")] = None,
    suggest: Annotated[
        int | None,
        typer.Option(help="Write the N trials that would most narrow these predictions as a sweep file (--out)."),
    ] = None,
    out: Annotated[Path, typer.Option(help="With --suggest: the sweep file to write.")] = Path("predict-suggest.yaml"),
    store: StoreOption = None,
) -> int:
    """Predict step time, energy and peak memory of a configuration never run, from the device's traced trials."""
    if mode not in ("train", "infer"):
        raise UsageError("--mode", f"{mode!r} is not a mode; choose train or infer")
    if any(t < 1 for t in threads or []):
        raise UsageError("--threads", "must be at least 1")
    if plot is not None and not validate:
        raise UsageError("--plot", "draws the --validate errors; add --validate")
    if suggest is not None and validate:
        raise UsageError("--suggest", "suggests trials for the configurations asked; leave --validate out")
    if suggest is not None and suggest < 1:
        raise UsageError("--suggest", "must be at least 1 (the number of trials to suggest)")
    if not validate and not model:
        raise UsageError("--model", "name the model to predict (or give --validate)")
    if model and not batch_size:
        raise UsageError("--batch-size", "give the batch size to predict at")
    if any(b < 1 for b in batch_size or []):
        raise UsageError("--batch-size", "must be at least 1")
    shape = parse_input_shape(input_shape)
    if suggest is not None:
        from edgebench.report.outputs import check_output_file

        check_output_file("--out", out, "predict-suggest.yaml")
    from edgebench.registry import MODELS

    models = [MODELS.canonical(m.replace("-", "_")) for m in model or []]
    selection_cores = _cores(cores)
    check_sklearn()
    from edgebench.predict.stored import Selection, load_observations

    selection = Selection(target, backend, mode, selection_cores)
    observations, skipped = load_observations(store, selection)
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
    from edgebench.predict.step import Predictor
    from edgebench.predict.suggest import with_threads
    from edgebench.predict.untraced import hook_cost

    predictor = Predictor(observations, hook_cost(store, selection, observations))
    graphs = []
    for name in models:
        for b in batch_size or []:
            base = predictor.graph(name, b, mode=mode, threads=(threads or [None])[0], preset=preset,
                                   input_shape=shape)  # fmt: skip
            for t in threads or [predictor.threads]:
                graph = with_threads(base, t)
                graphs.append(graph)
                views.print_prediction(predictor.prediction(graph), predictor.hooks)
    if suggest is not None:
        _suggest(predictor, graphs, suggest, out, target)
    return 0


def _suggest(predictor: Predictor, asked: list[Graph], n: int, out: Path, target: str) -> None:
    """Count every candidate configuration, choose the ``n`` most informative, print and write them."""
    from edgebench.predict import views
    from edgebench.predict.suggest import candidate_configs, suggest, sweep_yaml, with_threads

    configs = candidate_configs(predictor.observations, [g.config for g in asked])
    typer.echo(f"counting {len(configs)} candidate configurations (FLOPs and bytes per layer)...", err=True)
    counted: dict[tuple[object, ...], Graph] = {}
    candidates = []
    for c in configs:
        key = (c.model, c.batch_size, c.mode, c.preset, c.input_shape)
        if key not in counted:
            counted[key] = predictor.graph(c.model, c.batch_size, mode=c.mode, preset=c.preset,
                                           input_shape=c.input_shape)  # fmt: skip
        candidates.append(with_threads(counted[key], c.threads))
    picks = suggest(asked, candidates, predictor.model, predictor.boot, predictor.observations, n)
    if not picks:
        raise UsageError(
            "--suggest",
            "nothing to suggest: every candidate (the stored and asked models at the stored and asked batch sizes "
            "and threads) is stored or asked already, or fewer than two trials are stored to judge the uncertainty",
        )
    views.print_suggestions(picks, len(candidates))
    out.write_text(sweep_yaml(picks, [g.config for g in asked], target=target, steps=20, warmup=3))
    typer.echo(
        f"wrote {out}: run it with `edgebench sweep {out}`" + ("" if target == "local" else f" --target {target}")
    )
