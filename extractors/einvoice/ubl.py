"""OASIS UBL 2.1 Invoice and CreditNote (XRechnung UBL, Peppol BIS Billing 3.0).

A UBL credit note states its amounts as positive numbers (the document type says it is a credit);
they are read as written. Seller and buyer names are the legal registration names (BT-27, BT-44),
else the party's trading name.
"""
from __future__ import annotations

from lxml import etree

from docassay.extractors.einvoice.model import TERM_TYPES, EInvoice
from docassay.extractors.einvoice.values import first, local_path, to_value

__all__ = ["ROOTS", "HEADER", "LINE", "read"]

ROOTS = {"Invoice": "UBL 2.1 Invoice", "CreditNote": "UBL 2.1 CreditNote"}

_SELLER = "AccountingSupplierParty/Party"
_BUYER = "AccountingCustomerParty/Party"
_TOT = "LegalMonetaryTotal"
_VAT = "PartyTaxScheme{VAT}/CompanyID"          # the tax scheme whose ID is VAT
_VAT_PRED = "[*[local-name()='TaxScheme']/*[local-name()='ID']='VAT']"

HEADER: dict[str, tuple[str, ...]] = {          # alternatives, first found wins
    "BT-1": ("ID",),
    "BT-2": ("IssueDate",),
    "BT-3": ("InvoiceTypeCode", "CreditNoteTypeCode"),
    "BT-5": ("DocumentCurrencyCode",),
    "BT-9": ("DueDate", "PaymentMeans/PaymentDueDate"),
    "BT-10": ("BuyerReference",),
    "BT-13": ("OrderReference/ID",),
    "BT-24": ("CustomizationID",),
    "BT-27": (f"{_SELLER}/PartyLegalEntity/RegistrationName", f"{_SELLER}/PartyName/Name"),
    "BT-29": (f"{_SELLER}/PartyIdentification/ID",),
    "BT-30": (f"{_SELLER}/PartyLegalEntity/CompanyID",),
    "BT-31": (f"{_SELLER}/{_VAT}",),
    "BT-35": (f"{_SELLER}/PostalAddress/StreetName",),
    "BT-37": (f"{_SELLER}/PostalAddress/CityName",),
    "BT-38": (f"{_SELLER}/PostalAddress/PostalZone",),
    "BT-40": (f"{_SELLER}/PostalAddress/Country/IdentificationCode",),
    "BT-44": (f"{_BUYER}/PartyLegalEntity/RegistrationName", f"{_BUYER}/PartyName/Name"),
    "BT-46": (f"{_BUYER}/PartyIdentification/ID",),
    "BT-48": (f"{_BUYER}/{_VAT}",),
    "BT-50": (f"{_BUYER}/PostalAddress/StreetName",),
    "BT-52": (f"{_BUYER}/PostalAddress/CityName",),
    "BT-53": (f"{_BUYER}/PostalAddress/PostalZone",),
    "BT-55": (f"{_BUYER}/PostalAddress/Country/IdentificationCode",),
    "BT-72": ("Delivery/ActualDeliveryDate",),
    "BT-83": ("PaymentMeans/PaymentID",),
    "BT-84": ("PaymentMeans/PayeeFinancialAccount/ID",),
    "BT-106": (f"{_TOT}/LineExtensionAmount",),
    "BT-107": (f"{_TOT}/AllowanceTotalAmount",),
    "BT-108": (f"{_TOT}/ChargeTotalAmount",),
    "BT-109": (f"{_TOT}/TaxExclusiveAmount",),
    "BT-110": ("TaxTotal/TaxAmount",),            # in the document currency: see _tax_total
    "BT-112": (f"{_TOT}/TaxInclusiveAmount",),
    "BT-113": (f"{_TOT}/PrepaidAmount",),
    "BT-115": (f"{_TOT}/PayableAmount",),
}
LINES = "InvoiceLine|CreditNoteLine"
LINE: dict[str, tuple[str, ...]] = {
    "BT-126": ("ID",),
    "BT-129": ("InvoicedQuantity|CreditedQuantity",),
    "BT-130": ("InvoicedQuantity|CreditedQuantity/@unitCode",),
    "BT-131": ("LineExtensionAmount",),
    "BT-146": ("Price/PriceAmount",),
    "BT-149": ("Price/BaseQuantity",),
    "BT-152": ("Item/ClassifiedTaxCategory/Percent",),
    "BT-153": ("Item/Name",),
    "BT-154": ("Item/Description",),
    "BT-155": ("Item/SellersItemIdentification/ID",),
    "BT-157": ("Item/StandardItemIdentification/ID",),
}


def _xp(path: str) -> str:
    head, _, attr = path.partition("/@")
    before, vat, after = head.partition("{VAT}")
    xp = local_path(before) + (_VAT_PRED + local_path(after) if vat else "")
    return xp + (f"/@{attr}" if attr else "")


_HEADER_XP = {bt: tuple(_xp(p) for p in ps) for bt, ps in HEADER.items()}
_LINE_XP = {bt: tuple(_xp(p) for p in ps) for bt, ps in LINE.items()}
_LINES_XP = local_path(LINES)


def _first_of(node: etree._Element, xps: tuple[str, ...]) -> tuple[object, str]:
    for xp in xps:
        found = first(node, xp)
        if found is not None:
            return found, xp
    return None, xps[0]


def read(root: etree._Element) -> EInvoice:
    name = etree.QName(root).localname
    inv = EInvoice("UBL", ROOTS[name], root)
    for bt, xps in _HEADER_XP.items():
        if bt == "BT-110":
            found = root.xpath(xps[0])
            cur = inv.terms.get("BT-5")
            same = [e for e in found if (e.get("currencyID") or cur) == cur]
            el, xp = ((same or found)[0] if found else None), xps[0]
        else:
            el, xp = _first_of(root, xps)
        value = to_value(el, TERM_TYPES[bt])
        if value is not None:
            inv.terms[bt] = value
            inv.paths[bt] = xp
    inv.line_paths = {bt: xps[0] for bt, xps in _LINE_XP.items()}
    for line_el in root.xpath(_LINES_XP):
        line: dict[str, object] = {}
        for bt, xps in _LINE_XP.items():
            el, _ = _first_of(line_el, xps)
            value = to_value(el, TERM_TYPES[bt])
            if value is not None:
                line[bt] = value
        inv.lines.append(line)
        inv.line_elements.append(line_el)
    return inv
