"""Classification (TaxTopic, TaxSCQ, TaxCrime): one of the record's choices.

The answer is read as one choice (:func:`taxpraben.parsing.readers.label.read_choice`);
an answer naming none, or hedging between two, is the label "missing" and a format
failure. Task figures are TaxBen's: Accuracy, weighted F1 and Macro-F1 over the gold label
set (scikit-learn), and the task score is (ACC + F1) / 2; an item's score is whether it
is right.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from taxpraben.kinds.base import (
    Finished,
    Kind,
    Metric,
    Noted,
    Prepared,
    SemanticValues,
    chain_for,
    noted,
)

if TYPE_CHECKING:
    import random

    import numpy as np

    from taxpraben.parsing.registry import Comparison
    from taxpraben.records import Record
    from taxpraben.results.json_value import JSONObject, JSONValue
    from taxpraben.results.samples import Sample, Status
    from taxpraben.task_spec import TaskSpec


#: An answer that is one option letter: ``B``, ``B.``, ``(B)``, ``B、``.
_LETTER_ANSWER = re.compile(r"^\s*[(（]?\s*([A-Za-z])\s*[)）.、．:：]?\s*$")
#: An answer that is a letter and its option text: ``B. 增值税``, ``B、增值税``.
_LETTERED_ANSWER = re.compile(r"^\s*[(（]?([A-Z])[)）]?\s*[.、．:：)）]\s*(?P<text>.+?)\s*$")
#: An option listed in a query, one per line: ``A. 增值税``, ``（B）房产税``, ``C、印花税``.
_QUERY_OPTION = re.compile(r"^\s*[(（]?([A-Z])[)）]?\s*[.、．:：)）]\s*(?P<text>.+?)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class LabelForm:
    """How labels are written for a comparison (ACC and F1 compare them as strings): the
    label of option ``index`` read from an output, and the record's gold label."""

    label: Callable[[tuple[str, ...], int], str]
    gold: Callable[[Record], str]


def _gold_option_label(record: Record) -> str:
    assert record.choices is not None
    return option_label(record.choices, record.gold) if record.gold is not None else record.gold_label


#: The labels of each comparison: this project's (an option's text, lettered when texts
#: repeat) and TaxBen's (the choice lower-cased, C1 and C3: ``taxpraben.parsing.readers.taxben``).
LABEL_FORMS: dict[Comparison, LabelForm] = {
    "taxpraben": LabelForm(lambda choices, index: option_label(choices, index), _gold_option_label),
    "taxben": LabelForm(lambda choices, index: choices[index].lower(), lambda record: record.gold_label.lower()),
}


def _letter_index(letter: str) -> int:
    return ord(letter.upper()) - ord("A")


def gold_index(answer: JSONValue, choices: Sequence[str], query: str) -> int | None:
    """The index into ``choices`` that ``answer`` names, or None.

    In order: the answer is one of the choices (the first position when texts repeat); a
    letter (``"B"``) indexing the choices; a letter with its text (``"B. 增值税"``); when the
    choices are the letters themselves (``["A", "B", "C", "D"]``, texts in the query), the
    option text that the query lists under a letter.
    """
    if not isinstance(answer, str) or not answer.strip():
        return None
    if answer in choices:
        return choices.index(answer)
    letter = _LETTER_ANSWER.match(answer)
    if letter is not None and 0 <= _letter_index(letter.group(1)) < len(choices):
        return _letter_index(letter.group(1))
    lettered = _LETTERED_ANSWER.match(answer)
    if lettered is not None:
        i = _letter_index(lettered.group(1))
        if 0 <= i < len(choices) and choices[i].strip() == lettered.group("text"):
            return i
    if all(len(c.strip()) == 1 and c.strip().isalpha() for c in choices):
        listed = {m.group("text"): m.group(1) for m in _QUERY_OPTION.finditer(query)}
        letter_of = listed.get(answer.strip())
        upper = [c.strip().upper() for c in choices]
        if letter_of is not None and letter_of in upper:
            return upper.index(letter_of)
    return None


def option_label(choices: tuple[str, ...], index: int) -> str:
    """The label of option ``index``: its text, or "B. text" when another option has the
    same text (repeated options are told apart by their letter)."""
    text = choices[index]
    if choices.count(text) > 1:
        return f"{chr(65 + index)}. {text}"
    return text


def _letters_are_choices(choices: tuple[str, ...]) -> bool:
    return all(c.strip().upper() == chr(65 + i) for i, c in enumerate(choices))


def _lettered(spec_says: bool, choices: tuple[str, ...], query: str) -> bool:
    """Options are lettered when the spec says so, when the choices are the letters
    themselves ("A".."D"), or when the question lists one letter per choice."""
    if spec_says or _letters_are_choices(choices):
        return True
    from taxpraben.parsing.readers.letters import listed_option_letters

    return len(listed_option_letters(query, "ABCDEFGH")) == len(choices) >= 2


def option_names(choices: tuple[str, ...], query: str) -> list[str] | None:
    """When the choices are the letters themselves, the option texts the question lists."""
    if not _letters_are_choices(choices):
        return None
    from taxpraben.parsing.readers.letters import listed_option_texts

    listed = listed_option_texts(query)
    names = [listed.get(chr(65 + i), "") for i in range(len(choices))]
    return names if all(names) else None


class ClassificationKind(Kind):
    name = "classification"
    label = "Classification"
    sections = frozenset({"classification"})
    declared = (
        Metric("acc", "ACC", "accuracy", column=10),
        Metric("f1", "F1", "F1 weighted by gold class size over the gold label set", column=20),
        Metric("macro_f1", "Macro-F1", "unweighted mean of per-class F1 over the gold label set",
               in_score=False, column=30),
        Metric("missing_rate", "Missing", "share of answers naming no choice", in_score=False,
               always=True, display="rate"),
    )

    # ------------------------------------------------------------------ data

    def check_gold(self, spec: TaskSpec, obj: JSONObject, answer: JSONValue, choices: tuple[str, ...] | None,
                   bad: Callable[[str, str], None]) -> tuple[JSONValue, int | None]:
        """A classification record needs its choices and names its gold: a ``gold`` index
        (with an ``answer`` that agrees) or an ``answer`` naming one choice."""
        raw_gold = obj.get("gold")
        query = given if isinstance(given := obj.get("query"), str) else ""
        gold: int | None = None
        if obj.get("choices") is None:
            bad("a classification record needs a list of choices", "choices")
        if raw_gold is not None:
            if isinstance(raw_gold, bool) or not isinstance(raw_gold, int):
                bad(f"must be an integer index into choices, got {raw_gold!r}", "gold")
            elif choices is not None and not 0 <= raw_gold < len(choices):
                bad(f"index {raw_gold} is out of range for {len(choices)} choices", "gold")
            elif choices is not None:
                gold = raw_gold
                named = gold_index(answer, choices, query)
                same_text = isinstance(answer, str) and answer == choices[gold]
                if isinstance(answer, str) and answer.strip() and not same_text and named != gold:
                    bad(f"answer {answer!r} disagrees with choices[gold] = {choices[gold]!r}", "answer")
        elif choices is not None and answer is not None:
            gold = gold_index(answer, choices, query)
            if gold is None:
                bad(f"answer {answer!r} is not one of the choices (nor a letter of one) and no "
                    "'gold' index is given", "answer")
        return answer, gold

    def baseline_answer(self, baseline: str, spec: TaskSpec, record: Record, rng: random.Random) -> str | None:
        if baseline == "first-choice" and record.choices and spec.classification_options.option_letters:
            return "A"
        return None


    def reading_kind(self, spec: TaskSpec) -> str:
        return "label"

    # ------------------------------------------------------------------ items

    def prepare(self, spec: TaskSpec, record: Record, item: Sample, text: str, failed: bool) -> Prepared:
        # The readers are imported on first use: loading data needs the kind, not them.
        from taxpraben.parsing.readers.label import read_choice
        from taxpraben.parsing.readers.letters import options_numbered
        from taxpraben.parsing.rules import chain_comparison

        assert record.choices is not None
        opts = spec.classification_options
        choices = record.choices
        names_of_chain = chain_for(spec, "label")
        form = LABEL_FORMS[chain_comparison(names_of_chain)]
        label: str | None = None
        reading = None
        failure: str | None = None
        answers: list[str] = []
        if not failed:
            numbered = options_numbered(record.query, choices)
            names = option_names(choices, record.query)
            reading = read_choice(
                text,
                choices,
                option_letters=_lettered(opts.option_letters, choices, record.query),
                markers=opts.answer_markers,
                query=record.query,
                aliases=opts.aliases,
                names=names,
                chain=names_of_chain,
                raw=item.text,
                option_numbers=numbered,
            )
            index = reading.value if isinstance(reading.value, int) else None
            label = None if index is None else form.label(choices, index)
            failure = reading.failure
            if index is not None:  # the texts the answer may be written as, preferred first
                answers = [*(names[index:index + 1] if names else ()), choices[index],
                           *(opts.aliases or {}).get(choices[index], ()),
                           str(index + 1) if numbered else chr(65 + index)]
        status: Status = "error" if failed else ("format_failure" if label is None else "ok")
        how = Noted() if reading is None else noted(status, item.text, reading.rule, reading.source, answers,
                                                    reading.span)  # fmt: skip
        if how.confidence == "high":
            from taxpraben.parsing.doubt import doubt

            if doubt("label", text, label, how.read_by) is not None:
                how = replace(how, confidence="low")  # a sure rule on an output in doubt
        return _labelled(label, form.gold(record), failed, failure, how)

    def finish(self, spec: TaskSpec, item: Sample, values: SemanticValues) -> Finished:
        """An item's score is whether its label is right (F1 exists only over a task)."""
        return Finished(dict(item.scores), item.scores["acc"], item.fields)

    # ------------------------------------------------------------------ task figures

    def run_metrics(self, spec: TaskSpec, items: Sequence[Sample]) -> tuple[dict[str, float | None], float | None]:
        from taxpraben.metrics.classification import classification_metrics

        computed = classification_metrics([it.label_gold or "" for it in items], [it.label_pred or "" for it in items])
        metrics: dict[str, float | None] = {key: computed[key] for key in self.reported(spec)}
        parts = [computed[key] for key in self.score_parts(spec)]
        return metrics, sum(parts) / len(parts)

    def bootstrap(self, spec: TaskSpec, items_by_run: list[list[Sample]], idx: np.ndarray,
                  ) -> tuple[dict[str, list[float] | None], np.ndarray | None]:
        """ACC and weighted F1 of each resample (vectorised), averaged over runs."""
        import numpy as np

        from taxpraben.aggregate import percentile_interval
        from taxpraben.metrics.classification import bootstrap_acc_f1, encode_labels

        accs, f1s = [], []
        for items in items_by_run:
            g, p, k = encode_labels([it.label_gold or "" for it in items], [it.label_pred or "" for it in items])
            acc, f1 = bootstrap_acc_f1(g, p, k, idx)
            accs.append(acc)
            f1s.append(f1)
        reps = {"acc": np.mean(accs, axis=0), "f1": np.mean(f1s, axis=0)}
        intervals: dict[str, list[float] | None] = {key: percentile_interval(reps[key]) for key in ("acc", "f1") if key in self.reported(spec)}
        parts = [reps[key] for key in self.score_parts(spec)]
        return intervals, sum(parts) / len(parts)


KIND = ClassificationKind()


def _labelled(label: str | None, gold: str, failed: bool, failure: str | None, reading: Noted) -> Prepared:
    """The item's labels and accuracy; no label read from an output is a format failure."""
    from taxpraben.metrics.classification import MISSING_LABEL
    from taxpraben.parsing.region import NO_ANSWER

    status: Status = "error" if failed else "ok"
    if label is None and not failed:
        status, failure = "format_failure", failure or NO_ANSWER
    pred = label if label is not None else MISSING_LABEL
    return Prepared(status, pred, failure, {"acc": float(pred == gold)}, label_gold=gold, label_pred=pred,
                    reading=reading)
