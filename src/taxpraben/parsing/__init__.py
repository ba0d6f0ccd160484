"""Answer parsing: pure functions from a model's raw output to what is scored.

- :mod:`~taxpraben.parsing.clean`: reasoning blocks, code fences, character folding, whitespace.
- :mod:`~taxpraben.parsing.prompt_copy`: what an output copies from its prompt, where it moves on to an
  invented question; every reader reads only the model's own answer.
- :mod:`~taxpraben.parsing.region`: the answer region every reader shares, and why nothing was read.
- :mod:`~taxpraben.parsing.numbers`: numbers, the final answer of a calculation, equality at N decimals.
- :mod:`~taxpraben.parsing.choices`: classification labels (JSON field, option letter, named choice).
- :mod:`~taxpraben.parsing.letters`: multiple-choice letter sets.
- :mod:`~taxpraben.parsing.spans`: short-answer spans and their exact match.
- :mod:`~taxpraben.parsing.fields`: JSON-shaped answers, field alignment and field matching.
- :mod:`~taxpraben.parsing.taxben`: TaxBen's own rules on the raw output (profile ``taxben``).

No I/O, no models.
"""
