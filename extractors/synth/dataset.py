"""Writing a synthetic data set to disk in the layout of /work/shared/data.

    <out>/<set>/<id>.pdf | <id>.png (<id>-p<N>.png for several pages) | <id>.ocr.json
    <out>/<set>/<id>.json          canonical ground truth
    <out>/<set>/<id>.spans.json    training labels (TruthSpans.to_json)
    <out>/manifest.jsonl           one row per document; rows of earlier runs with other ids are kept
"""
from __future__ import annotations

import json
from pathlib import Path

from docassay.extractors.synth.generator import generate
from docassay.extractors.synth.render import DEFAULT_DPI, to_ocr_lines, to_pdf, to_png

__all__ = ["write_dataset", "RENDERS"]

RENDERS = ("pdf", "png", "ocr")


def _dump(path: Path, obj: object) -> None:
    path.write_text(json.dumps(obj, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def write_dataset(out_dir: str | Path, n_formats: int, docs_per_format: int, kind: str = "invoice",
                  split: str = "train", seed: int = 0, render: tuple[str, ...] = ("pdf",), dpi: int = DEFAULT_DPI,
                  augment: bool = False) -> list[dict[str, object]]:
    """Generate and write `n_formats * docs_per_format` documents; returns their manifest rows.

    `render` names the inputs to write, in order of preference for the row's `document`:
    "pdf", "png" (rendered at `dpi`, `augment` adds rotation/noise), "ocr" (SROIE-style lines).
    """
    bad = [r for r in render if r not in RENDERS]
    if bad or not render:
        raise ValueError(f"render must be a non-empty subset of {RENDERS}, got {render!r}")
    out = Path(out_dir)
    set_name = "invoices" if kind == "invoice" else "receipts"
    folder = out / set_name
    folder.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, object]] = []
    for sd in generate(n_formats, docs_per_format, kind=kind, seed=seed, split=split):
        did = f"synth-{sd.doc_id}"
        rel = f"{set_name}/{did}"
        _dump(folder / f"{did}.json", sd.truth)
        _dump(folder / f"{did}.spans.json", sd.truth_spans.to_json())
        row: dict[str, object] = {"id": did, "set": set_name, "document": "", "ground_truth": f"{rel}.json",
                                  "spans": f"{rel}.spans.json", "format_id": sd.format_id, "split": split,
                                  "language": sd.meta["language"], "locale": sd.meta["locale"], "pages": sd.n_pages}
        documents: list[str] = []
        for r in render:
            if r == "pdf":
                (folder / f"{did}.pdf").write_bytes(to_pdf(sd))
                documents.append(f"{rel}.pdf")
            elif r == "png":
                pngs = to_png(sd, dpi, augment)
                names = [f"{did}.png"] if len(pngs) == 1 else [f"{did}-p{i}.png" for i in range(1, len(pngs) + 1)]
                for name, data in zip(names, pngs):
                    (folder / name).write_bytes(data)
                row["image"] = f"{set_name}/{names[0]}"
                if len(names) > 1:
                    row["images"] = [f"{set_name}/{n}" for n in names]
                documents.append(f"{set_name}/{names[0]}")
            else:
                _dump(folder / f"{did}.ocr.json", to_ocr_lines(sd, dpi, augment))
                row["ocr"] = f"{rel}.ocr.json"
                documents.append(f"{rel}.ocr.json")
        row["document"] = documents[0]
        rows.append(row)
    manifest = out / "manifest.jsonl"
    new_ids = {r["id"] for r in rows}
    kept: list[str] = []
    if manifest.exists():
        for line in manifest.read_text(encoding="utf-8").splitlines():
            if line.strip() and json.loads(line).get("id") not in new_ids:
                kept.append(line)
    with manifest.open("w", encoding="utf-8") as f:
        for line in kept:
            f.write(line + "\n")
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return rows
