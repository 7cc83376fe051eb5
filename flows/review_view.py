"""What the review station and the batch report show of one document: each field's value, where it
was printed, how sure docassay is, the label it was found by and the alternatives; line-item rows.

    field_views(row, schema=None, alternatives=None) -> list[FieldView]
    item_boxes(row) -> list[ItemBox]                   one outline per line-item row and page
    doubtful(row) -> list[str]                         fields a person should look at
    reasons(row) -> list[str]                          "gate/rule" of each error, for the queue

Confidence: a row's `fields` (per-field calibrated confidence: {"value", "confidence",
"status": verified|doubtful|missing, "checks"}, kept in the row or in its verification, with
the verification's `doubtful` list) when the row has them; without them the
verification's violations stand in (a field named by an error is `failing`, by a warning
`doubtful`). Each field gets a `tone` the pages colour it by: ok, doubt, bad, missing.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

__all__ = ["FieldView", "ItemBox", "field_views", "item_boxes", "doubtful", "reasons", "field_states", "tone_for",
           "CONFIDENT", "UNSURE"]

CONFIDENT = 0.9            # at or above: the box is green
UNSURE = 0.6               # at or above (and below CONFIDENT): amber; below: red


@dataclass
class FieldView:
    name: str
    value: Any
    status: str                         # verified | doubtful | failing | missing
    tone: str                           # ok | doubt | bad | missing
    confidence: float | None = None
    page: int | None = None
    bbox: list[float] | None = None
    anchor: str = ""
    text: str = ""
    messages: list[str] = field(default_factory=list)
    alternatives: list[dict] = field(default_factory=list)    # {"value", "text", "page", "bbox", "how"}
    is_table: bool = False

    @property
    def display(self) -> str:
        if self.value is None:
            return ""
        if isinstance(self.value, list):
            return f"{len(self.value)} rows"
        return self.value if isinstance(self.value, str) else _json(self.value)

    def to_json(self) -> dict:
        return {"name": self.name, "value": self.value, "display": self.display, "status": self.status,
                "tone": self.tone, "confidence": self.confidence, "page": self.page, "bbox": self.bbox,
                "anchor": self.anchor, "text": self.text, "messages": self.messages,
                "alternatives": self.alternatives, "is_table": self.is_table}


@dataclass
class ItemBox:
    table: str
    index: int
    page: int
    bbox: list[float]


def _json(v: Any) -> str:
    import json
    return json.dumps(v, ensure_ascii=False, default=str)


def field_states(row: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """The row's per-field confidence block, wherever it is kept (the row, or its verification)."""
    f = row.get("fields")
    if not isinstance(f, Mapping):
        f = (row.get("verification") or {}).get("fields")
    return {k: v for k, v in f.items() if isinstance(v, Mapping)} if isinstance(f, Mapping) else {}


def tone_for(confidence: float | None, status: str) -> str:
    if status == "missing":
        return "missing"
    if confidence is not None:
        return "ok" if confidence >= CONFIDENT else "doubt" if confidence >= UNSURE else "bad"
    return {"verified": "ok", "doubtful": "doubt", "failing": "bad"}.get(status, "doubt")


def _violations_by_field(row: Mapping[str, Any]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for v in (row.get("verification") or {}).get("violations") or []:
        if not isinstance(v, Mapping) or v.get("severity") == "off":
            continue
        for f in str(v.get("field") or "").split(","):
            f = f.strip()
            if f:
                out.setdefault(f.split("/")[0].split("[")[0], []).append(dict(v))
    return out


def _against(check: Any) -> bool:
    """A check that speaks against the value: {"check", "outcome": "fail", "detail"}."""
    return isinstance(check, Mapping) and check.get("outcome") == "fail"


def _check_message(check: Mapping[str, Any]) -> str:
    return f"check {check.get('check')}" + (f": {check['detail']}" if check.get("detail") else "")


def field_views(row: Mapping[str, Any], schema: Mapping[str, Any] | None = None,
                alternatives: Mapping[str, list[dict]] | None = None) -> list[FieldView]:
    record = row.get("record") or {}
    prov = row.get("provenance") or {}
    states = field_states(row)
    by_field = _violations_by_field(row)
    props = (schema or {}).get("properties") or {}
    names = list(props) + [k for k in record if k not in props] + [k for k in states if k not in props and k not in record]
    required = set((schema or {}).get("required") or [])
    out: list[FieldView] = []
    for name in names:
        value = record.get(name)
        st = states.get(name) or {}
        vs = by_field.get(name, [])
        if st:
            status = str(st.get("status") or ("missing" if value is None else "verified"))
            conf = st.get("confidence")
            conf = float(conf) if isinstance(conf, (int, float)) else None
        else:
            conf = None
            if any(v.get("severity") == "error" for v in vs):
                status = "failing"
            elif vs:
                status = "doubtful"
            elif value is None:
                status = "missing"
            else:
                status = "verified"
        if value is None and not st and not vs and name not in required:
            continue
        p = prov.get(name) if isinstance(prov.get(name), Mapping) else None
        alts = list((alternatives or {}).get(name) or [])
        if not alts:
            for v in vs:
                for a in v.get("alternatives") or []:
                    if isinstance(a, Mapping) and a.get("field", name) == name and a.get("value") != value:
                        alts.append({"value": a.get("value"), "text": a.get("text", ""), "page": a.get("page"),
                                     "bbox": a.get("bbox"), "how": a.get("how", "")})
        seen, uniq = set(), []
        for a in alts:
            k = _json(a.get("value"))
            if k not in seen and a.get("value") != value:
                seen.add(k)
                uniq.append(a)
        msgs = [f"{v.get('gate')}/{v.get('rule')}: {v.get('message')}" for v in vs]
        msgs += [_check_message(c) for c in st.get("checks") or [] if _against(c)]
        out.append(FieldView(name, value, status, tone_for(conf, status), conf,
                             p.get("page") if p else None, p.get("bbox") if p else None,
                             str(p.get("anchor") or "") if p else "", str(p.get("text") or "") if p else "",
                             msgs, uniq[:6], isinstance(value, list)))
    return out


def item_boxes(row: Mapping[str, Any]) -> list[ItemBox]:
    """The outline of each line-item row on each page it touches: the union of its cells' boxes
    (provenance keys `<table>/<index>/<column>`)."""
    acc: dict[tuple[str, int, int], list[float]] = {}
    for key, p in (row.get("provenance") or {}).items():
        parts = str(key).split("/")
        if len(parts) != 3 or not parts[1].isdigit() or not isinstance(p, Mapping) or not p.get("bbox"):
            continue
        k = (parts[0], int(parts[1]), int(p.get("page") or 1))
        b = [float(x) for x in p["bbox"]]
        cur = acc.get(k)
        acc[k] = b if cur is None else [min(cur[0], b[0]), min(cur[1], b[1]), max(cur[2], b[2]), max(cur[3], b[3])]
    return [ItemBox(t, i, pg, b) for (t, i, pg), b in sorted(acc.items())]


def doubtful(row: Mapping[str, Any]) -> list[str]:
    """Fields a person should look at: doubtful or missing by confidence when the row has it, else
    named by a warning (errors make the whole document needs_review)."""
    listed = (row.get("verification") or {}).get("doubtful")
    if isinstance(listed, list):
        return [str(f) for f in listed]
    states = field_states(row)
    if states:
        return [k for k, v in states.items() if v.get("status") in ("doubtful", "missing")]
    return sorted({f for f, vs in _violations_by_field(row).items() if vs})


def reasons(row: Mapping[str, Any], severity: str = "error") -> list[str]:
    out: list[str] = []
    for v in (row.get("verification") or {}).get("violations") or []:
        if isinstance(v, Mapping) and v.get("severity") == severity:
            r = f"{v.get('gate')}/{v.get('rule')}"
            if r not in out:
                out.append(r)
    return out
