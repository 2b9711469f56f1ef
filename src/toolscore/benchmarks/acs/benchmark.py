"""The ACS benchmark: the model under test is a judge of arithmetic constraints.

A sample is one human-labelled row (request, response, constraint); running it asks the judge
under test for a verdict, and scoring compares that verdict with the human label. The judge is
acs-verify (toolscore's deterministic verifier: the run then needs no model), the run's model
as an LLM judge (``judge="llm"``), or a judge configuration file (kind acs-verify or acs-llm,
which names its own model). Every run gets the same run directory, resume, cache and rescoring
as any other benchmark, and ``scores.json`` is the agreement document of
``toolscore judge-agreement``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from toolscore.benchmarks.acs import agreement, prompt
from toolscore.benchmarks.acs.data import AcsRow, load_rows, request_id
from toolscore.benchmarks.acs.dataset import SOURCE as ACS_DATA
from toolscore.benchmarks.acs.shots import check_shots, explanations, few_shot_plan
from toolscore.benchmarks.base import Benchmark, IntervalMetric, OptionError, Sample, option
from toolscore.judges.registry import ConfiguredJudge
from toolscore.models.base import InfraError
from toolscore.types import GenerateConfig

Judge = Literal["acs-verify", "llm", "hybrid"]
Group = Literal["domain", "kind", "none"]
KINDS = ("acs-verify", "acs-llm")
HYBRID_LABEL = "hybrid: acs-verify, LLM extraction where it cannot read the response"


@dataclass
class ACSOptions:
    judge: Judge = option("acs-verify", "The judge under test: acs-verify (deterministic, no "
                          "model) | llm (the run's --model as LLM judge) | hybrid (acs-verify; "
                          "where it cannot read a response, the run's --model extracts the "
                          "figures into a schema and acs-verify's arithmetic decides).")
    shots: int = option(0, "LLM judge: few-shot examples per prompt (drawn from the other half "
                        "of the requests, never the judged row's own).")
    shot_reasons: bool = option(False, "LLM judge: show acs-verify's figures with each "
                                "example's label.")
    votes: int = option(1, "LLM judge: samples per row (majority; a tie abstains).")
    temperature: float = option(0.0, "LLM judge temperature.")
    max_tokens: int = option(2048, "LLM judge: token limit of each reply.")
    judge_config: Path | None = option(None, "Judge configuration file (JSON/YAML; kind "
                                       "acs-verify or acs-llm); replaces --judge, --votes, "
                                       "--temperature.")
    judge_base_url: str | None = option(None, "Endpoint of a configured LLM judge whose file "
                                        "gives none.")
    csv: Path | None = option(None, "An ACS-format csv to judge instead of the dataset's "
                              "acs_dev.csv.")
    group: Group = option("domain", "Per-group metrics: domain | kind (constraint kind as "
                          "acs-verify reads it) | none.")
    resamples: int = option(2000, "Bootstrap resamples of whole requests (0: no intervals).")
    seed: int = option(0, "Seed of the bootstrap, the example draw and the judge's sampling.")


def check_options(o: ACSOptions) -> None:
    if o.shots < 0 or o.votes < 1 or o.resamples < 0 or o.max_tokens < 1:
        raise OptionError("acs: shots and resamples must be >= 0; votes and max_tokens >= 1")
    if o.judge in ("acs-verify", "hybrid") and o.judge_config is None and (
            o.shots or o.votes != 1 or o.shot_reasons):
        raise OptionError(f"acs: --shots, --votes and --shot-reasons apply to LLM judges, "
                          f"not {o.judge}")


class ACSBenchmark(ConfiguredJudge, Benchmark):
    """ACS (arithmetic constraint satisfaction): a judge's agreement with human labels."""

    name = "acs"
    description = "ACS: judges of arithmetic constraints vs 322 human labels (acs_dev.csv)"
    Options = ACSOptions
    dataset = "acs"
    dataset_source = ACS_DATA
    roles = {"judge": "model"}  # the LLM judge (acs-llm) is the run's model
    columns = agreement.COLUMNS

    @classmethod
    def locate_data(cls, data: str | Path | None, options: Any, download: bool) -> Path | None:
        """The options and the judge configuration file are checked before the dataset is
        looked for: a mistake in what was asked is said first, with or without the data."""
        check_options(options)
        if options.judge_config is not None:
            from toolscore.judges.registry import load_judge_config

            load_judge_config(options.judge_config).require(*KINDS)
        return super().locate_data(data, options, download)

    @classmethod
    def create(cls, data_dir: Path | None, options: Any) -> ACSBenchmark:
        return cls(data_dir, options)

    def __init__(self, data_dir: str | Path | None, options: ACSOptions | None = None) -> None:
        o = options or ACSOptions()
        check_options(o)
        self.data_dir = Path(data_dir) if data_dir is not None else None
        self.options = o
        self._rows: list[AcsRow] | None = None
        self._samples: list[Sample] | None = None
        self._shots: dict[str, list[AcsRow]] | None = None
        self._reasons: dict[str, str] = {}
        self._config: Any = None
        self._llm: Any = None
        self._extracted: dict[tuple[str, str, str], Any] = {}  # hybrid: one per response

    # -- configuration -----------------------------------------------------------------------
    @property
    def judge_config(self) -> Any:
        """The judge configuration file, read once (kind acs-verify or acs-llm)."""
        if self._config is None and self.options.judge_config is not None:
            from toolscore.judges.registry import load_judge_config

            self._config = load_judge_config(self.options.judge_config).require(*KINDS)
        return self._config

    @property
    def kind(self) -> str:
        """acs-verify, acs-llm (a configured model) or llm (the run's model)."""
        if self.options.judge_config is not None:
            return str(self.judge_config.kind)
        return self.options.judge

    def uses_model(self) -> bool:
        return self.options.judge in ("llm", "hybrid") and self.options.judge_config is None

    def config(self) -> dict[str, Any]:
        o = self.options
        cfg: dict[str, Any] = {"data_dir": None if self.data_dir is None else str(self.data_dir),
                               "judge": o.judge, "mode": self.mode_label(),
                               "group": o.group, "resamples": o.resamples, "seed": o.seed}
        if o.csv is not None:
            cfg["csv"] = str(o.csv)
        if self.kind == "hybrid":
            from toolscore.benchmarks.acs.hybrid import SCHEMA_SHA

            cfg.update(temperature=self.temperature, max_tokens=o.max_tokens,
                       extraction_schema=SCHEMA_SHA)
        elif self.kind != "acs-verify":
            cfg.update(shots=o.shots, shot_reasons=o.shot_reasons, votes=self.votes,
                       temperature=self.temperature, max_tokens=o.max_tokens,
                       prompt_sha256=prompt.PROMPT_SHA256)
        if self.judge_config is not None:
            cfg["judge_id"] = self.judge_config.id
            cfg["judge_config"] = self.judge_config.identity()
        return cfg

    def mode_label(self) -> str:
        if self.kind == "hybrid":
            return HYBRID_LABEL
        return "deterministic" if self.kind == "acs-verify" else f"{self.options.shots}-shot"

    # -- data --------------------------------------------------------------------------------
    def rows(self) -> list[AcsRow]:
        if self._rows is None:
            source = self.options.csv or self.data_dir
            self._rows = load_rows(source)
        return self._rows

    def samples(self) -> list[Sample]:
        if self._samples is None:
            from toolscore.benchmarks.acs.verify.constraints import Abstain, parse_constraint

            out = []
            for r in self.rows():
                parsed = parse_constraint(r.constraint, r.request, r.domain)
                kind = "unparsed" if isinstance(parsed, Abstain) else parsed.kind
                out.append(Sample(r.row_id, r, {"split": r.domain, "domain": r.domain,
                                                "kind": kind, "request": request_id(r)}))
            self._samples = out
        return self._samples

    def check(self) -> None:
        """Rows, the judge configuration and the few-shot plan, before any model call."""
        o = self.options
        if self.kind in ("acs-verify", "hybrid") and (o.shots or self.votes != 1
                                                       or o.shot_reasons):
            raise OptionError(f"acs: --shots, --votes and --shot-reasons apply to LLM judges, "
                              f"not {self.kind}")
        rows = [s.data for s in self.samples()]
        if self.kind not in ("acs-verify", "hybrid") and rows:
            self.shots_for(rows[0])

    def shots_for(self, row: AcsRow) -> list[AcsRow]:
        """The row's few-shot examples: the plan is drawn once over every row (so a --limit
        does not change which examples a row gets)."""
        if self._shots is None:
            plan = few_shot_plan(self.rows(), self.options.shots, self.options.seed)
            self._shots = {r.row_id: ex for r, ex in plan}
            if self.options.shot_reasons:
                self._reasons = explanations(list({s.row_id: s for ex in self._shots.values()
                                                   for s in ex}.values()))
        shots = self._shots[row.row_id]
        check_shots(row, shots)
        return shots

    # -- protocol ----------------------------------------------------------------------------
    async def run_sample(self, sample: Sample, model: Any, epoch: int) -> dict[str, Any]:
        row: AcsRow = sample.data
        if self.kind == "acs-verify":
            from toolscore.benchmarks.acs.verify import verify

            v = verify(row.request, row.response, row.constraint, row.domain)
            out: dict[str, Any] = {"judge": self._judge_name(None), "label": v.label,
                                   "reason": v.reason}
            return self._with_config(out)
        if self.kind == "hybrid":
            return await self._run_hybrid(row, model, epoch)
        return self._with_config(await self._run_llm(row, model, epoch))

    async def _run_llm(self, row: AcsRow, model: Any, epoch: int) -> dict[str, Any]:
        from toolscore.judges.llm import decide

        judge = self._judge(model)
        shots = self.shots_for(row)
        turns = [m for s in shots for m in prompt.TEMPLATE.example(
            prompt.variables(s),
            prompt.example_answer(s.label, self._reasons.get(s.row_id, "")))]
        n = self.votes
        verdicts = await judge.votes(prompt.TEMPLATE, prompt.variables(row), n, shots=turns,
                                     first=epoch * n)
        if verdicts and verdicts[-1].infra:
            raise InfraError(str(verdicts[-1].error))
        label, reason = decide(verdicts)
        return {"judge": self._judge_name(judge), "label": prompt.as_bool(label),
                "reason": reason, "shots": [s.row_id for s in shots],
                "votes": [{"label": prompt.as_bool(v.label), "reason": v.reason,
                           "error": v.error, "raw": v.raw} for v in verdicts]}

    async def _run_hybrid(self, row: AcsRow, model: Any, epoch: int) -> dict[str, Any]:
        """acs-verify; for a response it cannot read, the model's extraction (one per response
        and epoch, shared by the response's constraints) and acs-verify's arithmetic."""
        import asyncio

        from toolscore.benchmarks.acs import hybrid
        from toolscore.benchmarks.acs.verify import verify
        from toolscore.benchmarks.acs.verify.constraints import Abstain, parse_constraint

        v = verify(row.request, row.response, row.constraint, row.domain)
        client = model.client
        name = f"hybrid({getattr(client, 'name', 'model')})"
        parsed = parse_constraint(row.constraint, row.request, row.domain)
        if v.label is not None or isinstance(parsed, Abstain):
            return {"judge": name, "label": v.label, "reason": v.reason, "extracted_by": "parser"}
        if hasattr(client, "with_role"):
            client = client.with_role("judge")
        part = hybrid.part_for(parsed)
        key = (row.response, part, str(epoch))
        if key not in self._extracted:
            gen = GenerateConfig(temperature=self.temperature,
                                 max_tokens=self.options.max_tokens, seed=self.options.seed)
            self._extracted[key] = asyncio.ensure_future(hybrid.extract(
                client, row.request, row.response, part, config=gen))
        try:
            got = await asyncio.shield(self._extracted[key])
        except InfraError:
            del self._extracted[key]  # a later row (or a resume) asks again
            raise
        out: dict[str, Any] = {"judge": name, "extracted_by": "llm", "parser_reason": v.reason,
                               "raw": got.raw}
        if got.extraction is None:
            return {**out, "label": None, "reason": got.error}
        decided = hybrid.decide(parsed, got.extraction)
        return {**out, "label": decided.label, "reason": decided.reason,
                "extraction": got.extraction.model_dump(exclude_defaults=True)}

    def _judge(self, model: Any) -> Any:
        """The one LLM judge, through the run's model (usage role "judge") or the model the
        judge configuration names (built by the one client factory, with the run's cache)."""
        from toolscore.judges.llm import LLMJudge

        gen = GenerateConfig(temperature=self.temperature, max_tokens=self.options.max_tokens,
                             seed=self.options.seed)
        cfg = self.judge_config
        if cfg is None:
            client = model.client
            if hasattr(client, "with_role"):
                client = client.with_role("judge")
            return LLMJudge(client, config=gen)
        if self._llm is None:
            from dataclasses import replace

            from toolscore.judges.registry import make_llm_judge

            if cfg.base_url is None and self.options.judge_base_url:
                cfg = replace(cfg, base_url=self.options.judge_base_url)
            s = self.settings
            self._llm = make_llm_judge(cfg, cache=s.cache, timeout=s.timeout,
                                       max_concurrency=s.max_concurrency)
            self._llm.config = gen
        return self._llm

    def _judge_name(self, judge: Any) -> str:
        if self.judge_config is not None:
            return str(self.judge_config.id)
        return "acs-verify" if judge is None else str(judge.client.name)

    def _with_config(self, out: dict[str, Any]) -> dict[str, Any]:
        if self.judge_config is not None:
            out["judge_config"] = self.judge_config.identity()
        return out

    # -- scoring -----------------------------------------------------------------------------
    def score(self, output: dict[str, Any], sample: Sample) -> dict[str, Any]:
        human = bool(sample.data.label)
        label = output.get("label")
        return {"human": human, "label": label, "correct": label is not None and label == human,
                "abstained": label is None, "decided": label is not None}

    @classmethod
    def primary_metric(cls, records: list[dict[str, Any]]) -> str | None:
        return "correct"

    @classmethod
    def interval_metrics(cls, records: list[dict[str, Any]]) -> list[IntervalMetric]:
        """Agreement with the human labels, resampled over rows (the agreement figures in
        scores.json resample whole requests instead)."""
        return [IntervalMetric("accuracy (decided rows)", "correct", "decided"),
                IntervalMetric("accuracy (abstentions wrong)", "correct"),
                IntervalMetric("coverage", "decided")]

    def aggregate(self, records: list[dict[str, Any]]) -> dict[str, Any]:
        order = {s.id: i for i, s in enumerate(self.samples())}
        ranked = sorted(records, key=lambda r: (int(r.get("epoch", 0)),
                                                order.get(r["id"], len(order)), str(r["id"])))
        outputs = [r["output"] for r in ranked if r.get("status") == "ok"]
        first = outputs[0] if outputs else {}
        o = self.options
        cfg = first.get("judge_config")
        if cfg is None and self.options.judge_config is not None:
            cfg = self.judge_config.identity()
        name = first.get("judge") or (cfg or {}).get("id") or o.judge
        votes = (cfg or {}).get("votes") or o.votes
        doc = agreement.summarise(ranked, judge=name, group=o.group, shots=o.shots,
                                  votes=votes, resamples=o.resamples, seed=o.seed,
                                  judge_config=cfg)
        if self.kind == "hybrid":
            doc["how"] = HYBRID_LABEL
            doc["extracted_by_llm"] = sum(out.get("extracted_by") == "llm" for out in outputs)
        return doc

    @classmethod
    def headline_rows(cls, metrics: dict[str, Any]) -> dict[str, dict[str, Any]]:
        return agreement.headline_rows(metrics)

    @classmethod
    def summary_lines(cls, metrics: dict[str, Any]) -> list[str]:
        return agreement.summary_lines(metrics)

    def record_view(self, record: dict[str, Any]) -> dict[str, Any]:
        out, scores = record.get("output") or {}, record.get("scores") or {}
        summary = ""
        if scores:
            said = {True: "satisfied", False: "unsatisfied", None: "abstained"}
            summary = (f"human {said[scores.get('human')]}, judge {said[scores.get('label')]}"
                       f" ({'right' if scores.get('correct') else 'wrong'})")
        sample = next((s for s in self.samples() if s.id == record.get("id")), None)
        messages = []
        if sample is not None:
            messages.append({"role": "user",
                             "content": prompt.USER_TEMPLATE.format(**prompt.variables(
                                 sample.data))})
        replies = [t for v in out.get("votes") or [] for t in v.get("raw") or []]
        for text in replies or [out.get("reason") or record.get("error") or ""]:
            if text:
                messages.append({"role": "assistant", "content": text})
        return {"summary": summary, "messages": messages}
