"""The figures of results.json: a figure over runs (:class:`Stat`), a task's figures, its judge
and ledger, the groups and the Overall Average, and the human review."""

from __future__ import annotations

from typing import Literal

from pydantic import (
    Field,
)

from taxpraben.results.file_object import FileObject, Number, described, required
from taxpraben.results.json_value import JSONObject


class Stat(FileObject):
    """One figure over the runs (``STAT``): its per-run values and their summary.

    A figure that could not be computed at all is ``null`` where a ``Stat`` is expected.
    """

    mean: float | None = described("Mean over the runs whose value is not null.")
    std: float | None = described("Sample standard deviation over runs (ddof 1); null with one run.")
    ci95: list[float] | None = described(
        "95% t-interval over runs, clipped to the figure's possible range; null with one run."
    )
    runs: list[float | None] = described("The value of each run, in run order; null where not computed.",
                                      default_factory=list)
    bootstrap_ci95: list[float] | None = described(
        "95% sample-level bootstrap interval (items resampled, paired across runs); null where "
        "not computed (rates, macro F1, fields)."
    )


class OverallStat(Stat):
    """The Overall Average: a ``Stat`` over the computed tasks' scores, which tasks, and which
    tasks of the benchmark it lacks."""

    partial: bool = described("True when fewer than all tasks of the benchmark were computed (a task without data "
                           "under --allow-missing, left out by --tasks, or not computed).", default=False)
    tasks: list[str] = described("The tasks the average is over (the computed ones).", default_factory=list)
    benchmark: list[str] = described(
        "The tasks of the benchmark: the registry's (the 14 bundled tasks, with any --task-dir specs); absent in "
        "files written before it (then the tasks scored are read as the benchmark).", default_factory=list,
    )
    missing: dict[str, str] = described(
        "Each task of the benchmark not computed, with why: ``no data file`` (--allow-missing), ``excluded "
        "(--tasks)``, ``no predictions`` (`score` of a file holding other tasks), ``not computed: scorer "
        "unavailable``, ``not computed: semantic scoring off (--no-semantic)``.", default_factory=dict,
    )


class RunCounts(FileObject):
    """Items of one task in one run, by status."""

    ok: int = described("Items scored normally.", default=0)
    format_failure: int = described("Items whose answer could not be read (scored 0).", default=0)
    error: int = described("Items whose generation failed or is missing (scored 0).", default=0)


class RunFigures(FileObject):
    """A task's figures in one run (``tasks.NAME.per_run[k]``)."""

    run: int = required("The run index.")
    metrics: dict[str, Number | None] | None = described(
        "Each metric's value in this run (keys as in the task's ``metrics``).", default_factory=dict
    )
    score: float | None = described("The task score in this run; null when a needed scorer was unavailable.")
    format_failure_rate: float | None = described("Share of items that are format failures.")
    error_rate: float | None = described("Share of items whose generation failed.")
    counts: RunCounts | None = described("Items by status.")


class FieldFigures(FileObject):
    """Per-field figures of a mixed task or a multi-aspect generation task, over the records
    whose gold has the field. Besides the declared keys, one ``Stat`` per metric of the
    field's kind: ``em`` for exact fields; ``bertscore`` for text fields (and ``bartscore``
    for the aspects of a generation task)."""

    __pydantic_extra__: dict[str, Stat | None] = Field(init=False)  # the metrics: Stat each

    kind: str = required("The field's most common kind over records: number, category, text, ...")
    n: int | None = described("Records with the field, per run (the figures are over these).")
    inferred: bool | None = described("Whether any record inferred the field's kind from its gold value.")
    format_failure_rate: Stat | None = described("Share of the field's records where it was not read.")

    @property
    def metric_figures(self) -> dict[str, Stat | None]:
        """The field's metric figures (its keys beyond the declared ones), in the order given."""
        return dict(self.model_extra or {})


class TaskResult(FileObject):
    """One task (``tasks.NAME``)."""

    name_zh: str | None = described("The dataset's Chinese name.")
    type: str | None = described("The task's output kind: classification, structured, generation, mixed, ...")
    bloom: str | None = described("Bloom level: remember, understand, apply, analyze, evaluate, create.")
    n: int | None = described("Items per run.")
    status: Literal["ok", "not_computed"] = described(
        "``not_computed`` when a semantic scorer the task needs was unavailable.", default="ok"
    )
    reason: str | None = described("Why not computed, in short (the full reason is in ``meta.scorers``).")
    metrics: dict[str, Stat | None] = described(
        "One ``Stat`` per metric. Keys by kind: classification ``acc``, ``f1`` (weighted), "
        "``macro_f1``, ``missing_rate``; generation ``bertscore`` (F1), ``bartscore`` (exp(raw), "
        "in (0, 1]), ``bartscore_raw`` (mean log-likelihood, negative); structured ``em``; mixed "
        "``em`` (over exact fields) and ``bertscore`` (over text fields), each a mean over the "
        "items whose gold has such fields. The set is open: a kind declares its own.",
        default_factory=dict,
    )
    score: Stat | None = described(
        "The task score (README, \"How answers are scored\"): classification mean(acc, f1); generation "
        "mean(bertscore, bartscore); structured em; mixed the mean of item scores."
    )
    format_failure_rate: Stat | None = described("Share of items whose answer could not be read.")
    format_failures: dict[str, int] | None = described(
        "Format failures by reason, over all runs: ``copy of the prompt``, ``answers another "
        "question``, ``several different answers``, ``no answer asserted``, ``no answer found``, ...",
        when="the task has format failures",
    )
    error_rate: Stat | None = described("Share of items whose generation failed or is missing.")
    readings: dict[str, int] | None = described(
        "Readings over all runs by who made them: \"rule:<name>\", \"judge:<model>\", and the veto rules "
        "of the format failures (\"veto.<name>\").",
        when="the task has read items",
    )
    confidence: dict[str, int] | None = described(
        "Readings over all runs by the confidence of the rule that made them: ``high`` (a stated answer) "
        "and ``low`` (a fallback, what ``--judge`` and ``taxpraben review`` look at first). Format failures "
        "and unread items are in neither.",
        when="the task has readings by rules",
    )
    per_run: list[RunFigures] = described("The figures of each run.", default_factory=list)
    fields: dict[str, FieldFigures] | None = described(
        "Per field, named by the gold's keys: those a spec rule names first, then inferred ones.",
        when="mixed tasks and multi-aspect generation tasks",
    )
    ledger: Ledger | None = described("How the task's answers ended (truncation) and what they cost.")
    judge: JudgeTask | None = described(
        "What the second reader did on the task (README, \"A second reader\").",
        when="--judge, on the tasks the judge reads (classification and structured)",
    )

    @property
    def computed(self) -> bool:
        return self.status == "ok"


class JudgeAudit(FileObject):
    """The audit: outputs the rules read, read by the judge as well, and how often both agree."""

    audited: int = described("Distinct outputs audited.", default=0)
    agreed: int = described("Of those, the ones the judge read as the rules did.", default=0)
    not_grounded: int | None = described("Replies left out of the comparison: their quote was no evidence in the output "
                                      "(only grounded judge readings are compared).", when="--judge-audit N")
    agreement: float | None = described("agreed / audited; null when nothing was audited.")
    ci95: list[float] | None = described("95% Wilson interval of the agreement; null when nothing was audited.")
    disagreements: list[JSONObject] | None = described(
        "The outputs on which they disagree: id, run, the rules' reading (rule) and the judge's (judge).",
        when="per task",
    )


class JudgeTask(FileObject):
    """The second reader on one task (``tasks.NAME.judge``), over every run."""

    items: int = described("Items of the task, over every run.", default=0)
    read_by_rule: int = described("Items the rules read.", default=0)
    read_by_judge: int = described("Items whose reading the judge decided: format failures or unread fields it read, "
                                "and low-confidence readings it replaced.", default=0)
    unread: int = described("Items neither read (still format failures, scored 0).", default=0)
    asked: int = described("Distinct outputs the judge was asked to read (audit apart).", default=0)
    no_answer: int = described("Of those, replies that were the no-answer token.", default=0)
    malformed: int = described("Of those, replies the task's reader could not read (a warning each task).", default=0)
    failed: int = described("Requests for those and for the low-confidence outputs that failed after every retry.",
                         default=0)
    capped: int = described("Distinct outputs left unread because --judge-max-items was reached.", default=0)
    low_confidence: int = described("Distinct outputs the rules read entirely, some answer-bearing field only by a "
                                 "fallback (a fuzzy key), that the judge was asked about (apart from asked); its "
                                 "reading replaces the rules' only where it reads a value.", default=0)
    not_grounded: int = described("Replies to those and to the low-confidence outputs whose reading (or some field "
                               "of it) was rejected: its quote not in the output, in a copy of the prompt, reading "
                               "another value, or repeating the judge prompt's example (the item keeps the rules' "
                               "reading; a format failure's reason becomes 'judge: not grounded').", default=0)
    not_grounded_whys: dict[str, int] | None = described("Those rejections by why.")
    format_failure_rate_before: float | None = described("Share of items that were format failures before the judge.")
    format_failure_rate_after: float | None = described("Share of items that are format failures after it.")
    audit: JudgeAudit | None = described("The audit of the task.", when="--judge-audit N")


class JudgeMeta(FileObject):
    """The second reader (``meta.judge``)."""

    model: str | None = described("The judge's model spec (openai:NAME, hf:PATH, ...).")
    endpoint: str | None = described("The judge's endpoint without secrets; null for local models.")
    prompt_version: str | None = described("The judge prompt's version (its #version line, else sha256:...).")
    prompt_sha256: str | None = described("sha256 of the judge prompt as sent (comments dropped).")
    prompt_file: str | None = described("--judge-prompt FILE; null for the built-in template.")
    max_items: int | None = described("--judge-max-items; null for no cap.")
    requests: int | None = described("Distinct judge requests this scoring needed (format failures + audit).")
    from_cache: int | None = described("Of those, answered from the completion cache (nothing sent).")
    sent: int | None = described("Of those, answered by the judge in this scoring.")
    read_by_judge: int | None = described("Items, over every task and run, whose reading the judge decided.")
    tokens: dict[str, TokenTally] | None = described(
        "The judge's requests' tokens, counted apart from the model's (generated: sent in this scoring; "
        "from_cache: answered by the cache), priced with --pricing when it has the judge model."
    )
    audit: JudgeAudit | None = described("The audit over every task.", when="--judge-audit N")
    audit_per_task: int | None = described("--judge-audit N: outputs drawn per task.", when="--judge-audit N")
    audit_seed: int | None = described("The seed of the draw (--seed).", when="--judge-audit N")
    banner: str | None = described("The reports' warning when the audit's lower bound is below 95%.",
                                when="the audit's lower bound is below 95%")


class TokenTally(FileObject):
    """Generations and their tokens (as the backend reported them), and what they cost."""

    generations: int = described("Generations (runs sharing one generation count it once).", default=0)
    prompt_tokens: int = described("Prompt tokens.", default=0)
    completion_tokens: int = described("Completion tokens (reasoning included, as the APIs count them).", default=0)
    reasoning_tokens: int = described("Of the completion tokens, reasoning tokens, where the API reports them.", default=0)
    cached_prompt_tokens: int = described("Of the prompt tokens, those the provider's prompt cache served.", default=0)
    without_usage: int = described("Generations whose backend reported no token counts (not in the sums).", default=0)
    counted_by_taxpraben: int = described(
        "Generations whose backend sent no token counts, counted by taxpraben (usage.counted_by: the model's "
        "tokenizer when known, else the approximation of taxpraben.costs.tokens); in the sums.", default=0)
    cost: float | None = described("Cost in meta.pricing.currency; null without --pricing.")


class Ledger(FileObject):
    """How the answers ended and what they cost (per task, and for the whole run)."""

    answers: int = described("Predictions, over every run.", default=0)
    truncated: int = described("Answers cut at the token budget (finish_reason length); scored as read.", default=0)
    truncated_rate: float = described("truncated / answers.", default=0.0)
    finish_reasons: dict[str, int] = described(
        "Answers by finish_reason as the backend said ('not reported', 'error' for failed generations).",
        default_factory=dict,
    )
    generated: TokenTally = described("The generations made in this run.", default_factory=TokenTally)
    from_cache: TokenTally = described(
        "The generations taken from the completion cache (paid by an earlier run; nothing in this one).",
        default_factory=TokenTally,
    )


class Groups(FileObject):
    """Task scores averaged by output kind and by Bloom level (computed tasks only)."""

    type: dict[str, Stat | None] = described("Per output kind, the mean of its tasks' scores.", default_factory=dict)
    bloom: dict[str, Stat | None] = described("Per Bloom level, the mean of its tasks' scores.", default_factory=dict)


class ReviewFigure(FileObject):
    """Human review of one task's readings, or of every task's (``review.tasks.NAME``, ``review.overall``)."""

    reviewed: int = described("Distinct readings with a verdict of right or wrong that still applies (unsure and "
                              "stale ones are left out; an output read alike in several runs is one).", default=0)
    agreed: int = described("Of those, the ones the reviewer read as taxpraben did (verdict right).", default=0)
    agreement: float | None = described(
        "The share of the run's readings a person would read as taxpraben did: the stratified estimate (each "
        "stratum, task by how read, weighed by its share of the covered readings; a reading by its runs); null "
        "when nothing was reviewed.")
    ci95: list[float] | None = described(
        "95% Wilson interval of the agreement at the effective sample size (n_eff); null when nothing was reviewed.")
    n_eff: float | None = described(
        "The effective sample size of the stratified estimate (Kish's, at most p(1-p)/variance); the reviewed count "
        "for a simple random draw.", when="something was reviewed")
    readings: int | None = described("The run's readings (runs counted) this figure is about.", when="written by "
                                     "this version")
    covered: float | None = described("The share of those readings in strata (task, how read) with a verdict: "
                                      "the part of the run the estimate speaks for.", when="written by this version")
    unsure: int = described("Readings whose only verdicts were unsure.", default=0)
    given: float = described("Points (items, 0-1 each, each run counted) the readings gave that the reviewer's answer "
                             "would not have.", default=0.0)
    withheld: float = described("Points the readings withheld that the reviewer's answer would have earned.",
                                default=0.0)
    corrected: list[float | None] | None = described(
        "Estimated score had every reading been a reviewer's: [estimate, low, high] (0-1; the protocol's score "
        "plus the stratified mean of the points the reviewer's answers would change, the bounds from the Wilson "
        "intervals of the shares given and withheld). Never replaces the protocol's score.",
        when="the task's score is computed")


class ReviewDraw(FileObject):
    """The draw the verdicts were given on (``review.draw``)."""

    seeds: list[int] = described("The seeds of the draws (--seed), one per draw recorded.", default_factory=list)
    size: int = described("The draw size asked for (--n; the largest when several).", default=0)
    drawn: int = described("Distinct readings the draw offers on today's readings.", default=0)
    method: str = described("How the draw is made, in words.", default="")


class Review(FileObject):
    """People's verdicts on a draw of the readings (``taxpraben review``; ``OUT/review.jsonl``)."""

    file: str = described("The verdicts' file, relative to the result directory.", default="review.jsonl")
    reviewers: list[str] = described("Who gave verdicts.", default_factory=list)
    overall: ReviewFigure = described("Every task's reviewed readings together.", default_factory=ReviewFigure)
    tasks: dict[str, ReviewFigure] = described("Per task reviewed.", default_factory=dict)
    corrected_overall: list[float | None] | None = described(
        "The Overall Average had every reading been a reviewer's: [estimate, low, high]; the tasks' bounds added "
        "in quadrature, a task no verdict reached with bounds 0 and 1, tasks not read as scored. Never replaces "
        "the Overall Average.")
    draw: ReviewDraw | None = described("The draw (seed, size, how it was made); null when no verdict records it "
                                        "(a hand-written or legacy review.jsonl).", when="written by this version")
    not_yet: int | None = described("Readings of the draw with no verdict that applies yet (a review stopped "
                                    "early, or stale verdicts offered again).", when="the draw is recorded")
    unreviewed_tasks: list[str] = described("Tasks with readings that no verdict (right or wrong) reached: their "
                                            "readings are not in the figure.", default_factory=list)
    partial: bool = described("Whether the review is partial: readings of the draw still without a verdict, or "
                              "tasks not reviewed at all.", default=False)
    applying: int | None = described("Verdicts (a reviewer's last per reading) that apply to today's readings.",
                                     when="written by this version")
    stale: int = described("Verdicts whose reading changed since they were given (another output or another value "
                           "read, e.g. after a rescore): left out of every figure.", default=0)
    stale_readings: list[JSONObject] = described("The stale verdicts: task, id, run, field, reviewer.",
                                                 default_factory=list)
    legacy: int = described("Applying verdicts that do not record what they judged (hand-written, or written before "
                            "verdicts recorded it): taken to judge today's reading.", default=0)
    inter_reviewer: dict[str, int] | None = described(
        "Readings two or more reviewers decided (items) and those on which all gave the same verdict and "
        "answer (agreed).", when="two reviewers decided a reading")
    judge_and_person: dict[str, int] | None = described(
        "Readings both the judge (--judge, --judge-audit) and a person read (items), and those where their "
        "answers agree (agreed).", when="the judge read a reviewed item")
    disagreements: list[JSONObject] = described(
        "The reviewed readings the person read otherwise: task, id, run, field, read (taxpraben's reading), "
        "answer (the person's), gold, and judge (the judge's reading, where it read the item).",
        default_factory=list)
    banner: str | None = described("The reports' warning when the agreement's lower bound is below 90% (see the "
                                   "README, Human review).", when="the lower bound is below 90%")
