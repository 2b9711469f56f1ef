"""What every benchmark is, whatever the method: samples + a protocol that runs one sample with
a model + a scorer that scores one stored record + an aggregation over records.

Scoring reads only the stored record (never the model), so a run can be rescored at zero cost.
A benchmark declares its own options as a dataclass (``Options``): the CLI builds
``toolscore run NAME --help`` from it, the Python API validates keyword arguments against it,
and run.json stores it, so an option a benchmark does not take is an error, never silently
dropped. A benchmark also says how its results are shown (``columns``, ``record_view``), so the
report and CLI never name a benchmark's keys.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

# the declared options live in their own module; their names stay importable from here
from toolscore.benchmarks.options import NoOptions as NoOptions
from toolscore.benchmarks.options import OptionError as OptionError
from toolscore.benchmarks.options import StoredRun as StoredRun
from toolscore.benchmarks.options import _default_of
from toolscore.benchmarks.options import coerce as coerce
from toolscore.benchmarks.options import flag_of as flag_of
from toolscore.benchmarks.options import option as option
from toolscore.benchmarks.options import option_fields as option_fields
from toolscore.benchmarks.options import options_to_json as options_to_json
from toolscore.benchmarks.options import parse_options as parse_options
from toolscore.benchmarks.options import same_option as same_option

if TYPE_CHECKING:
    from toolscore.models.client import RunModel


@dataclass
class Sample:
    id: str
    data: Any
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Column:
    """One headline column of a benchmark's metrics table.

    ``key`` is looked up in each group of ``scores.json`` (``"overall"`` or a split); ``kind``
    says how to print it: "rate" as a percentage, "count" as an integer, "number" as is.
    """

    key: str
    title: str
    kind: Literal["rate", "count", "number"] = "rate"


@dataclass(frozen=True)
class IntervalMetric:
    """One headline metric as the benchmark computes it from per-record scores, so that the
    report can put a bootstrap interval on the benchmark's own figure and ``compare`` can test a
    difference in it (not in a per-sample average the method never publishes).

    With a ``denominator`` the metric is a ratio of sums over records (a micro average, e.g.
    precision = sum of matches / sum of predictions), resampled as such; without one it is the
    mean of ``numerator`` over records. ``empty`` is the value the benchmark gives a ratio whose
    denominator sums to zero. ``key`` names the published value in each group of
    ``scores.json`` (None: the value is computed from the records). ``kind`` is "rate" (shown as
    a percentage) or "number". ``higher_is_better`` is False for a metric of mistakes (e.g.
    ToolTalk's incorrect-action rate): a leaderboard ranks the lowest first.
    """

    label: str
    numerator: str
    denominator: str | None = None
    key: str | None = None
    kind: Literal["rate", "number"] = "rate"
    empty: float = float("nan")
    higher_is_better: bool = True


@dataclass
class Breakdown:
    """A named table saying where a run's misses are (per tool, per error type, per API...).

    ``columns`` are looked up in each row (text values are shown as they are). ``matrix`` names
    (row-label column, column-label column, count column) when the table is also a heat map,
    e.g. which tool was called where another was expected.
    """

    title: str
    columns: list[Column]
    rows: list[dict[str, Any]]
    note: str = ""
    matrix: tuple[str, str, str] | None = None


@dataclass
class RunSettings:
    """The run's settings a benchmark may need for models of its own (a user agent, a judge):
    they use the run's response cache and limits, through the one client factory (bound by
    the runner from how the run runs, :class:`toolscore.runs.settings.RunExecution`)."""

    cache: str | None = "default"
    timeout: float = 120.0
    max_concurrency: int = 8


class RunContract:
    """What a run calls: the samples, running one with a model, scoring a stored output and
    aggregating records, and how the benchmark is built from its declared options (the runner,
    the run store, rescoring and resumption read these; :class:`ReportView` is the rest).

    Subclasses set ``name``, ``description``, ``Options`` and ``dataset`` (the name the dataset
    lookup knows, or None when the data ships with the code), and implement ``samples``,
    ``run_sample``, ``score`` and ``aggregate``. ``create`` builds one from validated options,
    kept whole as ``options`` (what the benchmark reads, what run.json stores).
    """

    name: str = ""  # set by each class; an instance may carry its own
    description: ClassVar[str] = ""
    Options: ClassVar[type] = NoOptions
    dataset: ClassVar[str | None] = None
    # where the dataset comes from and how a folder is checked (toolscore.data.DatasetSource;
    # None: a folder named ``dataset`` is found, never downloaded)
    dataset_source: ClassVar[Any] = None
    # further sources the benchmark reads besides its dataset (DatasetSource each, found and
    # downloaded the same way; ``toolscore data NAME`` knows them too)
    dataset_extras: ClassVar[tuple[Any, ...]] = ()
    # the models of the parts the benchmark plays, by role ("assistant", "user", "judge"):
    # "model" (the run's --model) or the option naming that role's model; ``--role ROLE=X``
    # sets it
    roles: ClassVar[dict[str, str]] = {"assistant": "model"}
    # the model a run uses when none is named; None (most benchmarks): naming one is required,
    # as a measurement of a model nobody chose is worse than a one-line error
    default_model: ClassVar[str | None] = None
    # the validated ``Options`` this instance was built with
    options: Any = NoOptions()
    settings: RunSettings = RunSettings()
    # stored options this instance was built without acting on (see StoredRun): such an
    # instance reads and scores a run, and the runner refuses to run it
    withheld: dict[str, str] = {}

    @classmethod
    def locate_data(cls, data: str | Path | None, options: Any, download: bool) -> Path | None:
        """The data folder to build from: by default the ``dataset`` lookup (``--data``,
        ``$TOOLSCORE_DATA``, user cache, pinned download), None when ``dataset`` is None."""
        if cls.dataset is None:
            if data is not None:
                raise OptionError(f"benchmark {cls.name!r} ships its own data; --data is not "
                                  "used")
            return None
        if data is None and not cls.needs_dataset(options):
            return None
        from toolscore.data import find_dataset

        source = cls.dataset_source
        return find_dataset(source if source is not None and source.name == cls.dataset
                            else cls.dataset, data, download=download)

    @classmethod
    def create(cls, data_dir: Path | None, options: Any) -> Benchmark:
        """Build from a data folder (None when ``dataset`` is None) and an ``Options``."""
        raise NotImplementedError(f"{cls.__name__}.create")

    @classmethod
    def runs_code(cls, options: dict[str, Any]) -> dict[str, str]:
        """The options among ``options`` (stored values, by name) that would start a process
        or load code when this benchmark is built or run: name -> what it would do. Default:
        each option declared with ``runs_code`` whose value is set (not its default, not
        empty). A benchmark may narrow it (e.g. a plugin set of toolscore's own loads no
        foreign code)."""
        out = {}
        for f in option_fields(cls.Options):
            what = f.metadata.get("runs_code")
            if not what or f.name not in options:
                continue
            value = options[f.name]
            if value in (None, "", [], ()) or value == _default_of(f):
                continue
            out[f.name] = str(what)
        return out

    @classmethod
    def create_stored(cls, data_dir: Path | None, options: Any, stored: StoredRun) -> Benchmark:
        """Build the benchmark of a stored run. Options in ``stored.withheld`` must not be
        acted on. By default: built by :meth:`create` when each of them acts only when
        samples run (declared ``runs_code_when="run"``; the runner refuses to run such an
        instance), else refused in one line. A benchmark that can read or score its runs
        without them otherwise overrides this."""
        declared = {f.name: f for f in option_fields(cls.Options)}
        building = sorted(n for n in stored.withheld
                          if n not in declared or declared[n].metadata.get("runs_code_when")
                          != "run")
        if building:
            raise stored.refusal(*building, doing=f"rebuilding benchmark {cls.name!r}")
        bench = cls.create(data_dir, options)
        bench.withheld = dict(stored.withheld)
        return bench

    @classmethod
    def needs_dataset(cls, options: Any) -> bool:
        """False when these options name all the data the run reads (e.g. ToolEval judging a
        folder of answers or another run), so a missing released dataset is no error."""
        return True

    def config(self) -> dict[str, Any]:
        """Everything that determines results besides the model: goes into run.json."""
        return {}

    def bind(self, settings: RunSettings) -> None:
        """Called by the runner before the first sample."""
        self.settings = settings

    def uses_model(self) -> bool:
        """False when nothing in this configuration calls the run's model (e.g. a
        deterministic judge as the system under test): the run then needs no ``--model``."""
        return True

    def expected_calls(self, sample: Sample) -> int | None:
        """The model calls ``sample`` takes when the model does what the reference does (for
        a sweep's estimate before it runs), or None when the benchmark cannot tell."""
        return None

    def max_concurrency(self) -> int | None:
        """A cap on samples in flight this benchmark needs (e.g. 1 when a person plays the
        user), or None."""
        return None

    def serving(self) -> Any:
        """The tool world an agent is served (a :class:`~toolscore.benchmarks.serve.interface
        .Serving`), for ``toolscore mcp serve`` and the free-running protocol; None: none."""
        return None

    def samples(self) -> list[Sample]:
        raise NotImplementedError

    def check(self) -> None:
        """Load and validate the data before the first model call (raise a one-line error)."""
        self.samples()

    def warm(self) -> None:
        """Load what scoring needs (an embedder's weights) ahead of the first sample. The runner
        calls it, in a thread, before any model request: loaded lazily instead, it would stall
        the requests in flight while the first sample is scored. Default: nothing to load."""

    async def run_sample(self, sample: Sample, model: RunModel, epoch: int) -> Any:
        """Run one sample; return its JSON-able output. Infrastructure failures propagate as
        InfraError; model mistakes are recorded in the output and scored."""
        raise NotImplementedError

    def score(self, output: Any, sample: Sample) -> dict[str, Any]:
        """Per-sample scores from a stored output."""
        raise NotImplementedError

    def aggregate(self, records: list[dict[str, Any]]) -> dict[str, Any]:
        """Headline metrics over stored records, grouped as the method publishes them: a dict
        of groups (``"overall"`` or one per split), each a dict of metrics, plus scalars."""
        raise NotImplementedError

    def score_files(self, path: Path, out: Path | None = None) -> dict[str, Any]:
        """Score files written by the method's own reference code (its output format), with
        this benchmark's scorer; a benchmark without such a format says so."""
        raise OptionError(f"benchmark {self.name!r} does not read another tool's output files")


class ReportView:
    """How a finished run is read (report, HTML report, export, compare): the headline
    columns, a record as a reader sees it, where the misses are, the pass/fail metric and the
    metrics put intervals on. These read stored records only; ``primary_metric``,
    ``interval_metrics`` and the other class methods keep a run's statistics right even where
    the benchmark cannot be rebuilt."""

    columns: ClassVar[list[Column]] = []

    if TYPE_CHECKING:
        def config(self) -> dict[str, Any]: ...  # the run's (RunContract.config)

    @classmethod
    def summary_output(cls, output: Any) -> Any:
        """The part of a stored output that :meth:`aggregate`, :meth:`breakdowns`,
        :meth:`record_facets` and the run-level reports read. Runs of 10,000 records are
        aggregated and reported holding only this (transcripts are read one record at a time
        for :meth:`record_view`), so a benchmark with large outputs should return a small
        projection here. Default: the whole output."""
        return output

    @classmethod
    def headline_rows(cls, metrics: dict[str, Any]) -> dict[str, dict[str, Any]]:
        """The rows of the headline table (split or group -> metrics) from ``scores.json``;
        ``columns`` are looked up in each. Default: every dict-valued entry."""
        return {k: v for k, v in metrics.items() if isinstance(v, dict)}

    @classmethod
    def board_columns(cls, metrics: dict[str, Any]) -> dict[str, Any]:
        """Figures a leaderboard shows for a run beside its headline metric, from
        ``scores.json`` (column label -> a number, or text as the benchmark prints it; None
        when not measured), e.g. a leaderboard's own summary columns. Default: none."""
        return {}

    def record_view(self, record: dict[str, Any]) -> dict[str, Any]:
        """What one record looks like to a reader (HTML report, export): a short summary and
        the dialogue as messages. The default shows the stored output as is. Optional keys
        the HTML report also shows: ``tags`` (short labels), ``details`` (label -> long text,
        folded) and ``sections`` (e.g. one per turn: title, tags, a table, messages, text; see
        toolscore.report.html.samples)."""
        return {"summary": "", "messages": []}

    @classmethod
    def summary_lines(cls, metrics: dict[str, Any]) -> list[str]:
        """Lines printed under the headline table (supplementary views, analyses)."""
        return []

    def mode_label(self) -> str:
        """How this run was scored, as every report must say (e.g. "reference", "strict")."""
        return str(self.config().get("mode") or "reference")

    @classmethod
    def primary_metric(cls, records: list[dict[str, Any]]) -> str | None:
        """The pass/fail score behind pass@k, pass^k, flipped samples and "failed" samples;
        None when the benchmark has none. Default: the first boolean score of any record."""
        for r in records:
            for key, value in (r.get("scores") or {}).items():
                if isinstance(value, bool):
                    return str(key)
        return None

    @classmethod
    def interval_metrics(cls, records: list[dict[str, Any]]) -> list[IntervalMetric]:
        """The headline metrics as definitions over per-record scores (see
        :class:`IntervalMetric`). Default: the mean of every pass/fail score and every
        fractional score (all values in [0, 1]) as a rate, of other non-integer numbers as a
        number; integer scores are counts and are left out."""
        kinds: dict[str, set[str]] = {}
        for r in records:
            if r.get("status", "ok") != "ok":
                continue
            for key, v in (r.get("scores") or {}).items():
                if isinstance(v, bool):
                    kind = "bool"
                elif isinstance(v, int):
                    kind = "int"
                elif isinstance(v, float) and math.isfinite(v):
                    kind = "fraction" if 0.0 <= v <= 1.0 else "number"
                else:
                    continue
                kinds.setdefault(str(key), set()).add(kind)
        out = []
        for key, seen in kinds.items():
            if seen in ({"bool"}, {"fraction"}):
                out.append(IntervalMetric(key, key, kind="rate"))
            elif "bool" not in seen and seen != {"int"}:
                out.append(IntervalMetric(key, key, kind="number"))
        return out

    def breakdowns(self, records: list[dict[str, Any]]) -> list[Breakdown]:
        """Named tables of where the misses are, for the HTML report and ``report --json``.
        Default: none."""
        return []

    def record_facets(self, record: dict[str, Any]) -> dict[str, list[str]]:
        """Values a reader can filter records by (facet name -> values of this record, e.g.
        ``{"tool": [...], "error type": [...]}``). Default: none (split, id and pass/fail are
        always offered)."""
        return {}


class Benchmark(RunContract, ReportView):
    """Base class of every benchmark (built-in or installed through an entry point): the run
    contract (:class:`RunContract`: what a run calls) and the report view (:class:`ReportView`:
    how its records read)."""
