"""Amounts written out in words (en, de, fr, es, nl), as printed on some invoices ("Say: ...").

Integers from 0 to 999,999,999; cents are appended as "56/100". A distractor on the page: the
words name the gross total but are not a number a naive extractor can use.
"""
from __future__ import annotations

from decimal import Decimal

from docassay.extractors.synth import vocab

__all__ = ["number_to_words", "amount_in_words"]

_EN_U = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
         "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
_EN_T = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_DE_U = ["null", "eins", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun", "zehn", "elf", "zwölf",
         "dreizehn", "vierzehn", "fünfzehn", "sechzehn", "siebzehn", "achtzehn", "neunzehn"]
_DE_T = ["", "", "zwanzig", "dreißig", "vierzig", "fünfzig", "sechzig", "siebzig", "achtzig", "neunzig"]
_NL_U = ["nul", "een", "twee", "drie", "vier", "vijf", "zes", "zeven", "acht", "negen", "tien", "elf", "twaalf",
         "dertien", "veertien", "vijftien", "zestien", "zeventien", "achttien", "negentien"]
_NL_T = ["", "", "twintig", "dertig", "veertig", "vijftig", "zestig", "zeventig", "tachtig", "negentig"]
_FR_U = ["zéro", "un", "deux", "trois", "quatre", "cinq", "six", "sept", "huit", "neuf", "dix", "onze", "douze",
         "treize", "quatorze", "quinze", "seize"]
_FR_T = ["", "dix", "vingt", "trente", "quarante", "cinquante", "soixante"]
_ES_U = ["cero", "uno", "dos", "tres", "cuatro", "cinco", "seis", "siete", "ocho", "nueve", "diez", "once", "doce",
         "trece", "catorce", "quince", "dieciséis", "diecisiete", "dieciocho", "diecinueve", "veinte", "veintiuno",
         "veintidós", "veintitrés", "veinticuatro", "veinticinco", "veintiséis", "veintisiete", "veintiocho",
         "veintinueve"]
_ES_T = ["", "", "", "treinta", "cuarenta", "cincuenta", "sesenta", "setenta", "ochenta", "noventa"]
_ES_H = ["", "ciento", "doscientos", "trescientos", "cuatrocientos", "quinientos", "seiscientos", "setecientos",
         "ochocientos", "novecientos"]


def _en(n: int) -> str:
    if n < 20:
        return _EN_U[n]
    if n < 100:
        return _EN_T[n // 10] + ("-" + _EN_U[n % 10] if n % 10 else "")
    if n < 1000:
        return _EN_U[n // 100] + " hundred" + (" " + _en(n % 100) if n % 100 else "")
    for size, name in ((10 ** 6, "million"), (1000, "thousand")):
        if n >= size:
            return _en(n // size) + f" {name}" + (" " + _en(n % size) if n % size else "")
    raise AssertionError(n)


def _de(n: int, tail: bool = True) -> str:
    if n == 1:
        return "eins" if tail else "ein"
    if n < 20:
        return _DE_U[n]
    if n < 100:
        u = n % 10
        return ("ein" if u == 1 else _DE_U[u]) + "und" + _DE_T[n // 10] if u else _DE_T[n // 10]
    if n < 1000:
        return _de(n // 100, False) + "hundert" + (_de(n % 100) if n % 100 else "")
    if n < 10 ** 6:
        return _de(n // 1000, False) + "tausend" + (_de(n % 1000) if n % 1000 else "")
    m = n // 10 ** 6
    head = "eine Million" if m == 1 else _de(m, False) + " Millionen"
    return head + (" " + _de(n % 10 ** 6) if n % 10 ** 6 else "")


def _nl(n: int) -> str:
    if n < 20:
        return _NL_U[n]
    if n < 100:
        u = n % 10
        if not u:
            return _NL_T[n // 10]
        unit = _NL_U[u]
        return unit + ("ën" if unit.endswith("e") else "en") + _NL_T[n // 10]
    if n < 1000:
        h = n // 100
        return ("" if h == 1 else _nl(h)) + "honderd" + (_nl(n % 100) if n % 100 else "")
    if n < 10 ** 6:
        t = n // 1000
        return ("" if t == 1 else _nl(t)) + "duizend" + (" " + _nl(n % 1000) if n % 1000 else "")
    m = n // 10 ** 6
    return _nl(m) + " miljoen" + (" " + _nl(n % 10 ** 6) if n % 10 ** 6 else "")


def _fr(n: int) -> str:
    if n <= 16:
        return _FR_U[n]
    if n < 20:
        return "dix-" + _FR_U[n - 10]
    if n < 70:
        t, u = divmod(n, 10)
        if u == 0:
            return _FR_T[t]
        return _FR_T[t] + (" et un" if u == 1 else "-" + _FR_U[u])
    if n < 80:
        return "soixante" + (" et onze" if n == 71 else "-" + _fr(n - 60))
    if n < 100:
        r = n - 80
        if r == 0:
            return "quatre-vingts"
        return "quatre-vingt-" + _fr(r)
    if n < 1000:
        h, r = divmod(n, 100)
        head = "cent" if h == 1 else _FR_U[h] + (" cents" if r == 0 else " cent")
        return head + (" " + _fr(r) if r else "")
    if n < 10 ** 6:
        t, r = divmod(n, 1000)
        head = "mille" if t == 1 else _fr(t).removesuffix("s") + " mille"
        return head + (" " + _fr(r) if r else "")
    m, r = divmod(n, 10 ** 6)
    head = "un million" if m == 1 else _fr(m) + " millions"
    return head + (" " + _fr(r) if r else "")


def _es(n: int) -> str:
    if n < 30:
        return _ES_U[n]
    if n < 100:
        t, u = divmod(n, 10)
        return _ES_T[t] + (" y " + _ES_U[u] if u else "")
    if n < 1000:
        if n == 100:
            return "cien"
        h, r = divmod(n, 100)
        return _ES_H[h] + (" " + _es(r) if r else "")
    if n < 10 ** 6:
        t, r = divmod(n, 1000)
        head = "mil" if t == 1 else _es(t).replace("uno", "un") + " mil"
        return head + (" " + _es(r) if r else "")
    m, r = divmod(n, 10 ** 6)
    head = "un millón" if m == 1 else _es(m).replace("uno", "un") + " millones"
    return head + (" " + _es(r) if r else "")


_FUNCS = {"en": _en, "de": _de, "nl": _nl, "fr": _fr, "es": _es}


def number_to_words(n: int, lang: str) -> str:
    """`n` (0 <= n < 10**9) in words in `lang`."""
    if not 0 <= n < 10 ** 9:
        raise ValueError(f"number_to_words supports 0..999999999, got {n}")
    return _FUNCS[lang](n)


def amount_in_words(value: Decimal, lang: str, currency: str) -> str:
    """E.g. 'one thousand two hundred thirty-four euros and 56/100'."""
    whole = int(abs(value))
    cents = int((abs(value) - whole) * 100)
    lab = vocab.INVOICE_LABELS[lang]
    cur = lab["words_currency"].get(currency, currency)
    return f"{number_to_words(whole, lang)} {cur} {lab['words_and']} {cents:02d}/100"
