"""A short answer in an English sentence (parsing/span_words.py): the gold as the first or last
content phrase of the sentence, not negated, with no second name beside a name."""

from __future__ import annotations

import pytest

from taxpraben.parsing.readers.span import span_match
from taxpraben.parsing.span_words import MAX_WORDS, question_of, words_answer


@pytest.mark.parametrize(("sentence", "gold"), [
    ("The football is in the bedroom.", "bedroom"),
    ("The most recent location of Mary is office.", "office"),
    ("The milk to Fred.", "milk"),
    ("In the garden.", "garden"),
    ("The milk.", "milk"),
    ("Before the garden the milk was in the kitchen.", "kitchen"),
    ("It is the New York office.", "New York office"),
])
def test_a_sentence_that_states_the_gold_answers_it(sentence: str, gold: str) -> None:
    assert words_answer(sentence, gold)


@pytest.mark.parametrize(("sentence", "gold"), [
    ("Mary went to the office, then to the kitchen and the garden.", "kitchen"),
    ("The milk is not in the office.", "office"),
    ("Jeff gave the football to Bill.", "Bill"),  # a giver and a receiver: the question decides
    ("Jeff gave the football to Bill.", "Jeff"),
    ("The office is north of the hallway and south of the garden.", "hallway"),
    ("应纳税额为三十日", "三十日"),  # Chinese: matched by the phrase rules of spans.py
    (" ".join(["word"] * (MAX_WORDS + 1)) + " office", "office"),
])
def test_a_sentence_that_does_not_state_the_gold_does_not_answer_it(sentence: str, gold: str) -> None:
    assert not words_answer(sentence, gold)


def test_span_match_takes_an_english_answer_sentence() -> None:
    assert span_match("Answer: The apple is in the hallway.\n\nQuestion: Where is the milk?", "hallway")
    assert not span_match("Answer: The apple is not in the hallway.", "hallway")


@pytest.mark.parametrize(("sentence", "gold", "question", "answers"), [
    ("Fred gave the apple to Bill.", "Fred", "Who gave the apple?", True),  # the doer: the first name
    ("Fred gave the apple to Bill.", "Bill", "Who gave the apple?", False),
    ("Mary gave the apple to Bill.", "Bill", "Who did Mary give the apple to?", True),  # the name not asked with
    ("Mary gave the apple to Bill.", "Mary", "Who did Mary give the apple to?", False),
    ("Fred gave the milk to Jeff.", "Jeff", "Who gave the milk to Fred?", False),  # the roles reversed
    ("Mary gave the milk to Fred.", "milk", "What did Mary give to Fred?", True),  # what the question does not give
    ("Mary gave the milk to Fred.", "milk", "", False),  # without the question: passed on the way
])
def test_the_question_tells_which_word_of_the_sentence_answers(sentence: str, gold: str, question: str, answers: bool) -> None:
    assert words_answer(sentence, gold, question) is answers


def test_the_question_of_a_prompt_is_its_last_asking_line() -> None:
    assert question_of("Context: [facts]\n\nQuestion: Who gave the apple?") == "Who gave the apple?"
    assert question_of("请阅读材料。\n问题：谁缴纳了税款？\n答案：") == "谁缴纳了税款？"
    assert question_of("Summarise the passage.") == ""
