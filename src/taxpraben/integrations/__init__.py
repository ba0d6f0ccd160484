"""TaxPraBen inside other harnesses: Inspect AI tasks (``inspect_tasks``, the extra
``taxpraben[inspect]``; the judge of ``score --judge`` for its scorer: ``judging``),
lm-evaluation-harness tasks (``lm_eval_tasks`` and the YAML under ``lm_eval/``, the extra
``taxpraben[lm-eval]``), and results in their formats (``inspect_log``, ``lm_eval_files``:
``taxpraben export``; read back by ``taxpraben.results.harness_files``). Only ``export`` and
``lm-eval-path`` import them; ``run`` and ``score`` never do."""
