"""veriscribe: biomedical abstracts and guideline answers that a reader can check."""

from typing import Any

from veriscribe.errors import VeriscribeError

__all__ = ["VeriscribeError", "__version__", "verify_answer"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # Imported on first use, so that `import veriscribe` stays light.
    if name == "verify_answer":
        from veriscribe.service.qa import verify_answer

        return verify_answer
    raise AttributeError(f"module 'veriscribe' has no attribute {name!r}")
