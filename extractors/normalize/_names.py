"""Cleaning a printed business name or address of what is printed with it but is not part of it.

* `clean_name`: a company registration number in brackets after the name is a separate thing
  ("99 SPEED MART S/B (519537-X)" -> "99 SPEED MART S/B"; "ACME GmbH (HRB 12345)" -> "ACME GmbH");
  a bracket group without such a number stays ("GARDENIA BAKERIES (KL) SDN BHD", "CO. (M) BHD").
* `clean_address`: a registration number printed before the address ("BR NO.: (124525-H) NO 19 ...")
  and a telephone number printed after it ("... 53300 KUALA LUMPUR 03-41318972") are not part of
  it; postcodes and house numbers stay.

Pure functions; never raise; at most `MAX_TEXT_CHARS` characters are read.
"""
from __future__ import annotations

import re

__all__ = ["clean_name", "clean_address", "registration_span", "is_registration", "is_phone"]

MAX_TEXT_CHARS = 2_000
MIN_REG_DIGITS = 5            # a registration number has at least this many digits ("(2019)" is a year)
MIN_REG_DIGIT_SHARE = 0.5     # ... and they are at least this share of the group's letters and digits
MIN_PHONE_DIGITS = 8          # a telephone number: 8-13 digits, grouped by "-", " " or "."
MAX_PHONE_DIGITS = 13

# A trailing bracket group ("(519537-X)", "(CO. REG : 860671-D)", "[HRB 12345]").
_TRAILING_GROUP = re.compile(r"\s*[(\[]([^()\[\]]{1,40})[)\]]\s*$")
# A leading "<label>: (number)" or "(number)" before the text ("BR NO.: (124525-H) ...").
_LEADING_REG = re.compile(r"^\s*(?:[^\W\d_][\w.]{0,12}\s*){0,3}[:.#]?\s*[(\[]([^()\[\]]{1,40})[)\]]\s*")
_PHONE_TOKEN = re.compile(r"^\+?\(?\d[\d().-]*$")
_PHONE_LABELS = frozenset({"tel", "tel.", "tel:", "fax", "fax:", "phone", "phone:", "telephone", "telefon", "hp", "hp:",
                           "mobile", "no", "no.", "no:", "t", "t:", "/"})
MAX_PHONE_TOKENS = 4          # "+60 3-5519 0823": a number printed in up to this many groups


def _digit_share(text: str) -> tuple[int, float]:
    alnum = [ch for ch in text if ch.isalnum()]
    digits = sum(ch.isdigit() for ch in alnum)
    return digits, (digits / len(alnum)) if alnum else 0.0


def is_registration(group: str) -> bool:
    """The inside of a bracket group reads as a registration number: enough digits, mostly digits."""
    digits, share = _digit_share(group[:MAX_TEXT_CHARS])
    return digits >= MIN_REG_DIGITS and share >= MIN_REG_DIGIT_SHARE


def is_phone(token: str) -> bool:
    """A telephone number: 8-13 digits in groups, at least one separator or a leading 0 or +."""
    t = token.strip()
    digits = sum(ch.isdigit() for ch in t)
    if not MIN_PHONE_DIGITS <= digits <= MAX_PHONE_DIGITS:
        return False
    if any(ch.isalpha() for ch in t):
        return False
    return t.startswith(("0", "+", "(")) and any(ch in "-. ()" for ch in t)


def registration_span(text: str) -> tuple[int, int] | None:
    """(start, end) of a registration number in brackets at the end of `text`, or None."""
    t = text[:MAX_TEXT_CHARS]
    m = _TRAILING_GROUP.search(t)
    if m and is_registration(m.group(1)) and m.start() > 0:
        return m.start(), len(t)
    return None


# A legal form followed by a registration number without brackets ("... S/B 273500-U (KSB)").
_LEGAL_THEN_NUMBER = re.compile(
    r"(?i)(\b(?:sdn\.?\s*bhd\.?|s/b|bhd\.?|ltd\.?|limited|gmbh|inc\.?|llc|plc|corp\.?))\s+[(\[]?\s*\d{5,}-?[a-z]?(?![\w-]).*$")


def clean_name(text: str) -> str:
    """A name without the registration number printed after it (in brackets, or after its legal form)."""
    if not isinstance(text, str):
        return ""
    t = text[:MAX_TEXT_CHARS]
    m = _LEGAL_THEN_NUMBER.search(t)
    if m:
        t = t[:m.end(1)]
    for _ in range(3):                          # "NAME (12345-X) (GST 0012345678)"
        span = registration_span(t)
        if span is None:
            break
        t = t[:span[0]].rstrip()
    return t


def clean_address(text: str) -> str:
    """An address without a registration number before it or a telephone number after it."""
    if not isinstance(text, str):
        return ""
    t = text[:MAX_TEXT_CHARS]
    m = _LEADING_REG.match(t)
    if m and is_registration(m.group(1)) and m.end() < len(t):
        t = t[m.end():]
    return _strip_trailing_phone(t)


def _strip_trailing_phone(t: str) -> str:
    toks = t.rstrip(" .,;").split()
    for k in range(min(MAX_PHONE_TOKENS, len(toks) - 1), 0, -1):
        tail = toks[-k:]
        if all(_PHONE_TOKEN.match(x) for x in tail) and is_phone(" ".join(tail)):
            toks = toks[:-k]
            while len(toks) > 1 and toks[-1].casefold() in _PHONE_LABELS:
                toks.pop()                      # "... KL TEL: 03-1234 5678": the label goes with the number
            return " ".join(toks)
    return t
