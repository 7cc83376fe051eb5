"""Writing a synthetic data set to disk in the layout of /work/shared/data.

    <out>/<set>/<id>.pdf | <id>.png (<id>-p<N>.png for several pages) | <id>.ocr.json
    <out>/<set>/<id>.json          canonical ground truth
    <out>/<set>/<id>.spans.json    training labels (TruthSpans.to_json)
    <out>/<set>/<id>.ocr-tags.json with an OCR noise level: per line of <id>.ocr.json, per token, its tags
    <out>/manifest.jsonl           one row per document; rows of earlier runs with other ids are kept
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from docassay.extractors.synth.generator import generate
from docassay.extractors.synth.ocr_noise import NOISE_LEVELS, to_noisy_ocr_lines
from docassay.extractors.synth.render import DEFAULT_DPI, to_ocr_lines, to_pdf, to_png

__all__ = ["write_dataset", "RENDERS"]

RENDERS = ("pdf", "png", "ocr")


def _dump(path: Path, obj: object) -> None:
    path.write_text(json.dumps(obj, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def write_dataset(out_dir: str | Path, n_formats: int, docs_per_format: int, kind: str = "invoice",
                  split: str = "train", seed: int = 0, render: tuple[str, ...] = ("pdf",), dpi: int = DEFAULT_DPI,
                  augment: bool = False, families: str | Sequence[str] | None = None,
                  ocr_noise: str | None = None) -> list[dict[str, object]]:
    """Generate and write `n_formats * docs_per_format` documents; returns their manifest rows.

    `render` names the inputs to write, in order of preference for the row's `document`:
    "pdf", "png" (rendered at `dpi`, `augment` adds rotation/noise), "ocr" (SROIE-style lines;
    `ocr_noise` names an `ocr_noise.NOISE_LEVELS` entry to misread them as an OCR engine would).
    `families`: the layout families to draw (see `make_format`).
    """
    bad = [r for r in render if r not in RENDERS]
    if bad or not render:
        raise ValueError(f"render must be a non-empty subset of {RENDERS}, got {render!r}")
    if ocr_noise is not None and ocr_noise not in NOISE_LEVELS:
        raise ValueError(f"ocr_noise must be one of {tuple(NOISE_LEVELS)}, got {ocr_noise!r}")
    out = Path(out_dir)
    set_name = "invoices" if kind == "invoice" else "receipts"
    folder = out / set_name
    folder.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, object]] = []
    for sd in generate(n_formats, docs_per_format, kind=kind, seed=seed, split=split, families=families):
        did = f"synth-{sd.doc_id}"
        rel = f"{set_name}/{did}"
        _dump(folder / f"{did}.json", sd.truth)
        _dump(folder / f"{did}.spans.json", sd.truth_spans.to_json())
        row: dict[str, object] = {"id": did, "set": set_name, "document": "", "ground_truth": f"{rel}.json",
                                  "spans": f"{rel}.spans.json", "format_id": sd.format_id, "split": split,
                                  "language": sd.meta["language"], "locale": sd.meta["locale"], "pages": sd.n_pages,
                                  "family": sd.meta.get("family", "classic")}
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
                if ocr_noise is None:
                    lines = to_ocr_lines(sd, dpi, augment)
                else:                           # the token labels beside the line file, which stays plain
                    lines = to_noisy_ocr_lines(sd, ocr_noise, dpi, with_tags=True)
                    _dump(folder / f"{did}.ocr-tags.json", [ln.pop("tags") for ln in lines["lines"]])
                    row["ocr_tags"] = f"{rel}.ocr-tags.json"
                _dump(folder / f"{did}.ocr.json", lines)
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
