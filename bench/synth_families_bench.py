"""How hard each synthetic layout family is for today's readers: model-only field accuracy per family.

    python bench/synth_families_bench.py [--formats 8] [--docs 3] [--seed 0] [--no-model] [--out FILE]

For every invoice and receipt family (`extractors.synth.families`), `--formats` unseen-split formats
of only that family, `--docs` documents each, scored as `bench/model_bench.py` scores unseen
synthetic formats: instructions generated from a format's first document (`first`) and replayed on
its other documents (`replay`); scalar fields of the truth. Receipts are also read from their OCR
line files with the `light` and `heavy` OCR noise levels (`ocr_noise`), one-page documents only.
Scorers: the baseline, and the shipped ranker unless `--no-model`.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from docassay.extractors.instructions.executor import execute  # noqa: E402
from docassay.extractors.instructions.generator import generate  # noqa: E402
from docassay.extractors.spans import DocIndex  # noqa: E402
from docassay.extractors.synth import ALL_INVOICE_FAMILIES, ALL_RECEIPT_FAMILIES, to_noisy_ocr_document  # noqa: E402
from docassay.extractors.synth import generate as synth  # noqa: E402
from model_bench import _schema, _score  # noqa: E402


def _groups(kind: str, family: str, formats: int, docs: int, seed: int, noise: str | None) -> list[list]:
    groups: dict[str, list] = {}
    for sd in synth(formats, docs, kind=kind, seed=seed, split="unseen", families=[family]):
        if noise is not None and sd.n_pages != 1:
            continue
        doc = sd.document if noise is None else to_noisy_ocr_document(sd, noise)
        groups.setdefault(sd.format_id, []).append((DocIndex(doc), sd.truth))
    return list(groups.values())


def _run(kind: str, groups: list[list], scorer) -> dict[str, float]:
    schema = _schema(kind)
    first, replay = [0, 0], [0, 0]
    for docs in groups:
        g = generate(docs[0][0], schema, scorer=scorer)
        r, n = _score(g.extraction.record, docs[0][1], fuzzy=kind == "receipt")
        first[0] += r
        first[1] += n
        for ix, truth in docs[1:]:
            r, n = _score(execute(g.instructions, ix, with_alternatives=False).record, truth, fuzzy=kind == "receipt")
            replay[0] += r
            replay[1] += n
    return {"first": round(first[0] / max(first[1], 1), 3), "replay": round(replay[0] / max(replay[1], 1), 3),
            "fields": first[1] + replay[1]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--formats", type=int, default=8)
    ap.add_argument("--docs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-model", action="store_true", help="the baseline only")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args(argv)
    import torch
    torch.set_num_threads(1)
    scorers: list[tuple[str, object]] = [("baseline", None)]
    if not a.no_model:
        from docassay.extractors.instructions.model_scorer import model_scorer
        scorers.append(("shipped ranker", model_scorer()))
    rows = []
    cases = [("invoice", f, None) for f in ALL_INVOICE_FAMILIES] + [("receipt", f, None) for f in ALL_RECEIPT_FAMILIES]
    cases += [("receipt", f, n) for n in ("light", "heavy") for f in ("classic", "rich_totals")]
    for kind, fam, noise in cases:
        groups = _groups(kind, fam, a.formats, a.docs, a.seed, noise)
        row = {"kind": kind, "family": fam, "ocr_noise": noise or "-", "documents": sum(len(g) for g in groups)}
        for name, sc in scorers:
            row[name] = _run(kind, groups, sc)
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    names = [n for n, _ in scorers]
    print("| kind | family | OCR noise | documents | " + " | ".join(f"{n} first / replay" for n in names) + " |")
    print("|---|---|---|---|" + "---|" * len(names))
    for r in rows:
        cells = " | ".join(f"{r[n]['first']:.3f} / {r[n]['replay']:.3f}" for n in names)
        print(f"| {r['kind']} | {r['family']} | {r['ocr_noise']} | {r['documents']} | {cells} |")
    if a.out:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
