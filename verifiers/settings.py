"""Verification settings: named tolerances, per-field weights and the policies of each gate.

Nothing here is an inline constant in a gate: every threshold a gate or the score uses is a named
setting, resolved in this order (later wins):

1. the defaults below (`TOLERANCES`, `VerifySettings` field defaults);
2. the schema's own `x-docassay` keywords — at the root for the record, on a property for a field:

       {"x-docassay": {"verify": {"optional_share": 0.5, "min_score": 0.0,
                                  "evidence": {"position_only": "warning"},
                                  "tolerances": {"amount": {"abs": 0.01, "rel": 0.001}}}}}
       "gross_total": {"type": "number",
                       "x-docassay": {"tolerance": "amount", "weight": 2}}
       "invoice_number": {"type": "string",
                          "x-docassay": {"kind": "identifier", "unique": {"per": ["seller_name"]}}}
       "issue_date": {"type": "string", "format": "date",
                      "x-docassay": {"stale": "previous"}}
       "seller_name": {"type": "string", "x-docassay": {"per_format": "same"}}
       "line_items": {"type": "array", ...,
                      "x-docassay": {"items": {"sum": "line_total", "totals": ["net_total", "gross_total"],
                                               "tolerance": "items_sum", "absent": "incomplete"}}}

   A tolerance is a name from `TOLERANCES` or an object `{"abs": .., "rel": ..}` (numbers) or
   `{"similarity": ..}` (strings);
3. keyword overrides given by the caller (`VerifySettings.from_schema(schema, optional_share=0.5)`).

Field kinds decide how a value is compared (`tolerance.py`): `amount`/`quantity`/`number` with an
absolute and relative tolerance, `text` by normalised similarity, `identifier`, `date`, `code`,
`integer`, `boolean` exactly. The default kind comes from the JSON Schema type: number -> amount,
integer -> integer, string with `format: date` -> date, string with a `pattern` -> code, a string
named like an identifier (`*_number`, `*_id`, `*_no`, `*_ref`) -> identifier, other strings -> text.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Mapping

from docassay.verifiers.errors import VerifyError

__all__ = ["Tolerance", "TOLERANCES", "FieldPolicy", "ItemsPolicy", "EvidencePolicy", "VerifySettings",
           "KINDS", "SEVERITIES"]

SEVERITIES = ("error", "warning", "off")
KINDS = ("amount", "quantity", "number", "integer", "text", "identifier", "date", "code", "boolean")


@dataclass(frozen=True)
class Tolerance:
    """How close a value must be to what a check expects of it to count as equal.

    `mode` is "number" (|a - e| <= max(abs, rel * max(|a|, |e|))), "similarity" (normalised string
    similarity >= `similarity`) or "exact" (equal after normalising case and white space).
    """
    mode: str
    abs: float = 0.0
    rel: float = 0.0
    similarity: float = 1.0

    def allowed(self, expected: float, actual: float) -> float:
        """The largest difference that still counts as equal for this pair of numbers."""
        return max(self.abs, self.rel * max(abs(expected), abs(actual)))


# The named tolerances. Amounts are printed rounded to the cent and totals are rounded on their
# own, so a correct amount may differ from the figure a check computes by a cent (abs) or, on
# large sums, by rounding per tax rate (rel). Line items reconcile with the totals within 10 %:
# document-level allowances and charges (EN 16931 BG-20/21) appear on no line.
TOLERANCES: dict[str, Tolerance] = {
    "amount": Tolerance("number", abs=0.02, rel=0.0001),
    "quantity": Tolerance("number", abs=0.0005, rel=0.0),
    "number": Tolerance("number", abs=1e-6, rel=1e-9),
    "integer": Tolerance("exact"),
    "text": Tolerance("similarity", similarity=0.85),
    "identifier": Tolerance("exact"),
    "date": Tolerance("exact"),
    "code": Tolerance("exact"),
    "boolean": Tolerance("exact"),
    "items_sum": Tolerance("number", abs=0.02, rel=0.10),
}

_ID_NAME = re.compile(r"(^|_)(number|no|nr|id|ref|reference|code|iban|bic)$")


@dataclass(frozen=True)
class FieldPolicy:
    """How one top-level field is compared, weighted and checked for stale values."""
    name: str
    kind: str
    tolerance: Tolerance
    weight: float = 1.0
    required: bool = False
    unique_per: tuple[str, ...] | None = None   # stale: a value already accepted with the same values of these fields
    unique_severity: str = "error"
    unique_near: tuple[str, ...] = ()           # stale: another value where these fields too equal an accepted document's
    stale_previous: bool = False                # stale: must not repeat the previous document of the format
    stale_severity: str = "error"
    same_per_format: bool = False               # consistency: holds the format's previous document's value
    same_severity: str = "error"


@dataclass(frozen=True)
class ItemsPolicy:
    """Completeness of an array of items: its `sum` column reconciles with one of `totals`."""
    field: str
    sum: str
    totals: tuple[str, ...]
    tolerance: Tolerance
    absent: str = "incomplete"                  # incomplete | allowed: items missing while a total is present


@dataclass(frozen=True)
class EvidencePolicy:
    """Severity of each kind of weak evidence (error gates, warning lowers the score, off ignores)."""
    label_as_value: str = "error"               # the value read is itself a label ("Nummer", "QTY")
    shared_span: str = "error"                  # two fields read from the same printed words
    wrong_kind: str = "error"                   # a name or text value that reads as a date or an amount
    position_only: str = "warning"              # a required value found by page position only, no label
    # What weak evidence of each kind is worth in the score (1.0 = as good as a labelled value).
    weights: Mapping[str, float] = field(default_factory=lambda: {
        "label": 1.0, "table": 1.0, "detected": 1.0, "pattern": 0.9, "reading": 0.9, "person": 1.0,
        "position": 0.7, "unknown": 0.8})
    weak_factor: float = 0.2                    # a value with an error-severity evidence finding


@dataclass(frozen=True)
class VerifySettings:
    fields: Mapping[str, FieldPolicy] = field(default_factory=dict)
    items: tuple[ItemsPolicy, ...] = ()
    evidence: EvidencePolicy = field(default_factory=EvidencePolicy)
    optional_share: float = 0.0                 # coverage: share of optional fields that must be found
    min_score: float = 0.0                      # a record scoring below this does not pass (0 = score not gating)
    empty_page_share: float = 0.0               # completeness: pages with no text allowed (0 = every page read)
    tolerances: Mapping[str, Tolerance] = field(default_factory=lambda: dict(TOLERANCES))

    def policy(self, name: str) -> FieldPolicy:
        """The policy of a top-level field; an unknown field is compared as text."""
        top = name.replace(".", "/").replace("[", "/").split("/")[0]
        p = self.fields.get(top)
        return p if p is not None else FieldPolicy(top, "text", self.tolerances["text"])

    @classmethod
    def from_schema(cls, schema: Mapping[str, Any], **overrides: Any) -> "VerifySettings":
        """Settings for a target schema (cached per schema content); raises VerifyError for a bad keyword."""
        base = _from_schema_json(json.dumps(schema, sort_keys=True, default=str))
        return replace(base, **overrides) if overrides else base


@lru_cache(maxsize=32)
def _from_schema_json(schema_json: str) -> VerifySettings:
    schema = json.loads(schema_json)
    if not isinstance(schema, Mapping):
        raise VerifyError("the schema must be a JSON object", kind="schema")
    root = _x(schema, "<root>").get("verify", {})
    if not isinstance(root, Mapping):
        raise VerifyError("x-docassay.verify must be an object", kind="schema")
    tolerances = dict(TOLERANCES)
    for name, spec in (root.get("tolerances") or {}).items():
        tolerances[name] = _tolerance(spec, tolerances, f"x-docassay.verify.tolerances.{name}",
                                      default_mode="number" if "abs" in spec or "rel" in spec else "similarity")
    props = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    fields: dict[str, FieldPolicy] = {}
    items: list[ItemsPolicy] = []
    for name, prop in props.items():
        if not isinstance(prop, Mapping):
            raise VerifyError(f"schema property {name!r} is not an object", kind="schema", field=name)
        x = _x(prop, name)
        kind = str(x.get("kind") or _default_kind(name, prop))
        if kind not in KINDS and kind != "array":
            raise VerifyError(f"{name}: unknown x-docassay kind {kind!r} (one of {', '.join(KINDS)})",
                              kind="schema", field=name)
        tol_spec = x.get("tolerance", kind if kind in tolerances else "text")
        tol = _tolerance(tol_spec, tolerances, f"{name}.x-docassay.tolerance",
                         default_mode=tolerances.get(kind, tolerances["text"]).mode)
        weight = x.get("weight", 1.0)
        if not isinstance(weight, (int, float)) or isinstance(weight, bool) or weight < 0:
            raise VerifyError(f"{name}: x-docassay weight must be a number >= 0", kind="schema", field=name)
        unique = x.get("unique")
        unique_per: tuple[str, ...] | None = None
        unique_sev = "error"
        unique_near: tuple[str, ...] = ()
        if unique:
            if unique is True:
                unique_per = ()
            elif isinstance(unique, Mapping):
                unique_per = tuple(unique.get("per") or ())
                unique_sev = _severity(unique.get("severity", "error"), name)
                near = unique.get("near") or ()
                if not isinstance(near, (list, tuple)) or not all(isinstance(n, str) and n in props for n in near):
                    raise VerifyError(f"{name}: x-docassay unique.near must be a list of the schema's fields", kind="schema",
                                      field=name)
                unique_near = tuple(near)
            else:
                raise VerifyError(f"{name}: x-docassay unique must be true or {{\"per\": [...]}}", kind="schema")
        stale = x.get("stale")
        stale_sev = "error"
        if isinstance(stale, Mapping):
            stale_sev = _severity(stale.get("severity", "error"), name)
            stale = stale.get("previous", True)
        per_format = x.get("per_format")
        same_sev = "error"
        if isinstance(per_format, Mapping):
            same_sev = _severity(per_format.get("severity", "error"), name)
            per_format = per_format.get("value", "same")
        if per_format not in (None, "same"):
            raise VerifyError(f"{name}: x-docassay per_format must be \"same\" or {{\"value\": \"same\", "
                              f"\"severity\": ...}}", kind="schema", field=name)
        fields[name] = FieldPolicy(name, kind, tol, float(weight), name in required, unique_per, unique_sev,
                                   unique_near, bool(stale), stale_sev, per_format == "same", same_sev)
        it = x.get("items")
        if it:
            if not isinstance(it, Mapping) or "sum" not in it or not it.get("totals"):
                raise VerifyError(f"{name}: x-docassay items needs 'sum' (a column) and 'totals' (fields)",
                                  kind="schema", field=name)
            absent = it.get("absent", "incomplete")
            if absent not in ("incomplete", "allowed"):
                raise VerifyError(f"{name}: x-docassay items.absent must be 'incomplete' or 'allowed'", kind="schema")
            items.append(ItemsPolicy(name, str(it["sum"]), tuple(it["totals"]),
                                     _tolerance(it.get("tolerance", "items_sum"), tolerances, f"{name}.items.tolerance",
                                                default_mode="number"), absent))
    ev = root.get("evidence") or {}
    severities: dict[str, Any] = {k: _severity(v, f"evidence.{k}") for k, v in ev.items()
                                  if k in ("label_as_value", "shared_span", "wrong_kind", "position_only")}
    evidence = EvidencePolicy(**severities)
    kw: dict[str, Any] = {}
    for key in ("optional_share", "min_score", "empty_page_share"):
        if key in root:
            v = root[key]
            if not isinstance(v, (int, float)) or not 0.0 <= float(v) <= 1.0:
                raise VerifyError(f"x-docassay.verify.{key} must be a number in [0, 1]", kind="schema")
            kw[key] = float(v)
    return VerifySettings(fields=fields, items=tuple(items), evidence=evidence, tolerances=tolerances, **kw)


def _x(node: Mapping[str, Any], where: str) -> Mapping[str, Any]:
    x = node.get("x-docassay") or {}
    if not isinstance(x, Mapping):
        raise VerifyError(f"{where}: x-docassay must be an object", kind="schema")
    return x


def _default_kind(name: str, prop: Mapping[str, Any]) -> str:
    t = prop.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), None)
    if t == "number":
        return "amount"
    if t == "integer":
        return "integer"
    if t == "boolean":
        return "boolean"
    if t == "array":
        return "array"
    if prop.get("format") in ("date", "date-time"):
        return "date"
    if "pattern" in prop or "enum" in prop:
        return "code"
    if _ID_NAME.search(name.lower()):
        return "identifier"
    return "text"


def _severity(v: object, where: str) -> str:
    if v not in SEVERITIES:
        raise VerifyError(f"{where}: severity must be one of {', '.join(SEVERITIES)}, not {v!r}", kind="schema")
    return str(v)


def _tolerance(spec: object, named: Mapping[str, Tolerance], where: str, *, default_mode: str) -> Tolerance:
    if isinstance(spec, str):
        if spec not in named:
            raise VerifyError(f"{where}: unknown tolerance {spec!r} (one of {', '.join(sorted(named))})",
                              kind="schema")
        return named[spec]
    if isinstance(spec, Mapping):
        bad = [k for k, v in spec.items() if k not in ("abs", "rel", "similarity", "mode")
               or (k != "mode" and (not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0))]
        if bad:
            raise VerifyError(f"{where}: bad tolerance keys {bad} (abs, rel: numbers >= 0; similarity in [0, 1])",
                              kind="schema")
        mode = str(spec.get("mode") or ("number" if ("abs" in spec or "rel" in spec) else
                                        "similarity" if "similarity" in spec else default_mode))
        if mode not in ("number", "similarity", "exact"):
            raise VerifyError(f"{where}: tolerance mode must be number, similarity or exact", kind="schema")
        return Tolerance(mode, float(spec.get("abs", 0.0)), float(spec.get("rel", 0.0)),
                         float(spec.get("similarity", 1.0)))
    raise VerifyError(f"{where}: a tolerance is a name or an object, not {spec!r}", kind="schema")
