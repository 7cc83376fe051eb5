"""Conformance cases of the identifier checks (verifiers.checks.identifiers)."""
from __future__ import annotations

import pytest

from docassay.verifiers.checks import identifiers as I
from tests.verifiers.checkkit import GOOD, assert_conformant, by, ctx, page_doc


def test_vat_format_and_checksum():
    s = I.vat_format(ctx(GOOD)) + I.vat_checksum(ctx(GOOD))
    assert by(s, "seller_vat_id", "vat_format") == ["pass"]
    assert by(s, "seller_vat_id", "vat_checksum") == ["pass"]


def test_placeholder_id_keeps_its_shape_but_fails_the_checksum():
    rec = dict(GOOD, seller_vat_id="DE123456789")
    assert by(I.vat_format(ctx(rec)), "seller_vat_id", "vat_format") == ["pass"]
    assert by(I.vat_checksum(ctx(rec)), "seller_vat_id", "vat_checksum") == ["fail"]


@pytest.mark.parametrize("value", ["GB91", "DE19787878784", "DE 12"])
def test_vat_format_fails_wrong_shapes(value):
    assert by(I.vat_format(ctx(dict(GOOD, seller_vat_id=value))), "seller_vat_id", "vat_format") == ["fail"]
    assert I.vat_checksum(ctx(dict(GOOD, seller_vat_id=value))) == []


def test_vat_of_other_countries():
    for v in ("ATU13585627", "NL004495445B01", "FR40303265045"):
        assert by(I.vat_checksum(ctx(dict(GOOD, seller_vat_id=v))), "seller_vat_id", "vat_checksum") == ["pass"]


def test_swiss_uid_without_vat_suffix():
    rec = dict(GOOD, seller_vat_id="CHE-123.456.788")
    assert by(I.vat_format(ctx(rec)), "seller_vat_id", "vat_format") == ["pass"]
    assert by(I.vat_checksum(ctx(rec)), "seller_vat_id", "vat_checksum") == ["pass"]


def test_vat_without_country_prefix_is_not_judged():
    assert I.vat_format(ctx(dict(GOOD, seller_vat_id="201/113/40209"))) == []


def test_vat_not_iban():
    doc = page_doc()
    assert by(I.vat_not_iban(ctx(dict(GOOD, seller_vat_id="DE02"), doc=doc)), "seller_vat_id", "vat_not_iban") == ["fail"]
    assert by(I.vat_not_iban(ctx(GOOD, doc=doc)), "seller_vat_id", "vat_not_iban") == ["pass"]
    assert I.vat_not_iban(ctx(GOOD)) == []                         # no document: nothing to compare


def test_vat_next_to_an_iban_on_one_line_is_no_iban():
    doc = page_doc([(50, 50, "BTW BE0508185549 IBAN BE71 0961 2345 6769"), (50, 70, "IBAN ES30 9520 6130 3611 9587 3979")])
    s = I.vat_not_iban(ctx(dict(GOOD, seller_vat_id="BE0508185549"), doc=doc))
    assert by(s, "seller_vat_id", "vat_not_iban") == ["pass"]
    s = I.vat_not_iban(ctx(dict(GOOD, seller_vat_id="ES30"), doc=doc))   # labelled IBAN, check digits not needed
    assert by(s, "seller_vat_id", "vat_not_iban") == ["fail"]


def test_role_from_schema_keyword():
    schema = {"type": "object", "properties": {
        "steuer": {"type": "string", "x-docassay": {"role": "seller_vat_id"}},
        "konto": {"type": "string", "x-docassay": {"role": "iban"}},
        "swift": {"type": "string"}, "waehrung": {"type": "string", "x-docassay": {"role": "currency"}}}}
    rec = {"steuer": "GB91", "konto": "DE02120300000000202051", "swift": "BYLADEM1001", "waehrung": "XYZ"}
    c = ctx(rec, schema=schema)
    assert by(I.vat_format(c), "steuer", "vat_format") == ["fail"]
    assert by(I.iban_checksum(c), "konto", "iban_checksum") == ["pass"]
    assert by(I.bic_format(c), "swift", "bic_format") == ["pass"]
    assert by(I.currency_code(c), "waehrung", "currency_code") == ["fail"]
    bad = ctx({"konto": "DE02120300000000202052", "swift": "BY1", "waehrung": "EUR"}, schema=schema)
    assert by(I.iban_checksum(bad), "konto", "iban_checksum") == ["fail"]
    assert by(I.bic_format(bad), "swift", "bic_format") == ["fail"]
    assert by(I.currency_code(bad), "waehrung", "currency_code") == ["pass"]


def test_role_none_opts_out():
    schema = {"type": "object", "properties": {"vat_id": {"type": "string", "x-docassay": {"role": "none"}}}}
    assert I.vat_format(ctx({"vat_id": "GB91"}, schema=schema)) == []


@pytest.mark.parametrize("name,check", I.CHECKS)
def test_conformance(name, check):
    assert_conformant(check, ctx(dict(GOOD, seller_vat_id="DE02"), doc=page_doc()))
