"""Daily model-token quotas per project and per user, in the manner of BigQuery's generative-AI quotas.

    subjects_for(settings, project=, user=) -> [Subject]     who a batch charges: its project and its user
    limits(conn, settings, subject) -> QuotaLimits           default, the limit set, the one that applies
    set_limit(conn, settings, subject, input_tokens=, output_tokens=)   at most the default; None = default
    usage(conn, settings, subject, day=) -> Usage            used / reserved / remaining on a quota day
    quota_day(settings, now) -> date                         the calendar date in `settings.quota_timezone`
    release_expired(conn, now) -> int                        give back reservations a crashed worker left
    QuotaBudget(db, settings, subjects)                      flows.pipeline.Budget: check / reserve -> settle | cancel

Every model call reserves its estimated input and output tokens from every subject at once, before
it runs, with one guarded UPDATE per subject inside one transaction:

    UPDATE quota_usage SET reserved_input = reserved_input + :in, ...
     WHERE (scope, subject, day) = ... AND used_input + reserved_input + :in <= :limit_in AND ...

On PostgreSQL the second of two racing UPDATEs waits for the first and re-checks its condition
against the committed row; on Aurora DSQL one of them fails at commit (40001/OC000) and the whole
transaction is retried (`infra.db.transact`). Either way the sum of what is used and reserved never
passes the limit, however many processes share the quota. A subject that cannot cover the call
rolls the whole reservation back. Settling replaces the reservation by the true count (which the
scorer knows before the call, so it equals the estimate); a reservation that is never settled is
released after `settings.quota_reservation_ttl_s`.

Limits: `settings.quota_{project,user}_{input,output}_tokens` are the defaults; `quota_limits` holds
limits set lower for one project or user (a limit above the default is refused: raise the default
instead). The effective limit is the smaller of the two, so lowering a default caps everyone.
Quotas reset at midnight in `settings.quota_timezone`.
"""
from __future__ import annotations

import getpass
import threading
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from typing import Callable, Iterator, Sequence
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import psycopg

from docassay.infra.config import Settings
from docassay.infra.db import Database, transact
from docassay.infra.errors import ConfigError, DatabaseError, DocassayError

__all__ = ["SCOPES", "Subject", "TokenLimit", "QuotaLimits", "Usage", "QuotaExceeded", "QuotaBudget",
           "QuotaReservation", "KEEP", "subjects_for", "default_limit", "limits", "set_limit", "usage",
           "quota_day", "next_reset", "release_expired", "is_metered"]

SCOPES = ("project", "user")
Clock = Callable[[], datetime]


def _utcnow() -> datetime:
    return datetime.now(timezone.utc)


class _Keep:
    def __repr__(self) -> str:
        return "KEEP"


KEEP = _Keep()
"""`set_limit` argument: leave this limit as it is."""


class QuotaExceeded(DocassayError):
    """A batch was refused before it started: a quota that applies to it is spent (exit status 1)."""
    kind = "quota_exceeded"
    exit_status = 1


@dataclass(frozen=True, order=True)
class Subject:
    scope: str                     # project | user
    name: str

    def __post_init__(self) -> None:
        if self.scope not in SCOPES:
            raise ConfigError(f"unknown quota scope {self.scope!r}: choose one of {', '.join(SCOPES)}")
        if not self.name or not self.name.strip() or len(self.name) > 200 or not self.name.isprintable():
            raise ConfigError(f"a {self.scope} name must be 1-200 printable characters, not {self.name!r}")

    def __str__(self) -> str:
        return f"{self.scope} '{self.name}'"


@dataclass(frozen=True)
class TokenLimit:
    input_tokens: int
    output_tokens: int


@dataclass(frozen=True)
class QuotaLimits:
    subject: Subject
    default: TokenLimit
    set_input: int | None          # the limit set for this subject (None: the default applies)
    set_output: int | None
    effective: TokenLimit

    def to_json(self) -> dict:
        return {"scope": self.subject.scope, "subject": self.subject.name,
                "default": {"input": self.default.input_tokens, "output": self.default.output_tokens},
                "set": {"input": self.set_input, "output": self.set_output},
                "effective": {"input": self.effective.input_tokens, "output": self.effective.output_tokens}}


@dataclass(frozen=True)
class Usage:
    subject: Subject
    day: date
    limit: TokenLimit
    used_input: int = 0
    used_output: int = 0
    reserved_input: int = 0
    reserved_output: int = 0
    calls: int = 0
    refused: int = 0

    @property
    def remaining_input(self) -> int:
        return max(0, self.limit.input_tokens - self.used_input - self.reserved_input)

    @property
    def remaining_output(self) -> int:
        return max(0, self.limit.output_tokens - self.used_output - self.reserved_output)

    @property
    def spent(self) -> bool:
        """Nothing left of the input or of the output quota: no model call can start."""
        return self.remaining_input <= 0 or self.remaining_output <= 0

    def covers(self, input_tokens: int, output_tokens: int) -> bool:
        return input_tokens <= self.remaining_input and output_tokens <= self.remaining_output

    def to_json(self) -> dict:
        return {"scope": self.subject.scope, "subject": self.subject.name, "day": self.day.isoformat(),
                "limit": {"input": self.limit.input_tokens, "output": self.limit.output_tokens},
                "used": {"input": self.used_input, "output": self.used_output},
                "reserved": {"input": self.reserved_input, "output": self.reserved_output},
                "remaining": {"input": self.remaining_input, "output": self.remaining_output},
                "calls": self.calls, "refused": self.refused}


# ----------------------------------------------------------------------------------------- settings

def subjects_for(settings: Settings, *, project: str | None = None, user: str | None = None) -> list[Subject]:
    """The subjects a batch is charged to: its project and its user (the login name unless set)."""
    proj = project or settings.quota_project
    who = user or settings.quota_user or _login()
    return sorted([Subject("project", proj), Subject("user", who)])


def _login() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):          # no passwd entry and no LOGNAME/USER (containers)
        return "unknown"


def default_limit(settings: Settings, scope: str) -> TokenLimit:
    if scope == "project":
        return TokenLimit(settings.quota_project_input_tokens, settings.quota_project_output_tokens)
    if scope == "user":
        return TokenLimit(settings.quota_user_input_tokens, settings.quota_user_output_tokens)
    raise ConfigError(f"unknown quota scope {scope!r}")


def _zone(settings: Settings) -> ZoneInfo:
    try:
        return ZoneInfo(settings.quota_timezone)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ConfigError(f"quota time zone {settings.quota_timezone!r} is not an IANA time zone name "
                          "(e.g. UTC, Europe/Berlin, America/Los_Angeles)", setting="quota_timezone") from exc


def quota_day(settings: Settings, now: datetime | None = None) -> date:
    """The quota day `now` falls on: its calendar date in the configured time zone."""
    return (now or _utcnow()).astimezone(_zone(settings)).date()


def next_reset(settings: Settings, now: datetime | None = None) -> datetime:
    """The next midnight in the configured time zone (when today's quotas start again from zero)."""
    tz = _zone(settings)
    local = (now or _utcnow()).astimezone(tz)
    return datetime.combine(local.date() + timedelta(days=1), datetime.min.time(), tzinfo=tz)


# ------------------------------------------------------------------------------------------ limits

def limits(conn: psycopg.Connection, settings: Settings, subject: Subject) -> QuotaLimits:
    """The default, the limit set for `subject` (if any) and the smaller of the two, which applies."""
    d = default_limit(settings, subject.scope)
    row = conn.execute("SELECT input_tokens, output_tokens FROM quota_limits WHERE scope = %s AND subject = %s",
                       (subject.scope, subject.name)).fetchone()
    si, so = (row[0], row[1]) if row else (None, None)
    eff = TokenLimit(d.input_tokens if si is None else min(int(si), d.input_tokens),
                     d.output_tokens if so is None else min(int(so), d.output_tokens))
    return QuotaLimits(subject, d, None if si is None else int(si), None if so is None else int(so), eff)


def set_limit(conn: psycopg.Connection, settings: Settings, subject: Subject, *,
              input_tokens: int | None | _Keep = KEEP, output_tokens: int | None | _Keep = KEEP) -> QuotaLimits:
    """Set `subject`'s daily limits (None: back to the default; KEEP: unchanged). A limit may be set
    at or below the default, never above it (ConfigError): the defaults are what an operator grants."""
    d = default_limit(settings, subject.scope)
    for what, value, cap in (("input", input_tokens, d.input_tokens), ("output", output_tokens, d.output_tokens)):
        if isinstance(value, _Keep) or value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ConfigError(f"a daily {what}-token limit must be a whole number >= 0, not {value!r}")
        if value > cap:
            raise ConfigError(f"the daily {what}-token limit of a {subject.scope} can be set at most to the "
                              f"default, {cap:,}; raise DOCASSAY_QUOTA_{subject.scope.upper()}_{what.upper()}"
                              "_TOKENS to grant more")

    def fn(c: psycopg.Connection) -> None:
        cur = c.execute("SELECT input_tokens, output_tokens FROM quota_limits WHERE scope = %s AND subject = %s",
                        (subject.scope, subject.name)).fetchone()
        si, so = (cur[0], cur[1]) if cur else (None, None)
        si = si if isinstance(input_tokens, _Keep) else input_tokens
        so = so if isinstance(output_tokens, _Keep) else output_tokens
        if si is None and so is None:
            c.execute("DELETE FROM quota_limits WHERE scope = %s AND subject = %s", (subject.scope, subject.name))
            return
        c.execute("INSERT INTO quota_limits (scope, subject, input_tokens, output_tokens) VALUES (%s, %s, %s, %s) "
                  "ON CONFLICT (scope, subject) DO UPDATE SET input_tokens = EXCLUDED.input_tokens, "
                  "output_tokens = EXCLUDED.output_tokens, updated_at = now()",
                  (subject.scope, subject.name, si, so))
    transact(conn, fn)
    return limits(conn, settings, subject)


# ------------------------------------------------------------------------------------------- usage

_USAGE_COLS = "used_input, used_output, reserved_input, reserved_output, calls, refused"


def usage(conn: psycopg.Connection, settings: Settings, subject: Subject, *, day: date | None = None,
          now: datetime | None = None) -> Usage:
    """What `subject` used and has reserved on `day` (default: today in the quota time zone)."""
    day = day or quota_day(settings, now)
    lim = limits(conn, settings, subject).effective
    row = conn.execute(f"SELECT {_USAGE_COLS} FROM quota_usage WHERE scope = %s AND subject = %s AND day = %s",
                       (subject.scope, subject.name, day)).fetchone()
    return Usage(subject, day, lim, *(int(v) for v in row)) if row else Usage(subject, day, lim)


def _ensure_usage_row(conn: psycopg.Connection, subject: Subject, day: date) -> None:
    transact(conn, lambda c: c.execute(
        "INSERT INTO quota_usage (scope, subject, day) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
        (subject.scope, subject.name, day)))


def release_expired(conn: psycopg.Connection, now: datetime | None = None) -> int:
    """Give back the reserved tokens of reservations past their expiry (left by a crashed worker);
    returns how many subject reservations were released. Safe to run concurrently with settling."""
    ids = conn.execute("SELECT DISTINCT id FROM quota_reservations WHERE expires_at < %s",
                       (now or _utcnow(),)).fetchall()
    return sum(_release(conn, rid) for (rid,) in ids)


def _release(conn: psycopg.Connection, rid: str) -> int:
    """Delete reservation `rid` and take its tokens out of `reserved` (one transaction); 0 when it
    was settled or released meanwhile."""
    def fn(c: psycopg.Connection) -> int:
        rows = c.execute("DELETE FROM quota_reservations WHERE id = %s "
                         "RETURNING scope, subject, day, input_tokens, output_tokens", (rid,)).fetchall()
        for scope, subject, day, r_in, r_out in sorted(rows):
            c.execute("UPDATE quota_usage SET reserved_input = reserved_input - %s, "
                      "reserved_output = reserved_output - %s, updated_at = now() "
                      "WHERE scope = %s AND subject = %s AND day = %s", (r_in, r_out, scope, subject, day))
        return len(rows)
    return transact(conn, fn)


# ------------------------------------------------------------------------------------------ budget

def is_metered(scorer: object) -> bool:
    """True for a scorer that calls a model and reports what a call costs (`tokens(...)`)."""
    return callable(getattr(scorer, "tokens", None))


class _Refused(Exception):
    def __init__(self, subject: Subject) -> None:
        self.subject = subject


class QuotaReservation:
    """Tokens set aside for one model call. Settle it with the true count, or cancel it; the first
    of the two counts, later calls do nothing."""

    def __init__(self, budget: "QuotaBudget", rid: str, day: date, input_tokens: int, output_tokens: int) -> None:
        self.budget = budget
        self.id = rid
        self.day = day
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens
        self.closed = False

    def settle(self, input_tokens: int, output_tokens: int) -> None:
        """Replace the reservation by the true count (recorded even when it exceeds the estimate)."""
        if not self.closed:
            self.budget._settle(self, (max(0, int(input_tokens)), max(0, int(output_tokens))))
            self.closed = True

    def cancel(self) -> None:
        """The call did not happen (or failed before using the model): give the tokens back."""
        if not self.closed:
            self.budget._settle(self, None)
            self.closed = True


class QuotaBudget:
    """The quotas of one batch (`flows.pipeline.Budget`): every subject in `subjects` must cover a
    model call. Thread-safe (one connection, used under a lock); open it once per process."""

    def __init__(self, db: Database, settings: Settings, subjects: Sequence[Subject], *,
                 clock: Clock = _utcnow) -> None:
        if not subjects:
            raise ConfigError("a budget needs at least one project or user")
        self.db = db
        self.settings = settings
        self.subjects = sorted(set(subjects))      # one lock order for every writer: no deadlocks
        self.clock = clock
        self._lock = threading.Lock()
        self._local = threading.local()
        self._conn: psycopg.Connection | None = None
        self._rows_for: date | None = None

    @classmethod
    def from_settings(cls, settings: Settings, *, project: str | None = None, user: str | None = None,
                      db: Database | None = None) -> "QuotaBudget":
        return cls(db or Database.from_settings(settings), settings, subjects_for(settings, project=project, user=user))

    # -- Budget protocol ------------------------------------------------------------------------

    @property
    def reason(self) -> str:
        """Why this thread's last `reserve` returned None."""
        return getattr(self._local, "reason", "")

    def reserve(self, input_tokens: int, output_tokens: int) -> QuotaReservation | None:
        """Set the tokens aside in every subject at once, or return None (and set `reason`)."""
        need_in, need_out = max(0, int(input_tokens)), max(0, int(output_tokens))
        now = self.clock()
        day = quota_day(self.settings, now)
        rid = uuid.uuid4().hex
        expires = now + timedelta(seconds=self.settings.quota_reservation_ttl_s)
        with self._lock, self._db("reserve tokens"):
            conn = self._connection()
            self._ensure_rows(conn, day)
            caps = {s: limits(conn, self.settings, s).effective for s in self.subjects}

            def fn(c: psycopg.Connection) -> None:
                for s in self.subjects:
                    cap = caps[s]
                    hit = c.execute(
                        "UPDATE quota_usage SET reserved_input = reserved_input + %s, "
                        "reserved_output = reserved_output + %s, updated_at = now() "
                        "WHERE scope = %s AND subject = %s AND day = %s "
                        "AND used_input + reserved_input + %s <= %s AND used_output + reserved_output + %s <= %s "
                        "RETURNING 1",
                        (need_in, need_out, s.scope, s.name, day, need_in, cap.input_tokens, need_out,
                         cap.output_tokens)).fetchone()
                    if hit is None:
                        raise _Refused(s)
                    c.execute("INSERT INTO quota_reservations (id, scope, subject, day, input_tokens, output_tokens, "
                              "expires_at) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                              (rid, s.scope, s.name, day, need_in, need_out, expires))
            try:
                transact(conn, fn)
            except _Refused as refused:
                subject = refused.subject
                u = usage(conn, self.settings, subject, day=day)
                transact(conn, lambda c: c.execute(
                    "UPDATE quota_usage SET refused = refused + 1 WHERE scope = %s AND subject = %s AND day = %s",
                    (subject.scope, subject.name, day)))
                self._local.reason = self._refusal(u, need_in, need_out)
                return None
        self._local.reason = ""
        return QuotaReservation(self, rid, day, need_in, need_out)

    # -- before a batch -------------------------------------------------------------------------

    def usages(self) -> list[Usage]:
        """Today's usage of every subject (expired reservations released first)."""
        now = self.clock()
        with self._lock, self._db("read the token quotas"):
            conn = self._connection()
            release_expired(conn, now)
            return [usage(conn, self.settings, s, now=now) for s in self.subjects]

    def check(self) -> list[Usage]:
        """Raise QuotaExceeded when a quota that applies is already spent (the batch is refused
        before anything is processed); otherwise return today's usage."""
        now = self.clock()
        us = self.usages()
        for u in us:
            if u.spent:
                raise QuotaExceeded(self._spent(u, now), subject=str(u.subject))
        return us

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    # -- internals ------------------------------------------------------------------------------

    @contextmanager
    def _db(self, what: str) -> Iterator[None]:
        """A database failure becomes a DatabaseError (the document's row says so; the batch goes
        on); the connection is reopened on next use. A reservation lost this way expires."""
        try:
            yield
        except psycopg.Error as exc:
            if self._conn is not None and not self._conn.closed:
                self._conn.close()
            raise DatabaseError(f"could not {what}: {exc}".strip()) from exc

    def _connection(self) -> psycopg.Connection:
        if self._conn is None or self._conn.closed:
            self._conn = self.db.connect()
            self._rows_for = None
        return self._conn

    def _ensure_rows(self, conn: psycopg.Connection, day: date) -> None:
        if self._rows_for != day:
            for s in self.subjects:
                _ensure_usage_row(conn, s, day)
            self._rows_for = day

    def _settle(self, r: QuotaReservation, actual: tuple[int, int] | None) -> None:
        with self._lock, self._db("settle a token reservation"):
            conn = self._connection()

            def fn(c: psycopg.Connection) -> None:
                rows = {(sc, su): (ri, ro) for sc, su, ri, ro in c.execute(
                    "DELETE FROM quota_reservations WHERE id = %s RETURNING scope, subject, input_tokens, output_tokens",
                    (r.id,)).fetchall()}
                for s in self.subjects:
                    r_in, r_out = rows.get((s.scope, s.name), (0, 0))   # (0, 0): already released as expired
                    a_in, a_out = actual or (0, 0)
                    c.execute("UPDATE quota_usage SET reserved_input = reserved_input - %s, "
                              "reserved_output = reserved_output - %s, used_input = used_input + %s, "
                              "used_output = used_output + %s, calls = calls + %s, updated_at = now() "
                              "WHERE scope = %s AND subject = %s AND day = %s",
                              (r_in, r_out, a_in, a_out, 1 if actual is not None else 0, s.scope, s.name, r.day))
            transact(conn, fn)

    def _refusal(self, u: Usage, need_in: int, need_out: int) -> str:
        """Why a reservation was turned down. Worded without the call's own size, so that the
        refusals of one exhausted quota read alike (the batch summary lists distinct errors)."""
        short = [(k, rem, lim) for k, need, rem, lim in
                 (("input", need_in, u.remaining_input, u.limit.input_tokens),
                  ("output", need_out, u.remaining_output, u.limit.output_tokens)) if need > rem]
        if not short:
            return f"daily token quota of {u.subject} was taken by concurrent model calls; {self._resets()}"
        kinds = " and ".join(k for k, _, _ in short)
        left = " and ".join(f"{rem:,} of {lim:,} {k} tokens" for k, rem, lim in short)
        return (f"daily {kinds}-token quota of {u.subject} cannot cover a model call ({left} left); "
                f"{self._resets()}")

    def _spent(self, u: Usage, now: datetime) -> str:
        kinds = [k for k, rem in (("input", u.remaining_input), ("output", u.remaining_output)) if rem <= 0]
        lim = {"input": u.limit.input_tokens, "output": u.limit.output_tokens}
        parts = " and ".join(f"{k} ({lim[k]:,} tokens)" for k in kinds)
        return (f"the daily {parts} quota of {u.subject} is spent for {u.day.isoformat()}; "
                f"batch refused, nothing was processed; {self._resets(now)} "
                "(see `docassay quota usage`)")

    def _resets(self, now: datetime | None = None) -> str:
        text = f"it resets at midnight {self.settings.quota_timezone}"
        if now is None:
            return text
        mins = max(1, int((next_reset(self.settings, now) - now).total_seconds() // 60))
        return f"{text}, in {mins // 60} h {mins % 60:02d} min"
