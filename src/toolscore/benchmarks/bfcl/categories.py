"""BFCL v4's test categories and the groups its command line names, and which of them
toolscore runs: the single-turn and multi-turn ones by default, the memory ones when named
(``memory``, ``memory_kv``...), the web search ones only with an explicit opt-in (they reach
the internet).

A category is named as BFCL names it (``simple_python``, ``live_multiple``...); a group
(``non_live``, ``live``, ``multi_turn``, ``all``...) stands for its categories. Every category
is known, so a name BFCL takes is never "unknown" here: those toolscore cannot run are refused
in one line.
"""

from __future__ import annotations

from collections.abc import Iterable

from toolscore.benchmarks.options import OptionError

NON_LIVE = ("simple_python", "simple_java", "simple_javascript", "multiple", "parallel",
            "parallel_multiple", "irrelevance")
LIVE = ("live_simple", "live_multiple", "live_parallel", "live_parallel_multiple",
        "live_irrelevance", "live_relevance")
MULTI_TURN = ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param",
              "multi_turn_long_context")
WEB_SEARCH = ("web_search_base", "web_search_no_snippet")
MEMORY = ("memory_kv", "memory_vector", "memory_rec_sum")
SINGLE_TURN = NON_LIVE + LIVE
AGENTIC = MEMORY + WEB_SEARCH
NON_SCORING = ("format_sensitivity",)
ALL_SCORING = SINGLE_TURN + MULTI_TURN + AGENTIC
ALL = ALL_SCORING + NON_SCORING

GROUPS: dict[str, tuple[str, ...]] = {
    "all": ALL, "all_scoring": ALL_SCORING, "multi_turn": MULTI_TURN,
    "single_turn": SINGLE_TURN, "live": LIVE, "non_live": NON_LIVE,
    "non_python": ("simple_java", "simple_javascript"),
    "python": ("simple_python", "irrelevance", "parallel", "multiple", "parallel_multiple",
               "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple",
               "live_irrelevance", "live_relevance"),
    "memory": MEMORY, "web_search": WEB_SEARCH, "agentic": AGENTIC,
}

#: what a run without categories runs (the agentic categories only when named)
SUPPORTED = SINGLE_TURN + MULTI_TURN
#: everything toolscore runs and scores, in BFCL's order
RUNNABLE = SUPPORTED + AGENTIC
#: the benchmark option that opts in to the web search categories
WEB_SEARCH_OPT_IN = ("bfcl: the web search categories reach the internet (SerpAPI search, "
                     "page fetches) and are off by default: opt in with -T web_search=true "
                     "(and a SerpAPI key in SERPAPI_API_KEY)")
#: groups that stand for supported and unsupported categories alike: asking for one runs its
#: supported part (``all`` is BFCL's default and means "everything toolscore can run")
PARTIAL_GROUPS = ("all", "all_scoring")


def is_relevance(category: str) -> bool:
    """Relevance or irrelevance: no possible answer, only whether a call was made."""
    return "relevance" in category


def language(category: str) -> str:
    """The language a category's function documents are written in."""
    if category.endswith("java"):
        return "java"
    if category.endswith("javascript"):
        return "javascript"
    return "python"


def category_of(entry_id: str) -> str:
    """The category of an entry id (``live_simple_3-2-0`` -> ``live_simple``)."""
    return entry_id.split(":")[0].rsplit("_", 1)[0]


def is_agentic(category: str) -> bool:
    return category in AGENTIC


def _refusal(name: str) -> str:
    extra = ""
    if name in NON_SCORING:
        extra = (" in function-calling mode (BFCL runs it for prompting models: "
                 "-T handler=prompting)")
    return f"bfcl: category {name!r} is not yet supported by toolscore{extra}"


def parse_categories(values: Iterable[str], *, web_search: bool = False) -> list[str]:
    """The categories named by ``values`` (categories or groups, each value possibly
    comma-separated), in BFCL's order; a category or group toolscore cannot run is refused in
    one line, an unknown name too, and a web search category unless ``web_search`` (the
    run's opt-in)."""
    wanted: set[str] = set()
    for value in values:
        for name in (v.strip() for v in str(value).split(",")):
            if not name:
                continue
            if name in GROUPS:
                members = GROUPS[name]
                if name in PARTIAL_GROUPS:
                    wanted.update(m for m in members if m in SUPPORTED)
                    continue
                if set(members) & set(WEB_SEARCH) and not web_search:
                    raise OptionError(WEB_SEARCH_OPT_IN)
                if not set(members) & set(RUNNABLE):
                    raise OptionError(_refusal(name))
                wanted.update(m for m in members if m in RUNNABLE)
            elif name in ALL:
                if name in WEB_SEARCH and not web_search:
                    raise OptionError(WEB_SEARCH_OPT_IN)
                if name not in RUNNABLE:
                    raise OptionError(_refusal(name))
                wanted.add(name)
            else:
                raise OptionError(f"bfcl: unknown category {name!r} (categories: "
                                  f"{', '.join(ALL)}; groups: {', '.join(GROUPS)})")
    if not wanted:
        raise OptionError("bfcl: no category given")
    return [c for c in RUNNABLE if c in wanted]
