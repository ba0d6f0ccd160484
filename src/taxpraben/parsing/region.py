"""Where the answer is: the final-answer statements of an output, most authoritative first.

One procedure, shared by the number, label, letter and span readers, so that every task
kind agrees on which part of a verbose answer is *the* answer. It works on the cleaned text
(reasoning blocks already removed) with LaTeX made plain (``\\boxed{}`` kept as a marker).

:func:`answer_statements` returns :class:`Statement` s in the order a grader reads them:

1. **Final statements, latest first**: every explicit final-answer marker (``最终答案``,
   ``正确答案``, ``参考答案``, ``答案``, ``答：``, ``结论：``, ``正确的是``,
   ``应选``/``故选``/``本题选``/``选择``/``只有`` (before a letter),
   ``Final answer``, ``The answer is``, ``Answer:``), every ``\\boxed{...}`` and every
   **self-correction** (``不对``, ``更正``, ``修正为``, ``纠正``, ``重新计算后``, ``有误``,
   ``算错``, ``订正``, ``应更正为``). Latest first means a correction written after an
   answer wins over it, and an answer written after a correction wins over that.
2. **Summaries, latest first**: ``综上所述``, ``综上``, ``总之``, ``最终``, ``结论``, plus
   the caller's own markers (a task's ``answer_markers`` such as ``属于``, ``构成``,
   ``应认定为``, ``主要涉及``). A marker right after a negation (``不属于``, ``不构成``,
   ``并非``) is not a conclusion.
3. **Consequences, latest first**: ``因此``, ``所以``, ``故``, ``由此可见``. They come after
   the summaries because they also introduce what follows from the answer ("增值率约为
   66.67%。因此适用税率为40%").

A statement's text runs from the end of its marker to the end of its sentence (``。！？``,
line break; a correction runs to the end of the text: what follows it is the corrected
working). When that is empty but for
punctuation and Markdown (``**答案**`` on a line of its own, ``答案如下：``), it is the next
non-empty line instead. A boxed statement is the box's content.

The readers take the first statement in which they find a candidate; with none, they fall
back to the last line (then sentence) that carries one (:func:`lines_last_first`).
Candidates outside the statement a reader settles on (intermediate steps, explanations of
why the other options are wrong) therefore never count.

**Asserted.** An answer is *asserted* when it is read from a final statement, a summary or
consequence, a bare answer line, the **lead sentence** (:func:`lead_sentence`: the first one,
unless it is a question, when it answers first) or the **conclusion sentence**
(:func:`conclusion_sentence`: the last one). A choice reader settles on an option in a
sentence only when it is the one option the sentence names affirmed, or the first of at most
two (a sentence that goes through three options asserts none); an option the output denies
(``不构成逃税罪``) is not its answer. Nothing asserted is a format failure, :data:`NOT_ASSERTED`.

Every reader returns a :class:`Reading`: the value, or why there is none (:data:`NO_ANSWER`,
:data:`NOT_ASSERTED`, :data:`AMBIGUOUS` for different final answers with no self-correction
between them, :data:`HEDGED`, :data:`NONE_CORRECT`, :data:`NOT_AN_OPTION`, and the copy reasons
of :mod:`taxpraben.parsing.prompt_copy`). What a reader reads is the model's own answer to the
question (:func:`~taxpraben.parsing.prompt_copy.own_answer`), never what it copies.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

from taxpraben.parsing.answer_fields import (
    FIELD_LINE,
    demonstrated_labels,
    in_template,
    names_the_answer,
    ranked_below_first,
)
from taxpraben.parsing.declines import is_refusal
from taxpraben.parsing.latex import find_boxed
from taxpraben.parsing.registry import deciding
from taxpraben.parsing.reported import reported

__all__ = [
    "AMBIGUOUS", "ANSWER_MARKER", "ANSWER_WORDS", "CORRECTED_VALUE", "HEDGED", "LOOP_MIN", "NONE_CORRECT",
    "NOT_AN_OPTION", "NOT_ASSERTED", "NO_ANSWER", "PROMPT_LABEL", "REFUSAL", "STRONG_MARKER", "SUPPOSITION",
    "Reading", "Statement", "answer_statements", "answer_tags", "conclusion_sentence", "corrected_part",
    "ending_label", "is_refusal", "lead_sentence", "lines_last_first", "sentence_end", "sentences",
    "sentences_last_first", "settle_final", "without_loop",
]

#: Words that suppose another case ("若其后虚开使用，则可能构成……", "如不考虑进项则为……" with 如
#: added where it cannot be 如下/例如): what would follow then, not the answer.
SUPPOSITION = r"若|如果|假如|假设|倘若|如若|一旦"

StatementKind = Literal["boxed", "answer", "correction", "conclusion"]

#: Why no answer was read: the format-failure reasons every reader shares (with
#: :data:`~taxpraben.parsing.prompt_copy.COPY_OF_PROMPT` and ``ANOTHER_QUESTION``).
NO_ANSWER = "no answer found"
NOT_ASSERTED = "no answer asserted"
AMBIGUOUS = "several different answers"
HEDGED = "hedges between options"
NONE_CORRECT = "says no option is correct"
NOT_AN_OPTION = "answer is none of the options"
REFUSAL = "refusal"


def veto_of(failure: str) -> str:
    """The veto rule named for a format-failure reason: the registered veto that decides it
    (``decides=`` of :func:`~taxpraben.parsing.registry.register_rule`), else the one that
    decides :data:`NO_ANSWER` ("" before any reader is loaded)."""
    rule = deciding(failure) or deciding(NO_ANSWER)
    return rule.name if rule is not None else ""


@dataclass(frozen=True)
class Reading:
    """What a reader read: ``value`` (None when nothing), and why not (``failure``).

    ``rule`` names the rule of :mod:`taxpraben.parsing.rules` that made the reading (a
    format failure: the veto that decided it, see :func:`~taxpraben.parsing.rules.veto_of`);
    ``source`` is the stretch of the reader's text it was read from (a statement, a line, a
    sentence, a JSON value), from which :mod:`~taxpraben.parsing.evidence` finds the span of
    the raw output that holds the answer. ``span``: the offsets of the raw output the rule
    read itself, when it read the raw output (TaxBen's rules): the evidence as it is.
    """

    value: object = None
    failure: str | None = None
    rule: str | None = None
    source: str | None = None
    span: tuple[int, int] | None = None


@dataclass(frozen=True)
class Statement:
    """One statement that may hold the answer: ``text`` is what follows its marker.

    The text is cut from the source only when asked for: an output with thousands of
    markers must not copy its tail thousands of times.
    """

    kind: StatementKind
    marker: str
    start: int
    source: str = field(repr=False, compare=False)
    body_start: int = 0
    to_end: bool = False
    #: Where the statement's text ends, when its marker closes it (a tagged answer,
    #: ``<answer>C</answer>``: what the tags hold).
    body_end: int | None = None
    #: A field the prompt asks its answer in ("Label: HAWKISH"): filled twice with different
    #: values, it gives several answers, as a strong marker does (:func:`settle_final`).
    field: bool = False

    @property
    def full_text(self) -> str:
        """The statement with its marker ("答案：B"; a box: what it holds)."""
        if self.kind == "boxed":
            return self.source
        return self.source[self.start : self.body_start] + self.text

    @property
    def text(self) -> str:
        if self.kind == "boxed":
            return self.source
        if self.body_end is not None:
            return self.source[self.body_start : self.body_end]
        if self.to_end:
            return self.source[self.body_start :]
        return _after(self.source, self.body_start, to_line_end=False)


#: An explicit answer marker (``答案``, ``故选``, ``the answer is``, ``####`` ...).
ANSWER_MARKER = _ANSWER = re.compile(
    r"最终答案|正确答案|参考答案|标准答案|(?<!没有)(?<!具体)(?<!无)(?<!唯一)答案|正确选项|正确的选项|应选|故选|本题选|因此选|所以选|我选|"
    r"正确的(?:是|有|为)|说法正确的(?:是|有)|"
    # an aside that names the answer's form is part of the marker: "the answer (yes or no) is",
    # zero-shot-CoT's "the answer (arabic numerals) is"
    r"(?<![a-z])(?i:final\s+answer|the\s+answer(?:\s*[(（][^()（）\n]{1,40}[)）])?\s+is|answer\s*[:：]|answer\s+is|answer\s+(?:should|would|must|will)\s+be|"
    r"(?:correct|right|best|final)\s+(?:option|choice|statement)s?(?:\(s\))?(?:\s+(?:is|are|would\s+be|should\s+be)(?:\s*\((?:is|are)\))?|\s*[:：])|"
    # a final field of the model's own heading its line ("Final Judgement: wrong", "Final Verdict: B"),
    # not a step of the working ("Final step: multiply …")
    r"(?<![^\n])[ \t*#>-]*(?=f)final\s+(?!steps?\b|calculations?\b|computations?\b)[a-z]{4,20}\**[ \t]*[:：]|"
    r"my\s+(?:final\s+)?choice\s+is|i\s+(?:would\s+)?(?:choose|pick|select)(?=\s+(?:option\s+)?[(\[]?[A-J](?![A-Za-z]))|"
    # "The most likely diagnosis is C: …", "the best next step would be option (B)": a superlative
    # that names an option is the answer
    r"the\s+(?:most\s+(?:likely|appropriate|probable|effective|accurate|suitable|correct)|best|correct|right)"
    r"(?:\s+[\w'-]+){0,8}?\s+(?:is|would\s+be|should\s+be|will\s+be)(?=\s+\**(?:option\s+)?[(\[]?[A-J](?:[)\]:：.]|\s*$)))|"
    r"最(?:可能|符合|合适|恰当|佳|有效|适合)[^，。,\n]{0,12}?(?:是|为)(?=\s*(?:选项)?\s*[(（【\[]?[A-J](?![A-Za-z]))|"
    # GSM8K's final line: "#### 45" (after a space too: "…is $6. #### 6"), or "####" opening the
    # output's last line; never a Markdown heading ("#### Step 1" with more lines after it)
    r"(?<![#\w])####(?=[ \t]*(?:[-+]?[$¥€£]?\d[\d,]*(?:\.\d+)?[ \t]*(?:%|元|万元)?|[(\[]?[A-J][)\]]?)[ \t]*$|"
    r"[^\n#]*\d[^\n]*\s*\Z)|"
    # the "Q: … A: …" format's answer head before a number alone on the output's last line ("A: 148");
    # never a list of options or cases ("A: 32" with "B: 24" after it)
    r"(?<![^\n])[ \t]*A[ \t]*:(?=[ \t]*[-+]?[$¥€£]?\d[\d,]*(?:\.\d+)?[ \t]*[^\s\d]{0,8}[ \t]*\Z)|"
    # the answer in the other languages models answer in: Japanese, Korean, German, French,
    # Spanish, Russian, Swahili, Indonesian and Malay, Bengali, Thai, Arabic, Hindi ("答えは", "Antwort:", "Réponse :", "Ответ:");
    # "回答：" heading a line (Japanese; a Chinese answer head too, not "请回答：" inside a sentence)
    r"(?:答え|正解)\s*(?:は|:|：)|정답\s*(?:은|는|:|：)|"
    # ("die richtige Antwort ist", "la bonne réponse est", "la respuesta correcta es", "a resposta correta é",
    # "la risposta corretta è": the answer word, with the word for "right" or without it)
    r"(?=[ABDJLRabdjlrОо])(?<![A-Za-z])(?i:(?:die\s+)?(?:richtige\s+)?antwort\s*(?:lautet|ist|:)|(?:la\s+)?(?:bonne\s+)?r[ée]ponse(?:\s+correcte)?\s*(?:est|:)|"
    r"(?:la\s+)?respuesta(?:\s+correcta)?\s*(?:es|:)|(?:a\s+)?resposta(?:\s+corret[ao])?\s*(?:é|:)|(?:la\s+)?risposta(?:\s+corretta)?\s*(?:è|:)|"
    r"ответ\s*(?:[:—]|это)|jibu\s*(?:sahihi\s*)?(?:ni|:)|jawa[bp]an(?:nya)?(?:\s+yang\s+(?:paling\s+)?(?:betul|benar|tepat|sesuai))?\s*(?:adalah|ialah|:)|"
    r"jawa[bp]an[^\n.。]{1,120}?\s(?:ialah|adalah)(?=\s+\**[(\[]?[A-J](?:[)\].:：]|\s*$)))|উত্তর\s*[:ঃ]|คำตอบ\s*(?:คือ|:)|"
    # the right option in the Romance languages, its letter after it: "A alternativa correta é a letra B",
    # "La opción correcta es la C", "L'option correcte est B", "L'opzione corretta è D"
    r"(?=[aAlLoO])(?<![A-Za-z])(?i:(?:a|la|l['’]|o)?\s*(?:alternativa|op[çc][ãa]o|opci[óo]n|option|opzione)\s+"
    r"(?:corret[ao]|correct[ao]|correcte|corretta|certa|bonne)\s*(?:é|es|est|è|:)(?:\s+(?:a|la|el|l['’])?\s*(?:letra|alternativa|op[çc][ãa]o|opci[óo]n|option)|\s+(?:a|la|el)(?=\s+\(?[A-E](?![A-Za-z])))?)|"
    # Turkish, the answer word in its forms ("Doğru cevap C şıkkıdır", "Bu sorunun doğru cevabı A)
    # …", "Cevap: C) Rüzgâr", "Yani cevap B seçeneğidir", "Cevap D"): the copula comes last, so
    # the answer word stands right before the option it gives
    r"(?i:doğru\s+(?:cevap|cevabı|yanıt|yanıtı)|(?=[cy])(?<![A-Za-zçğıöşü])(?:cevap|cevabı|yanıt|yanıtı)"
    r"(?:\s*[:：]|(?=[ \t]+\**[(\[]?[A-E](?:[)\].:：*]|[ \t]+(?:şık|seçene)|[ \t]*$))))|"  # seçeneği, şıkkı
    # Arabic and Hindi ("الإجابة النهائية:", "अंतिम उत्तर:")
    r"الإجابة(?:\s+(?:النهائية|الصحيحة))?\s*(?:هي|[:：])|(?:अंतिम\s+|सही\s+)?उत्तर\s*(?:है|[:：])|"
    r"(?<![问回解])答\s*[:：]|^[ \t*#>]*回答\s*[:：]|"
    # an answer label in brackets heading its answer ("【回答】a,c", "【答案】B", "[Answer] 42")
    r"[【\[〔](?:最终答案|答案|回答|解答|答え|正解|(?i:final\s+answer|answer))[】\]〕][ \t:：]*|结论\s*(?=[:：])|选择(?=\s*[:：]?\s*[(（【\[]?[A-Ea-e](?![A-Za-z]))|"
    r"只有(?=\s*(?:选项)?\s*[(（【\[]?[A-H](?![A-Za-z]))",
    re.MULTILINE,
)
#: A tagged answer: ``<answer>…</answer>``, ``[ANSWER]…[/ANSWER]`` (any case, the closing tag of
#: the same bracket family, its last bracket cut off at the output's end too: ``<ANSWER>5</ANSWER``);
#: what the tags hold is the statement.
_TAGGED = re.compile(
    r"<(?P<a>(?i:final[_ ]?answer|answer|ans|result|choice|option|答案))(?:\s[^<>]{0,80})?>(?P<ab>[^<>]{0,400}?)</(?P=a)\s*(?:>|\Z)|"
    r"\[(?P<s>(?i:final[_ ]?answer|answer|ans|result|choice|option|答案))\](?P<sb>[^\[\]]{0,400}?)\[/(?P=s)\]|"
    # an agent's answer action (ReAct: "Action: Finish[Adam Levine]")
    r"(?<![A-Za-z])(?P<f>(?i:finish|final[_ ]?answer|answer))\[(?P<fb>[^\[\]\n]{1,300})\]"
)
# A correction opens a clause ("不对，应为…", "更正：…") or closes one about the working
# ("上面计算有误，…"); "说法不对的是B项" and "A项表述有误" are verdicts, not corrections.
_CORRECTION = re.compile(
    r"(?:(?<=^)|(?<=[\n。！？!?，,；;：:(（\s]))"
    r"(?:不对|更正|修正为|修正后|修正(?=[*\s]*[:：])|纠正|重新计算后|重新计算|重新考虑|重新核对|重新检查|再想想|等等|订正|应更正为|改正|"
    r"不[，,]\s*(?=应|正确)|(?i:correction|wait)(?![a-z]))|"
    r"(?:计算|上面|上述|前面|以上|刚才|之前|结果)[^，。\n]{0,4}(?:有误|算错|错了)(?=[，。,；!！\n]|$)"
    # after an answer, never opening the output (there "抱歉" is a refusal)
    r"|(?<=[\n。！？!?])\s*(?:抱歉|我(?:刚才|之前)?看错了|(?:我)?再仔细(?:想|看|核对|计算)了?一下|仔细(?:想|核对)了一下)",
    re.MULTILINE,
)
#: Inside a self-correction, the words that introduce the corrected value ("不对，……应为C").
CORRECTED_VALUE = re.compile(
    r"应为|应是|应该是|应当是|应该选|应当选|应选|改选|改为|改成|更正为|修正为|正确(?:的)?(?:答案|选项|结果|金额|税额)?(?:是|为|应为)|"
    r"答案(?:是|为|应为)"
)


#: Final statements whose answers must agree: the answer markers proper and boxes (not
#: 选择/应选, which reasoning also uses: "如果选择A，……").
#: The word for "answer" in the other languages the answer statements know.
ANSWER_WORDS = (r"答え|正解|정답|(?i:antwort|r[ée]ponse|respuesta|resposta|risposta|ответ|jibu|jawa[bp]an|cevap|yanıt)"
                r"|উত্তর|คำตอบ|الإجابة|उत्तर")
STRONG_MARKER = re.compile(r"答案|答\s*[:：]|(?i:answer)|\\boxed|####|" + ANSWER_WORDS)


#: A supposition that opens the sentence of a statement: 若, 如果, "if", "suppose".
_SUPPOSED = re.compile(SUPPOSITION + r"|(?<![A-Za-z])(?i:if|suppose|supposing|assuming)(?![A-Za-z])")
#: Where a sentence before a statement ends (for :func:`supposed`): one of these marks, or a full
#: stop before a space.
_SENTENCE_END_MARKS = "。！!？?\n"


def supposed(text: str, at: int) -> bool:
    """The statement or conclusion marker at ``at`` in ``text`` stands in a sentence that
    supposes another case ("如果是单项选择题，则答案为 B", "If the question asks for the wrong
    one, the answer is B")."""
    # where the last sentence before ``at`` ended (:data:`_SENTENCE_END_MARKS`), found from ``at``
    # backwards: a long output has many statements, each would scan all the text before it
    begin = max([text.rfind(mark, 0, at) + 1 for mark in _SENTENCE_END_MARKS] + [text.rfind(". ", 0, at) + 1])
    return _SUPPOSED.search(text, begin, at) is not None


def settle_final(
    final: Sequence[Statement], read: Callable[[Statement], object | None], rules: Mapping[str, str]
) -> tuple[Reading, Statement | None] | None:
    """What the final statements give (latest first), and the statement that gave it: a
    self-correction wins over what it follows; different answers in strong statements
    (:data:`STRONG_MARKER`, boxes) with no correction between them are :data:`AMBIGUOUS`; an
    earlier statement under a supposition (:func:`supposed`) answers another case and counts for
    neither.
    None when no final statement gives anything (``read`` returns None for nothing).
    ``rules``: the rule each statement kind reads by (``correction``, ``boxed``, ``answer``)
    and the veto of ``several`` answers, as the caller's reader declares them."""
    picks: list[object] = []
    first: object | None = None
    given_by: Statement | None = None
    for statement in final:
        picked = read(statement)
        if statement.kind == "correction":
            if picked is not None and first is None:
                return Reading(picked, rule=rules["correction"], source=statement.full_text), statement
            if first is not None:
                break  # what came before the correction is superseded
            continue
        if picked is None:
            continue
        if first is not None and supposed(statement.source, statement.start):
            continue  # "如果是单项选择题……则答案为 B": the answer to a case the model supposes
        if first is None:
            first, given_by = picked, statement
        if statement.kind == "boxed" or statement.field or STRONG_MARKER.search(statement.marker):
            picks.append(picked)
    if first is None:
        return None
    if len(set(picks)) > 1:
        return Reading(None, AMBIGUOUS, rule=rules["several"]), None
    assert given_by is not None
    return Reading(first, rule=rules[given_by.kind], source=given_by.full_text), given_by


def corrected_part(body: str) -> str | None:
    """What follows the last ``应为``/``改为``/``正确答案是``... of a correction, or None."""
    picks = list(CORRECTED_VALUE.finditer(body))
    return body[picks[-1].end() :] if picks else None


_SUMMARY = re.compile(r"综上所述|综上|总之|总而言之|总的来说|综合(?:考虑|来看|以上|分析|判断)|最终|结论|結論|以上より|まとめると|(?<![A-Za-z])(?i:in\s+conclusion|in\s+summary|to\s+summarize|overall)(?![A-Za-z])")
_CONSEQUENCE = re.compile(
    r"因此|所以|故(?!意|事|障)|由此可见|(?<![A-Za-z])(?:[Tt]herefore|[Tt]hus|[Hh]ence|[Cc]onsequently|So(?=,))(?![A-Za-z])"
    # Japanese and Korean ("したがって、総資産は減少しました", "따라서 정답은"); "…なので、" closes its
    # reason and gives the consequence ("72,221.3 > 64,063.5なので、増収である")
    r"|したがって|従って|よって|ゆえに|そのため|なので(?=[、,])|따라서|그러므로"
)
_NEGATED = re.compile(r"(?:不|并非|并不|非|未|没有|无|而非|不是|不应|不能)\s*$")
#: Where a sentence may end: a Chinese full stop, ``!`` (not a factorial, ``3!``), ``?``, a line
#: break, or an English full stop before a space (the candidates :func:`sentence_end` checks).
_STOP = re.compile(r"[。！？?\n]|(?<!\d)!|(?<=[A-Za-z0-9)\]}%$'\"”])\.(?=[ \t]+\S)")
#: What stands before an English full stop that ends no sentence: a list or option label at the
#: start of its line ("1. ", "A. ", "(ii). "), an abbreviation ("e.g. ", "Dr. ").
_LABEL_HEAD = re.compile(r"[ \t*#>\-]*[(\[]?(?:\d{1,3}|[A-Za-z]|[ivxIVX]{1,4})[)\]]?")
#: An option letter standing alone before the stop ("……一项：A. 权力……", "is (B). The"): a label.
_LETTER_LABEL = re.compile(r"(?:^|[^A-Za-z])[(\[]?[A-Z][)\]]?$")
_ABBREVIATION = re.compile(r"(?<![A-Za-z])(?:e\.g|i\.e|vs|etc|Dr|Mr|Mrs|Ms|Prof|Fig|No|cf|al|approx|St|Jr|Inc|Co)$")


def sentence_end(text: str, start: int = 0, stop: int | None = None) -> re.Match[str] | None:
    """The first place in ``text[start:stop]`` where a sentence ends (its stop character), or
    None: ``。！？!?``, a line break, or an English full stop followed by a space, unless what
    precedes it in its sentence (from ``start``) and line is a list label or it closes an
    abbreviation. English answers end
    their sentences with ". ": "Therefore, the answer is streptomycin. Azithromycin is ..."."""
    end = len(text) if stop is None else stop
    for m in _STOP.finditer(text, start, end):
        if m.group() != ".":
            return m
        head = text[max(start, text.rfind("\n", 0, m.start()) + 1) : m.start()]
        if not _LABEL_HEAD.fullmatch(head) and not _ABBREVIATION.search(head) and not _LETTER_LABEL.search(head):
            return m
    return None


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` in order (each without its stop character), empty ones too."""
    if "." not in text:  # the common case, at C speed
        return _SENTENCE.findall(text)
    out: list[str] = []
    start = 0
    while (m := sentence_end(text, start)) is not None:
        if m.start() > start:
            out.append(text[start : m.start()])
        start = m.end()
    if start < len(text):
        out.append(text[start:])
    return out


#: The latest statements of each tier that are read: a real answer has a handful; hostile
#: input with thousands must not make the readers quadratic.
_MAX_PER_TIER = 64
_EMPTY = re.compile(r"^[\s:：*#>】\]_\-—=是为如下下列以下]*$")


def _after(text: str, start: int, *, to_line_end: bool) -> str:
    """The statement text from ``start``: its sentence (or line), else the next line."""
    stop = text.find("\n", start) if to_line_end else -1
    if not to_line_end:
        m = sentence_end(text, start)
        stop = m.start() if m else -1
    stop = len(text) if stop < 0 else stop
    body = text[start:stop]
    if _EMPTY.match(body) and stop < len(text):
        for line in text[stop:].split("\n"):
            if line.strip() and not _EMPTY.match(line):
                # a line that is a statement of its own ("答案：\n答案：D") is read as such
                return "" if _ANSWER.match(line.lstrip(" *#>【")) else line
        return ""
    if body.rstrip(" \t*_").endswith((":", "：")) and stop < len(text):
        # a sentence that announces its result ("因此，所有玩具的总价值为：\n\n15 + 20 + 15 = 50") runs
        # on to the next line, which gives it
        for line in text[stop:].split("\n"):
            if line.strip():
                return body if _ANSWER.match(line.lstrip(" *#>【")) else body + "\n" + line
    return body


def _negated(text: str, start: int) -> bool:
    return bool(_NEGATED.search(text[max(0, start - 4) : start]))


@lru_cache(maxsize=64)
def _conclusion_pattern(conclusion_markers: tuple[str, ...]) -> re.Pattern[str]:
    """The task's conclusion markers (longest first) and the summary words, as one regex
    (made once for each task: its markers are escaped and joined for every output)."""
    extra = [re.escape(m) for m in conclusion_markers if m.strip()]
    return re.compile("|".join([*sorted(extra, key=len, reverse=True), _SUMMARY.pattern]))


#: Sentence punctuation right after an answer marker (not a decimal point).
_SENTENCE_ENDS_AT = re.compile(r"[ \t]*(?:[。！？!?；;]|\.(?!\d))")


def answer_tags(text: str, query: str = "") -> list[tuple[int, int]]:
    """Where ``text`` gives a tagged answer (``<ANSWER>2</ANSWER>``, ``[answer]B[/answer]``, the
    wrapper ``query`` shows: ``[[C]]``): the tags and what they hold. A prompt that shows its
    answer format (``for example: <ANSWER>1</ANSWER>``, ``like this: [[A]]``) is answered by a model
    that fills it, even with the example's own value: a tagged answer is a statement of the
    model's, never a copy of the prompt."""
    wrapper = answer_wrapper(query) if query else None
    wrapped = [m.span() for m in wrapper.finditer(text)] if wrapper else []
    if "<" not in text and "[" not in text:
        return wrapped
    return [m.span() for m in _TAGGED.finditer(text)] + wrapped


#: The label a prompt ends on, for the model to fill: a word or two and a colon on its last line
#: ("Judgement:", "Sentiment:", "判断：").
#: A label opening a prompt's line: a tag (``<context>``), a word or a few ("Judgement", "Passage
#: 1"), or a Chinese one ("材料一"), then a colon.
PROMPT_LABEL = re.compile(
    r"^[ \t#*>]*(?:<(?P<tag>/?[A-Za-z][\w-]{0,20})>|(?P<label>[A-Za-z][A-Za-z0-9 ]{0,30}?"
    r"|[\u4e00-\u9fff]{1,6}[0-9一二三四五六七八九十]{0,2})\s*[:：])",
    re.MULTILINE,
)


def ending_label(prompt: str) -> str | None:
    """The label the prompt's last line opens and leaves empty, for the model to fill
    ("Judgement: ", "A:", "答案："), or None."""
    last_line = prompt.rstrip().rsplit("\n", 1)[-1]
    label = PROMPT_LABEL.match(last_line)
    if label is None or last_line[label.end() :].strip():
        return None
    return label.group("tag") or label.group("label")


#: A slot's label: words of two letters or more ("A:" is an option's label), or Chinese.
_SLOT_WORDS = re.compile(r"[A-Za-z][A-Za-z ]{1,24}|[\u4e00-\u9fff]{2,6}")


#: A question that asks for the option that is wrong ("下列说法中不正确的是", "Which is NOT true",
#: "all of the following EXCEPT").
_ASKS_WRONG_ONE = re.compile(r"不正确|错误的是|有误的是|不恰当|不符合|(?i:\b(?:incorrect|not\s+(?:true|correct)|false)\b)|\bEXCEPT\b")
#: The statement that names the wrong one, the answer to such a question.
_WRONG_ONE_MARKER = re.compile(
    r"(?i:the\s+(?:incorrect|wrong|false|untrue)\s+(?:option|answer|choice|statement|one)\s+(?:is|would\s+be)\b\s*:?)"
    r"|(?:错误|有误|不恰当)的(?:选项|说法|一项|是)(?:是|为)?"
)


@lru_cache(maxsize=1024)
def answer_slot(query: str) -> re.Pattern[str] | None:
    """The prompt's answer slot: the label its last line opens and leaves for the model to fill
    (:func:`ending_label`: "Judgement: ", "Label:"), or the one its demonstrations give their
    answers under (:func:`demonstrated_labels`: "jawapan: C"). The model that writes that label
    answers after it, as after "Answer:" (a single letter, "A:", is an option's label and no slot)."""
    labels = [label for label in (ending_label(query), *sorted(demonstrated_labels(query)))
              if label is not None and _SLOT_WORDS.fullmatch(label.strip()) and not _ANSWER.fullmatch(label.strip() + ":")]
    if not labels:
        return None
    words = "|".join(r"\s+".join(map(re.escape, label.split())) for label in labels)
    return re.compile(r"(?<![A-Za-z\u4e00-\u9fff])(?i:" + words + r")\**[ \t]*[:：]\**", re.MULTILINE)


#: The answer wrapper a prompt shows ("wrap it in double square brackets, like this: [[A]]", "{{answer}}").
_WRAPPER_EXAMPLE = re.compile(r"(\[\[|\{\{|<<)\s*(?:[A-J]|(?i:(?:your\s+)?(?:final\s+)?answer)|X|\.\.\.|…)\s*(\]\]|\}\}|>>)")


@lru_cache(maxsize=1024)
def answer_wrapper(query: str) -> re.Pattern[str] | None:
    """The output's spans in the answer wrapper the prompt shows (``[[C]]``), or None."""
    m = _WRAPPER_EXAMPLE.search(query)
    if m is None:
        return None
    return re.compile(re.escape(m.group(1)) + r"(?P<body>[^\n\[\]{}<>]{1,80}?)" + re.escape(m.group(2)))


#: How many times a line repeats at the end before the output counts as looping.
LOOP_MIN = 3


def without_loop(text: str) -> str:
    """``text`` up to the end of the first copy of a line it repeats to its end (a model that
    loops: "This answer is correct." forty times, the last copy cut short); ``text`` when it
    does not loop."""
    lines = text.rstrip().split("\n")
    content = [i for i, line in enumerate(lines) if line.strip()]
    if len(content) < LOOP_MIN:
        return text
    last = lines[content[-1]].strip()
    repeated = lines[content[-2]].strip()
    if not (last == repeated or repeated.startswith(last)) or not re.search(r"[.。!?！？]$", repeated):
        return text  # only a finished sentence loops; a formula written again is still a derivation
    first = content[-2]
    count = 1
    for i in reversed(content[:-2]):
        if lines[i].strip() != repeated:
            break
        first, count = i, count + 1
    if count + 1 < LOOP_MIN:
        return text
    return "\n".join(lines[: first + 1])


def answer_statements(text: str, conclusion_markers: Sequence[str] = (), query: str = "") -> list[Statement]:
    """The statements of ``text`` that may hold its answer, most authoritative first (with
    ``query``, the prompt's :func:`answer_slot` filled in is an answer statement too)."""
    # a line the model repeats to its end is read once ("This answer is correct." forty times)
    text = without_loop(text)
    final: list[Statement] = []
    for start, _end, content in find_boxed(text):
        final.append(Statement("boxed", "\\boxed", start, content))
    slot = answer_slot(query) if query else None
    # a question that asks for the wrong one is answered by "the incorrect option is …"
    wrong = _WRONG_ONE_MARKER if query and _ASKS_WRONG_ONE.search(query) else None
    named = [m for m in FIELD_LINE.finditer(text) if names_the_answer(m.group("label"), query)] if query and ":" in text else []
    named = [m for m in named if not ranked_below_first(m.group("label"), [n.group("label") for n in named])]  # "Second Choice: A"
    for m in itertools.chain(_ANSWER.finditer(text), slot.finditer(text) if slot else (),
                             wrong.finditer(text) if wrong else (), named):
        if _SENTENCE_ENDS_AT.match(text, m.end()) or reported(text, m.start(), query):
            continue  # "这个选项也不是正确答案。" states nothing; 'The user states "the answer is B"' is another's
        final.append(Statement("answer", m.group(0), m.start(), text, m.end(), field=m.re not in (_ANSWER, _WRONG_ONE_MARKER)))
    filled = [m for m in named if in_template(m.group("label"), query)]
    if filled:
        # the output fills the answer template the prompt asks for: its fields are the answer, and
        # what else it states (a "#### 54" after the template, the student's value repeated) is not
        final = [Statement("answer", m.group(0), m.start(), text, m.end(), field=True) for m in filled]
    wrapper = answer_wrapper(query) if query else None
    for m in wrapper.finditer(text) if wrapper else ():  # the wrapper the prompt asks for: "[[C]]"
        final.append(Statement("answer", text[m.start() : m.start("body")], m.start(), text, m.start("body"), body_end=m.end("body")))
    if "<" in text or "[" in text:
        for m in _TAGGED.finditer(text):
            if reported(text, m.start(), query):
                continue  # the prompt's tag quoted back: 'the metadata states `<answer>H</answer>`'
            body = "ab" if m.group("a") else "sb" if m.group("s") else "fb"
            final.append(Statement("answer", text[m.start() : m.start(body)], m.start(), text, m.start(body),
                                   body_end=m.end(body)))
    for m in _CORRECTION.finditer(text):
        if not _negated(text, m.start()):
            # What follows a correction is the corrected working, down to the end.
            final.append(Statement("correction", m.group(0), m.start(), text, m.end(), to_end=True))
    final.sort(key=lambda s: s.start, reverse=True)
    del final[_MAX_PER_TIER:]

    summaries: list[Statement] = []
    consequences: list[Statement] = []
    for m in _conclusion_pattern(tuple(conclusion_markers)).finditer(text):
        if not _negated(text, m.start()):
            summaries.append(Statement("conclusion", m.group(0), m.start(), text, m.end()))
    for m in _CONSEQUENCE.finditer(text):
        consequences.append(Statement("conclusion", m.group(0), m.start(), text, m.end()))
    summaries.sort(key=lambda s: s.start, reverse=True)
    consequences.sort(key=lambda s: s.start, reverse=True)
    return final + summaries[:_MAX_PER_TIER] + consequences[:_MAX_PER_TIER]


_SENTENCE = re.compile(r"[^。！？!?\n]+")


def lines_last_first(text: str) -> Iterator[str]:
    """The non-empty lines of ``text`` from the last, then its sentences from the last."""
    lines = [line for line in text.split("\n") if line.strip()]
    yield from reversed(lines)
    for line in reversed(lines):
        parts = sentences(line)
        if len(parts) > 1:
            yield from reversed(parts)


def lead_sentence(text: str) -> str:
    """The lead sentence of ``text``: its first sentence, where an answer given first and
    explained after is *asserted*."""
    start = 0
    while (m := sentence_end(text, start)) is not None and not text[start : m.start()].strip():
        start = m.end()
    if m is None:
        return text[start:] if text[start:].strip() else ""
    if m.group() in ("?", "？"):
        return ""  # a question ("抗税罪？") asserts nothing
    return text[start : m.start()]


def conclusion_sentence(text: str, skip: Callable[[str], bool] | None = None) -> str:
    """The conclusion sentence of ``text``: its last sentence (split at ``。！？`` and line
    breaks), where an answer stated without any marker is still *asserted*; the last one that
    ``skip`` does not pass over, where given (a sentence that says nothing of the options)."""
    for sentence in sentences_last_first(text):
        if skip is None or not skip(sentence):
            return sentence
    return ""


def sentences_last_first(text: str) -> Iterator[str]:
    """The sentences of ``text`` (split at ``。！？`` and line breaks), from the last."""
    yield from reversed([s for s in sentences(text) if s.strip()])
