#!/usr/bin/env bash
# Download, on a machine with PyPI access, the wheels that the GPU machine's image lacks for
# benchmarks/gpu_check.sh (that machine reaches no registry). They land in .whl/ (ignored by
# git); the device call carries .whl and gpu_check.sh installs them into /tmp/site.
# The image has Python 3.12 with torch, transformers, tokenizers, sentencepiece, numpy, scipy,
# scikit-learn, pyarrow, typer, rich, jinja2, aiohttp, pyyaml and pytest; these are the rest of
# taxpraben's dependencies and the reference bert_score, at the versions CI uses.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .whl
PY="${PYTHON:-python3}"
PLATFORMS=(--platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64
           --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64
           --platform manylinux1_x86_64)
"$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    "${PLATFORMS[@]}" -d .whl \
    pydantic==2.14.4 pydantic-core==2.50.5 annotated-types==0.8.0 typing-inspection==0.4.5 \
    typing-extensions==4.16.0 json-repair==0.64.6 cn2an==0.5.24 proces==0.1.7 ijson==3.6.0 \
    bert-score==0.3.13
ls -la .whl
du -sh .whl
