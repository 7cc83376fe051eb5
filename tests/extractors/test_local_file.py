"""Reading local inputs: regular files only; links only when asked; pipes and devices never block."""
from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from docassay.extractors.errors import ParseError
from docassay.extractors.parsers import read_source

LIMIT = 1 << 20


def _read_in_thread(path: str, **kw: object) -> object:
    """read_source in a thread, so that a read that blocks fails the test instead of hanging it."""
    out: list[object] = []
    t = threading.Thread(target=lambda: out.append(_try(path, **kw)), daemon=True)
    t.start()
    t.join(10)
    assert not t.is_alive(), f"reading {path} blocked"
    return out[0]


def _try(path: str, **kw: object) -> object:
    try:
        return read_source(path, LIMIT, **kw)   # type: ignore[arg-type]
    except ParseError as exc:
        return exc


def test_a_regular_file_is_read(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"Invoice 1")
    assert read_source(str(tmp_path / "a.txt"), LIMIT) == b"Invoice 1"


def test_a_symbolic_link_is_refused_unless_asked(tmp_path: Path) -> None:
    secret = tmp_path / "outside" / "shadow"
    secret.parent.mkdir()
    secret.write_bytes(b"root:$6$secret-hash")
    link = tmp_path / "in" / "invoice.pdf"
    link.parent.mkdir()
    link.symlink_to(secret)
    err = _read_in_thread(str(link))
    assert isinstance(err, ParseError) and err.kind == "not_a_file"
    assert "symbolic link" in err.message and "--follow-links" in err.message and "secret" not in err.message
    assert _read_in_thread(str(link), follow_links=True) == b"root:$6$secret-hash"


def test_a_dangling_link_is_refused_as_a_link(tmp_path: Path) -> None:
    (tmp_path / "gone").symlink_to(tmp_path / "nowhere")
    err = _read_in_thread(str(tmp_path / "gone"))
    assert isinstance(err, ParseError) and err.kind == "not_a_file"


def test_a_named_pipe_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.pdf"
    os.mkfifo(fifo)
    for follow in (False, True):
        err = _read_in_thread(str(fifo), follow_links=follow)
        assert isinstance(err, ParseError) and err.kind == "not_a_file" and "named pipe" in err.message


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null"])
def test_a_device_is_refused(device: str) -> None:
    if not os.path.exists(device):
        pytest.skip(f"no {device}")
    err = _read_in_thread(device)
    assert isinstance(err, ParseError) and err.kind == "not_a_file" and "device" in err.message


def test_a_folder_is_refused(tmp_path: Path) -> None:
    err = _read_in_thread(str(tmp_path))
    assert isinstance(err, ParseError) and err.kind == "not_a_file" and "folder" in err.message
