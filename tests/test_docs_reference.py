"""The documentation's generated reference tables say what the code says."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"


@pytest.fixture(scope="module")
def hooks() -> ModuleType:
    """Return the MkDocs hooks module that renders the tables."""
    sys.path.insert(0, str(DOCS))
    try:
        import hooks as module
    finally:
        sys.path.remove(str(DOCS))
    return module


def test_settings_table_lists_every_setting(hooks: ModuleType) -> None:
    """Every field of the settings tree appears as its variable, nested ones too."""
    from veriscribe.settings import LLMSettings, Settings

    table = hooks.render("<!-- generated: settings -->")
    for name in Settings.model_fields:
        if name != "llm":
            assert f"`VERISCRIBE_{name.upper()}`" in table
    for name in LLMSettings.model_fields:
        assert f"`VERISCRIBE_LLM__{name.upper()}`" in table
    assert "`VERISCRIBE_LLM`" not in table


def test_command_reference_has_every_command_and_option(hooks: ModuleType) -> None:
    """The command reference holds each command and the options --help lists."""
    table = hooks.render("<!-- generated: cli -->")
    for command in ("abstract", "batch", "worker", "ask", "verify", "serve"):
        assert f"`veriscribe {command}`" in table
    assert "`veriscribe runs resume`" in table
    assert "`veriscribe eval make-questions`" in table
    assert "`--run-id <str>`" in table
    assert "[default: 250]" in table  # abstract --words


def test_http_reference_has_every_route(hooks: ModuleType) -> None:
    """Every route of the server's OpenAPI document has its section."""
    document = hooks.openapi_document()
    text = hooks.render("<!-- generated: openapi -->")
    for path, methods in document["paths"].items():
        for method in methods:
            assert f"### `{method.upper()} {path}`" in text


def test_result_fields_come_from_the_model(hooks: ModuleType) -> None:
    """A result's table lists its fields with the docstrings written under them."""
    from veriscribe.results import BatchLine

    table = hooks.render("<!-- generated: fields veriscribe.results.BatchLine -->")
    for name in BatchLine.model_fields:
        assert f"| `{name}` |" in table
    assert "The asked length in words (0: not held)." in table


def test_unknown_table_fails_the_build(hooks: ModuleType) -> None:
    """A page asking for a table that does not exist is an error, not an empty table."""
    with pytest.raises(ValueError, match="unknown generated table"):
        hooks.render("<!-- generated: nothing -->")


def test_readme_links_resolve() -> None:
    """Every link of the README into the repository names a file, and a heading in it."""
    root = DOCS.parent
    readme = (root / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)\s]+)\)", readme)
    local = [link for link in links if "://" not in link]
    assert local, "the README links to no page of the manual"
    for link in local:
        path, _, anchor = link.partition("#")
        target = root / path
        assert target.is_file(), f"README links to a missing file: {link}"
        if anchor:
            headings = re.findall(
                r"^#+ (.+)$", target.read_text(encoding="utf-8"), re.M
            )
            assert anchor in {slug(h) for h in headings}, f"no heading for {link}"


def slug(heading: str) -> str:
    """Return a heading's anchor as MkDocs (and GitHub, for these headings) makes it."""
    text = re.sub(r"[^\w\s-]", "", heading.strip().lower())
    return re.sub(r"[-\s]+", "-", text)


def test_readme_is_a_front_door() -> None:
    """The README stays short: the manual is the place for everything else."""
    lines = (DOCS.parent / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200
