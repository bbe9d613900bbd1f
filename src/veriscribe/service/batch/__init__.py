"""Batch abstract generation: many articles at once, resumable, observable.

``run_batch`` registers every input item in the run store (an unreadable file or line
becomes a failed item with its reason) and works through the pending items (a new run
starts on its first items while the rest of its inputs are read): it keeps
enough articles in flight that the model's call limit (``--concurrency``, enforced by the
LLM client's call gate) stays saturated, runs each article through the checkpointed
abstract graph, commits each outcome to the database and then appends it as one line to
the output file.

Many workers share a run: ``run_batch`` started again with the same ``--run-id`` (on
this machine or another that reaches the same PostgreSQL database) joins it, and
``work_run`` joins without the input files, since every article's text is in the
database. Each worker claims items, keeps its claims alive with a heartbeat, and, once
nothing is pending, waits for the items other workers hold: a worker that died (its
process is gone, or its heartbeat is older than the lease) has its items taken over.

Resuming is running again: finished items are skipped, interrupted articles continue
from their checkpoints, failed items are retried, and the output file is repaired from the
database (partial tail cut, missing lines appended, no duplicates). Every model response
is cached, so a finished call is never made twice, even one whose graph step had not been
checkpointed when the process died. The first SIGINT or SIGTERM stops claiming work and
lets the articles in flight finish; a second one cancels them (they continue from their
checkpoints next time).

A worker's session (``runner.BatchRunner``) goes through four phases, one class each:
register (``registering``), read (``reading``), work (``work``) and drain (``draining``),
sharing a ``session.Session``; ``session`` says what each owns.
"""

from veriscribe.service.batch.config import (
    HEARTBEAT_S,
    KIND,
    LEASE_S,
    TICK_S,
    WAIT_S,
    RunConfig,
    absolute,
    absolute_inputs,
    article_slots,
    batch_settings,
    default_run_id,
)
from veriscribe.service.batch.progress import BatchProgress, CallMeter, OnProgress
from veriscribe.service.batch.register import failure_line
from veriscribe.service.batch.run import register_run, resume_run, run_batch, work_run
from veriscribe.service.batch.runner import BatchRunner
from veriscribe.service.batch.summary import (
    list_runs,
    run_results,
    run_state,
    run_summary,
    show_run,
    stored_run,
)

__all__ = ["run_batch", "register_run", "resume_run", "work_run", "BatchRunner"]
__all__ += ["BatchProgress", "OnProgress", "CallMeter", "RunConfig", "failure_line"]
__all__ += ["list_runs", "run_results", "run_state", "run_summary", "show_run"]
__all__ += ["stored_run", "default_run_id", "batch_settings", "article_slots"]
__all__ += ["absolute", "absolute_inputs", "KIND", "LEASE_S", "HEARTBEAT_S"]
__all__ += ["WAIT_S", "TICK_S"]
