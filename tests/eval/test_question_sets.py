"""The users'-words question sets in ``bench/questions``: gold spans, ids and the split.

Every gold span must occur, after whitespace normalisation at most, in the text of the
section it names, as veriscribe's own guideline reader produces that section (no model
involved); ids are unique over all files; the tune and held-out parts share no
guideline; and an unanswerable question's guideline holds none of the words it was
checked against.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from veriscribe.documents.guidelines import GuidelineDoc, read_guideline_path

QUESTIONS = Path(__file__).resolve().parents[2] / "bench" / "questions"
PARTS = ("tune", "heldout")
KINDS = ("answerable", "unanswerable", "pairs", "chats", "verdicts")
CORPORA = ("ngc", "vadod", "cpgqa")
STYLES = {"lay", "brand", "intl", "abbrev", "scenario", "units"}
DIRECTIONS = {"for", "against", "insufficient", "none"}
GRADED = {"strong", "weak", "A", "B", "C", "D"}
# An insufficient-evidence statement has no strength, or the USPSTF I grade; a sentence
# that states no recommendation ("none") has none.
UNGRADED: dict[str, set[str | None]] = {"insufficient": {None, "I"}, "none": {None}}

Record = dict[str, Any]


def _guideline_data() -> Path | None:
    """Find ``shared/data/guidelines`` above this checkout (a worktree sits deeper)."""
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "shared" / "data" / "guidelines"
        if candidate.is_dir():
            return candidate
    return None


@pytest.fixture(scope="module")
def docs() -> dict[str, GuidelineDoc]:
    """Read every development guideline with the corpus reader, by doc id."""
    data = _guideline_data()
    if data is None:
        pytest.skip("development data (shared/data/guidelines) not present")
    found: dict[str, GuidelineDoc] = {}
    for corpus in CORPORA:
        for doc in read_guideline_path(data / corpus):
            found[doc.doc_id] = doc
    return found


def _read(part: str, kind: str) -> list[Record]:
    path = QUESTIONS / part / f"{kind}.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _all() -> Iterator[tuple[str, str, Record]]:
    for part in PARTS:
        for kind in KINDS:
            for record in _read(part, kind):
                yield part, kind, record


def _golds(record: Record) -> list[Record]:
    """The gold-bearing parts of a record: itself, or each turn of a chat."""
    if "turns" in record:
        return list(record["turns"])
    return [record] if record.get("answerable", True) else []


def _norm(text: str) -> str:
    return " ".join(text.split())


def misplaced(records: list[Record], docs: dict[str, GuidelineDoc]) -> list[str]:
    """Return a line for each gold span not found in the section it names."""
    problems = []
    for record in records:
        for gold in _golds(record):
            doc = docs.get(gold["doc_id"])
            section_id = gold.get("section_id") or gold.get("passage_id")
            section = doc.section(str(section_id)) if doc else None
            where = f"{record['id']} {gold['doc_id']}/{section_id}"
            if section is None:
                problems.append(f"{where}: no such section")
            elif _norm(gold["answer"]) not in _norm(section.text):
                problems.append(f"{where}: span not in section: {gold['answer'][:60]}")
    return problems


def test_every_gold_span_is_verbatim_in_its_section(
    docs: dict[str, GuidelineDoc],
) -> None:
    records = [record for _, _, record in _all()]
    assert misplaced(records, docs) == []


def test_a_changed_or_moved_span_is_reported(docs: dict[str, GuidelineDoc]) -> None:
    good = _read("tune", "answerable")[0]
    changed = {
        **good,
        "id": "changed",
        "answer": good["answer"].replace(" ", "  x ", 1),
    }
    moved = {**good, "id": "moved"}
    key = "passage_id" if "passage_id" in good else "section_id"
    other = next(
        s.section_id
        for s in docs[good["doc_id"]].sections
        if _norm(good["answer"]) not in _norm(s.text)
    )
    moved[key] = other
    missing = {**good, "id": "missing", key: "no/such/section"}
    chat = {"id": "chat", "turns": [good, changed]}
    found = misplaced([good, changed, moved, missing, chat], docs)
    assert [line.split()[0] for line in found] == [
        "changed",
        "moved",
        "missing",
        "chat",
    ]


def test_ids_are_unique_over_all_files() -> None:
    ids = [record["id"] for _, _, record in _all()]
    assert len(ids) == len(set(ids))


def test_the_tune_and_held_out_parts_share_no_guideline() -> None:
    guidelines: dict[str, set[str]] = {part: set() for part in PARTS}
    for part, _, record in _all():
        guidelines[part].add(record["doc_id"])
        guidelines[part].update(gold["doc_id"] for gold in record.get("turns", []))
    assert guidelines["tune"] and guidelines["heldout"]
    assert guidelines["tune"].isdisjoint(guidelines["heldout"])


def test_unanswerable_questions_name_words_their_guideline_lacks(
    docs: dict[str, GuidelineDoc],
) -> None:
    present = []
    for part in PARTS:
        for record in _read(part, "unanswerable"):
            assert record["answerable"] is False and record["checked_absent"]
            text = _norm(
                " ".join(f"{s.title} {s.text}" for s in docs[record["doc_id"]].sections)
            ).lower()
            present += [
                f"{record['id']}: {word!r}"
                for word in record["checked_absent"]
                if word.lower() in text
            ]
    assert present == []


def test_fields_and_sizes() -> None:
    counts = {kind: 0 for kind in KINDS}
    answerable_docs: set[str] = set()
    for _, kind, record in _all():
        counts[kind] += 1
        assert record["style"] in STYLES, record["id"]
        if kind == "answerable":
            answerable_docs.add(record["doc_id"])
        if kind == "pairs":
            assert record["question_guideline"] != record["question_user"]
        if kind == "chats":
            assert len(record["turns"]) == 2
        if kind == "verdicts":
            assert record["direction"] in DIRECTIONS, record["id"]
            verdict = record["direction"] in ("for", "against")
            allowed: set[str | None] = (
                set(GRADED) if verdict else UNGRADED[record["direction"]]
            )
            assert record["strength"] in allowed, record["id"]
    assert counts["answerable"] >= 150 and len(answerable_docs) >= 12
    assert counts["unanswerable"] >= 40
    assert counts["pairs"] >= 40
    assert counts["chats"] >= 10
    recommendations = [
        r
        for r in _read("tune", "verdicts") + _read("heldout", "verdicts")
        if r["direction"] != "none"
    ]
    assert len(recommendations) >= 30
