"""``edgebench predict``: a configuration's step time (with an interval) from the device's stored traced trials,
or ``--validate``: the predictor's own held-out error on what is stored.  See docs/predict.md; the work is
:mod:`edgebench.workflows.predict`'s."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from edgebench.cli.options import JsonOption, StoreOption, say
from edgebench.workflows.predict import PredictRequest


def predict(
    model: Annotated[list[str] | None, typer.Option(help="Model to predict (repeat for several).")] = None,
    batch_size: Annotated[list[int] | None, typer.Option(help="Batch size (repeat for several).")] = None,
    mode: Annotated[
        str, typer.Option(help="train (one training step) or infer (one forward pass).")
    ] = PredictRequest.mode,
    backend: Annotated[str, typer.Option(help="Backend whose stored trials to learn from.")] = PredictRequest.backend,
    threads: Annotated[
        list[int] | None,
        typer.Option(help="Threads of the configuration predicted (repeat) [default: the stored trials' most common]."),
    ] = None,
    cores: Annotated[str | None, typer.Option(help="Learn only from trials on this core set, e.g. 4-7.")] = None,
    target: Annotated[
        str, typer.Option(help="Device whose trials to learn from, as `run --target` named it.")
    ] = PredictRequest.target,
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
    out: Annotated[Path, typer.Option(help="With --suggest: the sweep file to write.")] = PredictRequest.out,
    device: Annotated[
        str | None,
        typer.Option(
            help="Learn from this device's trials: its host name (`HOST [replayed TREE]` for a copied "
            "tree's) [default: this host's, else the one device stored]."
        ),
    ] = None,
    store: StoreOption = None,
    as_json: JsonOption = False,
) -> int:
    """Predict step time, energy and peak memory of a configuration never run, from the device's traced trials."""
    from edgebench.report import predict as views
    from edgebench.workflows.predict import predict_steps, validate_predictor

    request = PredictRequest(model or [], batch_size or [], mode, backend, threads or [], cores, target, preset,
                             input_shape, plot, suggest, out, store, device)  # fmt: skip
    if validate:
        checks = validate_predictor(request, notify=say)
        if as_json:
            typer.echo(json.dumps({"validation": views.validation_json(checks), "plot": str(plot) if plot else None}))
            return 0
        views.print_validation(checks)
        if plot is not None:
            typer.echo(f"wrote {plot}")
        return 0
    if as_json:
        done = predict_steps(request, notify=say)
        doc = {"predictions": [views.prediction_json(p, done.hooks) for p in done.predictions]}
        if done.suggestions is not None:
            doc.update(suggestions=views.suggestions_json(done.suggestions), candidates=done.candidates, out=str(out))
        typer.echo(json.dumps(doc, indent=2))
        return 0
    done = predict_steps(request, notify=say, on_prediction=views.print_prediction)  # printed as they are made
    if done.suggestions is not None:
        views.print_suggestions(done.suggestions, done.candidates)
        where = "" if target == "local" else f" --target {target}"
        typer.echo(f"wrote {out}: run it with `edgebench sweep {out}`" + where)
    return 0
