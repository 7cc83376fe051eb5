"""The benchmark's document sets, each a list of `BenchDoc` (input file + canonical ground truth).

    dev-invoices            ../shared/data invoices: 3 invoice2data samples + 72 ZUGFeRD PDFs
    dev-receipts            ../shared/data receipts (SROIE): OCR line files, or the scans with --images
    synth-invoices-train    synthetic invoices (PDF) of TRAIN formats: format seeds from the train
                            range (the formats a trained generator has seen), documents with seeds
                            no training run draws (`HELD_OUT_DOC_SEED`)
    synth-invoices-unseen   synthetic invoices of UNSEEN formats (the unseen seed range)
    synth-receipts-train / synth-receipts-unseen   the same for receipts (OCR line files)

`extractors.synth` draws train / dev / unseen format seeds from disjoint ranges, so no unseen
format can have been seen in training. Dev-set ground truth is read where it lies, never copied.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data"
DEV_SETS = ("dev-invoices", "dev-receipts")
SYNTH_SETS = ("synth-invoices-train", "synth-invoices-unseen", "synth-receipts-train", "synth-receipts-unseen")
SETS = SYNTH_SETS[:2] + DEV_SETS + SYNTH_SETS[2:]
# Training runs seed documents as `seed * 1_000_003 + j` for small seeds; the bench's documents of
# train formats start far above that, so they are new documents of known-to-training formats.
HELD_OUT_DOC_SEED = 900_000_000


@dataclass(frozen=True)
class BenchDoc:
    doc_id: str
    path: str                                   # the input file the pipeline reads
    truth: dict                                 # canonical ground truth (only annotated keys)
    kind: str                                   # invoice | receipt
    pages: int = 1
    origin: str = ""                            # i2d | zugferd | sroie | synth-train | synth-unseen
    group: str | None = None                    # ZUGFeRD content group; synthetic format id
    meta: dict = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class SynthSize:
    formats: int = 10
    docs: int = 3
    seed: int = 0


def kind_of(set_name: str) -> str:
    if set_name not in SETS:
        raise ValueError(f"unknown set {set_name!r}; one of {', '.join(SETS)}")
    return "receipt" if "receipts" in set_name else "invoice"


def load_set(set_name: str, *, data: Path = DEFAULT_DATA, folder: Path, size: SynthSize = SynthSize(),
             limit: int | None = None, images: bool = False) -> list[BenchDoc]:
    """The documents of `set_name`; synthetic ones are written under `folder` first."""
    kind = kind_of(set_name)
    if set_name in DEV_SETS:
        docs = load_dev(data, "invoices" if kind == "invoice" else "receipts", images=images)
    else:
        split = set_name.rsplit("-", 1)[1]
        docs = write_synth(kind, split, size, folder / set_name)
    return docs[:limit] if limit else docs


def load_dev(data: Path, set_name: str, *, images: bool = False) -> list[BenchDoc]:
    """Dev documents of `set_name` (invoices | receipts) from `data/manifest.jsonl`, sorted by id."""
    manifest = data / "manifest.jsonl"
    if not manifest.exists():
        raise FileNotFoundError(f"no dev data at {data} (manifest.jsonl missing)")
    out = []
    for line in manifest.read_text("utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        if row["set"] != set_name:
            continue
        doc = row["document"]
        if set_name == "receipts" and not images:
            doc = row.get("ocr") or doc
        origin = "sroie" if set_name == "receipts" else row["id"].split("-", 1)[0]
        out.append(BenchDoc(row["id"], str(data / doc), json.loads((data / row["ground_truth"]).read_text("utf-8")),
                            "receipt" if set_name == "receipts" else "invoice", int(row.get("pages") or 1),
                            origin, row.get("content_group"),
                            {k: row[k] for k in ("vendor", "language", "producer", "profile") if k in row}))
    out.sort(key=lambda d: d.doc_id)
    return out


def write_synth(kind: str, split: str, size: SynthSize, folder: Path) -> list[BenchDoc]:
    """`size.formats` formats of `split` × `size.docs` documents, written to `folder` (PDF for
    invoices, OCR line files for receipts) with their ground truth beside them."""
    from docassay.extractors.synth import format_seeds, make_document, make_format, to_ocr_lines, to_pdf

    folder.mkdir(parents=True, exist_ok=True)
    doc_base = HELD_OUT_DOC_SEED if split == "train" else size.seed * 1_000_003
    out = []
    for fseed in format_seeds(split, size.formats, size.seed):
        fmt = make_format(fseed, kind)
        for j in range(size.docs):
            sd = make_document(fmt, doc_base + j)
            if kind == "invoice":
                p = folder / f"{sd.doc_id}.pdf"
                p.write_bytes(to_pdf(sd))
            else:
                p = folder / f"{sd.doc_id}.ocr.json"
                p.write_text(json.dumps(to_ocr_lines(sd)), "utf-8")
            (folder / f"{sd.doc_id}.json").write_text(json.dumps(sd.truth, ensure_ascii=False), "utf-8")
            out.append(BenchDoc(sd.doc_id, str(p), sd.truth, kind, sd.n_pages, f"synth-{split}", sd.format_id,
                                {"language": sd.meta.get("language"), "locale": sd.meta.get("locale")}))
    return out
