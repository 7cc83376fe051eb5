"""Issue 13: the layout reader against the proposal ranker and the baseline, on the generator path.

    python bench/layout_bench.py --layout infra/model/weights/layout.pt [--layout other.pt ...]
        [--data ../shared/data] [--formats 15 --docs 3] [--tune-receipt-step 3] [--out bench/results/layout.json]

For each scorer (baseline, the shipped ranker, each layout weights file), the instructions the
generator writes from one document, replayed on it (dev data) or on the format's other documents
(synthetic): no verification, no repair (as `bench/model_bench.py`).

  * micro field accuracy over the truth's scalar fields, per dev split (`bench/splits.py`):
    `dev-tune` and `dev-holdout`, invoices and receipts (receipts fuzzy, as everywhere);
    dev-tune receipts: every `--tune-receipt-step`-th by id (all holdout receipts are scored);
  * line-item F1 (items matched by description, `scoring.score_items`): 2 matched / (predicted + expected);
  * unseen synthetic formats (`unseen` split): `first` (the document written from) and `replay`;
  * the model call in ms per page (1 torch thread; the layout reader's forward alone, and the whole
    scorer call with it), parameters, weights on disk, expert size.

Only figures are printed; no document of dev-holdout is listed (its errors are never inspected).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import torch  # noqa: E402

from datasets import DEFAULT_DATA  # noqa: E402
from docassay.extractors.instructions.executor import execute  # noqa: E402
from docassay.extractors.instructions.generator import generate  # noqa: E402
from docassay.extractors.spans import DocIndex  # noqa: E402
from model_bench import _schema, _score, synth_sets  # noqa: E402
from scoring import score_items  # noqa: E402
from splits import HOLDOUT, TUNE, split_of  # noqa: E402


def dev_docs(data: Path, tune_receipt_step: int, splits: tuple[str, ...] = (TUNE, HOLDOUT),
             only: set[str] | None = None) -> dict[tuple[str, str], list[tuple[str, DocIndex, dict]]]:
    """(kind, split) -> [(id, document, truth)]; receipts from their OCR lines."""
    from docassay.extractors.parsers import parse
    from docassay.infra.config import Settings
    settings = Settings.load()
    rows = [json.loads(line) for line in (data / "manifest.jsonl").read_text().splitlines() if line.strip()]
    out: dict[tuple[str, str], list] = {(k, s): [] for k in ("invoice", "receipt") for s in splits}
    for set_name, kind in (("invoices", "invoice"), ("receipts", "receipt")):
        sel = sorted((r for r in rows if r["set"] == set_name), key=lambda r: r["id"])
        tune_seen = 0
        for rank, r in enumerate(sel):
            split = split_of(kind, r["id"], r.get("content_group"), receipt_rank=rank)
            if split not in splits or (only is not None and r["id"] not in only):
                continue
            if kind == "receipt" and split == TUNE and only is None:
                tune_seen += 1
                if (tune_seen - 1) % tune_receipt_step:
                    continue
            path = data / (r.get("ocr") or r["document"] if kind == "receipt" else r["document"])
            try:
                doc = parse(str(path), path.read_bytes(), settings=settings)
            except Exception as exc:  # noqa: BLE001 - a document the parsers refuse is counted, not scored
                print(f"skip a {split} {kind}: {type(exc).__name__}", file=sys.stderr)
                continue
            out[(kind, split)].append((r["id"], DocIndex(doc), json.loads((data / r["ground_truth"]).read_text())))
    return out


class _Timed:
    def __init__(self, scorer) -> None:
        self.scorer = scorer
        self.ms_per_page: list[float] = []

    def __call__(self, ix, specs, proposals):
        t = time.perf_counter()
        r = self.scorer(ix, specs, proposals)
        self.ms_per_page.append((time.perf_counter() - t) * 1000 / max(len(ix.pages), 1))
        return r


def run(name: str, scorer, synth, dev) -> dict:
    timed = _Timed(scorer) if scorer is not None else None
    res: dict = {"scorer": name}
    for (kind, split), docs in dev.items():
        schema = _schema(kind)
        right = total = 0
        m = p = e = 0
        per_field: dict[str, list[int]] = {}
        for _, ix, truth in docs:
            g = generate(ix, schema, scorer=timed)
            r, n = _score(g.extraction.record, truth, fuzzy=kind == "receipt")
            right, total = right + r, total + n
            if split == TUNE:                       # per field on dev-tune only (holdout: totals only)
                for k, v in truth.items():
                    if not isinstance(v, list):
                        c = per_field.setdefault(k, [0, 0])
                        c[0] += _score({k: g.extraction.record.get(k)}, {k: v}, fuzzy=kind == "receipt")[0]
                        c[1] += 1
            if truth.get("line_items"):
                s = score_items(g.extraction.record.get("line_items"), truth["line_items"])
                m, p, e = m + s.matched, p + s.predicted, e + s.expected
        res[f"{split}_{kind}"] = {"accuracy": round(right / max(total, 1), 4), "fields": total, "documents": len(docs),
                                  "item_f1": round(2 * m / (p + e), 4) if p + e else None, "items_expected": e}
        if per_field:
            res[f"{split}_{kind}"]["per_field"] = {k: f"{a}/{b}" for k, (a, b) in sorted(per_field.items())}
    for kind, groups in synth.items():
        schema = _schema(kind)
        first, replay = [0, 0], [0, 0]
        for docs in groups:
            g = generate(docs[0][0], schema, scorer=timed)
            r, n = _score(g.extraction.record, docs[0][1], fuzzy=kind == "receipt")
            first = [first[0] + r, first[1] + n]
            for ix, truth in docs[1:]:
                r, n = _score(execute(g.instructions, ix, with_alternatives=False).record, truth, fuzzy=kind == "receipt")
                replay = [replay[0] + r, replay[1] + n]
        res[f"unseen_{kind}"] = {"first": round(first[0] / max(first[1], 1), 4), "replay": round(replay[0] / max(replay[1], 1), 4)}
    if timed is not None and timed.ms_per_page:
        res["scorer_ms_per_page_p50"] = round(statistics.median(timed.ms_per_page), 1)
    model = getattr(scorer, "model", None)
    if model is not None:
        res["params"] = model.n_params()
        res["weights_mb"] = round(scorer.path.stat().st_size / 1e6, 2)
        if hasattr(scorer, "read"):
            res.update(_forward_ms(scorer, dev))
            res["expert_mb_fp32"] = round(model.expert_bytes() / 1e6, 3)
            res["routing"], res["capacity"] = model.cfg.routing, model.cfg.capacity
            tr = scorer.meta.get("train", {})
            res["switched_at"], res["switch_reason"] = tr.get("switched_at"), tr.get("switch_reason")
    return res


def _forward_ms(scorer, dev) -> dict:
    """The layout reader's forward alone, ms per page (features excluded), over the dev-tune documents."""
    from docassay.extractors.instructions.generator import schema_fields
    from docassay.extractors.instructions.layout_features import layout_doc
    from docassay.infra.model.layout import collate
    ms = []
    for (kind, split), docs in dev.items():
        if split != TUNE:
            continue
        specs, _ = schema_fields(_schema(kind))
        for _, ix, _ in docs[:60]:
            b = collate([layout_doc(ix, specs)])
            with torch.no_grad():
                t = time.perf_counter()
                scorer.model(b)
                ms.append((time.perf_counter() - t) * 1000 / max(len(ix.pages), 1))
    return {"forward_ms_per_page_p50": round(statistics.median(ms), 1) if ms else None,
            "forward_ms_per_page_p90": round(sorted(ms)[int(0.9 * (len(ms) - 1))], 1) if ms else None}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--layout", type=Path, action="append", default=[], help="layout weights to compare (repeat)")
    ap.add_argument("--no-ranker", action="store_true")
    ap.add_argument("--no-baseline", action="store_true")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--formats", type=int, default=15)
    ap.add_argument("--docs", type=int, default=3)
    ap.add_argument("--tune-receipt-step", type=int, default=3)
    ap.add_argument("--variants", default="", help="layout scorer variants LEVEL:BLEND,... (each with every --layout)")
    ap.add_argument("--val-of", type=Path, default=None,
                    help="score only the validation slice of this training listing (every 8th row: the dev-tune "
                         "documents the layout reader did not train on; design choices are made there)")
    ap.add_argument("--tune-only", action="store_true", help="dev-tune only (what design choices are made on)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    from docassay.extractors.instructions.layout_scorer import layout_scorer
    from docassay.extractors.instructions.model_scorer import model_scorer

    synth = synth_sets(args.formats, args.docs, 0) if args.formats else {}
    only = None
    if args.val_of:
        from docassay.flows.commands.model_layout import EXTRA_VAL_EVERY
        rows = [json.loads(x) for x in args.val_of.read_text().splitlines() if x.strip()]
        only = {r["id"] for r in rows[::EXTRA_VAL_EVERY]}
    dev = dev_docs(args.data, args.tune_receipt_step, (TUNE,) if args.tune_only or only else (TUNE, HOLDOUT), only)
    scorers = ([] if args.no_baseline else [("baseline", None)]) + ([] if args.no_ranker else [("ranker", model_scorer())]) + \
        [(f"layout:{w.stem}", layout_scorer(w)) for w in args.layout]
    from docassay.extractors.instructions.layout_scorer import LayoutScorer
    for v in filter(None, args.variants.split(",")):
        level, blend = v.split(":")
        for w in args.layout:
            base = layout_scorer(w)
            scorers.append((f"layout:{w.stem}:{level}:{blend}", LayoutScorer(base.model, base.meta, base.path, float(blend), level)))
    results = []
    for name, sc in scorers:
        t = time.perf_counter()
        results.append(run(name, sc, synth, dev))
        results[-1]["bench_seconds"] = round(time.perf_counter() - t)
        print(json.dumps(results[-1]), file=sys.stderr, flush=True)
    print("| scorer | tune inv | holdout inv | tune rec | holdout rec | items F1 tune / holdout | unseen inv first / replay | "
          "unseen rec first / replay | forward ms/page | scorer ms/page |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        def a(k: str, r: dict = r) -> str:
            return f"{r[k]['accuracy']:.3f}" if k in r else "-"

        def f1(k: str, r: dict = r) -> str:
            return "-" if k not in r or r[k]["item_f1"] is None else f"{r[k]['item_f1']:.3f}"

        def u(k: str, r: dict = r) -> str:
            return f"{r[k]['first']:.3f} / {r[k]['replay']:.3f}" if k in r else "-"
        print(f"| {r['scorer']} | {a('dev-tune_invoice')} | {a('dev-holdout_invoice')} | {a('dev-tune_receipt')} | "
              f"{a('dev-holdout_receipt')} | {f1('dev-tune_invoice')} / {f1('dev-holdout_invoice')} | {u('unseen_invoice')} | "
              f"{u('unseen_receipt')} | {r.get('forward_ms_per_page_p50', '-')} | {r.get('scorer_ms_per_page_p50', '-')} |")
    print("documents: " + ", ".join(f"{k[1]} {k[0]}s {len(v)}" for k, v in dev.items()))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
