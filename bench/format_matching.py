"""Calibrate the format-match threshold: same-format vs different-format fingerprint similarity.

    python bench/format_matching.py [--data /work/shared/data] [--dim 512] [--receipts N]
                                    [--synth-formats N --synth-docs M]

Data sets and which documents share a format (the grouping rules, decided by reading the PDFs):

* invoices/i2d-*: three unrelated senders, each its own format.
* invoices/zugferd-*: the ZUGFeRD corpus renders fictitious invoices of several sellers with several
  generators. A format proper is one *sender's* layout: set `invoices` groups by renderer family x
  seller (the seller part of `content_group`, names merged as for SROIE below, so "GLN ...
  MUSTERLIEFERANT GMBH" = "MUSTERLIEFERANT GMBH"). Renderer families:
    - `zugferd-fx22-*` (producer FeRD-2.2-Infopaket, EN16931 and XRechnung profiles alike): one
      FeRD template ("Beispiel-Rechnungen fuer ZUGFeRD 2.2 ... Seite 1 von N" header);
    - `zugferd-v20-*` (producer intarsys): one XSLT stylesheet ("Stylesheet zur Lesbarmachung der
      XML-Daten von ZUGFeRD 2.0-Rechnungen"), all profiles;
    - `zugferd-v21-*` (producer symtrax): one XSLT stylesheet ("Stylesheet Lesbarmachung ...",
      version block on top), all profiles;
    - `zugferd-v1-*` (producers Intarsys and 4s4u): two templates, told apart by the block that
      opens page 1: "Rechnungsersteller" (the AWV COMFORT 2014 layout, seller Lieferant GmbH) and
      "Lieferant / GLN" (the MUSTERLIEFERANT layout, shared by 4s4u's sample).
  Set `invoices-renderer` groups by renderer template alone: one template printed for several
  sellers, the "generic layout, different senders" case that should rather fall *below* the
  threshold; it is reported, not used for the threshold.
* receipts/sroie-*: SROIE `vendor_key` (one shop = one layout), keys merged where they are OCR
  variants of one name (see `vendor_groups`). Shops with one receipt serve as distractors.
* synthetic: `extractors.synth.generate` (dev split), N formats x M documents per kind; formats
  whose sender varies per document (`seller_varies` / `shop_varies`) are reported apart
  (`*-varsend`), like `invoices-renderer`.

Figures printed per data set: pairs, min/p5/median of same-format similarities, max/p95/median of
different-format ones, the separating threshold and its margin, and nearest-neighbour accuracy:
leave-one-out, each document is a query against an index of all other documents (one exemplar per
document, as the pipeline stores them); "correct" when the nearest document is of the same format
and above the threshold, or, for a document whose format has no other member, when nothing is above
the threshold.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from docassay.extractors.document import BBox, Document, Page, Word
from docassay.extractors.fingerprint import DEFAULT_CONFIG, FingerprintConfig, fingerprint
from docassay.infra.config import Settings


@dataclass
class Item:
    id: str
    group: str          # format label
    doc: Document


# --------------------------------------------------------------------------------------- loading

READER = "auto"        # auto: the project's parser when importable | bench: the readers below


def _parse(path: Path) -> Document | None:
    """The project's parser when it exists; None means: use the bench's own reader."""
    if READER == "bench":
        return None
    try:
        from docassay.extractors.parsers import parse  # type: ignore[attr-defined]
    except ImportError:
        return None
    return parse(path)


def read_pdf(path: Path, max_pages: int = 3) -> Document:
    """Words of a PDF's text layer via pypdfium2 (bench fallback while the parser is absent)."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as raw

    pdf = pdfium.PdfDocument(str(path))
    pages = []
    n_pages = len(pdf)
    for pi in range(min(n_pages, max_pages)):
        page = pdf[pi]
        w, h = page.get_size()
        tp = page.get_textpage()
        words: list[Word] = []
        cur, box, size = [], None, None
        prev_box = None

        def flush() -> None:
            nonlocal cur, box, size
            if cur and box is not None:
                words.append(Word("".join(cur), box, size))  # noqa: B023  (called only in this iteration)
            cur, box, size = [], None, None

        for i in range(tp.count_chars()):
            ch = chr(raw.FPDFText_GetUnicode(tp.raw, i))
            if ch.isspace() or ch == "\x00":
                flush()
                prev_box = None
                continue
            l, b, r, t = tp.get_charbox(i)
            cb = BBox(l, h - t, r, h - b)
            if prev_box is not None and (cb.x0 - prev_box.x1 > 0.6 * max(cb.height, 1.0)
                                         or abs(cb.cy - prev_box.cy) > 0.6 * max(cb.height, 1.0)):
                flush()
            cur.append(ch)
            box = cb if box is None else box.union(cb)
            size = size or raw.FPDFText_GetFontSize(tp.raw, i)
            prev_box = cb
        flush()
        pages.append(Page.from_words(pi + 1, w, h, words))
    data = path.read_bytes()
    return Document(str(path), Document.hash_bytes(data), "pdf", pages, parser="bench-pdfium")


def read_ocr(path: Path) -> Document:
    """SROIE OCR lines -> words (each line's quad split in proportion to character counts)."""
    lines = json.loads(path.read_text())["lines"]
    words: list[Word] = []
    for ln in lines:
        q = ln["quad"]
        xs, ys = q[0::2], q[1::2]
        x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
        parts = ln["text"].split()
        total = sum(len(p) for p in parts) + max(len(parts) - 1, 0)
        pos = 0
        for p in parts:
            a = x0 + (x1 - x0) * pos / max(total, 1)
            b = x0 + (x1 - x0) * (pos + len(p)) / max(total, 1)
            words.append(Word(p, BBox(a, y0, b, y1)))
            pos += len(p) + 1
    width = max((w.bbox.x1 for w in words), default=1.0)
    height = max((w.bbox.y1 for w in words), default=1.0)
    page = Page.from_words(1, width, height, words, source="ocr-lines")
    return Document(str(path), Document.hash_bytes(path.read_bytes()), "ocr-lines", [page],
                    parser="bench-ocr")


def _load(path: Path) -> Document:
    doc = _parse(path)
    if doc is not None:
        return doc
    return read_ocr(path) if path.name.endswith(".ocr.json") else read_pdf(path)


def renderer_group(row: dict, doc: Document) -> str:
    """The renderer template of an invoice (module docstring): i2d-* each alone; ZUGFeRD by
    generator family, v1 split by the block that opens page 1."""
    rid = row["id"]
    if rid.startswith("i2d-"):
        return rid
    family = rid.split("-")[1]                    # fx22 | v1 | v20 | v21
    if family == "v1":
        first = doc.pages[0].lines[0].text.strip().casefold() if doc.pages[0].lines else ""
        return "zugferd-v1-awv" if first.startswith("rechnungsersteller") else "zugferd-v1-musterlieferant"
    return "zugferd-" + family


def load_invoices(data: Path) -> tuple[list[Item], list[Item]]:
    """Invoices grouped two ways: by sender x renderer (a format proper: one sender's layout; the
    calibration set), and by renderer alone (one template printed for several senders)."""
    rows, docs = [], []
    for line in (data / "manifest.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row["set"] == "invoices" and row["document"].endswith(".pdf"):
            rows.append(row)
            docs.append(_load(data / row["document"]))
    sellers = vendor_groups(sorted({r["content_group"].split("|")[0] for r in rows if "content_group" in r}))
    by_sender, by_renderer = [], []
    for row, doc in zip(rows, docs):
        renderer = renderer_group(row, doc)
        family = renderer if renderer.startswith("i2d-") else "zugferd-" + row["id"].split("-")[1]
        sender = family if "content_group" not in row else family + ":" + sellers[row["content_group"].split("|")[0]]
        by_sender.append(Item(row["id"], sender, doc))
        by_renderer.append(Item(row["id"], renderer, doc))
    return by_sender, by_renderer


def vendor_groups(keys: list[str]) -> dict[str, str]:
    """Vendor / seller names -> group name. SROIE keys carry OCR typos ("RSTORAN WAN SHENG") and
    branch suffixes ("DOMINO S PIZZA TAMAN UNIVERSITI"); ZUGFeRD sellers sometimes carry an id
    prefix ("GLN 4333741000005 Lief-Nr: 549910 MUSTERLIEFERANT GMBH"). Names are one vendor when
    their letters-and-digits forms are at least 0.85 alike (difflib ratio), or when the words of
    one (5+ characters) appear as a contiguous run in the other."""
    import difflib
    import re

    words = {k: re.findall(r"[A-Z0-9]+", k.upper()) for k in keys}
    norm = {k: "".join(w) for k, w in words.items()}
    parent = {k: k for k in keys}

    def find(k: str) -> str:
        while parent[k] != k:
            k = parent[k]
        return k

    def contained(a: list[str], b: list[str]) -> bool:
        return any(b[i:i + len(a)] == a for i in range(len(b) - len(a) + 1))

    ks = sorted(keys)
    for i, a in enumerate(ks):
        for b in ks[i + 1:]:
            short, long_ = sorted((words[a], words[b]), key=len)
            if ((len("".join(short)) >= 5 and contained(short, long_))
                    or difflib.SequenceMatcher(None, norm[a], norm[b]).ratio() >= 0.85):
                ra, rb = find(a), find(b)
                if ra != rb:
                    parent[max(ra, rb)] = min(ra, rb)
    return {k: find(k) for k in keys}


def load_receipts(data: Path, limit: int | None) -> list[Item]:
    rows = [json.loads(line) for line in (data / "manifest.jsonl").read_text().splitlines()]
    rows = [r for r in rows if r["set"] == "receipts"][: limit or None]
    groups = vendor_groups(sorted({r.get("vendor_key", r["id"]) for r in rows}))
    return [Item(r["id"], "sroie:" + groups[r.get("vendor_key", r["id"])], _load(data / r["ocr"]))
            for r in rows]


def load_synthetic(n_formats: int, n_docs: int) -> list[tuple[str, list[Item]]] | None:
    """Synthetic formats from `extractors.synth.generate` (dev split), invoices and receipts; None
    while that module is absent. Formats whose sender varies from document to document (a generic
    template many senders use: `seller_varies` / `shop_varies`) go to separate sets: the fingerprint
    is meant to keep different senders apart, so those documents should fall below the threshold."""
    try:
        from docassay.extractors.synth import generate
    except ImportError:
        return None
    out = []
    for kind in ("invoice", "receipt"):
        fixed, varying = [], []
        for sd in generate(n_formats, n_docs, kind=kind, seed=0, split="dev"):
            layout = sd.meta.get("layout", {})
            varies = bool(layout.get("seller_varies") or layout.get("shop_varies"))
            (varying if varies else fixed).append(Item(sd.doc_id, sd.format_id, sd.document))
        out.append((f"synth-{kind}s", fixed))
        if varying:
            out.append((f"synth-{kind}s-varsend", varying))
    return out


# ------------------------------------------------------------------------------------ statistics

@dataclass
class Report:
    """Similarities of one data set under one hashing salt."""
    name: str
    groups: list[str]
    sims: np.ndarray          # (n, n) cosine similarities
    same: np.ndarray          # same-format pairs
    diff: np.ndarray          # different-format pairs
    best_same: np.ndarray     # per document with a peer: its most similar same-format document
    best_other: np.ndarray    # per document: its most similar document of another format

    @property
    def n_docs(self) -> int:
        return len(self.groups)

    @property
    def n_formats(self) -> int:
        return len(set(self.groups))


@dataclass
class Timing:
    ms_per_doc: list[float]
    ms_per_page: list[float]      # per page read (the fingerprint reads at most max_pages + the last)
    words: list[int]


def build_report(name: str, items: list[Item], dim: int, cfg: FingerprintConfig,
                 timing: Timing | None = None) -> Report:
    vecs = [fingerprint(it.doc, dim, cfg) for it in items]
    if timing is not None:          # warm (caches filled), best of 3: the machine's other load only adds
        for it in items:
            runs = []
            for _ in range(3):
                t0 = time.perf_counter()
                fingerprint(it.doc, dim, cfg)
                runs.append((time.perf_counter() - t0) * 1000)
            read = min(len(it.doc.pages), cfg.max_pages + 1)
            timing.ms_per_doc.append(min(runs))
            timing.ms_per_page.append(min(runs) / max(read, 1))
            timing.words.append(sum(len(p.words) for p in it.doc.pages[:read]))
    m = np.stack(vecs)
    sims = m @ m.T
    g = np.array([it.group for it in items])
    same_mask = g[:, None] == g[None, :]
    iu = np.triu_indices(len(items), 1)
    masked = sims.copy()
    np.fill_diagonal(masked, -np.inf)
    best_same, best_other = [], []
    for i in range(len(items)):
        peers = same_mask[i].copy()
        peers[i] = False
        if peers.any():
            best_same.append(masked[i, peers].max())
        if (~same_mask[i]).any():
            best_other.append(masked[i, ~same_mask[i]].max())
    return Report(name, list(g), sims, sims[iu][same_mask[iu]], sims[iu][~same_mask[iu]],
                  np.array(best_same), np.array(best_other))


def accuracy(r: Report, threshold: float) -> float:
    """Share of documents handled right by "nearest stored document above threshold": a document
    whose format has other members must find one of them as its nearest, above the threshold; a
    document alone in its format must find nothing above the threshold."""
    g = np.array(r.groups)
    s = r.sims.copy()
    np.fill_diagonal(s, -np.inf)
    ok = 0
    for i in range(len(g)):
        j = int(np.argmax(s[i]))
        has_peer = bool(((g == g[i]).sum()) > 1)
        ok += (s[i, j] >= threshold and g[j] == g[i]) if has_peer else (s[i, j] < threshold)
    return ok / len(g)


def best_threshold(same: np.ndarray, other: np.ndarray) -> tuple[float, float]:
    """The threshold with fewest errors (same < t, other >= t), the middle of the widest gap among
    ties; and the margin min(same) - max(other) (negative: the distributions overlap)."""
    if len(same) == 0 or len(other) == 0:
        return float("nan"), float("nan")
    cand = np.unique(np.concatenate([same, other]))
    s_sorted, o_sorted = np.sort(same), np.sort(other)
    best_t, best_key = float(cand[0]), None
    for lo, hi in zip(cand, cand[1:]):
        t = (lo + hi) / 2
        errs = np.searchsorted(s_sorted, t) + (len(o_sorted) - np.searchsorted(o_sorted, t))
        key = (-int(errs), float(hi - lo))
        if best_key is None or key > best_key:
            best_t, best_key = float(t), key
    return best_t, float(same.min() - other.max())


def _pct(a: np.ndarray, q: float) -> float:
    return float(np.percentile(a, q)) if len(a) else float("nan")


def _f(x: float) -> str:
    return f"{x:7.3f}" if np.isfinite(x) else "      -"


def print_tables(reports: list[Report], threshold: float) -> None:
    print("pairs        set                docs fmts   same    min     p5 median |    diff    max    p95 median")
    for r in reports:
        print(f"             {r.name:<18}{r.n_docs:>5}{r.n_formats:>5}{len(r.same):>7}"
              f"{_f(r.same.min() if len(r.same) else np.nan)}{_f(_pct(r.same, 5))}{_f(_pct(r.same, 50))} |"
              f"{len(r.diff):>8}{_f(r.diff.max())}{_f(_pct(r.diff, 95))}{_f(_pct(r.diff, 50))}")
    print("\nnearest      set               best-same: min     p5 median | best-other: max    p95 median |"
          "     t* margin acc@t*  acc@T  open@T")
    for r in reports:
        t_own, margin = best_threshold(r.best_same, r.best_other)
        bs, bo = r.best_same, r.best_other
        open_err = float((bo >= threshold).mean())
        print(f"             {r.name:<18}{_f(bs.min() if len(bs) else np.nan)}{_f(_pct(bs, 5))}{_f(_pct(bs, 50))}"
              f" |          {_f(bo.max())}{_f(_pct(bo, 95))}{_f(_pct(bo, 50))} |"
              f"{_f(t_own)}{_f(margin)}{_f(accuracy(r, t_own) if np.isfinite(t_own) else np.nan)}"
              f"{_f(accuracy(r, threshold))}{_f(open_err)}")


def group_matrix(r: Report) -> None:
    """Mean/max similarity within and between formats (invoices: few enough formats to print)."""
    names = sorted(set(r.groups))
    g = np.array(r.groups)
    print(f"\n{r.name}: mean/max similarity within (diagonal) and between formats")
    for a in names:
        ia = np.where(g == a)[0]
        cells = []
        for b in names:
            block = r.sims[np.ix_(ia, np.where(g == b)[0])]
            if a == b:
                block = block[np.triu_indices(len(ia), 1)]
            cells.append(f"{block.mean():.2f}/{block.max():.2f}" if block.size else "    -    ")
        print(f"  {a:<28} n={len(ia):<3} " + " ".join(f"{c:>9}" for c in cells))


def pooled_threshold(reports: list[Report]) -> float:
    """Best threshold over all sets' nearest-neighbour similarities (sets that group several
    senders' documents under one template excluded: there, falling below the threshold is intended)."""
    use = [r for r in reports if not r.name.endswith(("varsend", "-renderer"))]
    same = np.concatenate([r.best_same for r in use if len(r.best_same)])
    other = np.concatenate([r.best_other for r in use if len(r.best_other)])
    return best_threshold(same, other)[0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path("/work/shared/data"))
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--receipts", type=int, default=0, help="limit receipts (0 = all)")
    ap.add_argument("--synth-formats", type=int, default=60, help="synthetic formats per kind")
    ap.add_argument("--synth-docs", type=int, default=5, help="synthetic documents per format")
    ap.add_argument("--salts", type=int, default=1,
                    help="repeat with N hashing salts to show how much the threshold moves with hashing noise")
    ap.add_argument("--threshold", type=float, default=None,
                    help="report accuracy at this threshold (default: the pooled best)")
    ap.add_argument("--reader", choices=["auto", "bench"], default="auto",
                    help="auto: extractors.parsers.parse when it exists; bench: the bench's own readers")
    args = ap.parse_args(argv)
    global READER
    READER = args.reader

    sets: list[tuple[str, list[Item]]] = []
    t0 = time.perf_counter()
    if (args.data / "manifest.jsonl").exists():
        by_sender, by_renderer = load_invoices(args.data)
        sets += [("invoices", by_sender), ("invoices-renderer", by_renderer)]
        sets.append(("receipts", load_receipts(args.data, args.receipts or None)))
    else:
        print(f"no data under {args.data}: real sets skipped")
    synth = load_synthetic(args.synth_formats, args.synth_docs)
    if synth is None:
        print("synthetic: SKIPPED - extractors.synth.generate is not available (hook: load_synthetic)")
    else:
        sets += synth
    if not sets:
        return 1
    print(f"loaded {sum(len(i) for _, i in sets)} documents in {time.perf_counter() - t0:.1f}s "
          f"(reader: {READER})")

    timing = Timing([], [], [])
    cfg = DEFAULT_CONFIG
    thresholds = []
    for salt in range(args.salts):
        c = replace(cfg, hash_salt=f"salt{salt}:" if salt else "")
        reports = [build_report(name, items, args.dim, c, timing if salt == 0 else None) for name, items in sets]
        thresholds.append(pooled_threshold(reports))
        if salt == 0:
            first = reports
    t_glob = args.threshold if args.threshold is not None else thresholds[0]
    print(f"\nthreshold T = {t_glob:.3f} ({'given' if args.threshold is not None else 'pooled best over all sets'})"
          f"; settings default {Settings().match_threshold:.2f}")
    if args.salts > 1:
        print(f"pooled best over {args.salts} hashing salts: mean {np.mean(thresholds):.3f}, "
              f"sd {np.std(thresholds):.3f}, range {min(thresholds):.3f}..{max(thresholds):.3f}")
    print()
    print_tables(first, t_glob)
    print("\n(open@T: share of documents whose most similar document of ANOTHER format reaches T, i.e.\n"
          " documents that would be wrongly called known if their own format were not stored yet)")
    for r in first:
        if r.name == "invoices-renderer":
            group_matrix(r)
    ms, mp_, words = np.array(timing.ms_per_doc), np.array(timing.ms_per_page), np.array(timing.words)
    print(f"\nfingerprint time (dim {args.dim}, {len(ms)} documents, warm, best of 3): per document median {np.median(ms):.2f} ms, "
          f"p95 {np.percentile(ms, 95):.2f} ms, max {ms.max():.2f} ms; per page read median "
          f"{np.median(mp_):.2f} ms; {1000 * ms.sum() / max(words.sum(), 1):.1f} us per word read")
    return 0


if __name__ == "__main__":
    sys.exit(main())
