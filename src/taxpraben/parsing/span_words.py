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
- when the gold is a name (capitalised), no other name stands beside it: "Jeff gave the
  football to Bill." names a giver and a receiver, and only the question tells which is asked.

Content words are the words that are not function words (articles, copulas, prepositions,
pronouns, conjunctions): a careful grader reads "In the garden." as *garden* and "The milk."
as *milk*, as SQuAD's normalisation drops articles. The sentence is at most
:data:`MAX_WORDS` words: a paragraph is not an answer sentence. Pure; no I/O.
"""

from __future__ import annotations

import re

__all__ = ["MAX_WORDS", "words_answer"]

#: The longest sentence read word by word.
MAX_WORDS = 16
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)
_LATIN = re.compile(r"[A-Za-z]")
_CJK = re.compile(r"[\u3400-\u9fff]")
_ARTICLES = frozenset({"a", "an", "the"})
_FUNCTION = _ARTICLES | frozenset(
    ["is", "are", "was", "were", "be", "been", "being", "am", "it", "its", "it's", "this", "that", "these", "those", "there", "here", "he", "she", "they", "his", "her", "their", "him", "them", "in", "on", "at", "to", "of", "by", "for", "with", "from", "into", "onto", "within", "inside", "over", "under", "near", "answer", "final", "and", "or", "so", "then", "also", "just", "now", "currently", "still", "located", "found", "finally", "most", "recent", "latest", "location", "place", "person", "position"]
)
_NEGATION = frozenset({"not", "never", "no", "nor", "isn't", "wasn't", "aren't", "weren't", "isn’t", "wasn’t"})


def _words(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(text)]


def _is_name(word: str) -> bool:
    return word[:1].isupper()


def words_answer(sentence: str, gold: str) -> bool:
    """Whether ``sentence`` answers ``gold`` word by word (module docstring); False for text
    that is not written in space-separated words (Chinese) and for an empty gold."""
    if _CJK.search(gold) or _CJK.search(sentence) or not _LATIN.search(gold):
        return False
    written = _WORD.findall(sentence)
    words = [w.casefold() for w in written]
    target = _words(gold)
    while target and target[0] in _ARTICLES:
        target = target[1:]
    if not target or not words or len(words) > MAX_WORDS:
        return False
    content = [i for i, w in enumerate(words) if w not in _FUNCTION]
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
        outside = [i for i in content if i not in inside]
        if _is_name(written[start]) and any(_is_name(written[i]) for i in outside):
            continue
        first = not [i for i in outside if i < start]
        last = not [i for i in outside if i >= start + n]
        if first or last:
            return True
    return False
