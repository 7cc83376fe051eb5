"""Model-only figures for the proposal ranker: what the generator writes, without verification or repair.

    python bench/model_bench.py --weights infra/model/weights/moe.pt [--weights other.pt ...]
                                [--formats 20 --docs 3] [--dev-limit N] [--splits] [--out bench/results/model.json]

For each scorer (the baseline, then each weights file):
  * unseen synthetic formats (invoices, receipts; split `unseen`, never seen in training): instructions
    generated from a format's first document; `first` = field accuracy on that document, `replay` =
    field accuracy of those instructions replayed on the format's other documents (what a user gets
    for the rest of a batch of a new format);
  * ../shared/data (invoices; receipts from their OCR lines): field accuracy of instructions
    generated from each document and applied to it (held-out real documents; ground truth used for
    scoring only). `dev` = all invoices and the first `--dev-limit` receipts (by id). With `--splits`
    every dev document is scored and also reported by the fixed split used to choose the model:
    `selection` = the first 300 receipts by id and the invoices whose id starts with `zugferd-fx22`
    or `i2d` (looked at while choosing), `rest` = all the others (not looked at while choosing);
  * expert slots per token (routing after training; token choice: top-k), inference ms per document
    (the model call alone, and the whole `generate`), documents/s, parameters and weight memory.
Fields scored: the scalar fields present in the truth (line items are chosen by `propose_tables`,
the same for every scorer).
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

from docassay.extractors.instructions.executor import execute  # noqa: E402
from docassay.extractors.instructions.generator import generate  # noqa: E402
from docassay.extractors.spans import DocIndex  # noqa: E402
from scoring import field_correct  # noqa: E402

DATA = ROOT.parent / "shared" / "data"


def _schema(kind: str) -> dict:
    return json.loads((ROOT / "examples" / ("invoices" if kind == "invoice" else "receipts") / "schema.json").read_text())


def _score(record: dict, truth: dict, fuzzy: bool) -> tuple[int, int]:
    keys = [k for k, v in truth.items() if not isinstance(v, list)]
    return sum(field_correct(k, record.get(k), truth[k], fuzzy=fuzzy) for k in keys), len(keys)


def synth_sets(formats: int, docs: int, seed: int) -> dict[str, list[list[tuple[DocIndex, dict]]]]:
    from docassay.extractors.synth import generate as synth
    out: dict[str, list[list[tuple[DocIndex, dict]]]] = {}
    for kind in ("invoice", "receipt"):
        groups: dict[str, list[tuple[DocIndex, dict]]] = {}
        for sd in synth(formats, docs, kind=kind, seed=seed, split="unseen"):
            groups.setdefault(sd.format_id, []).append((DocIndex(sd.document), sd.truth))
        out[kind] = list(groups.values())
    return out


def dev_sets(limit: int | None) -> dict[str, list[tuple[str, DocIndex, dict]]]:
    """(id, document, truth) of the dev invoices and the first `limit` receipts (all with None), by id."""
    from docassay.extractors.parsers import parse
    from docassay.infra.config import Settings
    settings = Settings.load()
    out: dict[str, list[tuple[str, DocIndex, dict]]] = {"invoice": [], "receipt": []}
    rows = [json.loads(line) for line in (DATA / "manifest.jsonl").read_text().splitlines()]
    for set_name, kind in (("invoices", "invoice"), ("receipts", "receipt")):
        sel = sorted((r for r in rows if r["set"] == set_name), key=lambda r: r["id"])
        sel = sel if kind == "invoice" else sel[:limit]
        for r in sel:
            path = DATA / (r.get("ocr") or r["document"] if kind == "receipt" else r["document"])
            try:
                doc = parse(str(path), path.read_bytes(), settings=settings)
            except Exception as exc:  # noqa: BLE001 - a document the parsers refuse is reported, not scored
                print(f"skip {path.name}: {exc}", file=sys.stderr)
                continue
            out[kind].append((r["id"], DocIndex(doc), json.loads((DATA / r["ground_truth"]).read_text())))
    return out


SELECTION_RECEIPTS = 300
SELECTION_INVOICE_PREFIXES = ("zugferd-fx22", "i2d")


def in_selection(kind: str, doc_id: str, receipt_rank: int) -> bool:
    """The fixed split the model was chosen on: the first 300 receipts by id, the invoices whose id
    starts with `zugferd-fx22` or `i2d`. Everything else is `rest`."""
    if kind == "receipt":
        return receipt_rank < SELECTION_RECEIPTS
    return doc_id.startswith(SELECTION_INVOICE_PREFIXES)


def run_scorer(name: str, scorer, synth, dev, dev_limit: int | None = None) -> dict:
    """Figures of one scorer (None: the baseline). `dev` holds every document to score; `dev_limit`
    says which receipts count towards `dev` (the first N), the rest count only in their split."""
    res: dict = {"scorer": name}
    gen_ms: list[float] = []
    model_ms: list[float] = []
    if scorer is not None:
        inner = scorer.__call__

        def timed(ix, specs, proposals):
            t = time.perf_counter()
            r = inner(ix, specs, proposals)
            model_ms.append((time.perf_counter() - t) * 1000)
            return r
        call = timed
    else:
        call = None
    for kind, groups in synth.items():
        schema = _schema(kind)
        first = [0, 0]
        replay = [0, 0]
        for docs in groups:
            t = time.perf_counter()
            g = generate(docs[0][0], schema, scorer=call)
            gen_ms.append((time.perf_counter() - t) * 1000)
            r, n = _score(g.extraction.record, docs[0][1], fuzzy=kind == "receipt")
            first[0] += r
            first[1] += n
            for ix, truth in docs[1:]:
                r, n = _score(execute(g.instructions, ix, with_alternatives=False).record, truth, fuzzy=kind == "receipt")
                replay[0] += r
                replay[1] += n
        res[f"synth_{kind}"] = {"first": round(first[0] / max(first[1], 1), 4), "replay": round(replay[0] / max(replay[1], 1), 4),
                                "fields": first[1] + replay[1]}
    for kind, docs in dev.items():
        schema = _schema(kind)
        parts = {"dev": [0, 0, 0], "selection": [0, 0, 0], "rest": [0, 0, 0]}
        for rank, (doc_id, ix, truth) in enumerate(docs):
            g = generate(ix, schema, scorer=call)
            r, n = _score(g.extraction.record, truth, fuzzy=kind == "receipt")
            names = ["selection" if in_selection(kind, doc_id, rank) else "rest"]
            if kind == "invoice" or dev_limit is None or rank < dev_limit:
                names.append("dev")
            for name in names:
                parts[name][0] += r
                parts[name][1] += n
                parts[name][2] += 1
        for name, (right, total, n_docs) in parts.items():
            res[f"{name}_{kind}"] = {"accuracy": round(right / max(total, 1), 4), "fields": total, "documents": n_docs}
    res["generate_ms_p50"] = round(statistics.median(gen_ms), 1) if gen_ms else None
    res["model_ms_p50"] = round(statistics.median(model_ms), 2) if model_ms else None
    res["docs_per_s"] = round(1000 / statistics.median(gen_ms), 2) if gen_ms else None
    if scorer is not None:
        m = scorer.model
        cfg = m.cfg
        res["routing"] = cfg.routing
        res["residual"] = getattr(cfg, "residual", 0.0)
        res["feature_version"] = scorer.meta.get("feature_version")
        res["capacity"] = cfg.capacity if cfg.routing == "expert" else None
        res["expert_slots_per_token"] = (cfg.top_k if cfg.routing == "token" else cfg.capacity) if cfg.n_experts else None
        res["params"] = m.n_params()
        res["active_params_per_token"] = round(m.active_params_per_token())
        res["memory_mb_fp32"] = round(sum(p.numel() * 4 for p in m.parameters()) / 1e6, 2)
        res["weights_file_mb"] = round(scorer.path.stat().st_size / 1e6, 2)
        res["val_accuracy"] = (scorer.meta.get("train", {}).get("epochs") or [{}])[-1].get("val_accuracy")
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--weights", type=Path, action="append", default=[], help="weights files to compare (repeat)")
    ap.add_argument("--formats", type=int, default=20)
    ap.add_argument("--docs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dev-limit", type=int, default=None, help="first N receipts of the dev set (`dev` column)")
    ap.add_argument("--splits", action="store_true",
                    help="score every dev document and also report the selection / rest split")
    ap.add_argument("--no-dev", action="store_true")
    ap.add_argument("--no-baseline", action="store_true", help="skip the baseline row")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    from docassay.extractors.instructions.model_scorer import model_scorer

    synth = synth_sets(args.formats, args.docs, args.seed)
    dev = {"invoice": [], "receipt": []} if args.no_dev or not DATA.is_dir() else \
        dev_sets(None if args.splits else args.dev_limit)
    results = [] if args.no_baseline else [run_scorer("baseline", None, synth, dev, args.dev_limit)]
    if results:
        print(json.dumps(results[-1]), file=sys.stderr, flush=True)
    for w in args.weights:
        results.append(run_scorer(w.stem, model_scorer(w), synth, dev, args.dev_limit))
        print(json.dumps(results[-1]), file=sys.stderr, flush=True)
    print("| scorer | synth invoices first / replay | synth receipts first / replay | dev invoices | dev receipts | "
          "expert slots/token | generate ms p50 | model ms p50 | params | memory MB |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        si, sr = r["synth_invoice"], r["synth_receipt"]
        print(f"| {r['scorer']} | {si['first']:.3f} / {si['replay']:.3f} | {sr['first']:.3f} / {sr['replay']:.3f} | "
              f"{r['dev_invoice']['accuracy']:.3f} | {r['dev_receipt']['accuracy']:.3f} | {r.get('expert_slots_per_token') or '-'} | "
              f"{r['generate_ms_p50']} | {r.get('model_ms_p50') or '-'} | {r.get('params') or '-'} | {r.get('memory_mb_fp32') or '-'} |")
    if args.splits:
        print()
        print("| scorer | selection invoices | selection receipts | rest invoices | rest receipts |")
        print("|---|---|---|---|---|")
        def cell(r: dict, k: str) -> str:
            return f"{r[k]['accuracy']:.3f} ({r[k]['documents']} docs)"
        for r in results:
            print(f"| {r['scorer']} | {cell(r, 'selection_invoice')} | {cell(r, 'selection_receipt')} | "
                  f"{cell(r, 'rest_invoice')} | {cell(r, 'rest_receipt')} |")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
