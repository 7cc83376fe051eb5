"""UN/CEFACT Cross Industry Invoice: ZUGFeRD 1.0 (CrossIndustryDocument), ZUGFeRD 2.x, Factur-X
(all profiles, MINIMUM to EXTENDED) and XRechnung CII (CrossIndustryInvoice, D16B).

The two generations name the same structures differently (ZUGFeRD 1 `HeaderExchangedDocument`,
`ApplicableSupplyChainTrade*`; 2.x `ExchangedDocument`, `ApplicableHeaderTrade*` and
`SpecifiedLineTrade*`), so every path below lists both. Paths are by local name: the namespace
URIs differ between versions and nothing else does.
"""
from __future__ import annotations

from lxml import etree

from docassay.extractors.einvoice.model import TERM_TYPES, EInvoice
from docassay.extractors.einvoice.values import first, local_path, to_value

__all__ = ["ROOTS", "HEADER", "LINE", "LINES", "read"]

ROOTS = {"CrossIndustryInvoice": "CII D16B (ZUGFeRD 2.x / Factur-X / XRechnung)",
         "CrossIndustryDocument": "ZUGFeRD 1.0"}

_DOC = "ExchangedDocument|HeaderExchangedDocument"
_TX = "SupplyChainTradeTransaction|SpecifiedSupplyChainTradeTransaction"
_AGR = f"{_TX}/ApplicableHeaderTradeAgreement|ApplicableSupplyChainTradeAgreement"
_DEL = f"{_TX}/ApplicableHeaderTradeDelivery|ApplicableSupplyChainTradeDelivery"
_SET = f"{_TX}/ApplicableHeaderTradeSettlement|ApplicableSupplyChainTradeSettlement"
_SUM = f"{_SET}/SpecifiedTradeSettlementHeaderMonetarySummation|SpecifiedTradeSettlementMonetarySummation"
_SELLER = f"{_AGR}/SellerTradeParty"
_BUYER = f"{_AGR}/BuyerTradeParty"

HEADER: dict[str, str] = {
    "BT-1": f"{_DOC}/ID",
    "BT-2": f"{_DOC}/IssueDateTime/DateTimeString",
    "BT-3": f"{_DOC}/TypeCode",
    "BT-5": f"{_SET}/InvoiceCurrencyCode",
    "BT-9": f"{_SET}/SpecifiedTradePaymentTerms/DueDateDateTime/DateTimeString",
    "BT-10": f"{_AGR}/BuyerReference",
    "BT-13": f"{_AGR}/BuyerOrderReferencedDocument/IssuerAssignedID|ID",
    "BT-24": "ExchangedDocumentContext|SpecifiedExchangedDocumentContext/GuidelineSpecifiedDocumentContextParameter/ID",
    "BT-27": f"{_SELLER}/Name",
    "BT-29": f"{_SELLER}/ID",
    "BT-30": f"{_SELLER}/SpecifiedLegalOrganization/ID",
    "BT-31": f"{_SELLER}/SpecifiedTaxRegistration/ID[@schemeID='VA']",
    "BT-32": f"{_SELLER}/SpecifiedTaxRegistration/ID[@schemeID='FC']",
    "BT-35": f"{_SELLER}/PostalTradeAddress/LineOne",
    "BT-37": f"{_SELLER}/PostalTradeAddress/CityName",
    "BT-38": f"{_SELLER}/PostalTradeAddress/PostcodeCode",
    "BT-40": f"{_SELLER}/PostalTradeAddress/CountryID",
    "BT-44": f"{_BUYER}/Name",
    "BT-46": f"{_BUYER}/ID",
    "BT-48": f"{_BUYER}/SpecifiedTaxRegistration/ID[@schemeID='VA']",
    "BT-50": f"{_BUYER}/PostalTradeAddress/LineOne",
    "BT-52": f"{_BUYER}/PostalTradeAddress/CityName",
    "BT-53": f"{_BUYER}/PostalTradeAddress/PostcodeCode",
    "BT-55": f"{_BUYER}/PostalTradeAddress/CountryID",
    "BT-72": f"{_DEL}/ActualDeliverySupplyChainEvent/OccurrenceDateTime/DateTimeString",
    "BT-83": f"{_SET}/PaymentReference",
    "BT-84": f"{_SET}/SpecifiedTradeSettlementPaymentMeans/PayeePartyCreditorFinancialAccount/IBANID",
    "BT-106": f"{_SUM}/LineTotalAmount",
    "BT-107": f"{_SUM}/AllowanceTotalAmount",
    "BT-108": f"{_SUM}/ChargeTotalAmount",
    "BT-109": f"{_SUM}/TaxBasisTotalAmount",
    "BT-110": f"{_SUM}/TaxTotalAmount",          # in the invoice currency: see _tax_total
    "BT-112": f"{_SUM}/GrandTotalAmount",
    "BT-113": f"{_SUM}/TotalPrepaidAmount",
    "BT-115": f"{_SUM}/DuePayableAmount",
}
LINES = f"{_TX}/IncludedSupplyChainTradeLineItem"
_LAGR = "SpecifiedLineTradeAgreement|SpecifiedSupplyChainTradeAgreement"
_LDEL = "SpecifiedLineTradeDelivery|SpecifiedSupplyChainTradeDelivery"
_LSET = "SpecifiedLineTradeSettlement|SpecifiedSupplyChainTradeSettlement"
LINE: dict[str, str] = {
    "BT-126": "AssociatedDocumentLineDocument/LineID",
    "BT-129": f"{_LDEL}/BilledQuantity",
    "BT-130": f"{_LDEL}/BilledQuantity/@unitCode",
    "BT-131": f"{_LSET}/SpecifiedTradeSettlementLineMonetarySummation|SpecifiedTradeSettlementMonetarySummation/LineTotalAmount",
    "BT-146": f"{_LAGR}/NetPriceProductTradePrice/ChargeAmount",
    "BT-148": f"{_LAGR}/GrossPriceProductTradePrice/ChargeAmount",
    "BT-149": f"{_LAGR}/NetPriceProductTradePrice/BasisQuantity",
    "BT-152": f"{_LSET}/ApplicableTradeTax/RateApplicablePercent|ApplicablePercent",
    "BT-153": "SpecifiedTradeProduct/Name",
    "BT-154": "SpecifiedTradeProduct/Description",
    "BT-155": "SpecifiedTradeProduct/SellerAssignedID",
    "BT-157": "SpecifiedTradeProduct/GlobalID",
}


def _xp(path: str) -> str:
    # Attribute steps ("@unitCode") are not local-name steps.
    head, _, attr = path.partition("/@")
    return local_path(head) + (f"/@{attr}" if attr else "")


_HEADER_XP = {bt: _xp(p) for bt, p in HEADER.items()}
_LINE_XP = {bt: _xp(p) for bt, p in LINE.items()}
_LINES_XP = local_path(LINES)


def _tax_total(root: etree._Element, currency: str | None) -> object:
    """BT-110: the TaxTotalAmount in the invoice currency (a second one, in the tax currency, is BT-111)."""
    found = root.xpath(_HEADER_XP["BT-110"])
    if currency:
        same = [e for e in found if (e.get("currencyID") or currency) == currency]
        found = same or found
    return found[0] if found else None


def read(root: etree._Element) -> EInvoice:
    name = etree.QName(root).localname
    inv = EInvoice("CII", ROOTS[name], root)
    for bt, xp in _HEADER_XP.items():
        el = first(root, xp) if bt != "BT-110" else _tax_total(root, inv.terms.get("BT-5"))  # type: ignore[arg-type]
        value = to_value(el, TERM_TYPES[bt])
        if value is not None:
            inv.terms[bt] = value
            inv.paths[bt] = xp
    inv.line_paths = dict(_LINE_XP)
    for line_el in root.xpath(_LINES_XP):
        line: dict[str, object] = {}
        for bt, xp in _LINE_XP.items():
            value = to_value(first(line_el, xp), TERM_TYPES[bt])
            if value is not None:
                line[bt] = value
        inv.lines.append(line)
        inv.line_elements.append(line_el)
    return inv
