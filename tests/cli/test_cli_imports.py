"""The work commands do not load the evaluation stack (ROUGE, NLTK, SciPy stats, spaCy)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

EVAL_ONLY = ("rouge_score", "nltk", "scipy.stats", "spacy", "scispacy", "matplotlib")

PROBE = """
import json, sys
from veriscribe.cli.app import app
try:
    app(sys.argv[1:], prog_name="veriscribe")
except SystemExit as exit:
    code = exit.code
print(json.dumps({"code": code, "loaded": [m for m in %r if m in sys.modules]}))
"""


def _loaded(args: list[str], db: Path) -> tuple[object, list[str]]:
    env = {**os.environ, "VERISCRIBE_DB": str(db)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE % (EVAL_ONLY,), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return report["code"], report["loaded"]


@pytest.mark.parametrize(
    "args",
    [["worker", "--help"], ["batch", "--help"], ["worker", "no-such-run", "--quiet"]],
)
def test_work_commands_do_not_import_the_evaluation_stack(
    args: list[str], tmp_path: Path
) -> None:
    code, loaded = _loaded(args, tmp_path / "v.sqlite")
    assert code in (0, 1)
    assert loaded == []


def test_eval_commands_still_load_it(tmp_path: Path) -> None:
    # The probe sees the modules a command loads: evaluating abstracts needs ROUGE.
    results = tmp_path / "results.jsonl"
    results.write_text("")
    _, loaded = _loaded(["eval", "abstracts", str(results)], tmp_path / "v.sqlite")
    assert "rouge_score" in loaded
