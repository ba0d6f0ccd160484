"""results.json's ``meta``: how the model was asked, the endpoint, the scorers, the counts, the
shards, and the manifest of what it takes to reproduce the run."""

from __future__ import annotations

from taxpraben.results.figures import JudgeMeta
from taxpraben.results.file_object import FileObject, Number, described, required
from taxpraben.results.json_value import JSONObject, JSONValue


class GenerationMeta(FileObject):
    """How the model was asked (``meta.generation``)."""

    temperature: Number | None = described("Sampling temperature.")
    top_p: Number | None = described("Nucleus sampling threshold; null for the backend's default.")
    max_tokens: int | None = described("Most tokens generated per answer.")
    seed_base: int | None = described("Run k uses seed seed_base + k where the backend takes a seed.")
    system_prompt: str | None = described("The system message, if any.")
    gen_kwargs: JSONObject | None = described("Further backend arguments (--gen-kwargs).")


class GenerationStats(FileObject):
    """What generation did (``meta.generation_stats``)."""

    generations: int | None = described("Distinct generations needed (runs share one when decoding is deterministic).")
    cached: int | None = described("Generations taken from the cache.")
    generated: int | None = described("Generations made in this run.")
    failed: int | None = described("Generations that failed (scored as errors).")
    retries: int | None = described("Retried requests.")
    prompt_tokens: int | None = described("Prompt tokens reported by the backend.")
    completion_tokens: int | None = described("Completion tokens reported by the backend.")


class EndpointFigures(FileObject):
    """One endpoint of a run with several ``--base-url`` (``meta.endpoints[k]``)."""

    endpoint: str = required("The endpoint's URL (no secrets).")
    sent: int | None = described("Attempts sent to it.")
    completed: int | None = described("Answers it gave.")
    failed: int | None = described("Failed attempts.")
    mean_latency_s: Number | None = described("Mean latency of its answers, in seconds.")
    throughput_rps: Number | None = described("The last moving average of its measured throughput (requests/s).")
    ejections: int | None = described("How often it was taken out of rotation.")


class ScorerInfo(FileObject):
    """A semantic scorer's settings and whether it loaded (``meta.scorers.NAME``).

    BERTScore adds ``layer``, ``idf``, ``max_tokens``, ``rescale_with_baseline``, ``score``,
    ``reference``; BARTScore adds ``weights``, ``max_length``, ``source``, ``target``, ``raw``,
    ``normalised``; both add ``dtype``, ``exact``, ``device``, ``transformers``.
    """

    model: str | None = described("The model's path or hub id.")
    layer: int | None = described("The hidden layer used.", when="bertscore")
    dtype: str | None = described("float32 | tf32 | bf16 (--scorer-dtype).")
    exact: bool | None = described(
        "True only for float32, the reference implementations' numbers.", when="the scorer loaded"
    )
    available: bool = described("False when the scorer could not be loaded.", default=True)
    reason: str | None = described("Why it is unavailable.")


class Counts(FileObject):
    """What was scored (``meta.counts``)."""

    items: int | None = described("Records scored (per run).")
    predictions: int | None = described("Predictions given (every line read).")
    scored_predictions: int | None = described("Predictions matched to a record and run, and scored.")
    missing_predictions: int | None = described("(record, run) pairs without a prediction: scored 0 as errors.")
    unknown_predictions: int | None = described("Predictions for a task or id not in the data: ignored.")
    duplicate_predictions: int | None = described(
        "Always 0: duplicate predictions for one (task, id, run) are refused before scoring; "
        "kept so that readers of schema 1 find it."
    )
    errors: int | None = described("Sample lines with status error, over all runs.")
    format_failures: int | None = described("Sample lines with status format_failure, over all runs.")


class ShardInfo(FileObject):
    """Which shard a shard's own results are of (``meta.shard``)."""

    index: int = required("This shard's index, from 0.")
    count: int = required("The number of shards.")
    records: int | None = described("Records this shard owns.")
    partial: bool | None = described("Always true: the figures are of this shard's records only.")


class ShardRef(FileObject):
    """A merged shard (``meta.merged_from.shards[k]``)."""

    index: int = required("The shard's index.")
    count: int = required("The number of shards.")


class MergedFrom(FileObject):
    """What ``taxpraben merge`` combined (``meta.merged_from``)."""

    sources: list[str] = described("The merged directories or files.", default_factory=list)
    shards: list[ShardRef] = described("The shards merged, by index.", default_factory=list)
    gaps: int = described("Missing predictions scored as errors (with --force).", default=0)
    forced: bool = described("Whether --force let gaps or problems through.", default=False)


class ManifestVersion(FileObject):
    """The taxpraben that wrote the results (``meta.manifest.taxpraben``)."""

    version: str = required("taxpraben's installed version.")
    git_commit: str | None = described("The source commit; null outside a git checkout.")


class ManifestFile(FileObject):
    """One task's data file (``meta.manifest.data_files.TASK``)."""

    path: str = required("The file read.")
    sha256: str = required("sha256 (hex) of the file's bytes.")


class ManifestSpec(FileObject):
    """One task's spec (``meta.manifest.task_specs.TASK``)."""

    path: str | None = described("The spec file; null for a spec registered by a plugin.")
    sha256: str = required("sha256 (hex) of the spec's canonical JSON (sorted keys, compact, UTF-8).")


class ManifestScorer(FileObject):
    """One semantic scorer's model (``meta.manifest.scorers.NAME``)."""

    model: str = required("The model's hub id or local directory.")
    revision: str | None = described(
        "A hub id: the commit of its snapshot in the local Hugging Face cache; a local directory: its path; "
        "null when neither is known."
    )
    weights_sha256: str | None = described(
        "A local directory: sha256 of its weights file (model.safetensors or pytorch_model.bin); else null."
    )


class Manifest(FileObject):
    """What a run needs to be reproduced and compared (``meta.manifest``): versions, the
    exact data and specs (hashes), the decoding, the limit and the scorers' revisions.
    Results written before it have none; readers then compare ``meta.data_hash``."""

    taxpraben: ManifestVersion = required("taxpraben's version and commit.")
    python: str = required("The Python version.")
    platform: str = required("The operating system and machine (platform.platform()).")
    packages: dict[str, str | None] = described(
        "Installed versions of torch, transformers, aiohttp, numpy, pydantic; null where not installed.",
        default_factory=dict,
    )
    devices: list[str] = described(
        "The scorers' devices (as resolved when they loaded), else the --device value's entries.",
        default_factory=list,
    )
    data_files: dict[str, ManifestFile] = described("Each task's data file and its sha256.", default_factory=dict)
    task_specs: dict[str, ManifestSpec] = described("Each task's spec file and its sha256.", default_factory=dict)
    prompt_template_sha256: str = required(
        "sha256 of what turns a record into messages: taxpraben.prompts' source text (the query is sent "
        "verbatim; there is no template string)."
    )
    generation: GenerationMeta | None = described("The decoding settings (as ``meta.generation``); null for `score`.")
    model_args: JSONObject | None = described("The model's construction arguments, where given.")
    limit: Number | None = described("--limit: records per task (an integer) or a fraction of each task; null for all.")
    scorers: dict[str, ManifestScorer] = described(
        "The semantic scorers' models and revisions; empty with --no-semantic.", default_factory=dict
    )
    judge: JSONValue = described("An LLM judge's model and revision; null (no task uses a judge yet).")
    scorer_setup: dict[str, JSONObject] | None = described(
        "Each semantic scorer's setup as far as it decides the scores: model, revision, weights' sha256, "
        "layer, idf, truncation, dtype, and the device kind where the dtype is not exact; results whose "
        "setups differ are not ranked together (report, diff) unless --force. Null: results written before "
        "it (readers derive it from ``meta.scorers``)."
    )
    paper_scorer: bool | None = described(
        "True when the scorer setup is the paper's (BERTScore hfl/chinese-xlnet-base layer 5, BARTScore "
        "facebook/bart-large-cnn, float32); false: every report says 'non-standard scorer'. Null without "
        "semantic scores."
    )
    served_models: list[str] | None = described(
        "The model ids the server started by --serve listed at /models (empty: it listed none).",
        when="`run --serve`",
    )
    started_at: str = required("ISO 8601 UTC start time.")
    finished_at: str = required("ISO 8601 UTC end time.")


class Meta(FileObject):
    """How the results were made (``meta``)."""

    model: str | list[str] | None = described(
        "The model spec (openai:NAME, hf:PATH, replay:FILE, baseline:NAME); null for ``score``; "
        "the list of models a merge found when its sources name several."
    )
    endpoint: str | None = described("The endpoint URL without secrets; several replicas: their URLs sorted, comma-joined.")
    endpoints: list[EndpointFigures] | None = described(
        "Per-endpoint figures (docs/scaling.md).", when="`run` with several --base-url endpoints"
    )
    generation: GenerationMeta | None = described("The generation settings; null for ``score``.")
    model_args: JSONObject | None = described(
        "--model-args as parsed (hf: from_pretrained arguments such as dtype and revision; openai: extra "
        "request body fields); null without them.",
        when="`run`",
    )
    chat_template: str | None = described(
        "hf: the chat template applied to each query ('tokenizer template sha256:<12 hex>' of its text) or "
        "'none: raw query (why)'; null for other backends.",
        when="`run` with hf:",
    )
    generation_stats: GenerationStats | None = described("What generation did.", when="`run`")
    predictions_file: str | list[str] | None = described(
        "The predictions file scored (a list when several were read).", when="`score`"
    )
    runs: int | None = described("Runs scored (every figure is over these).")
    shared_generation: bool = described(
        "True when the runs share one deterministic generation.", default=False
    )
    data_dir: str | None = described("The data directory.")
    data_hash: str | None = described("sha256 of the dataset files actually scored.")
    limit: Number | None = described("--limit: records per task (an integer) or a fraction of each task (0.1 = the "
                                  "first 10%, rounded up); null for all.")
    profile: str | None = described("Scoring profile: taxpraben or taxben.")
    scorers: dict[str, ScorerInfo] = described("Semantic scorers by name: bertscore, bartscore.", default_factory=dict)
    package_version: str | None = described("taxpraben's version.")
    git_hash: str | None = described("The source commit; null outside a git checkout.")
    started_at: str | None = described("ISO 8601 UTC start time.")
    finished_at: str | None = described("ISO 8601 UTC end time.")
    tasks: list[str] = described("The tasks scored, in table order.", default_factory=list)
    counts: Counts = described("What was scored.", default_factory=Counts)
    warnings: list[str] = described(
        "Problems met while matching predictions and loading data (also printed).", default_factory=list
    )
    shard: ShardInfo | None = described(
        "The shard these figures are of.", when="a shard's own results (`run --shard I/N`, N > 1)"
    )
    merged_from: MergedFrom | None = described("What was merged.", when="`taxpraben merge`")
    pricing: JSONObject | None = described(
        "The prices the costs are computed with: file, currency, the matched model entry and its prices "
        "per million tokens.",
        when="--pricing",
    )
    manifest: Manifest | None = described(
        "Versions, hashes and revisions of what made the results; absent in files written before it.",
        when="`run`, `score` and `merge`",
    )
    judge: JudgeMeta | None = described("The second reader and its audit.", when="--judge")
