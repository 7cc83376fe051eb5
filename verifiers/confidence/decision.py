"""Per-field confidence, status and the record's decision.

    ConfidencePolicy.from_schema(schema, default=None)  the target per field: x-docassay
                                                        `min_confidence` on a field, else the job's
                                                        (`--min-confidence`), else DEFAULT_MIN_CONFIDENCE
    assess(bases, calibrator, policy, required)       -> {field: FieldConfidence}

A field is `missing` (no value), `verified` (its confidence reaches its target) or `doubtful`.
A record is accepted (`passed`) only when its gates pass and every required field is `verified`;
otherwise it goes to review with its values kept and the doubtful fields named
(`Verification.doubtful`; the CLI line: flows/status.py).

A doubtful *optional* field (one the policy's scope does not require) of an accepted record is
left out of the delivered record by default (`omitted`: the row's `fields` keep its reading,
status `doubtful`, `"omitted": true`), so that every value a passed record delivers was verified;
the schema's `"x-docassay": {"verify": {"doubtful_optional": "keep"}}` keeps it in the record
instead (`DEFAULT_OPTIONAL_DOUBT`, chosen on dev-tune: verifiers/confidence/CARD.md).

A present field with a failing `DOUBT_CHECKS` signal (`other_document`: its label names another
document; `total_covers_subtotal`: a total below a printed subtotal with nothing taken off;
`total_last`: a total read from a line of several amounts that is not its last, a summary or an
item row's column; `label_above`: a date or number printed under a label of another field;
`label_across`: one read across a column from its label while the label prints a value of its
kind under it; `seller_with_vat`: the seller's VAT ID printed in the block naming the buyer or
another company, on the seller's name and VAT ID, one of which is wrong; `name_label_prefix`: a
party's name that begins with a label or its block's heading; `final_net`: a net total that a
later line labelling a net total contradicts) is `doubtful` whatever its confidence, which is
capped at DOUBT_CAP.

An empty optional field whose label is printed with a value (the `label_printed` /
`party_printed` checks, verifiers/checks/printed.py: the reading missed it) is shown in the row's
fields (`"status": "missing"` with the failing check). What it does to the record is the schema's
`"x-docassay": {"verify": {"missing_printed": ...}}`:
  * `confirm` (the default): the field is needed, so the record goes to review with it among the
    doubtful ones, *unless the format's trusted history confirms the absence*: the format's last
    document decided by a person (`reviewed` / `corrected`, verifiers.history `reviewed()`) left
    that field empty too. Learning only from trust: a person's decision counts, an auto-accepted
    record does not. So a format whose instructions have no locator for the field holds its first
    such document; once a person accepts it without filling the field (or corrects other fields
    only), later documents of the format pass with the check shown. With no history (one-off runs,
    `history` off) nothing confirms, and the record is held.
  * `review`: always needed (held), whatever the history says.
  * `report`: never needed (the record passes with the check shown; the old default).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Collection, Mapping, Sequence

from docassay.verifiers.checks import Signal
from docassay.verifiers.confidence.calibrator import Calibrator
from docassay.verifiers.confidence.features import FieldBasis
from docassay.verifiers.errors import VerifyError

__all__ = ["DEFAULT_MIN_CONFIDENCE", "STATUSES", "SCOPES", "OPTIONAL_DOUBT", "DEFAULT_OPTIONAL_DOUBT",
           "MISSING_PRINTED", "DEFAULT_MISSING_PRINTED", "INCOMPLETE_CHECKS", "DOUBT_CHECKS", "DOUBT_CAP",
           "holds_missing",
           "ConfidencePolicy", "FieldConfidence", "assess", "MAX_ROW_CHECKS"]

DEFAULT_MIN_CONFIDENCE = 0.9
"""The default target, chosen on dev-tune and synthetic documents only (verifiers/confidence/CARD.md)."""
STATUSES = ("verified", "doubtful", "missing")
MAX_ROW_CHECKS = 12                 # signals listed per field in a row


SCOPES = ("required", "present")
OPTIONAL_DOUBT = ("omit", "keep")
DEFAULT_OPTIONAL_DOUBT = "omit"
"""What an accepted record does with a doubtful optional value (chosen on dev-tune, CARD.md)."""
MISSING_PRINTED = ("confirm", "review", "report")
DEFAULT_MISSING_PRINTED = "confirm"
"""What an empty optional field whose label is printed with a value does to the record."""
INCOMPLETE_CHECKS = ("label_printed", "party_printed", "address_printed")   # fail signals on an empty field that make it needed
DOUBT_CHECKS = ("other_document", "total_covers_subtotal", "total_last", "label_above", "label_across",
                "seller_with_vat", "name_label_prefix", "final_net", "name_joined", "date_in_period",
                "terms_days", "terms_usual", "discount_date", "address_mixed", "sender_line", "currency_of_total",
                "seller_is_payee")
"""Checks whose failure is near-certain evidence that a value is wrong. Over the full captures
of dev-tune and synthetic seeds 0-6, 8-10 (1,529 records; BENCHMARKS.md, issue 12 "where a shop's
name ends, a private buyer"): `label_above` 11, `label_across` 3, `total_last` 12,
`total_covers_subtotal` 5, `final_net` 40, `name_label_prefix` 32, `name_joined` 3 and
`date_in_period` 8 fails (with seed 12's captures), all on wrong values; `seller_with_vat` fails a
pair of which one value is wrong (14 records of 14). Over the captures of seeds 0-6, 8-10, 12,
15-20 and dev-tune (2026-12-04, third stop; BENCHMARKS.md, "payment terms, discount dates"):
`terms_days` 4 fails, `discount_date` 3, the VAT IDs' `label_above` under another field's label 3,
`address_mixed` 73 (and 15 values that carry a title or "Tél." more than their truth, right only by
the receipts' fuzzy match), `terms_usual` 1 (as a calibrator feature it moved that date from 0.9989
to 0.9982 only), all on wrong values; `other_document` 55 wrong values and 6 right ones: five dates equal by
chance to the date of the document their label names, one invoice number under "Réf. facture:"
on a credit note. Over the captures of seeds 17-26 and dev-tune (2026-12-06; BENCHMARKS.md, "a
sender's return line"): `sender_line` 3 fails and `currency_of_total` 9, all on wrong values (no
right one; 15 and 633 right values pass them); over those and seeds 31-34, `seller_is_payee` 11
fails, all on wrong sellers (451 right ones pass). A present field with such a failing signal
is `doubtful` at any target, its confidence capped at DOUBT_CAP, whatever the calibrator says (its
weights see too few such examples to learn it)."""
DOUBT_CAP = 0.5


@dataclass(frozen=True)
class ConfidencePolicy:
    """Targets, and which fields must be verified for a record to pass: `required` (the default:
    the schema's required fields) or `present` (every field that holds a value, required or not;
    the schema's `"x-docassay": {"verify": {"verified": "present"}}`), and whether an accepted
    record leaves a doubtful optional value out (`omit`, the default) or keeps it (`keep`;
    `"x-docassay": {"verify": {"doubtful_optional": "keep"}}`)."""
    default: float = DEFAULT_MIN_CONFIDENCE
    per_field: Mapping[str, float] = field(default_factory=dict)
    scope: str = "required"
    optional_doubt: str = DEFAULT_OPTIONAL_DOUBT
    missing_printed: str = DEFAULT_MISSING_PRINTED

    def target(self, name: str) -> float:
        return float(self.per_field.get(name, self.default))

    @classmethod
    def from_schema(cls, schema: Mapping[str, Any], default: float | None = None) -> "ConfidencePolicy":
        d = DEFAULT_MIN_CONFIDENCE if default is None else _check(default, "--min-confidence")
        per: dict[str, float] = {}
        for name, prop in (schema.get("properties") or {}).items():
            x = prop.get("x-docassay") if isinstance(prop, Mapping) else None
            if isinstance(x, Mapping) and "min_confidence" in x:
                per[name] = _check(x["min_confidence"], f"{name}.x-docassay.min_confidence")
        given_root = schema.get("x-docassay")
        root = given_root if isinstance(given_root, Mapping) else {}
        given_verify = root.get("verify")
        verify = given_verify if isinstance(given_verify, Mapping) else {}
        scope = verify.get("verified", "required")
        if scope not in SCOPES:
            raise VerifyError(f"x-docassay.verify.verified must be one of {', '.join(SCOPES)}, not {scope!r}",
                              kind="schema")
        doubt = verify.get("doubtful_optional", DEFAULT_OPTIONAL_DOUBT)
        if doubt not in OPTIONAL_DOUBT:
            raise VerifyError(f"x-docassay.verify.doubtful_optional must be one of {', '.join(OPTIONAL_DOUBT)}, "
                              f"not {doubt!r}", kind="schema")
        missing = verify.get("missing_printed", DEFAULT_MISSING_PRINTED)
        if missing not in MISSING_PRINTED:
            raise VerifyError(f"x-docassay.verify.missing_printed must be one of {', '.join(MISSING_PRINTED)}, "
                              f"not {missing!r}", kind="schema")
        return cls(d, per, scope, doubt, missing)


def holds_missing(setting: str, name: str, confirmed_absent: Collection[str] = ()) -> bool:
    """Whether an empty field whose value is printed holds the record back under `setting`."""
    if setting == "report":
        return False
    return setting == "review" or name not in confirmed_absent


def _check(v: Any, where: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 <= float(v) <= 1.0:
        raise VerifyError(f"{where} must be a number in [0, 1], not {v!r}", kind="schema")
    return float(v)


@dataclass
class FieldConfidence:
    field: str
    value: Any
    confidence: float | None
    status: str                                  # verified | doubtful | missing
    target: float
    family: str
    required: bool = False                       # must be verified for the record to pass (the policy's scope)
    checks: list[Signal] = dataclasses.field(default_factory=list)
    omitted: bool = False                        # doubtful and optional: an accepted record leaves it out

    def to_json(self) -> dict:
        return {"value": self.value, "confidence": None if self.confidence is None else round(self.confidence, 4),
                "status": self.status, "family": self.family, **({"omitted": True} if self.omitted else {}),
                "checks": [{"check": s.check, "outcome": s.outcome, **({"detail": s.detail[:160]} if s.detail else {})}
                           for s in self.checks[:MAX_ROW_CHECKS]]}


def assess(bases: Mapping[str, FieldBasis], calibrator: Calibrator, policy: ConfidencePolicy,
           required: Sequence[str] = (), confirmed_absent: Collection[str] = ()) -> dict[str, FieldConfidence]:
    """`confirmed_absent`: the fields a person's decision on the format left empty (the `confirm`
    policy releases an empty printed field among them)."""
    req = set(required)
    out: dict[str, FieldConfidence] = {}
    for name, b in bases.items():
        t = policy.target(name)
        if not b.present:
            incomplete = [s for s in b.signals if s.check in INCOMPLETE_CHECKS and s.outcome == "fail"]
            must = name in req or (bool(incomplete) and holds_missing(policy.missing_printed, name, confirmed_absent))
            out[name] = FieldConfidence(name, b.value, None, "missing", t, b.family, must, list(b.signals))
            continue
        if b.features.get("how:person"):
            p = 1.0                                   # a person's value is not estimated
        else:
            p = calibrator.predict(b.family, b.features)
        vetoed = not b.features.get("how:person") and any(s.check in DOUBT_CHECKS and s.outcome == "fail"
                                                           for s in b.signals)
        if vetoed:
            p = min(p, DOUBT_CAP)
        status = "verified" if p + 1e-12 >= t and not vetoed else "doubtful"
        must = name in req or policy.scope == "present"
        out[name] = FieldConfidence(name, b.value, p, status, t, b.family, must, list(b.signals),
                                    omitted=status == "doubtful" and not must and policy.optional_doubt == "omit")
    return out
