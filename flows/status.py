"""Per-document status outside results.jsonl: the database (`run_documents`), Prefect artifacts
(a table of every document and a summary), and the lines the CLI prints."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import psycopg

from docassay.flows.results import Row, Summary
from docassay.infra.display import printable
from docassay.infra.run_log import RunDocument, save_run_documents

__all__ = ["TABLE_KEY", "SUMMARY_KEY", "OK_STATUSES", "record_run_documents", "publish_artifacts",
           "status_table", "problem_lines"]

TABLE_KEY = "docassay-documents"        # Prefect artifact keys: lowercase letters, digits, dashes
SUMMARY_KEY = "docassay-summary"
OK_STATUSES = ("passed", "repaired", "reviewed", "corrected")


def _error(row: Row) -> tuple[str | None, str | None]:
    return (row.error.get("kind"), row.error.get("message")) if row.error else (None, None)


def record_run_documents(conn: psycopg.Connection, run_id: str, rows: Sequence[Row]) -> None:
    docs = []
    for i, r in enumerate(rows):
        kind, message = _error(r)
        docs.append(RunDocument(i, r.source, r.sha256, r.status, r.format.get("id"), kind, message,
                                int(r.model_tokens.get("input", 0)), int(r.model_tokens.get("output", 0))))
    save_run_documents(conn, run_id, docs)


def status_table(rows: Sequence[Row]) -> list[dict]:
    """One flat row per document: what the Prefect table artifact shows."""
    table = []
    for r in rows:
        kind, message = _error(r)
        table.append({"document": r.source, "status": r.status, "format": r.format.get("id") or "",
                      "match": r.format.get("match") or "", "attempts": r.attempts,
                      "input_tokens": r.model_tokens.get("input", 0), "output_tokens": r.model_tokens.get("output", 0),
                      "error": f"{kind}: {message}" if kind else ""})
    return table


def publish_artifacts(run_id: str, rows: Sequence[Row], summary: Summary, results_path: Path) -> None:
    """Inside a flow run: a table artifact with every document's status, and a markdown summary."""
    from prefect.artifacts import create_markdown_artifact, create_table_artifact
    counts = ", ".join(f"{k} {v}" for k, v in summary.by_status.items()) or "no documents"
    create_table_artifact(table=status_table(rows), key=TABLE_KEY,
                          description=f"docassay {run_id}: {counts} ({results_path})")
    lines = [f"# docassay {run_id}", "", f"{summary.total} documents: {counts}", "",
             f"failed (failed/error/quota_exceeded): {summary.failed}, error ratio {summary.error_ratio:.1%}",
             "", f"results: `{results_path}`"]
    if summary.errors:
        lines += ["", "distinct errors:", ""] + [f"* {e}" for e in summary.errors]
    create_markdown_artifact(markdown="\n".join(lines), key=SUMMARY_KEY, description=f"docassay {run_id}")


def problem_lines(rows: Sequence[Row], limit: int = 20) -> list[str]:
    """`status  document: reason` for each document that did not pass, at most `limit` lines."""
    bad = [r for r in rows if r.status not in OK_STATUSES]
    out = []
    for r in bad[:limit]:
        kind, message = _error(r)
        reason = message or _failed_gates(r) or _doubtful(r)
        out.append(f"  {r.status:<14} {printable(r.source)}" + (f": {printable(reason)}" if reason else ""))
    for r in [r for r in rows if r.duplicate_of][:limit]:
        d = r.duplicate_of or {}
        out.append(f"  duplicate      {printable(r.source)}: the same bytes as {printable(d.get('source'))} (first seen {d.get('first_seen')}, "
                   f"{d.get('status')})")
    if len(bad) > limit:
        out.append(f"  ... and {len(bad) - limit} more (see results.jsonl)")
    return out


def _failed_gates(r: Row) -> str:
    """The failed gates and the first gating error (an error-severity finding of a failed gate,
    not a warning)."""
    gates = [name for name, g in (r.verification.get("gates") or {}).items() if not g.get("passed", True)]
    first = next((v.get("message") for v in r.verification.get("violations") or []
                  if v.get("message") and v.get("severity", "error") == "error" and v.get("gate") in gates), None)
    if not gates:
        return ""
    return f"failed gate(s) {', '.join(gates)}" + (f" ({first})" if first else "")


def _doubtful(r: Row, limit: int = 3) -> str:
    """`doubtful: gross_total 0.41 (rules: ...), ...`: the required fields below the target, with
    their confidence and the first signal against each."""
    if not r.doubtful:
        return ""
    parts = []
    for name in r.doubtful[:limit]:
        f = r.fields.get(name) or {}
        if f.get("status") == "missing" or f.get("confidence") is None:
            parts.append(f"{name} missing")
            continue
        against = next((c for c in f.get("checks") or [] if c.get("outcome") == "fail"), None)
        why = (f"{against['check']}: {against.get('detail', '')}".rstrip(": ") if against else "weak evidence")[:100]
        parts.append(f"{name} {f['confidence']:.2f} ({why})")
    more = len(r.doubtful) - limit
    return "doubtful: " + ", ".join(parts) + (f", +{more} more" if more > 0 else "")
