"""`docassay extract --rules` on a database where rules cannot run sandboxed: refused up front, exit 2."""
from __future__ import annotations

from pathlib import Path

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

from docassay.flows.cli import main
from docassay.rules import sandbox

ROOT = Path(__file__).resolve().parents[2]


def test_extract_refuses_rules_it_cannot_sandbox_and_says_what_to_grant(tmp_path: Path, pg_fresh_dsn: str,
                                                                        capsys) -> None:
    login = "docassay_test_cli_app"
    with psycopg.connect(pg_fresh_dsn, autocommit=True) as admin:
        sandbox.ensure_sandbox(admin)
        admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(login)))
        admin.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(login)))
    try:
        (tmp_path / "a.txt").write_text("RECHNUNG\nRechnungsnummer: 1\n")
        code = main(["extract", str(tmp_path / "a.txt"), "--schema", str(ROOT / "examples/invoices/schema.json"),
                     "--rules", str(ROOT / "examples/invoices/rules"), "--out", str(tmp_path / "out"),
                     "--home", str(tmp_path / "home"), "--db", make_conninfo(pg_fresh_dsn, user=login),
                     "--generator", "baseline", "--quiet"])
        err = capsys.readouterr().err
        assert code == 2, err
        assert "cannot run sandboxed" in err and f'GRANT "docassay_rule" TO "{login}"' in err
        assert "DOCASSAY_RULE_SANDBOX=off" in err
        assert not (tmp_path / "out" / "results.jsonl").exists(), "nothing may be processed"
    finally:
        with psycopg.connect(pg_fresh_dsn, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(login)))
            admin.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(login)))
