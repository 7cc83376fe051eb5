"""E-invoices on the dev hybrids (the ZUGFeRD PDFs), per split: the XML read (`use`) against the
layout path (`ignore`), the print checked against the XML, and what hybrids teach the layout.

    python -m bench.einvoice [--splits dev-tune,dev-holdout] [--generator baseline|model] [--out FILE]

Per split (bench/splits.py; dev-holdout is reported, never looked into):

    hybrids, use              every hybrid with --einvoice use (the XML's record, print provenance)
    hybrids, ignore           the same PDFs on the layout path alone
    hybrids, check            the layout path compared with the XML: share of documents flagged
    standalone CII            the hybrids' invoice XML as bare .xml files
    swapped attachment        each PDF carrying the XML of a hybrid of another content group
                              (another invoice): share that ends needs_review with
                              print_differs_from_einvoice
    print-only, layout alone  the hybrids with their attachments removed (pypdf), --einvoice ignore
    print-only, after hybrids one run: the hybrids (use) first, then the print-only copies; the
                              copies are scored

Every pass starts on an empty format library and database (bench.session). The copies and swaps
are written into the session's scratch folder, never into the repository. Duplicate invoice
numbers (the corpus renders one invoice several times, and the copies repeat the hybrids) send
documents to review through the stale gate: accuracy is over every record, whatever its status.
"""
from __future__ import annotations

import argparse
import sys
import uuid
from dataclasses import replace
from pathlib import Path

from bench.cli import add_common, print_and_save, session_from
from bench.evaluate import score_rows, set_report
from bench.passes import PassResult, PassSpec
from bench.scoring import Report
from bench.session import Session
from bench.splits import SPLITS, select
from bench.tables import fmt, md_table

RULE = "print_differs_from_einvoice"


def _strip(pdf: bytes) -> bytes:
    from docassay.extractors.synth.einvoice import strip_attachments
    return strip_attachments(pdf)


def _xml_of(pdf: bytes, source: str) -> tuple[str, bytes]:
    from docassay.extractors.einvoice import attachments, read_root
    from docassay.extractors.einvoice.xmlsafe import MAX_XML_BYTES, parse_xml
    for name, blob in attachments.embedded_xml(pdf, source, MAX_XML_BYTES).xml:
        if read_root(parse_xml(blob, source)) is not None:
            return name, blob
    raise ValueError(f"{source} carries no invoice XML")


def _replace_xml(pdf: bytes, xml: bytes, name: str) -> bytes:
    from docassay.extractors.synth.einvoice import embed_xml
    return embed_xml(_strip(pdf), xml, name)


def _pass(s: Session, name: str, sources: list[str], mode: str, generator: str) -> PassResult:
    tag = f"{name}.{uuid.uuid4().hex[:6]}"
    spec = PassSpec(tag, "invoice", sources, str(s.scratch / "homes" / tag), s.fresh_dsn(), generator=generator,
                    einvoice=mode)
    return s._run(spec)


def measure(s: Session, split: str, generator: str) -> dict:
    docs = [d for d in select(s.docs("dev-invoices"), split) if d.origin == "zugferd"]
    folder = s.scratch / "einvoice" / split
    (folder / "print").mkdir(parents=True, exist_ok=True)
    (folder / "xml").mkdir(parents=True, exist_ok=True)
    (folder / "swapped").mkdir(parents=True, exist_ok=True)
    prints, xmls, swaps = [], [], []
    for i, d in enumerate(docs):
        pdf = Path(d.path).read_bytes()
        p = folder / "print" / Path(d.path).name
        p.write_bytes(_strip(pdf))
        prints.append(replace(d, path=str(p)))
        name, xml = _xml_of(pdf, d.path)
        x = folder / "xml" / (Path(d.path).stem + ".xml")
        x.write_bytes(xml)
        xmls.append(replace(d, path=str(x)))
        other = next((o for o in docs[i + 1:] + docs[:i] if o.group != d.group), None)
        if other is not None:
            oname, oxml = _xml_of(Path(other.path).read_bytes(), other.path)
            w = folder / "swapped" / Path(d.path).name
            w.write_bytes(_replace_xml(pdf, oxml, oname))
            swaps.append(replace(d, path=str(w)))
    out: dict = {"documents": len(docs), "groups": len({d.group for d in docs})}
    reports: dict[str, Report] = {}
    use = _pass(s, f"{split}.use", [d.path for d in docs], "use", generator)
    reports["hybrids, use"] = set_report(docs, score_rows(docs, use.rows)).overall
    out["use_statuses"] = _statuses(use)
    ign = _pass(s, f"{split}.ignore", [d.path for d in docs], "ignore", generator)
    reports["hybrids, ignore (layout path)"] = set_report(docs, score_rows(docs, ign.rows)).overall
    std = _pass(s, f"{split}.xml", [d.path for d in xmls], "use", generator)
    reports["standalone CII (.xml)"] = set_report(xmls, score_rows(xmls, std.rows)).overall
    chk = _pass(s, f"{split}.check", [d.path for d in docs], "check", generator)
    out["check_flagged"] = (sum(1 for r in chk.rows if RULE in r.flags), len(chk.rows))
    out["use_false_alarms"] = (sum(1 for r in use.rows if RULE in r.flags), len(use.rows))
    swp = _pass(s, f"{split}.swapped", [d.path for d in swaps], "use", generator)
    out["swapped_caught"] = (sum(1 for r in swp.rows if RULE in r.flags and r.status == "needs_review"), len(swp.rows))
    alone = _pass(s, f"{split}.print-alone", [d.path for d in prints], "ignore", generator)
    reports["print-only, layout alone"] = set_report(prints, score_rows(prints, alone.rows)).overall
    both = _pass(s, f"{split}.learn-then-print", [d.path for d in docs] + [d.path for d in prints], "use", generator)
    copies = both.rows[len(docs):]
    reports["print-only, after the hybrids (one run)"] = set_report(prints, score_rows(prints, copies)).overall
    out["copies_known"] = (sum(1 for r in copies if r.match == "known"), len(copies))
    out["ms_per_document"] = {name: round(1000 * res.wall_s / max(1, len(res.rows)))
                              for name, res in (("use", use), ("ignore", ign), ("check", chk), ("standalone", std))}
    out["reports"] = reports
    return out


def _statuses(res: PassResult) -> dict[str, int]:
    c: dict[str, int] = {}
    for r in res.rows:
        c[r.status] = c.get(r.status, 0) + 1
    return c


def _ratio(pair: tuple[int, int]) -> str:
    a, b = pair
    return f"{a / b:.3f} ({a}/{b})" if b else "-"


def render(results: dict[str, dict]) -> str:
    splits = list(results)
    names = list(next(iter(results.values()))["reports"])
    rows = [["hybrids (content groups)"] + [f"{r['documents']} ({r['groups']})" for r in results.values()]]
    for n in names:
        rows.append([f"{n}: micro field accuracy"] + [fmt(results[s]["reports"][n].micro) for s in splits])
        rows.append([f"{n}: header exact match"] + [fmt(results[s]["reports"][n].header_exact) for s in splits])
        rows.append([f"{n}: line items F1"] + [fmt(results[s]["reports"][n].item_f1) for s in splits])
    rows.append(["hybrids, use: statuses"] + [", ".join(f"{k} {v}" for k, v in sorted(results[s]["use_statuses"].items()))
                                              for s in splits])
    rows.append(["hybrids, use: flagged print_differs (false alarms)"] + [_ratio(results[s]["use_false_alarms"]) for s in splits])
    rows.append(["hybrids, check: flagged print_differs"] + [_ratio(results[s]["check_flagged"]) for s in splits])
    rows.append(["swapped attachment: needs_review with print_differs"] + [_ratio(results[s]["swapped_caught"]) for s in splits])
    rows.append(["print-only copies matched to a format learned from a hybrid"] + [_ratio(results[s]["copies_known"]) for s in splits])
    for mode in ("use", "ignore", "check", "standalone"):
        rows.append([f"ms per document ({mode}; first batch, one at a time)"]
                    + [str(results[s]["ms_per_document"][mode]) for s in splits])
    return "## E-invoices on the dev hybrids, per split\n\n" + md_table(["measure"] + splits, rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common(ap, default_sets=("dev-invoices",))
    ap.add_argument("--splits", default=",".join(SPLITS), help="comma-separated (default: dev-tune,dev-holdout)")
    ap.add_argument("--generator", choices=("baseline", "model"), default="baseline")
    args = ap.parse_args(argv)
    splits = [x.strip() for x in args.splits.split(",") if x.strip()]
    with session_from(args) as s:
        results = {sp: measure(s, sp, args.generator) for sp in splits}
    payload = {sp: {k: (v if k != "reports" else {n: r.to_json() for n, r in v.items()}) for k, v in r.items()}
               for sp, r in results.items()}
    print_and_save(args, "einvoice", render(results), {"generator": args.generator, "splits": payload})
    return 0


if __name__ == "__main__":
    sys.exit(main())
