"""Currency codes and signs printed on documents -> ISO 4217 codes."""
from __future__ import annotations

import re

__all__ = ["ISO_CODES", "MINOR_DIGITS", "parse_currency", "is_currency_token", "token_currency",
           "minor_digits"]

# Common ISO 4217 codes, used to validate three-letter codes found in text.
ISO_CODES: frozenset[str] = frozenset("""
    EUR USD GBP JPY CHF CNY HKD SGD AUD CAD NZD TWD KRW INR PKR LKR BDT MYR IDR THB PHP VND
    SEK NOK DKK ISK PLN CZK HUF RON BGN RUB UAH TRY ILS AED SAR QAR KWD BHD OMR JOD EGP MAD
    TND NGN KES ZAR BRL MXN ARS CLP COP PEN
""".split())

# Digits after the decimal separator as amounts are usually printed, where that is not two.
MINOR_DIGITS: dict[str, int] = {
    "KWD": 3, "BHD": 3, "OMR": 3, "JOD": 3, "TND": 3,
    "JPY": 0, "KRW": 0, "VND": 0, "IDR": 0, "CLP": 0, "ISK": 0,
}

# "$" with a prefix, or "¥" with one.
_PREFIXED = {
    "US$": "USD", "U$": "USD", "A$": "AUD", "AU$": "AUD", "C$": "CAD", "CA$": "CAD",
    "HK$": "HKD", "S$": "SGD", "SG$": "SGD", "NZ$": "NZD", "NT$": "TWD", "R$": "BRL",
    "MX$": "MXN", "CN¥": "CNY", "JP¥": "JPY", "RMB¥": "CNY",
}
# Symbols that name one currency wherever they stand.
_SYMBOLS = {
    "€": "EUR", "£": "GBP", "¥": "JPY", "￥": "JPY", "₹": "INR", "₩": "KRW", "₽": "RUB",
    "₺": "TRY", "₪": "ILS", "₫": "VND", "฿": "THB", "₱": "PHP", "₦": "NGN", "₴": "UAH",
}
# Letter tokens, matched case-sensitively as whole words (digits may touch them: "RM9.00").
_WORDS = {
    "RM": "MYR", "Rs": "INR", "RS": "INR", "Rp": "IDR", "RMB": "CNY", "zł": "PLN", "Zł": "PLN",
    "Kč": "CZK", "Ft": "HUF", "Fr": "CHF", "SFr": "CHF", "sFr": "CHF", "CHF": "CHF",
}
# Words that need a digit next to them to count: they are also ordinary words, weekdays or
# abbreviations ("SDN BHD" is a Malaysian company suffix, "PEN" a receipt item, "RON" a fuel grade).
WORDLIKE_CODES = frozenset({"BHD", "PEN", "RON", "CAD", "COP", "MAD", "SAR", "TRY", "ARS", "KES", "RUB"})
_NEEDS_DIGIT = frozenset({"RS", "Ft", "Fr", "SFr", "sFr"}) | WORDLIKE_CODES
# Currency names, matched case-insensitively.
_NAMES = {
    "euro": "EUR", "euros": "EUR", "ringgit": "MYR", "rupee": "INR", "rupees": "INR",
    "yen": "JPY", "sterling": "GBP", "zloty": "PLN", "złoty": "PLN", "franken": "CHF",
}
# Tokens that mark an amount as money without telling which currency (Scandinavian krona/krone,
# dirham): valid next to an amount, but parse_currency gives None for them alone.
_AMBIGUOUS = frozenset({"kr", "Kr", "KR", "DH", "Dh", "Dhs", "DHS"})
_DOLLAR_CODES = frozenset({"USD", "AUD", "CAD", "HKD", "SGD", "NZD", "TWD", "MXN"})

_MARK_RE = re.compile(
    r"(?<![^\W\d_])(?P<pre>[^\W\d_]{1,3})(?P<sign>[$¥])"
    r"|(?P<sym>[$€£¥￥₹₩₽₺₪₫฿₱₦₴])"
    r"|(?<![^\W\d_])(?P<word>[^\W\d_]{2,9})(?![^\W\d_])"
)
_SCAN_CHARS = 200


def _digit_near(text: str, start: int, end: int) -> bool:
    """A digit within one space (and an optional dot) of text[start:end]."""
    after = text[end:end + 3].lstrip(". ")
    before = text[max(0, start - 2):start].rstrip(" ")
    return (after[:1].isdigit() and after[:1].isascii()) or (before[-1:].isdigit() and before[-1:].isascii())


def parse_currency(text: str, *, dollar: str = "USD") -> str | None:
    """The ISO 4217 code of the currency that `text` names, or None.

    Reads codes ("EUR"; three capitals, checked against `ISO_CODES`), signs ("€", "£", "¥", "₹"),
    prefixed dollars ("US$", "A$", "C$", "HK$", "S$", "NZ$", "R$"), local tokens ("RM", "Rs",
    "zł", "Kč", "Fr."/"SFr." next to a number) and a few names ("euro", "ringgit"). A bare "$"
    yields `dollar` (default USD) unless a more specific dollar or another currency is present;
    "kr" alone is ambiguous (SEK/NOK/DKK) and yields None. Two different currencies -> None.
    Only the first 200 characters are read; never raises.
    """
    if not isinstance(text, str) or not text:
        return None
    t = text[:_SCAN_CHARS]
    strong: set[str] = set()
    bare_dollar = False
    for m in _MARK_RE.finditer(t):
        pre = m.group("pre")
        if pre is not None:
            code = _PREFIXED.get(pre + m.group("sign"))
            if code:
                strong.add(code)
                continue
            code = _word_code(t, pre, m.start(), m.start() + len(pre))
            if code:
                strong.add(code)
            if m.group("sign") == "$":
                bare_dollar = True
            else:
                strong.add("JPY")
            continue
        sym = m.group("sym")
        if sym is not None:
            if sym == "$":
                bare_dollar = True
            else:
                strong.add(_SYMBOLS[sym])
            continue
        word = m.group("word")
        code = _word_code(t, word, m.start(), m.end())
        if code:
            strong.add(code)
        elif word.casefold() in ("dollar", "dollars"):
            bare_dollar = True
    if len(strong) == 1:
        return next(iter(strong))
    if strong:
        return None
    return dollar if bare_dollar else None


def _word_code(text: str, word: str, start: int, end: int) -> str | None:
    code = word if len(word) == 3 and word in ISO_CODES else _WORDS.get(word)
    if code is not None:
        if word in _NEEDS_DIGIT and not _digit_near(text, start, end):
            return None
        return code
    if len(word) >= 3:
        return _NAMES.get(word.casefold())
    return None


def is_currency_token(token: str) -> bool:
    """True when `token` (printed attached to an amount: "RM", "$", "US$", "EUR", "€", "kr.")
    denotes a currency, even an ambiguous one."""
    if not token:
        return False
    tok = token[:-1] if token.endswith(".") and len(token) > 1 else token
    return (tok in _SYMBOLS or tok == "$" or tok in _PREFIXED or tok in _WORDS
            or tok in _AMBIGUOUS or (len(tok) == 3 and tok in ISO_CODES))


def token_currency(token: str, dollar: str = "USD") -> str | None:
    """The ISO code of a currency token printed against an amount ("RM", "US$", "€", "EUR",
    "Rs."), `dollar` for a bare "$", None for an ambiguous one ("kr") or a non-currency."""
    tok = token[:-1] if token.endswith(".") and len(token) > 1 else token
    if tok == "$":
        return dollar
    code = _SYMBOLS.get(tok) or _PREFIXED.get(tok) or _WORDS.get(tok)
    if code is None and len(tok) == 3 and tok in ISO_CODES:
        code = tok
    return code


def minor_digits(code: str | None) -> int:
    """Digits usually printed after the decimal separator for this currency (2 if unknown)."""
    return MINOR_DIGITS.get(code or "", 2)
