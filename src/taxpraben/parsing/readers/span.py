"""Short-answer spans (TaxRead): what the answer is, and when two spans are the same.

:func:`normalize_span` is the comparison form of a span:

- NFKC character folding (as in :mod:`taxpraben.parsing.clean`), Latin case-folded;
- Chinese numerals that count something are written in digits (``三月一日`` = ``3月1日``,
  ``十五日内`` = ``15日内``, ``第六十三条`` = ``第63条``, ``百分之十二`` = ``12%``): a run of
  numeral characters followed by a unit of time, count or law (年 月 日 天 个 条 款 项 倍 次
  周 季 ...), after ``第``, or after ``百分之``;
- all whitespace removed (Chinese has no word spaces; ``"13 %"`` = ``"13%"``);
- all punctuation removed, ASCII and Chinese (``，。、：；！？“”《》【】（）`` ...), with
  three exceptions that carry meaning in numbers: ``%``; a ``.`` between two digits (a
  decimal point); a ``-`` right before a digit and not after one (a sign);
- thousands separators therefore disappear (``12,000元`` = ``12000元``); units and currency
  stay (``12000元`` != ``12000``) and trailing zeros count (``12.50`` != ``12.5``).

:func:`extract_span` picks the answer out of an output, in the answer region shared by every
reader (:mod:`taxpraben.parsing.region`): a JSON answer field; else the final statements
(``\boxed{}``, ``答案：``, ``最终答案``, a self-correction's ``应为 X``), latest first; else
the summaries (``综上所述，…为X``); else the whole output. In the text chosen, a **bold**,
quoted (“X”, 「X」) or 《titled》 span is the answer when there is one; else its first clause
(up to ``，。；！？\n``; the first sentence when the gold itself has a comma), without a
trailing bracketed aside (``百分之五（5%）`` is ``百分之五``).

:func:`span_match` is exact match of the normalised forms of the extracted span and the
gold, or, failing that, the gold standing as a phrase of the decisive sentence: it occurs
there after a boundary (the start, punctuation, ``的 为 是 在 于 自 从 按 即 以后 次年 截至``) and before a
boundary (the end, punctuation, or a deadline suffix ``内 以内 之内 前 止 起``), with no
negation (``不 非 未 无``) right before it. So ``取得所得的次年三月一日至六月三十日`` matches the
gold ``次年三月一日至六月三十日``, ``60日内`` matches ``60日`` and ``以后三年内`` matches ``三年``, but ``企业所得税`` does not
match ``所得税`` and ``不是三年`` does not match ``三年``. A gold that is one amount or rate
also matches when the decisive sentence holds exactly one number of its kind and it is equal
at 2 decimals (``罚款金额为162500元`` answers ``162,500.00元``); a count or a multiple too
(``取得增值税专用发票112份`` answers ``112份``, ``处以0.6倍罚款`` answers ``0.6倍``), unless the number
carries another such unit (``112张``). Ranges are compared with
``至`` (``3%—5%`` = ``百分之三至百分之五``). An empty normalised gold never matches. TaxBen's rule (profile ``taxben``)
lives in :mod:`taxpraben.parsing.readers.taxben`.

**The rules.** Each step above is a rule declared here, beside its attempt over one
:class:`SpanView` of the output (the rules several kinds share are declared in
:mod:`taxpraben.parsing.readers.shared`, their span attempts here); the ``span`` chain
(:data:`SPAN_CHAIN`) runs them in order. A span veto keeps, as its
value, the span the output would have given (``""`` for a copy of the prompt, the refusal
itself): samples.jsonl writes it as ``extracted``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import replace
from functools import cached_property, wraps

from taxpraben.parsing.chain import Chain, chain_for
from taxpraben.parsing.clean import clean_prediction, fold_characters
from taxpraben.parsing.closing import stops_mid_sentence
from taxpraben.parsing.jsonish import answer_text, answer_value, find_json_values
from taxpraben.parsing.latex import strip_latex
from taxpraben.parsing.numbers import find_numbers, numbers_equal, parse_number
from taxpraben.parsing.prompt_copy import COPY_OF_PROMPT, own_answer, restates_document
from taxpraben.parsing.readers.shared import (
    ANOTHER_QUESTION_RULE,
    COPY_OF_PROMPT_RULE,
    JSON_ANSWER_RULE,
    NO_ANSWER_RULE,
)
from taxpraben.parsing.region import (
    NO_ANSWER,
    REFUSAL,
    Reading,
    answer_statements,
    corrected_part,
    is_refusal,
    veto_of,
)
from taxpraben.parsing.registry import Example, register_rule
from taxpraben.parsing.span_words import question_of, words_answer
from taxpraben.parsing.yes_no import opens_yes_or_no

__all__ = [
    "SPAN_ANSWER_KEYS",
    "SPAN_CHAIN",
    "SpanView",
    "extract_span",
    "normalize_span",
    "read_span",
    "read_span_answer",
    "span_chain",
    "span_match",
    "span_reading",
]


#: JSON keys holding a short answer, in priority order.
SPAN_ANSWER_KEYS: tuple[str, ...] = ("最终答案", "final_answer", "答案", "answer", "结果", "result")

#: What opens an answer without being part of it: markup, a copula, and an English opener that
#: cites the material or the moment ("Based on the context you provided, …", "According to the
#: passage, …", "At the moment, …"): the answer's frame, not its words.
_LEAD = re.compile(
    r"[\s:：是为*#>】\]]*(?:(?i:(?:based\s+on|according\s+to|from|in\s+light\s+of|given)\s+(?:the\s+|this\s+|your\s+)?"
    r"(?:provided\s+|given\s+)?(?:context|passage|text|document|information|script|dialogue|story|facts|details|data)"
    r"|at\s+the\s+moment|currently|as\s+of\s+now)[^,，.\n]{0,40}[,，]\s*)?"
)
_SENTENCE_END = re.compile(r"[。；;！!？?\n]")
_CLAUSE_END = re.compile(r"[，。；;！!？?\n]")
#: An English sentence's full stop: a period before the next sentence's capital (not a decimal point).
_ENGLISH_STOP = re.compile(r"\.(?=\s+[A-Z\"“])")
_BOLD = re.compile(r"\*\*([^*\n]{1,80}?)\*\*|__([^_\n]{1,80}?)__")
_QUOTED = re.compile(r"[“「『\"]([^”」』\"\n]{1,80})[”」』\"]")
_TITLED = re.compile(r"《[^》\n]{1,80}》")
_ASIDE = re.compile(r"\s*[(（][^()（）]*[)）]\s*$")
#: How many statements a span is looked for in before the whole output is used.
_MAX_TEXTS = 50
#: The measure words of a count of things ("四颗", "七卷"), in the counts a gold gives (:data:`_COUNT_UNIT`)
#: and in what a count in Chinese numerals is counted in (:data:`_MEASURE_WORDS`: "三个月", "四颗"),
#: whose numerals are read as digits.
_COUNTERS = "颗|只|本|部|位|座|块|把|根|片|种|集|卷|话|章"
_MEASURE_WORDS = "个月|个工作日|年|月|日|天|个|条|款|项|倍|次|周|季|期|岁|小时|%|名|张|份|件|辆|台|" + _COUNTERS
_CN_RUN = re.compile(
    r"(?P<pre>第|百分之)?(?P<run>[零〇一二两三四五六七八九十百千万]+)"
    r"(?P<unit>(?(pre)|(?=" + _MEASURE_WORDS + r")))"
)


def _numerals_to_digits(text: str) -> str:
    if _CN_RUN.search(text) is None:  # no Chinese numeral: cn2an (~0.1-0.25 s to import) not needed
        return text
    import cn2an  # on first use: ~0.25 s to import, not for the start of every run

    def convert(m: re.Match[str]) -> str:
        run = m.group("run")
        if m.group("pre") is None and not m.group("unit") and not re.match(
            r"(?:" + _MEASURE_WORDS + r")", text[m.end() :]
        ):
            return m.group(0)
        try:
            value = int(cn2an.cn2an(run, "normal"))
        except Exception:  # not a numeral after all (万一, 千万 as "by all means")
            return m.group(0)
        if m.group("pre") == "百分之":
            return f"{value}%"
        return (m.group("pre") or "") + str(value)

    return _CN_RUN.sub(convert, text)


def _keep(text: str, i: int) -> bool:
    c = text[i]
    if c == "%":
        return True
    before = text[i - 1] if i > 0 else ""
    after = text[i + 1] if i + 1 < len(text) else ""
    if c == ".":
        return before.isdigit() and after.isdigit()
    if c == "-":
        return after.isdigit() and not before.isdigit()
    return False


_RANGE_DASH = re.compile(r"(?<=[\d%])\s*(?:[—–~～\-]|到)\s*(?=\d)")


def _folded(text: str) -> str:
    """Folded, case-folded, numerals in digits, ranges with 至, no whitespace; punctuation kept."""
    text = _numerals_to_digits("".join(fold_characters(str(text)).casefold().split()))
    return _RANGE_DASH.sub("至", text)


def _strip_punctuation(folded: str) -> str:
    return "".join(
        c
        for i, c in enumerate(folded)
        if not unicodedata.category(c).startswith("P") or _keep(folded, i)
    )


def normalize_span(text: str) -> str:
    """The comparison form of a span (rules in the module docstring)."""
    if not text:
        return ""
    return _strip_punctuation(_folded(text))


def _first_sentence(text: str, clause: bool = False) -> str:
    lead = _LEAD.match(text)
    text = text[lead.end() :] if lead else text
    end = (_CLAUSE_END if clause else _SENTENCE_END).search(text)
    # Markdown emphasis around the answer (**三十日**) or closing inside it ("1**.") is not part of it.
    span = _EMPHASIS.sub("", (text[: end.start()] if end else text)).strip().strip("*_`").strip()
    return _ASIDE.sub("", span).strip("*_` ") or span


#: Markdown emphasis markers: bold and italic pairs, never an answer's words.
_EMPHASIS = re.compile(r"\*\*|__|(?<![\w*])\*(?=\S)|(?<=\S)\*(?![\w*])")


def _marked_span(text: str, clause: bool = True, query: str = "") -> str | None:
    """A bold, quoted or titled span in the first clause (or sentence) of ``text``; not a term
    the question itself marks ("the character referred to as "$$MASK$$" is …": what is asked
    about, quoted back, is no answer)."""
    lead = _LEAD.match(text)
    body = text[lead.end() :] if lead else text
    end = (_CLAUSE_END if clause else _SENTENCE_END).search(body)
    sentence = body[: end.start()] if end else body
    asked = _strip_punctuation(_folded(query))
    for pattern in (_BOLD, _QUOTED, _TITLED):
        for m in pattern.finditer(sentence):
            inner = next((g for g in m.groups() if g), m.group(0)) if m.groups() else m.group(0)
            inner = _ASIDE.sub("", inner.strip()).strip()
            key = _strip_punctuation(_folded(inner))
            if key and key in asked and re.search(r"[\"“'‘*«「『《$]\W{0,2}" + re.escape(_folded(inner)), _folded(query)):
                continue  # marked in the question too: the question's own term
            # A bold line that is the whole answer keeps its own rules (first clause).
            if inner and key != _strip_punctuation(_folded(sentence)):
                return inner
    return None


def _answer_texts(cleaned: str) -> list[tuple[str, str]]:
    """Where the answer is, most authoritative first (module docstring), each with the rule
    that names it; the whole output last."""
    texts: list[tuple[str, str]] = []
    found, value = answer_value(find_json_values(cleaned), SPAN_ANSWER_KEYS)
    if found:
        texts.append((clean_prediction(answer_text(value)), JSON_ANSWER_RULE.name))
    for statement in answer_statements(cleaned):
        if len(texts) >= _MAX_TEXTS:
            break
        body = statement.text
        if statement.kind == "correction":
            corrected = corrected_part(body)
            if corrected is None:
                continue
            body = corrected
        elif statement.kind == "conclusion" and statement.marker not in ("综上所述", "综上", "总之", "结论"):
            continue
        texts.append((body, ANSWER_STATEMENT_SPAN_RULE.name))
    texts.append((cleaned, WHOLE_OUTPUT_RULE.name))
    return texts


def _span_of(body: str, clause: bool) -> str:
    return _marked_span(body, clause) or _first_sentence(body, clause)


#: An output this short, one sentence, is the answer itself ("万分之五", "2025年6月30日。").
_BARE_SPAN = 30


def _extract(cleaned: str, texts: list[tuple[str, str]], clause: bool) -> tuple[str, str]:
    for body, rule in texts[:-1]:
        span = _span_of(body, clause)
        if span:
            return span, rule
    marked = _marked_span(cleaned, clause)
    if marked:
        return marked, MARKED_RULE.name
    bare = len(cleaned.strip()) <= _BARE_SPAN and not _SENTENCE_END.search(cleaned.strip().rstrip("。.！!"))
    return cleaned, BARE_SPAN_RULE.name if bare else WHOLE_OUTPUT_RULE.name


_BEFORE = ("的", "为", "是", "在", "于", "自", "从", "按", "即", "系", "起", "以后", "次年", "截至")
_DEADLINE_END = ("内", "前", "止", "起")
_FRAME = ("在", "于", "自", "从", "起")
_AFTER = ("内", "以内", "之内", "前", "以前", "止", "为止", "起")
_NEGATION = re.compile(r"[不非未无]\S{0,1}$")


def _is_punctuation(c: str) -> bool:
    return unicodedata.category(c).startswith("P") or c in "*_`"


def _phrase_in(sentence: str, gold: str) -> bool:
    """The gold stands as a phrase of ``sentence`` (boundaries in the module docstring)."""
    hay, needle = _folded(sentence), _folded(gold).strip("".join(c for c in "。，；！？.,;!?"))
    if len(_strip_punctuation(needle)) < 2:
        return False
    start = hay.find(needle)
    while start >= 0:
        before, after = hay[:start], hay[start + len(needle) :]
        left = not before or _is_punctuation(before[-1]) or before.endswith(_BEFORE)
        framed = before.endswith(_FRAME) and after.startswith(_AFTER)  # 在…内, 自…起
        right = framed or not after or _is_punctuation(after[0]) or needle.endswith(_DEADLINE_END) or any(
            after.startswith(suffix) and (len(after) == len(suffix) or _is_punctuation(after[len(suffix)]))
            for suffix in _AFTER
        )
        if left and right and not _NEGATION.search(before.rstrip("*_`“”\"'")):
            return True
        start = hay.find(needle, start + 1)
    return False


#: The golds of a yes/no question, as :func:`normalize_span` writes them.
_POLAR_GOLDS = ("yes", "no")


def span_match(pred: str, gold: str, question: str = "") -> bool:
    """Whether an output answers the gold span (rules in the module docstring); ``question``:
    what the prompt asks (:func:`~taxpraben.parsing.span_words.question_of`)."""
    target = normalize_span(gold)
    if not target:
        return False
    clause = "，" not in fold_characters(str(gold))
    cleaned = strip_latex(clean_prediction(pred))
    if not cleaned:
        return False
    polar = opens_yes_or_no(cleaned) if target in _POLAR_GOLDS else None
    if polar is not None:  # a yes/no question answered in any language ("Não, …", "是的，…")
        return polar == (target == "yes")
    texts = _answer_texts(cleaned)
    extracted = _extract(cleaned, texts, clause)[0]
    if normalize_span(extracted) == target or _bare_amount_in_gold(extracted, str(gold)) or _same_list(extracted, str(gold)):
        return True
    body = texts[0][0]
    lead = _LEAD.match(body.lstrip("，,"))
    body = body.lstrip("，,")[lead.end() :] if lead else body
    ends = [m.start() for m in (_SENTENCE_END.search(body), _ENGLISH_STOP.search(body)) if m]  # the first sentence
    sentence = body[: min(ends)] if ends else body
    return _phrase_in(sentence, gold) or _same_amount(sentence, gold, question) or _bare_amount_in_gold(sentence, str(gold)) \
        or words_answer(sentence, str(gold), question)


#: What joins the items of a list: a comma or an enumeration comma, a slash, "and", 和, 与, 及.
_LIST_JOINER = re.compile(r"\s*(?:[、/;；]|[,，](?!\d)|(?<![A-Za-z])(?i:and)(?![A-Za-z])|和|与|及|以及)\s*")  # not "1,250"


def _same_list(span: str, gold: str) -> bool:
    """The span and the gold list the same two or more items, joined otherwise ("企业、大黄蜂" for
    "企业和大黄蜂", "Tom, Jerry" for "Tom and Jerry")."""
    if not _LIST_JOINER.search(gold):
        return False
    items = sorted(filter(None, (normalize_span(part) for part in _LIST_JOINER.split(span))))
    return len(items) >= 2 and items == sorted(filter(None, (normalize_span(part) for part in _LIST_JOINER.split(gold))))


def _same_amount(sentence: str, gold: str, question: str = "") -> bool:
    """A gold that is one amount or rate: the sentence's only number of that kind equals it
    (``162500元`` answers ``162,500.00元``; ``…百分之十二以内…`` answers ``12%``), the numbers
    of the question it restates aside ("The population of Greater New Haven in 2010 was 862,477."
    for "The population of the Greater New Haven in 2010?")."""
    wanted = parse_number(str(gold))
    unit = None
    if wanted is None:  # a count or a multiple ("112份", "0.6倍"): the number, and no other unit
        count = _COUNT.match(_numerals_to_digits(fold_characters(str(gold))))
        if count is None:
            return False
        wanted, unit = parse_number(count.group("n")), count.group("unit")
        if wanted is None:
            return False
    digits = _numerals_to_digits(sentence)
    asked = {n.value for n in find_numbers(_numerals_to_digits(question))} - {wanted.value}
    numbers = [n for n in find_numbers(digits) if n.is_percent == wanted.is_percent and n.value not in asked]
    if len(numbers) != 1 or not numbers_equal(numbers[0], wanted, 2, False):
        return False
    after = digits[numbers[0].end :].lstrip()
    return unit is None or not _COUNT_UNIT.match(after) or after.startswith(unit)


#: A span that is one amount and nothing else: a sign, a currency, the number, a percent or a unit
#: of a word or two ("7%", "0.49", "-8.1 million", "13.0 years", "$987 million", "42").
_BARE_AMOUNT = re.compile(
    r"[-+−]?\s*[$£€¥]?\s*[-+]?\d[\d,]*(?:\.\d+)?\s*(?:%|(?i:per\s*cent|percent)|[A-Za-z]{1,12}(?:\s+[A-Za-z]{1,12})?)?\s*\.?"
)
#: The word for percent ("50 per cent").
_PER_CENT = re.compile(r"\s*(?i:per\s*cent|percent)(?![A-Za-z])")


def _bare_amount_in_gold(span: str, gold: str) -> bool:
    """The span read is a bare amount and the gold states one amount, equal to it: "7%" for
    "approximately 7%", "13.0 years" for "The amortization period … is 13.0 years.", "-8.1 million" for
    "£(8.1m)" (an amount in brackets is negative, as accounts write it); a rate answers a rate only.
    A qualifier the span adds ("after 1763") makes it no bare amount."""
    if not _BARE_AMOUNT.fullmatch(span.strip()):
        return False
    mine, theirs = find_numbers(_PER_CENT.sub("%", span)), find_numbers(_PER_CENT.sub("%", gold))
    if len(mine) != 1 or len(theirs) != 1:
        return False
    stated = theirs[0]
    if gold[: stated.start].rstrip(" $£€¥").endswith("(") and gold[stated.end :].lstrip().startswith((")", "m)", "bn)", "k)")):
        stated = replace(stated, value=-stated.value)
    # a rate and an amount are different spans ("13%" is no span for "0.13"), as in _same_amount
    return mine[0].is_percent == stated.is_percent and numbers_equal(mine[0], stated, 2, False)


_COUNT_UNIT = re.compile("份|张|个|次|人|户|家|倍|项|条|笔|台|辆|套|间|件|名|" + _COUNTERS)
_COUNT = re.compile(r"^\s*(?P<n>[-+]?\d[\d,]*(?:\.\d+)?)\s*(?P<unit>" + _COUNT_UNIT.pattern + r")\s*$")


# ---------------------------------------------------------------- the rules



class SpanView:
    """One output as the span rules read it: ``text`` the model's own answer (``""`` for a
    copy of the prompt, ``failure`` then says which), ``cleaned`` it cleaned with LaTeX made
    plain, and (on first use) the texts that may hold the answer. ``checks``: an empty span
    and a refusal are vetoes (the task reader); off, the span is what the output gives."""

    def __init__(self, text: str, clause: bool, failure: str | None = None, checks: bool = True,
                 raw: str | None = None, gold: str | None = None, query: str = "") -> None:
        #: The raw output and the gold (TaxBen's rule R1 looks for the gold in the raw output).
        self.raw = text if raw is None else raw
        self.gold = gold
        self.text = text
        self.clause = clause
        self.failure = failure
        self.checks = checks
        self.cleaned = strip_latex(clean_prediction(text))
        #: The question (a term it marks, quoted back, is no answer).
        self.query = query

    @classmethod
    def of_output(cls, output: str, query: str, document: str | None, clause: bool,
                  raw: str | None = None, gold: str | None = None) -> SpanView:
        """The view of a task's output: its own answer, what it copies of the prompt (the
        question, or the document restated whole) blanked; ``raw`` the output before
        cleaning (``output`` when None), ``gold`` the record's gold."""
        cleaned = strip_latex(clean_prediction(output))
        own = own_answer(cleaned, query, document=document)
        failure = own.failure
        if failure is None and document and restates_document(cleaned, query, document):
            failure = COPY_OF_PROMPT  # the material written back whole
        return cls(own.text if failure is None else "", clause, failure, raw=output if raw is None else raw, gold=gold,
                   query=query)

    @cached_property
    def texts(self) -> list[tuple[str, str]]:
        return _answer_texts(self.cleaned)

    def result(self, span: str, rule: str) -> Reading:
        """``span`` read by ``rule``; with checks, an empty span or a refusal is a veto: the whole
        output refusing, or the span an answer statement gives ("Answer: I don't know",
        ``finish[I don't have the answer]``)."""
        if self.checks and (not span.strip() or is_refusal(span) or (span == self.text and is_refusal(self.text))):
            failure = REFUSAL if is_refusal(span) or is_refusal(self.text) else NO_ANSWER
            return Reading(span, failure, rule=veto_of(failure))
        return Reading(span, rule=rule, source=span)


SpanAttempt = Callable[[SpanView], Reading | None]


def _on_text(attempt: SpanAttempt) -> SpanAttempt:
    """An attempt that reads the output: it does not apply when it is empty or a copy."""

    @wraps(attempt)
    def guarded(view: SpanView) -> Reading | None:
        return None if view.failure or not view.cleaned else attempt(view)

    return guarded


@COPY_OF_PROMPT_RULE.reads("span")
def _copy_of_prompt(view: SpanView) -> Reading | None:
    failure = view.failure
    return Reading("", failure, rule=veto_of(failure)) if failure == COPY_OF_PROMPT else None


@ANOTHER_QUESTION_RULE.reads("span")
def _another_question(view: SpanView) -> Reading | None:
    failure = view.failure
    return Reading("", failure, rule=veto_of(failure)) if failure else None


def _texts_of(rule: str) -> SpanAttempt:
    """The attempt of a rule that names texts holding the answer (a JSON answer field, the
    answer statements): the span of the first that gives one."""

    @_on_text
    def attempt(view: SpanView) -> Reading | None:
        for body, named_by in view.texts[:-1]:
            span = _span_of(body, view.clause)
            if span:
                return view.result(span, rule) if named_by == rule else None
        return None

    return attempt


PLACEHOLDER_RULE = register_rule(
    "veto.placeholder", kinds=("span",), tier=7, confidence="high",
    description="The answer read stands in for one instead of giving it: markup only ('</question>'), a slot of "
                "the prompt's answer template left unfilled ('The apple is in ’location’.'), or a generic stand-in "
                "('a character's name', 'to be a common word').",
    examples=(Example("span", "</question>\n</example>", None),
              Example("span", "to be a character name.", None),
              Example("span", "Answer: The apple is in ’location’.", None, context="span-template")),
    leaves_alone=(Example("span", "Answer: The apple is in the kitchen.", "The apple is in the kitchen.", context="span-template"),
                  Example("span", "a red car", "a red car")),
)
#: Markup alone: tags, special tokens.
_MARKUP_ONLY = re.compile(r"^(?:\s|</?[A-Za-z][\w-]*\s*/?>|<\|[^|>]*\|>|[*_#`>])*$")
#: A generic stand-in for a name or a word ("a character's name", "that of a male character",
#: "to be a common word"): an indefinite noun phrase whose head is a placeholder noun.
_STAND_IN = re.compile(
    r"^\W*(?i:(?:to\s+be\s+|that\s+of\s+)?(?:a|an|some|one)\s+(?:[\w'-]+\s+){0,3}"
    r"(?:character(?:'s)?(?:\s+name)?|name|word|person|someone|somebody|thing|reference|occurrence(?:\s+of\s+[\w\s']+)?))\W*$"
)
#: A slot of an answer template: a word in quotes or brackets ("’location’", "[answer]", "<item>").
_SLOT = re.compile(r"(?<![A-Za-z])(?:[’‘]([A-Za-z_][\w ]{0,20})’|'([A-Za-z_][\w ]{0,20})'|\"([A-Za-z_][\w ]{0,20})\""
                   r"|“([A-Za-z_][\w ]{0,20})”|\[([A-Za-z_][\w ]{0,20})\]|<([A-Za-z_][\w ]{0,20})>|\{([A-Za-z_][\w ]{0,20})\})")


def _placeholder(span: str, query: str) -> bool:
    """``span`` stands in for an answer (:data:`PLACEHOLDER_RULE`)."""
    if _MARKUP_ONLY.match(span) or _STAND_IN.match(span):
        return True
    # the slot as the prompt's template writes it, in the same brackets, and not the question's own words
    return any(m.group(0) in query and m.group(0) not in question_of(query) for m in _SLOT.finditer(span))


@PLACEHOLDER_RULE.reads("span")
@_on_text
def _placeholder_attempt(view: SpanView) -> Reading | None:
    for body, _named_by in view.texts:
        span = _span_of(body, view.clause)
        if span:
            return Reading(span, NO_ANSWER, rule=PLACEHOLDER_RULE.name) if view.checks and _placeholder(span, view.query) \
                else None
    return None


ANSWER_STATEMENT_SPAN_RULE = register_rule(
    "span.answer-statement", kinds=("span",), tier=2, confidence="high",
    description="The first clause of an answer statement (答案/结论/综上).",
    examples=(Example("span", "答案：万分之五。根据征管法第三十二条。", "万分之五"),),
)
JSON_ANSWER_RULE.reads("span")(_texts_of(JSON_ANSWER_RULE.name))
ANSWER_STATEMENT_SPAN_RULE.reads("span")(_texts_of(ANSWER_STATEMENT_SPAN_RULE.name))

MARKED_RULE = register_rule(
    "span.marked", kinds=("span",), tier=3, confidence="low",
    # low: the markup picks one phrase of a longer sentence, and which phrase answers depends on
    # the sentence (on the development sources 4 of 20 such readings were wrong)
    description="A bold, quoted or titled span of the output's first clause.",
    examples=(Example("span", "比例为**万分之五**，从滞纳之日起按日计算", "万分之五"),),
)


@MARKED_RULE.reads("span")
@_on_text
def _marked(view: SpanView) -> Reading | None:
    marked = _marked_span(view.cleaned, view.clause, view.query)
    return view.result(marked, MARKED_RULE.name) if marked else None


def _is_bare(cleaned: str) -> bool:
    return len(cleaned.strip()) <= _BARE_SPAN and not _SENTENCE_END.search(cleaned.strip().rstrip("。.！!"))


REFUSAL_RULE = register_rule(
    "veto.refusal", kinds=("span",), tier=7, confidence="high",
    description="The output refuses or says it cannot answer.",
    examples=(Example("span", "抱歉，我无法回答这个问题。", None),),
    decides=REFUSAL,
)


@REFUSAL_RULE.reads("span")
@_on_text
def _refusal(view: SpanView) -> Reading | None:
    # What is left is the output itself: a refusal is no answer.
    if view.checks and is_refusal(view.text) and (view.cleaned == view.text or not view.cleaned.strip()):
        return Reading(view.cleaned, REFUSAL, rule=REFUSAL_RULE.name)
    return None


BARE_SPAN_RULE = register_rule(
    "span.bare-answer", kinds=("span",), tier=3, confidence="high",
    description="No statement and nothing marked, but the output is one short sentence: the answer itself.",
    examples=(Example("span", "万分之五", "万分之五"), Example("span", "按日加收万分之五。", "按日加收万分之五。")),
)


@BARE_SPAN_RULE.reads("span")
@_on_text
def _bare(view: SpanView) -> Reading | None:
    return view.result(view.cleaned, BARE_SPAN_RULE.name) if _is_bare(view.cleaned) else None


CUT_OFF_RULE = register_rule(
    "veto.cut-off", kinds=("span",), tier=7, confidence="high",
    description="No statement and nothing marked, and the output finishes no sentence: it stops on a colon, a comma, "
                "an empty list item or the question it quotes, a preamble cut by the length limit before any answer.",
    examples=(Example("span", "Based on the information provided in the context, the apple is in the following location:", None),
              Example("span", "Based on the information provided in the context, Daniel is in the following locations:\n\n*", None),
              Example("span", 'Based on the context provided, the answer to the question "What is west of the kitchen?"', None)),
    leaves_alone=(Example("span", "Fred gave the apple to Bill", "Fred gave the apple to Bill"),
                  Example("span", "The garden. Based on the context provided, the office is between the kitchen and the",
                          "The garden. Based on the context provided, the office is between the kitchen and the")),
)


@CUT_OFF_RULE.reads("span")
@_on_text
def _cut_off(view: SpanView) -> Reading | None:
    return Reading(view.cleaned, NO_ANSWER, rule=CUT_OFF_RULE.name) if stops_mid_sentence(view.cleaned) else None


ASKS_BACK_RULE = register_rule(
    "veto.asks-back", kinds=("span",), tier=7, confidence="high",
    description="No statement and nothing marked, and every sentence of the output asks a question (the question "
                "written back, questions of its own, a question to the user): it answers nothing.",
    examples=(Example("span", "Who is the voice actor for Phineas on the TV show Phineas and Ferb?", None),
              Example("span", "1. What is cellular respiration?\n2. What is the terminal electron acceptor?", None)),
    leaves_alone=(Example("span", "万分之五? 是的，按日加收万分之五。", "万分之五? 是的，按日加收万分之五。"),),
)
#: A sentence of an output: up to its end mark, the mark kept.
_ASKED = re.compile(r"[^。！？!?.\n]*[。！？!?.\n]?")


@ASKS_BACK_RULE.reads("span")
@_on_text
def _asks_back(view: SpanView) -> Reading | None:
    said = [m.group(0).strip() for m in _ASKED.finditer(view.cleaned) if m.group(0).strip(" \n\t。.!！")]
    said = [one for one in said if not re.fullmatch(r"\W*\d{1,2}[.)、]?\W*", one)]  # list numbers
    if view.checks and said and all(one.endswith(("?", "？")) for one in said):
        return Reading(view.cleaned, NO_ANSWER, rule=ASKS_BACK_RULE.name)
    return None


WHOLE_OUTPUT_RULE = register_rule(
    "span.whole-output", kinds=("span",), tier=6, confidence="low",
    description="No statement and nothing marked: the output itself (matched as a phrase).",
    examples=(Example("span", "滞纳金的比例，根据征管法的规定，是从滞纳税款之日起按日加收滞纳税款的万分之五。这一比例自2001年起执行。",
                      "滞纳金的比例，根据征管法的规定，是从滞纳税款之日起按日加收滞纳税款的万分之五。这一比例自2001年起执行。"),),
)


@WHOLE_OUTPUT_RULE.reads("span")
def _whole(view: SpanView) -> Reading | None:
    return None if view.failure else view.result(view.cleaned, WHOLE_OUTPUT_RULE.name)


@NO_ANSWER_RULE.reads("span")
def _no_answer(view: SpanView) -> Reading | None:
    return Reading("", NO_ANSWER, rule=NO_ANSWER_RULE.name) if view.checks else None


#: The order in which the span reader tries its rules (the default chain set, ``taxpraben``): its
#: rules' names, each a rule declared in this module or in :mod:`~taxpraben.parsing.readers.shared`.
SPAN_CHAIN: tuple[str, ...] = (
    "veto.copy-of-prompt",
    "veto.another-question",
    "veto.placeholder",
    "json.answer-field",
    "span.answer-statement",
    "span.marked",
    "veto.refusal",
    "veto.cut-off",
    "veto.asks-back",
    "span.bare-answer",
    "span.whole-output",
    "veto.no-answer",
)


def span_chain(names: tuple[str, ...] | None = None) -> Chain[SpanView]:
    """The span chain: ``names`` in order (default: the ``span`` chain of
    :data:`SPAN_CHAIN`), each rule's span attempt."""
    return chain_for("span", SPAN_CHAIN if names is None else names)


def span_reading(text: str, clause: bool, chain: tuple[str, ...] | None = None) -> Reading:
    """The span of ``text`` as the chain reads it, with no checks (a refusal is its span)."""
    view = SpanView(text, clause, checks=False)
    return span_chain(chain).run(view, Reading("", rule=WHOLE_OUTPUT_RULE.name, source=""))


def read_span_answer(
    output: str, query: str, document: str | None, clause: bool, chain: tuple[str, ...] | None = None,
    raw: str | None = None, gold: str | None = None,
) -> tuple[Reading, str]:
    """A reading task's answer: the span the chain reads (a veto: why none, its value the
    span it would have been), and the own answer it was read from (``raw``: the output before
    cleaning when ``output`` is not it; ``gold``: the record's gold, for TaxBen's rule)."""
    view = SpanView.of_output(output, query, document, clause, raw, gold)
    reading = span_chain(chain).run(view, Reading("", NO_ANSWER, rule=NO_ANSWER_RULE.name))
    return reading, view.text


def extract_span(text: str, *, clause: bool = True) -> str:
    """The answer span of an output (rules in the module docstring); may be empty.

    ``clause`` ends a span at the first Chinese comma as well as at the end of the sentence.
    """
    return str(read_span(text, clause=clause).value)


def read_span(text: str, *, clause: bool = True) -> Reading:
    """:func:`extract_span` as a reading: the span (also its ``source``) and the rule that
    found it: ``json.answer-field``, ``span.answer-statement``, ``span.marked`` (a bold,
    quoted or titled span of the output), ``span.bare-answer`` or ``span.whole-output``; the
    ``span`` chain without its vetoes (:func:`read_span_answer`
    reads a task's output with them)."""
    return span_reading(text, clause)
