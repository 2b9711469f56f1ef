"""The ToolEval judge of one sample: the run's model behind an :class:`LLMJudge`, configured as
today's ``--judge``/``--judge-config`` did, with infrastructure failures made loud.

In a run the model is the *judge*: the answers were produced already. Its tokens are counted
under the role "judge" (:meth:`ModelClient.with_role`), so a record says what judging cost.
:class:`LLMJudge` turns a persistent infrastructure failure into an error verdict, which is
right for a single verdict but wrong for a run: the runner must record the sample as an error
(excluded from scores, retried on resume), not score a verdict the judge never gave. So the
client is wrapped to remember the :class:`InfraError` it swallowed, and the judge re-raises it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolscore.judges.llm import LLMJudge, PromptTemplate, Verdict
from toolscore.models.base import InfraError
from toolscore.types import GenerateConfig

if TYPE_CHECKING:
    from toolscore.models.client import RunModel

MAX_TOKENS = 512  # per verdict in the stable mode (the reference mode sends its config's)
JUDGE_SEED = 0  # the stable mode's sampling seed (vote v sends seed + v); the reference sends none


def sampling(evaluator: Any, mode: str = "reference") -> dict[str, Any]:
    """The sampling fields run.json records: the release evaluator's (reference mode, no
    seed; unknown while its files are not found) or toolscore's (stable mode)."""
    if mode == "reference":
        return {"max_tokens": getattr(evaluator, "max_tokens", None), "judge_seed": None}
    return {"max_tokens": MAX_TOKENS, "judge_seed": JUDGE_SEED}


def load_config(path: Path | None, kinds: tuple[str, ...]) -> Any:
    """The judge configuration file (``judges.registry``), checked to be one of ``kinds``."""
    if path is None:
        return None
    from toolscore.judges.registry import load_judge_config

    return load_judge_config(path).require(*kinds)


class _Watched:
    """A model client that remembers the last :class:`InfraError` it raised."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.error: InfraError | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    async def generate(self, messages: Any, tools: Any = None, config: Any = None) -> Any:
        try:
            return await self._client.generate(messages, tools, config)
        except InfraError as e:
            self.error = e
            raise


class SampleJudge:
    """What ``judge_once`` and ``compare`` call (``judge``, ``votes``, ``name``, ``usage``):
    an :class:`LLMJudge` whose infrastructure failures propagate as :class:`InfraError`."""

    def __init__(self, llm: LLMJudge, watched: _Watched) -> None:
        self.llm = llm
        self.watched = watched

    @property
    def name(self) -> str:
        return self.llm.name

    @property
    def usage(self) -> Any:
        return self.llm.usage

    async def judge(self, template: PromptTemplate, variables: dict[str, Any],
                    vote: int = 0) -> Verdict:
        verdict = await self.llm.judge(template, variables, vote=vote)
        if self.watched.error is not None:
            raise self.watched.error
        return verdict

    async def votes(self, template: PromptTemplate, variables: dict[str, Any],
                    n: int) -> list[Verdict]:
        return [await self.judge(template, variables, vote=v) for v in range(n)]


def judge_id(config: Any, model_name: str) -> str | None:
    """The configured judge's id for verdicts, naming the model that actually judged."""
    if config is None:
        return None
    if config.model and config.model != model_name:
        config = dataclasses.replace(config, model=model_name)
    return str(config.id)


def sample_judge(model: RunModel, temperature: float, config: Any = None,
                 call_api: str | None = None) -> SampleJudge:
    """The judge for one sample over the run's ``model`` (the runner's per-sample view of the
    client). ``config`` (a judge configuration) replaces the system prompt and the
    temperature, and names the verdicts; ``call_api`` is the request shape the reference mode
    asks for (``GenerateConfig.call_api``)."""
    client = model.client
    if client is not None:
        client = client.with_role("judge")
    watched = _Watched(client)
    if config is not None and config.temperature is not None:
        temperature = config.temperature
    gen = GenerateConfig(temperature=temperature, max_tokens=MAX_TOKENS, seed=JUDGE_SEED,
                         call_api=call_api)
    llm = LLMJudge(watched, config=gen)  # type: ignore[arg-type]  # a ModelClient, watched
    if config is not None:
        llm.system = config.template
        llm.judge_id = judge_id(config, str(getattr(client, "name", "")))
    return SampleJudge(llm, watched)
