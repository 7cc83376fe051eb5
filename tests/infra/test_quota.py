"""Daily token quotas on a real PostgreSQL: limits, atomic reservations, refusal, reset at midnight."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from docassay.infra.config import Settings
from docassay.infra.db import Database
from docassay.infra.errors import ConfigError, DatabaseError
from docassay.infra.quota import (
    KEEP,
    QuotaBudget,
    QuotaExceeded,
    Subject,
    TokenLimit,
    limits,
    next_reset,
    quota_day,
    set_limit,
    subjects_for,
    usage,
)

BERLIN = ZoneInfo("Europe/Berlin")


def _settings(tmp_path: Path, dsn: str, **kw) -> Settings:
    base = dict(home=tmp_path / "home", db=dsn, quota_project="acme", quota_user="ada",
                quota_project_input_tokens=10_000, quota_project_output_tokens=1_000,
                quota_user_input_tokens=4_000, quota_user_output_tokens=400)
    return Settings.load(**{**base, **kw})


class Clock:
    def __init__(self, t: datetime) -> None:
        self.t = t

    def __call__(self) -> datetime:
        return self.t


def _budget(settings: Settings, dsn: str, clock: Clock | None = None) -> QuotaBudget:
    kw = {"clock": clock} if clock else {}
    return QuotaBudget(Database(dsn), settings, subjects_for(settings), **kw)


def test_subjects_default_to_settings_and_login(tmp_path: Path) -> None:
    s = Settings.load(home=tmp_path, quota_project="p1", quota_user="")
    subs = subjects_for(s)
    assert [x.scope for x in subs] == ["project", "user"] and subs[0].name == "p1" and subs[1].name
    assert subjects_for(s, project="p2", user="bob") == [Subject("project", "p2"), Subject("user", "bob")]
    with pytest.raises(ConfigError):
        Subject("team", "x")
    with pytest.raises(ConfigError):
        Subject("user", "bad\nname")


def test_limits_default_set_lower_never_higher(tmp_path: Path, pg_fresh_dsn: str) -> None:
    s = _settings(tmp_path, pg_fresh_dsn)
    acme = Subject("project", "acme")
    with Database(pg_fresh_dsn).connect() as conn:
        assert limits(conn, s, acme).effective == TokenLimit(10_000, 1_000)
        got = set_limit(conn, s, acme, input_tokens=2_500)
        assert got.set_input == 2_500 and got.set_output is None
        assert got.effective == TokenLimit(2_500, 1_000)
        got = set_limit(conn, s, acme, output_tokens=0)               # a team may be cut off entirely
        assert got.effective == TokenLimit(2_500, 0), "KEEP must leave the input limit as it was"
        with pytest.raises(ConfigError, match="at most to the default"):
            set_limit(conn, s, acme, input_tokens=10_001)
        with pytest.raises(ConfigError):
            set_limit(conn, s, acme, input_tokens=-1)
        assert limits(conn, s, acme).effective == TokenLimit(2_500, 0), "a refused set changes nothing"
        # Lowering the default below a limit set earlier caps that subject too.
        lower = _settings(tmp_path, pg_fresh_dsn, quota_project_input_tokens=1_000)
        assert limits(conn, lower, acme).effective.input_tokens == 1_000
        got = set_limit(conn, s, acme, input_tokens=None, output_tokens=None)
        assert got.set_input is None and got.effective == TokenLimit(10_000, 1_000)
        assert set_limit(conn, s, acme, input_tokens=KEEP).effective == TokenLimit(10_000, 1_000)


def test_reserve_settle_cancel_accounting(tmp_path: Path, pg_fresh_dsn: str) -> None:
    s = _settings(tmp_path, pg_fresh_dsn)
    b = _budget(s, pg_fresh_dsn)
    r = b.reserve(1_000, 100)
    assert r is not None and b.reason == ""
    proj, user = b.usages()
    assert (proj.reserved_input, proj.reserved_output, proj.used_input) == (1_000, 100, 0)
    assert (user.reserved_input, user.reserved_output) == (1_000, 100)
    r.settle(900, 100)                        # the true count replaces the reservation
    r.settle(900, 100)                        # settling twice charges once
    proj, user = b.usages()
    assert (proj.used_input, proj.used_output, proj.reserved_input, proj.reserved_output) == (900, 100, 0, 0)
    assert (user.used_input, user.remaining_input, user.calls) == (900, 3_100, 1)
    c = b.reserve(500, 50)
    c.cancel()
    proj, user = b.usages()
    assert (user.used_input, user.reserved_input, user.calls) == (900, 0, 1), "a cancelled call costs nothing"
    b.close()


def test_refusal_is_atomic_across_project_and_user(tmp_path: Path, pg_fresh_dsn: str) -> None:
    s = _settings(tmp_path, pg_fresh_dsn)
    b = _budget(s, pg_fresh_dsn)
    first = b.reserve(3_000, 300)
    assert first is not None
    assert b.reserve(1_500, 10) is None, "the user has 1,000 input tokens left"
    assert "daily input-token quota of user 'ada' cannot cover a model call (1,000 of 4,000 input tokens left)" in b.reason
    assert "resets at midnight UTC" in b.reason
    proj, user = b.usages()
    assert proj.reserved_input == 3_000, "the project must not keep the part of a refused reservation"
    assert user.refused == 1 and proj.refused == 0
    ok = b.reserve(1_000, 100)                 # exactly what is left fits
    assert ok is not None
    assert b.reserve(1, 0) is None
    first.settle(3_000, 300)
    ok.settle(1_000, 100)
    assert b.usages()[1].spent
    b.close()


def test_check_refuses_a_spent_quota_before_the_batch(tmp_path: Path, pg_fresh_dsn: str) -> None:
    s = _settings(tmp_path, pg_fresh_dsn)
    b = _budget(s, pg_fresh_dsn)
    assert [u.subject.scope for u in b.check()] == ["project", "user"]
    b.reserve(100, 400).settle(100, 400)          # the user's whole output quota
    with pytest.raises(QuotaExceeded) as exc:
        b.check()
    msg = exc.value.message
    assert "output (400 tokens) quota of user 'ada' is spent" in msg and "nothing was processed" in msg
    assert exc.value.exit_status == 1
    # Another user of the same project is not refused; the project still has room.
    other = QuotaBudget(Database(pg_fresh_dsn), s, subjects_for(s, user="bob"))
    assert not any(u.spent for u in other.check())
    other.close()
    b.close()


def test_quota_resets_at_midnight_of_the_configured_time_zone(tmp_path: Path, pg_fresh_dsn: str) -> None:
    s = _settings(tmp_path, pg_fresh_dsn, quota_timezone="Europe/Berlin")
    before = datetime(2025, 3, 10, 23, 30, tzinfo=BERLIN)            # 22:30 UTC
    after = before + timedelta(minutes=40)                          # 00:10 Berlin, still 10 March in UTC
    assert quota_day(s, before).isoformat() == "2025-03-10" and quota_day(s, after).isoformat() == "2025-03-11"
    assert next_reset(s, before) == datetime(2025, 3, 11, 0, 0, tzinfo=BERLIN)
    clock = Clock(before)
    b = _budget(s, pg_fresh_dsn, clock)
    b.reserve(4_000, 10).settle(4_000, 10)
    with pytest.raises(QuotaExceeded, match="resets at midnight Europe/Berlin, in 0 h 30 min"):
        b.check()
    clock.t = after
    assert not any(u.spent for u in b.check()), "a new day in Berlin starts from zero"
    assert b.reserve(4_000, 10) is not None
    with Database(pg_fresh_dsn).connect() as conn:
        old = usage(conn, s, Subject("user", "ada"), day=quota_day(s, before))
        assert old.used_input == 4_000 and old.remaining_input == 0
    # The same two instants fall on one UTC day: a UTC quota does not reset between them.
    utc = _settings(tmp_path, pg_fresh_dsn, quota_timezone="UTC", quota_user="eve")
    assert quota_day(utc, before) == quota_day(utc, after)
    clock.t = before
    u = _budget(utc, pg_fresh_dsn, clock)
    u.reserve(4_000, 10).settle(4_000, 10)
    clock.t = after
    with pytest.raises(QuotaExceeded):
        u.check()
    b.close()
    u.close()


def test_bad_time_zone_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="IANA"):
        quota_day(Settings.load(home=tmp_path, quota_timezone="Mars/Olympus"))


def test_unsettled_reservation_is_released_after_its_ttl(tmp_path: Path, pg_fresh_dsn: str) -> None:
    s = _settings(tmp_path, pg_fresh_dsn, quota_reservation_ttl_s=60)
    t0 = datetime(2025, 6, 1, 12, 0, tzinfo=timezone.utc)
    clock = Clock(t0)
    b = _budget(s, pg_fresh_dsn, clock)
    lost = b.reserve(4_000, 100)                   # a worker that crashes holds the whole user quota
    with pytest.raises(QuotaExceeded):
        b.check()
    clock.t = t0 + timedelta(seconds=30)
    assert b.usages()[1].reserved_input == 4_000, "not expired yet"
    clock.t = t0 + timedelta(seconds=61)
    proj, user = b.check()
    assert user.reserved_input == 0 and user.remaining_input == 4_000
    lost.settle(50, 5)                            # a late settle still charges the truth, once
    proj, user = b.usages()
    assert (user.used_input, user.reserved_input, proj.reserved_input) == (50, 0, 0)
    b.close()


def test_database_failure_is_a_database_error_not_a_crash(tmp_path: Path, pg_fresh_dsn: str) -> None:
    s = _settings(tmp_path, pg_fresh_dsn)
    b = _budget(s, pg_fresh_dsn)
    b.reserve(10, 1).settle(10, 1)
    with Database(pg_fresh_dsn).connect() as conn:
        conn.execute("DROP TABLE quota_reservations")
    with pytest.raises(DatabaseError, match="could not reserve tokens"):
        b.reserve(10, 1)
    b.close()
