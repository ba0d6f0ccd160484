"""``replay:FILE``: answers read back from a predictions file (the predictions contract, docs/results-schema.md).

Existing generations, from this harness or any other tool, can be rescored by a ``run``
without calling a model. A (task, id, run) absent from the file fails with a clear error
(so ``--runs`` should match the file); a line that recorded an ``error`` replays it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from taxpraben.models.base import (
    BackendError,
    Completion,
    GenerationConfig,
    ModelSpecError,
    Request,
)
from taxpraben.results.predictions import Prediction, PredictionFileError, read_predictions


class ReplayBackend:
    """Looks each request up by (task, id, run) in a predictions file."""

    kind = "replay"
    endpoint: str | None = None
    batch_size = 256
    cacheable = False

    def __init__(self, path: str) -> None:
        self.model = path
        file = Path(path).expanduser()
        if not file.is_file():
            raise ModelSpecError(f"replay:{path}: no such predictions file")
        try:
            self._by_key: dict[tuple[str, str, int], Prediction] = {
                p.key: p for p in read_predictions(file)
            }
        except PredictionFileError as exc:
            raise ModelSpecError(str(exc)) from exc
        except (OSError, UnicodeDecodeError) as exc:
            raise ModelSpecError(f"replay:{path}: cannot read the file: {exc}") from exc
        self.runs_in_file = sorted({k[2] for k in self._by_key})

    @property
    def spec(self) -> str:
        return f"replay:{self.model}"

    def shares_runs(self, config: GenerationConfig) -> bool:
        return False

    async def generate(
        self, requests: Sequence[Request], config: GenerationConfig
    ) -> list[Completion | BackendError]:
        out: list[Completion | BackendError] = []
        for request in requests:
            found = self._by_key.get(request.key)
            if found is None:
                task, item, run = request.key
                out.append(
                    BackendError(
                        f"no prediction for task {task} id {item} run {run} in {self.model} "
                        f"(the file has runs {self.runs_in_file})",
                        retryable=False,
                    )
                )
            elif found.error:
                out.append(BackendError(found.error, retryable=False))
            else:
                out.append(
                    Completion(
                        text=found.prediction,
                        reasoning=found.reasoning,
                        usage=found.usage,
                        latency_s=found.latency_s,
                    )
                )
        return out

    async def aclose(self) -> None:
        return None
