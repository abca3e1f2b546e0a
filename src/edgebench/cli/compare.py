"""``edgebench compare A B``: two trials, configurations, sweeps or devices side by side, with ratios and a decision
taken across repeats (each a fresh process), the settings they differ in and each side's warnings."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from edgebench.cli.options import JsonOption, StoreOption
from edgebench.errors import UsageError


def compare(
    a: Annotated[str, typer.Argument(help="Baseline: a trial id (or unique prefix), a sweep id, or a hostname.")],
    b: Annotated[str, typer.Argument(help="Compared with the baseline: same kinds as A.")],
    match: Annotated[
        str | None,
        typer.Option(help="Groups: fields that pair trials, e.g. model,batch_size [default: all but the device's]."),
    ] = None,
    as_json: JsonOption = False,
    store: StoreOption = None,
) -> int:
    """Each measurement of B next to A's, the ratio B/A, and whether they differ: decided across repeats (Welch's t
    on log repeat medians); one process per side decides nothing."""
    from edgebench.report.compare import print_group_comparison, print_trial_comparison, row_json, warnings_of
    from edgebench.workflows.compare import compare_stored

    done = compare_stored(a, b, match=match, store=store)
    side_a, side_b, groups = done.a, done.b, done.groups
    if as_json:
        payload: dict[str, object] = {"a": side_a.ref, "b": side_b.ref, "warnings_a": warnings_of(side_a),
                                      "warnings_b": warnings_of(side_b), "differences": done.differences}  # fmt: skip
        if groups is None:
            payload |= {"unlike": done.unlike, "rows": [row_json(r) for r in done.rows]}
        else:
            payload |= {"match": list(groups.fields), "rows": [row_json(r) for r in done.rows],
                        "only_in_a": groups.only_a, "only_in_b": groups.only_b,
                        "geometric_mean_ratio": groups.geometric_mean, "notes": groups.notes}  # fmt: skip
        typer.echo(json.dumps(payload))
    elif groups is None:
        print_trial_comparison(side_a, side_b, done.rows, done.warning)
    elif not groups.rows:
        raise UsageError("--match", f"no configuration is in both {side_a.title} and {side_b.title}; "
                         "pair them on fewer fields, e.g. --match model,batch_size")  # fmt: skip
    else:
        print_group_comparison(side_a, side_b, groups)
    return 0
