# Fresh machine: `make demo` (set up + evaluate the baselines on the bundled sample),
# `make test` (set up + lint + type check + the whole test suite). Both create .venv on first use.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# CPU build by default (a plain `torch` requirement pulls a multi-GB CUDA build);
# GPU users: make TORCH_SPEC="torch>=2.2" setup, or install their own torch first.
TORCH_SPEC ?= torch==2.13.0
# The demo scores the generation tasks with the scorer models when they are in the
# Hugging Face cache; `make demo ONLINE=1` lets it download them (~2 GB) first.
ONLINE ?= 0
HF_ENV := $(if $(filter 1,$(ONLINE)),,HF_HUB_OFFLINE=1)
# Offline, a scorer model that is not cached leaves its tasks "not computed": the results are
# partial for a reason nobody chose, which `run` and `report` end with exit 6 unless told
# --allow-partial. The offline demo says so and passes it; ONLINE=1 needs no such flag.
DEMO_PARTIAL := $(if $(filter 1,$(ONLINE)),,--allow-partial)
DEMO_OUT ?= runs/demo

.PHONY: setup demo test lint clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q "$(TORCH_SPEC)"
	$(BIN)/python -m pip install -q -e ".[test]"
	touch $@

demo: setup
	$(BIN)/taxpraben tasks
	$(BIN)/taxpraben validate --data sample --quiet
	@$(if $(DEMO_PARTIAL),echo "make demo runs offline: without the scorer models in the Hugging Face cache the generation tasks are not computed and the results partial (--allow-partial accepts that; make demo ONLINE=1 downloads the models).")
	$(HF_ENV) $(BIN)/taxpraben run --model baseline:oracle --data sample --runs 5 --out $(DEMO_OUT)/oracle $(DEMO_PARTIAL)
	$(HF_ENV) $(BIN)/taxpraben run --model baseline:first-choice --data sample --runs 5 --out $(DEMO_OUT)/first-choice $(DEMO_PARTIAL)
	$(BIN)/taxpraben report $(DEMO_OUT)/oracle $(DEMO_OUT)/first-choice --out $(DEMO_OUT)/leaderboard $(DEMO_PARTIAL)

lint: setup
	$(BIN)/ruff check .

test: setup
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/python -m pytest -q

clean:
	rm -rf $(VENV) runs .pytest_cache .ruff_cache .mypy_cache .hypothesis
