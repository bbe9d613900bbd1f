"""The size limit of one input: a huge file must not become thousands of model calls."""

from __future__ import annotations

from veriscribe.errors import InputError

RAISE_HINT = (
    "raise it with `veriscribe --max-bytes N ...` or VERISCRIBE_MAX_INPUT_BYTES"
)


def size_text(n: int) -> str:
    """Return a byte count for a message: 5.0 MB, 12.3 kB or 512 bytes."""
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f} MB"
    if n >= 1_000:
        return f"{n / 1_000:.1f} kB"
    return f"{n} bytes"


def over_limit(size: int, max_bytes: int | None) -> str | None:
    """Return why ``size`` bytes are too many (None when they are not)."""
    if max_bytes is None or size <= max_bytes:
        return None
    return (
        f"{size_text(size)}, over the {size_text(max_bytes)} limit for one input "
        f"({RAISE_HINT})"
    )


def check_size(source: object, size: int, max_bytes: int | None) -> None:
    """Raise InputError when one input of ``size`` bytes is over ``max_bytes``.

    Raises:
        InputError: The input is too large; the message names its size, the limit
            and how to raise it.
    """
    reason = over_limit(size, max_bytes)
    if reason is not None:
        raise InputError(f"{source}: {reason}")
