"""What ToolTalk's default mode sends a model, beside the protocol itself: the sampling fields,
the system prompt and the tool documents (the reference's own, read by :mod:`.release`).

ToolTalk's runner sends its system prompt, its tool documents and nothing else (no temperature,
token limit, seed or tool choice: the API's defaults apply). The default mode sends the same, so
that its figures are the reference's; strict mode, the free-running protocol and benchmarks that
reuse ToolTalk's class over their own tools (the demo, ``--plugins``) are toolscore's own and
keep toolscore's wording and greedy, bounded, seeded requests. Whatever departs from the
reference in the default mode is said in run.json and the report.
"""

from __future__ import annotations

from typing import Any

from toolscore.benchmarks.base import OptionError
from toolscore.benchmarks.tooltalk import protocol
from toolscore.benchmarks.tooltalk.protocol import TurnRules
from toolscore.benchmarks.tooltalk.release import (
    APIS_DIR,
    PROMPT_FILE,
    ReleaseDocuments,
    ReleasePrompt,
    release_documents,
    release_prompt,
)
from toolscore.types import GenerateConfig, ToolSpec

# What the default mode's run.json says of its sampling when the user sets none; a model
# argument that sets one of these fields then labels the report (report/view.py).
REFERENCE_SAMPLING = "as the reference: temperature, max_tokens, seed, tool_choice not sent"
# toolscore's own modes (strict, free-running, the demo): greedy, bounded and seeded
OWN_SAMPLING = {"max_tokens": 512, "seed": 0}
OWN_WORDING = "toolscore's own"


class ReferenceRequests:
    """Mixed into the benchmark (which sets the attributes read here)."""

    # The default mode sends what ToolTalk's runner sends; a benchmark reusing the class over
    # its own data (the demo) sends toolscore's own requests.
    reference_requests = True
    options: Any  # ToolTalkOptions
    own_tools: bool
    data_dir: Any
    _release: ReleasePrompt | None
    _release_docs: ReleaseDocuments | None
    _release_specs: dict[str, ToolSpec]

    @property
    def faithful(self) -> bool:
        """Does this run send ToolTalk's runner's requests (the default mode)?"""
        return (type(self).reference_requests and not self.options.strict
                and self.options.protocol == "reference")

    @property
    def release_wording(self) -> bool:
        """The reference's prompt (and documents) fit ToolTalk's own tools and data only."""
        return self.faithful and self.own_tools

    def generate_config(self, epoch: int) -> GenerateConfig:
        """The default mode leaves the sampling fields unset (not sent); a value the user sets
        (``--max-tokens``, ``--seed``, model arguments) is sent and labelled."""
        o = self.options
        if self.faithful:
            return GenerateConfig(temperature=None, max_tokens=o.max_tokens, seed=o.seed,
                                  tool_choice=None, epoch=epoch, call_api=o.call_api)
        return GenerateConfig(temperature=0.0, max_tokens=OWN_SAMPLING["max_tokens"]
                              if o.max_tokens is None else o.max_tokens,
                              seed=OWN_SAMPLING["seed"] if o.seed is None else o.seed,
                              epoch=epoch)

    @property
    def max_calls(self) -> int:
        """Calls a turn may make: the reference has no limit, so the default mode has a
        safety cap far above any turn of the data (a turn stopped there is counted in the
        report); strict mode and toolscore's own requests stop earlier."""
        if self.options.max_calls_per_turn is not None:
            return self.options.max_calls_per_turn
        if self.options.strict:
            return protocol.STRICT_MAX_CALLS
        return protocol.DEFAULT_MAX_CALLS if self.faithful else protocol.OWN_MAX_CALLS

    def turn_rules(self) -> TurnRules:
        return protocol.TurnRules(self.max_calls, as_reference=self.faithful)

    def turn_label(self) -> str:
        """What run.json and the report say of how a turn runs."""
        if not self.faithful:
            return f"toolscore's: every call of a reply executed; cap {self.max_calls} calls"
        cap = (f"cap {self.max_calls} calls (the reference has none)"
               if self.options.max_calls_per_turn is None
               else f"cap {self.max_calls} calls (set; the reference has none)")
        shape = {"auto": "functions on OpenAI's own API, else tools",
                 "functions": "functions (tools where refused)",
                 "tools": "tools (set)"}[self.options.call_api]
        return (f"as the reference: one call per reply, sent back as it rebuilds it; request "
                f"shape {shape} (--call-api {self.options.call_api}; each turn records it); {cap}")

    def sampling_label(self) -> str:
        """What run.json and the report say of the sampling fields sent."""
        if not self.faithful:
            config = self.generate_config(0)
            return (f"toolscore's: temperature {config.temperature}, max_tokens "
                    f"{config.max_tokens}, seed {config.seed}, tool_choice auto")
        o = self.options
        sent = [f"{k}={v}" for k, v in (("max_tokens", o.max_tokens), ("seed", o.seed))
                if v is not None]
        if sent:
            return f"deviates from the reference: {', '.join(sent)} sent"
        return REFERENCE_SAMPLING

    def release_prompt(self) -> ReleasePrompt | None:
        """The reference's template, read once from the release (None: toolscore's own)."""
        if not self.release_wording:
            return None
        if self._release is None:
            self._release = release_prompt(self.data_dir)
        return self._release

    def system_prompt(self, metadata: dict[str, Any]) -> str:
        found = self.release_prompt()
        return protocol.system_prompt(metadata) if found is None else found.format(metadata)

    def release_documents(self) -> ReleaseDocuments | None:
        """The reference's tool documents, read once from the release (None: toolscore's)."""
        if not self.release_wording:
            return None
        if self._release_docs is None:
            self._release_docs = release_documents(self.data_dir)
            self._release_specs = {
                name: ToolSpec(name, doc["description"], doc["parameters"],
                               {k: v for k, v in doc.items()
                                if k not in ("name", "description", "parameters")})
                for name, doc in self._release_docs.docs.items()}
        return self._release_docs

    def reference_specs(self, conversation: Any) -> list[ToolSpec] | None:
        """The documents the reference's runner offers for ``conversation``, in its order:
        every API in ``ALL_APIS`` order (``--tools all``), the conversation's ``apis_used`` in
        their order (``exact``), or the APIs of its ``suites_used``, each suite in its own
        order (``suite``). None when toolscore's own documents are shown."""
        release = self.release_documents()
        if release is None:
            return None
        if self.options.tools == "exact":
            names = list(conversation.apis_used)
        elif self.options.tools == "suite":
            names = [n for suite in conversation.suites_used
                     for n in release.suites.get(suite, [])]
        else:
            names = list(release.docs)
        return [self._release_specs[n] for n in names if n in self._release_specs]

    def documents_source(self) -> str:
        """Where the tool documents come from, as run.json and the report say it."""
        if not self.release_wording:
            return OWN_WORDING
        try:
            return self.release_documents().source  # type: ignore[union-attr]
        except OptionError:
            return f"release: {APIS_DIR}/*.py (not found)"

    def prompt_source(self) -> str:
        """Where the system prompt comes from, as run.json and the report say it."""
        if not self.release_wording:
            return OWN_WORDING
        try:
            return self.release_prompt().source  # type: ignore[union-attr]
        except OptionError:  # a stored run read without its data folder: say so, not fail
            return f"release: {PROMPT_FILE} (not found)"
