"""Reading typed values out of XML elements, and XPaths written by local names.

`local_path("A|B/C[@schemeID='VA']")` -> `*[local-name()='A' or local-name()='B']/*[local-name()='C'][@schemeID='VA']`:
the syntaxes' versions (ZUGFeRD 1 and 2, UBL) share paths that differ only in namespaces or in
one element's name, so each term is written once with its alternatives.
"""
from __future__ import annotations

import re
from datetime import date

from lxml import etree

__all__ = ["local_path", "text_of", "to_value", "read_date", "read_number", "first"]

_STEP = re.compile(r"^([A-Za-z0-9_|.]+|\.\.|\.)((?:\[[^\]]*\])*)$")


def local_path(path: str) -> str:
    """An XPath over local names from a '/'-separated path whose steps may list alternatives (A|B)."""
    steps = []
    for raw in path.split("/"):
        if raw == "":
            steps.append("")
            continue
        m = _STEP.match(raw)
        if m is None:
            raise ValueError(f"bad path step {raw!r} in {path!r}")
        names, preds = m.group(1), m.group(2)
        if names in (".", ".."):
            steps.append(names)
            continue
        test = " or ".join(f"local-name()='{n}'" for n in names.split("|"))
        steps.append(f"*[{test}]{preds}")
    return "/".join(steps)


def first(node: etree._Element, xpath: str) -> etree._Element | str | None:
    found = node.xpath(xpath)
    return found[0] if found else None


def text_of(found: object) -> str | None:
    """The text of an element (all its text, trimmed) or an attribute/string XPath result."""
    if found is None:
        return None
    if isinstance(found, etree._Element):
        t = "".join(found.itertext())
    else:
        t = str(found)
    t = t.strip()
    return t or None


def read_number(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return float(text.strip().replace(" ", ""))
    except ValueError:
        return None


def read_date(el: object) -> str | None:
    """ISO date from a CII DateTimeString (format 102 = YYYYMMDD; 610 = YYYYMM; 616 = YYYYWW is not a
    day) or an ISO date (UBL)."""
    if el is None:
        return None
    fmt = el.get("format") if isinstance(el, etree._Element) else None
    t = text_of(el)
    if not t:
        return None
    t = t.strip()
    try:
        if fmt in (None, "102") and re.fullmatch(r"\d{8}", t):
            return date(int(t[:4]), int(t[4:6]), int(t[6:8])).isoformat()
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", t[:10]):
            return date.fromisoformat(t[:10]).isoformat()
    except ValueError:
        return None
    return None


def to_value(found: object, vtype: str) -> object:
    """A term's value by its type: date -> ISO string, amount/quantity -> float, text/code -> str."""
    if vtype == "date":
        return read_date(found)
    t = text_of(found)
    if vtype in ("amount", "quantity"):
        return read_number(t)
    if t is not None and vtype == "text":
        t = "\n".join(line.strip() for line in t.splitlines() if line.strip())
    return t
