"""Markdown tables for the figures (the same text goes to the terminal and into BENCHMARKS.md)."""
from __future__ import annotations

from typing import Sequence

from bench.scoring import GroupMean, Report


def md_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(_cell(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def _cell(c: object) -> str:
    if c is None:
        return "-"
    if isinstance(c, float):
        return f"{c:.3f}"
    return str(c)


def fmt(x: float | None, digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def ratio(right: int, total: int) -> str:
    return "-" if not total else f"{right / total:.3f} ({right}/{total})"


SUMMARY_ROWS = ("documents", "micro field accuracy", "document exact match", "header exact match",
                "line items P / R / F1", "pass rate (accepted)", "verified precision",
                "verified precision (header fields)")


def summary_cells(r: Report) -> list[str]:
    """The headline figures of one report, in the order of `SUMMARY_ROWS`."""
    items = "-" if r.item_f1 is None else f"{fmt(r.item_precision)} / {fmt(r.item_recall)} / {fmt(r.item_f1)}"
    return [str(r.n), fmt(r.micro), fmt(r.exact), fmt(r.header_exact), items,
            f"{fmt(r.pass_rate)} ({r.accepted})", fmt(r.verified_precision), fmt(r.verified_precision_header)]


def side_by_side(columns: dict[str, Report], *, fields: bool = True) -> str:
    """Metrics as rows, one column per system / variant / set; per-field accuracy below the summary."""
    names = list(columns)
    rows: list[list[str]] = []
    cells = {n: summary_cells(r) for n, r in columns.items()}
    for i, label in enumerate(SUMMARY_ROWS):
        rows.append([label] + [cells[n][i] for n in names])
    if fields:
        keys = sorted({k for r in columns.values() for k in r.per_field})
        for k in keys:
            rows.append([f"field: {k}"] + [ratio(*columns[n].per_field[k]) if k in columns[n].per_field else "-"
                                            for n in names])
    return md_table(["metric"] + names, rows)


def group_mean_table(columns: dict[str, GroupMean]) -> str:
    names = list(columns)
    rows = [["groups (documents)"] + [f"{g.groups} ({g.documents})" for g in columns.values()],
            ["micro field accuracy"] + [fmt(g.micro) for g in columns.values()],
            ["document exact match"] + [fmt(g.exact) for g in columns.values()],
            ["pass rate"] + [fmt(g.pass_rate) for g in columns.values()],
            ["verified precision"] + [fmt(g.verified_precision) for g in columns.values()],
            ["line items F1"] + [fmt(g.item_f1) for g in columns.values()]]
    keys = sorted({k for g in columns.values() for k in g.per_field})
    rows += [[f"field: {k}"] + [fmt(g.per_field.get(k)) for g in columns.values()] for k in keys]
    return md_table(["mean over content groups"] + names, rows)
