"""Answer parsing: pure functions from a model's raw output to what is scored.

- :mod:`~taxpraben.parsing.clean`: reasoning blocks, code fences, character folding, whitespace.
- :mod:`~taxpraben.parsing.prompt_copy`: what an output copies from its prompt, where it moves on to an
  invented question; every reader reads only the model's own answer.
- :mod:`~taxpraben.parsing.region`: the answer region every reader shares, and why nothing was read.
- :mod:`~taxpraben.parsing.numbers`: numbers (reading, finding), gold numbers, equality at N decimals.
- :mod:`~taxpraben.parsing.final_number`: the final answer of a calculation in an output.
- :mod:`~taxpraben.parsing.units`: the unit an amount is asked and written in (万元, 元).
- :mod:`~taxpraben.parsing.choices`: classification labels (JSON field, option letter, named choice).
- :mod:`~taxpraben.parsing.letters`: multiple-choice letter sets.
- :mod:`~taxpraben.parsing.spans`: short-answer spans and their exact match.
- :mod:`~taxpraben.parsing.field_parse`: JSON-shaped answers read into fields (JSON, key lines, tables).
- :mod:`~taxpraben.parsing.field_match`: field alignment to the gold's and field value matching.
- :mod:`~taxpraben.parsing.record_fields`: a record's fields: its gold read into fields, the rule of each.
- :mod:`~taxpraben.parsing.taxben`: TaxBen's own rules on the raw output (profile ``taxben``).
- :mod:`~taxpraben.parsing.rules`: the reading rules as data, and each kind's chain of them.
- :mod:`~taxpraben.parsing.chain`: a reader is its chain run over one view of the output (with a trace);
  the attempts of each kind's rules: ``label_rules``, ``letters_rules``, ``number_rules``,
  ``span_rules``, ``fields_rules``, ``text_rules``.

No I/O, no models.
"""
