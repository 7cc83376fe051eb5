"""What the extractor saw behind each value: the evidence the `evidence` gate and the score judge.

The pipeline builds one `FieldEvidence` per top-level field of a record from the extraction's
provenance (flows/evidence.py, which may use the extractors' label vocabulary); verifiers only read
it. `how` says how the value was found:

    label      next to a printed label (an anchor locator)         strong
    table      in a table column under its header                  strong
    detected   a document-wide vote (the currency)                 strong
    pattern    by a regular expression                             fair
    reading    another reading or span offered by the document     fair (the troubleshooter's choice)
    position   only by its place on the page, with no label        weak
    person     entered or corrected by a reviewer                  strong
    unknown    no provenance (a value the extraction cannot place) fair
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FieldEvidence", "HOWS", "same_place"]

HOWS = ("label", "table", "detected", "pattern", "reading", "position", "person", "unknown")


@dataclass(frozen=True)
class FieldEvidence:
    field: str
    how: str
    text: str = ""                                   # the printed text the value was read from
    label: str | None = None                         # the printed label it was found by
    page: int | None = None
    bbox: tuple[float, float, float, float] | None = None
    value_is_label: bool = False                     # the value read is itself a label word ("Nummer")
    reads_as: str | None = None                      # a text value that reads as something else: date | amount | "label: value"

    def to_json(self) -> dict:
        d: dict[str, object] = {"how": self.how}
        if self.label:
            d["label"] = self.label
        if self.value_is_label:
            d["value_is_label"] = True
        if self.reads_as:
            d["reads_as"] = self.reads_as
        return d


def same_place(a: FieldEvidence, b: FieldEvidence, min_overlap: float = 0.5) -> bool:
    """True when two values were read from the same printed words: same page, and their boxes
    overlap by at least `min_overlap` of the smaller box."""
    if a.page is None or a.page != b.page or a.bbox is None or b.bbox is None:
        return False
    ax0, ay0, ax1, ay1 = a.bbox
    bx0, by0, bx1, by1 = b.bbox
    iw = min(ax1, bx1) - max(ax0, bx0)
    ih = min(ay1, by1) - max(ay0, by0)
    if iw <= 0 or ih <= 0:
        return False
    smaller = min((ax1 - ax0) * (ay1 - ay0), (bx1 - bx0) * (by1 - by0))
    return smaller > 0 and iw * ih >= min_overlap * smaller
