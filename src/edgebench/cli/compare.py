"""``edgebench compare A B``: two trials, sweeps or devices side by side, with ratios and a t-test on step times."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from edgebench.cli.options import JsonOption, StoreOption
from edgebench.errors import UsageError
from edgebench.markup import rich_text


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
    """Each measurement of B next to A's, the ratio B/A, and whether step times differ significantly (Welch)."""
    from rich.console import Console
    from rich.table import Table

    from edgebench.report.compare import compare_groups, compare_trials, resolve, unlike, unlike_warning
    from edgebench.store import Store, default_store_path

    db_path = store or default_store_path()
    if not db_path.exists():
        raise UsageError("--store", f"{db_path} does not exist; run `edgebench run` or `edgebench sweep` first")
    with Store(db_path, read_only=True) as db:
        side_a, side_b = resolve(db, a), resolve(db, b)
        for side in (side_a, side_b):
            if not side.results:
                raise UsageError(side.ref, f"{side.title} has no successful trial to compare")
        if side_a.kind == side_b.kind == "trial":
            ra, rb = side_a.results[0], side_b.results[0]
            rows = compare_trials(db, ra, rb)
            warning = unlike_warning(ra, rb)
            if as_json:
                payload = {
                    "a": side_a.ref,
                    "b": side_b.ref,
                    "unlike": unlike(ra, rb),
                    "rows": [_row_json(r) for r in rows],
                }
                typer.echo(json.dumps(payload))
                return 0
            table = Table(title=rich_text(f"A = {side_a.title}   B = {side_b.title}"), title_justify="left")
            for column in ("measurement", "A", "B", "B/A", "t-test on steps"):
                table.add_column(column, justify="left" if column in ("measurement", "t-test on steps") else "right")
            for r in rows:
                shown = f"{r.verdict.ratio:.3f}" if r.verdict.ratio is not None else "-"
                table.add_row(*map(rich_text, (r.label, r.a, r.b, shown, r.verdict.text(r.lower_is_better))))
            Console().print(table)
            if warning:
                typer.echo(f"warning: {warning}")
            return 0
        fields = _fields(match, device=side_a.kind == side_b.kind == "device")
        result = compare_groups(db, side_a, side_b, fields)
    if as_json:
        payload = {
            "a": side_a.ref,
            "b": side_b.ref,
            "match": list(result.fields),
            "rows": [_row_json(r) for r in result.rows],
            "only_in_a": result.only_a,
            "only_in_b": result.only_b,
            "geometric_mean_ratio": result.geometric_mean,
        }
        typer.echo(json.dumps(payload))
        return 0
    if not result.rows:
        raise UsageError("--match", f"no configuration is in both {side_a.title} and {side_b.title}; "
                         "pair them on fewer fields, e.g. --match model,batch_size")  # fmt: skip
    console = Console()
    table = Table(title=rich_text(f"A = {side_a.title}   B = {side_b.title}   (step time, ms)"), title_justify="left")
    for column in ("configuration", "A", "B", "B/A", "t-test", "samples/s B/A", "memory B/A", "energy B/A"):
        table.add_column(column, justify="left" if column in ("configuration", "t-test") else "right")
    for r in result.rows:
        extra = [f"{v:.3f}" if v is not None else "-" for v in r.extra.values()]
        ratio = f"{r.verdict.ratio:.3f}" if r.verdict.ratio is not None else "-"
        table.add_row(*map(rich_text, (r.label, r.a, r.b, ratio, r.verdict.text(), *extra)))
    console.print(table)
    if result.geometric_mean is not None:
        console.print(f"geometric mean of step-time ratios B/A over {len(result.rows)} configurations: "
                      f"{result.geometric_mean:.3f}")  # fmt: skip
    if result.only_a or result.only_b:
        console.print(rich_text(f"not compared: {result.only_a} configurations only in A, {result.only_b} only in B "
                                f"(paired on {', '.join(result.fields)})"))  # fmt: skip
    return 0


def _fields(match: str | None, *, device: bool) -> tuple[str, ...]:
    from edgebench.report.compare import DEVICE_MATCH_FIELDS, MATCH_FIELDS

    if match is None:
        return DEVICE_MATCH_FIELDS if device else MATCH_FIELDS
    valid = ("model", "batch_size", "threads", "mask", "cores", "freq_khz", "precision", "backend", "device")
    fields = tuple(f.strip() for f in match.split(",") if f.strip())
    unknown = [f for f in fields if f not in valid]
    if unknown or not fields:
        raise UsageError("--match", f"{', '.join(unknown) or match!r} is not a field; choose from {', '.join(valid)}")
    return fields


def _row_json(r: object) -> dict[str, object]:
    from edgebench.report.compare import Row

    assert isinstance(r, Row)
    return {
        "label": r.label,
        "a": r.a,
        "b": r.b,
        "ratio": r.verdict.ratio,
        "p_value": r.verdict.p_value,
        "significant": r.verdict.significant,
        **({"ratios": r.extra} if r.extra else {}),
    }
