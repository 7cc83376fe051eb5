"""`extract --report`: `report.html` beside `results.jsonl`, one self-contained offline page.

    write_report(results_path, settings, schema=None) -> ReportInfo

The batch summary (statuses, the reasons documents did not pass, the confidence distribution,
time per stage) and, per document, its pages with every field's box coloured by confidence and
its line-item rows outlined, the fields with their labels and messages. Everything is inline:
CSS and script in the page (allowed by a Content-Security-Policy that names their hashes, nothing
else may run), page images as downscaled JPEG data: URIs; no network is needed to open it.
Document text is escaped (Jinja2 autoescape). Page images come from the document's source file
when it is local and readable, else from the bytes kept under the home (`<home>/objects`), and
are cached under `<home>/cache/pages`.
"""
from __future__ import annotations

import base64
import hashlib
import io
import json
import statistics
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from docassay.extractors.errors import ParseError
from docassay.flows import lifecycle
from docassay.flows.page_images import REPORT_WIDTH, PageCache, cache_for, has_image, load_bytes
from docassay.flows.review_app.templating import environment, page_models
from docassay.flows.review_view import field_states, field_views, item_boxes, reasons
from docassay.infra.config import Settings
from docassay.infra.errors import DocassayError

__all__ = ["ReportInfo", "write_report", "summarize_rows", "REPORT_NAME", "JPEG_QUALITY", "CONFIDENCE_BINS",
           "report_for_batch"]

REPORT_NAME = "report.html"
JPEG_QUALITY = 70
CONFIDENCE_BINS = 10
MAX_PAGES_PER_DOCUMENT = 3          # pages drawn per document (the rest are counted)
STYLE = Path(__file__).parent / "review_app" / "templates" / "report.css"
SCRIPT = Path(__file__).parent / "review_app" / "templates" / "report.js"


@dataclass
class ReportInfo:
    path: Path
    documents: int
    pages_drawn: int
    bytes: int


def _read_rows(path: Path) -> list[dict]:
    rows = []
    for line in path.read_text("utf-8").splitlines():
        line = line.strip()
        if line:
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict):
                rows.append(row)
    return rows


def summarize_rows(rows: Sequence[Mapping[str, Any]]) -> dict:
    """Statuses, reasons (gate/rule of each error, and error kinds), the confidence distribution
    (per-field confidence when rows carry it, else the verification score) and time per stage."""
    statuses = Counter(str(r.get("status")) for r in rows)
    why: Counter = Counter()
    for r in rows:
        for x in reasons(r):
            why[x] += 1
        if r.get("error"):
            why[f"error/{r['error'].get('kind')}"] += 1
    confs = [float(s["confidence"]) for r in rows for s in field_states(r).values()
             if isinstance(s.get("confidence"), (int, float))]
    what = "field confidence"
    if not confs:
        what = "verification score"
        confs = [float(r["verification"]["score"]) for r in rows
                 if isinstance((r.get("verification") or {}).get("score"), (int, float))]
    bins = [0] * CONFIDENCE_BINS
    for c in confs:
        bins[min(CONFIDENCE_BINS - 1, max(0, int(c * CONFIDENCE_BINS)))] += 1
    stages: dict[str, list[float]] = {}
    for r in rows:
        for k, v in (r.get("timings_ms") or {}).items():
            if isinstance(v, (int, float)):
                stages.setdefault(k, []).append(float(v))
    timing = [{"stage": k, "total_ms": round(sum(v), 1), "median_ms": round(statistics.median(v), 1),
               "max_ms": round(max(v), 1), "documents": len(v)}
              for k, v in sorted(stages.items(), key=lambda kv: -sum(kv[1])) if k != "total"]
    total = stages.get("total", [])
    top = max(bins, default=0) or 1
    return {"documents": len(rows), "statuses": statuses.most_common(), "reasons": why.most_common(20),
            "confidence": {"what": what, "n": len(confs), "bins": bins, "top": top,
                           "median": round(statistics.median(confs), 3) if confs else None},
            "timing": timing, "total_ms": round(sum(total), 1),
            "median_total_ms": round(statistics.median(total), 1) if total else None}


def _jpeg_uri(cache: PageCache, sha: str, data: bytes, page: int, width: int) -> str | None:
    ck = f"{sha}/page-{page}-{width}-q{JPEG_QUALITY}.jpg"
    if cache.store.exists(ck):
        jpg = cache.store.get(ck)
    else:
        png = cache.image(sha, data, page, width)
        if png is None:
            return None
        from PIL import Image
        with Image.open(io.BytesIO(png)) as im:
            out = io.BytesIO()
            im.convert("RGB").save(out, "JPEG", quality=JPEG_QUALITY, optimize=True)
        jpg = out.getvalue()
        cache.store.put(ck, jpg)
    return "data:image/jpeg;base64," + base64.b64encode(jpg).decode()


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def write_report(results_path: str | Path, settings: Settings, schema: Mapping[str, Any] | None = None, *,
                 out: str | Path | None = None, width: int = REPORT_WIDTH) -> ReportInfo:
    results_path = Path(results_path)
    rows = _read_rows(results_path)
    cache = cache_for(settings)
    objects = lifecycle.objects_for(settings)
    docs, drawn = [], 0
    for r in rows:
        sha = r.get("sha256")
        fields = field_views(r, schema)
        entry: dict[str, Any] = {"row": r, "fields": fields, "pages": [], "why": "", "more_pages": 0,
                                 "reasons": reasons(r)}
        if sha and r.get("status") != "error":
            key = lifecycle.document_key(sha, r.get("source") or "")
            data, where = load_bytes(objects, key, r.get("source"))
            if data is None:
                entry["why"] = where
            else:
                try:
                    pages = cache.pages(sha, where, data, settings)
                except (ParseError, DocassayError) as exc:
                    pages, entry["why"] = [], f"the document cannot be read: {exc.message}"
                shown = pages[:MAX_PAGES_PER_DOCUMENT]
                entry["more_pages"] = len(pages) - len(shown)
                uris = {p.number: _jpeg_uri(cache, sha, data, p.number, width) for p in shown} if has_image(data) else {}
                entry["pages"] = page_models(shown, fields, item_boxes(r), uris.get if uris else None)
                drawn += len(shown)
        docs.append(entry)
    style, script = STYLE.read_text("utf-8"), SCRIPT.read_text("utf-8")
    csp = (f"default-src 'none'; img-src data:; style-src {_csp_hash(style)}; script-src {_csp_hash(script)}; "
           "base-uri 'none'; form-action 'none'")
    html = environment().get_template("report.html").render(
        summary=summarize_rows(rows), docs=docs, results=str(results_path), style=style, script=script, csp=csp)
    target = Path(out) if out else results_path.parent / REPORT_NAME
    target.write_text(html, "utf-8")
    return ReportInfo(target, len(rows), drawn, len(html.encode()))


def report_for_batch(args: Any, out: Path) -> None:
    """`extract --report`: write the report of the batch just run; a report that cannot be written
    is said on stderr and does not change the batch's exit status."""
    import sys

    from docassay.flows.batch import load_schema
    try:
        info = write_report(Path(out) / "results.jsonl", Settings.load(home=args.home, db=args.db),
                            load_schema(args.schema))
    except (OSError, DocassayError) as exc:
        print(f"docassay: the report could not be written: {exc}", file=sys.stderr)
        return
    if not args.quiet:
        print(f"report: {info.path} ({info.documents} documents, {info.pages_drawn} pages, "
              f"{info.bytes / 1e6:.1f} MB)", file=sys.stderr)
