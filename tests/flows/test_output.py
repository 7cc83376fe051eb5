"""The output folder and the results writer (flows/output.py, flows/results.py, flows/retry.py):
one run per folder, an existing results.jsonl replaced only when asked, a killed run's rows
resumed, a retry that also runs inputs without a row, and never a half line (a write that fails
at the operating system's edge, ENOSPC, is injected into `os.write`). Fast: no database."""
from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from docassay.flows import results as results_mod
from docassay.flows.output import (
    OutputBusy,
    OutputExists,
    OutputFolder,
    partial_path,
    preflight,
    read_complete_rows,
    run_path,
)
from docassay.flows.results import ResultsWriteError, ResultsWriter, Row
from docassay.flows.retry import plan_retry


def _row(source: str, status: str = "passed", **kw) -> Row:
    return Row(source=source, sha256="ab" * 32, status=status, record={"n": source}, **kw)


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_failed_write_leaves_no_half_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    w = ResultsWriter(tmp_path / "r.jsonl")
    w.write(_row("a"))
    real_write = os.write

    def half_then_full(fd: int, data) -> int:       # the disk fills up in the middle of the line
        if fd == w._fd:
            real_write(fd, bytes(data[: len(data) // 2]))
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)
    monkeypatch.setattr(results_mod.os, "write", half_then_full)
    with pytest.raises(ResultsWriteError, match="No space left on device"):
        w.write(_row("b", status="repaired", repairs=[{"field": "x"}]))
    monkeypatch.undo()
    w.write(_row("c"))                                # space again: the file goes on after line 1
    w.close()
    assert [r["source"] for r in _lines(tmp_path / "r.jsonl")] == ["a", "c"]


def test_a_second_run_on_one_folder_is_refused(tmp_path: Path) -> None:
    with OutputFolder(tmp_path / "out") as first:
        first.start(["a"], [])
        with pytest.raises(OutputBusy, match=f"pid {os.getpid()}"):
            OutputFolder(tmp_path / "out").open()
        with pytest.raises(OutputBusy):
            preflight(tmp_path / "out")
        first.writer.write(_row("a"))
        first.commit()
    with OutputFolder(tmp_path / "out", overwrite=True) as again:   # the lock went with the first run
        again.start([], [])
        again.commit()


def test_an_existing_results_file_is_replaced_only_when_asked(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with OutputFolder(out) as f:
        f.start(["a", "b"], [])
        f.writer.write(_row("a"))
        f.writer.write(_row("b"))
        f.commit()
    with pytest.raises(OutputExists, match=r"results.jsonl exists \(2 rows\); pass --overwrite"):
        preflight(out)
    with pytest.raises(OutputExists):
        OutputFolder(out).open()
    assert len(_lines(out / "results.jsonl")) == 2, "a refused run leaves the file alone"
    preflight(out, replaces=out / "results.jsonl")   # an in-place --retry-from may replace it
    with OutputFolder(out, overwrite=True) as f:
        f.start(["c"], [])
        assert len(_lines(out / "results.jsonl")) == 2, "replaced only when the new run commits"
        f.writer.write(_row("c"))
        f.commit()
    assert [r["source"] for r in _lines(out / "results.jsonl")] == ["c"]


def test_a_killed_run_is_resumed_with_its_rows_as_they_were(tmp_path: Path) -> None:
    out = tmp_path / "out"
    killed = OutputFolder(out).open()
    killed.start(["a", "b", "c"], [])
    killed.writer.write(_row("a", status="repaired", repairs=[{"field": "gross_total", "why": "fixer"}]))
    with open(partial_path(out / "results.jsonl"), "a") as f:
        f.write('{"source": "b", "sta')                # cut short mid-line
    killed.close()                                     # as the kernel does for a killed process
    assert not (out / "results.jsonl").exists()
    with OutputFolder(out) as f:
        todo, written = f.start(["a", "b", "c"], [])
        assert todo == ["b", "c"] and [r.source for r in written] == ["a"]
        for s in todo:
            f.writer.write(_row(s))
        f.commit()
    rows = _lines(out / "results.jsonl")
    assert [r["source"] for r in rows] == ["a", "b", "c"]
    assert rows[0]["status"] == "repaired" and rows[0]["repairs"] == [{"field": "gross_total", "why": "fixer"}]
    assert not partial_path(out / "results.jsonl").exists() and not run_path(out / "results.jsonl").exists()


def test_retry_after_a_crash_runs_the_documents_that_never_got_a_row(tmp_path: Path) -> None:
    out = tmp_path / "out"
    killed = OutputFolder(out).open()
    killed.start([f"d{i}" for i in range(6)], [])
    killed.writer.write(_row("d0"))
    killed.writer.write(_row("d1", status="quota_exceeded"))
    killed.close()
    plan = plan_retry(out / "results.jsonl")           # results.jsonl itself was never written
    assert plan.sources == ["d1", "d2", "d3", "d4", "d5"] and [r.source for r in plan.kept] == ["d0"]
    assert plan.missing == 4


def test_a_killed_in_place_retry_loses_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with OutputFolder(out) as f:
        f.start([f"d{i}" for i in range(4)], [])
        for i in range(4):
            f.writer.write(_row(f"d{i}", status="error" if i else "passed"))
        f.commit()
    plan = plan_retry(out / "results.jsonl")
    killed = OutputFolder(out, replaces=out / "results.jsonl", resume=False).open()
    killed.start(plan.sources, plan.kept)
    killed.writer.write(_row("d1", status="repaired"))
    killed.close()
    assert len(_lines(out / "results.jsonl")) == 4, "the file being retried is never cut"
    again = plan_retry(out / "results.jsonl")
    assert again.sources == ["d2", "d3"] and sorted(r.source for r in again.kept) == ["d0", "d1"]


def test_partial_lines_are_not_rows(tmp_path: Path) -> None:
    p = tmp_path / "r.jsonl"
    p.write_text(json.dumps(_row("a").to_json()) + "\n" + '{"source": "b"')
    assert [r.source for r in read_complete_rows(p)] == ["a"]


def test_the_cli_refuses_an_existing_results_file_before_it_starts(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture) -> None:
    from docassay.flows.cli import main
    schema = str(Path(__file__).resolve().parents[2] / "examples/invoices/schema.json")
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.jsonl").write_text(json.dumps(_row("a").to_json()) + "\n")
    (tmp_path / "doc.txt").write_text("Invoice 1")
    rc = main(["extract", str(tmp_path / "doc.txt"), "--schema", schema, "--out", str(out), "--generator", "baseline",
               "--home", str(tmp_path / "home"), "--db", "host=/nonexistent dbname=x"])
    assert rc == 2
    assert "results.jsonl exists (1 rows); pass --overwrite to replace it" in capsys.readouterr().err
    assert len(_lines(out / "results.jsonl")) == 1
