"""The default section retriever: BM25 of the section with its place, phrases and best sentence.

Three BM25 scores of each section (the shipped ``k1``, ``b`` and Lucene IDF, the same
tokens as `veriscribe.retrieval.bm25`: `veriscribe.text.tokens.bm25_tokens`), each
divided by the best score any section gets for the question, then added:

- **section**: BM25 over the section's text with its *context*: the document title, the
  titles of the sections above it and its own title. A question names the guideline's
  topic ("neck pain", "hypertension") in words its sections rarely repeat; with the
  context every section of that guideline holds them, so the topic picks the document
  and the question's other words pick the section, instead of the topic pulling up a
  short title or summary section;
- **pairs** (weight ``PAIR_WEIGHT``): BM25 over pairs of adjacent stems ("overdose
  education", "risk outweighs"), so a section holding the question's phrase outranks one
  that holds its words apart;
- **best unit** (weight ``UNIT_WEIGHT``): BM25 over the units (sentences, list items,
  table rows) of all sections, a section scored by its best unit, so the one sentence that
  answers is not drowned by a long section's other sentences. Back matter (a section
  titled References, Bibliography, Abbreviations, Acronyms or Glossary, also as an
  appendix) has no best unit: each of its lines, a cited title or an expansion, reads
  like a sentence that answers, and none does.

- **meaning** (weight ``DENSE_WEIGHT``, when a sentence encoder is given): the cosine of
  the question with the section's closest unit in all-MiniLM-L6-v2 sentence embeddings
  (units of at least four words, back matter left out as above), not scaled. It finds
  the section that answers a question put in other words than the guideline's
  ("together" for "concurrently"). The vectors are made once per section text and
  stored with the corpus (`veriscribe.store.corpora.section_vectors`).

- **definition** (weight ``DEFINITION_WEIGHT``): when the question asks what a term
  means ("What is MEDD?", "Define pain"), 1 for a section that defines it ("MEDD refers
  to ...", "Pain is defined as ...", an abbreviation beside its expansion in brackets),
  0 for the rest (`veriscribe.retrieval.definitions`). The term is all such a question
  holds, and the sections that use it most would otherwise outrank the one that says
  what it is. Back matter gets none: a glossary line defines, but does not answer.

A word of the question that no section holds and is six letters or longer is read as
the corpus's closest word within one edit (two from nine letters): "thrapy" is
"therapy" (see `FusedIndex.spelled`).

The two weights were chosen from {0, 0.1, 0.25, 0.5} x {0, 0.25, 0.5}: of the pairs with
the best hit rate at 5 on the cpgQA development questions, the one with the best mean
hit rate at 3 and 5 on the hand-written questions over the NGC and VA/DoD guidelines
(``bench/lexical_retrieval.py``), which are worded in a user's terms rather than the
guideline's. Pairs reward questions that copy a guideline's phrasing, as cpgQA's do;
on the hand-written questions the best unit and the context bring more. The meaning's
weight was chosen from {0, 0.25, 0.5, 1, 2} with the other two fixed, on the three sets
together: 1 raises hit@3 on all three and hit@5 on VA/DoD (see the README).
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import bm25s
import numpy as np
import numpy.typing as npt
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from veriscribe.retrieval.bm25 import K1, METHOD, B
from veriscribe.retrieval.definitions import defined_term, defines
from veriscribe.retrieval.dense import Encoder, Matrix
from veriscribe.store import corpora
from veriscribe.store.corpora import SectionRow, SectionVectors, text_digest
from veriscribe.store.db import Store
from veriscribe.text.sentences import index_units
from veriscribe.text.tokens import bm25_tokens

FloatArray = npt.NDArray[np.float64]

PAIR_WEIGHT = 0.25
UNIT_WEIGHT = 0.5
DENSE_WEIGHT = 1.0
DEFINITION_WEIGHT = 1.0
DENSE_MIN_WORDS = 4
"""Units with fewer words (labels, table cells) get no vector."""
SPELL_MIN_CHARS = 6
SPELL_TWO_EDITS_CHARS = 9
ENCODER_NAME = "all-MiniLM-L6-v2"
"""The name stored with the vectors: vectors of another encoder are never mixed in."""

BACK_MATTER = re.compile(
    r"^\s*(?:appendix\s+\w+\s*[:.\-]\s*)?(?:references?|bibliography|bibliographic "
    r"sources?(?:\(s\))?|abbreviations?(?: list)?|acronyms|glossary)\s*$",
    re.IGNORECASE,
)
"""Titles of sections that list references or abbreviations: no best unit."""


@dataclass(frozen=True)
class SectionDoc:
    """A section to index: its key, the titles above it, its title and its text."""

    key: str
    context: str
    """The document title and the titles of the sections above this one."""
    title: str
    text: str


def pairs(stems: Sequence[str]) -> list[str]:
    """Return each pair of adjacent stems as one term (``a_b``)."""
    return [f"{a}_{b}" for a, b in zip(stems, stems[1:], strict=False)]


class _Scorer:
    """BM25 over token lists, scoring every text at once."""

    def __init__(self, texts: Sequence[list[str]]) -> None:
        self._model = bm25s.BM25(k1=K1, b=B, method=METHOD)
        # bm25s refuses an empty vocabulary: a placeholder term no query holds.
        self._model.index([tokens or ["\x00"] for tokens in texts], show_progress=False)
        self._size = len(texts)

    def scores(self, tokens: Sequence[str]) -> FloatArray:
        vocab = self._model.vocab_dict
        known = [t for t in tokens if t in vocab]
        if not known:
            return np.zeros(self._size)
        return np.asarray(self._model.get_scores(known), dtype=float)


def _scaled(scores: FloatArray) -> FloatArray:
    top = float(scores.max()) if scores.size else 0.0
    return scores / top if top > 0 else scores


def dense_units(section: SectionDoc) -> list[str]:
    """Return the units of a section that get a vector (none for back matter)."""
    if BACK_MATTER.match(section.title) is not None:
        return []
    return [
        unit.strip()
        for unit in index_units(section.text)
        if len(unit.split()) >= DENSE_MIN_WORDS
    ]


class FusedIndex:
    """The default retriever's index over a corpus's sections (see the module notes).

    With an ``encoder``, ``vectors`` holds each section's unit vectors (rows in the
    order of `dense_units`; made here when not given).
    """

    def __init__(
        self,
        sections: Sequence[SectionDoc],
        encoder: Encoder | None = None,
        vectors: Sequence[Matrix] | None = None,
    ) -> None:
        if not sections:
            raise ValueError("cannot build an index over no sections")
        self._keys = [section.key for section in sections]
        if len(set(self._keys)) != len(self._keys):
            raise ValueError("the keys of an index must be unique")
        stems: list[list[str]] = []
        self._texts: list[str] = []
        owners: list[int] = []
        units: list[list[str]] = []
        for number, section in enumerate(sections):
            # Each unit is tokenized once; the section's tokens are theirs in order.
            texts = [u for u in index_units(section.text) if u.strip()]
            section_stems = bm25_tokens(f"{section.context}\n{section.title}")
            back_matter = BACK_MATTER.match(section.title) is not None
            self._texts.append("" if back_matter else section.text)
            for text in texts or [section.text]:
                unit = bm25_tokens(text)
                section_stems.extend(unit)
                if not back_matter:
                    owners.append(number)
                    units.append(unit)
            stems.append(section_stems)
        self._frequency = Counter(stem for tokens in stems for stem in set(tokens))
        self._vocabulary = list(self._frequency)
        self._sections = _Scorer(stems)
        self._pairs = _Scorer([pairs(tokens) for tokens in stems])
        # A corpus of back matter alone: one empty unit, which no question matches.
        self._units = _Scorer(units or [[]])
        self._owners = np.asarray(owners or [0], dtype=int)
        self._encoder = encoder
        if encoder is not None:
            if vectors is None:
                vectors = embed_sections(encoder, sections)
            if len(vectors) != len(sections):
                raise ValueError(
                    f"{len(vectors)} vector sets for {len(sections)} sections"
                )
            self._vector_owners = np.repeat(
                np.arange(len(sections)), [len(rows) for rows in vectors]
            )
            self._vectors = (
                np.vstack([rows for rows in vectors if len(rows)]).astype(np.float32)
                if self._vector_owners.size
                else np.zeros((0, 1), dtype=np.float32)
            )

    def __len__(self) -> int:
        return len(self._keys)

    def spelled(self, stems: Sequence[str]) -> list[str]:
        """Return the stems with each one the corpus lacks replaced by its closest.

        A stem of ``SPELL_MIN_CHARS`` or more letters that no section holds becomes the
        corpus stem within one edit (two from ``SPELL_TWO_EDITS_CHARS`` letters), the
        commonest of the closest: "thrapi" is "therapi", "initiati" is "initi".
        """
        found = []
        for stem in stems:
            if (
                stem in self._frequency
                or len(stem) < SPELL_MIN_CHARS
                or not stem.isalpha()
            ):
                found.append(stem)
                continue
            edits = 2 if len(stem) >= SPELL_TWO_EDITS_CHARS else 1
            near = process.extract(
                stem,
                self._vocabulary,
                scorer=Levenshtein.distance,
                score_cutoff=edits,
                limit=None,
            )
            if near:
                best = min(distance for _, distance, _ in near)
                found.append(
                    max(
                        (word for word, distance, _ in near if distance == best),
                        key=lambda word: self._frequency[word],
                    )
                )
            else:
                found.append(stem)
        return found

    def scores(self, query: str) -> FloatArray:
        """Return the fused score of every section, in index order."""
        stems = self.spelled(bm25_tokens(query))
        best_unit: FloatArray = np.zeros(len(self._keys))
        np.maximum.at(best_unit, self._owners, self._units.scores(stems))
        fused: FloatArray = (
            _scaled(self._sections.scores(stems))
            + PAIR_WEIGHT * _scaled(self._pairs.scores(pairs(stems)))
            + UNIT_WEIGHT * _scaled(best_unit)
        )
        if self._encoder is not None and self._vector_owners.size:
            question = self._encoder([query])[0]
            closest: FloatArray = np.zeros(len(self._keys))
            np.maximum.at(closest, self._vector_owners, self._vectors @ question)
            fused += DENSE_WEIGHT * closest
        term = defined_term(query)
        if term is not None:
            fused += DEFINITION_WEIGHT * np.array(
                [defines(text, term) for text in self._texts], dtype=float
            )
        return fused

    def search(self, query: str, k: int = 10) -> list[tuple[str, float]]:
        """Return up to ``k`` ``(key, score)`` pairs, best first; zero scores left out."""
        if k <= 0:
            return []
        scores = self.scores(query)
        order = np.argsort(-scores, kind="stable")[:k]
        return [(self._keys[i], float(scores[i])) for i in order if scores[i] > 0]


def section_docs(
    rows: Sequence[SectionRow], doc_titles: Mapping[str, str]
) -> list[SectionDoc]:
    """Return the sections with text of a corpus, each with its document and heading path."""
    by_id = {(row.doc_id, row.section_id): row for row in rows}
    found = []
    for row in rows:
        if not row.chars:
            continue  # a heading over sub-sections is never worth reading
        titles, parent = [], row.parent
        while parent is not None and (row.doc_id, parent) in by_id:
            above = by_id[(row.doc_id, parent)]
            titles.append(above.title)
            parent = above.parent
        context = "\n".join([doc_titles.get(row.doc_id, ""), *reversed(titles)])
        found.append(SectionDoc(row.key, context, row.title, row.text))
    return found


def embed_sections(encoder: Encoder, sections: Sequence[SectionDoc]) -> list[Matrix]:
    """Return each section's unit vectors (`dense_units`), all embedded in one call."""
    units = [dense_units(section) for section in sections]
    flat = [unit for section in units for unit in section]
    rows = encoder(flat) if flat else np.zeros((0, 1), dtype=np.float32)
    found, start = [], 0
    for section in units:
        found.append(np.asarray(rows[start : start + len(section)], dtype=np.float32))
        start += len(section)
    return found


async def stored_vectors(
    store: Store,
    corpus: str,
    sections: Sequence[SectionDoc],
    encoder: Encoder,
    on_progress: Callable[[int, int], None] | None = None,
    batch: int = 64,
) -> list[Matrix]:
    """Return each section's unit vectors, made and stored for the sections without.

    Vectors are stored as float16 per section with the digest of the text they were
    made of; a changed section is embedded again. ``on_progress`` hears
    ``(sections done, sections to embed)``.
    """
    stored = await corpora.section_vectors(store, corpus, ENCODER_NAME)
    found: dict[str, Matrix] = {}
    missing = []
    for section in sections:
        have = stored.get(section.key)
        if have is not None and have.digest == text_digest(section.text):
            rows = np.frombuffer(have.vectors, dtype=np.float16).astype(np.float32)
            count = len(dense_units(section))  # the same text, so the same units
            found[section.key] = rows.reshape(count, -1) if count else rows[:0, None]
        else:
            missing.append(section)
    for start in range(0, len(missing), batch):
        part = missing[start : start + batch]
        made = await asyncio.to_thread(embed_sections, encoder, part)
        await corpora.set_section_vectors(
            store,
            corpus,
            ENCODER_NAME,
            [
                SectionVectors(
                    section.key,
                    text_digest(section.text),
                    rows.astype(np.float16).tobytes(),
                )
                for section, rows in zip(part, made, strict=True)
            ],
        )
        found.update(zip((section.key for section in part), made, strict=True))
        if on_progress is not None:
            on_progress(start + len(part), len(missing))
    return [found[section.key] for section in sections]
