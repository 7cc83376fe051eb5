"""Benchmarks of docassay: each command prints its tables and writes a JSON report (see BENCHMARKS.md).

    python -m bench.accuracy        accuracy per set (per field, micro, exact match, line items, pass
                                    rate, verified precision), per path, ZUGFeRD per content group
    python -m bench.speed           pages/s, docs/s, p50/p95, peak memory, time by stage, per path
    python -m bench.versus_invoice2data   docassay and invoice2data on the same documents, one run
    python -m bench.ablations       without repair, without format reuse, model vs baseline generator
    python -m bench.report          all of the above in one run (the tables of BENCHMARKS.md)

Run from the repository root with the project's virtualenv. `bench/format_matching.py`,
`bench/pdf_parsers.py` and `bench/synth_speed.py` are standalone scripts of their own.
"""
