"""`veriscribe eval qa`: pooled funnel, coverage by window, tiers and judge agreement."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from qa_helpers import GUIDELINE, cite
from veriscribe.cli.app import app
from veriscribe.errors import InputError
from veriscribe.eval.qa import eval_qa, read_results

runner = CliRunner()

# Two cited sentences, then an uncited one: coverage grows with the window k.
FIRST = (
    "Blood pressure needs a validated device. Readings follow five minutes of rest. "
    + cite("hypertension:diagnosis", "after five minutes of seated")
    + " Home monitoring is useful for every patient."
)
# One exact quote and one that is not in the section.
SECOND = (
    "Blood pressure is measured after rest. "
    + cite(
        "hypertension:diagnosis",
        "measured with a validated device after five minutes of seated",
    )
    + " Sodium must stay below 1000 mg a day. "
    + cite("hypertension:lifestyle", "sodium must stay below 1000 mg")
)


@pytest.fixture
def checked(tmp_path: Path) -> Path:
    """Two answers checked without a model, their `--json` outputs appended to one file."""
    added = runner.invoke(
        app, ["corpus", "add", "htn", str(GUIDELINE), "--model", "sim", "--json"]
    )
    assert added.exit_code == 0, added.output
    out = tmp_path / "checked.json"
    for number, text in enumerate((FIRST, SECOND)):
        answer = tmp_path / f"answer{number}.txt"
        answer.write_text(text)
        result = runner.invoke(
            app,
            [
                "verify",
                str(answer),
                "--corpus",
                "htn",
                "--no-judge",
                "--all-claims",
                "--json",
            ],
        )
        assert result.exit_code == 0, result.output
        with out.open("a") as handle:
            handle.write(result.stdout)
    return out


def test_pooled_funnel_windows_and_tiers(checked: Path) -> None:
    results = _read(checked)
    assert len(results) == 2
    report = eval_qa(checked).model_dump(mode="json")
    # FIRST: 3 claims, the marker after sentence 2; SECOND: 2 claims, each cited.
    assert report["funnel"] == {
        "sentences": 5,
        "claims": 5,
        "covered": 3,  # k = 1: sentence 2 of FIRST, both of SECOND
        "verbatim": 2,  # the fabricated sodium quote fails
        "lenient": 0,
        "strict": 0,
        "recovered": 0,
    }
    assert report["funnel"] == {
        k: sum(r["funnel"][k] for r in results) for k in report["funnel"]
    }
    windows = report["coverage_by_window"]
    # k = 0 credits the sentence a marker ends (the same as k = 1 here); k >= 2
    # reaches back to sentence 1 of FIRST; the uncited last sentence is never covered.
    assert [windows[str(k)]["covered"] for k in range(6)] == [3, 3, 4, 4, 4, 4]
    # Counting only verbatim-passing citations drops the sodium claim at every k.
    assert [windows[str(k)]["verbatim_covered"] for k in range(6)] == [2, 2, 3, 3, 3, 3]
    assert windows["2"]["rate"] == 0.8 and windows["2"]["verbatim_rate"] == 0.6
    assert report["citations"] == 3
    assert (
        report["tiers"]["exact"]["count"] + report["tiers"]["normalized"]["count"] == 2
    )
    assert report["tiers"]["fail"]["count"] == 1
    assert report["rates"]["vcr"] == pytest.approx(2 / 3, abs=1e-4)
    assert report["rates"]["cc"] == 0.6
    # Judged nothing: CSR over the two verbatim claims is 0, verdicts all unjudged.
    assert report["rates"]["csr_strict"] == 0.0
    assert report["verdicts"]["unjudged"] == 5
    assert "agreement" not in report


def _read(path: Path) -> list[dict[str, Any]]:
    """Read checked answers as the JSON objects they are written as."""
    return [r.model_dump(mode="json") for r in read_results(path)]


def _verdicts(results: list[dict[str, Any]], verdicts: list[str | None]) -> list[Any]:
    changed = copy.deepcopy(results)
    claims = [c for r in changed for c in r["claims"]]
    for claim, verdict in zip(claims, verdicts, strict=True):
        claim["verdict"] = verdict
    return changed


def test_cohen_kappa_between_two_judges(checked: Path, tmp_path: Path) -> None:
    results = _read(checked)
    full, part, no = "fully_supported", "partially_supported", "not_supported"
    first = tmp_path / "judge_a.jsonl"
    second = tmp_path / "judge_b.jsonl"
    first.write_text(
        "\n".join(
            json.dumps(r) for r in _verdicts(results, [full, full, part, no, None])
        )
    )
    second.write_text(
        "\n".join(
            json.dumps(r) for r in _verdicts(results, [full, part, part, no, full])
        )
    )
    report = eval_qa(first, second=second).model_dump(mode="json")
    agreement = report["agreement"]
    # Four claims judged by both; by hand: p_o = 3/4, p_e = .5*.25 + .25*.5 + .25*.25
    # = .3125, kappa = (.75 - .3125) / (1 - .3125) = 0.63636.
    assert agreement["pairs"] == 4 and agreement["judged_by_one_only"] == 1
    assert agreement["observed_agreement"] == 0.75
    assert agreement["kappa"] == pytest.approx(0.6364, abs=1e-4)
    assert agreement["confusion"]["fully_supported / partially_supported"] == 1
    assert report["verdicts"]["fully_supported"] == 2


def test_cli_table_json_and_plot(checked: Path, tmp_path: Path) -> None:
    png = tmp_path / "funnel.png"
    shown = runner.invoke(app, ["eval", "qa", str(checked), "--plot", str(png)])
    assert shown.exit_code == 0, shown.output
    assert "Claim funnel" in shown.output and "verbatim citations only" in shown.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000
    as_json = runner.invoke(app, ["eval", "qa", str(checked), "--json"])
    assert json.loads(as_json.stdout)["answers"] == 2


def test_answers_are_scored_against_gold_answers(checked: Path, tmp_path: Path) -> None:
    first, second = _read(checked)
    rows = [
        {**first, "id": "a", "gold_answer": "a validated device", "answerable": True},
        {**second, "id": "b", "gold_answer": "validated device", "answerable": True},
        # Rightly not found: the corpus lacks the answer.
        {**second, "id": "c", "not_found": True, "answerable": False},
        # Wrongly not found: a not-found answer holds nothing, whatever its text.
        {**second, "id": "d", "gold_answer": "sodium", "not_found": True},
    ]
    rows[3]["answerable"] = True
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    report = eval_qa(path).model_dump(mode="json")
    per = {q["id"]: q for q in report["per_question"]}
    assert (per["a"]["gold_recall"], per["a"]["gold_hit"]) == (1.0, True)
    assert (per["b"]["gold_recall"], per["b"]["gold_hit"]) == (0.0, False)
    assert per["c"]["gold_recall"] is None and per["c"]["answerable"] is False
    assert (per["d"]["gold_recall"], per["d"]["answer_words"]) == (0.0, 0)
    # "Blood pressure needs a validated device. ... for every patient." (19 words)
    # and "Blood pressure is measured after rest. Sodium ... a day." (14 words).
    assert [per[i]["answer_words"] for i in "ab"] == [19, 14]
    assert report["answer_words"] == {"answers": 2, "median": 16.5, "mean": 16.5}
    assert report["gold"] == {"scored": 3, "gold_recall": 0.3333, "gold_hit": 0.3333}
    assert report["not_found_rate"] == 0.5
    assert report["not_found_scores"] == {
        "answerable": 3,
        "unanswerable": 1,
        "not_found_answerable": 1,
        "not_found_unanswerable": 1,
        "precision": 0.5,
        "recall": 1.0,
        "answerable_rate": 0.3333,
    }
    # Answers of no question set have words, but no gold and no not-found scores.
    plain = eval_qa(checked).model_dump(mode="json")
    assert "gold" not in plain and "not_found_scores" not in plain
    assert plain["per_question"][0]["gold_recall"] is None

    png = tmp_path / "gold.png"
    shown = runner.invoke(app, ["eval", "qa", str(path), "--plot", str(png)])
    assert shown.exit_code == 0, shown.output
    for line in (
        "gold recall (mean)",
        "33.3%",
        "not-found recall",
        "100.0%",
        "answer words, median",
        "16.5",
    ):
        assert line in shown.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_wrong_input_is_one_error_line(tmp_path: Path) -> None:
    other = tmp_path / "labels.jsonl"
    other.write_text('{"sentences": ["a"], "labels": [["BACKGROUND"]]}\n')
    result = runner.invoke(app, ["eval", "qa", str(other)])
    assert result.exit_code == 1
    assert "is not a checked answer" in result.output
    broken = tmp_path / "broken.json"
    broken.write_text('{"funnel": {')
    with pytest.raises(InputError, match="not JSON"):
        read_results(broken)


def test_a_question_set_is_answered_then_scored(tmp_path: Path) -> None:
    added = runner.invoke(
        app, ["corpus", "add", "htn", str(GUIDELINE), "--model", "sim", "--json"]
    )
    assert added.exit_code == 0, added.output
    questions = tmp_path / "questions.jsonl"
    questions.write_text(
        "\n".join(
            json.dumps(q)
            for q in [
                {
                    "id": "a",
                    "question": "How is blood pressure measured?",
                    "doc_id": "hypertension",
                    "section_id": "diagnosis",
                    "answer": "with a validated device",
                },
                {
                    "id": "b",
                    "question": "How much sodium?",
                    "passage_id": "lifestyle",
                    "answerable": False,
                },
                {"id": "c", "question": "   ", "passage_id": "lifestyle"},
            ]
        )
        + "\n"
    )
    out = tmp_path / "answers.jsonl"
    args = ["ask", "--corpus", "htn", "--questions", str(questions), "--out", str(out)]
    first = runner.invoke(
        app, [*args, "--retriever", "bm25", "--model", "sim", "--json"]
    )
    assert first.exit_code == 0, first.output
    summary = json.loads(first.stdout)
    assert summary["answered"] == 2 and summary["reused"] == 0
    assert summary["failed"] == [{"id": "c", "reason": "the question is empty"}]
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["id"] for line in lines] == ["a", "b"]
    assert lines[0]["gold_section"] == "hypertension:diagnosis"
    # The gold answer and whether the corpus holds it go with each answer.
    assert [(x["gold_answer"], x["answerable"]) for x in lines] == [
        ("with a validated device", True),
        (None, False),
    ]
    scored = eval_qa(out).model_dump(mode="json")
    assert scored["gold"]["scored"] == 1
    assert scored["not_found_scores"]["unanswerable"] == 1
    assert all("funnel" in line and "claims" in line for line in lines)

    # Again: every answer comes from its finished thread, without a model call.
    again = runner.invoke(
        app, [*args, "--retriever", "bm25", "--model", "sim", "--json"]
    )
    repeat = json.loads(again.stdout)
    assert repeat["reused"] == 2 and repeat["usage"]["calls"] == 0
    assert eval_qa(out).answers == 2

    both = runner.invoke(
        app, ["ask", "What?", "--corpus", "htn", "--questions", str(questions)]
    )
    assert both.exit_code == 1 and "either a QUESTION" in both.output
