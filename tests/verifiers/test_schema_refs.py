"""Schema $refs: read from the schema's own folder, never from the network or elsewhere on disk."""
from __future__ import annotations

import http.server
import json
import threading
from pathlib import Path
from typing import Any, Iterator

import pytest

from docassay.flows.batch import load_schema
from docassay.infra.errors import ConfigError
from docassay.verifiers.context import VerifyContext
from docassay.verifiers.gates import format as format_gate


class _Counter(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        _Counter.hits.append(self.path)
        body = json.dumps({"type": "string", "maxLength": 3}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    _Counter.hits = []
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Counter)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()


def _schema(ref: str) -> dict[str, Any]:
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
            "properties": {"invoice_number": {"$ref": ref}}}


def _write(folder: Path, name: str, doc: dict[str, Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(json.dumps(doc))
    return folder / name


def test_a_network_ref_is_refused_at_load_and_never_fetched(tmp_path: Path, server: str) -> None:
    path = _write(tmp_path, "schema.json", _schema(f"{server}/amount.json"))
    with pytest.raises(ConfigError, match="network"):
        load_schema(path)
    assert _Counter.hits == []


def test_the_format_gate_fetches_nothing_either(server: str) -> None:
    ctx = VerifyContext(schema=_schema(f"{server}/gate.json"), record={"invoice_number": "too long"})
    res = format_gate.check(ctx)
    assert not res.passed and "$ref" in res.violations[0].message
    assert _Counter.hits == []


@pytest.mark.parametrize("ref", ["file:///etc/passwd", "../outside.json", "/etc/hostname"])
def test_a_file_outside_the_schemas_folder_is_refused(tmp_path: Path, ref: str) -> None:
    _write(tmp_path, "outside.json", {"type": "string"})
    path = _write(tmp_path / "schemas", "schema.json", _schema(ref))
    with pytest.raises(ConfigError, match="outside the schema's folder"):
        load_schema(path)


def test_a_link_inside_the_folder_that_leaves_it_is_refused(tmp_path: Path) -> None:
    _write(tmp_path, "outside.json", {"type": "string"})
    path = _write(tmp_path / "schemas", "schema.json", _schema("defs.json"))
    (tmp_path / "schemas" / "defs.json").symlink_to(tmp_path / "outside.json")
    with pytest.raises(ConfigError, match="outside"):
        load_schema(path)


def test_refs_inside_the_folder_are_bundled_and_validate(tmp_path: Path) -> None:
    folder = tmp_path / "schemas"
    _write(folder / "common", "ids.json", {"$defs": {"number": {"$ref": "../short.json"}}})
    _write(folder, "short.json", {"type": "string", "maxLength": 3})
    path = _write(folder, "schema.json", _schema("common/ids.json#/$defs/number"))
    schema = load_schema(path)
    assert len([k for k in schema["$defs"] if k.startswith("docassay-bundled")]) == 2
    (folder / "short.json").unlink()                 # bundled: nothing is read again while validating
    bad = format_gate.check(VerifyContext(schema=schema, record={"invoice_number": "12345"}))
    good = format_gate.check(VerifyContext(schema=schema, record={"invoice_number": "123"}))
    assert not bad.passed and "too long" in bad.violations[0].message and good.passed


def test_an_allowed_folder_may_be_named(tmp_path: Path) -> None:
    _write(tmp_path / "shared", "amount.json", {"type": "string"})
    path = _write(tmp_path / "schemas", "schema.json", _schema("../shared/amount.json"))
    with pytest.raises(ConfigError):
        load_schema(path)
    assert "docassay-bundled-0" in load_schema(path, ref_dirs=[tmp_path / "shared"])["$defs"]
