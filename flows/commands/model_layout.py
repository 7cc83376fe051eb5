"""`docassay model train --model layout`: train the layout reader (issue 13) and write its weights.

    docassay model train --model layout --out layout.pt [--seed 0] [--schedule switch|token|dense]
        [--formats 150 --docs 2 --val-formats 12 --epochs 7 --switch-by-epoch 4] [--extra-docs LIST.jsonl] [--data-cache DIR]

Data: synthetic documents of the `train` split (half of the one-page formats read as OCR line files),
validation on the `dev` split's formats, plus the documents listed in `--extra-docs` (JSON lines
`{"id", "path", "truth", "kind"}`; `bench/layout_docs.py` writes the dev data's `dev-tune` split):
every 8th of those is kept for validation, the rest are trained on. This command never chooses dev
documents itself.
"""
from __future__ import annotations

import argparse
import json
import pickle
import sys
import time
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DEFAULT_LAYOUT_WEIGHTS = Path(__file__).resolve().parents[2] / "infra" / "model" / "weights" / "layout.pt"
EXTRA_VAL_EVERY = 8          # every 8th extra document validates instead of training
LAYOUT_DEFAULTS = {"formats": 150, "docs": 2, "val_formats": 12, "epochs": 7}   # the shipped run


def _schema(kind: str) -> dict:
    return json.loads((EXAMPLES / ("invoices" if kind == "invoice" else "receipts") / "schema.json").read_text())


def _synth(args: argparse.Namespace, split: str, n: int) -> list:
    from docassay.extractors.instructions.layout_data import synth_layout_docs

    ocr = args.ocr_share if split == "train" else 0.0
    stem = f"layout-{split}-{n}x{args.docs}-seed{args.seed}-ocr{ocr:g}.pkl"
    cache = args.data_cache / stem if args.data_cache else None
    if cache is not None and cache.is_file():
        docs = pickle.loads(cache.read_bytes())
        print(f"{split}: {len(docs)} documents from {cache}", file=sys.stderr)
        return docs
    docs = []
    for kind in ("invoice", "receipt"):
        t = time.perf_counter()
        part = list(synth_layout_docs(kind, _schema(kind), n, args.docs, split=split, seed=args.seed,
                                      ocr_share=ocr))
        print(f"{split} {kind}: {len(part)} documents labelled in {time.perf_counter() - t:.0f} s", file=sys.stderr, flush=True)
        docs.extend(part)
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_bytes(pickle.dumps(docs, protocol=pickle.HIGHEST_PROTOCOL))
    return docs


def extra_docs(listing: Path) -> tuple[list, list[str]]:
    """Labelled documents of a JSON-lines listing; a document that does not parse is reported and skipped."""
    from docassay.extractors.instructions.generator import schema_fields
    from docassay.extractors.instructions.layout_data import label_layout
    from docassay.extractors.parsers import parse
    from docassay.extractors.spans import DocIndex
    from docassay.infra.config import Settings

    settings = Settings.load()
    specs = {k: schema_fields(_schema(k))[0] for k in ("invoice", "receipt")}
    out, errors = [], []
    for line in listing.read_text("utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        try:
            doc = parse(row["path"], settings=settings)
        except Exception as exc:  # noqa: BLE001 - one bad document is reported, the rest train
            errors.append(f"{row.get('id')}: {exc}")
            continue
        truth = json.loads(Path(row["truth"]).read_text("utf-8"))
        out.append(label_layout(DocIndex(doc), truth, specs[row["kind"]], absent_known=False, doc_id=row.get("id", "")))
    return out, errors


def _cached_extra(args: argparse.Namespace) -> tuple[list, list[str]]:
    """`extra_docs`, kept under `--data-cache` per listing (its name, size and modification time)."""
    st = args.extra_docs.stat()
    cache = args.data_cache / f"layout-extra-{args.extra_docs.stem}-{st.st_size}-{int(st.st_mtime)}.pkl" if args.data_cache else None
    if cache is not None and cache.is_file():
        return pickle.loads(cache.read_bytes())
    t = time.perf_counter()
    got = extra_docs(args.extra_docs)
    print(f"extra documents labelled in {time.perf_counter() - t:.0f} s", file=sys.stderr, flush=True)
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_bytes(pickle.dumps(got, protocol=pickle.HIGHEST_PROTOCOL))
    return got


def run_layout_train(args: argparse.Namespace) -> int:
    import torch

    from docassay.infra.model.checkpoint import save_layout
    from docassay.infra.model.layout import LayoutConfig
    from docassay.infra.model.layout_train import LayoutTrainConfig, train_layout

    target = args.out or (DEFAULT_LAYOUT_WEIGHTS if args.force else None)
    if target is None:
        print(f"docassay: error: model train needs --out FILE (or --force to overwrite {DEFAULT_LAYOUT_WEIGHTS})",
              file=sys.stderr)
        return 2
    for k, v in LAYOUT_DEFAULTS.items():
        if getattr(args, k) is None:
            setattr(args, k, v)
    torch.set_num_threads(max(1, args.threads))
    t0 = time.perf_counter()
    train_docs = _synth(args, "train", args.formats)
    if args.synth_limit:
        train_docs = train_docs[::max(1, len(train_docs) // args.synth_limit)][:args.synth_limit]
    val_docs = _synth(args, "dev", args.val_formats)
    n_extra = 0
    if args.extra_docs:
        extra, errors = _cached_extra(args)
        for e in errors:
            print(f"skipped {e}", file=sys.stderr)
        val_docs += extra[::EXTRA_VAL_EVERY]
        train_docs += [d for i, d in enumerate(extra) if i % EXTRA_VAL_EVERY]
        n_extra = len(extra)
        print(f"extra documents: {n_extra} ({len(extra[::EXTRA_VAL_EVERY])} validate)", file=sys.stderr)
    t_data = time.perf_counter() - t0
    mcfg = LayoutConfig(n_experts=args.experts, top_k=args.top_k, d_expert=args.d_expert, d_model=args.d_model,
                        n_layer=args.layers)
    tcfg = LayoutTrainConfig(schedule=args.schedule, epochs=args.epochs, seed=args.seed, max_words=args.max_words,
                             switch_by_epoch=args.switch_by_epoch)
    res = train_layout(mcfg, tcfg, train_docs, val_docs, log=lambda s: print(s, file=sys.stderr, flush=True))
    meta = {"model": "layout", "schedule": args.schedule, "seed": args.seed,
            "data": {"train_formats_per_kind": args.formats, "docs_per_format": args.docs, "val_formats_per_kind":
                     args.val_formats, "ocr_share": args.ocr_share, "extra_docs": str(args.extra_docs or ""),
                     "extra_count": n_extra, "synth_limit": args.synth_limit, "train_docs": len(train_docs), "val_docs": len(val_docs)},
            "train": {**res.summary(), "config": vars(tcfg)}, "data_seconds": round(t_data, 1)}
    path = save_layout(target, res.model, meta)
    if args.log:
        args.log.write_text(json.dumps(meta, indent=1, default=str))
    print(f"trained in {t_data + res.seconds:.0f} s (data {t_data:.0f} s); val accuracy {res.log[-1].val_accuracy:.4f}; "
          f"weights -> {path} ({path.stat().st_size / 1e6:.1f} MB)", file=sys.stderr)
    return 0
