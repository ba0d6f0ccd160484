"""TaxPraBen inside other harnesses: Inspect AI tasks (``inspect_tasks``, the extra
``taxpraben[inspect]``), lm-evaluation-harness tasks (``lm_eval_tasks`` and the YAML under
``lm_eval/``, the extra ``taxpraben[lm-eval]``), and results in their formats (``formats``).
Each module imports its harness; nothing of taxpraben's own commands imports them."""
