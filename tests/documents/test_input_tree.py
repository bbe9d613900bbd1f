"""Input expansion without following links, and XML nested too deeply."""

from __future__ import annotations

import glob
from pathlib import Path

import pytest

from veriscribe.documents.articles import expand_input, expand_inputs
from veriscribe.documents.guidelines import read_guideline_path
from veriscribe.documents.safexml import MAX_DEPTH, parse_xml
from veriscribe.documents.tree import WalkStopped, match_glob, walk_files
from veriscribe.errors import InputError


def touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x")
    return path


def everything(_: Path) -> bool:
    return True


@pytest.fixture
def plain_tree(tmp_path: Path) -> Path:
    """A tree without links, hidden names included."""
    root = tmp_path / "t"
    for name in [
        "a.xml", "b.txt", "s/c.xml", "s/d/e.xml", ".hidden/f.xml", "s/.g.xml",
        "x.xml/inside.md", "s/d/deeper/h.nxml",
    ]:  # fmt: skip
        touch(root / name)
    return root


@pytest.mark.parametrize(
    "pattern",
    ["**/*.xml", "*.xml", "s/*/*.xml", "**", "s/**", "*/d/**/*.?xml", "[as]*", ".*/*"],
)
def test_globs_match_what_glob_glob_matches_on_a_tree_without_links(
    plain_tree: Path, pattern: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(plain_tree)
    expected: set[Path] = set()
    for hit in glob.glob(pattern, recursive=True):
        path = Path(hit)
        if path.is_dir():
            expected.update(p for p in path.rglob("*") if p.is_file())
        elif path.is_file():
            expected.add(path)
    got = match_glob(pattern, everything).files
    assert len(got) == len(set(got))
    assert set(got) == expected


def test_directory_links_are_never_entered(tmp_path: Path) -> None:
    root = tmp_path / "d"
    touch(root / "a.xml")
    for name in ("l1", "l2", "l3"):
        (root / name).symlink_to(".")
    (root / "up").symlink_to("..")
    touch(tmp_path / "outside" / "o.xml")
    (root / "away").symlink_to(tmp_path / "outside")
    assert walk_files(root, everything).files == [root / "a.xml"]
    assert match_glob(str(root / "**" / "*.xml"), everything).files == [root / "a.xml"]


def test_file_links_are_read_only_inside_the_tree(tmp_path: Path) -> None:
    root = tmp_path / "d"
    real = touch(root / "real.xml")
    (root / "same.xml").symlink_to(real)
    secret = touch(tmp_path / "secret.xml")
    (root / "leak.xml").symlink_to(secret)
    (root / "dangling.xml").symlink_to(tmp_path / "nothing.xml")
    found = expand_input(str(root))
    assert found.files == [root / "real.xml", root / "same.xml"]
    ((link, reason),) = found.skipped
    assert link == root / "leak.xml" and "outside" in reason
    # Named explicitly, a link is the user's choice and is read.
    assert expand_inputs([str(root / "leak.xml")]) == [root / "leak.xml"]


def test_a_walk_stops_when_asked(plain_tree: Path) -> None:
    with pytest.raises(WalkStopped):
        expand_input(str(plain_tree), should_stop=lambda: True)
    with pytest.raises(WalkStopped):
        expand_input(str(plain_tree / "**" / "*.xml"), should_stop=lambda: True)


def test_a_walk_over_too_many_entries_is_refused(
    plain_tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("veriscribe.documents.tree.MAX_ENTRIES", 3)
    with pytest.raises(InputError, match="more than 3 entries"):
        expand_input(str(plain_tree))


def test_xml_nesting_is_refused_past_the_limit(tmp_path: Path) -> None:
    def nested(depth: int) -> str:
        return "<a>" * depth + "x" + "</a>" * depth

    assert parse_xml(nested(MAX_DEPTH), "ok.xml").tag == "a"
    with pytest.raises(InputError, match=f"nested more than {MAX_DEPTH} deep"):
        parse_xml(nested(MAX_DEPTH + 1), "deep.xml")
    guideline = tmp_path / "g.xml"
    guideline.write_text(
        "<article><body><sec><title>T</title>"
        + nested(20_000)
        + "</sec></body></article>"
    )
    with pytest.raises(InputError, match="nested more than"):
        read_guideline_path(guideline)


def test_a_deep_json_outline_is_an_input_error(tmp_path: Path) -> None:
    outline = tmp_path / "g.sections.json"
    outline.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(InputError, match="nested too deeply"):
        read_guideline_path(outline)


def test_a_guideline_directory_is_read_without_following_links(tmp_path: Path) -> None:
    root = tmp_path / "guides"
    (root / "a.md").parent.mkdir()
    (root / "a.md").write_text("# Guide A\n\n## Dose\n\nTake one tablet a day.\n")
    (root / "loop").symlink_to(".")
    secret = tmp_path / "private.md"
    secret.write_text("# Private\n\n## Notes\n\nNot for the corpus.\n")
    (root / "b.md").symlink_to(secret)
    errors: list[tuple[Path, str]] = []
    docs = read_guideline_path(
        root, on_error=lambda path, exc: errors.append((path, exc.user_message))
    )
    assert [doc.title for doc in docs] == ["Guide A"]
    ((link, reason),) = errors
    assert link == root / "b.md" and "outside" in reason
