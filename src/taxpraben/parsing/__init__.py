"""Answer parsing: pure functions from a model's raw output to what is scored.

- :mod:`~taxpraben.parsing.clean`: reasoning blocks, code fences, character folding, whitespace.
- :mod:`~taxpraben.parsing.numbers`: numbers, the final answer of a calculation, equality at N decimals.
- :mod:`~taxpraben.parsing.choices`: classification labels (JSON field, option letter, named choice).
- :mod:`~taxpraben.parsing.letters`: multiple-choice letter sets.
- :mod:`~taxpraben.parsing.spans`: short-answer spans and their exact match.
- :mod:`~taxpraben.parsing.fields`: JSON-shaped answers, field alignment and field matching.

Each module has a ``*_taxben`` variant where TaxBen's published rule differs. No I/O, no models.
"""
