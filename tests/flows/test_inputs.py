"""Untrusted input folders: links are not followed unless asked, pipes never hang a batch or an inbox."""
from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from docassay.flows.batch import collect_sources, ground_truth_sidecar, load_schema, run_batch
from docassay.flows.context import Job, open_context
from docassay.flows.inbox import FolderInbox
from docassay.infra.config import Settings

ROOT = Path(__file__).resolve().parents[2]
SECRET = b"root:$6$not-for-your-eyes:19000:0:99999:7:::\n"
TEXT = b"RECHNUNG\nRechnungsnummer: 4711\nDatum: 01.02.2024\nGesamtbetrag: 119,00 EUR\n"


def _hostile_folder(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "shadow").write_bytes(SECRET)
    (outside / "dir" / "also-secret.txt").write_bytes(SECRET)
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "invoice.txt").write_bytes(TEXT)
    (folder / "shadow.txt").symlink_to(outside / "shadow")
    (folder / "linked-dir").symlink_to(outside / "dir")
    os.mkfifo(folder / "pipe.pdf")
    return folder


def _in_thread(fn: Any, timeout_s: float = 120) -> Any:
    out: list[Any] = []
    t = threading.Thread(target=lambda: out.append(fn()), daemon=True)
    t.start()
    t.join(timeout_s)
    assert not t.is_alive(), "the batch blocked"
    return out[0]


def test_links_and_pipes_in_a_folder_become_rows_and_nothing_behind_them_is_read(tmp_path: Path,
                                                                                  pg_fresh_dsn: str) -> None:
    folder = _hostile_folder(tmp_path)
    sources = collect_sources([str(folder)], skip=ground_truth_sidecar)
    assert sorted(Path(s).name for s in sources) == ["invoice.txt", "linked-dir", "pipe.pdf", "shadow.txt"]
    settings = Settings.load(home=tmp_path / "home", db=pg_fresh_dsn, concurrency=2)
    job = Job(schema=load_schema(ROOT / "examples/invoices/schema.json"), rules=[], settings=settings,
              generator="baseline")
    with open_context(job.settings) as ctx:
        rows = _in_thread(lambda: run_batch(sources, job, ctx))
    by_name = {Path(r.source).name: r for r in rows}
    for name, what in [("shadow.txt", "symbolic link"), ("linked-dir", "symbolic link"), ("pipe.pdf", "named pipe")]:
        row = by_name[name].to_json()
        assert row["status"] == "error" and row["error"]["kind"] == "not_a_file", row
        assert what in row["error"]["message"]
    assert by_name["invoice.txt"].status != "error"
    stored = b"".join(p.read_bytes() for p in (tmp_path / "home").rglob("*") if p.is_file() and p.stat().st_size < 10**7)
    assert b"not-for-your-eyes" not in stored, "a linked file's bytes reached the home folder"


def test_follow_links_reads_linked_files_and_folders_once(tmp_path: Path) -> None:
    folder = _hostile_folder(tmp_path)
    os.unlink(folder / "pipe.pdf")
    (folder / "loop").symlink_to(folder)                      # a link loop is walked once
    found = collect_sources([str(folder)], skip=ground_truth_sidecar, follow_links=True)
    names = sorted(Path(s).name for s in found)
    assert names == ["also-secret.txt", "invoice.txt", "shadow.txt"]


def test_an_inbox_pipe_or_link_does_not_block_the_run(tmp_path: Path) -> None:
    folder = _hostile_folder(tmp_path)
    inbox = FolderInbox(folder)
    entries = {e.key: e for e in inbox.entries()}
    assert {"pipe.pdf", "shadow.txt", "invoice.txt"} <= set(entries)
    for key in ("pipe.pdf", "shadow.txt"):
        sha, data = _in_thread(lambda k=key: inbox.read(entries[k], 1 << 20), timeout_s=10)
        assert data is None and len(sha) == 64
    sha, data = inbox.read(entries["shadow.txt"], 1 << 20, follow_links=True)
    assert data == SECRET
    assert inbox.read(entries["invoice.txt"], 1 << 20)[1] == TEXT
