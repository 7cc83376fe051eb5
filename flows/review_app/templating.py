"""Templates (Jinja2, autoescaped: document text is never markup) and the page model both the
review station and the batch report draw: a page's picture with every field's box, the
alternatives' boxes, line-item rows and the words a reviewer may click.

    environment() -> jinja2.Environment
    page_models(pages, fields, items, image) -> list[dict]
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Sequence

import jinja2
from markupsafe import Markup

from docassay.flows.page_images import PageView
from docassay.flows.review_view import FieldView, ItemBox

__all__ = ["environment", "page_models", "script_json"]

TEMPLATES = Path(__file__).parent / "templates"


def script_json(value: Any) -> Markup:
    """JSON safe inside <script type="application/json">: <, >, & and ' escaped as \\u00XX."""
    s = json.dumps(value, ensure_ascii=False, default=str)
    s = s.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026").replace("'", "\\u0027")
    s = s.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return Markup(s)


def _fmt_confidence(c: float | None) -> str:
    return "" if c is None else f"{c:.2f}"


def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)),
                             autoescape=jinja2.select_autoescape(default=True, default_for_string=True),
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["script_json"] = script_json
    env.filters["confidence"] = _fmt_confidence
    env.filters["short"] = lambda s, n=12: str(s or "")[:n]
    return env


def _box(b: Sequence[float] | None) -> dict | None:
    if not b or len(b) != 4:
        return None
    x0, y0, x1, y1 = (float(v) for v in b)
    return {"x": round(x0, 2), "y": round(y0, 2), "w": round(max(0.5, x1 - x0), 2), "h": round(max(0.5, y1 - y0), 2)}


def page_models(pages: Sequence[PageView], fields: Sequence[FieldView], items: Sequence[ItemBox],
                image: Callable[[int], str | None] | None) -> list[dict]:
    """Per page: its extent, the picture's URL (None: the words are drawn instead), and boxes."""
    out = []
    for p in pages:
        fboxes, aboxes = [], []
        for i, f in enumerate(fields):
            if f.page == p.number and (b := _box(f.bbox)):
                fboxes.append({**b, "field": f.name, "tone": f.tone, "index": i})
            for j, a in enumerate(f.alternatives):
                if a.get("page") == p.number and (b := _box(a.get("bbox"))):
                    aboxes.append({**b, "field": f.name, "alt": j})
        words = []
        for i, w in enumerate(p.words):
            b = _box(w["bbox"])
            if b:
                words.append({**b, "i": i, "text": w["text"], "size": round(max(1.0, b["h"] * 0.8), 2)})
        out.append({"number": p.number, "width": p.width, "height": p.height,
                    "image": image(p.number) if image else None, "fields": fboxes, "alternatives": aboxes,
                    "items": [{**b, "table": it.table, "index": it.index} for it in items
                              if it.page == p.number and (b := _box(it.bbox))],
                    "words": words})
    return out
