"""The readers, one module per reading kind, each with its rules declared beside their code:

- :mod:`~taxpraben.parsing.readers.label`: classification labels (which option an output selects);
- :mod:`~taxpraben.parsing.readers.letters`: multiple-choice letter sets;
- :mod:`~taxpraben.parsing.readers.number`: the final number of a calculation;
- :mod:`~taxpraben.parsing.readers.span`: short-answer spans and their exact match;
- :mod:`~taxpraben.parsing.readers.fields`: fields (a JSON object, key lines, a table);
- :mod:`~taxpraben.parsing.readers.text`: generation tasks (the output is the answer);
- :mod:`~taxpraben.parsing.readers.taxben`: TaxBen's own rules on the raw output (profile ``taxben``);
- :mod:`~taxpraben.parsing.readers.shared`: the rules several kinds share (declared once; each
  kind's module registers its attempt of them).

Importing any of them imports this package, and so every built-in rule is registered
(:mod:`taxpraben.parsing.registry`) before any chain is built.
"""

from __future__ import annotations

from taxpraben.parsing.readers import fields, label, letters, number, shared, span, taxben, text

__all__ = ["fields", "label", "letters", "number", "shared", "span", "taxben", "text"]
