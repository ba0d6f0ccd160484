"""Answer parsing: pure functions from a model's raw output to what is scored.

- :mod:`~taxpraben.parsing.clean`: reasoning blocks, code fences, character folding, whitespace.
- :mod:`~taxpraben.parsing.prompt_copy`: what an output copies from its prompt, where it moves on to an
  invented question; every reader reads only the model's own answer.
- :mod:`~taxpraben.parsing.region`: the answer region every reader shares, and why nothing was read.
- :mod:`~taxpraben.parsing.numbers`: numbers (reading, finding), gold numbers, equality at N decimals.
- :mod:`~taxpraben.parsing.readers.number`: the final answer of a calculation in an output.
- :mod:`~taxpraben.parsing.units`: the unit an amount is asked and written in (万元, 元).
- :mod:`~taxpraben.parsing.readers.label`: classification labels (JSON field, option letter, named choice).
- :mod:`~taxpraben.parsing.readers.letters`: multiple-choice letter sets.
- :mod:`~taxpraben.parsing.readers.span`: short-answer spans and their exact match.
- :mod:`~taxpraben.parsing.readers.fields`: JSON-shaped answers read into fields (JSON, key lines, tables).
- :mod:`~taxpraben.parsing.field_match`: field alignment to the gold's and field value matching.
- :mod:`~taxpraben.parsing.record_fields`: a record's fields: its gold read into fields, the rule of each.
- :mod:`~taxpraben.parsing.readers.taxben`: TaxBen's own rules on the raw output (profile ``taxben``).
- :mod:`~taxpraben.parsing.readers`: one module per reading kind, each rule declared beside its code
  (:mod:`~taxpraben.parsing.readers.shared`: the rules several kinds share).
- :mod:`~taxpraben.parsing.registry`: a rule is one registered declaration (``register_rule``).
- :mod:`~taxpraben.parsing.rules`: every rule, registered (:data:`~taxpraben.parsing.rules.RULES`).
- :mod:`~taxpraben.parsing.chain`: the named chains (lists of rule names), and a reader as its chain run
  over one view of the output (with a trace).

No I/O, no models.
"""
