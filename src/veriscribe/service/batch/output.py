"""The output file: refused when it is another run's, repaired, appended to."""

from __future__ import annotations

import asyncio

from veriscribe.errors import InputError
from veriscribe.store import runs
from veriscribe.store.db import Store
from veriscribe.store.output import ResultsFile, Scan, SyncReport


async def check_output(results: ResultsFile) -> Scan:
    """Refuse an output file that is not this run's (see ``ResultsFile.scan``).

    Returns:
        What the file holds.

    Raises:
        InputError: The file holds something else, or cannot be read.
    """
    try:
        return await asyncio.to_thread(results.scan)
    except OSError as exc:
        raise InputError(f"cannot write {results.path}: {exc.strerror or exc}") from exc


async def sync_output(store: Store, run_id: str, results: ResultsFile) -> SyncReport:
    """Repair the output file from the database (see ``ResultsFile.sync``).

    Raises:
        InputError: The file cannot be written, or holds another run's lines.
    """
    try:
        scan = await asyncio.to_thread(results.scan)
        final = await runs.final_ids(store, run_id)
        present = {key for key, _, _ in scan.lines}
        stored = await runs.results(store, run_id, final - present)
        return await asyncio.to_thread(results.sync, final, stored)
    except OSError as exc:
        raise InputError(f"cannot write {results.path}: {exc.strerror or exc}") from exc


async def write_lines(
    results: ResultsFile, lines: asyncio.Queue[tuple[str, str] | None]
) -> None:
    """Append the queued lines to the output file, many at a time, until a None."""
    while True:
        first = await lines.get()
        if first is None:
            return
        batch = [first]
        done = False
        while not lines.empty():
            nxt = lines.get_nowait()
            if nxt is None:
                done = True
                break
            batch.append(nxt)
        await asyncio.to_thread(results.append, batch)
        if done:
            return
