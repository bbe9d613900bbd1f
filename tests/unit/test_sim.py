import pytest
from pydantic import BaseModel, Field

from veriscribe.errors import BackendUnavailable, StructuredOutputError
from veriscribe.llm.factory import make_llm
from veriscribe.settings import LLMSettings, Settings


class Labels(BaseModel):
    labels: list[str] = Field(min_length=4, max_length=4)
    summary: str


async def test_sim_answers_any_schema() -> None:
    llm = make_llm("sim", Settings())
    result = await llm.json("label", "label these four sentences", Labels)
    assert len(result.value.labels) == 4 and result.value.summary


async def test_sim_faults_are_seeded_and_varied() -> None:
    outcomes = []
    for seed in range(40):
        llm = make_llm(f"sim:fail=1,seed={seed}", Settings(llm=LLMSettings(retries=0)))
        try:
            await llm.json("label", "p", Labels)
            outcomes.append("ok")
        except (BackendUnavailable, StructuredOutputError) as exc:
            outcomes.append(type(exc).__name__)
    assert "ok" not in outcomes
    assert {"ModelTimeout", "BackendUnavailable", "StructuredOutputError"} == set(
        outcomes
    )


async def test_sim_fault_rate_is_roughly_respected() -> None:
    # One attempt per call: the client's retries would hide most faults.
    llm = make_llm("sim:fail=0.2,seed=7", Settings(llm=LLMSettings(retries=0)))
    failures = 0
    for i in range(200):
        try:
            await llm.text("p", f"prompt {i}")
        except BackendUnavailable:
            failures += 1
    # text calls only fail by timeout or 5xx: half of the fault kinds
    assert 5 <= failures <= 40


@pytest.mark.parametrize("bad", ["sim:latency=fast"])
def test_bad_sim_option(bad: str) -> None:
    from veriscribe.errors import ConfigError

    with pytest.raises(ConfigError):
        make_llm(bad, Settings())
