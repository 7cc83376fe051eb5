"""Checksums and formats of identifiers (python-stdnum), and ISO 4217 currency codes.

    vat_format     a VAT ID with a country prefix has that country's shape (length, letters,
                   digits): "GB91" (the start of an IBAN) fails; "DE123456789" passes
    vat_checksum   ... and its check digits agree. Evidence, not proof: sample documents print
                   placeholder IDs whose check digits are wrong (DE123456789 fails)
    vat_not_iban   a VAT ID that is the start of an IBAN printed on the page fails
    iban_checksum  an IBAN field: country, length and mod-97 check digits
    bic_format     a BIC field: 8 or 11 characters, a known country
    currency_code  a currency field holds an active ISO 4217 code

Fields are found by role (verifiers.checks.fields): `seller_vat_id`, `buyer_vat_id`, `iban`,
`bic`, `currency`. A VAT ID without a country prefix (a German Steuernummer, a Malaysian SST
number) is not judged.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Literal

from docassay.verifiers.checks.fields import roles_of
from docassay.verifiers.checks.page import doc_lines
from docassay.verifiers.checks.signal import Outcome, Signal
from docassay.verifiers.checks.values import text
from docassay.verifiers.context import VerifyContext

__all__ = ["vat_format", "vat_checksum", "vat_not_iban", "iban_checksum", "bic_format", "currency_code",
           "ISO_4217", "CHECKS"]

# Active ISO 4217 alphabetic codes (the 2024 list; funds and precious metals left out).
ISO_4217 = frozenset("""
AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP BYN BZD
CAD CDF CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD
GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT
LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR
NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SLL SOS SRD
SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD UYU UZS VES VND VUV WST XAF XCD
XOF XPF YER ZAR ZMW ZWL
""".split())

_COMPACT = re.compile(r"[\s.\-/]")
_BANK_WORDS = re.compile(r"\b(?:IBAN|BIC|SWIFT|BTW|VAT|TVA|UST|BANK)\b")
IBAN_MIN_LENGTH = 15               # Norway's; shorter "XX00 0000 0000" runs are VAT IDs, not IBANs
_IBAN_ON_PAGE = re.compile(r"\b([A-Z]{2}\d{2}(?:\s?[A-Z0-9]{4}){2,7}(?:\s?[A-Z0-9]{1,4})?)\b")


def _compact(v: str) -> str:
    return _COMPACT.sub("", v).upper()


@lru_cache(maxsize=64)
def _vat_module(cc: str) -> Any:                  # a stdnum module (validate, compact), or None
    """stdnum's VAT module for a two-letter prefix (EL is Greece's), or None."""
    from stdnum.util import get_cc_module
    cc = {"el": "gr", "xi": "gb"}.get(cc.lower(), cc.lower())
    try:
        mod = get_cc_module(cc, "vat")
    except Exception:                       # stdnum raises plain ImportError-likes for unknown countries
        return None
    return mod if mod is not None and hasattr(mod, "validate") else None


@lru_cache(maxsize=1)
def _swiss_uid() -> Any:
    from stdnum.ch import uid
    return uid


def _vat_verdict(value: str) -> tuple[Outcome, Outcome | Literal[""]] | None:
    """(shape, checksum) verdicts of a VAT ID: each 'pass' | 'fail' | '' (not judged); None when
    the value has no country prefix stdnum knows."""
    from stdnum.exceptions import InvalidChecksum, ValidationError
    v = _compact(value)
    if len(v) < 3 or not v[:2].isalpha():
        return None
    mod = _vat_module(v[:2])
    if mod is None:
        return None
    if v.startswith("CHE") and not v.endswith(("MWST", "TVA", "IVA")):
        mod = _swiss_uid()                  # the Swiss business ID printed without its VAT suffix
    # Modules of non-EU countries take the number without its prefix (gb, ch keep "CHE").
    for candidate in (v, v[2:]):
        try:
            mod.validate(candidate)
            return "pass", "pass"
        except InvalidChecksum:
            return "pass", "fail"
        except ValidationError:
            continue
        except Exception:                   # a stdnum module bug must not stop the check
            return None
    return "fail", ""


def _vat_fields(ctx: VerifyContext) -> list[str]:
    r = roles_of(ctx.schema)
    return r.fields("seller_vat_id") + r.fields("buyer_vat_id")


def vat_format(ctx: VerifyContext) -> list[Signal]:
    out = []
    for f in _vat_fields(ctx):
        v = text(ctx.record.get(f))
        if v is None:
            continue
        verdict = _vat_verdict(v)
        if verdict is None:
            if len(_compact(v)) < 6:
                out.append(Signal(f, "vat_format", "fail", f"{v!r} is too short for a VAT ID"))
            continue
        shape, _ = verdict
        out.append(Signal(f, "vat_format", shape, f"{v!r} {'has' if shape == 'pass' else 'lacks'} "
                                                  f"the shape of a {_compact(v)[:2]} VAT ID"))
    return out


def vat_checksum(ctx: VerifyContext) -> list[Signal]:
    out = []
    for f in _vat_fields(ctx):
        v = text(ctx.record.get(f))
        verdict = _vat_verdict(v) if v else None
        checksum = verdict[1] if verdict is not None else ""
        if not checksum:
            continue
        out.append(Signal(f, "vat_checksum", checksum,
                          f"the check digits of {v!r} {'agree' if checksum == 'pass' else 'do not agree'}"))
    return out


def vat_not_iban(ctx: VerifyContext) -> list[Signal]:
    fields = [f for f in _vat_fields(ctx) if text(ctx.record.get(f))]
    if not fields:
        return []
    ibans = []
    for _, _, line in doc_lines(ctx.document):
        up = line.upper()
        found = [_compact(m) for part in _BANK_WORDS.split(up) for m in _IBAN_ON_PAGE.findall(part)]
        # An IBAN is what a line labelled "IBAN" prints in that shape, or what passes mod 97.
        ibans += [i for i in found if len(i) >= IBAN_MIN_LENGTH and ("IBAN" in up or _iban_ok(i))]
    if not ibans:
        return []
    out = []
    for f in fields:
        v = _compact(ctx.record[f])
        hit = next((i for i in ibans if len(v) >= 4 and i.startswith(v)), None)
        if hit:
            out.append(Signal(f, "vat_not_iban", "fail", f"{ctx.record[f]!r} is the start of the IBAN {hit}"))
        else:
            out.append(Signal(f, "vat_not_iban", "pass", "not part of an IBAN printed on the document"))
    return out


def _iban_ok(v: str) -> bool:
    from stdnum import iban
    try:
        return bool(iban.is_valid(v))
    except Exception:
        return False


def iban_checksum(ctx: VerifyContext) -> list[Signal]:
    out = []
    for f in roles_of(ctx.schema).fields("iban"):
        v = text(ctx.record.get(f))
        if v is None:
            continue
        ok = _iban_ok(_compact(v))
        out.append(Signal(f, "iban_checksum", "pass" if ok else "fail",
                          f"{v!r} {'is' if ok else 'is not'} a valid IBAN (country, length, check digits)"))
    return out


def bic_format(ctx: VerifyContext) -> list[Signal]:
    from stdnum import bic
    out = []
    for f in roles_of(ctx.schema).fields("bic"):
        v = text(ctx.record.get(f))
        if v is None:
            continue
        try:
            ok = bool(bic.is_valid(_compact(v)))
        except Exception:
            ok = False
        out.append(Signal(f, "bic_format", "pass" if ok else "fail",
                          f"{v!r} {'has' if ok else 'lacks'} the shape of a BIC"))
    return out


def currency_code(ctx: VerifyContext) -> list[Signal]:
    out = []
    for f in roles_of(ctx.schema).fields("currency"):
        v = ctx.record.get(f)
        if v is None:
            continue
        ok = isinstance(v, str) and v.strip().upper() in ISO_4217 and len(v.strip()) == 3
        out.append(Signal(f, "currency_code", "pass" if ok else "fail",
                          f"{v!r} {'is' if ok else 'is not'} an active ISO 4217 code"))
    return out


CHECKS = (("vat_format", vat_format), ("vat_checksum", vat_checksum), ("vat_not_iban", vat_not_iban),
          ("iban_checksum", iban_checksum), ("bic_format", bic_format), ("currency_code", currency_code))
