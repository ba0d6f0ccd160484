"""``taxpraben review``: a person checks a seeded draw of a run's readings on a local page.

- :mod:`.draw`: the readings of a run and the draw stratified by task and by how each was read;
- :mod:`.store`: ``OUT/review.jsonl``, the verdicts, appended one a line as they are given;
- :mod:`.answers`: a reviewer's answer against a gold or a reading;
- :mod:`.estimate`: the stratified estimate of a draw's figures and its interval;
- :mod:`.session`: one reviewer's review in progress (what the page shows, recording a verdict);
- :mod:`.build`: the session of a result directory (the draw, the prompts, the options);
- :mod:`.server`: the page and its API on 127.0.0.1 (standard library);
- ``templates/``: the page, its style and its script.

The figure people's verdicts make is :mod:`taxpraben.report.review`.
"""
