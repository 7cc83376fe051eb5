"""Names: a party's name is the name the party trades under by law, not a brand, a branch or a
person printed beside it.

    name_legal_form   a party's name that carries a legal form ("GmbH", "Ltd", "Sdn Bhd", "SARL",
                      "B.V.") passes, one that is nothing but legal forms ("S.L.U.") fails; one
                      without a legal form while a line of its own block (same column, within
                      `NAME_BLOCK_EMS` line heights) names a company with one fails (a shop's
                      brand or branch read instead of the company printed under it: "KIKU
                      JAPANESE RESTAURANT" above "TK DIVISION KITCHEN SDN BHD"); neither: no signal
    name_one_company  a party's name holds one company: two legal forms with a name word between
                      them ("PRALOTECH SERVICIOS SL PRANOTEX SA": a brand or parent line joined to the
                      company under it) fail; a form that continues another ("GmbH & Co. KG",
                      "SDN BHD") does not count twice. Only fails
    name_joined       a name read over several lines whose last line is a whole company by itself
                      (a legal form and a naming word) while the lines before hold no legal form
                      and are no piece of a wrapped name ("Frisch vom Bäcker" over "Borinova
                      SA"): a slogan or brand line joined to the company. Only fails
    name_extent       a name without a legal form whose block goes on, right below it, with a
                      line that reads as (part of) a name ("RESTAURANT JIAWEI" over "JIAWEI
                      HOUSE"): the name was cut short. Only fails; a line above is left alone

Legal forms are those of the data's countries and languages (`LEGAL_FORMS`), matched as whole
words after folding; positions from the value's evidence and the parsed document.
"""
from __future__ import annotations

import re

from docassay.verifiers.checks.extent import field_lines, line_next_to
from docassay.verifiers.checks.fields import roles_of
from docassay.verifiers.checks.page import compact
from docassay.verifiers.checks.plausibility import FORM_OR_TRADE, address_verdict, is_fragment, name_verdict
from docassay.verifiers.checks.signal import Signal
from docassay.verifiers.checks.values import text
from docassay.verifiers.checks.vocabulary import fold, is_legal_line, meanings_in
from docassay.verifiers.context import VerifyContext

__all__ = ["name_legal_form", "name_one_company", "name_extent", "name_joined", "name_like_line", "has_legal_form", "LEGAL_FORMS", "NAME_BLOCK_EMS", "CHECKS"]

NAME_BLOCK_EMS = 3.5          # a line this many line heights from the name's still belongs to its block
LEGAL_FORMS = (
    "gmbh", "ag", "kg", "ohg", "gbr", "ug", "kgaa", "ev", "ek",                  # de / at / ch
    "ltd", "limited", "llc", "llp", "inc", "incorporated", "corp", "corporation", "plc", "pty", "dac",  # en, ie
    "sa", "sas", "sasu", "sarl", "eurl", "sprl", "srl", "spa", "snc", "sca",     # fr / be / it / es / lu
    "bv", "nv", "vof",                                                          # nl / be
    "sl", "slu", "sau", "sll",                                                  # es
    "sdn bhd", "bhd", "berhad", "sdn", "sb", "plt",                              # my
    "aps", "ab", "oy", "asa",                                                   # nordics
)
_FORM = re.compile(r"(?<!\w)(?:" + "|".join(re.escape(f).replace(r"\ ", r"\s") for f in
                                           sorted(LEGAL_FORMS, key=len, reverse=True)) + r")(?!\w)")
_PARTY_NAMES = ("seller_name", "buyer_name")


def _folded(t: str) -> str:
    """Folded, with the dots and slashes of abbreviated forms dropped ("S/B", "B.V.", "Co. KG")."""
    return fold(re.sub(r"(?<=\w)[./](?=\w)|(?<=\w)\.(?!\w)", "", t))


def has_legal_form(t: str) -> bool:
    return bool(_FORM.search(_folded(t)))


def name_legal_form(ctx: VerifyContext) -> list[Signal]:
    out = []
    for f, role in roles_of(ctx.schema).by_field.items():
        v = text(ctx.record.get(f))
        if role not in _PARTY_NAMES or v is None:
            continue
        if has_legal_form(v):
            if not [w for w in _FORM.sub(" ", _folded(v)).split() if sum(ch.isalpha() for ch in w) >= 3]:
                out.append(Signal(f, "name_legal_form", "fail", f"{v[:40]!r} is only a legal form: a fragment of the name"))
            else:
                out.append(Signal(f, "name_legal_form", "pass", f"{v[:40]!r} carries a legal form"))
            continue
        found = field_lines(ctx, f)
        if found is None:
            continue
        page, mine = found
        lines = page.lines
        here = lines[mine[0]].bbox
        em = max(here.y1 - here.y0, 1e-6)
        value_c = compact(v)
        rival = None
        for j, ln in enumerate(lines):
            b = getattr(ln, "bbox", None)
            t = str(getattr(ln, "text", "") or "")
            if j in mine or b is None or not t.strip() or min(b.x1, here.x1) - max(b.x0, here.x0) <= 0:
                continue
            dist = max(here.y0 - b.y1, b.y0 - here.y1, 0.0)
            if dist > NAME_BLOCK_EMS * em or compact(t) in value_c or ":" in t:
                continue
            if has_legal_form(t) and sum(ch.isalpha() for ch in t) >= 4:
                rival = t
                break
        if rival is not None:
            out.append(Signal(f, "name_legal_form", "fail",
                              f"no legal form, while {rival[:40]!r} in its block names a company by one"))
    return out


MIN_NAME_WORD_LETTERS = 3      # a word that names something ("co", "&", "(m)" between two forms do not)


def name_one_company(ctx: VerifyContext) -> list[Signal]:
    out = []
    for f, role in roles_of(ctx.schema).by_field.items():
        v = text(ctx.record.get(f))
        if role not in _PARTY_NAMES or v is None:
            continue
        t = _folded(v)
        forms = list(_FORM.finditer(t))
        between = [t[a.end():b.start()] for a, b in zip(forms, forms[1:])]
        named = [w for gap in between for w in gap.split() if sum(ch.isalpha() for ch in w) >= MIN_NAME_WORD_LETTERS]
        if named:
            out.append(Signal(f, "name_one_company", "fail",
                              f"{v[:60]!r} names two companies ({forms[0].group(0)!r} ... {forms[-1].group(0)!r})"))
    return out


_WORD = re.compile(r"[^\W\d_]{2,}")
# An attention line ("z. Hd. Katrin Neumann", "T.a.v.", "Attn:", "c/o") or a branch's line ("CAWANGAN
# SERI", "Filiale Nord", "MARKT GARTENRING"), folded: printed under a name, not part of it.
_NOT_THE_NAME = re.compile(r"^(?:z\s?hd?|zhd|attn|att|attention|tav|t a v|c o|a l attention|a la atencion|"
                           r"cawangan|branch|filiale|filiaal|markt|sucursal|succursale|outlet)\b")


def name_like_line(t: str) -> bool:
    """A printed line that could be (part of) a party's name: words, no digit, not an address,
    not a label, title, sentence, contact detail or legal-form line on its own."""
    s = t.strip()
    if any(ch.isdigit() for ch in s) or not _WORD.search(s) or address_verdict(s)[0] == "pass" or is_legal_line(s):
        return False
    if meanings_in(s) or _NOT_THE_NAME.match(fold(s)):
        return False
    v = name_verdict(s)
    return v is None or v[0] == "pass"


def name_extent(ctx: VerifyContext) -> list[Signal]:
    """A party's name without a legal form whose printed block goes on with another name-like
    line right below it (same column, tightly spaced) holds too little: a name wrapped over two
    lines ("RESTAURANT JIAWEI" over "JIAWEI HOUSE"), a brand over the legal name ("TIENDA
    BENITO" over "RICHARD SASU"). Fail. Only fails; a line above a name is left alone (a brand
    printed over the legal name is as often right under the shop's name as it is wrong)."""
    out = []
    for f, role in roles_of(ctx.schema).by_field.items():
        v = text(ctx.record.get(f))
        if role not in _PARTY_NAMES or v is None or has_legal_form(v):
            continue
        found = field_lines(ctx, f)
        if found is None:
            continue
        page, mine = found
        j = line_next_to(page, mine[-1], +1)
        t = str(getattr(page.lines[j], "text", "") or "") if j is not None else None
        if t and compact(t) not in compact(v) and name_like_line(t):
            out.append(Signal(f, "name_extent", "fail",
                              f"the line below, {t[:40]!r}, goes on with the name"))
    return out


def _naming_words(t: str) -> list[str]:
    """The words of `t` that name something: not legal forms or trade words, three letters or more,
    outside brackets (a branch: "(SEMENYIH) SDN BHD" names nothing by itself)."""
    rest = FORM_OR_TRADE.sub(" ", _FORM.sub(" ", _folded(re.sub(r"\([^)]*\)", " ", t))))
    return [w for w in rest.split() if sum(ch.isalpha() for ch in w) >= MIN_NAME_WORD_LETTERS]


def name_joined(ctx: VerifyContext) -> list[Signal]:
    """A name read over several printed lines whose last line is a whole company on its own (a
    legal form and a word that names it: "Borinova SA") while the lines before it hold no legal
    form and neither end nor begin a wrapped name (no connector, no open bracket, no label):
    a slogan or brand line joined to the company under it ("Frisch vom Bäcker" over "Borinova
    SA"). Fail. Only fails; a name wrapped mid-way ("POPULAR BOOK" over "CO. (M) SDN BHD", whose
    last line names nothing by itself) is left alone."""
    out = []
    for f, role in roles_of(ctx.schema).by_field.items():
        v = text(ctx.record.get(f))
        if role not in _PARTY_NAMES or v is None:
            continue
        found = field_lines(ctx, f)
        if found is None or len(found[1]) < 2:
            continue
        page, mine = found
        parts = [str(getattr(page.lines[i], "text", "") or "").strip() for i in mine]
        last, before = parts[-1], " ".join(parts[:-1])
        value_c = compact(v)
        if not before or compact(before) not in value_c or compact(last) not in value_c:
            continue
        if not has_legal_form(last) or has_legal_form(before) or not _naming_words(last):
            continue
        if is_fragment(last) or is_fragment(before) or ":" in last or ":" in before:
            continue
        out.append(Signal(f, "name_joined", "fail",
                          f"{before[:40]!r} is joined to {last[:40]!r}, a whole company printed under it"))
    return out


CHECKS = (("name_legal_form", name_legal_form), ("name_one_company", name_one_company), ("name_extent", name_extent),
          ("name_joined", name_joined))
