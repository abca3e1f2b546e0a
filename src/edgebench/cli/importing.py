"""``edgebench import FILE...``: bring trials into this store from another store or from files a run kept.

Two kinds of file, told apart by their first bytes: another edgebench store (a server's, a colleague's board; its
trials with their series, ids already here refused) and the ``edgebench-unsaved-*.json`` file a run wrote when its
store would not take a finished trial.  Every file is checked before anything is stored.

``--format mnn-suite DIR... --device NAME`` reads result folders of the MNN-based suite instead (its
``processed_data``, ``train_stamp``, ``usage_monitor`` and ``train_bench`` files), as trials marked imported.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from edgebench.cli.options import StoreOption
from edgebench.errors import UsageError

if TYPE_CHECKING:
    from edgebench.workflows.exchange import ImportedFile


class ImportFormat(str, Enum):
    edgebench = "edgebench"
    mnn_suite = "mnn-suite"


def import_trials(
    files: Annotated[
        list[Path],
        typer.Argument(
            help="Another store (.sqlite) to copy trials from, or edgebench-unsaved-*.json files a run kept; "
            "with --format mnn-suite, the suite's result folders (MEIZU_Freq_1708800/ ...)."
        ),
    ],
    format_: Annotated[
        ImportFormat,
        typer.Option("--format", "-f", help="edgebench (stores, kept files) or mnn-suite (the suite's folders)."),
    ] = ImportFormat.edgebench,
    device: Annotated[
        str | None, typer.Option(help="mnn-suite: the phone the folders were measured on, e.g. 'Meizu 16T'.")
    ] = None,
    store: StoreOption = None,
) -> int:
    """Copy another store's trials with their series into this store, store trials a run kept in files, or read the
    MNN-based suite's result folders as imported trials."""
    from edgebench.workflows.exchange import import_files, import_mnn_suite

    if format_ is ImportFormat.mnn_suite:
        import_mnn_suite(files, device, store, on_file=_said)
        return 0
    if device is not None:
        raise UsageError("--device", "names the phone of MNN-suite folders; give it with --format mnn-suite")
    import_files(files, store, on_file=_said)
    return 0


def _said(done: ImportedFile) -> None:
    """What one file brought in: on stdout, the refused ids and what a folder could not read on stderr."""
    if done.kind == "kept":
        if done.refused:
            typer.echo(f"{done.path}: trial {done.refused[0]} is already in {done.store}; the file can go")
        else:
            typer.echo(f"{done.path}: stored trial {done.imported[0]} in {done.store}; the file can go")
    elif done.kind == "store":
        typer.echo(f"imported {len(done.imported)} trials from {done.path} into {done.store}")
        if done.refused:
            shown = ", ".join(done.refused[:5]) + (" ..." if len(done.refused) > 5 else "")
            typer.echo(f"refused {len(done.refused)} trials already in {done.store}: {shown}", err=True)
    else:
        line = f"{done.path}: imported {len(done.imported)} trials into {done.store}"
        typer.echo(line + (f" ({len(done.refused)} already there)" if done.refused else ""))
        for skipped in done.skipped:
            typer.echo(f"not imported: {skipped}", err=True)
