"""Fixtures for tests that run the real embedded model."""

from __future__ import annotations

from pathlib import Path

import pytest

from veriscribe.errors import ModelFileMissing
from veriscribe.llm.factory import local_model_path
from veriscribe.settings import Settings


@pytest.fixture(scope="session")
def local_gguf() -> Path:
    """Return the embedded model's GGUF file (assembled from its packages if needed)."""
    try:
        return local_model_path(Settings())
    except ModelFileMissing as exc:
        pytest.fail(f"the embedded model must be installed for e2e tests: {exc}")
