"""Trials in and out of the store: written as the MNN suite's result files or one CSV / Parquet table
(:func:`export_trials`); brought in from another store, from the files a run kept when its store failed, or from
the MNN suite's result folders (:func:`import_files`, :func:`import_mnn_suite`).  Every input is read and checked
before anything is written or stored."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from edgebench.errors import UsageError

if TYPE_CHECKING:
    from edgebench.records.result import TrialResult
    from edgebench.store import Store

#: What ``read_store`` says when the store to export or compare does not exist.
NO_STORE_YET = "run `edgebench run` or `edgebench sweep` first"
_SQLITE_HEADER = b"SQLite format 3\x00"


@dataclass(frozen=True)
class ExportRequest:
    """What to export (every trial, a sweep's, a host's), in which form (``mnn-suite``, ``csv``, ``parquet``; a table
    of one row per trial or per timed step), and where (``out``: a folder for the suite's files, a file for a table;
    a CSV without ``out`` comes back as text)."""

    format: Literal["mnn-suite", "csv", "parquet"] = "csv"
    device: str | None = None
    out: Path | None = None
    sweeps: Sequence[str] = ()
    host: str | None = None
    table: Literal["trials", "steps"] = "trials"
    store: Path | None = None


@dataclass(frozen=True)
class Exported:
    """What was written: the suite's files, or a table's size (and its text when it went to no file)."""

    files: list[Path] = field(default_factory=list)
    rows: int = 0
    columns: int = 0
    text: str | None = None


@dataclass(frozen=True)
class ImportedFile:
    """One file brought in: a store's trials (imported and refused ids), a kept trial (stored, or already there),
    or a suite folder's trials (stored, already there, and what it could not read)."""

    path: Path
    kind: Literal["store", "kept", "mnn-suite"]
    store: Path
    imported: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()


def export_trials(request: ExportRequest) -> Exported:
    """Write the selected stored trials in the requested form (the suite's files, or a CSV / Parquet table)."""
    from edgebench.host.files import write_text_replacing
    from edgebench.workflows.common import read_store

    _check_export(request)
    from edgebench.measure.repeats import grouped

    with read_store(request.store, NO_STORE_YET) as db:
        results = grouped(_select(db, list(request.sweeps), request.host))  # a configuration's repeats together
        if request.format == "mnn-suite":
            from edgebench.formats.mnn_suite.export import write_mnn_suite

            assert request.out is not None
            device = request.device or _target_device_name(results)
            return Exported(files=write_mnn_suite(results, request.out, device, db.series))
        from edgebench.report.tables import STEP_COLUMNS, columns_of, step_rows, to_csv, trial_row, write_parquet

        if request.table == "steps":
            rows, columns = step_rows(results, db.series), list(STEP_COLUMNS)
        else:
            rows = [trial_row(r) for r in results]
            columns = columns_of(rows)
    if request.format == "parquet":
        assert request.out is not None
        write_parquet(rows, columns, request.out)
        return Exported(rows=len(rows), columns=len(columns))
    text = to_csv(rows, columns)
    if request.out is None:
        return Exported(rows=len(rows), columns=len(columns), text=text)
    write_text_replacing(request.out, text)
    return Exported(rows=len(rows), columns=len(columns))


def _check_export(r: ExportRequest) -> None:
    from edgebench.report.outputs import check_output_file, check_output_folder

    if r.format == "mnn-suite":
        if r.out is None:  # a dozen files and folders: never dropped silently into wherever the shell stands
            raise UsageError("--out", "give the folder for the suite's files, e.g. --out mnn-results")
        check_output_folder("--out", r.out)
    elif r.out is not None:
        check_output_file("--out", r.out, f"trials.{r.format}")
    if r.format == "parquet":
        if r.out is None:
            raise UsageError("--out", "parquet is binary: give a file, e.g. --out trials.parquet")
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise UsageError("--format", "parquet needs pyarrow: pip install 'edgebench[parquet]'") from None


def _select(db: Store, sweeps: list[str], host: str | None) -> list[TrialResult]:
    if not sweeps:
        results = db.query(hostname=host)
    else:
        results = []
        for sweep_id in sweeps:
            if not db.sweep_exists(sweep_id):
                known = ", ".join(db.sweep_ids()) or "none yet"
                raise UsageError("--sweep", f"no sweep {sweep_id!r} in {db.path} (sweeps: {known})")
            results.extend(db.query(sweep_id=sweep_id, hostname=host))
    if not results:
        raise UsageError("--host" if host else "--store", f"no trials to export from {db.path}")
    return results


def _target_device_name(results: list[Any]) -> str:
    """The suite's device name when none is given: the ``device_name`` of the target the trials ran on (the
    configuration file's ``targets:``), when they all share one."""
    names = {r.device.device_name for r in results}
    if len(names) == 1 and None not in names:
        return str(names.pop()).replace(" ", "_")
    raise UsageError("--device", "name the device for the suite's folder and file names, e.g. --device MEIZU")


def import_files(
    files: Sequence[Path], store: Path | None = None, *, on_file: Callable[[ImportedFile], None] = lambda f: None
) -> list[ImportedFile]:
    """Copy other stores' trials with their series into ``store`` (ids already there refused), and store the
    trials runs kept in ``edgebench-unsaved-*.json`` files.  Every file is read first, and all of them land in one
    transaction or none does (a bad series blob raised after two trials were imported); a store this call created is
    not left behind empty when it is refused.  ``on_file`` hears each once they are stored."""
    from edgebench.store.rescue import load_unsaved
    from edgebench.store.sqlite import TrialIdTaken, created_or_removed
    from edgebench.store.trials import save_finished

    for path in files:
        if not path.is_file():
            raise UsageError("FILE", f"{path} is not a file; give a .sqlite store or an edgebench-unsaved-*.json file")
    stores = [path for path in files if _is_sqlite(path)]
    kept = [(path, load_unsaved(path)) for path in files if path not in stores]
    done = []
    with created_or_removed(store) as db, db.batch():
        for other in stores:
            done.append(_import_store(db, other))
        for path, finished in kept:
            try:
                save_finished(db, finished)
                done.append(ImportedFile(path, "kept", db.path, imported=(finished.trial_id,)))
            except TrialIdTaken:
                done.append(ImportedFile(path, "kept", db.path, refused=(finished.trial_id,)))
    for file in done:
        on_file(file)
    return done


def _is_sqlite(path: Path) -> bool:
    with path.open("rb") as f:
        return f.read(len(_SQLITE_HEADER)) == _SQLITE_HEADER


def _import_store(db: Store, other: Path) -> ImportedFile:
    from edgebench.store.importing import import_store

    if other.resolve() == db.path.resolve():
        raise UsageError("FILE", f"{other} is this store; give another one")
    try:
        summary = import_store(db, other)
    except ValueError as exc:
        raise UsageError("FILE", str(exc)) from None
    return ImportedFile(other, "store", db.path, summary.imported, summary.refused)


def import_mnn_suite(
    folders: Sequence[Path],
    device: str | None,
    store: Path | None = None,
    *,
    on_file: Callable[[ImportedFile], None] = lambda f: None,
) -> list[ImportedFile]:
    """Read the MNN suite's result folders (measured on ``device``) as imported trials: every folder first (a bad
    one stores nothing), then each trial, all in one transaction; ids already here are reported, not stored again."""
    from edgebench.formats.mnn_suite.importing import read_folder
    from edgebench.store.sqlite import TrialIdTaken, created_or_removed

    if not device or not device.strip():
        raise UsageError("--device", "name the phone the suite measured on, e.g. --device 'Meizu 16T'")
    read = [(folder, read_folder(folder, device.strip())) for folder in folders]
    done = []
    with created_or_removed(store) as db, db.batch():
        for folder, imported in read:
            stored, already = [], []
            for result, series in imported.trials:
                try:
                    db.save(result, series)
                    stored.append(result.trial_id)
                except TrialIdTaken:
                    already.append(result.trial_id)
            done.append(ImportedFile(folder, "mnn-suite", db.path, tuple(stored), tuple(already),
                                     tuple(imported.skipped)))  # fmt: skip
    for file in done:
        on_file(file)
    return done
