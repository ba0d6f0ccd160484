"""A second reader: a judge model reads what the rules cannot, and an audit measures how far
the rules can be trusted on a model's own outputs (README, "A second reader").

- :mod:`.prompt`: the versioned Chinese template (``prompt_zh.txt``) and its filling;
- :mod:`.reading`: which items are asked, and the reply read back by the task's own reader;
- :mod:`.audit`: the seeded draw, the agreement and its Wilson interval, the banner;
- :mod:`.stage`: :class:`JudgeStage`, the scoring pipeline's second reader (runner + cache).

The stage is imported on first use: the prompt, the readings and the audit need no network code.
"""

from __future__ import annotations

from taxpraben.judge.audit import Agreement, banner, draw, wilson_interval
from taxpraben.judge.prompt import (
    NO_ANSWER,
    JudgePrompt,
    JudgePromptError,
    fill_prompt,
    load_prompt,
)

__all__ = [
    "NO_ANSWER",
    "Agreement",
    "JudgePrompt",
    "JudgePromptError",
    "banner",
    "draw",
    "fill_prompt",
    "load_prompt",
    "wilson_interval",
]
