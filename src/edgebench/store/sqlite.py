"""The embedded result store: one SQLite file, schema versioned with ``PRAGMA user_version``.

Each trial is a row holding its full JSON record plus the columns people filter on; its raw series (step events,
sensor samples) sit in ``series`` as gzip-compressed blobs so that traces and per-layer views can be rebuilt later.
"""

from __future__ import annotations

import gzip
import json
import os
import socket
import sqlite3
import sys
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edgebench.errors import UsageError, shortened
from edgebench.host.lifetime import process_running
from edgebench.parsing import json_text
from edgebench.records.result import TrialResult
from edgebench.records.result_schema import load_result
from edgebench.records.trial import configuration_key

# Each entry upgrades the schema from version i to i + 1; never edit one that has shipped, append a new one.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE trials (
        trial_id    TEXT PRIMARY KEY,
        created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
        status      TEXT NOT NULL,
        model       TEXT NOT NULL,
        batch_size  INTEGER NOT NULL,
        threads     INTEGER,
        cores       TEXT,
        hostname    TEXT,
        result_json TEXT NOT NULL
    );
    CREATE INDEX trials_model ON trials (model, batch_size);
    CREATE TABLE series (
        trial_id TEXT NOT NULL REFERENCES trials (trial_id) ON DELETE CASCADE,
        name     TEXT NOT NULL,
        encoding TEXT NOT NULL,
        data     BLOB NOT NULL,
        PRIMARY KEY (trial_id, name)
    );
    """,
    # Sweeps: each planned trial has a stable key; a stored trial is linked to its sweep and key in the same
    # transaction that stores it, so `sweep --resume` skips exactly the trials that landed.
    """
    CREATE TABLE sweeps (
        sweep_id    TEXT PRIMARY KEY,
        created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
        planned     INTEGER NOT NULL,
        config_json TEXT NOT NULL
    );
    CREATE TABLE sweep_trials (
        sweep_id  TEXT NOT NULL REFERENCES sweeps (sweep_id) ON DELETE CASCADE,
        trial_key TEXT NOT NULL,
        trial_id  TEXT NOT NULL UNIQUE REFERENCES trials (trial_id) ON DELETE CASCADE,
        position  INTEGER NOT NULL,
        PRIMARY KEY (sweep_id, trial_key, trial_id)
    );
    """,
    # The device's measured GEMM and copy ceilings (edgebench.backends.torch.peak), one row per device key.
    """
    CREATE TABLE device_peaks (
        key         TEXT PRIMARY KEY,
        hostname    TEXT,
        gemm_gflops REAL NOT NULL,
        copy_gbps   REAL NOT NULL,
        measured_at TEXT NOT NULL,
        peak_json   TEXT NOT NULL
    );
    """,
    # Claims: a sweep takes a planned trial here, in one write transaction, before it runs it, so two launchers
    # running the same sweep on one store never both run a key.  A claim lives until its sweep run ends.
    """
    CREATE TABLE sweep_claims (
        sweep_id   TEXT NOT NULL,
        trial_key  TEXT NOT NULL,
        owner      TEXT NOT NULL,
        hostname   TEXT NOT NULL,
        pid        INTEGER NOT NULL,
        claimed_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
        PRIMARY KEY (sweep_id, trial_key)
    );
    """,
    # Repeats: each trial's configuration key (the same for every repeat of a configuration) and its repeat index,
    # so a store groups a configuration's repeats without reading every record.  Rows stored before get their key
    # from their record when the store is upgraded (:func:`_backfill_config_keys`); their repeat index stays NULL.
    """
    ALTER TABLE trials ADD COLUMN config_key TEXT;
    ALTER TABLE trials ADD COLUMN repeat_index INTEGER;
    CREATE INDEX trials_config ON trials (config_key);
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)


def _backfill_config_keys(db: sqlite3.Connection) -> None:
    """Schema 5: the configuration key of every trial stored before, from its record."""
    rows = db.execute("SELECT trial_id, result_json FROM trials WHERE config_key IS NULL").fetchall()
    for trial_id, text in rows:
        try:
            key = configuration_key(load_result(json.loads(text)).trial)
        except (ValueError, TypeError):  # a record this edgebench cannot read keeps no key; it still loads as before
            continue
        db.execute("UPDATE trials SET config_key = ? WHERE trial_id = ?", (key, trial_id))


#: What a migration computes in Python after its SQL, by the schema version it reaches.
BACKFILLS = {5: _backfill_config_keys}


def discard_if_empty(path: Path) -> None:
    """Remove the store at ``path`` (and its WAL files) when it holds no trial: a command that created it and was
    then refused leaves nothing behind."""
    if not path.exists():
        return
    with Store(path) as db:  # a sweep recorded there is another launcher's, about to run: not ours to remove
        empty = not db.trial_ids("") and not db.sweep_ids()
    if empty:
        for leftover in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
            leftover.unlink(missing_ok=True)


@contextmanager
def created_or_removed(path: str | os.PathLike[str] | None) -> Iterator[Store]:
    """The store at ``path`` opened for writing; if this call created its file and the block fails, the file goes
    again (when it still holds nothing): a refused command leaves no empty store behind."""
    target = Path(path) if path else default_store_path()
    existed = target.exists()
    db = Store(target)
    try:
        yield db
    except BaseException:
        db.close()
        if not existed:
            discard_if_empty(target)
        raise
    finally:
        db.close()


def close_or_discard(store: Store) -> None:
    """Close ``store``; if this process created it and it holds nothing (the command was refused before a trial was
    stored: a frequency this device cannot set), remove it: a refused command leaves no empty store behind."""
    store.close()
    if store.created:
        discard_if_empty(store.path)


def default_store_path() -> Path:
    """``$EDGEBENCH_STORE``, else ``$XDG_DATA_HOME/edgebench/edgebench.sqlite`` (``~/.local/share`` by default)."""
    if os.environ.get("EDGEBENCH_STORE"):
        return Path(os.environ["EDGEBENCH_STORE"]).expanduser()
    data_home = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return data_home / "edgebench" / "edgebench.sqlite"


@dataclass(frozen=True)
class Claimant:
    """One sweep run taking planned trials: its process, so that a claim left by a killed run can be taken over."""

    owner: str
    hostname: str
    pid: int

    @classmethod
    def this_process(cls) -> Claimant:
        hostname, pid = socket.gethostname(), os.getpid()
        return cls(f"{hostname}:{pid}:{os.urandom(4).hex()}", hostname, pid)


def _alive(hostname: str, pid: int) -> bool:
    """Whether the process holding a claim may still run it: on another host we cannot tell, so assume so."""
    return hostname != socket.gethostname() or process_running(pid)


class TrialIdTaken(ValueError):
    """A trial with this id is already stored; nothing was written."""


class StoreUnusable(UsageError, RuntimeError):
    """The store cannot be opened, read or written as asked: one line naming ``--store``, the file and the fix.

    Raised when the store is opened (before a trial runs), so no measurement is spent on a store that cannot
    keep it.  A ``RuntimeError`` too, for callers that predate it.
    """

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__("--store", f"{path} {problem}")
        self.path = path


class Store:
    """One SQLite store; ``read_only`` opens an existing file for the commands that only read (export, compare...).

    Every way the file can be unusable (a folder, an unwritable place, read-only, not a database, from a newer
    edgebench) is a :class:`StoreUnusable` here, not a raw ``sqlite3`` error later.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        read_only: bool = False,
        notify: Callable[[str], None] | None = None,
    ) -> None:
        self.path = Path(path) if path else default_store_path()
        self.read_only = read_only
        #: Whether this opening made the file (a command refused before it stored anything removes it again).
        self.created = not self.path.exists()
        self._batches = 0
        #: Where a row that cannot be read is said to be skipped (default: a note on stderr, once per trial).
        self.notify = notify or _note
        self._skipped: set[str] = set()
        self._db = _connect(self.path, read_only)
        try:
            self._db.execute("PRAGMA foreign_keys = ON")
            if not read_only:
                self._db.execute("PRAGMA journal_mode = WAL")
                _check_writable(self._db)
            self._migrate()
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise _unusable(self.path, exc) from None
        except StoreUnusable:
            self._db.close()
            raise

    def _migrate(self) -> None:
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StoreUnusable(
                self.path,
                f"was written by a newer edgebench (schema {version}, this one knows up to {SCHEMA_VERSION}): "
                "upgrade edgebench, or give another --store",
            )
        if version < SCHEMA_VERSION and self.read_only:
            self._migrate_in_memory(version)  # a command that only reads leaves the file as it found it
            return
        self._upgrade(version)

    def _upgrade(self, version: int) -> None:
        """Run every migration after ``version``, each with its backfill in one transaction."""
        for target, script in enumerate(MIGRATIONS[version:], start=version + 1):
            self._db.executescript(f"BEGIN; {script}; PRAGMA user_version = {target};")
            if target in BACKFILLS:  # in the same transaction as its schema change
                BACKFILLS[target](self._db)
            self._db.execute("COMMIT")

    def _migrate_in_memory(self, version: int) -> None:
        """An older store read as the current schema without writing it: its pages are copied into an in-memory
        database of this connection and upgraded there (columns added, keys backfilled), so a reading command sees
        the current schema and the file stays what it was (``trials`` upgraded a schema-3 store in place, unasked).
        A command that writes upgrades the file itself."""
        memory = sqlite3.connect(":memory:")
        self._db.backup(memory)
        self._db.close()
        self._db = memory
        self._db.execute("PRAGMA foreign_keys = ON")
        self._upgrade(version)

    def verify(self) -> None:
        """Check every page of the store (``PRAGMA quick_check``) before a trial is spent on it.

        A damaged file can have an intact header, so opening it proves nothing; a write would fail only after
        the measurement.  This reads the whole file, which costs a fraction of a second for a store of thousands
        of trials, against the minutes of a trial it protects.
        """
        try:
            problems = [row[0] for row in self._db.execute("PRAGMA quick_check")]
        except sqlite3.DatabaseError as exc:
            raise _unusable(self.path, exc) from None
        if problems != ["ok"]:
            raise _unusable(self.path, sqlite3.DatabaseError(problems[0]))

    @property
    def schema_version(self) -> int:
        return self._db.execute("PRAGMA user_version").fetchone()[0]

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        if self._batches:  # inside batch(): its one transaction commits or rolls back everything
            yield self._db
            return
        with self._db:
            yield self._db

    @contextmanager
    def batch(self) -> Iterator[Store]:
        """One transaction around many saves (``import``): all of them land or none does, whatever fails half-way
        (one bad series blob raised after two trials of an import were stored).  Nested, it is the outer one."""
        if self._batches:
            yield self
            return
        self._db.execute("BEGIN IMMEDIATE")
        self._batches += 1
        try:
            yield self
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        else:
            self._db.execute("COMMIT")
        finally:
            self._batches -= 1

    def save(self, result: TrialResult, series: dict[str, str] | None = None) -> None:
        """Insert a trial and its series in one transaction: all of it lands or none.

        A trial id already in the store raises :class:`TrialIdTaken` and writes nothing: a stored trial is
        never overwritten (two launchers sharing a store could otherwise replace each other's results).

        A result that belongs to a sweep (``result.sweep``) is linked to its sweep and key in the same
        transaction, so a sweep killed at any moment has every finished trial linked and no half-linked one.
        """
        try:
            self._insert(result, series)
        except sqlite3.IntegrityError as exc:
            if not str(exc).startswith("UNIQUE constraint failed: trials.trial_id"):
                raise
            raise TrialIdTaken(f"trial id {result.trial_id} is already in {self.path}; nothing was stored") from exc

    def _insert(self, result: TrialResult, series: dict[str, str] | None) -> None:
        with self._tx() as db:
            db.execute(
                "INSERT INTO trials (trial_id, status, model, batch_size, threads, cores, hostname,"
                " result_json, config_key, repeat_index) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    result.trial_id,
                    result.status,
                    result.trial.model,
                    result.trial.batch_size,
                    result.trial.threads,
                    ",".join(map(str, result.trial.cores or [])),
                    result.device.hostname,
                    result.model_dump_json(),
                    configuration_key(result.trial),
                    result.repeat.index if result.repeat is not None else None,
                ),
            )
            for name, text in (series or {}).items():
                db.execute(
                    "INSERT INTO series (trial_id, name, encoding, data) VALUES (?, ?, 'gzip', ?)",
                    (result.trial_id, name, gzip.compress(text.encode(), compresslevel=6)),
                )
            if result.sweep is not None:
                db.execute(
                    "INSERT OR REPLACE INTO sweep_trials (sweep_id, trial_key, trial_id, position) VALUES (?, ?, ?, ?)",
                    (result.sweep.sweep_id, result.sweep.trial_key, result.trial_id, result.sweep.position),
                )

    def get(self, trial_id: str) -> TrialResult:
        """The trial whose id is ``trial_id`` or starts with it; ``KeyError`` if none or ambiguous; a row that cannot
        be read is an :class:`UnreadableTrial` line."""
        rows = self._db.execute(
            "SELECT trial_id, result_json FROM trials WHERE trial_id = ? OR trial_id LIKE ? ESCAPE '\\' "
            "ORDER BY trial_id",
            (trial_id, like_prefix(trial_id)),
        ).fetchall()
        if len(rows) != 1:
            raise KeyError(f"{'no' if not rows else 'more than one'} trial matches {trial_id!r}")
        try:
            return _result(rows[0][1])
        except ValueError as exc:
            raise UnreadableTrial(self.path, rows[0][0], exc) from None

    def series(self, trial_id: str, name: str) -> str | None:
        found = self.get(trial_id).trial_id
        row = self._db.execute("SELECT data FROM series WHERE trial_id = ? AND name = ?", (found, name)).fetchone()
        try:
            return gzip.decompress(row[0]).decode() if row else None
        except _DAMAGED as exc:
            raise UnreadableTrial(self.path, found, ValueError(f"its {name} series: {exc}")) from None

    def save_device_peak(self, peak: dict[str, Any]) -> None:
        """Record (or replace) a device's measured ceilings, keyed by ``peak["key"]``."""
        with self._tx() as db:
            db.execute(
                "INSERT OR REPLACE INTO device_peaks (key, hostname, gemm_gflops, copy_gbps, measured_at, peak_json)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (peak["key"], peak.get("hostname"), peak["gemm_gflops"], peak["copy_gbps"], peak["measured_at"],
                 json.dumps(peak)),
            )  # fmt: skip

    def device_peak(self, key: str) -> dict[str, Any] | None:
        row = self._db.execute("SELECT peak_json FROM device_peaks WHERE key = ?", (key,)).fetchone()
        return json_text(row[0]) if row else None

    def trials(self, model: str | None = None) -> list[TrialResult]:
        sql, args = "SELECT trial_id, result_json FROM trials", ()
        if model:
            sql, args = sql + " WHERE model = ?", (model,)
        return self._results(self._db.execute(sql + " ORDER BY trial_id", args))

    def add_sweep(self, sweep_id: str, planned: int, config_json: str) -> None:
        """Record a sweep (or, on resume, update its plan) before its first trial is stored."""
        with self._tx() as db:
            db.execute(
                "INSERT INTO sweeps (sweep_id, planned, config_json) VALUES (?, ?, ?) ON CONFLICT (sweep_id)"
                " DO UPDATE SET planned = excluded.planned, config_json = excluded.config_json",
                (sweep_id, planned, config_json),
            )

    def grow_sweep(self, sweep_id: str, more: int) -> None:
        """``repeats: auto`` planned ``more`` trials of a sweep than it had."""
        with self._tx() as db:
            db.execute("UPDATE sweeps SET planned = planned + ? WHERE sweep_id = ?", (more, sweep_id))

    def sweep_exists(self, sweep_id: str) -> bool:
        return self._db.execute("SELECT 1 FROM sweeps WHERE sweep_id = ?", (sweep_id,)).fetchone() is not None

    def sweep_ids(self) -> list[str]:
        return [r[0] for r in self._db.execute("SELECT sweep_id FROM sweeps ORDER BY created_at, sweep_id")]

    def sweep_done(self, sweep_id: str) -> dict[str, str]:
        """``{trial key: status}`` of the trials a sweep has stored (the latest status when a key ran twice)."""
        rows = self._db.execute(
            "SELECT s.trial_key, t.status FROM sweep_trials s JOIN trials t USING (trial_id)"
            " WHERE s.sweep_id = ? ORDER BY t.rowid",
            (sweep_id,),
        )
        return {key: status for key, status in rows}

    def claim(self, sweep_id: str, trial_key: str, claimant: Claimant, *, retry_failed: bool = False) -> str | None:
        """Take planned trial ``trial_key`` of ``sweep_id`` for ``claimant``; None when taken, else why not.

        Checked and written under SQLite's write lock (``BEGIN IMMEDIATE``), so of two launchers claiming the same
        key at the same moment exactly one gets it.  A key is not claimable once stored (unless ``retry_failed``
        and its latest result failed) or while another live run holds it; a claim whose process is gone (same
        host, pid no longer running: a sweep killed with SIGKILL) is taken over.
        """
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            taken = self._taken(sweep_id, trial_key, claimant, retry_failed)
            if taken is None:
                db.execute(
                    "INSERT OR REPLACE INTO sweep_claims (sweep_id, trial_key, owner, hostname, pid)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (sweep_id, trial_key, claimant.owner, claimant.hostname, claimant.pid),
                )
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")  # a refusal too ends the transaction: the next claim begins its own
        return taken

    def _taken(self, sweep_id: str, trial_key: str, claimant: Claimant, retry_failed: bool) -> str | None:
        """Why ``trial_key`` cannot be claimed by ``claimant`` now (inside the claim's transaction), or None."""
        db = self._db
        statuses = [
            r[0]
            for r in db.execute(
                "SELECT t.status FROM sweep_trials s JOIN trials t USING (trial_id)"
                " WHERE s.sweep_id = ? AND s.trial_key = ? ORDER BY t.rowid",
                (sweep_id, trial_key),
            )
        ]
        if statuses and (not retry_failed or statuses[-1] == "ok"):
            return f"already stored ({statuses[-1]})"
        held = db.execute(
            "SELECT owner, hostname, pid, claimed_at FROM sweep_claims WHERE sweep_id = ? AND trial_key = ?",
            (sweep_id, trial_key),
        ).fetchone()
        if held is not None and held[0] != claimant.owner and _alive(held[1], held[2]):
            return f"being run by another sweep (pid {held[2]} on {held[1]}, since {held[3]})"
        return None

    def release_claims(self, claimant: Claimant) -> None:
        """Drop every claim of ``claimant`` (its sweep run ended: stored keys stay done, the others are free)."""
        with self._tx() as db:
            db.execute("DELETE FROM sweep_claims WHERE owner = ?", (claimant.owner,))

    def query(self, *, sweep_id: str | None = None, hostname: str | None = None) -> list[TrialResult]:
        """Trials of a sweep and/or a host, in the order they ran."""
        sql = "SELECT t.trial_id, t.result_json FROM trials t"
        where, args = [], []
        if sweep_id is not None:
            sql += " JOIN sweep_trials s USING (trial_id)"
            where.append("s.sweep_id = ?")
            args.append(sweep_id)
        if hostname is not None:
            where.append("t.hostname = ?")
            args.append(hostname)
        if where:
            sql += " WHERE " + " AND ".join(where)
        return self._results(self._db.execute(sql + " ORDER BY t.rowid", args))

    def _results(self, rows: Iterator[tuple[str, str]]) -> list[TrialResult]:
        """The rows' results; one that cannot be read (a future schema, junk) is left out with a note, so that one
        bad row does not take every listing of the store with it."""
        out = []
        for trial_id, text in rows:
            try:
                out.append(_result(text))
            except ValueError as exc:
                if trial_id not in self._skipped:
                    self._skipped.add(trial_id)
                    self.notify(f"skipped trial {shortened(str(trial_id), 40)} of {self.path}: {reason(exc)}")
        return out

    def hostnames(self) -> list[str]:
        return [r[0] for r in self._db.execute("SELECT DISTINCT hostname FROM trials WHERE hostname IS NOT NULL")]

    def trial_ids(self, prefix: str) -> list[str]:
        """Ids equal to or starting with ``prefix``."""
        rows = self._db.execute(
            "SELECT trial_id FROM trials WHERE trial_id = ? OR trial_id LIKE ? ESCAPE '\\' ORDER BY trial_id",
            (prefix, like_prefix(prefix)),
        )
        return [r[0] for r in rows]


def like_prefix(prefix: str) -> str:
    """A LIKE pattern matching what starts with ``prefix``, its ``%`` and ``_`` literal (``_`` matched any one
    character in an id prefix)."""
    return prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


#: What reading a stored record or series can raise when its bytes are not what edgebench wrote.
_DAMAGED = (ValueError, TypeError, KeyError, AttributeError, OSError, EOFError, zlib.error, RecursionError)


def _result(text: Any) -> TrialResult:
    """A row's result, or a ``ValueError`` for any row that is none (junk, a future schema, the wrong type)."""
    try:
        return load_result(json_text(text))
    except _DAMAGED as exc:
        raise ValueError(reason(exc)) from None


def reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return shortened(text, 160)


def _note(text: str) -> None:
    print(f"edgebench: note: {text}", file=sys.stderr)


class UnreadableTrial(UsageError):
    """A trial asked for by id whose stored record (or series) cannot be read: one line naming it."""

    def __init__(self, path: Path, trial_id: str, exc: BaseException) -> None:
        super().__init__("TRIAL", f"trial {shortened(str(trial_id), 40)} in {path} cannot be read ({reason(exc)})")


def _connect(path: Path, read_only: bool) -> sqlite3.Connection:
    """Open ``path``, turning each way the place itself is wrong into one :class:`StoreUnusable` line."""
    if path.is_dir():
        raise StoreUnusable(
            path, f"is a folder, not a store file: give a file, e.g. --store {path / 'edgebench.sqlite'}"
        )
    if path.exists() and not path.is_file():  # a FIFO or a device: opening it would wait forever, or read a disk
        raise StoreUnusable(path, "is not a regular file (a pipe or a device): give a store file")
    if read_only:
        if not path.exists():
            raise StoreUnusable(path, "does not exist: run `edgebench run` or `edgebench sweep` first, or give the "
                                      "--store the trials were recorded in")  # fmt: skip
        try:
            return _connect_read_only(path)
        except sqlite3.Error as exc:
            raise _unusable(path, exc) from None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreUnusable(
            path,
            f"cannot be created: its folder cannot be made ({exc.strerror}); give a --store in a folder you can write",
        ) from None
    try:
        return sqlite3.connect(path, timeout=30)
    except sqlite3.Error as exc:
        raise _unusable(path, exc) from None


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """A reading connection, also to a store on a read-only filesystem (a mounted backup, a read-only share).

    A store in WAL mode needs its ``-shm`` file even to be read, and none can be made there; nobody can be writing
    such a store either, so it is read as immutable (its last writer checkpointed it when it closed).
    """
    uri = path.resolve().as_uri()
    db = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=30)
    try:
        db.execute("PRAGMA user_version").fetchone()
        return db
    except sqlite3.OperationalError:
        db.close()
        if not _on_read_only_filesystem(path):
            raise
    return sqlite3.connect(f"{uri}?immutable=1", uri=True, timeout=30)


def _on_read_only_filesystem(path: Path) -> bool:
    try:
        return bool(os.statvfs(path if path.exists() else path.parent).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _check_writable(db: sqlite3.Connection) -> None:
    """Write the header and roll it back: a read-only file is refused now, not when a result arrives.

    Taking the write lock alone is not enough: SQLite opens a write-protected file read-only without a word and
    only fails at the first page it writes.
    """
    db.execute("BEGIN IMMEDIATE")
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        db.execute(f"PRAGMA user_version = {int(version)}")
    finally:
        db.execute("ROLLBACK")


def _unusable(path: Path, exc: sqlite3.Error) -> StoreUnusable:
    """The one line for an ``sqlite3`` error on the store, with what the user can do about it."""
    text = str(exc)
    if "readonly" in text or "read-only" in text or _on_read_only_filesystem(path):
        return StoreUnusable(path, "is read-only: give a writable --store to record trials (commands that only read, "
                                   "such as export and compare, still read it)")  # fmt: skip
    if "unable to open" in text:
        return StoreUnusable(path, "cannot be opened or created: give a --store in a folder you can write")
    if "not a database" in text:
        return StoreUnusable(path, "is not an edgebench store (not an SQLite database): give another --store")
    if "malformed" in text or "corrupt" in text or type(exc) is sqlite3.DatabaseError:
        return StoreUnusable(
            path,
            f"is damaged ({text}): move it aside and give another --store "
            "(`sqlite3 FILE .recover` rescues what it still holds)",
        )
    return StoreUnusable(path, f"cannot be used: {text}")
