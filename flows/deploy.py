"""Scheduled deployments of the inbox flow, served by Prefect (`docassay deploy serve`).

    InboxDeployment(spec, cron, ...)      one inbox on one cron schedule
    to_runner_deployment(d)               Prefect's `Flow.to_deployment` with the schedule, the
                                          flow parameters (the InboxSpec) and a deployment
                                          concurrency limit of 1
    serve(deployments)                    register them and run their scheduled runs until stopped
                                          (Prefect's `serve`: each run in a subprocess)
    run_once(spec, task_runner)           the same flow once, now, in this process

Two runs of one inbox never work at once, twice over: the deployment's concurrency limit is 1
with collision strategy CANCEL_NEW (a run that comes due while the previous one still works is
cancelled; the next tick picks up what arrived), and the run itself holds the inbox's lease in the
database (flows/inbox.py), which also covers runs started outside this deployment.

Cron strings are Prefect's: five fields, or six with seconds last (`* * * * * */15`: every 15 s), evaluated in
`timezone` (default UTC). Schedules are fired by a Prefect server's scheduler: point
`PREFECT_API_URL` at one (`prefect server start`); Prefect's temporary in-process server does not
run the scheduler.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from docassay.flows.inbox import InboxSpec, inbox_flow
from docassay.flows.runners import make_task_runner
from docassay.infra.errors import ConfigError

__all__ = ["InboxDeployment", "to_runner_deployment", "serve", "run_once", "deployment_name", "FLOW_NAME"]

FLOW_NAME = "docassay-inbox"


def deployment_name(inbox: str) -> str:
    """A readable, stable deployment name for an inbox URL ("inbox-s3-bucket-incoming")."""
    slug = re.sub(r"[^a-z0-9]+", "-", inbox.lower().replace("s3://", "s3-")).strip("-")
    return ("inbox-" + slug)[-80:].lstrip("-") or "inbox"


@dataclass(frozen=True)
class InboxDeployment:
    spec: InboxSpec
    cron: str
    name: str | None = None
    timezone: str | None = None
    task_runner: str = "threads"
    collision: str = "cancel_new"            # cancel_new | enqueue (when a run comes due during another)

    def __post_init__(self) -> None:
        from prefect.client.schemas.schedules import CronSchedule
        from pydantic import ValidationError
        try:
            CronSchedule(cron=self.cron, timezone=self.timezone or "UTC")
        except ValidationError as exc:
            raise ConfigError(f"invalid cron schedule {self.cron!r} or time zone {self.timezone!r}: "
                              f"{exc.errors()[0].get('msg', exc)}", setting="cron") from exc
        if self.collision not in ("cancel_new", "enqueue"):
            raise ConfigError(f"collision must be cancel_new or enqueue, not {self.collision!r}", setting="collision")

    @property
    def deployment_name(self) -> str:
        return self.name or deployment_name(self.spec.inbox)


def to_runner_deployment(d: InboxDeployment) -> Any:
    """The Prefect `RunnerDeployment` for `d` (not yet registered)."""
    from prefect.client.schemas.objects import ConcurrencyLimitConfig, ConcurrencyLimitStrategy
    from prefect.schedules import Cron

    runner = make_task_runner(d.task_runner, d.spec.concurrency)
    strategy = ConcurrencyLimitStrategy.CANCEL_NEW if d.collision == "cancel_new" else ConcurrencyLimitStrategy.ENQUEUE
    flow = inbox_flow.with_options(task_runner=runner)
    return flow.to_deployment(
        name=d.deployment_name,
        schedules=[Cron(d.cron, timezone=d.timezone or "UTC")],
        parameters=d.spec.parameters(),
        concurrency_limit=ConcurrencyLimitConfig(limit=1, collision_strategy=strategy),
        description=f"docassay: extract what arrives in {d.spec.inbox} into {d.spec.dest}",
        tags=["docassay", "inbox"],
    )


def serve(deployments: list[InboxDeployment], *, limit: int | None = None, announce: bool = True) -> None:
    """Register `deployments` and run their scheduled runs until interrupted (blocks)."""
    from prefect import serve as prefect_serve

    names = [d.deployment_name for d in deployments]
    if len(set(names)) != len(names):
        raise ConfigError(f"two deployments share a name: {names}; give each --name", setting="name")
    prefect_serve(*[to_runner_deployment(d) for d in deployments], limit=limit, print_starting_message=announce)


def run_once(spec: InboxSpec, task_runner: str = "threads") -> dict:
    """Run the inbox flow once, now, in this process; returns the run's summary."""
    flow = inbox_flow.with_options(task_runner=make_task_runner(task_runner, spec.concurrency))
    return flow(**spec.parameters())
