"""What ``edgebench predict`` prints and draws: every figure labelled predicted, with where it came from (the
predictions are :mod:`edgebench.predict`'s; this is their terminal and figure view)."""

from __future__ import annotations

from pathlib import Path

import typer

from edgebench.predict.estimate import LEVEL, Prediction
from edgebench.predict.suggest import Suggestion
from edgebench.predict.untraced import HookCost
from edgebench.predict.validate import Validation
from edgebench.units import MIB


def interval_text(p: Prediction) -> str:
    """``90% interval 1.52-1.91 ms``, or why there is none (too few trials): never a zero-width interval."""
    return p.interval_note or f"{int(LEVEL * 100)}% interval {p.low_ms:.2f}-{p.high_ms:.2f} ms"


def print_prediction(p: Prediction, hooks: HookCost | None = None) -> None:
    cfg = p.graph.config
    b = p.point
    typer.echo(
        f"{cfg.model} batch {cfg.batch_size} {cfg.mode}, {cfg.threads} thread(s): predicted step "
        f"{b.step_ms:.2f} ms ({interval_text(p)})"
    )
    device = p.learned_from[0].device if p.learned_from else None
    if device:
        typer.echo(f"  device: {device} (its own traced trials only)")
    typer.echo(
        f"  forward {b.forward_ms:.2f} ms + backward {b.backward_ms:.2f} ms + overhead (loss, optimizer update, "
        f"framework) {b.overhead_ms:.2f} ms; {p.graph.total_flops / 1e9:.3g} GFLOPs per step"
    )
    if hooks is not None:
        typer.echo(
            f"  untraced step: {hooks.untraced_ms(b.step_ms, p.graph):.2f} ms (predicted; the tracer's "
            f"{1e3 * hooks.per_call_ms:.1f} us per module call taken off, from {hooks.pairs} traced/untraced pair(s))"
        )
    else:
        typer.echo(
            "  untraced step: not calibrated (no untraced trial of a traced configuration is stored; "
            "run one of them without --trace)"
        )
    if b.energy_j is not None:
        typer.echo(f"  energy per step: {b.energy_j:.3g} J (predicted: predicted time x the trials' mean power)")
    else:
        typer.echo("  energy per step: not predicted (the device's trials have no measured energy)")
    if b.peak_bytes is not None:
        typer.echo(f"  peak memory: {b.peak_bytes / MIB:.0f} MiB (predicted)")
    learned = sorted({(o.graph.config.model, o.graph.config.batch_size) for o in p.learned_from})
    typer.echo(
        f"  learned from {len(p.learned_from)} traced trials: "
        + ", ".join(f"{m}@{bs}" for m, bs in learned[:12])
        + (" ..." if len(learned) > 12 else "")
    )
    typer.echo(f"  {_streaming(p.update_bytes)}")
    n = p.nearest
    typer.echo(
        f"  nearest stored trial: {n.trial_id} ({n.model} batch {n.batch_size}), "
        f"{2**n.log2_flops_ratio:.2g}x its FLOPs per step"
    )
    if p.extrapolation:
        for flag in p.extrapolation:
            typer.echo(f"  warning: extrapolation: {flag}")
    else:
        typer.echo("  within the stored trials' range (no extrapolation)")
    typer.echo(
        "  note: step time as the device's layer-traced trials measure it (the tracer's hooks included; "
        "an undisturbed step: one-thread trials count their worker's CPU time)"
    )


def _streaming(update_bytes: float) -> str:
    if update_bytes == float("inf"):
        return "the optimizer update's traffic priced alike for every tensor (no streaming split chosen)"
    return (
        f"parameter tensors whose update ops move over {update_bytes / MIB:g} MiB priced as streamed from DRAM "
        "(the split chosen by leave-one-model-out over the stored trials)"
    )


def print_suggestions(picks: list[Suggestion], candidates: int) -> None:
    """The suggested trials, best first, with what each would teach (the asked predictions' variance it removes)."""
    typer.echo(
        f"suggested trials ({len(picks)} of {candidates} candidates), best first: each removes the share of the "
        "asked predictions' uncertainty (variance across the bootstrap models) shown"
    )
    for i, s in enumerate(picks, 1):
        c = s.config
        shape = f" input {'x'.join(map(str, c.input_shape))}" if c.input_shape else ""
        typer.echo(
            f"  {i}. {c.model} batch {c.batch_size}, {c.threads} thread(s){shape}: removes {100 * s.removes:.0f}%, "
            f"{100 * s.left:.0f}% left; predicted {s.predicted_ms:.1f} ms per step"
        )


def print_validation(checks: list[Validation]) -> None:
    for check in checks:
        typer.echo(f"{check.scheme}: training step time, predicted from the other trials")
        typer.echo(f"  {'model':<18} {'batch':>5} {'measured ms':>12} {'predicted ms':>13} {'error':>8}")
        for row in sorted(check.rows, key=lambda r: (r.model, r.batch_size)):
            typer.echo(
                f"  {row.model:<18} {row.batch_size:>5} {row.measured_ms:>12.2f} {row.predicted_ms:>13.2f} "
                f"{100 * row.error:>+7.1f}%"
            )
        errors = check.model_errors()
        if errors:
            typer.echo(
                "  per model (mean over its batch sizes): "
                + ", ".join(f"{m} {100 * e:+.1f}%" for m, e in errors.items())
            )
            shares = {b: check.share_within(b) for b in (0.10, 0.20, 0.25)}
            typer.echo(
                f"  {len(errors)} models: median |error| {100 * (check.median_abs_error() or 0):.1f}%; within "
                + ", ".join(f"±{int(100 * b)}% {100 * (s or 0):.0f}%" for b, s in shares.items())
            )
        if check.skipped:
            typer.echo(f"  not held out (nothing else to learn from): {', '.join(check.skipped)}")


def plot_validation(checks: list[Validation], path: Path) -> None:
    """Predicted against measured step time, one panel per scheme, the ±10% and ±20% bands drawn."""
    try:
        from edgebench.markup import plain_pyplot  # every text drawn as it is: no $...$ formulas

        plt = plain_pyplot()
    except ImportError:
        from edgebench.errors import UsageError

        raise UsageError("--plot", "matplotlib is not installed; pip install 'edgebench[report]'") from None
    fig, axes = plt.subplots(1, len(checks), figsize=(6 * len(checks), 5), squeeze=False)
    for ax, check in zip(axes[0], checks, strict=True):
        measured = [r.measured_ms for r in check.rows]
        if not measured:
            continue
        lo, hi = min(measured) * 0.7, max(measured) * 1.3
        line = [lo, hi]
        ax.plot(line, line, color="black", linewidth=1)
        for band, style in ((0.1, "--"), (0.2, ":")):
            ax.plot(line, [v * (1 + band) for v in line], "gray", linestyle=style, label=f"±{int(band * 100)}%")
            ax.plot(line, [v * (1 - band) for v in line], "gray", linestyle=style)
        for model in sorted({r.model for r in check.rows}):
            rows = [r for r in check.rows if r.model == model]
            ax.scatter([r.measured_ms for r in rows], [r.predicted_ms for r in rows], label=model)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("measured step (ms)")
        ax.set_ylabel("predicted step (ms)")
        ax.set_title(check.scheme)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def prediction_json(p: Prediction, hooks: HookCost | None = None) -> dict[str, object]:
    """One prediction as ``predict --json`` prints it: every figure the table shows, labelled predicted, with the
    interval (null, with ``interval_note`` saying why, where too few trials give none)."""
    cfg, b = p.graph.config, p.point
    finite = p.interval_note is None
    return {
        "basis": "predicted",
        "model": cfg.model,
        "batch_size": cfg.batch_size,
        "mode": cfg.mode,
        "threads": cfg.threads,
        "device": p.learned_from[0].device if p.learned_from else None,
        "step_ms": b.step_ms,
        "interval": {"level": LEVEL, "low_ms": p.low_ms, "high_ms": p.high_ms} if finite else None,
        "interval_note": p.interval_note,
        "forward_ms": b.forward_ms,
        "backward_ms": b.backward_ms,
        "overhead_ms": b.overhead_ms,
        "gflops_per_step": p.graph.total_flops / 1e9,
        "untraced_step_ms": hooks.untraced_ms(b.step_ms, p.graph) if hooks is not None else None,
        "energy_per_step_j": b.energy_j,
        "peak_bytes": b.peak_bytes,
        "learned_from": [o.trial_id for o in p.learned_from],
        "nearest": {
            "trial_id": p.nearest.trial_id,
            "model": p.nearest.model,
            "batch_size": p.nearest.batch_size,
            "flops_ratio": 2**p.nearest.log2_flops_ratio,
        },
        "extrapolation": list(p.extrapolation),
    }


def suggestions_json(picks: list[Suggestion]) -> list[dict[str, object]]:
    return [
        {"model": s.config.model, "batch_size": s.config.batch_size, "threads": s.config.threads,
         "input_shape": list(s.config.input_shape) if s.config.input_shape else None,
         "predicted_ms": s.predicted_ms, "removes": s.removes, "left": s.left}
        for s in picks
    ]  # fmt: skip


def validation_json(checks: list[Validation]) -> list[dict[str, object]]:
    """``predict --validate --json``: each scheme's held-out rows, per-model errors and what was not held out."""
    return [
        {
            "scheme": c.scheme,
            "rows": [
                {
                    "model": r.model,
                    "batch_size": r.batch_size,
                    "measured_ms": r.measured_ms,
                    "predicted_ms": r.predicted_ms,
                    "error": r.error,
                }
                for r in c.rows
            ],
            "model_errors": c.model_errors(),
            "median_abs_error": c.median_abs_error(),
            "skipped": list(c.skipped),
        }
        for c in checks
    ]
