"""The copy guard on the real embedded model: a refine that garbles no word.

The draft is the start of the one the 0.5B model wrote for this article before the
guard judged words (two facet summaries with a Cyrillic "как", "chemicalproperties",
"trade_channels" and words capitalised mid-sentence); refining it under the guard,
with the article as the words the abstract may use, must write none of those. A short
abstract (120 words) keeps the test to about a minute.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from veriscribe.checks.wording import CaseIndex, case_changes, foreign_script_words
from veriscribe.documents.articles import Article, read_articles
from veriscribe.llm.embedded.copy_guard import CopyGuard
from veriscribe.llm.embedded.local import ChatLlamaCpp, vocabulary_words
from veriscribe.llm.factory import make_llm
from veriscribe.nodes.abstract.refine import REPEAT_MARGIN, one_paragraph
from veriscribe.options import AbstractOptions
from veriscribe.prompts import load_prompt
from veriscribe.settings import LLMSettings, Settings
from veriscribe.text.replies import AbstractLean, abstract_tokens, output_format

pytestmark = pytest.mark.local_model

DRAFT = Path(__file__).parents[1] / "fixtures" / "drafts" / "f1000-8-1394-v1.txt"


async def test_a_guarded_refine_writes_no_foreign_recased_or_fused_word(
    shared_data: Path, local_gguf: Path, tmp_path: Path
) -> None:
    path = shared_data / "articles" / "jats" / "encoda__f1000-8-1394-v1.xml"
    (article,) = [a for a in read_articles(path) if isinstance(a, Article)]
    body = article.body
    draft = DRAFT.read_text(encoding="utf-8")
    llm = make_llm(
        "local", Settings(db=tmp_path / "e2e.sqlite", llm=LLMSettings(cache=False))
    )
    prompt = load_prompt("abstract", "refine_own")
    options = AbstractOptions(words=120)
    result = await llm.json(
        prompt.id,
        prompt.render(
            draft=one_paragraph(draft),
            output_format=output_format("abstract", True),
            words=str(options.words),
        ),
        AbstractLean,
        max_tokens=abstract_tokens(options.words),
        copy_guard=("", options.copy_limit + REPEAT_MARGIN, body),
    )
    abstract = result.value.abstract
    assert len(abstract.split()) >= 50, abstract
    assert foreign_script_words(abstract, body) == [], abstract
    assert case_changes(abstract, CaseIndex.of(body)) == [], abstract
    assert isinstance(llm.chat, ChatLlamaCpp)
    words = vocabulary_words(llm.chat._loaded().contexts[0])
    guard = CopyGuard("", 1, words=body, common=words)
    assert guard.unknown_words(abstract) == [], abstract
    # Nor glued by a bracket or a stop: "chemical(properties)", "chemical.properties".
    assert not re.search(r"[^\W\d_][(\[]", abstract), abstract
    glued = re.findall(r"[^\W\d_]+[.,;:!?][^\W\d_]+", abstract)
    assert all(g in body for g in glued), glued
    # The draft had all three (the guard's measure of fused words included).
    assert foreign_script_words(draft, body)
    assert case_changes(draft, CaseIndex.of(body))
    assert "chemicalproperties" in guard.unknown_words(draft)
    print(json.dumps({"abstract": abstract}))
