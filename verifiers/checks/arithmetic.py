"""Arithmetic between the amounts of a record.

    totals_add_up     net + tax = gross (all three judged together: which one is wrong, the
                      calibrator weighs with the other signals)
    items_sum         the items' line totals add up to the net or the gross total (within the
                      `amount` tolerance, tighter than the completeness gate's 10 %, or half a
                      cent per line: each line rounded to the cent); on a credit note whose
                      totals carry the other sign, their sizes; or to the net with at most three
                      document-level allowances and charges printed after the item rows (a line
                      whose words mean a discount / Rabatt / Abschlag / remise or a surcharge /
                      Zuschlag / shipping / Versand, not tax; unsigned allowances reduce, a
                      printed sign is kept); a discount printed among the rows is its row's,
                      not the document's
    line_arithmetic   quantity × unit price = line total on every item that prints all three
    tax_rate          tax = rate × net for a rate printed on the document ("19 %"); with several
                      rates printed, a tax that no single rate and no mix of them can give fails
    signs_agree       net, tax and gross carry one sign (a credit note is negative throughout)
    sign_printed      an amount's sign is the one printed where it was read ("-7,90", "7,90-")
    total_covers_tax  the gross total is at least every tax amount the document prints (a line
                      whose label means tax: "GST AMT : RM4.43", "IVA 21% 10,40"): a smaller one is
                      a points figure, a saving or a tax line read as the total ("TOTAL EV :2.10",
                      "AHORRO TOTAL 0,93"): fail. Only fails (a total above its tax proves little);
                      the record's own tax total need not be read (receipts have none). A line
                      that also names a total, subtotal, payment or discount ("SUB-TOTAL (GST)
                      12.19"), a negative tax (a returned item's) and a negative total: not judged
    total_covers_subtotal  the gross total is at least every subtotal the document prints (a line
                      whose last amount is labelled a net total: "SUBTOTAL RM53.60", "TAXABLE
                      AMOUNT 50.57", "Zwischensumme 120,00"), less a cash rounding
                      (`ROUNDING_SLACK`): a smaller one is an item's price, the change, a tax or
                      a rounding line read as the total: fail. Only fails. A document that prints
                      a discount, savings, promotion, voucher or deposit cue or a negative amount
                      anywhere (what is taken off a subtotal) and a negative total are not judged

Fields by role (verifiers.checks.fields): net_total, tax_total, gross_total; arrays with
line_total / quantity / unit_price columns. Tolerances are named below or come from the schema's
settings (`amount`).
"""
from __future__ import annotations

import re
from itertools import combinations
from typing import Any, Mapping

from docassay.verifiers.checks.fields import roles_of
from docassay.verifiers.checks.labels import nearest_meanings
from docassay.verifiers.checks.page import compact, doc_lines, doc_text, lines_printing_amount, number_readings
from docassay.verifiers.checks.signal import Signal
from docassay.verifiers.checks.values import num
from docassay.verifiers.checks.vocabulary import fold, meanings_in
from docassay.verifiers.context import VerifyContext
from docassay.verifiers.evidence import FieldEvidence
from docassay.verifiers.settings import Tolerance
from docassay.verifiers.tolerance import matches

__all__ = ["totals_add_up", "items_sum", "line_arithmetic", "tax_rate", "signs_agree", "sign_printed",
           "total_covers_tax", "total_covers_subtotal", "printed_taxes", "printed_subtotals", "ROUNDING_SLACK", "LINE_TOLERANCE", "TAX_RATE_TOLERANCE", "CHECKS"]

# quantity × unit price is rounded to the cent on the line, and unit prices are often printed
# with more decimals than the line total: half a percent, at least two cents.
LINE_TOLERANCE = Tolerance("number", abs=0.02, rel=0.005)
# tax is rounded per line or per rate: one percent of the tax, at least five cents.
TAX_RATE_TOLERANCE = Tolerance("number", abs=0.05, rel=0.01)
# a tax is a share of what it is levied on (VAT / GST rates are at most 27 %)
MAX_TAX_SHARE = 0.3


def _amounts(ctx: VerifyContext) -> dict[str, tuple[str, float]]:
    """role -> (field, value) for the totals present as numbers."""
    r = roles_of(ctx.schema)
    out = {}
    for role in ("net_total", "tax_total", "gross_total"):
        f = r.first(role)
        v = num(ctx.record.get(f)) if f else None
        if f and v is not None:
            out[role] = (f, v)
    return out


def totals_add_up(ctx: VerifyContext) -> list[Signal]:
    a = _amounts(ctx)
    if len(a) < 3:
        return []
    (nf, n), (tf, t), (gf, g) = a["net_total"], a["tax_total"], a["gross_total"]
    ok = matches(ctx.cfg.tolerances["amount"], g, n + t)
    detail = (f"{nf} {n} + {tf} {t} {'=' if ok else '!='} {gf} {g}")
    return [Signal(f, "totals_add_up", "pass" if ok else "fail", detail) for f in (nf, tf, gf)]


def _items(ctx: VerifyContext) -> list[tuple[str, list[Mapping[str, Any]], Mapping[str, str]]]:
    out: list[tuple[str, list[Mapping[str, Any]], Mapping[str, str]]] = []
    for name, cols in roles_of(ctx.schema).items.items():
        rows = ctx.record.get(name)
        if isinstance(rows, list) and rows and all(isinstance(x, Mapping) for x in rows):
            out.append((name, rows, {role: col for col, role in cols.items()}))
    return out


# words that mean a document-level allowance or charge (the vocabulary's discount words are
# allowances too): printed after the item rows, they take the items' sum to the net total
_ALLOWANCE_STEMS = ("abschlag", "abschlage", "rabatt", "nachlass", "allowance", "rebate", "rabais", "remise",
                    "korting", "descuento", "discount", "reduction", "minderung")
_CHARGE_STEMS = ("zuschlag", "zuschlage", "aufschlag", "surcharge", "charge", "versand", "fracht", "transport",
                 "shipping", "freight", "porto", "packaging", "frais", "toeslag", "verzend", "recargo",
                 "envio", "handling")
_MAX_ADJUSTMENTS = 3            # an items' sum reaches the net with at most this many printed adjustments
_LINE_ROUNDING = 0.005          # each line total rounded to the cent: half a cent per line at most


def _item_row_span(dt: Any, rows: list[Mapping[str, Any]], d: str | None, vals: list[float]) -> tuple[int, int] | None:
    """(first, last) index of the printed lines holding an item's description, else of those
    printing an item's (non-zero) line total; None when none does."""
    descs = {compact(x.get(d)) for x in rows if isinstance(x.get(d), str)} if d else set()
    descs = {c for c in descs if len(c) >= 3}
    hit = [k for k, line in enumerate(dt.compact) if any(c in line for c in descs)]
    if not hit:
        hit = sorted({k for v in vals if v for k in lines_printing_amount(dt, v)})
    return (hit[0], hit[-1]) if hit else None


def _adjustments(dt: Any, after: int, sign: float) -> list[float]:
    """Signed amounts of the lines after the item rows whose words mean an allowance or a charge
    (not tax): a printed sign is kept; an unsigned allowance goes against the document's direction
    `sign` (+1, or -1 on a credit note), an unsigned charge with it. A line's amount is its last
    amount with cents."""
    out = []
    for k in range(after + 1, len(dt.lines)):
        c = dt.compact[k]
        allowance = any(w in c for w in _ALLOWANCE_STEMS)
        if allowance == any(w in c for w in _CHARGE_STEMS) or any(m[0] == "tax_total" for m in meanings_in(dt.lines[k][2])):
            continue
        toks = [t.strip("€$£") for t in dt.lines[k][2].split()]
        toks = [t for t in toks if _CENTS_TOKEN.fullmatch(t)]
        r = number_readings(toks[-1]) if toks else set()
        if len(r) != 1:
            continue
        v = next(iter(r))
        printed = toks[-1].startswith(("-", "−")) or toks[-1].endswith("-")
        out.append(v if printed else sign * (-abs(v) if allowance else abs(v)))
    return out[:12]


_CENTS_TOKEN = re.compile(r"[-−]?\d{1,3}(?:[.,']?\d{3})*[.,]\d{2}-?")


def _sum_reading(ctx: VerifyContext, total: float, n: int, totals: list[tuple[str, float]],
                 net: tuple[str, float] | None, span: tuple[int, int] | None) -> tuple[str, float, str] | None:
    """(field, value, how) of the total the items' sum reaches, else None: directly (within the
    amount tolerance and half a cent per line); as a credit note whose totals carry the other
    sign; or with the document-level allowances and charges printed after the item rows."""
    tol = ctx.cfg.tolerances["amount"]
    slack = _LINE_ROUNDING * n + 1e-9

    def near(v: float, s: float) -> bool:
        return matches(tol, v, s) or abs(v - s) <= slack

    for f, v in totals:
        if near(v, total):
            return f, v, "add up to"
    for f, v in totals:
        if v and total and (v < 0) != (total < 0) and near(abs(v), abs(total)):
            return f, v, "add up (sign apart: a credit note) to"
    if span is None or net is None:
        return None
    sign = -1.0 if total < 0 else 1.0
    adj = _adjustments(doc_text(ctx.document), span[1], sign)
    for k in range(1, min(_MAX_ADJUSTMENTS, len(adj)) + 1):
        for combo in combinations(adj, k):
            if near(net[1], total + sum(combo)):      # allowances and charges are net amounts
                shown = ", ".join(f"{c:+g}" for c in combo)
                return net[0], net[1], f"with the printed allowances/charges {shown} add up to"
    return None


def items_sum(ctx: VerifyContext) -> list[Signal]:
    a = _amounts(ctx)
    out = []
    dt = doc_text(ctx.document)
    for name, rows, col in _items(ctx):
        lt = col.get("line_total")
        vals = [num(x.get(lt)) for x in rows] if lt else []
        if not vals or any(v is None for v in vals):
            continue
        total = round(sum(v for v in vals if v is not None), 6)
        totals = [(a[r][0], a[r][1]) for r in ("net_total", "gross_total") if r in a]
        if not totals:
            continue
        span = _item_row_span(dt, rows, col.get("description"), [v for v in vals if v is not None]) if dt.lines else None
        hit = _sum_reading(ctx, total, len(rows), totals, a.get("net_total"), span)
        if hit:
            out.append(Signal(name, "items_sum", "pass", f"the {len(rows)} line totals {hit[2]} {hit[0]} {hit[1]}"))
            out.append(Signal(hit[0], "items_sum", "pass", f"equals the sum of the {len(rows)} {name} ({total})"))
        else:
            out.append(Signal(name, "items_sum", "fail",
                              f"the {len(rows)} line totals add up to {total}, not to "
                              + " or ".join(f"{f} {v}" for f, v in totals)))
    return out


def line_arithmetic(ctx: VerifyContext) -> list[Signal]:
    out = []
    for name, rows, col in _items(ctx):
        q, p, t = col.get("quantity"), col.get("unit_price"), col.get("line_total")
        if not (q and p and t):
            continue
        judged, bad = 0, []
        for i, x in enumerate(rows):
            qv, pv, tv = num(x.get(q)), num(x.get(p)), num(x.get(t))
            if qv is None or pv is None or tv is None:
                continue
            judged += 1
            if not matches(LINE_TOLERANCE, abs(tv), abs(qv * pv)):
                bad.append(f"[{i}] {qv} × {pv} = {round(qv * pv, 4)}, not {tv}")
        if not judged:
            continue
        if bad:
            out.append(Signal(name, "line_arithmetic", "fail", "; ".join(bad[:3])))
        else:
            out.append(Signal(name, "line_arithmetic", "pass", f"quantity × unit price = line total on {judged} lines"))
    return out


def tax_rate(ctx: VerifyContext) -> list[Signal]:
    a = _amounts(ctx)
    if "tax_total" not in a or "net_total" not in a:
        return []
    (tf, t), (_, n) = a["tax_total"], a["net_total"]
    if n == 0 or t == 0:
        return []                                       # zero-rated or reverse charge: nothing to compute
    rates = doc_text(ctx.document).percents
    if not rates:
        return []
    hit = next((r for r in sorted(rates) if matches(TAX_RATE_TOLERANCE, t, n * r / 100.0)), None)
    if hit is not None:
        return [Signal(tf, "tax_rate", "pass", f"{tf} {t} = {hit:g} % of {n}")]
    lo, hi = min(rates), max(rates)
    share = t / n
    if len(rates) > 1 and lo / 100.0 - 0.005 <= share <= hi / 100.0 + 0.005:
        return []                                       # a mix of the printed rates may give it
    return [Signal(tf, "tax_rate", "fail",
                   f"{tf} {t} is {100 * share:.2f} % of {n}; the document prints "
                   + ", ".join(f"{r:g} %" for r in sorted(rates)))]


def signs_agree(ctx: VerifyContext) -> list[Signal]:
    a = _amounts(ctx)
    signed = {f: v for f, v in a.values() if v != 0}
    if len(signed) < 2:
        return []
    neg = {f for f, v in signed.items() if v < 0}
    ok = not neg or len(neg) == len(signed)
    detail = ("the totals carry one sign" if ok else
              "the totals mix signs: " + ", ".join(f"{f} {v}" for f, v in signed.items()))
    return [Signal(f, "signs_agree", "pass" if ok else "fail", detail) for f in signed]


def _printed_negative(text: str) -> bool | None:
    t = text.strip()
    if not any(ch.isdigit() for ch in t):
        return None
    core = t.rstrip(" €$£%*").strip()
    return t.lstrip().startswith(("-", "−", "(")) or core.endswith("-") or " -" in t or "−" in t


def sign_printed(ctx: VerifyContext) -> list[Signal]:
    out = []
    r = roles_of(ctx.schema)
    for role in ("net_total", "tax_total", "gross_total"):
        for f in r.fields(role):
            v = num(ctx.record.get(f))
            ev = (ctx.evidence or {}).get(f)
            if v is None or v == 0 or not isinstance(ev, FieldEvidence) or not ev.text:
                continue
            printed = _printed_negative(ev.text)
            if printed is None:
                continue
            ok = printed == (v < 0)
            out.append(Signal(f, "sign_printed", "pass" if ok else "fail",
                              f"{f} {v} read from {ev.text!r}" + ("" if ok else ": the signs differ")))
    return out


_AMOUNT_TOKEN = re.compile(r"(?<![\d.,])-?\d[\d.,']*[.,]\d{2}-?(?![\d.,])")


_OTHER_AMOUNTS = frozenset({"gross_total", "net_total", "amount_due", "ambiguous_total", "payment", "discount"})


def printed_taxes(document: Any) -> list[tuple[str, float]]:
    """(line text, amount) for every printed line whose last amount (with cents) is labelled a tax
    by the words left of it ("GST AMT : RM4.43", "MwSt 19 % 89,87", "GST @6% included in total
    2.40"); the smallest reading of an ambiguous token, as a size; at most `MAX_TAX_SHARE` of the
    largest amount printed (a "tax" as large as the total is a total whose label reads as tax)."""
    out = []
    lines = [(text, ms) for _, _, text in doc_lines(document) if (ms := list(_AMOUNT_TOKEN.finditer(text)))]
    top = max((abs(x) for _, ms in lines for x in number_readings(ms[-1].group(0))), default=0.0)
    for text, ms in lines:
        label = text[:ms[-1].start()]
        near = nearest_meanings(label)
        if near is None or "tax_total" not in near[0] or _OTHER_AMOUNTS & {m for m, _, _, _ in meanings_in(label)}:
            continue                             # "SUB-TOTAL (GST) 12.19", "TOTAL 6% SUPPLIES (INC. GST)"
        sizes = list(number_readings(ms[-1].group(0)))
        if sizes and 0 < min(sizes) <= MAX_TAX_SHARE * top:   # a negative tax is a returned item's
            out.append((text.strip(), min(sizes)))
    return out


def _positive_totals(ctx: VerifyContext) -> list[tuple[str, float]]:
    """(field, value) of every gross total read above zero (a credit's sign is not judged)."""
    out: list[tuple[str, float]] = []
    for f in roles_of(ctx.schema).fields("gross_total"):
        v = num(ctx.record.get(f))
        if v is not None and v > 0:
            out.append((f, v))
    return out


def total_covers_tax(ctx: VerifyContext) -> list[Signal]:
    fields = _positive_totals(ctx)
    if not fields or ctx.document is None:
        return []
    taxes = [(t, x) for t, x in printed_taxes(ctx.document) if x > 0]
    if not taxes:
        return []
    line, tax = max(taxes, key=lambda t: t[1])
    tol = ctx.cfg.tolerances["amount"]
    return [Signal(f, "total_covers_tax", "fail", f"{f} {v} is less than the tax printed on {line[:60]!r}")
            for f, v in fields if v < tax and not matches(tol, v, tax)]


# Cash rounding takes at most a few cents off a total (to 0.05 in Malaysia, Switzerland, ...).
ROUNDING_SLACK = 0.05
_NEGATIVE_AMOUNT = re.compile(r"(?<![\d.,])-\s?\d[\d.,']*[.,]\d{2}(?![\d.,])|(?<![\d.,])\d[\d.,']*[.,]\d{2}-(?![\d.,-])|"
                              r"\(\s*\d[\d.,']*[.,]\d{2}\s*\)")
# What else is taken off a subtotal besides a `discount` (folded words): "CASH PROMOTION 34.00",
# "VOUCHER 10.00", "LESS DEPOSIT", "Gutschein", "bon de réduction", "cupón".
_TAKEN_OFF = frozenset({"promotion", "promo", "voucher", "coupon", "rebate", "redemption", "redeem", "less",
                        "deposit", "gutschein", "bon", "cupon", "vale", "tegoedbon", "waardebon", "baucar", "kupon"})


def printed_subtotals(document: Any) -> list[tuple[str, float]] | None:
    """(line text, amount) for every printed line whose last amount (with cents) is labelled a net
    total by the words left of it ("SUBTOTAL RM53.60", "Total excl. VAT 100,00"); the smallest
    reading of an ambiguous token. None when the document prints what may be taken off a subtotal:
    a discount or savings cue (or `_TAKEN_OFF`: a promotion, a voucher, a deposit), or a negative
    amount ("-2.00", "2.00-", "(2.00)")."""
    out = []
    for _, _, text in doc_lines(document):
        if ("discount" in {m for m, _, _, _ in meanings_in(text)} or _TAKEN_OFF & set(fold(text).split())
                or _NEGATIVE_AMOUNT.search(text)):
            return None
        ms = list(_AMOUNT_TOKEN.finditer(text))
        if not ms:
            continue
        near = nearest_meanings(text[:ms[-1].start()])
        if near is None or near[0] != {"net_total"}:
            continue
        sizes = list(number_readings(ms[-1].group(0)))
        if sizes and min(sizes) > 0:
            out.append((text.strip(), min(sizes)))
    return out


def total_covers_subtotal(ctx: VerifyContext) -> list[Signal]:
    fields = _positive_totals(ctx)
    if not fields or ctx.document is None:
        return []
    subs = printed_subtotals(ctx.document)
    if not subs:
        return []
    line, sub = max(subs, key=lambda t: t[1])
    return [Signal(f, "total_covers_subtotal", "fail", f"{f} {v} is less than the subtotal printed on {line[:60]!r}")
            for f, v in fields if v < sub - ROUNDING_SLACK - 1e-9]


CHECKS = (("totals_add_up", totals_add_up), ("items_sum", items_sum), ("line_arithmetic", line_arithmetic),
          ("tax_rate", tax_rate), ("signs_agree", signs_agree), ("sign_printed", sign_printed),
          ("total_covers_tax", total_covers_tax), ("total_covers_subtotal", total_covers_subtotal))
