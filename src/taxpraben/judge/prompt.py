"""The judge's prompt: a versioned Chinese template, filled with one item's question, its
options, the answer form its task expects and the model's output (never the gold). For a
field task (TaxInspect, TaxPlan) the answer form is a JSON object with exactly the fields
asked of that output (:mod:`.fields`), each with its expected form.

The template ships in the package (``prompt_zh.txt``); ``--judge-prompt FILE`` replaces it.
Lines starting with ``#`` are comments and are not sent; a ``#version: NAME`` line names
the template's version (a file without one is versioned by its sha256). The four
placeholders ``{question}``, ``{options}``, ``{answer_form}`` and ``{output}`` are replaced
literally (not ``str.format``: the worked examples may hold braces, JSON answers for one).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from taxpraben.records import Record
from taxpraben.task_spec import TaskSpec

#: What the judge answers when the output asserts no answer (a copy, a refusal, another question).
NO_ANSWER = "【无答案】"
#: The placeholders a template must hold ({output} and {question} at least).
PLACEHOLDERS = ("{question}", "{options}", "{answer_form}", "{output}")
REQUIRED = ("{question}", "{output}")
_PLACEHOLDER = re.compile("|".join(re.escape(p) for p in PLACEHOLDERS))
BUILTIN = "prompt_zh.txt"
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


class JudgePromptError(ValueError):
    """A ``--judge-prompt`` file that cannot be used (the message names the file and why)."""


@dataclass(frozen=True)
class JudgePrompt:
    """A judge template: its text as sent (comments dropped), its version and its sha256."""

    template: str
    version: str
    sha256: str
    #: The file it came from; None for the built-in template.
    source: str | None = None

    def to_meta(self) -> dict[str, str | None]:
        """What ``meta.judge`` records of the prompt."""
        return {"prompt_version": self.version, "prompt_sha256": self.sha256, "prompt_file": self.source}


def parse_prompt(text: str, source: str | None = None) -> JudgePrompt:
    """The template of ``text``: comment lines dropped, ``#version:`` read; JudgePromptError
    when a required placeholder is missing."""
    version = None
    kept = []
    for line in text.splitlines():
        if line.startswith("#"):
            key, _, value = line[1:].partition(":")
            if key.strip().lower() == "version" and value.strip():
                version = value.strip()
            continue
        kept.append(line)
    template = "\n".join(kept).strip("\n") + "\n"
    where = source or BUILTIN
    missing = [p for p in REQUIRED if p not in template]
    if missing:
        raise JudgePromptError(
            f"{where}: the judge prompt lacks {', '.join(missing)}; a template must hold {{question}} and "
            "{output} (and may hold {options} and {answer_form}), replaced for every item"
        )
    digest = hashlib.sha256(template.encode("utf-8")).hexdigest()
    return JudgePrompt(template, version or f"sha256:{digest[:12]}", digest, source)


def load_prompt(path: Path | None = None) -> JudgePrompt:
    """The template of ``path`` (``--judge-prompt``), else the built-in one; JudgePromptError
    for a file that cannot be read or lacks a placeholder."""
    if path is None:
        text = resources.files("taxpraben.judge").joinpath(BUILTIN).read_text(encoding="utf-8")
        return parse_prompt(text)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise JudgePromptError(f"{path}: cannot read the judge prompt: {exc}") from exc
    return parse_prompt(text, str(path))


def options_text(record: Record) -> str:
    """The record's choices as lettered lines under 选项 (empty without choices)."""
    if not record.choices:
        return ""
    lines = [f"{_LETTERS[k]}. {choice}" for k, choice in enumerate(record.choices[: len(_LETTERS)])]
    return "选项：\n" + "\n".join(lines) + "\n"


def answer_form(spec: TaskSpec, record: Record, fields: Sequence[str] | None = None) -> str:
    """What the judge is asked to write, in the task's own answer form (read from the spec's
    sections, never from the gold): an option letter or a label, a letter set, a number, a
    span; for a field task a JSON object with the keys ``fields`` (None: every
    answer-bearing field of the record), each number in the unit its gold is compared in."""
    from taxpraben.judge.field_judge import fields_form, fields_task  # on first use: it reads items

    if fields_task(spec):
        return fields_form(spec, record, fields)
    if spec.classification is not None and record.choices:
        if spec.classification.option_letters:
            letters = "、".join(_LETTERS[: len(record.choices)])
            return f"一个选项字母（{letters}之一）"
        return "上面选项中的一个，照原文写出选项文字（不写字母）"
    structured = spec.structured
    if structured is not None:
        if structured.kind == "number":
            return "一个数字（阿拉伯数字，单位与题目所问一致，不写单位，不用千分位）"
        if structured.kind == "letters":
            return f"选项字母的集合，按字母顺序连写（如ABD），字母取自{structured.letters}"
        return "考生给出的答案原文（一个词语或短句，照抄考生回答中的答案部分）"
    return "考生给出的最终答案原文"


def fill_prompt(prompt: JudgePrompt, spec: TaskSpec, record: Record, output: str,
                fields: Sequence[str] | None = None) -> str:
    """The judge's message for one output of ``record``: question, options, answer form, output.

    For a field task the form asks ``fields``; None: the fields this output is asked for
    (:func:`~taxpraben.judge.field_judge.prompt_fields`: those the rules leave unread or read
    with low confidence, else all, for the audit), so the message, and the cache key with
    it, depends on the record and the output alone."""
    from taxpraben.judge.field_judge import fields_task, prompt_fields

    if fields is None and fields_task(spec):
        fields = prompt_fields(spec, record, output)
    values = {
        "{question}": record.query.strip(),
        "{options}": options_text(record),
        "{answer_form}": answer_form(spec, record, fields),
        "{output}": output.strip(),
    }
    # One pass over the template: a value holding a placeholder's spelling is not replaced again.
    return _PLACEHOLDER.sub(lambda m: values[m.group(0)], prompt.template)
