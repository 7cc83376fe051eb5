"""The output folder of `docassay extract --out DIR`: no row is ever lost, duplicated or half written.

    DIR/results.jsonl            the finished batch: one row per input, replaced by one rename
    DIR/.results.jsonl.lock      flock held for the whole run (a second run on DIR is refused)
    DIR/.results.jsonl.partial   rows of the run in progress, each line fsynced as it lands
    DIR/.results.jsonl.run       the run's input list, written (atomically) before any document

A run (`OutputFolder.open`):
  1. takes the lock, or raises OutputBusy naming the process that holds it;
  2. refuses an existing results.jsonl (OutputExists) unless `overwrite`, or unless it is the
     `--retry-from` file the run replaces;
  3. finds what a killed run left (a partial, its input list) and `resume`s it: the killed run's
     complete rows are kept as they were (status, repairs and all) and their documents are not
     processed again; a half line at the end is dropped. `overwrite` starts afresh instead;
  4. `commit()` moves the partial onto results.jsonl (fsync, rename, fsync of the folder) once
     every input has its row. A run that ends without one (killed, disk full, database gone)
     leaves results.jsonl as it was, and its partial for the next run to resume.

Hidden names keep the partial and the lock out of `collect_sources` when DIR is inside an input.
"""
from __future__ import annotations

import errno
import fcntl
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from docassay.flows.results import ResultsWriter, Row, rows_from_text
from docassay.infra.errors import ConfigError

__all__ = ["RESULTS", "preflight", "OutputBusy", "OutputExists", "OutputFolder", "Leftover", "read_complete_rows",
           "leftover_of", "is_being_written", "partial_path", "run_path", "lock_path"]

RESULTS = "results.jsonl"


class OutputBusy(ConfigError):
    """Another docassay run is writing this output folder."""
    kind = "output_busy"


class OutputExists(ConfigError):
    """The output folder already holds a results.jsonl that this run was not asked to replace."""
    kind = "output_exists"


def partial_path(results: Path) -> Path:
    return results.parent / f".{results.name}.partial"


def run_path(results: Path) -> Path:
    return results.parent / f".{results.name}.run"


def lock_path(results: Path) -> Path:
    return results.parent / f".{results.name}.lock"


def read_complete_rows(path: Path) -> list[Row]:
    """The whole lines of a results file as rows; a last line without its newline (a write cut
    short) is ignored. ConfigError when a whole line is not a results row."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}", path=str(path)) from exc
    end = data.rfind(b"\n") + 1
    return rows_from_text(data[:end].decode("utf-8", errors="replace"), path)


@dataclass
class Leftover:
    """What a run that never committed left in a folder: its rows and, when known, its inputs."""
    rows: list[Row] = field(default_factory=list)
    sources: list[str] | None = None

    @property
    def by_source(self) -> dict[str, Row]:
        return {r.source: r for r in self.rows}        # a later row of one source wins


def is_being_written(results: Path) -> bool:
    """Whether a live run holds the lock of the folder of `results`."""
    path = lock_path(results)
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except OSError:
        return True
    finally:
        os.close(fd)


def leftover_of(results: Path) -> Leftover | None:
    """The partial rows and input list a killed run left beside `results`, or None."""
    part, run = partial_path(results), run_path(results)
    if not part.exists() and not run.exists():
        return None
    sources = None
    try:
        sources = [str(s) for s in json.loads(run.read_text("utf-8"))["sources"]]
    except (OSError, ValueError, KeyError, TypeError):
        sources = None                                 # the partial alone still counts
    return Leftover(read_complete_rows(part), sources)


def preflight(folder: Path, *, overwrite: bool = False, replaces: Path | None = None) -> None:
    """The refusals of `OutputFolder.open` (busy, existing results), checked without taking the
    lock, so that a command can refuse before it starts anything; `open` checks again under it."""
    results = Path(folder) / RESULTS
    if is_being_written(results):
        raise OutputBusy(f"another docassay run is writing {results}; wait for it to finish or choose another "
                         "--out", path=str(results))
    if results.exists() and not overwrite and not _same_file(replaces, results):
        raise OutputExists(_exists_message(results), path=str(results))


def _same_file(a: Path | None, b: Path) -> bool:
    return a is not None and Path(a).resolve() == b.resolve()


def _exists_message(results: Path) -> str:
    n = sum(1 for _ in results.open("rb"))
    return (f"{results} exists ({n} rows); pass --overwrite to replace it, --retry-from {results} to rerun "
            "the documents that did not end well, or choose another --out")


class OutputFolder:
    """One run's hold on an output folder (see the module docstring)."""

    def __init__(self, folder: Path, *, overwrite: bool = False, replaces: Path | None = None,
                 resume: bool = True) -> None:
        self.folder = Path(folder)
        self.results = self.folder / RESULTS
        self.partial = partial_path(self.results)
        self._overwrite = overwrite
        self._replaces = replaces
        self._resume = resume and not overwrite
        self.resumable: dict[str, Row] = {}
        self._lock_fd: int | None = None
        self.writer: ResultsWriter | None = None
        self.resumed: list[Row] = []

    # -- 1-3: lock, refuse, find a killed run's rows -----------------------------------------------

    def open(self) -> "OutputFolder":
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"cannot create the output folder {self.folder}: {exc.strerror or exc}",
                              path=str(self.folder)) from exc
        self._lock()
        try:
            if self.results.exists() and not self._overwrite and not _same_file(self._replaces, self.results):
                raise OutputExists(_exists_message(self.results), path=str(self.results))
            left = leftover_of(self.results) if self._resume else None
            self.resumable = left.by_source if left else {}
        except BaseException:
            self.close()
            raise
        return self


    def _lock(self) -> None:
        path = lock_path(self.results)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                raise OutputBusy(f"another docassay run (pid {holder}) is writing {self.results}; wait for it "
                                 "to finish or choose another --out", path=str(self.results), pid=holder) from exc
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self._lock_fd = fd

    # -- 3-4: write, resume, commit ------------------------------------------------------------------

    def start(self, sources: list[str], kept: list[Row]) -> tuple[list[str], list[Row]]:
        """Record the run's inputs, open a fresh partial holding `kept` rows and the rows a killed run
        left for these inputs; returns (sources still to process, every row already written)."""
        resumed = [self.resumable[s] for s in sources if s in self.resumable]
        done = {r.source for r in resumed}
        todo = [s for s in sources if s not in done]
        all_sources = list(dict.fromkeys([r.source for r in kept] + sources))
        _write_atomic(run_path(self.results), json.dumps({"pid": os.getpid(), "sources": all_sources}))
        fresh = self.partial.with_name(self.partial.name + ".new")
        w = ResultsWriter(fresh)
        try:
            for row in kept + resumed:
                w.write(row)
        finally:
            w.close()
        os.replace(fresh, self.partial)                # the killed run's partial is replaced whole
        self.writer = ResultsWriter(self.partial, append=True)
        self.resumed = resumed
        return todo, kept + resumed

    def rewrite(self, rows: list[Row]) -> None:
        """Replace the partial's rows by `rows` (atomic: a fresh file moved onto it), then go on
        appending to it."""
        if self.writer is not None:
            self.writer.close()
        fresh = self.partial.with_name(self.partial.name + ".new")
        try:
            w = ResultsWriter(fresh)
            try:
                for row in rows:
                    w.write(row)
            finally:
                w.close()
            os.replace(fresh, self.partial)
        finally:
            self.writer = ResultsWriter(self.partial, append=True)      # the old partial, if that failed

    def commit(self) -> Path:
        """Move the finished partial onto results.jsonl (atomic, durable)."""
        if self.writer is not None:
            self.writer.close()
            self.writer = None
        os.replace(self.partial, self.results)
        _fsync_dir(self.folder)
        try:
            run_path(self.results).unlink()
        except FileNotFoundError:
            pass
        return self.results

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)                    # releases the flock
            self._lock_fd = None

    def __enter__(self) -> "OutputFolder":
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
