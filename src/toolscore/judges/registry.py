"""Judge kinds by name (the ``toolscore.judges`` entry points), and judge configurations read
from a file.

A score is only comparable with another if both name the judge that produced it, so a judge is
identified by a *kind* (a :class:`JudgeKind`), the model behind it and a hash of its prompt. A
configuration file pins those down once, instead of a string of CLI options that is easy to
vary by accident between two runs::

    name: pass-4o-mini          # your label for this judge
    kind: tooleval-pass         # a registered kind, e.g. acs-verify | acs-llm | tooleval-pass
    model: openai/gpt-4o-mini   # LLM kinds only
    base_url: http://localhost:8000/v1
    template: prompts/strict.txt   # optional: a file (relative to this one) or inline text;
                                   # replaces the built-in system prompt (literal text: the
                                   # question and reply format stay the built-in ones)
    temperature: 0.7
    votes: 5

JSON or YAML. Every problem is one line naming the file and the field.

Kinds are found through entry points, toolscore's own included (they live with the method they
serve, e.g. ``acs-verify`` in ``benchmarks/acs``), so a package adds a kind without editing a
table here; a new prompt or model for an existing kind is a new configuration file, not code.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolscore.data import DataError, read_text
from toolscore.entrypoints import JUDGES, ExtensionError

DETERMINISTIC, LLM = "deterministic", "llm"


@dataclass(frozen=True)
class JudgeKind:
    """A kind of judge, as an entry point of the ``toolscore.judges`` group declares it: what
    it labels and whether it needs a model (``kind`` is "deterministic" or "llm").

    ``plan`` says how the kind judges a stored run (``toolscore judge RUN --judge NAME``): a
    :class:`~toolscore.judges.applying.JudgeRequest` in, the
    :class:`~toolscore.judges.applying.JudgeRun` that judges it out (or
    :class:`~toolscore.judges.applying.CannotJudge`); None: a kind that judges no stored run."""

    name: str
    kind: str
    labels: str
    description: str
    plan: Callable[[Any], Any] | None = None

    @property
    def needs_model(self) -> bool:
        return self.kind == LLM


def get_judge(name: str) -> JudgeKind:
    """The judge kind registered as ``name`` (a one-line LookupError listing the known names
    otherwise, or saying why the entry point is not a kind)."""
    obj = JUDGES.load(name)
    if not isinstance(obj, JudgeKind) or obj.name != name:
        raise ExtensionError(f"judge {name!r}: the entry point gives {obj!r}, not a "
                             f"toolscore.judges.registry.JudgeKind named {name!r}")
    return obj


def list_judges() -> list[JudgeKind]:
    """Every registered kind that loads, by name."""
    out = []
    for name in JUDGES.names():
        try:
            out.append(get_judge(name))
        except ExtensionError:
            continue
    return out


FIELDS = ("name", "kind", "model", "base_url", "template", "temperature", "votes")


class JudgeConfigError(ValueError):
    """A judge configuration that cannot be used; the message names the file and the field."""

    def __init__(self, source: str | Path, fieldname: str, problem: str):
        super().__init__(f"{source}: field {fieldname!r}: {problem}")


@dataclass(frozen=True)
class JudgeConfig:
    """One configured judge. ``template`` is the prompt text itself (read from its file)."""

    name: str
    kind: str
    model: str | None = None
    base_url: str | None = None
    template: str | None = None
    template_source: str | None = None  # "inline" or the file it was read from
    temperature: float | None = None
    votes: int | None = None
    source: str = "<inline>"

    @property
    def template_sha256(self) -> str | None:
        if self.template is None:
            return None
        return hashlib.sha256(self.template.encode("utf-8")).hexdigest()

    @property
    def id(self) -> str:
        """``name (kind, model, template hash)``: what every verdict and report names."""
        parts = [self.kind]
        if self.model:
            parts.append(self.model)
        if self.model is not None:  # validated: a model exactly when the kind is an LLM
            parts.append(f"template {self.template_sha256[:12]}" if self.template_sha256
                         else "built-in template")
        return f"{self.name} ({', '.join(parts)})"

    def identity(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "kind": self.kind, "model": self.model,
                "base_url": self.base_url, "template_sha256": self.template_sha256,
                "template_source": self.template_source or "built-in",
                "temperature": self.temperature, "votes": self.votes, "config": self.source}

    def require(self, *kinds: str, option: str = "--judge-config") -> JudgeConfig:
        """This config, if its kind is one of ``kinds`` (a one-line error otherwise)."""
        if self.kind not in kinds:
            raise JudgeConfigError(self.source, "kind", f"{self.kind!r} cannot be used here "
                                   f"({option} needs {' or '.join(kinds)})")
        return self


def _parse(path: Path, text: str) -> Any:
    suffix = path.suffix.lower()
    if suffix == ".json":
        try:
            return json.loads(text)
        except ValueError as e:
            raise JudgeConfigError(path, "(file)", f"not JSON: {e}") from None
    try:
        import yaml
    except ImportError:  # pragma: no cover - pyyaml is in the autode extra
        if suffix in (".yaml", ".yml"):
            raise JudgeConfigError(path, "(file)", "YAML needs pyyaml (pip install pyyaml)"
                                   ) from None
        try:
            return json.loads(text)
        except ValueError as e:
            raise JudgeConfigError(path, "(file)", f"not JSON: {e}") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        problem = " ".join(str(e).split())
        raise JudgeConfigError(path, "(file)", f"not YAML: {problem}") from None


def _template(source: Path, value: str) -> tuple[str, str]:
    """(text, where it came from): a file next to the config if one exists, else the text."""
    if not value.strip():
        raise JudgeConfigError(source, "template", "empty")
    if "\n" not in value and len(value) < 512:
        candidate = Path(value).expanduser()
        if not candidate.is_absolute():
            candidate = source.parent / candidate
        if candidate.is_file():
            try:
                text = candidate.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as e:
                raise JudgeConfigError(source, "template", f"cannot read {candidate}: {e}"
                                       ) from None
            if not text.strip():
                raise JudgeConfigError(source, "template", f"{candidate} is empty")
            return text, str(candidate)
        if " " not in value and Path(value).suffix.lower() in (".txt", ".md", ".j2", ".prompt"):
            raise JudgeConfigError(source, "template", f"no such template file {candidate}")
    return value, "inline"


def judge_config(doc: Any, source: str | Path = "<inline>") -> JudgeConfig:
    """Validate a parsed configuration (a mapping with the fields in the module docstring)."""
    src = Path(source)
    if not isinstance(doc, dict):
        raise JudgeConfigError(source, "(file)", "expected a mapping of fields, got "
                               f"{type(doc).__name__}")
    unknown = [k for k in doc if k not in FIELDS]
    if unknown:
        raise JudgeConfigError(source, str(unknown[0]), f"unknown field (known: "
                               f"{', '.join(FIELDS)})")

    def text(key: str, required: bool = False) -> str | None:
        value = doc.get(key)
        if value is None:
            if required:
                raise JudgeConfigError(source, key, "missing")
            return None
        if not isinstance(value, str) or not value.strip():
            raise JudgeConfigError(source, key, f"expected a non-empty string, got {value!r}")
        return value.strip() if key != "template" else value

    name, kind = text("name", True), text("kind", True)
    assert name is not None and kind is not None
    try:
        spec = get_judge(kind)
    except LookupError as e:
        raise JudgeConfigError(source, "kind", str(e)) from None
    model, base_url, template = text("model"), text("base_url"), text("template")
    temperature, votes = doc.get("temperature"), doc.get("votes")
    if spec.needs_model and model is None:
        raise JudgeConfigError(source, "model", f"missing (the {kind} judge is an LLM: give "
                               "provider/model, e.g. openai/gpt-4o-mini)")
    if not spec.needs_model:
        for key in ("model", "base_url", "template", "temperature", "votes"):
            if doc.get(key) is not None:
                raise JudgeConfigError(source, key, f"not used by the deterministic {kind} "
                                       "judge")
    if temperature is not None:
        if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) \
                or not math.isfinite(temperature) or not 0 <= temperature <= 2:
            raise JudgeConfigError(source, "temperature", f"expected a number in [0, 2], got "
                                   f"{temperature!r}")
        temperature = float(temperature)
    if votes is not None and (isinstance(votes, bool) or not isinstance(votes, int)
                              or votes < 1):
        raise JudgeConfigError(source, "votes", f"expected an integer >= 1, got {votes!r}")
    template_source = None
    if template is not None:
        template, template_source = _template(src, template)
    return JudgeConfig(name, kind, model, base_url, template, template_source, temperature,
                       votes, str(source))


def load_judge_config(path: str | Path) -> JudgeConfig:
    """Read and validate a judge configuration file (JSON, or YAML)."""
    path = Path(path)
    if not path.exists():
        raise JudgeConfigError(path, "(file)", "no such judge config file")
    try:
        text = read_text(path)
    except DataError as e:
        raise JudgeConfigError(path, "(file)", str(e).removeprefix(f"{path}: ")) from None
    return judge_config(_parse(path, text), path)


def make_llm_judge(config: JudgeConfig, *, cache: Any = None, timeout: float = 120.0,
                   max_concurrency: int = 8, temperature: float = 0.7,
                   max_tokens: int = 512) -> Any:
    """An :class:`~toolscore.judges.llm.LLMJudge` for a config of an LLM kind (``tooleval-*``,
    ``acs-llm``...): its model, endpoint, temperature and system prompt; every verdict carries
    ``config.id``."""
    from toolscore.judges.llm import make_judge
    from toolscore.types import GenerateConfig

    if config.model is None:
        raise JudgeConfigError(config.source, "kind", f"{config.kind!r} is not an LLM judge")
    gen = GenerateConfig(temperature=temperature if config.temperature is None
                         else config.temperature, max_tokens=max_tokens, seed=0)
    judge = make_judge(config.model, base_url=config.base_url, cache=cache, timeout=timeout,
                       max_concurrency=max_concurrency, config=gen)
    judge.system = config.template
    judge.judge_id = config.id
    return judge


class ConfiguredJudge:
    """Votes and temperature of a benchmark's judge: what its configuration file sets, else the
    benchmark's own options (``default_temperature()`` when the option is unset). A benchmark
    mixing this in provides ``judge_config`` (a JudgeConfig or None) and ``options``."""

    judge_config: Any
    options: Any

    def default_temperature(self) -> float:
        return 0.0

    @property
    def votes(self) -> int:
        cfg = self.judge_config
        return (cfg.votes if cfg is not None and cfg.votes else None) or self.options.votes

    @property
    def temperature(self) -> float:
        cfg = self.judge_config
        if cfg is not None and cfg.temperature is not None:
            return float(cfg.temperature)
        given = self.options.temperature
        return self.default_temperature() if given is None else float(given)
