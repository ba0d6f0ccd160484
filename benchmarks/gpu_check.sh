#!/usr/bin/env bash
# The GPU figures of issue 12 in one command, for a session that has a GPU (an H200 here).
#
#   1. Here, with PyPI access:   bash benchmarks/gpu_wheels.sh     (fills .whl/, ignored by git)
#   2. On the GPU machine:       bash benchmarks/gpu_check.sh      (carry .whl; ~8 minutes)
#
# Runs benchmarks/gpu_scoring.py (real-shape XLNet and BART, the full synthetic benchmark,
# taxpraben vs bert_score and the neulab BARTScore reference, float32/tf32/bf16) and
# benchmarks/hf_generation.py (0.5B-shaped LLaMA, the sample's prompts, tokens/s) with
# --device cuda. Writes gpu_check.log, gpu_scoring.json and hf_generation.json into $OUT (the
# device tool's folder) or, without it, benchmarks/gpu-figures/. Each step has a time limit so
# that a slow one cannot eat the other's figures; PART=scoring or PART=generation runs one.
# Dry run on a CPU: DEVICE=cpu EXTRA=--tiny bash benchmarks/gpu_check.sh
set -uo pipefail
cd "$(dirname "$0")/.."
DEST="${OUT:-benchmarks/gpu-figures}"
mkdir -p "$DEST"
LOG="$DEST/gpu_check.log"
PY="${PYTHON:-python3}"
PART="${PART:-all}"
DEVICE="${DEVICE:-cuda}"
read -r -a EXTRA_ARGS <<<"${EXTRA:-}"

if compgen -G ".whl/*.whl" >/dev/null; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/taxpraben-site .whl/*.whl || exit 1
    export PYTHONPATH="/tmp/taxpraben-site${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false HF_HUB_DISABLE_PROGRESS_BARS=1

{
    echo "== gpu_check $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
    nvidia-smi --query-gpu=name,memory.total,memory.used,driver_version --format=csv,noheader || true
    "$PY" -c "import sys, torch, transformers; print('python', sys.version.split()[0], 'torch', torch.__version__, 'transformers', transformers.__version__, 'cuda', torch.cuda.is_available())"
    "$PY" -c "import taxpraben.scoring.pipeline, bert_score" \
        || { echo "missing packages: run benchmarks/gpu_wheels.sh where pip works, and carry .whl"; exit 1; }
} 2>&1 | tee "$LOG"
[ "${PIPESTATUS[0]}" -eq 0 ] || exit 1

status=0
if [ "$PART" = all ] || [ "$PART" = scoring ]; then
    echo "== gpu_scoring.py" | tee -a "$LOG"
    timeout 330 "$PY" benchmarks/gpu_scoring.py --device "$DEVICE" --reference-stride 2 "${EXTRA_ARGS[@]}" \
        --json "$DEST/gpu_scoring.json" 2>&1 | grep -v -e "Loading weights" -e "Writing model" | tee -a "$LOG"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi
if [ "$PART" = all ] || [ "$PART" = generation ]; then
    echo "== hf_generation.py" | tee -a "$LOG"
    timeout 210 "$PY" benchmarks/hf_generation.py --device "$DEVICE" "${EXTRA_ARGS[@]}" \
        --json "$DEST/hf_generation.json" 2>&1 | grep -v -e "Loading weights" -e "Writing model" | tee -a "$LOG"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi
echo "== done $(date -u +%H:%M:%SZ), status $status" | tee -a "$LOG"
exit $status
