"""The checks registry: unique stable names, one module per family, a failing check isolated."""
from __future__ import annotations

from docassay.verifiers.checks import CHECKS, Signal, run_checks
from tests.verifiers.checkkit import GOOD, at, ctx, page_doc


def test_names_are_unique():
    names = [n for n, _ in CHECKS]
    assert len(names) == len(set(names)) and len(names) >= 25


def test_run_checks_on_a_real_page():
    doc = page_doc()
    ev = {"seller_name": at(doc, "seller_name", "Lieferant GmbH"), "due_date": at(doc, "due_date", "04.04.2018"),
          "gross_total": at(doc, "gross_total", "562,87")}
    signals = run_checks(ctx(GOOD, doc=doc, evidence=ev))
    assert all(isinstance(s, Signal) and s.outcome in ("pass", "fail") for s in signals)
    assert {s.field for s in signals} <= set(GOOD)
    assert not [s for s in signals if s.outcome == "fail" and s.field != "seller_vat_id"]   # a right record


def test_a_raising_check_becomes_an_error_signal():
    def broken(_):
        raise ValueError("boom")
    out = run_checks(ctx(GOOD), checks=(("broken", broken), ("ok", lambda c: [Signal("x", "ok", "pass")])))
    assert [(s.check, s.outcome, s.field) for s in out] == [("broken:error", "fail", ""), ("ok", "pass", "x")]


def test_not_a_mapping_gives_nothing():
    assert run_checks(ctx(["not", "a", "record"])) == []   # type: ignore[arg-type]


def test_number_readings_and_amount_forms():
    from docassay.verifiers.checks.page import amount_forms, number_readings
    assert number_readings("1.234,50") == {1234.5} and number_readings("1,234.50") == {1234.5}
    assert number_readings("1.234") == {1234.0, 1.234} and number_readings("7,90-") == {-7.9}
    assert number_readings("abc") == set()
    assert {"1.234,50", "1,234.50", "1234.50"} <= set(amount_forms(-1234.5))


def test_checks_agree_across_threads():
    from concurrent.futures import ThreadPoolExecutor
    docs = [page_doc() for _ in range(12)]                     # more documents than the caches hold
    cases = [ctx(GOOD, doc=d, evidence={"seller_name": at(d, "seller_name", "Lieferant GmbH"),
                                        "gross_total": at(d, "gross_total", "562,87")}) for d in docs]
    want = [run_checks(c) for c in cases]
    with ThreadPoolExecutor(max_workers=4) as pool:
        got = list(pool.map(run_checks, cases * 4))
    assert got == want * 4
    assert not [s for g in got for s in g if s.check.endswith(":error")]
