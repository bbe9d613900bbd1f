"""Commands of the cited-QA job: corpus, ask, chat, verify, eval qa/retrieval."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from veriscribe.cli import render


def _later(name: str) -> None:
    render.not_available(name)
    raise typer.Exit(2)


def register(app: typer.Typer, corpus_app: typer.Typer, eval_app: typer.Typer) -> None:
    """Add the QA commands to the application."""

    @corpus_app.command("add")
    def corpus_add(name: str, paths: list[Path]) -> None:
        """Add guideline documents to a corpus."""
        _later("corpus add")

    @corpus_app.command("list")
    def corpus_list() -> None:
        """List corpora."""
        _later("corpus list")

    @corpus_app.command("show")
    def corpus_show(name: str) -> None:
        """Show a corpus's documents and sections."""
        _later("corpus show")

    @app.command()
    def ask(question: str, *, corpus: Annotated[str, typer.Option("--corpus")]) -> None:
        """Answer a question from a guideline corpus with checked verbatim citations."""
        _later("ask")

    @app.command()
    def chat(*, corpus: Annotated[str, typer.Option("--corpus")]) -> None:
        """Chat with a guideline corpus; every claim is checked."""
        _later("chat")

    @app.command()
    def verify(
        answer: str, *, corpus: Annotated[str, typer.Option("--corpus")]
    ) -> None:
        """Check an answer that carries citation markers."""
        _later("verify")

    @eval_app.command("qa")
    def eval_qa(results: Path) -> None:
        """Score checked answers: the claim funnel and support rates."""
        _later("eval qa")

    @eval_app.command("retrieval")
    def eval_retrieval(*, corpus: Annotated[str, typer.Option("--corpus")]) -> None:
        """Measure retrieval hit rate on a question set."""
        _later("eval retrieval")
