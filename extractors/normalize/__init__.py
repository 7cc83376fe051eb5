"""Locale-aware reading of printed values: amounts, percentages, dates, currencies, identifiers
and names. Pure functions, run on every text span of every document:

* never raise on any text (hostile, huge, any unicode); None / [] / "" when nothing is read;
* bounded work: a span is read up to 200 characters, a line (find_*) up to 1000;
* typed results that say how the value was read (separators, date order and pattern), so that
  extraction instructions can record the convention and replay it on the next document.

Amounts        parse_amount, amount_readings, find_amounts, parse_percent -> AmountParse/Reading
Dates          parse_date, date_readings, find_dates, month_number        -> DateParse/Reading
Currency       parse_currency, ISO_CODES, MINOR_DIGITS
Text           normalize_identifier, normalize_name, fold, similarity
Names          clean_name, clean_address (what is printed with a name or address but is not part of it)
Conventions    detect_number_locale, detect_date_order, detect_currency (vote over a document)

`python -m docassay.extractors.normalize` prints calls per second.
"""
from docassay.extractors.normalize._amounts import (
    AmountParse,
    AmountReading,
    amount_readings,
    find_amounts,
    parse_amount,
    parse_percent,
)
from docassay.extractors.normalize._currency import ISO_CODES, MINOR_DIGITS, parse_currency
from docassay.extractors.normalize._dates import (
    LANGUAGES,
    ORDERS,
    DateParse,
    DateReading,
    date_readings,
    find_dates,
    month_number,
    parse_date,
)
from docassay.extractors.normalize._detect import detect_currency, detect_date_order, detect_number_locale
from docassay.extractors.normalize._names import clean_address, clean_name
from docassay.extractors.normalize._text import fold, normalize_identifier, normalize_name, similarity

__all__ = [
    "AmountParse", "AmountReading", "parse_amount", "amount_readings", "find_amounts", "parse_percent",
    "DateParse", "DateReading", "parse_date", "date_readings", "find_dates", "month_number",
    "ORDERS", "LANGUAGES",
    "parse_currency", "ISO_CODES", "MINOR_DIGITS",
    "normalize_identifier", "normalize_name", "fold", "similarity", "clean_name", "clean_address",
    "detect_number_locale", "detect_date_order", "detect_currency",
]
