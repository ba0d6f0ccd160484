"""A short answer in a sentence of words: when an English (or any space-separated) sentence
answers a span question with the gold.

Chinese answers are matched as phrases between Chinese boundaries
(:func:`taxpraben.parsing.readers.span.span_match`); a sentence in a language that separates its
words by spaces is matched word by word. Such a sentence answers the gold when

- the gold's words (leading articles aside) stand in it as a run of whole words;
- that run is the sentence's **first or last content phrase**: what the sentence is about or
  what it concludes ("Fred gave the apple to Bill." answers *Fred*; "The football is in the
  bedroom." answers *bedroom*; "The most recent location of Mary is office." answers
  *office*), not something it passes on the way ("Mary went to the office, then to the
  kitchen." does not answer *office*);
- no negation stands before it with only function words between ("not in the office",
  "never in the garden");
- when the gold is a name (capitalised), no other name stands beside it, unless the question
  tells which is asked: "Jeff gave the football to Bill." names a giver and a receiver; for
  "Who gave the football?" the doer, the sentence's first name, is the answer, for "Who did Jeff
  give the football to?" the one name the question does not give.

Content words are the words that are not function words (articles, copulas, prepositions,
pronouns, conjunctions): a careful grader reads "In the garden." as *garden* and "The milk."
as *milk*, as SQuAD's normalisation drops articles. The sentence is at most
:data:`MAX_WORDS` words, or :data:`RESTATED_MAX_WORDS` where it adds nothing but the gold to the
question's words: a paragraph is not an answer sentence. Pure; no I/O.
"""

from __future__ import annotations

import re

__all__ = ["MAX_WORDS", "question_line", "question_of", "words_answer"]

#: The longest sentence read word by word, and the longest one that restates the question and adds
#: nothing but the gold ("The Ninth Circuit Court of Appeals denied the plaintiff's request for an
#: en banc rehearing on November 12, 2019.").
MAX_WORDS = 16
RESTATED_MAX_WORDS = 32
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)
_LATIN = re.compile(r"[A-Za-z]")
_CJK = re.compile(r"[\u3400-\u9fff]")
_ARTICLES = frozenset({"a", "an", "the"})
_FUNCTION = _ARTICLES | frozenset(
    ["is", "are", "was", "were", "be", "been", "being", "am", "it", "its", "it's", "this", "that", "these", "those", "there", "here", "he", "she", "they", "his", "her", "their", "him", "them", "in", "on", "at", "to", "of", "by", "for", "with", "from", "into", "onto", "within", "inside", "over", "under", "near", "answer", "final", "and", "or", "so", "then", "also", "just", "now", "currently", "still", "located", "found", "finally", "most", "recent", "latest", "location", "place", "person", "position"]
)
_NEGATION = frozenset({"not", "never", "no", "nor", "isn't", "wasn't", "aren't", "weren't", "isn’t", "wasn’t"})
#: The words with which a sentence cites where its answer comes from ("According to the passage",
#: "Based on the provided text", "as mentioned in the article").
_CITING = frozenset(["according", "based", "passage", "text", "context", "article", "document", "information", "provided",
                     "given", "mentioned", "stated", "states", "as", "per", "specifically", "explicitly"])
#: The English endings of an inflected word ("participated", "plays", "opposing"; "denied", "carries").
_INFLECTION = re.compile(r"(?:ing|ed|es|s|d)$")
_Y_INFLECTION = re.compile(r"i(?:ed|es)$")


def _stem(word: str) -> str:
    """``word`` without its inflection, where a stem of three letters or more is left."""
    bare = _INFLECTION.sub("", _Y_INFLECTION.sub("y", word))
    return bare if len(bare) >= 3 else word


def _words(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(text)]


def _is_name(word: str) -> bool:
    return word[:1].isupper()


#: A question about the doer ("Who gave the apple?"): "who" and a verb, no auxiliary and subject.
_ASKS_SUBJECT = re.compile(r"^\W*who\s+(?!did|does|do|was|is|were|are|has|have|had|will|would|can|could)[a-z]+", re.IGNORECASE)


#: A question about the subject by its kind: "Which receiver had the longest reception?", "What
#: team scored last?" (not "Which team did they beat?").
_ASKS_WHICH_SUBJECT = re.compile(
    r"^\W*(?:which|what)\s+[a-z]+\s+(?!did|does|do|will|would|can|could|should)[a-z]+\b", re.IGNORECASE)
#: A question that offers its answers: "…, Tulu or Hindi?", "…: Indians or Pakistanis?".
_OFFERS = re.compile(r"[,:]\s*(?:the\s+)?([A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)\s+or\s+(?:the\s+)?"
                     r"([A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)\s*\?\s*$")
#: Words before a name that compare with it rather than assert it.
_COMPARED = frozenset({"than", "not", "over", "unlike"})


def _offered_names(question: str) -> frozenset[str]:
    """The words of the alternatives a question offers (case-folded), or none."""
    m = _OFFERS.search(question)
    if m is None:
        return frozenset()
    return frozenset(w.casefold() for alt in m.groups() for w in _WORD.findall(alt))


#: A short label before a question ("Question: ", "Q3: ").
_LEADING_LABEL = re.compile(r"^[^:：?]{0,20}[:：]\s*")
#: The words that open an English question.
_WH = r"who|whom|whose|what|which|when|where|why|how"


def question_line(query: str) -> str:
    """The line of a prompt that asks (ends in ``?``), up to its question mark and without a label
    ("Question: Janet has 16 ducks. … How much does she make?" is all but "Question: "): the
    question with the data it gives on its line; "" when no line asks."""
    for line in reversed(query.splitlines()):
        line = line.strip()
        asks = max(line.rfind("?"), line.rfind("？"))
        if asks >= 0:
            return _LEADING_LABEL.sub("", line[: asks + 1])
    return ""


def question_of(query: str) -> str:
    """The question of a prompt: the sentence that asks in its last line that asks, without a
    label ("Question: Who gave the apple?" is "Who gave the apple?"); "" when none asks."""
    line = question_line(query)
    if line:
        # the question is the sentence that asks: not an instruction after it on its line ('Which
        # character is most likely "$$MASK$$"? Just say the name …'), nor the passage before it,
        # even glued to it ("… private entrepreneurs.Which faction did the Reformists oppose?")
        return _LEADING_LABEL.sub("", _SENTENCE_BREAK.split(line)[-1])
    # no line asks with a question mark: the question a label introduces ("Question: Who took over
    # for Mirwais", "Instruction: when did season 2 of handmaid's tale start")
    labelled: list[str] = _LABELLED_QUESTION.findall(query) or _QUESTION_UNDER_LABEL.findall(query)
    if labelled:
        return labelled[-1].strip()
    # a prompt that is nothing but its question, asked without a mark ("who plays the walking boss in
    # cool hand luke"), or that ends on one
    lines = [line.strip() for line in query.splitlines() if line.strip()]
    return lines[-1] if lines and _WH_OPENING.match(lines[-1]) else ""


#: Where one sentence ends and the next begins on a line: a full stop, then a space or its closing
#: quote, then a capital or a question word ("… exports.when did the war start?"); "U.S. Army",
#: "3.5" and the tokenised "systems inc . of an investment" go on.
_SENTENCE_BREAK = re.compile(
    r"(?:(?<=[.!])(?<![A-Z][.!])(?<!\bMr\.)(?<!\bMrs\.)(?<!\bMs\.)(?<!\bDr\.)(?<!\bSt\.)(?<!\bvs\.)(?<!\bNo\.)(?<!\bal\.)\s+"
    r"|(?<=[a-z0-9)\]][.!])[\"”’']?)(?=[A-Z]|(?:" + _WH + r")\b)|(?<=[。！])"
)


#: A line that opens as a question does, with a question word.
_WH_OPENING = re.compile(r"(?i:(?:in|on|at|for|from|to|by|of|with|during)\s+)?(?i:" + _WH + r")\b")


#: A question on the line under its label, the label alone on its line ("Question:\nin 2018 what
#: was the percent of …").
_QUESTION_UNDER_LABEL = re.compile(r"(?im)^[ \t#*]*question[ \t]*[:：]?[ \t*]*\n+[ \t]*([^\n]*[A-Za-z\u4e00-\u9fff][^\n]*)")
#: A question introduced by its label and opening with a question word, up to its line's end.
_LABELLED_QUESTION = re.compile(
    r"(?:^|\s)(?i:question|instruction|q)\s*[:：]\s*((?i:who|whom|whose|what|which|when|where|why|how)\b[^\n]*)"
)


#: A copula and the hedges a model puts after it ("is most likely", "was probably").
_COPULA = frozenset({"is", "was", "are", "were"})
_HEDGES = frozenset({"most", "likely", "probably", "clearly", "definitely", "therefore", "thus"})


def _passive_agent(written: list[str], start: int) -> bool:
    """The word at ``start`` is the doer a passive sentence names after "by" ("was given the
    football by Fred", "was succeeded by his brother Abdul Aziz")."""
    words = [w.casefold() for w in written]
    by = next((i for i in range(start - 1, max(-1, start - 4), -1) if words[i] == "by"), None)
    if by is None or any(_is_name(w) for w in written[by + 1 : start]):
        return False
    return any(w in _COPULA or w in ("been", "be", "being") for w in words[:by])


def _complement(written: list[str], start: int) -> bool:
    """The word at ``start`` is what a copula says the subject is ("… is most likely Isabella")."""
    i = start - 1
    while i >= 0 and written[i].casefold() in _HEDGES:
        i -= 1
    return i >= 0 and written[i].casefold() in _COPULA


def _names_answer(written: list[str], start: int, question: str, length: int = 1) -> bool:
    """Where the sentence names others beside the gold name, whether the question tells the
    gold is the one asked for: the names the question itself gives are not its answer; of the
    others, a question about the doer ("Who gave the apple?") asks for the sentence's first
    name ("Fred gave the apple to Bill."), any other for the only name it does not give
    ("Who did Mary give the apple to?": "Mary gave the apple to Bill.")."""
    asked = {w.casefold() for w in _WORD.findall(question)}
    offered = _offered_names(question)
    if offered:
        # "Which language is spoken least, Tulu or Hindi?": the alternative the sentence asserts,
        # the first it names, not one it compares with ("… smaller than the group of Indians")
        named = [i for i, w in enumerate(written) if w.casefold() in offered
                 and not (i and written[i - 1].casefold() in _COMPARED)
                 and not (i > 1 and written[i - 2].casefold() in _COMPARED and written[i - 1].casefold() in _ARTICLES)]
        return named[:1] == [start]
    if not asked or written[start].casefold() in asked:
        return False
    names = [i for i, w in enumerate(written) if _is_name(w) and w.casefold() not in _FUNCTION]
    if _ASKS_SUBJECT.match(question) or _ASKS_WHICH_SUBJECT.match(question):
        if _complement(written, start) and all(written[i].casefold() in asked for i in names if i < start):
            return True  # "the character referred to as "$$MASK$$" is most likely Isabella": named by the copula
        if _passive_agent(written, start):
            return True  # "Jeff was given the football by Fred": the doer of a passive sentence
        return names[:1] == [start]  # "Who gave the milk to Fred?" is not "Fred gave the milk to Jeff."
    # the gold's own words may be several names ("Piero Sraffa"): the others are the sentence's rest
    return [i for i in names if written[i].casefold() not in asked and not start < i < start + length] == [start]


#: The most words an apposition after the answer may have ("London, England", "Austin, Texas").
_APPOSITION_WORDS = 3


def _apposition(sentence: str, found: list[re.Match[str]], after: int) -> bool:
    """The words from index ``after`` to the end of the sentence are an apposition of the answer
    before them: set off by a comma or a bracket, a few names or a bracketed note ("… held in
    London, England.", "… is two (8 years).")."""
    tail = found[after:]
    if not tail or len(tail) > _APPOSITION_WORDS:
        return False
    between = sentence[found[after - 1].end() : tail[0].start()]
    if "(" in between:
        return ")" in sentence[tail[-1].end() :]
    return "," in between and all(_is_name(m.group(0)) for m in tail)


def words_answer(sentence: str, gold: str, question: str = "") -> bool:
    """Whether ``sentence`` answers ``gold`` word by word (module docstring); False for text
    that is not written in space-separated words (Chinese) and for an empty gold. ``question``:
    what the prompt asks, which tells which of several names is the answer."""
    if _CJK.search(gold) or _CJK.search(sentence) or not _LATIN.search(gold):
        return False
    found = list(_WORD.finditer(sentence))
    written = [m.group(0) for m in found]
    words = [w.casefold() for w in written]
    target = _words(gold)
    while target and target[0] in _ARTICLES:
        target = target[1:]
    if not target or not words or len(words) > RESTATED_MAX_WORDS:
        return False
    asked = {w.casefold() for w in _WORD.findall(question)}
    # the question's own words stand around its answer ("Mary gave the milk to Fred." for "What
    # did Mary give to Fred?"): what the sentence adds is the rest
    # in any inflection ("Schwarzenegger participated in …" for "… did Schwarzenegger participate
    # in"), and the words that cite the source ("according to the passage", "as the text states")
    stems = {_stem(w) for w in asked}
    content = [i for i, w in enumerate(words) if w not in _FUNCTION and w not in _CITING and _stem(w) not in stems]
    n = len(target)
    for start in range(len(words) - n + 1):
        if words[start : start + n] != target:
            continue
        back = start - 1
        while back >= 0 and (words[back] in _FUNCTION or words[back] in _NEGATION):
            if words[back] in _NEGATION:  # "not in the office": negated up to the last content word
                break
            back -= 1
        if back >= 0 and words[back] in _NEGATION:
            continue
        inside = set(range(start, start + n))
        # an apposition after the answer ("… in London, England.") is the answer's own: the sentence ends with it
        ends = start + n if _apposition(sentence, found, start + n) else len(words)
        outside = [i for i in content if i not in inside and i < ends]
        if _is_name(written[start]) and any(_is_name(w) and i not in inside and words[i] not in _FUNCTION
                                            for i, w in enumerate(written[:ends])):
            if _names_answer(written[:ends], start, question, n):
                return True
            continue
        first = not [i for i in outside if i < start]
        last = not [i for i in outside if i >= start + n]
        # a longer sentence answers only where it adds nothing but the gold to the question's words
        if (first or last) and (len(words) <= MAX_WORDS or not outside):
            return True
    return False
