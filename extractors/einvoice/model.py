"""The e-invoice as read from its XML: EN 16931 business terms, whatever the syntax.

    EInvoice.terms   {"BT-1": "471102", "BT-2": "2018-03-05", "BT-112": 529.87, ...}
    EInvoice.lines   one dict per invoice line (BG-25): {"BT-153": "Trennblätter A4", "BT-129": 20.0, ...}
    EInvoice.paths   where each term was read (an XPath), for provenance and review

Dates are ISO strings (YYYY-MM-DD), amounts and quantities floats with the XML's own sign (a
credit note keeps the sign its XML gives), codes and names strings with surrounding space trimmed.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from lxml import etree

__all__ = ["EInvoice", "TermSpec", "HEADER_TERMS", "LINE_TERMS", "TERM_TYPES", "CREDIT_NOTE_CODES"]

CREDIT_NOTE_CODES = {"381", "396", "532"}          # UNTDID 1001 codes of credit notes (BT-3)


@dataclass(frozen=True)
class TermSpec:
    """One business term: its id, a short name, and its value type (text | date | amount | quantity | code)."""
    bt: str
    name: str
    type: str


HEADER_TERMS: tuple[TermSpec, ...] = (
    TermSpec("BT-1", "invoice number", "text"), TermSpec("BT-2", "issue date", "date"),
    TermSpec("BT-3", "invoice type code", "code"), TermSpec("BT-5", "invoice currency", "code"),
    TermSpec("BT-9", "payment due date", "date"), TermSpec("BT-10", "buyer reference", "text"),
    TermSpec("BT-13", "purchase order reference", "text"), TermSpec("BT-24", "specification identifier", "text"),
    TermSpec("BT-27", "seller name", "text"), TermSpec("BT-29", "seller identifier", "text"),
    TermSpec("BT-30", "seller legal registration", "text"), TermSpec("BT-31", "seller VAT identifier", "text"),
    TermSpec("BT-32", "seller tax registration", "text"), TermSpec("BT-35", "seller address line 1", "text"),
    TermSpec("BT-37", "seller city", "text"), TermSpec("BT-38", "seller post code", "text"),
    TermSpec("BT-40", "seller country", "code"), TermSpec("BT-44", "buyer name", "text"),
    TermSpec("BT-46", "buyer identifier", "text"), TermSpec("BT-48", "buyer VAT identifier", "text"),
    TermSpec("BT-50", "buyer address line 1", "text"), TermSpec("BT-52", "buyer city", "text"),
    TermSpec("BT-53", "buyer post code", "text"), TermSpec("BT-55", "buyer country", "code"),
    TermSpec("BT-72", "actual delivery date", "date"), TermSpec("BT-83", "payment reference", "text"),
    TermSpec("BT-84", "payment account IBAN", "text"), TermSpec("BT-106", "sum of line net amounts", "amount"),
    TermSpec("BT-107", "sum of allowances", "amount"), TermSpec("BT-108", "sum of charges", "amount"),
    TermSpec("BT-109", "total without VAT", "amount"), TermSpec("BT-110", "total VAT", "amount"),
    TermSpec("BT-112", "total with VAT", "amount"), TermSpec("BT-113", "paid amount", "amount"),
    TermSpec("BT-115", "amount due", "amount"),
)
LINE_TERMS: tuple[TermSpec, ...] = (
    TermSpec("BT-126", "line identifier", "text"), TermSpec("BT-129", "invoiced quantity", "quantity"),
    TermSpec("BT-130", "unit of measure", "code"), TermSpec("BT-131", "line net amount", "amount"),
    TermSpec("BT-146", "item net price", "amount"), TermSpec("BT-148", "item gross price", "amount"),
    TermSpec("BT-149", "price base quantity", "quantity"), TermSpec("BT-152", "VAT rate", "quantity"),
    TermSpec("BT-153", "item name", "text"), TermSpec("BT-154", "item description", "text"),
    TermSpec("BT-155", "seller's item identifier", "text"), TermSpec("BT-157", "item standard identifier", "text"),
)
TERM_TYPES = {t.bt: t.type for t in HEADER_TERMS + LINE_TERMS}


@dataclass
class EInvoice:
    syntax: str                                   # CII | UBL
    version: str                                  # "ZUGFeRD 1.0", "CII (ZUGFeRD 2 / Factur-X / XRechnung)", "UBL 2.1 Invoice"
    root: etree._Element
    terms: dict[str, object] = field(default_factory=dict)
    lines: list[dict[str, object]] = field(default_factory=list)
    paths: dict[str, str] = field(default_factory=dict)       # term -> XPath it was read from
    line_paths: dict[str, str] = field(default_factory=dict)  # line term -> XPath relative to a line
    attachment: str | None = None                 # the PDF attachment's name; None for a standalone XML
    line_elements: list[etree._Element] = field(default_factory=list, repr=False)

    @property
    def profile(self) -> str | None:
        v = self.terms.get("BT-24")
        return str(v) if v else None

    @property
    def is_credit_note(self) -> bool:
        return str(self.terms.get("BT-3") or "") in CREDIT_NOTE_CODES or self.version.endswith("CreditNote")

    def xpath(self, expr: str, line: etree._Element | None = None) -> list:
        """Evaluate an XPath (namespace prefixes of the document's root allowed) on the document or a line."""
        node = line if line is not None else self.root
        ns = {k: v for k, v in (self.root.nsmap or {}).items() if k}
        return node.xpath(expr, namespaces=ns)
