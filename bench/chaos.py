"""Chaos: the long commands killed at random moments on a faulty model, resumed, compared.

Each trial takes one of the long commands, in turn: ``batch``, ``corpus add``, ``ask
--questions FILE --out FILE`` and ``eval make-questions``, on small development inputs
(a few PCD articles, a slice of the cpgQA passages and an NGC guideline, a handful of
cpgQA questions; a small guideline whose sentences hold double quotes, backslashes,
control characters, markup and a very long sentence rides along in both corpora, with a
question about it) and the simulated model failing a share of its calls
(``sim:latency=L,fail=F,seed=S``: timeouts, 5xx errors, invalid JSON, empty replies).
Every run gets a fresh database (``VERISCRIBE_DB``); ``ask`` and ``make-questions`` start
from a copy of one holding the cpgQA slice as corpus ``cpg``.

1. Reference: the command runs undisturbed to the end (rerun while it exits non-zero,
   at most ``--reruns`` times). Trials with the same command and model seed share it.
2. Disturbed: the same command in another database gets SIGKILL, SIGINT or two SIGINTs
   after a random delay (mostly within the reference's working time, sometimes during
   start-up), then is rerun until it exits 0, at most ``--reruns`` times: the same
   command, or for a batch ``runs resume RUN`` half of the time. It is always rerun at
   least once, so a rerun of a finished command is exercised too.
3. The final outputs are compared, item by item: batch lines by ``source``, answers and
   questions by ``id``, corpus sections by ``doc_id:section_id``.

Inputs at the edges ride along. The batch also reads a glob, ``tree/**/*.xml``, over a
directory holding symbolic link loops (``l1 -> .``, ``sub/up -> ..``), a small good
article and one nested 20,000 elements deep: the walk must end, the deep article be a
failed item, the good one be read, and nothing be read twice through a link. The
``ask`` and ``make-questions`` trials start with their ``--out`` file holding someone's
text without a final newline: a disturbed run that did not finish must leave it as it
was (an unfinished run that damaged it counts as a lost item). Once per bench, ``batch
--out`` onto such a file must be refused, the file intact (else one lost item).

What "the same output" means: the simulated model's replies depend only on the prompt
and its seed, its faults on the prompt, the seed and the attempt within one process.
A rerun process meets the same faults again, and every finished call is in the response
cache (the commands are run with ``VERISCRIBE_LLM__CACHE_SIM=true``, as real backends
are cached by default), so a resumed run takes the path of the undisturbed one (as far
as the order in which concurrent calls use up attempts allows) and must produce the
same items with the same content. Fields that legitimately change are
left out of the comparison: usage, timings, run and thread ids, whether a result was
reused, and a batch item's claim ``attempts``, ``resumed_from_checkpoint`` and its
facets' token counts.

Counters (over all trials):

- ``lost``: items of the reference missing from the final output;
- ``duplicated``: extra lines (or rows) of an item already present;
- ``differing``: items whose content differs from the reference, plus items the
  reference does not have;
- ``unresumable``: trials whose disturbed command never exited 0 within the reruns
  while the reference did.

Runs that printed ``sqlite3.InterfaceError`` are counted on a line of their own.
Every anomaly is printed with the trial that reproduces it (``--trial K`` runs trial K
of the same ``--seed`` alone; the moment of the signal is the same fraction of the
reference's time, not the same point of the work). The last line reads
``trials=<n> lost=<n> duplicated=<n> differing=<n> unresumable=<n>``.

Usage: ``.venv/bin/python bench/chaos.py [--trials 30] [--seed 0] [--fail 0.2]
[--latency 0.05] [--reruns 3] [--jobs 2] [--kinds batch,corpus,ask,questions]
[--trial K] [--keep DIR]``
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
KINDS = ("batch", "corpus", "ask", "questions")
SIGNALS = ("SIGKILL", "SIGINT", "SIGINTx2")
MODEL_SEEDS = 2  # trials of one command share the references of this many seeds
CORPUS = "cpg"
STARTUP_SHARE = 0.15  # trials whose signal lands before the first model call
POLL_S = 0.05
GRACE_S = 60.0  # how long an interrupted process may take to stop
RUN_TIMEOUT_S = 300.0
# Fields that differ between two correct runs of the same command.
VOLATILE = frozenset(
    {"usage", "seconds", "run_id", "thread_id", "reused", "cached_calls", "out"}
)
# A batch line also says how its item was run: claimed how often, resumed or not, and
# each facet's tokens (a reply the killed run had cached costs none when resumed).
BATCH_VOLATILE = VOLATILE | {
    "attempts",
    "resumed_from_checkpoint",
    "prompt_tokens",
    "output_tokens",
}
ELAPSED = re.compile(r" in \d+(?:\.\d+)? s\b")
"""An elapsed time in a message, which two correct runs do not share."""
KEYS = {"batch": "source", "ask": "id", "questions": "id"}
# What a user had in a file later named as --out: no final newline, not JSON.
FOREIGN = b"notes kept by hand, without a final newline"
SEEDED = ("ask", "questions")  # trials whose --out file starts as FOREIGN
DEEP_LEVELS = 20_000


@dataclass(frozen=True)
class Inputs:
    """The small inputs all trials share (same absolute paths in every run)."""

    root: Path
    articles: Path
    guidelines: tuple[Path, ...]
    questions: Path
    corpus_db: Path
    n_questions: int
    tree: Path  # good.xml, deep.xml and symbolic link loops, read by a glob


@dataclass(frozen=True)
class Trial:
    """What one trial does: derived from the bench seed and the trial's number."""

    index: int
    kind: str
    model_seed: int
    signal: str
    moment: float  # share of the reference's working time before the signal
    during_startup: bool
    resume_mode: str  # "same" or "resume" (batch only)

    @classmethod
    def make(cls, seed: int, index: int, kinds: Sequence[str] = KINDS) -> Trial:
        """Return trial ``index`` of the bench seeded with ``seed``."""
        rng = random.Random(f"chaos:{seed}:{index}")
        return cls(
            index=index,
            kind=kinds[index % len(kinds)],
            model_seed=rng.randrange(MODEL_SEEDS),
            signal=rng.choice(SIGNALS),
            moment=rng.random(),
            during_startup=rng.random() < STARTUP_SHARE,
            resume_mode=rng.choice(("same", "resume")),
        )


@dataclass
class Output:
    """A command's final output as items: keys in order, content per key."""

    keys: list[str] = field(default_factory=list)
    content: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


@dataclass
class Reference:
    """An undisturbed run of one command and model seed."""

    output: Output
    exit_code: int
    first_call: float  # seconds from start to its first model call
    working: float  # seconds from its first model call to its end
    runs: int


@dataclass
class TrialResult:
    """The counts of one trial and what was seen."""

    trial: Trial
    lost: int = 0
    duplicated: int = 0
    differing: int = 0
    unresumable: bool = False
    interface_errors: int = 0
    items: int = 0
    first_exit: int | None = None
    signalled_at: float | None = None
    reruns: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def anomalous(self) -> bool:
        """Tell whether anything went wrong in this trial."""
        return bool(
            self.lost or self.duplicated or self.differing or self.unresumable
        ) or any(n.startswith("!") for n in self.notes)


class Bench:
    """Runs trials; holds the shared inputs and the references computed so far."""

    def __init__(
        self,
        work: Path,
        inputs: Inputs,
        *,
        python: str = sys.executable,
        fail: float = 0.2,
        latency: float = 0.05,
        reruns: int = 3,
    ) -> None:
        self.work = work
        self.inputs = inputs
        self.python = python
        self.fail = fail
        self.latency = latency
        self.reruns = reruns
        self.live: set[subprocess.Popen[bytes]] = set()
        self.stopping = threading.Event()  # set on Ctrl-C: start nothing more
        self.references: dict[tuple[str, int], Reference] = {}
        self.interface_errors = 0
        self.runs = 0
        self.lock = threading.Lock()  # trials run in threads (--jobs)

    # ------------------------------------------------------------------ commands

    def model(self, seed: int | str) -> str:
        """Return the faulty simulated model SPEC for a seed."""
        return f"sim:latency={self.latency:g},fail={self.fail:g},seed={seed}"

    def command(self, kind: str, out: Path, model: str) -> list[str]:
        """Return the CLI arguments of a trial's command, writing into ``out``."""
        target = str(out / "out.jsonl")
        if kind == "batch":
            pattern = str(self.inputs.tree / "**" / "*.xml")
            return [
                "batch", str(self.inputs.articles), pattern, "--out", target,
                "--model", model, "--concurrency", "2", "--quiet",
            ]  # fmt: skip
        if kind == "corpus":
            paths = [str(p) for p in self.inputs.guidelines]
            return ["corpus", "add", "guides", *paths, "--model", model, "--json"]
        if kind == "ask":
            return [
                "ask", "--questions", str(self.inputs.questions), "--out", target,
                "--corpus", CORPUS, "--model", model, "--json",
            ]  # fmt: skip
        return [
            "eval", "make-questions", "--corpus", CORPUS,
            "--n", str(self.inputs.n_questions), "--out", target,
            "--model", model, "--json",
        ]  # fmt: skip

    def environment(self, db: Path) -> dict[str, str]:
        """Return the environment of a run: its database, this checkout's source."""
        env = dict(os.environ)
        path = env.get("PYTHONPATH", "")
        env["PYTHONPATH"] = str(ROOT / "src") + (os.pathsep + path if path else "")
        env["VERISCRIBE_DB"] = str(db)
        env["VERISCRIBE_LLM__CACHE_SIM"] = "true"
        env.pop("VERISCRIBE_MODEL", None)
        return env

    def start(
        self, args: Sequence[str], db: Path, log: Path
    ) -> subprocess.Popen[bytes]:
        """Start the CLI with ``args``; its output goes to ``log``.{out,err}."""
        if self.stopping.is_set():
            raise KeyboardInterrupt
        with (
            open(log.with_suffix(".out"), "wb") as out,
            open(log.with_suffix(".err"), "wb") as err,
        ):
            proc = subprocess.Popen(
                [self.python, "-m", "veriscribe.cli.app", *args],
                stdout=out,
                stderr=err,
                env=self.environment(db),
                cwd=db.parent,
            )
        with self.lock:
            self.runs += 1
            self.live.add(proc)
        return proc

    def finish(self, proc: subprocess.Popen[bytes], log: Path) -> int:
        """Wait for a process; count the store errors it printed."""
        try:
            code = proc.wait(timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
        with self.lock:
            self.live.discard(proc)
        stderr = log.with_suffix(".err").read_text(errors="replace")
        if "InterfaceError" in stderr:
            with self.lock:
                self.interface_errors += 1
        return code

    def fresh_db(self, kind: str, place: Path) -> Path:
        """Return a new database for a run: empty, or a copy of the corpus one."""
        place.mkdir(parents=True, exist_ok=True)
        db = place / "v.sqlite"
        if kind in ("ask", "questions"):
            copy_db(self.inputs.corpus_db, db)
        return db

    def stop(self) -> None:
        """Start no more runs and kill the ones running."""
        self.stopping.set()
        with self.lock:
            for proc in self.live:
                proc.kill()

    # ---------------------------------------------------------------- references

    def reference(self, kind: str, seed: int) -> Reference:
        """Return the undisturbed run of a command with a model seed (run once)."""
        key = (kind, seed)
        if key in self.references:
            return self.references[key]
        place = self.work / f"ref-{kind}-{seed}"
        db = self.fresh_db(kind, place)
        args = self.command(kind, place, self.model(seed))
        code, first_call, working, runs = 1, 0.0, 0.0, 0
        while runs <= self.reruns:
            log = place / f"run{runs}"
            started = time.perf_counter()
            proc = self.start(args, db, log)
            first = wait_for_first_call(proc, db, calls_in(db))
            code = self.finish(proc, log)
            if runs == 0:
                first_call = first - started
                working = time.perf_counter() - first
            runs += 1
            if code == 0:
                break
        ref = Reference(collect(kind, place, db), code, first_call, working, runs)
        with self.lock:
            self.references[key] = ref
        return ref

    # -------------------------------------------------------------------- trials

    def run_trial(self, trial: Trial) -> TrialResult:
        """Disturb one run, resume it, and compare it with the reference."""
        result = TrialResult(trial)
        ref = self.reference(trial.kind, trial.model_seed)
        if ref.exit_code != 0:
            result.notes.append(
                f"reference exited {ref.exit_code} after {ref.runs} runs "
                f"(the faults alone stop it; see {self.work}/ref-{trial.kind}-"
                f"{trial.model_seed}/run*.err)"
            )
        place = self.work / f"trial{trial.index}"
        db = self.fresh_db(trial.kind, place)
        args = self.command(trial.kind, place, self.model(trial.model_seed))
        if trial.kind in SEEDED:
            (place / "out.jsonl").write_bytes(FOREIGN)
        baseline = calls_in(db)
        started = time.perf_counter()
        proc = self.start(args, db, place / "run0")
        if trial.during_startup:
            delay = trial.moment * ref.first_call
        else:  # a moment of the work, measured from the first model call
            first = wait_for_first_call(proc, db, baseline)
            delay = first - started + trial.moment * ref.working
        try:
            proc.wait(timeout=max(0.0, delay - (time.perf_counter() - started)))
            result.notes.append(f"finished before the signal ({delay:.2f}s)")
        except subprocess.TimeoutExpired:
            result.signalled_at = delay
            self.send(proc, trial.signal, result)
        result.first_exit = self.finish(proc, place / "run0")
        damaged = 0
        if trial.kind in SEEDED and result.first_exit != 0:
            damaged = self.out_damaged(trial.kind, place, db, ref, result)
        code = result.first_exit
        for attempt in range(1, self.reruns + 1):
            rerun = args
            if trial.kind == "batch" and trial.resume_mode == "resume":
                run_id = batch_run_id(db)
                if run_id is not None:
                    rerun = ["runs", "resume", run_id, "--quiet"]
            result.reruns.append("resume" if rerun is not args else "same")
            log = place / f"run{attempt}"
            code = self.finish(self.start(rerun, db, log), log)
            if code == 0:
                break
        result.interface_errors = sum(
            "InterfaceError" in log.read_text(errors="replace")
            for log in place.glob("run*.err")
        )
        if result.interface_errors:
            result.notes.append(
                f"{result.interface_errors} run(s) printed sqlite3.InterfaceError"
            )
        result.unresumable = code != 0 and ref.exit_code == 0
        if code != 0:
            result.notes.append(f"last rerun exited {code}: see {place}/run*.err")
        got = collect(trial.kind, place, db)
        self.compare(ref.output, got, result)
        if trial.kind == "batch":
            check_tree(self.inputs.tree, got, result)
        result.lost += damaged
        return result

    @staticmethod
    def out_damaged(
        kind: str, place: Path, db: Path, ref: Reference, result: TrialResult
    ) -> int:
        """Return 1 if an unfinished run left its --out file neither as it was nor whole.

        The file held :data:`FOREIGN`; a run that ended with an error or a signal must
        leave it so, unless it wrote the whole output just before it was stopped.
        """
        path = place / "out.jsonl"
        held = path.read_bytes() if path.exists() else None
        if held == FOREIGN:
            return 0
        output = collect(kind, place, db)
        if not output.problems and set(ref.output.keys) <= set(output.keys):
            return 0  # finished writing just before the signal
        shown = "nothing" if held is None else repr(held[:60])
        result.notes.append(
            f"! the unfinished run (exit {result.first_exit}) left {shown} in the "
            "--out file it had to leave as it was"
        )
        return 1

    def foreign_out(self) -> int:
        """Run ``batch --out`` onto a file that is not its output; return 1 if harmed."""
        place = self.work / "foreign-out"
        db = self.fresh_db("batch", place)
        target = place / "notes.txt"
        target.write_bytes(FOREIGN)
        args = self.command("batch", place, self.model(0))
        args[args.index("--out") + 1] = str(target)
        code = self.finish(self.start(args, db, place / "run0"), place / "run0")
        kept = target.read_bytes() == FOREIGN
        print(
            f"batch --out onto a file that is not its output: exit {code}, "
            f"the file {'left as it was' if kept else 'CHANGED'}"
        )
        return 0 if kept and code == 1 else 1

    @staticmethod
    def send(proc: subprocess.Popen[bytes], name: str, result: TrialResult) -> None:
        """Send the trial's signal; kill a process that does not stop in time."""
        if name == "SIGKILL":
            proc.send_signal(signal.SIGKILL)
            return
        proc.send_signal(signal.SIGINT)
        if name == "SIGINTx2":
            time.sleep(0.2)
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=GRACE_S)
        except subprocess.TimeoutExpired:
            result.notes.append(f"! did not stop within {GRACE_S:g}s of {name}")
            proc.kill()

    @staticmethod
    def compare(ref: Output, got: Output, result: TrialResult) -> None:
        """Count lost, duplicated and differing items of ``got`` against ``ref``."""
        counts = Counter(got.keys)
        expected = set(ref.keys)
        result.items = len(expected)
        result.lost = len(expected - set(counts))
        result.duplicated = sum(n - 1 for n in counts.values() if n > 1)
        unexpected = set(counts) - expected
        changed = [
            k
            for k in sorted(expected & set(counts))
            if ref.content[k] != got.content[k]
        ]
        result.differing = len(changed) + len(unexpected)
        for key in sorted(expected - set(counts))[:3]:
            result.notes.append(f"! lost {key}")
        for key, n in sorted(counts.items()):
            if n > 1:
                result.notes.append(f"! {key} appears {n} times")
        for key in changed[:3]:
            result.notes.append(
                f"! {key} differs: {first_difference(ref.content[key], got.content[key])}"
            )
        for key in sorted(unexpected)[:3]:
            result.notes.append(f"! {key} is not in the reference")
        result.notes.extend(f"! output: {p}" for p in got.problems)
        result.notes.extend(f"reference output: {p}" for p in ref.problems)


# ------------------------------------------------------------------------ outputs


def normalise(value: Any, volatile: frozenset[str]) -> Any:
    """Drop the fields that change between two correct runs, at any depth.

    A message's elapsed time ("gave up after 3 attempts in 2.4 s") changes too.
    """
    if isinstance(value, dict):
        return {
            k: normalise(v, volatile) for k, v in value.items() if k not in volatile
        }
    if isinstance(value, list):
        return [normalise(v, volatile) for v in value]
    if isinstance(value, str):
        return ELAPSED.sub(" in ... s", value)
    return value


def first_difference(a: Any, b: Any, where: str = "") -> str:
    """Describe the first place where two JSON values differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                return first_difference(a.get(key), b.get(key), f"{where}.{key}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return first_difference(x, y, f"{where}[{i}]")
    return f"{where or '(value)'}: {str(a)[:80]!r} != {str(b)[:80]!r}"


def collect(kind: str, place: Path, db: Path) -> Output:
    """Read a command's final output as items."""
    if kind == "corpus":
        return corpus_sections(db)
    output = Output()
    path = place / "out.jsonl"
    if not path.exists():
        output.problems.append("no output file")
        return output
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        output.problems.append("the last line is partial")
    volatile = BATCH_VOLATILE if kind == "batch" else VOLATILE
    for number, raw in enumerate(data.splitlines(), 1):
        try:
            line = json.loads(raw)
            key = str(line[KEYS[kind]])
        except (json.JSONDecodeError, KeyError, TypeError):
            output.problems.append(f"line {number} is not a result: {raw[:60]!r}")
            continue
        output.keys.append(key)
        output.content.setdefault(key, normalise(line, volatile))
    if kind == "batch":
        unfinished = batch_unfinished(db)
        if unfinished:
            output.problems.append(f"{unfinished} items still pending or running")
    return output


def check_tree(tree: Path, got: Output, result: TrialResult) -> None:
    """Count what the batch made of the glob over the link loops.

    ``good.xml`` and ``deep.xml`` must each have one line (else lost), ``deep.xml``
    an error saying it is nested too deeply, and no file may be read through a link
    (both else differing).
    """
    prefix = str(tree) + os.sep
    under = [key for key in got.keys if key.startswith(prefix)]
    for name in ("good.xml", "deep.xml"):
        if str(tree / "sub" / name) not in under:
            result.lost += 1
            result.notes.append(f"! {name} of the link-loop tree has no line")
    extra = sorted(
        set(under) - {str(tree / "sub" / n) for n in ("good.xml", "deep.xml")}
    )
    if extra:
        result.differing += len(extra)
        result.notes.append(f"! read through a link: {extra[:3]}")
    deep = got.content.get(str(tree / "sub" / "deep.xml"))
    if deep is not None and "nested" not in str(deep.get("error", "")):
        result.differing += 1
        result.notes.append(f"! deep.xml is not refused as nested: {str(deep)[:80]}")


def corpus_sections(db: Path) -> Output:
    """Read the sections of the ``guides`` corpus with their summaries."""
    output = Output()
    if not db.exists():
        output.problems.append("no database")
        return output
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        try:
            rows = conn.execute(
                "SELECT doc_id, section_id, title, text, summary, summary_source "
                "FROM corpus_sections WHERE corpus = 'guides' "
                "ORDER BY doc_id, position"
            ).fetchall()
        except sqlite3.OperationalError as exc:
            output.problems.append(f"no corpus tables ({exc})")
            return output
    for doc_id, section_id, title, text, summary, source in rows:
        key = f"{doc_id}:{section_id}"
        output.keys.append(key)
        output.content.setdefault(
            key,
            {"title": title, "text": text, "summary": summary, "source": source},
        )
        if summary is None:
            output.problems.append(f"{key} has no summary")
    return output


def calls_in(db: Path) -> int:
    """Return how many model calls a database's call log holds (0 if none yet)."""
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            (count,) = conn.execute("SELECT COUNT(*) FROM llm_calls").fetchone()
    except sqlite3.Error:
        return 0
    return int(count)


def wait_for_first_call(
    proc: subprocess.Popen[bytes], db: Path, baseline: int
) -> float:
    """Return when the process made its first model call (or ended without one).

    A process that makes none within ``RUN_TIMEOUT_S`` (a hung input walk) is given up
    on; waiting for it to end then kills it.
    """
    deadline = time.perf_counter() + RUN_TIMEOUT_S
    while (
        proc.poll() is None
        and calls_in(db) <= baseline
        and time.perf_counter() < deadline
    ):
        time.sleep(POLL_S)
    return time.perf_counter()


def batch_run_id(db: Path) -> str | None:
    """Return the run id of the batch in a database, if it was registered."""
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            row = conn.execute("SELECT run_id FROM runs LIMIT 1").fetchone()
    except sqlite3.Error:
        return None
    return str(row[0]) if row else None


def batch_unfinished(db: Path) -> int:
    """Return how many items of the batch are neither done nor failed."""
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            (count,) = conn.execute(
                "SELECT COUNT(*) FROM run_items WHERE status NOT IN ('done', 'failed')"
            ).fetchone()
    except sqlite3.Error:
        return 0
    return int(count)


def copy_db(source: Path, target: Path) -> None:
    """Copy a SQLite database consistently (its WAL included)."""
    with sqlite3.connect(source) as src, sqlite3.connect(target) as dst:
        src.backup(dst)


# ------------------------------------------------------------------------- inputs


def prepare(
    root: Path,
    *,
    python: str = sys.executable,
    articles: int = 4,
    passages: int = 40,
    questions: int = 4,
    guidelines: Sequence[str] = ("ngc-10056.md",),
    n_questions: int = 8,
    corpus: bool = True,
) -> Inputs:
    """Write the shared inputs and (with ``corpus``) the database holding ``cpg``."""
    root.mkdir(parents=True, exist_ok=True)
    pcd = (DATA / "articles" / "pcd.jsonl").read_text("utf-8").splitlines()
    article_file = root / "articles.jsonl"
    article_file.write_text("\n".join(pcd[:articles]) + "\n", "utf-8")
    cpgqa = DATA / "guidelines" / "cpgqa"
    slice_dir = root / "cpgqa"
    slice_dir.mkdir(exist_ok=True)
    kept = (cpgqa / "passages.jsonl").read_text("utf-8").splitlines()[:passages]
    passage_file = slice_dir / "passages.jsonl"
    passage_file.write_text("\n".join(kept) + "\n", "utf-8")
    ids = {json.loads(line)["passage_id"] for line in kept}
    asked = [
        line
        for line in (cpgqa / "questions.jsonl").read_text("utf-8").splitlines()
        if json.loads(line)["passage_id"] in ids
    ][:questions]
    question_file = root / "questions.jsonl"
    question_file.write_text("\n".join(asked) + "\n", "utf-8")
    quotes = quotes_guideline(root / "quotes.md")
    with question_file.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(QUOTES_QUESTION) + "\n")
    tree = link_loop_tree(root / "tree")
    guides = (*(DATA / "guidelines" / "ngc" / name for name in guidelines), quotes)
    corpus_db = root / "corpus.sqlite"
    if corpus:
        env = dict(os.environ, VERISCRIBE_DB=str(corpus_db))
        env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
        # Added once by a model that never fails: every trial starts from this corpus.
        subprocess.run(
            [python, "-m", "veriscribe.cli.app", "corpus", "add", CORPUS,
             str(passage_file), str(quotes), "--model", "sim", "--json"],
            env=env, check=True, capture_output=True, timeout=RUN_TIMEOUT_S,
        )  # fmt: skip
    return Inputs(
        root, article_file, (passage_file, *guides), question_file, corpus_db,
        n_questions, tree,
    )  # fmt: skip


QUOTES_QUESTION = {
    "id": "quotes-1",
    "question": "Where are the definitions of the recommendation grades found?",
    "answer": 'at the end of the "Major Recommendations" field',
    "doc_id": "quotes",
    "section_id": "grades",
}


def quotes_guideline(path: Path) -> Path:
    """Write a guideline whose sentences hold what a grammar or a terminal must escape.

    Double quotes and backslashes (a quote enum once made a grammar llama.cpp could
    not parse, and the process died), control characters, Rich markup, non-ASCII
    text and one very long sentence: every one must come through ingest, answers and
    resumes as it went in.
    """
    long_sentence = "Record " + ", ".join(
        f'the "reading {n}" at C:\\logs\\{n}' for n in range(60)
    )
    path.write_text(
        "# Quoted guidance\n\n"
        "## Grades\n\n"
        'The definitions of these grades can be found at the end of the "Major '
        'Recommendations" field. Store them under C:\\guidelines\\grades as '
        '"Grade A\\B".\n\n'
        "## Odd characters\n\n"
        "Offer the \u03b2-blocker at \u2265 5 mg \u2014 never with [bold]markup[/bold] "
        "or [/INST] tags.\x07 A tab\there and a form feed\x0c there are kept.\n\n"
        f"## Long\n\n{long_sentence}.\n",
        "utf-8",
    )
    return path


def link_loop_tree(tree: Path) -> Path:
    """Write a directory with link loops, a good article and a deeply nested one."""
    sub = tree / "sub"
    sub.mkdir(parents=True, exist_ok=True)
    body = "".join(
        f"<p>{sentence}</p>"
        for sentence in (
            "Hypertension affects one adult in three and often goes unnoticed.",
            "We measured blood pressure at rest in 412 adults with a validated device.",
            "Home readings were lower than clinic readings by 6 mmHg on average.",
            "Thiazide diuretics lowered systolic pressure by 12 mmHg at one year.",
        )
    )
    (sub / "good.xml").write_text(
        "<article><front><article-meta><title-group><article-title>Blood pressure "
        "at home</article-title></title-group></article-meta></front><body><sec>"
        f"<title>Results</title>{body}</sec></body></article>",
        "utf-8",
    )
    nested = "<italic>" * DEEP_LEVELS + "deep" + "</italic>" * DEEP_LEVELS
    (sub / "deep.xml").write_text(
        f"<article><body><p>{nested}</p></body></article>", "utf-8"
    )
    for link, target in ((tree / "l1", "."), (tree / "l2", "."), (sub / "up", "..")):
        if not link.is_symlink():
            link.symlink_to(target)
    return tree


# --------------------------------------------------------------------------- main


def describe(result: TrialResult) -> str:
    """Return one line about a trial."""
    t = result.trial
    if result.signalled_at is None:
        what = "not signalled"
    else:
        what = f"{t.signal} at {result.signalled_at:.2f}s"
    return (
        f"trial {t.index:2d} {t.kind:9s} seed={t.model_seed} {what} "
        f"(exit {result.first_exit}) -> {'+'.join(result.reruns)} | "
        f"items {result.items} lost {result.lost} dup {result.duplicated} "
        f"diff {result.differing}{' UNRESUMABLE' if result.unresumable else ''}"
    )


def main() -> None:
    """Run the trials and print the counts."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fail", type=float, default=0.2)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--reruns", type=int, default=3)
    parser.add_argument("--trial", type=int, default=None, help="Run this trial only.")
    parser.add_argument("--keep", type=Path, default=None, help="Keep the runs here.")
    parser.add_argument("--jobs", type=int, default=2, help="Trials run at once.")
    parser.add_argument(
        "--kinds", default=",".join(KINDS), help="Commands to take in turn."
    )
    args = parser.parse_args()
    kinds = [k for k in args.kinds.split(",") if k]
    if not kinds or set(kinds) - set(KINDS):
        parser.error(f"--kinds takes a comma-separated subset of {','.join(KINDS)}")
    # Started with SIGINT ignored (a background job), the commands would inherit that.
    signal.signal(signal.SIGINT, signal.default_int_handler)

    work = args.keep or Path(tempfile.mkdtemp(prefix="veriscribe-chaos-"))
    work.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    try:
        inputs = prepare(work / "inputs")
        bench = Bench(
            work, inputs, fail=args.fail, latency=args.latency, reruns=args.reruns
        )
        print(f"{args.trials} trials, seed {args.seed}, {bench.model('S')}, in {work}")
        indices = [args.trial] if args.trial is not None else range(args.trials)
        trials = [Trial.make(args.seed, index, kinds) for index in indices]
        results = []
        pool = ThreadPoolExecutor(max(1, args.jobs))
        try:
            needed = sorted({(t.kind, t.model_seed) for t in trials})
            list(pool.map(lambda key: bench.reference(*key), needed))
            for result in pool.map(bench.run_trial, trials):
                results.append(result)
                print(describe(result), flush=True)
                for note in result.notes:
                    print(f"    {note}")
                if result.anomalous:
                    print(
                        f"    reproduce: {sys.executable} bench/chaos.py --seed "
                        f"{args.seed} --kinds {args.kinds} --trial "
                        f"{result.trial.index} --keep DIR"
                    )
        except KeyboardInterrupt:
            bench.stop()
            raise
        finally:
            pool.shutdown(cancel_futures=True)
        foreign = bench.foreign_out() if "batch" in kinds else 0
        for (kind, seed), ref in sorted(bench.references.items()):
            print(
                f"reference {kind:9s} seed={seed}: {len(set(ref.output.keys))} items, "
                f"exit {ref.exit_code} after {ref.runs} run(s); first model call "
                f"after {ref.first_call:.1f}s, then {ref.working:.1f}s of work"
            )
        print(
            f"{bench.runs} command runs in {time.perf_counter() - started:.0f}s; "
            f"runs that printed sqlite3.InterfaceError: {bench.interface_errors}"
        )
        print(
            f"trials={len(results)} lost={sum(r.lost for r in results) + foreign} "
            f"duplicated={sum(r.duplicated for r in results)} "
            f"differing={sum(r.differing for r in results)} "
            f"unresumable={sum(r.unresumable for r in results)}"
        )
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
