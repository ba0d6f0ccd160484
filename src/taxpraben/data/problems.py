"""What is wrong with a dataset, as the reader reports it (the contract: README, "Data format").

Every problem is collected with its file, line (1-based for JSON Lines; the 0-based record
index for arrays and parquet) and field; :func:`~taxpraben.data.loader.load_data` refuses to
continue when there is any, so a bad record is never skipped silently. ``taxpraben validate``
prints them all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

#: How a problem's position counts: "line" for JSON Lines (1-based), "record" for arrays and parquet.
Unit = Literal["line", "record"]


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a data file. ``line`` is None for file-level problems."""

    path: str
    message: str
    line: int | None = None
    field: str | None = None
    severity: Literal["error", "warning"] = "error"
    #: "line" for JSON Lines (1-based), "record" for arrays and parquet (0-based index).
    unit: Unit = "line"

    def __str__(self) -> str:
        where = self.path
        if self.line is not None:
            where += f":{self.line}" if self.unit == "line" else f" record {self.line}"
        fld = f" field '{self.field}'" if self.field else ""
        return f"{self.severity}: {where}{fld}: {self.message}"


class DataError(ValueError):
    """Data that cannot be used; carries every problem found."""

    def __init__(self, problems: Sequence[Problem]):
        self.problems = list(problems)
        errors = [p for p in self.problems if p.severity == "error"]
        head = f"{len(errors)} problem(s) in the data:"
        shown = "\n".join(f"  {p}" for p in errors[:50])
        more = f"\n  ... and {len(errors) - 50} more" if len(errors) > 50 else ""
        super().__init__(f"{head}\n{shown}{more}\nRun `taxpraben validate --data DIR` for the full list.")
