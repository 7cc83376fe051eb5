"""Retrying optimistic-concurrency conflicts, with a real serialization failure."""
from __future__ import annotations

import random

import psycopg
import pytest

from docassay.infra.db import Database, RetryPolicy, is_retryable, retry_on_conflict, transact


def test_retries_a_real_serialization_failure(pg_fresh_dsn: str) -> None:
    db = Database(pg_fresh_dsn)
    with db.connect() as setup:
        setup.execute("INSERT INTO runs (id, summary) VALUES ('r', '0')")
    calls = []

    with db.connect() as conn, psycopg.connect(pg_fresh_dsn, autocommit=True) as rival:
        def bump(c: psycopg.Connection) -> str:
            calls.append(1)
            c.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            (value,) = c.execute("SELECT summary FROM runs WHERE id = 'r'").fetchone()  # type: ignore[misc]
            if len(calls) == 1:     # someone else commits in between, once
                rival.execute("UPDATE runs SET summary = '100' WHERE id = 'r'")
            c.execute("UPDATE runs SET summary = %s WHERE id = 'r'", [str(int(value) + 1)])
            return value

        seen = transact(conn, bump, policy=RetryPolicy(attempts=3, base_delay_s=0.001))
        assert len(calls) == 2 and seen == "100"
        assert conn.execute("SELECT summary FROM runs WHERE id = 'r'").fetchone() == ("101",)


def test_gives_up_after_the_last_attempt_and_passes_other_errors_through() -> None:
    conflict = psycopg.errors.SerializationFailure("conflict")
    assert is_retryable(conflict)
    delays: list[float] = []

    def always() -> None:
        raise conflict

    with pytest.raises(psycopg.errors.SerializationFailure):
        retry_on_conflict(always, policy=RetryPolicy(attempts=4, base_delay_s=0.1, max_delay_s=0.25),
                          sleep=delays.append, rng=random.Random(0))
    assert len(delays) == 3                                        # 4 tries, 3 waits
    assert all(0 <= d <= cap for d, cap in zip(delays, [0.1, 0.2, 0.25]))

    def broken() -> None:
        raise psycopg.errors.UndefinedTable("no such table")

    delays.clear()
    with pytest.raises(psycopg.errors.UndefinedTable):
        retry_on_conflict(broken, sleep=delays.append)
    assert delays == []
    assert not is_retryable(ValueError("x"))
