"""Retrying writes that lose an optimistic-concurrency race.

Aurora DSQL never blocks on a lock: a transaction that conflicts with one that committed first
fails at COMMIT with SQLSTATE 40001 (its message names OC000 for data, OC001 for schema
conflicts). PostgreSQL raises the same 40001 in REPEATABLE READ / SERIALIZABLE transactions, and
40P01 when it breaks a deadlock. The only correct answer is to run the whole transaction again,
so the unit of retry is a function that does the whole transaction's work.

Backoff is exponential with full jitter (sleep a uniform random time in [0, min(cap, base * 2^n)]),
which spreads out writers that collided so that they do not collide again in lock step.
"""
from __future__ import annotations

import logging
import random
import time
from dataclasses import dataclass
from typing import Callable, TypeVar

import psycopg

__all__ = ["RetryPolicy", "DEFAULT_RETRY", "is_retryable", "retry_on_conflict", "transact"]

T = TypeVar("T")
_log = logging.getLogger(__name__)

RETRYABLE_SQLSTATES = frozenset({"40001", "40P01"})


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 8               # total tries, the first included
    base_delay_s: float = 0.02      # backoff before the second try is drawn from [0, base]
    max_delay_s: float = 2.0        # cap on one backoff


DEFAULT_RETRY = RetryPolicy()


def is_retryable(exc: BaseException) -> bool:
    """True for a serialization failure, a broken deadlock or a DSQL optimistic-concurrency conflict."""
    if not isinstance(exc, psycopg.Error):
        return False
    state = exc.sqlstate or ""
    return state in RETRYABLE_SQLSTATES or state.startswith("OC0")


def retry_on_conflict(
    fn: Callable[[], T],
    *,
    policy: RetryPolicy = DEFAULT_RETRY,
    sleep: Callable[[float], None] = time.sleep,
    rng: random.Random | None = None,
) -> T:
    """Call `fn` until it returns, retrying only concurrency conflicts (see `is_retryable`).

    Any other exception, and the conflict of the last allowed attempt, propagates unchanged.
    `fn` must be safe to run again: it redoes a whole transaction, not a piece of one.
    """
    rand = rng or random.Random()
    for attempt in range(policy.attempts):
        try:
            return fn()
        except psycopg.Error as exc:
            if not is_retryable(exc) or attempt + 1 >= policy.attempts:
                raise
            delay = rand.uniform(0.0, min(policy.max_delay_s, policy.base_delay_s * 2 ** attempt))
            _log.debug("write conflict (%s), retry %d in %.3f s", exc.sqlstate, attempt + 1, delay)
            sleep(delay)
    raise AssertionError("unreachable: attempts must be >= 1")  # pragma: no cover


def transact(
    conn: psycopg.Connection,
    fn: Callable[[psycopg.Connection], T],
    *,
    policy: RetryPolicy = DEFAULT_RETRY,
) -> T:
    """Run `fn(conn)` inside one transaction, rolled back and retried on a concurrency conflict.

    The connection must not be inside a transaction already (a conflict aborts the whole
    transaction, so retrying an inner block would be wrong).
    """
    if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
        raise psycopg.ProgrammingError("transact() needs a connection that is not inside a transaction")

    def once() -> T:
        with conn.transaction():
            return fn(conn)

    return retry_on_conflict(once, policy=policy)
