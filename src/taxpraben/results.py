"""Typed output files: ``results.json``, one ``samples.jsonl`` line, one ``predictions.jsonl`` line.

Why one module of over 600 lines: it is the one description of the file contracts (the
schema document is generated from it); split, the contract would be read from several places.

These pydantic models are the one description of the files other tools read (the README,
"Evaluate a model"): the scoring pipeline validates through them before writing, the report reader
and the leaderboard read through them, and ``docs/results-schema.md`` is generated from them
(``python -m taxpraben.results --markdown > docs/results-schema.md``).

Two promises hold for every model here:

- lenient reading: every file this code has ever written validates (older files lack some
  keys, which then take their defaults); keys a model does not declare are kept
  (``extra="allow"``): metric names are open (a task kind declares its own), and plugins or
  newer writers may add facts;
- faithful writing: ``to_json()`` gives back exactly the keys that were given, in the order
  they were given, with the same values, so writing through a model changes no byte of
  meaning of what the pipeline built.
"""

from __future__ import annotations

import argparse
import sys
import types
import typing
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Literal, Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

#: The version of the results.json layout this code writes and reads. Raise it when a key
#: changes meaning or is removed; added keys do not change it.
SCHEMA_VERSION = 1

#: A number as written: an integer stays an integer and a float a float (a plain ``float``
#: annotation would turn ``0`` into ``0.0``), for facts this code copies from elsewhere.
Number = Union[int, float]  # noqa: UP007 (the docs generator reads the Union)


def _field(description: str, *, when: str | None = None, default: Any = None, doc_type: Any = None,
           **kwargs: Any) -> Any:
    """A model field with its description; ``when`` says when the writer writes the key
    (shown in the generated docs; absent means always); ``doc_type``: the type the docs show
    when the annotation is looser (a value checked by a validator)."""
    extra: dict[str, Any] | None = {"when": when} if when else None
    if doc_type is not None:
        extra = {**(extra or {}), "doc_type": doc_type}
    if "default_factory" in kwargs:
        return Field(description=description, json_schema_extra=extra, **kwargs)
    return Field(default, description=description, json_schema_extra=extra, **kwargs)


def _required(description: str) -> Any:
    return Field(..., description=description)


class FileObject(BaseModel):
    """A JSON object of the output files, kept as given: extra keys stay, key order stays.

    The order of a file's keys is the order its writer put them in (``meta`` takes the
    caller's facts first, for one), so a model remembers the order of the object it was
    validated from and serialises in that order; declared fields never given stay absent.
    """

    # defer_build: the validators are built on first use, not when `taxpraben` starts.
    model_config = ConfigDict(extra="allow", coerce_numbers_to_str=True, defer_build=True)

    _order: tuple[str, ...] | None = PrivateAttr(default=None)

    @model_validator(mode="wrap")
    @classmethod
    def _remember_order(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        model = handler(data)
        if isinstance(data, dict) and isinstance(model, FileObject):
            model._order = tuple(data)
        return model

    @model_serializer(mode="wrap")
    def _in_given_order(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out: dict[str, Any] = handler(self)
        if self._order is None:
            return out
        rank = {key: i for i, key in enumerate(self._order)}
        return dict(sorted(out.items(), key=lambda item: rank.get(item[0], len(rank))))

    def to_json(self) -> dict[str, Any]:
        """The JSON object: the keys given, in their order (see the class docstring)."""
        return self.model_dump(mode="python", exclude_unset=True)

    def given_items(self, keys: Iterable[str]) -> list[tuple[str, Any]]:
        """``(key, value)`` for each of ``keys`` the object was given, declared or extra, null
        values included, in the order of ``keys``.

        For what a reader shows only when the writer wrote it: a key written as null (a
        backend's default ``top_p``) reads differently from one never written, and a scorer's
        settings beyond ``model`` and ``layer`` are open (each scorer writes its own).
        """
        given = self.model_fields_set  # declared and extra keys alike
        return [(key, getattr(self, key)) for key in keys if key in given]

    def __eq__(self, other: object) -> bool:
        # The remembered key order says how to write the object, not what it holds: two
        # objects with the same values are equal whatever order their keys came in.
        if not isinstance(other, BaseModel):
            return NotImplemented
        return (
            type(self) is type(other)
            and self.__dict__ == other.__dict__
            and self.__pydantic_extra__ == other.__pydantic_extra__
        )


# ---------------------------------------------------------------------------- figures


class Stat(FileObject):
    """One figure over the runs (``STAT``): its per-run values and their summary.

    A figure that could not be computed at all is ``null`` where a ``Stat`` is expected.
    """

    mean: float | None = _field("Mean over the runs whose value is not null.")
    std: float | None = _field("Sample standard deviation over runs (ddof 1); null with one run.")
    ci95: list[float] | None = _field(
        "95% t-interval over runs, clipped to the figure's possible range; null with one run."
    )
    runs: list[float | None] = _field("The value of each run, in run order; null where not computed.",
                                      default_factory=list)
    bootstrap_ci95: list[float] | None = _field(
        "95% sample-level bootstrap interval (items resampled, paired across runs); null where "
        "not computed (rates, macro F1, fields)."
    )


class OverallStat(Stat):
    """The Overall Average: a ``Stat`` over the computed tasks' scores, which tasks, and which
    tasks of the benchmark it lacks."""

    partial: bool = _field("True when fewer than all tasks of the benchmark were computed (a task without data "
                           "under --allow-missing, left out by --tasks, or not computed).", default=False)
    tasks: list[str] = _field("The tasks the average is over (the computed ones).", default_factory=list)
    benchmark: list[str] = _field(
        "The tasks of the benchmark: the registry's (the 14 bundled tasks, with any --task-dir specs); absent in "
        "files written before it (then the tasks scored are read as the benchmark).", default_factory=list,
    )
    missing: dict[str, str] = _field(
        "Each task of the benchmark not computed, with why: ``no data file`` (--allow-missing), ``excluded "
        "(--tasks)``, ``no predictions`` (`score` of a file holding other tasks), ``not computed: scorer "
        "unavailable``, ``not computed: semantic scoring off (--no-semantic)``.", default_factory=dict,
    )


class RunCounts(FileObject):
    """Items of one task in one run, by status."""

    ok: int = _field("Items scored normally.", default=0)
    format_failure: int = _field("Items whose answer could not be read (scored 0).", default=0)
    error: int = _field("Items whose generation failed or is missing (scored 0).", default=0)


class RunFigures(FileObject):
    """A task's figures in one run (``tasks.NAME.per_run[k]``)."""

    run: int = _required("The run index.")
    metrics: dict[str, Number | None] | None = _field(
        "Each metric's value in this run (keys as in the task's ``metrics``).", default_factory=dict
    )
    score: float | None = _field("The task score in this run; null when a needed scorer was unavailable.")
    format_failure_rate: float | None = _field("Share of items that are format failures.")
    error_rate: float | None = _field("Share of items whose generation failed.")
    counts: RunCounts | None = _field("Items by status.")


class FieldFigures(FileObject):
    """Per-field figures of a mixed task or a multi-aspect generation task, over the records
    whose gold has the field. Besides the declared keys, one ``Stat`` per metric of the
    field's kind: ``em`` for exact fields; ``bertscore`` for text fields (and ``bartscore``
    for the aspects of a generation task)."""

    __pydantic_extra__: dict[str, Stat | None] = Field(init=False)  # the metrics: Stat each

    kind: str = _required("The field's most common kind over records: number, category, text, ...")
    n: int | None = _field("Records with the field, per run (the figures are over these).")
    inferred: bool | None = _field("Whether any record inferred the field's kind from its gold value.")
    format_failure_rate: Stat | None = _field("Share of the field's records where it was not read.")

    @property
    def metric_figures(self) -> dict[str, Stat | None]:
        """The field's metric figures (its keys beyond the declared ones), in the order given."""
        return dict(self.model_extra or {})


class TaskResult(FileObject):
    """One task (``tasks.NAME``)."""

    name_zh: str | None = _field("The dataset's Chinese name.")
    type: str | None = _field("The task's output kind: classification, structured, generation, mixed, ...")
    bloom: str | None = _field("Bloom level: remember, understand, apply, analyze, evaluate, create.")
    n: int | None = _field("Items per run.")
    status: Literal["ok", "not_computed"] = _field(
        "``not_computed`` when a semantic scorer the task needs was unavailable.", default="ok"
    )
    reason: str | None = _field("Why not computed, in short (the full reason is in ``meta.scorers``).")
    metrics: dict[str, Stat | None] = _field(
        "One ``Stat`` per metric. Keys by kind: classification ``acc``, ``f1`` (weighted), "
        "``macro_f1``, ``missing_rate``; generation ``bertscore`` (F1), ``bartscore`` (exp(raw), "
        "in (0, 1]), ``bartscore_raw`` (mean log-likelihood, negative); structured ``em``; mixed "
        "``em`` (over exact fields) and ``bertscore`` (over text fields), each a mean over the "
        "items whose gold has such fields. The set is open: a kind declares its own.",
        default_factory=dict,
    )
    score: Stat | None = _field(
        "The task score (README, \"How answers are scored\"): classification mean(acc, f1); generation "
        "mean(bertscore, bartscore); structured em; mixed the mean of item scores."
    )
    format_failure_rate: Stat | None = _field("Share of items whose answer could not be read.")
    format_failures: dict[str, int] | None = _field(
        "Format failures by reason, over all runs: ``copy of the prompt``, ``answers another "
        "question``, ``several different answers``, ``no answer asserted``, ``no answer found``, ...",
        when="the task has format failures",
    )
    error_rate: Stat | None = _field("Share of items whose generation failed or is missing.")
    readings: dict[str, int] | None = _field(
        "Readings over all runs by who made them: \"rule:<name>\", \"judge:<model>\", and the veto rules "
        "of the format failures (\"veto.<name>\").",
        when="the task has read items",
    )
    per_run: list[RunFigures] = _field("The figures of each run.", default_factory=list)
    fields: dict[str, FieldFigures] | None = _field(
        "Per field, named by the gold's keys: those a spec rule names first, then inferred ones.",
        when="mixed tasks and multi-aspect generation tasks",
    )
    ledger: Ledger | None = _field("How the task's answers ended (truncation) and what they cost.")
    judge: JudgeTask | None = _field(
        "What the second reader did on the task (README, \"A second reader\").",
        when="--judge, on the tasks the judge reads (classification and structured)",
    )

    @property
    def computed(self) -> bool:
        return self.status == "ok"


class JudgeAudit(FileObject):
    """The audit: outputs the rules read, read by the judge as well, and how often both agree."""

    audited: int = _field("Distinct outputs audited.", default=0)
    agreed: int = _field("Of those, the ones the judge read as the rules did.", default=0)
    not_grounded: int | None = _field("Replies left out of the comparison: their quote was no evidence in the output "
                                      "(only grounded judge readings are compared).", when="--judge-audit N")
    agreement: float | None = _field("agreed / audited; null when nothing was audited.")
    ci95: list[float] | None = _field("95% Wilson interval of the agreement; null when nothing was audited.")
    disagreements: list[dict[str, Any]] | None = _field(
        "The outputs on which they disagree: id, run, the rules' reading (rule) and the judge's (judge).",
        when="per task",
    )


class JudgeTask(FileObject):
    """The second reader on one task (``tasks.NAME.judge``), over every run."""

    items: int = _field("Items of the task, over every run.", default=0)
    read_by_rule: int = _field("Items the rules read.", default=0)
    read_by_judge: int = _field("Items whose reading the judge decided: format failures or unread fields it read, "
                                "and low-confidence readings it replaced.", default=0)
    unread: int = _field("Items neither read (still format failures, scored 0).", default=0)
    asked: int = _field("Distinct outputs the judge was asked to read (audit apart).", default=0)
    no_answer: int = _field("Of those, replies that were the no-answer token.", default=0)
    malformed: int = _field("Of those, replies the task's reader could not read (a warning each task).", default=0)
    failed: int = _field("Requests for those and for the low-confidence outputs that failed after every retry.",
                         default=0)
    capped: int = _field("Distinct outputs left unread because --judge-max-items was reached.", default=0)
    low_confidence: int = _field("Distinct outputs the rules read entirely, some answer-bearing field only by a "
                                 "fallback (a fuzzy key), that the judge was asked about (apart from asked); its "
                                 "reading replaces the rules' only where it reads a value.", default=0)
    not_grounded: int = _field("Replies to those and to the low-confidence outputs whose reading (or some field "
                               "of it) was rejected: its quote not in the output, in a copy of the prompt, reading "
                               "another value, or repeating the judge prompt's example (the item keeps the rules' "
                               "reading; a format failure's reason becomes 'judge: not grounded').", default=0)
    not_grounded_whys: dict[str, int] | None = _field("Those rejections by why.")
    format_failure_rate_before: float | None = _field("Share of items that were format failures before the judge.")
    format_failure_rate_after: float | None = _field("Share of items that are format failures after it.")
    audit: JudgeAudit | None = _field("The audit of the task.", when="--judge-audit N")


class JudgeMeta(FileObject):
    """The second reader (``meta.judge``)."""

    model: str | None = _field("The judge's model spec (openai:NAME, hf:PATH, ...).")
    endpoint: str | None = _field("The judge's endpoint without secrets; null for local models.")
    prompt_version: str | None = _field("The judge prompt's version (its #version line, else sha256:...).")
    prompt_sha256: str | None = _field("sha256 of the judge prompt as sent (comments dropped).")
    prompt_file: str | None = _field("--judge-prompt FILE; null for the built-in template.")
    max_items: int | None = _field("--judge-max-items; null for no cap.")
    requests: int | None = _field("Distinct judge requests this scoring needed (format failures + audit).")
    from_cache: int | None = _field("Of those, answered from the completion cache (nothing sent).")
    sent: int | None = _field("Of those, answered by the judge in this scoring.")
    read_by_judge: int | None = _field("Items, over every task and run, whose reading the judge decided.")
    tokens: dict[str, TokenTally] | None = _field(
        "The judge's requests' tokens, counted apart from the model's (generated: sent in this scoring; "
        "from_cache: answered by the cache), priced with --pricing when it has the judge model."
    )
    audit: JudgeAudit | None = _field("The audit over every task.", when="--judge-audit N")
    audit_per_task: int | None = _field("--judge-audit N: outputs drawn per task.", when="--judge-audit N")
    audit_seed: int | None = _field("The seed of the draw (--seed).", when="--judge-audit N")
    banner: str | None = _field("The reports' warning when the audit's lower bound is below 95%.",
                                when="the audit's lower bound is below 95%")


class TokenTally(FileObject):
    """Generations and their tokens (as the backend reported them), and what they cost."""

    generations: int = _field("Generations (runs sharing one generation count it once).", default=0)
    prompt_tokens: int = _field("Prompt tokens.", default=0)
    completion_tokens: int = _field("Completion tokens (reasoning included, as the APIs count them).", default=0)
    reasoning_tokens: int = _field("Of the completion tokens, reasoning tokens, where the API reports them.", default=0)
    cached_prompt_tokens: int = _field("Of the prompt tokens, those the provider's prompt cache served.", default=0)
    without_usage: int = _field("Generations whose backend reported no token counts (not in the sums).", default=0)
    counted_by_taxpraben: int = _field(
        "Generations whose backend sent no token counts, counted by taxpraben (usage.counted_by: the model's "
        "tokenizer when known, else the approximation of taxpraben.tokens); in the sums.", default=0)
    cost: float | None = _field("Cost in meta.pricing.currency; null without --pricing.")


class Ledger(FileObject):
    """How the answers ended and what they cost (per task, and for the whole run)."""

    answers: int = _field("Predictions, over every run.", default=0)
    truncated: int = _field("Answers cut at the token budget (finish_reason length); scored as read.", default=0)
    truncated_rate: float = _field("truncated / answers.", default=0.0)
    finish_reasons: dict[str, int] = _field(
        "Answers by finish_reason as the backend said ('not reported', 'error' for failed generations).",
        default_factory=dict,
    )
    generated: TokenTally = _field("The generations made in this run.", default_factory=TokenTally)
    from_cache: TokenTally = _field(
        "The generations taken from the completion cache (paid by an earlier run; nothing in this one).",
        default_factory=TokenTally,
    )


class Groups(FileObject):
    """Task scores averaged by output kind and by Bloom level (computed tasks only)."""

    type: dict[str, Stat | None] = _field("Per output kind, the mean of its tasks' scores.", default_factory=dict)
    bloom: dict[str, Stat | None] = _field("Per Bloom level, the mean of its tasks' scores.", default_factory=dict)


# ---------------------------------------------------------------------------- meta


class GenerationMeta(FileObject):
    """How the model was asked (``meta.generation``)."""

    temperature: Number | None = _field("Sampling temperature.")
    top_p: Number | None = _field("Nucleus sampling threshold; null for the backend's default.")
    max_tokens: int | None = _field("Most tokens generated per answer.")
    seed_base: int | None = _field("Run k uses seed seed_base + k where the backend takes a seed.")
    system_prompt: str | None = _field("The system message, if any.")
    gen_kwargs: dict[str, Any] | None = _field("Further backend arguments (--gen-kwargs).")


class GenerationStats(FileObject):
    """What generation did (``meta.generation_stats``)."""

    generations: int | None = _field("Distinct generations needed (runs share one when decoding is deterministic).")
    cached: int | None = _field("Generations taken from the cache.")
    generated: int | None = _field("Generations made in this run.")
    failed: int | None = _field("Generations that failed (scored as errors).")
    retries: int | None = _field("Retried requests.")
    prompt_tokens: int | None = _field("Prompt tokens reported by the backend.")
    completion_tokens: int | None = _field("Completion tokens reported by the backend.")


class EndpointFigures(FileObject):
    """One endpoint of a run with several ``--base-url`` (``meta.endpoints[k]``)."""

    endpoint: str = _required("The endpoint's URL (no secrets).")
    sent: int | None = _field("Attempts sent to it.")
    completed: int | None = _field("Answers it gave.")
    failed: int | None = _field("Failed attempts.")
    mean_latency_s: Number | None = _field("Mean latency of its answers, in seconds.")
    throughput_rps: Number | None = _field("The last moving average of its measured throughput (requests/s).")
    ejections: int | None = _field("How often it was taken out of rotation.")


class ScorerInfo(FileObject):
    """A semantic scorer's settings and whether it loaded (``meta.scorers.NAME``).

    BERTScore adds ``layer``, ``idf``, ``max_tokens``, ``rescale_with_baseline``, ``score``,
    ``reference``; BARTScore adds ``weights``, ``max_length``, ``source``, ``target``, ``raw``,
    ``normalised``; both add ``dtype``, ``exact``, ``device``, ``transformers``.
    """

    model: str | None = _field("The model's path or hub id.")
    layer: int | None = _field("The hidden layer used.", when="bertscore")
    dtype: str | None = _field("float32 | tf32 | bf16 (--scorer-dtype).")
    exact: bool | None = _field(
        "True only for float32, the reference implementations' numbers.", when="the scorer loaded"
    )
    available: bool = _field("False when the scorer could not be loaded.", default=True)
    reason: str | None = _field("Why it is unavailable.")


class Counts(FileObject):
    """What was scored (``meta.counts``)."""

    items: int | None = _field("Records scored (per run).")
    predictions: int | None = _field("Predictions given (every line read).")
    scored_predictions: int | None = _field("Predictions matched to a record and run, and scored.")
    missing_predictions: int | None = _field("(record, run) pairs without a prediction: scored 0 as errors.")
    unknown_predictions: int | None = _field("Predictions for a task or id not in the data: ignored.")
    duplicate_predictions: int | None = _field(
        "Always 0: duplicate predictions for one (task, id, run) are refused before scoring; "
        "kept so that readers of schema 1 find it."
    )
    errors: int | None = _field("Sample lines with status error, over all runs.")
    format_failures: int | None = _field("Sample lines with status format_failure, over all runs.")


class ShardInfo(FileObject):
    """Which shard a shard's own results are of (``meta.shard``)."""

    index: int = _required("This shard's index, from 0.")
    count: int = _required("The number of shards.")
    records: int | None = _field("Records this shard owns.")
    partial: bool | None = _field("Always true: the figures are of this shard's records only.")


class ShardRef(FileObject):
    """A merged shard (``meta.merged_from.shards[k]``)."""

    index: int = _required("The shard's index.")
    count: int = _required("The number of shards.")


class MergedFrom(FileObject):
    """What ``taxpraben merge`` combined (``meta.merged_from``)."""

    sources: list[str] = _field("The merged directories or files.", default_factory=list)
    shards: list[ShardRef] = _field("The shards merged, by index.", default_factory=list)
    gaps: int = _field("Missing predictions scored as errors (with --force).", default=0)
    forced: bool = _field("Whether --force let gaps or problems through.", default=False)


class ManifestVersion(FileObject):
    """The taxpraben that wrote the results (``meta.manifest.taxpraben``)."""

    version: str = _required("taxpraben's installed version.")
    git_commit: str | None = _field("The source commit; null outside a git checkout.")


class ManifestFile(FileObject):
    """One task's data file (``meta.manifest.data_files.TASK``)."""

    path: str = _required("The file read.")
    sha256: str = _required("sha256 (hex) of the file's bytes.")


class ManifestSpec(FileObject):
    """One task's spec (``meta.manifest.task_specs.TASK``)."""

    path: str | None = _field("The spec file; null for a spec registered by a plugin.")
    sha256: str = _required("sha256 (hex) of the spec's canonical JSON (sorted keys, compact, UTF-8).")


class ManifestScorer(FileObject):
    """One semantic scorer's model (``meta.manifest.scorers.NAME``)."""

    model: str = _required("The model's hub id or local directory.")
    revision: str | None = _field(
        "A hub id: the commit of its snapshot in the local Hugging Face cache; a local directory: its path; "
        "null when neither is known."
    )
    weights_sha256: str | None = _field(
        "A local directory: sha256 of its weights file (model.safetensors or pytorch_model.bin); else null."
    )


class Manifest(FileObject):
    """What a run needs to be reproduced and compared (``meta.manifest``): versions, the
    exact data and specs (hashes), the decoding, the limit and the scorers' revisions.
    Results written before it have none; readers then compare ``meta.data_hash``."""

    taxpraben: ManifestVersion = _required("taxpraben's version and commit.")
    python: str = _required("The Python version.")
    platform: str = _required("The operating system and machine (platform.platform()).")
    packages: dict[str, str | None] = _field(
        "Installed versions of torch, transformers, aiohttp, numpy, pydantic; null where not installed.",
        default_factory=dict,
    )
    devices: list[str] = _field(
        "The scorers' devices (as resolved when they loaded), else the --device value's entries.",
        default_factory=list,
    )
    data_files: dict[str, ManifestFile] = _field("Each task's data file and its sha256.", default_factory=dict)
    task_specs: dict[str, ManifestSpec] = _field("Each task's spec file and its sha256.", default_factory=dict)
    prompt_template_sha256: str = _required(
        "sha256 of what turns a record into messages: taxpraben.prompts' source text (the query is sent "
        "verbatim; there is no template string)."
    )
    generation: GenerationMeta | None = _field("The decoding settings (as ``meta.generation``); null for `score`.")
    model_args: dict[str, Any] | None = _field("The model's construction arguments, where given.")
    limit: Number | None = _field("--limit: records per task (an integer) or a fraction of each task; null for all.")
    scorers: dict[str, ManifestScorer] = _field(
        "The semantic scorers' models and revisions; empty with --no-semantic.", default_factory=dict
    )
    judge: Any = _field("An LLM judge's model and revision; null (no task uses a judge yet).")
    started_at: str = _required("ISO 8601 UTC start time.")
    finished_at: str = _required("ISO 8601 UTC end time.")


class Meta(FileObject):
    """How the results were made (``meta``)."""

    model: str | list[str] | None = _field(
        "The model spec (openai:NAME, hf:PATH, replay:FILE, baseline:NAME); null for ``score``; "
        "the list of models a merge found when its sources name several."
    )
    endpoint: str | None = _field("The endpoint URL without secrets; several replicas: their URLs sorted, comma-joined.")
    endpoints: list[EndpointFigures] | None = _field(
        "Per-endpoint figures (docs/scaling.md).", when="`run` with several --base-url endpoints"
    )
    generation: GenerationMeta | None = _field("The generation settings; null for ``score``.")
    model_args: dict[str, Any] | None = _field(
        "--model-args as parsed (hf: from_pretrained arguments such as dtype and revision; openai: extra "
        "request body fields); null without them.",
        when="`run`",
    )
    chat_template: str | None = _field(
        "hf: the chat template applied to each query ('tokenizer template sha256:<12 hex>' of its text) or "
        "'none: raw query (why)'; null for other backends.",
        when="`run` with hf:",
    )
    generation_stats: GenerationStats | None = _field("What generation did.", when="`run`")
    predictions_file: str | list[str] | None = _field(
        "The predictions file scored (a list when several were read).", when="`score`"
    )
    runs: int | None = _field("Runs scored (every figure is over these).")
    shared_generation: bool = _field(
        "True when the runs share one deterministic generation.", default=False
    )
    data_dir: str | None = _field("The data directory.")
    data_hash: str | None = _field("sha256 of the dataset files actually scored.")
    limit: Number | None = _field("--limit: records per task (an integer) or a fraction of each task (0.1 = the "
                                  "first 10%, rounded up); null for all.")
    profile: str | None = _field("Scoring profile: taxpraben or taxben.")
    scorers: dict[str, ScorerInfo] = _field("Semantic scorers by name: bertscore, bartscore.", default_factory=dict)
    package_version: str | None = _field("taxpraben's version.")
    git_hash: str | None = _field("The source commit; null outside a git checkout.")
    started_at: str | None = _field("ISO 8601 UTC start time.")
    finished_at: str | None = _field("ISO 8601 UTC end time.")
    tasks: list[str] = _field("The tasks scored, in table order.", default_factory=list)
    counts: Counts = _field("What was scored.", default_factory=Counts)
    warnings: list[str] = _field(
        "Problems met while matching predictions and loading data (also printed).", default_factory=list
    )
    shard: ShardInfo | None = _field(
        "The shard these figures are of.", when="a shard's own results (`run --shard I/N`, N > 1)"
    )
    merged_from: MergedFrom | None = _field("What was merged.", when="`taxpraben merge`")
    pricing: dict[str, Any] | None = _field(
        "The prices the costs are computed with: file, currency, the matched model entry and its prices "
        "per million tokens.",
        when="--pricing",
    )
    manifest: Manifest | None = _field(
        "Versions, hashes and revisions of what made the results; absent in files written before it.",
        when="`run`, `score` and `merge`",
    )
    judge: JudgeMeta | None = _field("The second reader and its audit.", when="--judge")


class ReviewFigure(FileObject):
    """Human review of one task's readings, or of every task's (``review.tasks.NAME``, ``review.overall``)."""

    reviewed: int = _field("Readings with a verdict of right or wrong (unsure ones are left out).", default=0)
    agreed: int = _field("Of those, the ones the reviewer read as taxpraben did (verdict right).", default=0)
    agreement: float | None = _field("agreed / reviewed; null when nothing was reviewed.")
    ci95: list[float] | None = _field("95% Wilson interval of the agreement; null when nothing was reviewed.")
    unsure: int = _field("Readings whose only verdicts were unsure.", default=0)
    given: float = _field("Points (items, 0-1 each) the readings gave that the reviewer's answer would not have.",
                          default=0.0)
    withheld: float = _field("Points the readings withheld that the reviewer's answer would have earned.",
                             default=0.0)
    corrected: list[float | None] | None = _field(
        "Estimated score had every reading been a reviewer's: [estimate, low, high] (0-1; the protocol's score "
        "plus (withheld - given) / reviewed, the bounds from the Wilson intervals of the shares given and "
        "withheld). Never replaces the protocol's score.", when="the task's score is computed")


class Review(FileObject):
    """People's verdicts on a draw of the readings (``taxpraben review``; ``OUT/review.jsonl``)."""

    file: str = _field("The verdicts' file, relative to the result directory.", default="review.jsonl")
    reviewers: list[str] = _field("Who gave verdicts.", default_factory=list)
    overall: ReviewFigure = _field("Every task's reviewed readings together.", default_factory=ReviewFigure)
    tasks: dict[str, ReviewFigure] = _field("Per task reviewed.", default_factory=dict)
    corrected_overall: list[float | None] | None = _field(
        "The Overall Average had every reading been a reviewer's: [estimate, low, high] (unreviewed tasks "
        "as scored). Never replaces the Overall Average.")
    inter_reviewer: dict[str, int] | None = _field(
        "Readings two or more reviewers decided (items) and those on which all gave the same verdict and "
        "answer (agreed).", when="two reviewers decided a reading")
    judge_and_person: dict[str, int] | None = _field(
        "Readings both the judge (--judge, --judge-audit) and a person read (items), and those where their "
        "answers agree (agreed).", when="the judge read a reviewed item")
    disagreements: list[dict[str, Any]] = _field(
        "The reviewed readings the person read otherwise: task, id, run, field, read (taxpraben's reading), "
        "answer (the person's), gold, and judge (the judge's reading, where it read the item).",
        default_factory=list)
    banner: str | None = _field("The reports' warning when the agreement's lower bound is below 95%.",
                                when="the lower bound is below 95%")


class Results(FileObject):
    """``results.json``: everything a report or leaderboard shows."""

    schema_version: int = _required(f"The layout's version; this code writes and reads {SCHEMA_VERSION}.")
    meta: Meta = _field("How the results were made.", default_factory=Meta)
    tasks: dict[str, TaskResult] = _required("Per task, by name.")
    groups: Groups = _field("Task scores by output kind and by Bloom level.", default_factory=Groups)
    overall: OverallStat = _field(
        "Overall Average: the unweighted mean of the computed tasks' scores, per run.",
        default_factory=OverallStat,
    )
    ledger: Ledger | None = _field("The tasks' ledgers added up: truncation and cost of the whole run.")
    review: Review | None = _field("People's check of the readings (`taxpraben review`).",
                                   when="`report` of a directory with review.jsonl")


# ---------------------------------------------------------------------------- samples


class FieldScore(FileObject):
    """One field (or aspect) of one item (``samples.jsonl`` ``fields.NAME``)."""

    pred: Any = _field("What was read from the prediction for the field; null when absent.")
    gold: Any = _field("The gold value.")
    score: float | None = _field("The field's score; null until (or unless) a semantic scorer gave one.")
    status: str | None = _field("ok | missing | format_failure.")
    kind: str | None = _field("number | category | text | ...")
    matched_by: str | None = _field("How the prediction's key was aligned: exact, normalised, synonym, fuzzy, whole, ...")
    inferred: bool | None = _field("Whether the kind was inferred from the gold value.")
    spec_field: str | None = _field("The spec rule's name.", when="the key is one of the rule's synonyms")
    evidence: list[int] | None = _field("Where the field's value is stated: [start, end) character offsets into "
                                        "the prediction (a judge reading: its quote).", when="known")
    bertscore: float | None = _field("BERTScore F1 of the aspect.", when="aspects of a generation task")
    bartscore: float | None = _field("Normalised BARTScore of the aspect.", when="aspects of a generation task")


class JudgeEdit(FileObject):
    """One edit of a sample by the judge (``samples.jsonl`` ``judge_history[k]``)."""

    edit: str = _required("replied (its reply kept) | adopted (its reading replaced the rules') | unanswered "
                          "(it read no answer) | audited (its reading set beside the rules').")
    by: str = _required("Who made it: \"judge:<model>\".")
    before: dict[str, Any] = _field("Each key the edit changed, with its value before the edit.",
                                    default_factory=dict)


class Sample(FileObject):
    """One sample: one (task, id, run), the same object from scoring to the report, one line of
    ``samples.jsonl``. Frozen: new values make a new sample (``model_copy(update=...)``)."""

    model_config = ConfigDict(extra="allow", coerce_numbers_to_str=True, defer_build=True, frozen=True)

    task: str = _required("The dataset.")
    id: str = _required("The record's id.")
    run: int = _required("The run index.")
    status: Literal["ok", "format_failure", "error"] = _required(
        "ok | format_failure (the answer could not be read) | error (generation failed)."
    )
    prediction: str | None = _field("The raw prediction (\"\" when there is none).", default="")
    gold: Any = _field("The gold as text (choices[gold] for classification).")
    extracted: Any = _field("What scoring read from the prediction: label, number, letters, span or fields.")
    # Number: a plugin's item metric may give an integer; it is written as given.
    scores: dict[str, Number | None] = _field("Per-item metric values.", default_factory=dict)
    score: float | None = _field("The item's contribution to the task score.")
    error: str | None = _field("The generation error, if any.")
    finish_reason: str | None = _field(
        "Why generation stopped, as the backend said (length: cut at --max-tokens).",
        when="the backend said",
    )
    usage: dict[str, Any] | None = _field(
        "Token counts of the generation: prompt_tokens, completion_tokens, and where the backend "
        "reported them reasoning_tokens and cached_prompt_tokens.",
        when="the backend reported them",
    )
    cached: bool | None = _field(
        "True: the answer came from the completion cache (nothing was paid for it in this run).",
        when="true",
    )
    failure: str | None = _field(
        "Why no answer was read: copy of the prompt, answers another question, several different "
        "answers, hedges between options, no answer asserted, no answer found, ...",
        when="status format_failure",
    )
    fields: dict[str, dict[str, Any]] | None = _field(
        "Per field, named by the gold's keys; a gold with no readable field is one text field 全文.",
        when="mixed tasks and multi-aspect generation tasks", doc_type=dict[str, FieldScore] | None,
    )
    query: str | None = _field("The prompt.", when="the first run's line of each item")
    extracted_by: Literal["rule", "judge", "none"] | None = _field(
        "Who read the answer: rule, judge (the rules could not; --judge), none (neither did)."
    )
    read_by: str | None = _field(
        "Which reader made the reading: \"rule:<name>\" (a rule of `taxpraben rules`), \"judge:<model>\" "
        "(--judge), null when nothing was read (a format failure or an error)."
    )
    # Declared once (it was declared twice; the later text, the one in force, in the first place).
    evidence: list[int] | None = _field("Where the answer is stated: [start, end) character offsets into "
                                        "prediction (a judge reading: its quote).", when="known")
    confidence: Literal["high", "low"] | None = _field(
        "The reading rule's confidence: high (a stated answer) or low (a fallback: a last number, an "
        "option named in passing, a whole output, a field matched fuzzily); null when nothing was read."
    )
    veto: str | None = _field("The veto rule that decided a format failure (veto.hedge, veto.no-answer, ...).",
                              when="status format_failure")
    judge_reply: str | None = _field("The judge's raw reply.", when="the judge was asked for the item")
    judge_extracted: Any = _field("The judge's reading of an audited item, beside the rules' (extracted; for a "
                                  "field task, each asked field's value, null where the judge read none).",
                                  when="audited items (--judge-audit)")
    judge_agrees: bool | None = _field("Whether the rules and the judge read the same answer.",
                                       when="audited items (--judge-audit)")
    judge_rejected: str | None = _field("Why the judge's reading was rejected (its quote no evidence: quote not in "
                                        "output, in a copy of the prompt, reads another value, repeats the prompt's "
                                        "example, no quote); for a field task, per field.",
                                        when="the judge's reading was rejected")



    judge_history: list[dict[str, Any]] | None = _field(
        "The judge's edits of the sample, in order: what each was (replied, adopted, unanswered, audited), "
        "who made it, and the value before it of each key it changed (so the rules' reading stays known).",
        when="the judge changed the sample", doc_type=list[JudgeEdit] | None,
    )

    @field_validator("judge_history", mode="before")
    @classmethod
    def _checked_history(cls, value: Any) -> Any:
        """Each edit checked as a :class:`JudgeEdit` and kept as the object it was given."""
        if isinstance(value, list):
            return [JudgeEdit.model_validate(edit).to_json() for edit in value]
        return value

    @field_validator("fields", mode="before")
    @classmethod
    def _checked_fields(cls, value: Any) -> Any:
        """Each field checked as a :class:`FieldScore` and kept as the object it was given."""
        if isinstance(value, dict):
            return {str(name): FieldScore.model_validate(v).to_json() for name, v in value.items()}
        return value

    @classmethod
    def trusted(cls, line: dict[str, Any]) -> Sample:
        """The sample of ``line`` made by this process from its own items (already typed):
        built without validation (as ``model_construct`` builds), its keys in the line's order."""
        values = _SAMPLE_DEFAULTS.copy()
        extra = {}
        for key, value in line.items():
            if key in values:
                values[key] = value
            else:
                extra[key] = value
        for name, factory in _SAMPLE_FACTORIES.items():
            if name not in line:
                values[name] = factory()
        sample = cls.__new__(cls)
        # What model_construct sets, without its per-field loop (a sample per item and run).
        object.__setattr__(sample, "__dict__", values)
        object.__setattr__(sample, "__pydantic_fields_set__", set(line) - extra.keys())
        object.__setattr__(sample, "__pydantic_extra__", extra)
        object.__setattr__(sample, "__pydantic_private__", {"_order": tuple(line)})
        return sample

    def to_json(self) -> dict[str, Any]:
        """The samples.jsonl object: the keys given, in their order. A sample's values are
        plain JSON values, so the object is made from them directly (one per item and run;
        nested values are shared with the frozen sample, not copied); any other sample (keys
        given in no remembered order) through the model, as every file object."""
        order, given = self._order, self.__pydantic_fields_set__
        extra = self.__pydantic_extra__ or {}
        if order is None or not given.issubset(order) or not extra.keys() <= set(order):
            return super().to_json()
        values = self.__dict__
        return {key: values[key] if key in values else extra[key] for key in order if key in given or key in extra}

    @property
    def span(self) -> tuple[int, int] | None:
        """``evidence`` as a ``(start, end)`` pair; None when absent or not such a pair."""
        value = self.evidence
        if isinstance(value, (list, tuple)) and len(value) == 2 and all(isinstance(v, int) for v in value):
            return int(value[0]), int(value[1])
        return None

    @property
    def text(self) -> str:
        """The raw prediction ("" when there is none)."""
        return self.prediction or ""

    @property
    def truncated(self) -> bool:
        """Whether the answer was cut at the token budget (``finish_reason`` length)."""
        return self.finish_reason == "length"

    @property
    def shown_failure(self) -> str | None:
        """Why a format failure was not read (None for the other statuses)."""
        return self.failure if self.status == "format_failure" else None


#: The defaults of :class:`Sample`'s fields (immutable ones), and the fields made by a factory.
#: Every field is in the defaults (a factory's field with None, replaced when not given).
_SAMPLE_DEFAULTS: dict[str, Any] = {name: info.default if info.default_factory is None else None
                                    for name, info in Sample.model_fields.items()}  # fmt: skip
_SAMPLE_FACTORIES: dict[str, Callable[[], Any]] = {
    name: info.default_factory for name, info in Sample.model_fields.items()  # type: ignore[misc]
    if info.default_factory is not None
}


# ---------------------------------------------------------------------------- predictions


class Prediction(FileObject):
    """One line of ``predictions.jsonl``, imported (``score``, ``replay:``) and exported (``run``).

    ``{"task": "TaxCalc", "id": "17", "run": 0, "prediction": "..."}``, optional ``model``,
    ``usage`` (``prompt_tokens``, ``completion_tokens``), ``latency_s``, ``error``,
    ``reasoning``; any other key is kept and written back. Null optional keys are not
    written. May be built positionally: ``Prediction(task, id, run, prediction)``.
    """

    task: str = _required("The dataset.")
    id: str = _required("The record's id (numbers are read as text).")
    run: int = _required("The run index, from 0.")
    prediction: str = _required("The model's answer; empty when the generation failed.")
    model: str | None = _field("The model spec that answered.", when="not null")
    usage: dict[str, Any] | None = _field("Token counts: prompt_tokens, completion_tokens.", when="not null")
    latency_s: Number | None = _field("Seconds the answer took.", when="not null")
    finish_reason: str | None = _field(
        "Why generation stopped, as the backend said: stop, length (cut at --max-tokens), ...", when="not null"
    )
    error: str | None = _field("Why the generation failed.", when="not null")
    cached: bool | None = _field(
        "True: the answer came from the completion cache (nothing was paid for it in this run).", when="true"
    )
    reasoning: str | None = _field(
        "Reasoning returned apart from the answer (reasoning_content); never scored.", when="not null"
    )

    def __init__(self, task: str | None = None, id: str | None = None, run: int | None = None,
                 prediction: str | None = None, /, **data: Any) -> None:
        positional = {"task": task, "id": id, "run": run, "prediction": prediction}
        super().__init__(**{k: v for k, v in positional.items() if v is not None}, **data)

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.task, self.id, self.run)

    @property
    def extra(self) -> dict[str, Any]:
        """The keys the contract does not name, as given."""
        return dict(self.model_extra or {})

    def to_json(self) -> dict[str, Any]:
        """The predictions.jsonl object: declared keys in contract order (null ones left out,
        ``prediction`` always written), then the extra keys as given."""
        declared = {
            name: getattr(self, name)
            for name in type(self).model_fields
            if name == "prediction" or getattr(self, name) is not None
        }
        return {**declared, **self.extra}


# ---------------------------------------------------------------------------- docs

#: The models documented, in the order of docs/results-schema.md.
DOCUMENTED: tuple[type[FileObject], ...] = (
    Results, Meta, Manifest, ManifestVersion, ManifestFile, ManifestSpec, ManifestScorer,
    GenerationMeta, GenerationStats, EndpointFigures, ScorerInfo, Counts,
    ShardInfo, MergedFrom, ShardRef, JudgeMeta, TaskResult, RunFigures, RunCounts, FieldFigures, JudgeTask,
    JudgeAudit, Groups, Review, ReviewFigure,
    Stat, OverallStat, Sample, FieldScore, JudgeEdit, Prediction,
)

_INTRO = """\
# Output files of `taxpraben run`, `score` and `merge`

<!-- Generated from src/taxpraben/results.py; do not edit by hand. Regenerate with:
     python -m taxpraben.results --markdown > docs/results-schema.md -->

Other tools read these files; this page is their contract (the README, "Evaluate a model",
shows how they are made).
Each table below is one JSON object; the models in `src/taxpraben/results.py` are the same
description in code, used by the writer, the report and the leaderboard.

- `results.json`: one [`Results`](#results) object, written with `indent=2`.
- `samples.jsonl`: one [`Sample`](#sample) per line, one line per (task, id, run).
- `predictions.jsonl`: one [`Prediction`](#prediction) per line, one per (task, id, run).

Reading rules: `schema_version` is {version}; a reader refuses another version (the layout
or a key's meaning changed). Keys may be added without a new version, so a reader keeps
keys it does not know. "Written" says when the writer writes a key; "always" keys may still
be absent from files of older versions of this code. `Stat` is one figure over the runs;
a figure that could not be computed at all is `null`.

A task of `results.json` and one line of `samples.jsonl`, shortened:

```jsonc
"TaxCalc": {"name_zh": "税额计算", "type": "structured", "bloom": "apply", "n": 12,
            "status": "ok", "reason": null,
            "metrics": {"em": STAT}, "score": STAT, "format_failure_rate": STAT, "error_rate": STAT,
            "per_run": [{"run": 0, "metrics": {"em": 0.75}, "score": 0.75, "format_failure_rate": 0.083,
                         "error_rate": 0.0, "counts": {"ok": 11, "format_failure": 1, "error": 0}}]}
// STAT: {"mean": 0.81, "std": 0.02, "ci95": [0.78, 0.84], "runs": [0.8, ...], "bootstrap_ci95": [0.76, 0.86]}

{"task": "TaxCalc", "id": "3", "run": 0, "status": "ok", "prediction": "...", "gold": "1560.00",
 "extracted": "1560", "scores": {"em": 1.0}, "score": 1.0, "error": null, "query": "..."}
```
"""


def _type_label(annotation: Any) -> str:
    """A short, readable name of a field's type for the docs."""
    if annotation is Any:
        return "any"
    if annotation is type(None):
        return "null"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"[`{annotation.__name__}`](#{annotation.__name__.lower()})"
    names = {str: "string", int: "integer", float: "number", bool: "boolean"}
    if annotation in names:
        return names[annotation]
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (Union, types.UnionType):
        labels = list(dict.fromkeys(_type_label(a) for a in args))
        if "integer" in labels and "number" in labels:
            labels.remove("integer")
        return " or ".join(labels)
    if origin is Literal:
        return " \\| ".join(f'`"{a}"`' for a in args)
    if origin is list:
        return f"list of {_type_label(args[0])}"
    if origin is dict:
        return f"{{name: {_type_label(args[1])}}}"
    return str(annotation)


def _cell(text: str) -> str:
    """Docstring text as one Markdown table cell (reST ``code`` becomes Markdown `code`)."""
    return " ".join(text.split()).replace("``", "`").replace("|", "\\|")


def _model_section(model: type[FileObject]) -> Iterator[str]:
    model.model_rebuild()  # deferred: its forward references (a model defined below) resolved
    yield f"## {model.__name__}"
    yield ""
    yield _cell(typing.cast(str, model.__doc__))
    yield ""
    yield "| Key | Type | Written | Meaning |"
    yield "|---|---|---|---|"
    for name, info in model.model_fields.items():
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        when = str(extra.get("when") or "always")
        yield f"| `{name}` | {_type_label(extra.get('doc_type', info.annotation))} | {_cell(when)} | {_cell(info.description or '')} |"
    yield ""


def schema_markdown() -> str:
    """docs/results-schema.md, generated from the models' fields and descriptions."""
    parts = [_INTRO.replace("{version}", str(SCHEMA_VERSION))]
    for model in DOCUMENTED:
        parts.append("\n".join(_model_section(model)))
    return "\n".join(parts).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m taxpraben.results", description=__doc__.split("\n")[0])
    parser.add_argument("--markdown", action="store_true", help="print docs/results-schema.md")
    args = parser.parse_args(argv)
    if not args.markdown:
        parser.print_help()
        return 2
    sys.stdout.write(schema_markdown())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
