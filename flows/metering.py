"""One metered model call: the generator's tokens reserved on the job's budget before it runs and
settled with the true count after (infra.quota), the row's `model_tokens` updated. Used by the
pipeline's new-format path and by learning a layout from an e-invoice hybrid (flows/einvoice.py)."""
from __future__ import annotations

from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

from docassay.extractors.instructions.generator import Generation, estimate_tokens, generate, prepare
from docassay.extractors.spans import DocIndex
from docassay.flows.results import Row

if TYPE_CHECKING:
    from docassay.flows.context import Job

__all__ = ["metered_generate"]


def metered_generate(ix: DocIndex, job: "Job", row: Row, timer: Any = None) -> tuple[Generation | None, str | None]:
    """(instructions generated for this page, None), or (None, the budget's reason) when the token
    budget refuses the model call; a call that raises gives its reservation back. With `timer` (the
    pipeline's stage timer) the proposals (shared by the estimate and the call) are the `propose`
    stage and the model call the `generate` stage: a refused call has no `generate` stage."""
    reservation = None
    with timer.stage("propose") if timer is not None else nullcontext():
        prepared = prepare(ix, job.schema)           # the proposals: computed once, for the estimate and the call
    if job.budget is not None:
        est_in, est_out = estimate_tokens(ix, job.schema, job.scorer, prepared=prepared)
        if est_in or est_out:
            reservation = job.budget.reserve(est_in, est_out)
            if reservation is None:
                return None, job.budget.reason
    try:
        with timer.stage("generate") if timer is not None else nullcontext():
            gen = generate(ix, job.schema, scorer=job.scorer, produced_by=job.generator, prepared=prepared)
    except BaseException:
        if reservation is not None:
            reservation.cancel()
        raise
    if reservation is not None:
        reservation.settle(gen.tokens.input, gen.tokens.output)
    row.model_tokens = {"input": row.model_tokens["input"] + gen.tokens.input,
                        "output": row.model_tokens["output"] + gen.tokens.output}
    return gen, None
