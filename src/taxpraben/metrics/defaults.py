"""The protocol's scoring profiles, scorer models and the environment variables that override them.

One owner for these names: the kinds, the scorers, the scoring settings and the CLI all read
them here (a light module, so the CLI can show and check its defaults without importing
numpy or torch).
"""

from typing import Literal

#: Scoring profiles: this project's rules, or TaxBen's exact ones (to compare like for like).
Profile = Literal["taxpraben", "taxben"]
PROFILES: tuple[str, ...] = ("taxpraben", "taxben")

DEFAULT_BERTSCORE_MODEL = "hfl/chinese-xlnet-base"
DEFAULT_BERTSCORE_LAYER = 5
DEFAULT_BARTSCORE_MODEL = "facebook/bart-large-cnn"

ENV_BERTSCORE_MODEL = "TAXPRABEN_BERTSCORE_MODEL"
ENV_BERTSCORE_LAYER = "TAXPRABEN_BERTSCORE_LAYER"
ENV_BARTSCORE_MODEL = "TAXPRABEN_BARTSCORE_MODEL"
ENV_BARTSCORE_WEIGHTS = "TAXPRABEN_BARTSCORE_WEIGHTS"

#: ``--scorer-dtype`` values: exact float32 (the default: the reference's numbers), TF32
#: matrix products on CUDA, or the scorer models in bfloat16. The last two trade exactness
#: for speed; results.json records the choice.
SCORER_DTYPES = ("float32", "tf32", "bf16")
