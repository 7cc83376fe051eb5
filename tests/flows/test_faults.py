"""Fault injection: the real `docassay extract` in subprocesses, killed, starved and raced, and what
it must not lose.

    killed with SIGKILL mid-batch, then run again          no row lost, none duplicated or changed
    a killed in-place --retry-from, retried again          every input ends with exactly one row
    two runs on one --out / on one --home at once          one refused / no format learned twice
    the embedded PostgreSQL killed mid-batch               reconnect, every document done, no traceback
    the disk full under --out (a tiny tmpfs)               no half line; a rerun finishes the batch
    killed during the first initdb                         the next start repairs it
    no Prefect process outlives a killed run; a command stops the embedded server it started

Each scenario counts documents lost, duplicated and corrupted, and the peak memory of the command;
with DOCASSAY_FAULT_FIGURES=PATH they are written there as JSON lines (BENCHMARKS.md). The CLI runs
take tens of seconds each (Prefect, PostgreSQL, 2 cores): they are marked slow. A retry after a
crash that runs the inputs without a row is tested without the CLI, in test_output.py.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import psycopg
import pytest
from budget_support import write_invoices

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = str(ROOT / "examples/invoices/schema.json")
RULES = str(ROOT / "examples/invoices/rules")
MARK = "DOCASSAY_FAULT_TEST_MARK"
N_FORMATS, N_DOCS = 3, 2
CLI_TIMEOUT_S = 420


# -- running the CLI -----------------------------------------------------------------------------

@dataclass
class Run:
    proc: subprocess.Popen
    mark: str
    log: Path
    rc: int | None = None
    peak_mb: float | None = None

    @property
    def err(self) -> str:
        return self.log.read_text(errors="replace")

    def wait(self, timeout: float = CLI_TIMEOUT_S) -> int:
        """Wait for the command; its peak resident memory from the kernel's accounting (wait4)."""
        deadline = time.monotonic() + timeout
        while True:
            pid, status, usage = os.wait4(self.proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                self.kill()
                raise AssertionError(f"docassay did not finish in {timeout} s:\n{self.err[-3000:]}")
            time.sleep(0.1)
        self.proc.returncode = self.rc = os.waitstatus_to_exitcode(status)
        self.peak_mb = usage.ru_maxrss / 1024
        return self.rc

    def kill(self) -> None:
        """SIGKILL to the command alone (`kill -9 PID`, as the OOM killer does): what it started is
        left for docassay's own watchdog to end."""
        try:
            os.kill(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.wait()


def start_cli(tmp: Path, *argv: str, env: dict[str, str] | None = None) -> Run:
    mark = uuid.uuid4().hex
    log = tmp / f"cli-{mark[:8]}.log"
    full_env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests/flows")]),
                "PREFECT_HOME": str(tmp / "prefect"), MARK: mark, **(env or {})}
    proc = subprocess.Popen([sys.executable, "-m", "docassay.flows.cli", *argv], cwd=ROOT, env=full_env,
                            stdout=subprocess.DEVNULL, stderr=open(log, "w"), start_new_session=True)
    return Run(proc, mark, log)


def extract_args(docs: Path, out: Path, store: list[str], *extra: str) -> list[str]:
    return ["extract", str(docs), "--schema", SCHEMA, "--rules", RULES, "--out", str(out), "--quiet",
            "--generator", "baseline", *store, *extra]


def wait_until(cond: Callable[[], bool], timeout: float, what: str, run: Run | None = None) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if run is not None and run.proc.poll() is not None:
            raise AssertionError(f"docassay ended before {what}:\n{run.err[-3000:]}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def partial_rows(out: Path) -> int:
    """Rows the running batch has written (to its partial file; results.jsonl itself, in versions
    that wrote it in place)."""
    n = 0
    for name in (".results.jsonl.partial", "results.jsonl"):
        try:
            n = max(n, (out / name).read_bytes().count(b"\n"))
        except FileNotFoundError:
            pass
    return n


def written_rows(out: Path, sources: list[Path]) -> "Tally":
    part = out / ".results.jsonl.partial"
    return tally(part if part.exists() else out / "results.jsonl", sources)


def marked_processes(mark: str) -> list[tuple[int, str]]:
    """Live processes that inherited the test's mark (the command and all it started), less the
    embedded PostgreSQL, which outlives commands by design."""
    found = []
    needle = f"{MARK}={mark}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                comm = (entry / "comm").read_text().strip()
                if comm not in ("postgres", "pg_ctl", "initdb"):
                    found.append((int(entry.name), comm))
        except OSError:
            continue
    return found


# -- counting ------------------------------------------------------------------------------------

@dataclass
class Tally:
    lost: int
    duplicated: int
    corrupted: int
    rows: dict[str, dict]


def tally(results: Path, sources: list[Path]) -> Tally:
    """Documents with no row (lost), more than one row (duplicated), lines that are no JSON row."""
    rows: dict[str, dict] = {}
    dup = corrupt = 0
    lines = results.read_bytes().split(b"\n") if results.exists() else []
    if lines and lines[-1] == b"":
        lines.pop()
    for line in lines:
        try:
            r = json.loads(line)
            src = r["source"]
        except (ValueError, KeyError, TypeError):
            corrupt += 1
            continue
        dup += src in rows
        rows[src] = r
    return Tally(sum(str(s) not in rows for s in sources), dup, corrupt, rows)


@pytest.fixture(scope="module")
def figures() -> Iterator[Callable[..., None]]:
    path = os.environ.get("DOCASSAY_FAULT_FIGURES")
    out: list[dict] = []
    yield lambda **kw: out.append(kw)
    if path:
        with open(path, "a") as f:
            for d in out:
                f.write(json.dumps(d) + "\n")


@pytest.fixture(scope="module")
def docs() -> Iterator[tuple[Path, list[Path]]]:
    d = Path(tempfile.mkdtemp(prefix="docassay-faults-docs-"))
    paths = write_invoices(d, n_formats=N_FORMATS, n_docs=N_DOCS, seed=31)
    yield d, paths
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def tmp(tmp_path: Path) -> Path:
    return tmp_path


# -- the scenarios -------------------------------------------------------------------------------

@pytest.mark.slow
def test_killed_mid_batch_then_rerun_loses_duplicates_and_changes_nothing(
        tmp: Path, docs: tuple[Path, list[Path]], pg_fresh_dsn: str, figures) -> None:
    folder, sources = docs
    out, store = tmp / "out", ["--home", str(tmp / "home"), "--db", pg_fresh_dsn]
    run = start_cli(tmp, *extract_args(folder, out, store))
    wait_until(lambda: partial_rows(out) >= 3, CLI_TIMEOUT_S, "three rows", run)
    run.kill()
    before = written_rows(out, sources)
    # No Prefect server (or anything else the command started) outlives it.
    wait_until(lambda: not marked_processes(run.mark), 30, "the killed command's processes to go")

    again = start_cli(tmp, *extract_args(folder, out, store))
    assert again.wait() == 0, again.err
    t = tally(out / "results.jsonl", sources)
    assert (t.lost, t.duplicated, t.corrupted) == (0, 0, 0)
    for src, row in before.rows.items():
        assert t.rows[src] == row, f"{src}: the killed run's row came back changed"
    assert any(r["status"] in ("passed", "repaired") and r.get("record") for r in before.rows.values()), \
        "the rows kept include an accepted record (its status, record and any repairs survive the rerun)"
    wait_until(lambda: not marked_processes(again.mark), 30, "the finished command's processes to go")
    figures(scenario="kill -9 mid-batch, plain rerun", documents=len(sources), lost=t.lost,
            duplicated=t.duplicated, corrupted=t.corrupted, rows_kept_from_killed_run=len(before.rows),
            peak_mb=round(again.peak_mb, 1))


def _all_error_results(out: Path, sources: list[Path]) -> None:
    """A results.jsonl in which every document ended `error`: a retry processes all of them."""
    out.mkdir(parents=True)
    with open(out / "results.jsonl", "w") as f:
        for s in sources:
            f.write(json.dumps({"source": str(s), "sha256": None, "status": "error",
                                "error": {"kind": "database", "message": "stand-in earlier failure"}}) + "\n")


@pytest.mark.slow
def test_a_killed_in_place_retry_loses_nothing(
        tmp: Path, docs: tuple[Path, list[Path]], pg_fresh_dsn: str, figures) -> None:
    folder, sources = docs
    out, store = tmp / "out", ["--home", str(tmp / "home"), "--db", pg_fresh_dsn]
    _all_error_results(out, sources)
    original = (out / "results.jsonl").read_bytes()
    retry = ["extract", "--retry-from", str(out / "results.jsonl"), "--schema", SCHEMA, "--rules", RULES,
             "--out", str(out), "--quiet", "--generator", "baseline", *store]
    run = start_cli(tmp, *retry)
    wait_until(lambda: partial_rows(out) >= 2, CLI_TIMEOUT_S, "two rows", run)
    run.kill()
    assert (out / "results.jsonl").read_bytes() == original, "the file being retried is never cut"

    again = start_cli(tmp, *retry)                     # retry once more: killed retry's rows and the rest
    assert again.wait() == 0, again.err
    t = tally(out / "results.jsonl", sources)
    assert (t.lost, t.duplicated, t.corrupted) == (0, 0, 0)
    assert all(r["status"] != "error" for r in t.rows.values())

    figures(scenario="kill -9 during an in-place --retry-from, retry again", documents=len(sources),
            lost=t.lost, duplicated=t.duplicated, corrupted=t.corrupted, peak_mb=round(again.peak_mb, 1))


@pytest.mark.slow
def test_two_runs_at_once_on_one_out_and_on_one_home(tmp: Path, docs: tuple[Path, list[Path]],
                                                     pg_fresh_dsn: str, figures) -> None:
    folder, sources = docs
    store = ["--home", str(tmp / "home"), "--db", pg_fresh_dsn]
    # One --out: the second run is refused at once; the first writes every row once.
    out = tmp / "same"
    a = start_cli(tmp, *extract_args(folder, out, store))
    wait_until(lambda: (out / ".results.jsonl.lock").exists() or partial_rows(out) >= 1, CLI_TIMEOUT_S,
               "the first run to start writing", a)
    b = start_cli(tmp, *extract_args(folder, out, store))
    assert b.wait() == 2 and "another docassay run" in b.err and "is writing" in b.err, b.err
    assert a.wait() == 0, a.err
    t = tally(out / "results.jsonl", sources)
    assert (t.lost, t.duplicated, t.corrupted) == (0, 0, 0)
    figures(scenario="two runs at once, one --out (second refused)", documents=len(sources), lost=t.lost,
            duplicated=t.duplicated, corrupted=t.corrupted, peak_mb=round(a.peak_mb, 1))

    # One --home (and database), two outputs, started together on a fresh library: no layout is
    # learned twice and every format has a document.
    with psycopg.connect(pg_fresh_dsn, autocommit=True) as c:
        for table in ("formats", "format_versions", "documents"):
            c.execute(f"DELETE FROM {table}")
    shutil.rmtree(tmp / "home", ignore_errors=True)
    runs = [start_cli(tmp, *extract_args(folder, tmp / f"out{i}", store)) for i in range(2)]
    for r in runs:
        assert r.wait() == 0, r.err
    tallies = [tally(tmp / f"out{i}" / "results.jsonl", sources) for i in range(2)]
    by_layout: dict[str, set] = {}
    for tl in tallies:
        assert (tl.lost, tl.duplicated, tl.corrupted) == (0, 0, 0)
        for src, row in tl.rows.items():
            if row["format"]["id"]:
                by_layout.setdefault(Path(src).name.rsplit("-", 1)[0], set()).add(row["format"]["id"])
    with psycopg.connect(pg_fresh_dsn) as c:
        n_formats = c.execute("SELECT count(*) FROM formats").fetchone()[0]
        orphans = c.execute("SELECT count(*) FROM formats f WHERE NOT EXISTS "
                            "(SELECT 1 FROM documents d WHERE d.format_id = f.id)").fetchone()[0]
    duplicates = sum(len(ids) - 1 for ids in by_layout.values())
    assert duplicates == 0, by_layout
    assert orphans == 0 and n_formats == len(by_layout) <= N_FORMATS
    figures(scenario="two runs at once, one --home", documents=2 * len(sources), layouts=len(by_layout),
            formats=n_formats, duplicate_formats=duplicates, formats_without_document=orphans,
            peak_mb=round(max(r.peak_mb for r in runs), 1))


def _postmaster_pid(data_dir: Path) -> int | None:
    try:
        return int((data_dir / "postmaster.pid").read_text().split("\n", 1)[0])
    except (OSError, ValueError):
        return None


@pytest.mark.slow
def test_embedded_database_killed_mid_batch(tmp: Path, docs: tuple[Path, list[Path]], figures) -> None:
    folder, sources = docs
    home = Path(tempfile.mkdtemp(prefix="docassay-faults-home-", dir="/var/tmp"))
    out = tmp / "out"
    try:
        run = start_cli(tmp, *extract_args(folder, out, ["--home", str(home)]))
        wait_until(lambda: partial_rows(out) >= 2, CLI_TIMEOUT_S, "two rows", run)
        pid = _postmaster_pid(home / "pg")
        assert pid is not None
        os.kill(pid, signal.SIGKILL)                   # the database dies under the running batch
        assert run.wait() == 0, run.err
        t = tally(out / "results.jsonl", sources)
        assert (t.lost, t.duplicated, t.corrupted) == (0, 0, 0)
        assert "Traceback" not in run.err, run.err[-3000:]
        down = [s for s, r in t.rows.items() if (r.get("error") or {}).get("kind") == "database"]
        assert not down, f"reconnected and processed, not given up: {down}"
        assert _postmaster_pid(home / "pg") is None or not _alive(_postmaster_pid(home / "pg")), \
            "the server the command started again is stopped when it ends"
        figures(scenario="embedded PostgreSQL killed mid-batch", documents=len(sources), lost=t.lost,
                duplicated=t.duplicated, corrupted=t.corrupted, database_error_rows=len(down),
                peak_mb=round(run.peak_mb, 1))
    finally:
        from docassay.infra.db import embedded
        embedded.stop(home / "pg")
        shutil.rmtree(home, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


@pytest.fixture
def tiny_disk(tmp: Path) -> Iterator[Path]:
    """A 64 KB tmpfs (room for a few rows of about 15 KB); skipped where mounting is not allowed."""
    mnt = tmp / "disk"
    mnt.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)],
                                           capture_output=True).returncode != 0:
        pytest.skip("mounting a tmpfs needs root")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


@pytest.mark.slow
def test_full_disk_leaves_no_half_line_and_a_rerun_finishes(tmp: Path, docs: tuple[Path, list[Path]],
                                                            pg_fresh_dsn: str, tiny_disk: Path, figures) -> None:
    folder, sources = docs
    out, store = tiny_disk / "out", ["--home", str(tmp / "home"), "--db", pg_fresh_dsn]
    run = start_cli(tmp, *extract_args(folder, out, store))
    assert run.wait() == 1, run.err
    assert "docassay: storage:" in run.err and "No space left on device" in run.err, run.err[-2000:]
    assert "Traceback" not in run.err
    partial = (out / ".results.jsonl.partial").read_bytes()
    assert partial.endswith(b"\n"), "no half line"
    full = tally(out / ".results.jsonl.partial", sources)
    assert full.corrupted == 0 and full.duplicated == 0 and 0 < len(full.rows) < len(sources)
    assert not (out / "results.jsonl").exists()

    subprocess.run(["mount", "-o", "remount,size=2m", str(tiny_disk)], check=True)   # space freed
    again = start_cli(tmp, *extract_args(folder, out, store))
    assert again.wait() == 0, again.err
    t = tally(out / "results.jsonl", sources)
    assert (t.lost, t.duplicated, t.corrupted) == (0, 0, 0)
    for src, row in full.rows.items():
        assert t.rows[src] == row
    figures(scenario="disk full under --out, rerun after space freed", documents=len(sources), lost=t.lost,
            duplicated=t.duplicated, corrupted=t.corrupted, rows_written_before_full=len(full.rows),
            peak_mb=round(again.peak_mb, 1))


def test_a_kill_during_the_first_initdb_is_repaired(tmp: Path) -> None:
    home = Path(tempfile.mkdtemp(prefix="docassay-faults-initdb-", dir="/var/tmp"))
    code = "import sys; from pathlib import Path; from infra.db import embedded; embedded.ensure_running(Path(sys.argv[1]))"
    try:
        proc = subprocess.Popen([sys.executable, "-c", code, str(home)], cwd=ROOT, start_new_session=True,
                                env={**os.environ, "PYTHONPATH": str(ROOT)})
        made = lambda: any((d / "PG_VERSION").exists() for d in (home / "pg", home / ".pg.initdb"))  # noqa: E731
        deadline = time.monotonic() + 120
        while not made() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGKILL)            # the starter and its initdb
        proc.wait()
        assert not (home / "pg" / "postmaster.pid").exists(), "killed before the server ran"
        from docassay.infra.db import embedded
        server = embedded.ensure_running(home)
        with psycopg.connect(server.dsn) as c:
            assert c.execute("SELECT 1").fetchone() == (1,)
        assert embedded.stop(server.data_dir)
    finally:
        from docassay.infra.db import embedded
        embedded.stop(home / "pg")
        shutil.rmtree(home, ignore_errors=True)
