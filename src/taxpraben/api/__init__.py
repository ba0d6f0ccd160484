"""taxpraben as a library (docs/api.md): the calls behind the commands, and taxpraben's
reading and figures for another harness. ``taxpraben`` exports the names; each module is
imported only when one of its names is first used (``taxpraben run`` imports
``api.evaluation`` alone, before its first request):

- ``api.evaluation``: ``evaluate``, ``score`` -> ``Results``; ``load_results``;
- ``api.reading``: ``read_answer`` -> ``Reading``; ``Record.from_dict``;
- ``api.figures``: ``task_figures`` -> ``TaskResult``;
- ``api.semantic``: ``bertscore``, ``bartscore`` on batches of text pairs;
- ``api.options``: the commands' options as keyword arguments.
"""
