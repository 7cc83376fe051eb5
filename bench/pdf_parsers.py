"""Compare PDF text-layer libraries for speed and word geometry; check OCR-line reading order; time OCR.

    python bench/pdf_parsers.py [--data /work/shared/data] [--ocr N] [--receipts N]

1. PDF text layer, over every PDF in DATA/invoices:
   * `docassay` = extractors.parsers.pdf (pypdfium2 chars -> words), timed twice: words only
     (`page_words`) and the whole `parse()` (lines + tables too);
   * `pdfplumber` = pdfplumber/pdfminer.six `extract_words()` with default settings.
   Per library: median and p90 ms/page over the PDFs (each PDF's time / its pages, file already
   in memory), words found, and two geometry checks:
   * agreement: share of pdfplumber words that have a docassay word with the same text on the
     same page whose box overlaps it with IoU >= 0.5, and the median edge distance (pt) of those;
   * ink: every page is rendered by PDFium at 144 dpi; for each word, the dark pixels in the
     middle band of its box (grown by 1.5 pt left and right) give the glyphs' left and right
     edges: "ink fit" is the share of words whose box edges are both within 1 pt of them, "dx" the
     median of the larger edge distance. Words without ink (white or invisible text) are skipped.
2. OCR line files (DATA/receipts/*.ocr.json, first N): reading order when the given lines are
   kept vs rebuilt from word geometry (`build_lines`): share of receipts where a line with the word
   TOTAL also carries the printed total amount (the ground truth `total`).
3. OCR speed: `parse()` on the first N receipt scans (DATA/receipts/*.jpg), seconds per image,
   lines found, and similarity of the OCR text to the SROIE OCR ground truth: as a sorted bag of
   words (penalises spaces the recogniser drops) and as a sorted bag of characters (does not).
"""
from __future__ import annotations

import argparse
import difflib
import json
import re
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from docassay.extractors.document import BBox, Line, Word  # noqa: E402
from docassay.extractors.parsers import parse  # noqa: E402
from docassay.extractors.parsers.base import Budget  # noqa: E402
from docassay.extractors.parsers.ocr_lines import read_lines  # noqa: E402
from docassay.extractors.parsers.pdf import PDFIUM_LOCK, _View, page_words  # noqa: E402
from docassay.infra.config import Settings  # noqa: E402

RENDER_SCALE = 2.0          # 144 dpi for the ink check
INK_LEVEL = 128             # grey value below which a pixel is ink
GROW_PT = 1.5
TOL_PT = 1.0


def _pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def _iou(a: BBox, b: BBox) -> float:
    ix = max(0.0, min(a.x1, b.x1) - max(a.x0, b.x0))
    iy = max(0.0, min(a.y1, b.y1) - max(a.y0, b.y0))
    inter = ix * iy
    union = a.width * a.height + b.width * b.height - inter
    return inter / union if union > 0 else 0.0


class InkCheck:
    """Word box vs rendered glyphs, horizontally: do the box's left/right edges match the ink?

    Looks at the middle band of the box (where every letter has ink, so rules above or below the
    text do not count) in a window grown by `GROW_PT` to the left and right.
    """

    def __init__(self) -> None:
        self.fit = self.total = self.no_ink = 0
        self.dx: list[float] = []

    def add(self, gray: np.ndarray, box: BBox) -> None:
        s = RENDER_SCALE
        h, w = gray.shape
        band0, band1 = box.y0 + 0.3 * box.height, box.y1 - 0.3 * box.height
        x0, x1 = max(0, int((box.x0 - GROW_PT) * s)), min(w, int((box.x1 + GROW_PT) * s) + 1)
        y0, y1 = max(0, int(band0 * s)), min(h, int(band1 * s) + 1)
        if x1 <= x0 or y1 <= y0:
            return
        _, xs = np.nonzero(gray[y0:y1, x0:x1] < INK_LEVEL)
        if xs.size == 0:
            self.no_ink += 1
            return
        ink_x0, ink_x1 = (x0 + xs.min()) / s, (x0 + xs.max() + 1) / s
        self.total += 1
        d = max(abs(ink_x0 - box.x0), abs(ink_x1 - box.x1))
        self.fit += d <= TOL_PT
        self.dx.append(d)

    def row(self) -> str:
        share = self.fit / self.total if self.total else float("nan")
        return f"{100 * share:8.1f}%   {statistics.median(self.dx) if self.dx else float('nan'):5.2f}"


def bench_pdfs(folder: Path) -> None:
    import pdfplumber
    import pypdfium2 as pdfium

    settings = Settings()
    files = sorted(folder.glob("*.pdf"))
    if not files:
        print(f"no PDFs in {folder}")
        return
    ms = defaultdict(list)                  # library -> per-document ms/page
    words = defaultdict(int)
    ink = {"docassay": InkCheck(), "pdfplumber": InkCheck()}
    matched = total_pl = 0
    edge: list[float] = []
    n_pages = 0
    for path in files:
        data = path.read_bytes()
        # docassay, words only
        t = time.perf_counter()
        ours_pages: list[list[Word]] = []
        with PDFIUM_LOCK:
            pdf = pdfium.PdfDocument(data)
            budget = Budget(settings.limits, str(path))
            for i in range(len(pdf)):
                page = pdf[i]
                tp = page.get_textpage()
                ours_pages.append(page_words(tp, _View.of(page), budget, i + 1))
                tp.close()
                page.close()
            n = len(pdf)
        ms["docassay words"].append((time.perf_counter() - t) * 1000 / n)
        # docassay, whole parse
        t = time.perf_counter()
        doc = parse(str(path), data, settings=settings)
        ms["docassay parse()"].append((time.perf_counter() - t) * 1000 / n)
        # pdfplumber
        t = time.perf_counter()
        import io
        with pdfplumber.open(io.BytesIO(data)) as pl:
            pl_pages = [p.extract_words() for p in pl.pages]
        ms["pdfplumber"].append((time.perf_counter() - t) * 1000 / n)
        n_pages += n
        words["docassay words"] += sum(len(p) for p in ours_pages)
        words["docassay parse()"] += doc.n_words
        words["pdfplumber"] += sum(len(p) for p in pl_pages)

        for i in range(n):
            with PDFIUM_LOCK:
                page = pdf[i]
                bitmap = page.render(scale=RENDER_SCALE, grayscale=True)
                gray = bitmap.to_numpy()[:, :, 0] if bitmap.to_numpy().ndim == 3 else bitmap.to_numpy()
                gray = np.array(gray, copy=True)
                bitmap.close()
                page.close()
            by_text: dict[str, list[BBox]] = defaultdict(list)
            for w in ours_pages[i]:
                by_text[w.text].append(w.bbox)
                ink["docassay"].add(gray, w.bbox)
            for pw in pl_pages[i]:
                box = BBox(float(pw["x0"]), float(pw["top"]), float(pw["x1"]), float(pw["bottom"]))
                ink["pdfplumber"].add(gray, box)
                total_pl += 1
                best = max(by_text.get(pw["text"], []), key=lambda b: _iou(b, box), default=None)
                if best is not None and _iou(best, box) >= 0.5:
                    matched += 1
                    edge.append(max(abs(best.x0 - box.x0), abs(best.x1 - box.x1),
                                    abs(best.y0 - box.y0), abs(best.y1 - box.y1)))
        with PDFIUM_LOCK:
            pdf.close()

    print(f"\n== PDF text layer: {len(files)} PDFs, {n_pages} pages ({folder})")
    print(f"{'library':<18} {'ms/page med':>11} {'p90':>7} {'words':>7}   {'ink fit':>9} {'dx pt':>7}")
    for lib in ("docassay words", "docassay parse()", "pdfplumber"):
        key = "docassay" if lib.startswith("docassay") else "pdfplumber"
        ink_row = ink[key].row() if lib != "docassay parse()" else "     (same words)"
        print(f"{lib:<18} {statistics.median(ms[lib]):11.2f} {_pct(ms[lib], 90):7.2f} "
              f"{words[lib]:7d}   {ink_row}")
    print(f"agreement: {matched}/{total_pl} = {100 * matched / max(total_pl, 1):.1f}% of pdfplumber words "
          f"have a docassay word with the same text and IoU >= 0.5; median max-edge distance "
          f"{statistics.median(edge) if edge else float('nan'):.2f} pt")
    print(f"words without ink (skipped): docassay {ink['docassay'].no_ink}, "
          f"pdfplumber {ink['pdfplumber'].no_ink}")


_AMOUNT = re.compile(r"\d[\d,]*\.\d{2}")


def _total_on_total_line(lines: list[str], total: float) -> bool:
    for text in lines:
        if "TOTAL" in text.upper():
            for m in _AMOUNT.finditer(text):
                if abs(float(m.group().replace(",", "")) - total) < 0.005:
                    return True
    return False


def bench_receipt_lines(folder: Path, limit: int) -> None:
    files = sorted(folder.glob("*.ocr.json"))[:limit]
    if not files:
        print(f"no OCR line files in {folder}")
        return
    kept = rebuilt = n = 0
    t_parse: list[float] = []
    for path in files:
        gt_path = path.with_name(path.name.replace(".ocr.json", ".json"))
        if not gt_path.exists():
            continue
        total = json.loads(gt_path.read_text()).get("total")
        if not isinstance(total, (int, float)):
            continue
        n += 1
        lines = read_lines(json.loads(path.read_bytes()))
        kept += _total_on_total_line([t for t, _ in lines], float(total))
        t = time.perf_counter()
        doc = parse(str(path), path.read_bytes())
        t_parse.append((time.perf_counter() - t) * 1000)
        rebuilt += _total_on_total_line([ln.text for ln in doc.pages[0].lines], float(total))
    print(f"\n== OCR line files: {n} SROIE receipts with a total ({folder})")
    print(f"TOTAL label and amount on one line: given lines {kept}/{n} = {100 * kept / n:.1f}%, "
          f"rebuilt lines {rebuilt}/{n} = {100 * rebuilt / n:.1f}%")
    print(f"parse() median {statistics.median(t_parse):.2f} ms per file")


def bench_ocr(folder: Path, limit: int) -> None:
    files = sorted(folder.glob("*.jpg"))[:limit]
    if not files:
        print(f"no receipt scans in {folder}")
        return
    t0 = time.perf_counter()
    from docassay.extractors.parsers.ocr import _get_engine
    _get_engine("rapidocr")
    load_s = time.perf_counter() - t0
    secs, sims, chars, n_lines = [], [], [], []
    for path in files:
        t = time.perf_counter()
        doc = parse(str(path))
        secs.append(time.perf_counter() - t)
        n_lines.append(len(doc.pages[0].lines))
        gt = path.with_name(path.name.replace(".jpg", ".ocr.json"))
        if gt.exists():
            ref = " ".join(t for t, _ in read_lines(json.loads(gt.read_bytes())))
            ours = " ".join(w.text for w in _reading(doc.pages[0].words, doc.pages[0].lines))
            sims.append(difflib.SequenceMatcher(None, _norm(ref), _norm(ours), autojunk=False).ratio())
            chars.append(difflib.SequenceMatcher(None, sorted(_chars(ref)), sorted(_chars(ours)),
                                                 autojunk=False).ratio())
    print(f"\n== OCR (rapidocr-onnxruntime, CPU): {len(files)} receipt scans ({folder})")
    print(f"engine load {load_s:.2f} s; per image: median {statistics.median(secs):.2f} s, "
          f"min {min(secs):.2f}, max {max(secs):.2f}; median {statistics.median(n_lines):.0f} lines; "
          f"similarity to the SROIE OCR ground truth: words (sorted bag) median "
          f"{statistics.median(sims) if sims else float('nan'):.3f}, characters ignoring spaces "
          f"{statistics.median(chars) if chars else float('nan'):.3f}")


def _reading(words: list[Word], lines: list[Line]) -> list[Word]:
    return [words[i] for ln in lines for i in ln.word_ids]


def _chars(text: str) -> str:
    return re.sub(r"\s+", "", text.upper())


def _norm(text: str) -> str:
    return " ".join(sorted(re.sub(r"\s+", " ", text.upper()).split()))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=Path("/work/shared/data"))
    ap.add_argument("--ocr", type=int, default=5, help="receipt scans to OCR (0: skip)")
    ap.add_argument("--receipts", type=int, default=1000, help="OCR line files to check")
    args = ap.parse_args()
    bench_pdfs(args.data / "invoices")
    bench_receipt_lines(args.data / "receipts", args.receipts)
    if args.ocr:
        bench_ocr(args.data / "receipts", args.ocr)


if __name__ == "__main__":
    main()
