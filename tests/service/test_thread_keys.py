"""A finished thread is reused only while nothing that shapes its result has changed."""

from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage

import veriscribe.prompts as prompts_package
from qa_helpers import FIXTURES
from veriscribe import release
from veriscribe.graphs.runner import thread_key
from veriscribe.llm.factory import make_llm
from veriscribe.prompts import load_prompt, prompts_digest
from veriscribe.service import qa
from veriscribe.service.corpora import add_corpus
from veriscribe.settings import Settings

QUESTION = "Which drugs are first-line for hypertension?"


@pytest.fixture
def prompt_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Serve the prompts from a temporary copy that a test may edit."""
    copy = tmp_path / "prompts"
    shutil.copytree(Path(str(resources.files(prompts_package))), copy)
    real_files = resources.files

    def files(package: object) -> object:
        if package == prompts_package.__name__:
            return copy
        return real_files(package)  # type: ignore[arg-type]

    monkeypatch.setattr(prompts_package.resources, "files", files)
    prompts_digest.cache_clear()
    load_prompt.cache_clear()
    yield copy
    prompts_digest.cache_clear()
    load_prompt.cache_clear()


def edit(path: Path) -> None:
    path.write_text(path.read_text("utf-8") + "\nBe brief.\n", "utf-8")
    prompts_digest.cache_clear()
    load_prompt.cache_clear()


@pytest.mark.parametrize("name", ["select_quote.md", "select_id.md", "judge_yesno.md"])
def test_editing_any_prompt_of_a_graph_changes_its_thread_keys(
    prompt_copy: Path, name: str
) -> None:
    before = thread_key("qa", "corpus", QUESTION)
    edit(prompt_copy / "qa" / name)
    assert thread_key("qa", "corpus", QUESTION) != before


def test_a_prompt_of_another_graph_leaves_the_keys_alone(prompt_copy: Path) -> None:
    before = thread_key("qa", "corpus", QUESTION)
    edit(prompt_copy / "abstract" / "refine.md")
    assert thread_key("qa", "corpus", QUESTION) == before
    assert thread_key("abstract", "doc") != before


async def test_ask_answers_afresh_after_the_default_prompt_is_edited(
    prompt_copy: Path, tmp_path: Path
) -> None:
    settings = Settings(db=tmp_path / "v.db", model="sim")
    await add_corpus(settings, "h", [FIXTURES / "guidelines" / "hypertension.md"])
    first = await qa.ask(settings, "h", QUESTION)
    again = await qa.ask(settings, "h", QUESTION)
    assert again.reused and again.thread_id == first.thread_id
    edit(prompt_copy / "qa" / "select_quote.md")
    edited = await qa.ask(settings, "h", QUESTION)
    assert not edited.reused and edited.thread_id != first.thread_id


async def test_another_sim_seed_or_temperature_is_another_thread(
    tmp_path: Path,
) -> None:
    settings = Settings(db=tmp_path / "v.db", model="sim")
    await add_corpus(settings, "h", [FIXTURES / "guidelines" / "hypertension.md"])
    one = await qa.ask(settings.with_overrides(model="sim:seed=1"), "h", QUESTION)
    two = await qa.ask(settings.with_overrides(model="sim:seed=2"), "h", QUESTION)
    warm = Settings(db=tmp_path / "v.db", model="sim:seed=1", llm={"temperature": 0.7})  # type: ignore[arg-type]
    three = await qa.ask(warm, "h", QUESTION)
    assert len({one.thread_id, two.thread_id, three.thread_id}) == 3
    assert not (two.reused or three.reused)


@pytest.fixture
def code_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Digest the code of a temporary copy of the package that a test may edit."""
    copy = tmp_path / "veriscribe"
    shutil.copytree(
        release.ROOT, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
    )
    monkeypatch.setattr(release, "ROOT", copy)
    release.code_digest.cache_clear()
    yield copy
    release.code_digest.cache_clear()


def touch_code(path: Path) -> None:
    path.write_text(path.read_text("utf-8") + "\n# changed\n", "utf-8")
    release.code_digest.cache_clear()


def test_a_changed_check_gives_new_thread_keys(code_copy: Path) -> None:
    before = thread_key("abstract", "doc")
    touch_code(code_copy / "checks" / "wording.py")
    assert thread_key("abstract", "doc") != before


def test_a_changed_front_end_leaves_the_thread_keys_alone(code_copy: Path) -> None:
    before = thread_key("abstract", "doc")
    touch_code(code_copy / "cli" / "render" / "answers.py")
    touch_code(code_copy / "store" / "runs.py")
    assert thread_key("abstract", "doc") == before


def test_no_test_double_is_in_the_code_the_keys_digest() -> None:
    # The fake model server is kept in tests/: editing it changes no thread key or
    # cached call (sim, a backend of the product, is digested like any other).
    assert [p.name for p in release.ROOT.rglob("fake*.py")] == []


def test_changed_decoding_code_misses_the_call_cache(
    code_copy: Path, tmp_path: Path
) -> None:
    client = make_llm("sim", Settings(db=tmp_path / "v.db"))
    messages = [HumanMessage(content="Summarise.")]
    before = client._key(messages, None, None)
    touch_code(code_copy / "nodes" / "abstract" / "checks.py")
    assert client._key(messages, None, None) == before
    touch_code(code_copy / "llm" / "embedded" / "copy_guard.py")
    assert client._key(messages, None, None) != before
