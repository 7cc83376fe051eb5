"""bench.calibrate_cv: folds by group, the optional-field policies, out-of-fold confidences; and
bench.calibrate's risk-coverage under the `omit` policy. Tiny collected data written here."""
from __future__ import annotations

import json
from pathlib import Path

from bench import calibrate as C
from bench import calibrate_cv as CV


def _doc(doc_id: str, kind: str, status: str, fields: dict, truth: dict) -> dict:
    return {"doc_id": doc_id, "kind": kind, "status": status, "truth": truth,
            "fields": {k: {"value": v, "status": "verified", "family": fam} for k, (v, fam, _) in fields.items()},
            "features": {k: {"bias": 1.0, **feats} for k, (_, _, feats) in fields.items()}}


def _receipt(i: int, address_right: bool) -> dict:
    truth = {"company": f"SHOP {i} SDN BHD", "date": "2018-01-01", "total": 10.0, "address": f"NO {i} JALAN A"}
    addr = truth["address"] if address_right else "SOMEWHERE ELSE"
    return _doc(f"r{i}", "receipt", "passed",
                {"company": (truth["company"], "name", {"ok:pass": 1.0}),
                 "date": ("2018-01-01", "date", {"ok:pass": 1.0}),
                 "total": (10.0, "amount", {"ok:pass": 1.0}),
                 "address": (addr, "text", {"ok:pass": 1.0} if address_right else {"ok:fail": 1.0})}, truth)


def _write(folder: Path, part: str, rows: list[dict]) -> None:
    (folder / f"{part}.json").write_text(json.dumps({"part": part, "rows": rows}), "utf-8")


def test_groups_and_folds_are_fixed_and_keep_a_group_together(tmp_path: Path) -> None:
    (tmp_path / "manifest.jsonl").write_text("\n".join(json.dumps(r) for r in [
        {"id": "a", "set": "receipts", "vendor_key": "SHOP"}, {"id": "b", "set": "receipts", "vendor_key": "SHOP"},
        {"id": "z1", "set": "invoices", "content_group": "einfach"}, {"id": "i1", "set": "invoices"}]), "utf-8")
    g = CV.manifest_groups(tmp_path)
    assert g["a"] == g["b"] == "receipts:SHOP" and g["z1"] == "invoices:einfach" and g["i1"] == "invoices:i1"
    assert CV.fold_of(g["a"], 5) == CV.fold_of(g["b"], 5) == CV.fold_of("receipts:SHOP", 5)
    assert CV.synth_group("inv-969720115-900000001") == "inv-969720115"


def test_policies_decide_and_count_what_is_delivered() -> None:
    d = C.DocFields(**_receipt(1, address_right=False))
    conf = {"company": 0.99, "date": 0.99, "total": 0.99, "address": 0.2}
    assert CV.decide(d, conf, 0.9, "required") == (True, set())
    assert CV.decide(d, conf, 0.9, "present") == (False, set())
    assert CV.decide(d, conf, 0.9, "omit") == (True, {"address"})
    assert not CV.delivered_right(d, set()) and CV.delivered_right(d, {"address"})
    assert CV.decide(d, dict(conf, total=0.5), 0.9, "omit") == (False, set())     # a required doubt holds it back


def test_risk_coverage_omit_and_cross_validation(tmp_path: Path) -> None:
    rows = [_receipt(i, address_right=i % 3 != 0) for i in range(60)]
    _write(tmp_path, "dev-receipts.dev-tune", rows)
    _write(tmp_path, "dev-invoices.dev-tune", [])
    docs = C.load_part(tmp_path, "dev-receipts.dev-tune")
    setting = CV.Setting("t", min_count=1)
    cal = CV.fit(docs, setting)
    keep = C.risk_coverage(cal, docs, (0.9,))[0]
    omit = C.risk_coverage(cal, docs, (0.9,), scope="omit")[0]
    present = C.risk_coverage(cal, docs, (0.9,), scope="present")[0]
    assert keep["accepted"] == omit["accepted"] == 60 and present["accepted"] == 40
    assert keep["verified_precision"] < 0.7 and omit["verified_precision"] == present["verified_precision"] == 1.0
    oof = CV.cross_validate(tmp_path, setting, folds=3, dev_data=tmp_path)
    assert set(oof) == {d.doc_id for d in docs}
    assert all(oof[f"r{i}"]["address"] < 0.5 for i in range(0, 60, 3))         # the wrong addresses, out of fold
    live = C.DocFields(**dict(_receipt(0, address_right=False)))
    live.fields["address"]["omitted"] = True                                    # a live row that left it out
    assert C._header_right(live) and not C._header_right(C.DocFields(**_receipt(0, address_right=False)))


def test_an_empty_field_whose_label_is_printed_holds_the_record_back_under_review(tmp_path: Path) -> None:
    rows = [_receipt(i, address_right=True) for i in range(50)]
    rows[0]["fields"]["tip"] = {"value": None, "status": "missing", "family": "amount",
                                "checks": [{"check": "label_printed", "outcome": "fail", "detail": "x"}]}
    _write(tmp_path, "dev-receipts.dev-tune", rows)
    docs = C.load_part(tmp_path, "dev-receipts.dev-tune")
    assert C.incomplete(docs[0]) == ["tip"] and C.incomplete(docs[1]) == []
    cal = CV.fit(docs, CV.Setting("t", min_count=1))
    review = C.risk_coverage(cal, docs, (0.0,), scope="omit", missing_printed="review")[0]
    report = C.risk_coverage(cal, docs, (0.0,), scope="omit", missing_printed="report")[0]
    assert report["accepted"] - review["accepted"] == 1
    confirm = C.risk_coverage(cal, docs, (0.0,), scope="omit")[0]       # the default: no person offline, held
    assert confirm["accepted"] == review["accepted"]
    assert CV.decide(docs[0], {"company": 1.0, "date": 1.0, "total": 1.0}, 0.9, "omit", "review") == (False, set())
    assert CV.decide(docs[0], {"company": 1.0, "date": 1.0, "total": 1.0}, 0.9, "omit", "report")[0]
    assert not CV.decide(docs[0], {"company": 1.0, "date": 1.0, "total": 1.0}, 0.9, "omit")[0]


def test_settings_scored_on_unseen_formats(tmp_path: Path) -> None:
    train, unseen = tmp_path / "t", tmp_path / "u"
    train.mkdir(), unseen.mkdir()
    _write(train, "dev-receipts.dev-tune", [_receipt(i, address_right=i % 3 != 0) for i in range(60)])
    _write(unseen, "synth-receipts-unseen", [_receipt(100 + i, address_right=i % 2 == 0) for i in range(10)])
    out = CV.unseen_report(train, [unseen], settings=(CV.Setting("a", min_count=1), CV.Setting("b", l2=1e-2)))
    rows = [ln for ln in out.splitlines() if ln.startswith("| a ") or ln.startswith("| b ")]
    assert len(rows) == 2 and "of 10" in rows[0]


def _invoice(i: int, items_right: bool, seed_folder: Path | None = None) -> dict:
    items = [{"description": "Web hosting", "quantity": 1.0, "unit_price": 9.5, "line_total": 9.5}]
    got = items if items_right else [dict(items[0], line_total=None)]
    return _doc(f"inv-{i}-0", "invoice", "passed",
                {"invoice_number": (f"N{i}", "id", {"ok:pass": 1.0}),
                 "line_items": (got, "items", {"item_row_numbers:pass": 1.0} if items_right
                                else {"item_row_numbers:fail": 1.0})},
                {"invoice_number": f"N{i}", "line_items": items})


def test_also_adds_only_the_items_examples_of_other_collections(tmp_path: Path) -> None:
    main, other = tmp_path / "m", tmp_path / "s1"
    main.mkdir(), other.mkdir()
    _write(main, "dev-receipts.dev-tune", [_receipt(i, address_right=i % 3 != 0) for i in range(45)])
    _write(other, "synth-invoices-unseen", [_invoice(i, items_right=i % 2 == 0) for i in range(50)])
    _write(other, "synth-invoices-train", [_invoice(100 + i, items_right=True) for i in range(4)])
    also = C.also_examples([other])
    assert sorted(len(v) for v in also.values()) == [4, 50]
    assert {e.family for v in also.values() for e in v} == {"items"}        # the invoices' ids stay out
    cal = C.train(main, tmp_path / "w.json", also=[other])
    assert cal.families["items"].n == 54 and "id" not in cal.families
    assert cal.meta["trained_on"][f"{other}/synth-invoices-unseen"] == 50
    p_ok = cal.predict("items", {"bias": 1.0, "item_row_numbers:pass": 1.0})
    assert p_ok > 0.8 > 0.2 > cal.predict("items", {"bias": 1.0, "item_row_numbers:fail": 1.0})
    oof = CV.cross_validate(main, CV.Setting("t", min_count=1), folds=3, dev_data=tmp_path, also=(other,))
    assert len(oof) == 45


def test_items_report_scores_every_list_out_of_fold(tmp_path: Path) -> None:
    main, other = tmp_path / "m", tmp_path / "s1"
    main.mkdir(), other.mkdir()
    _write(main, "dev-receipts.dev-tune", [_receipt(i, address_right=i % 3 != 0) for i in range(45)])
    _write(main, "synth-invoices-train", [_invoice(i, items_right=i % 2 == 0) for i in range(30)])
    _write(other, "synth-invoices-unseen", [_invoice(100 + i, items_right=i % 2 == 0) for i in range(30)])
    assert {src for _, _, src, _ in CV.items_pool(main, [other], tmp_path)} == {"synth-train", "synth-unseen"}
    s = CV.Setting("t", min_count=1)
    out = CV.items_report(main, (other,), settings=(s, CV.Setting("n", min_count=1, items_also=False)),
                          folds=3, dev_data=tmp_path)
    rows = {tuple(c.strip() for c in ln.split("|")[1:3]): ln for ln in out.splitlines() if ln.startswith("| t |")
            or ln.startswith("| n |")}
    assert ("t", "pooled") in rows and ("n", "synth-unseen") in rows and " 60 " in rows[("t", "pooled")]
    assert "items reliability out of fold, pooled" in out
    assert 0.0 <= CV.noise_floor([0.5] * 20) <= 0.5 and CV.noise_floor([1.0] * 20) == 0.0


def test_the_ece_noise_floor_shrinks_with_the_number_of_examples():
    # A perfectly calibrated model's ECE over few examples is chance alone: the report prints it beside
    # each family's ECE (dev-holdout has 23 item lists), so a small set's ECE is not read as miscalibration.
    few, many = CV.noise_floor([0.7] * 23), CV.noise_floor([0.7] * 2300)
    assert 0.05 < few < 0.3 and many < few / 4
