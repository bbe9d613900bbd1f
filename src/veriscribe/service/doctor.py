"""`veriscribe doctor`: real round trips against a backend, with measured speed."""

from __future__ import annotations

import time
from typing import Any

from pydantic import BaseModel, Field

from veriscribe.errors import VeriscribeError
from veriscribe.llm.client import LLM, Completion
from veriscribe.llm.factory import make_llm
from veriscribe.results import DoctorReport
from veriscribe.service.common import open_store
from veriscribe.settings import Settings

# About 300 tokens of ordinary clinical prose, to time prompt processing.
_DOCTOR_PASSAGE = (
    "Hypertension is a major modifiable risk factor for cardiovascular disease, stroke "
    "and chronic kidney disease. Blood pressure should be measured with a validated device "
    "after five minutes of rest, with the patient seated and the arm supported at heart "
    "level. A diagnosis rests on repeated measurements on separate occasions, and home or "
    "ambulatory monitoring helps to exclude white-coat hypertension. Lifestyle measures, "
    "including less dietary sodium, more physical activity, weight loss and moderation of "
    "alcohol, lower blood pressure in most patients. Drug treatment is chosen by age, "
    "ethnicity, comorbidity and tolerance; thiazide-like diuretics, calcium channel "
    "blockers, and inhibitors of the renin-angiotensin system are first-line options. "
)
_DOCTOR_JSON = 'Return a JSON object {"ok": true, "colours": [three colour names]}.'


class DoctorReply(BaseModel):
    """The structured answer the doctor's round trip asks for."""

    ok: bool
    colours: list[str] = Field(min_length=3, max_length=3)


async def doctor(settings: Settings) -> DoctorReport:
    """Check the configured backend with real calls; measure its prompt and output speed."""
    async with open_store(settings) as store:
        llm = make_llm(settings.model, settings, store)
        llm.settings = llm.settings.model_copy(update={"cache": False})
        load = _load(llm)
        # Prompt speed: a long prompt, one output token.
        first = await llm.text(
            "doctor.prefill",
            _DOCTOR_PASSAGE * 2 + f"\nReply with the word OK. ({time.time_ns()})",
            max_tokens=1,
        )
        prompt_rate = first.usage.prompt_tokens / max(first.seconds, 1e-6)
        # Output speed and structured output: a short prompt, a JSON answer; then the
        # same prompt free, so that the cost of the constraint shows. A one-token call
        # puts the prompt in the cache first (local contexts and servers keep it), so
        # both timed calls are decoding: a prompt time estimated and subtracted could
        # exceed a cached call's whole time.
        await llm.text("doctor.warm", _DOCTOR_JSON, max_tokens=1)
        second = await llm.json("doctor.json", _DOCTOR_JSON, DoctorReply, max_tokens=64)
        free = await llm.text("doctor.free", _DOCTOR_JSON, max_tokens=64)
        layout = _layout(llm)

        def output_rate(call: Completion[Any]) -> float:
            return round(call.usage.output_tokens / max(call.seconds, 1e-6), 1)

        constrained_rate = output_rate(second)
        return DoctorReport(
            backend=llm.spec.backend,
            model=llm.label,
            endpoint=llm.endpoint,
            context_tokens=llm.context_tokens,
            ok=second.value.ok or bool(second.value.colours),
            load_seconds=round(load, 3),
            prompt_tokens=first.usage.prompt_tokens
            + second.usage.prompt_tokens
            + free.usage.prompt_tokens,
            output_tokens=first.usage.output_tokens
            + second.usage.output_tokens
            + free.usage.output_tokens,
            prompt_tokens_per_second=round(prompt_rate, 1),
            output_tokens_per_second=constrained_rate,
            free_output_tokens_per_second=output_rate(free),
            constrained_output_tokens_per_second=constrained_rate,
            reply=second.raw.strip(),
            contexts=layout[0] if layout else None,
            threads_per_context=layout[1] if layout else None,
        )


def _layout(llm: LLM) -> tuple[int, int] | None:
    layout = getattr(llm.chat, "layout", None)
    if layout is None:
        return None
    contexts, threads = layout()
    return int(contexts), int(threads)


def _load(llm: LLM) -> float:
    load = getattr(llm.chat, "load", None)
    if load is None:
        return 0.0
    try:
        return float(load())
    except VeriscribeError:
        raise
    except (OSError, ValueError) as exc:
        raise VeriscribeError(f"cannot load {llm.endpoint}: {exc}") from exc
