"""Which trials to run next: the ones that would most narrow the predictions the user asked about.

The bootstrap models (:func:`edgebench.predict.estimate.bootstrap_models`, each fitted on a resample of the
stored trials) are taken as samples of what the device might be.  Across them, every configuration's predicted
log step time varies, and two configurations' predictions vary together when they lean on the same layer-type
models (a ResNet at batch 32 and one at batch 8; any two models heavy in depthwise convolutions).  Their
covariance ``S`` is the predictor's uncertainty, jointly.

Measuring a candidate ``c`` (with the noise ``s2`` of a stored trial around the fit) would, in the Gaussian
approximation of that ensemble, shrink the variance of an asked configuration ``t`` by ``S[t,c]^2 / (S[c,c] +
s2)``.  The suggestions are chosen greedily: the candidate with the largest total shrink over the asked
configurations, then ``S`` conditioned on it having been measured, and again (expected variance reduction, a
standard batch active-learning rule).  A candidate far from every stored trial has a wide ensemble spread, but it
is chosen only where that spread is shared with what was asked; the asked configurations themselves and those
already stored are not candidates (the point is not to run what was asked).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace

import numpy as np

from edgebench.predict.model import CostModel
from edgebench.predict.observations import Config, Graph, Observation


@dataclass(frozen=True)
class Suggestion:
    config: Config
    #: The predicted step of the candidate (what running it will cost, per step).
    predicted_ms: float
    #: The share of the asked configurations' summed variance this pick removes (after the earlier picks).
    removes: float
    #: The share left after this pick and every earlier one (1 = nothing learned).
    left: float


def log_predictions(graphs: list[Graph], boot: list[CostModel]) -> np.ndarray:
    """``[model, configuration]`` log predicted step time of each bootstrap model."""
    return np.log(np.array([[max(b.predict(g).step_ms, 1e-6) for g in graphs] for b in boot]))


def noise_variance(model: CostModel, observations: list[Observation]) -> float:
    """The stored trials' variance around the fit (log): what one measured trial of a candidate leaves unknown."""
    errors = [np.log(o.step_ms / max(model.predict(o.graph).step_ms, 1e-6)) for o in observations]
    return float(np.var(errors)) if len(errors) > 1 else 0.01


def choose(covariance: np.ndarray, asked: int, n: int, noise: float) -> list[tuple[int, float, float]]:
    """Greedy expected variance reduction: ``covariance`` is over ``asked`` configurations first, then the
    candidates; returns ``(candidate index, share removed, share left)`` for up to ``n`` picks."""
    s = covariance.copy()
    total = float(np.trace(s[:asked, :asked]))
    picks: list[tuple[int, float, float]] = []
    remaining = set(range(asked, len(s)))
    while remaining and len(picks) < n and total > 0:
        idx = np.array(sorted(remaining))
        gain = (s[:asked, idx] ** 2).sum(axis=0) / (np.diag(s)[idx] + noise)
        best = int(idx[int(np.argmax(gain))])
        before = float(np.trace(s[:asked, :asked]))
        s = s - np.outer(s[:, best], s[best, :]) / (s[best, best] + noise)
        after = float(np.trace(s[:asked, :asked]))
        picks.append((best - asked, (before - after) / total, after / total))
        remaining.discard(best)
    return picks


def suggest(
    asked: list[Graph],
    candidates: list[Graph],
    model: CostModel,
    boot: list[CostModel],
    observations: list[Observation],
    n: int,
) -> list[Suggestion]:
    """Up to ``n`` candidates that most narrow the predictions of ``asked`` (see the module docstring)."""
    if len(boot) < 2 or not asked or not candidates:
        return []
    logs = log_predictions(asked + candidates, boot)
    covariance = np.cov(logs, rowvar=False)
    picks = choose(np.atleast_2d(covariance), len(asked), n, noise_variance(model, observations))
    return [
        Suggestion(candidates[i].config, model.predict(candidates[i]).step_ms, removes, left)
        for i, removes, left in picks
    ]


def candidate_configs(
    observations: list[Observation], asked: list[Config], batch_sizes: list[int] | None = None
) -> list[Config]:
    """Every stored or asked model (at its stored or asked input) x batch size x thread count, less the stored and
    the asked configurations."""
    models: dict[str, Config] = {}
    for c in [o.graph.config for o in observations] + asked:
        models.setdefault(c.model, c)
    batches = sorted(set(batch_sizes or []) | {c.batch_size for c in [o.graph.config for o in observations] + asked})
    threads = sorted({c.threads for c in [o.graph.config for o in observations] + asked})
    taken = {_key(o.graph.config) for o in observations} | {_key(c) for c in asked}
    out = []
    for base in models.values():
        for b in batches:
            for t in threads:
                config = Config(base.model, b, mode=base.mode, threads=t, preset=base.preset,
                                input_shape=base.input_shape)  # fmt: skip
                if _key(config) not in taken:
                    out.append(config)
    return out


def _key(c: Config) -> tuple[object, ...]:
    return (c.model, c.batch_size, c.mode, c.threads, c.preset, c.input_shape)


def with_threads(graph: Graph, threads: int) -> Graph:
    """The same counted graph at another thread count (the features do not depend on it)."""
    return replace(graph, config=replace(graph.config, threads=threads))


def sweep_yaml(suggestions: list[Suggestion], asked: list[Config], *, target: str, steps: int, warmup: int) -> str:
    """A sweep file of the suggested trials, layer-traced, runnable with ``edgebench sweep FILE``."""
    import yaml

    entries = []
    for s in suggestions:
        entry: dict[str, object] = {"name": s.config.model, "batch_size": s.config.batch_size}
        entry["threads"] = s.config.threads
        if s.config.input_shape:
            entry["input_shape"] = "x".join(map(str, s.config.input_shape))
        entries.append(entry)
    digest = hashlib.sha1(repr([(e["name"], e["batch_size"], e["threads"]) for e in entries]).encode()).hexdigest()
    mode = suggestions[0].config.mode if suggestions else "train"
    body = {
        "name": f"predict-suggest-{digest[:8]}",
        "mode": mode,
        "trace": "layers",
        "steps": steps,
        "warmup": warmup,
        "infer_steps": 0,
        "batch_sizes": [entries[0]["batch_size"]] if entries else [1],
        "models": entries,
    }
    asked_text = ", ".join(f"{c.model}@{c.batch_size}x{c.threads}t" for c in asked)
    lines = [
        "# Written by `edgebench predict --suggest`: the layer-traced trials that most narrow the predictions of",
        f"# {asked_text} (model@batch x threads), best first. Each models entry is one trial (its own batch_size",
        "# and threads); batch_sizes is there for the sweep's grid and every entry overrides it.",
        f"# Run on the device the predictions are for: edgebench sweep THIS_FILE{_target(target)}",
        "# then ask again: edgebench predict ... (the new trials are learned from).",
    ]
    for s in suggestions:
        lines.append(
            f"#   {s.config.model} batch {s.config.batch_size}, {s.config.threads} thread(s): predicted "
            f"{s.predicted_ms:.1f} ms per step; removes {100 * s.removes:.0f}% of the asked variance, "
            f"{100 * s.left:.0f}% left"
        )
    return "\n".join(lines) + "\n" + yaml.safe_dump(body, sort_keys=False)


def _target(target: str) -> str:
    return "" if target == "local" else f" --target {target}"
