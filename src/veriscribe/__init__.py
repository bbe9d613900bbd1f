"""veriscribe: biomedical abstracts and guideline answers that a reader can check."""

from veriscribe.errors import VeriscribeError

__all__ = ["VeriscribeError", "__version__"]
__version__ = "0.1.0"
