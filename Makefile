# Causal self-attention exercises. `make grade` and `make test` set everything up on first use.
# As root (CI, Gradescope), the venv is made from the system's Python when it has one: grading workers then drop
# to an unprivileged uid, which could not read a Python kept under /root (pyenv's, say).
PYTHON_SYSTEM ?= $(shell if [ "$$(id -u)" = 0 ] && [ -x /usr/bin/python3 ] && \
  /usr/bin/python3 -c 'import sys, venv; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; \
  then echo /usr/bin/python3; else echo python3; fi)
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
SUBMISSION ?= exercises
SUITE ?= public
ARGS ?=
EX ?=
# `make grade LANG=sv`: LANG given to make (not the environment's locale, which the grader reads by itself)
LANG_ARG = $(if $(filter command line,$(origin LANG)),--lang $(LANG))
COURSE_LANG ?=

.PHONY: report test-browser browser-deps dask-scheduler dask-worker cuda-samples gpu-check gpu-check-carry grade test test-corpus test-class test-deploy exercises controls bench venv system-deps clean help release autograde gradescope doctor needs messages

help:
	@echo "make grade [SUBMISSION=DIR] [SUITE=public|hidden|all]  grade a submission (default: exercises/)"
	@echo "make grade EX=row_softmax                               grade one exercise (pictures: grade-report/)"
	@echo "make grade LANG=sv                                      the scorecard in Swedish (zh, sv, ja, en; else the locale's)"
	@echo "make test                                               the grader's self-tests"
	@echo "make doctor                                             check this machine for what grading needs"
	@echo "make test-corpus / make test-class                      the adversarial corpus / an nbgrader class (CI runs both)"
	@echo "make test-deploy                                        the Gradescope image in its memory, a Dask cluster (CI runs it)"
	@echo "make exercises                                          regenerate exercises/ from solutions/"
	@echo "make controls                                           grade the known-wrong submissions"
	@echo "make bench [ARGS='--only speed']                        time grading of the reference (or one part)"
	@echo "make cuda-samples SAMPLES=PATH [ARGS=--only vectorAdd]  NVIDIA's cuda-samples (a checkout) on the CPU runtime"
	@echo "make gpu-check [SAMPLES=PATH]                           the GPU check (docs/gpu-check.md); no GPU: its CPU side"
	@echo "make gpu-check-carry SAMPLES=PATH                       .gpucheck/, what the device machine needs for it"
	@echo "make release [COURSE_LANG=ja]                           nbgrader course + student repository (build/), in a language"
	@echo "make autograde [JOBS=N] [ARGS=--collect]                (collect,) autograde build/course/submitted, feedback, grades.csv"
	@echo "make gradescope [COURSE_LANG=ja]                        build/gradescope/autograder.zip"
	@echo "make messages                                           update the catalogs of the grader's words (grader/locale)"
	@echo "make report [RESULTS=DIR]                               the class report (build/course/report.html)"
	@echo "make test-browser                                       the report and the notebook in headless chromium"
	@echo "make dask-scheduler [PORT=8786]                         a Dask cluster's scheduler, for batch --scheduler (docs/dask.md)"
	@echo "make dask-worker SCHEDULER=tcp://HOST:8786 [WORKERS=N]  grade for a Dask cluster on this machine (docs/dask.md)"

# The venv is rebuilt only when requirements.txt changes; pip skips what is already installed.
# torch first, alone, from PyTorch's CPU-only index (requirements/torch-cpu.txt says why), with pip: pip's own
# configuration (pip.conf's mirrors, find-links) reaches that index or its stand-in. --retries 2: an index that cannot
# be reached (a mirror-only network) costs a second. Then uv (requirements/uv.txt) installs torch's dependencies
# with the rest: the same versions as pip in 5.5 s where pip takes 52 s (uv's cache cold, on 2 cores). Where uv
# cannot, pip does. Neither writes bytecode: compileall writes it on every core (22 s on 2; pip writes one file at a
# time). Grading workers run with -B and could never write it themselves. Files that are not Python 3 (packages'
# test data) fail to compile, as they do under pip, which ignores them too: hence the `|| true`.
TORCH_PIN = $$(grep -E '^torch==' requirements/grading.txt)
PIP_INSTALL = $(PY) -m pip install --quiet --disable-pip-version-check --no-compile
$(STAMP): requirements.txt $(wildcard requirements/*.txt)
	@test -x $(PY) || $(PYTHON_SYSTEM) -m venv $(VENV)
	$(PIP_INSTALL) --no-deps --retries 2 -r requirements/torch-cpu.txt "$(TORCH_PIN)"
	$(PIP_INSTALL) --retries 2 -r requirements/uv.txt || true
	$(VENV)/bin/uv pip install --quiet --python $(PY) -r requirements.txt || $(PIP_INSTALL) -r requirements.txt
	@$(PY) -m compileall -qq -j 0 $(VENV)/lib || true
	@touch $@

venv: $(STAMP)

include grader/course/student_files/system-deps.mk

grade: $(STAMP)
	@$(MAKE) -s system-deps || echo "(until then the CUDA kernel cannot be graded here; the Python exercises can)" >&2
	@$(PY) -m grader grade --warm --submission $(SUBMISSION) --suite $(SUITE) $(if $(EX),--exercise $(EX)) $(LANG_ARG) $(ARGS)

# The self-tests start a few hundred Python processes: their bytecode is cached under build/ (with
# PYTHONDONTWRITEBYTECODE set, as on the CI machine, each would compile the grader anew: ~0.08 s apiece).
# Their `make grade`s run cold (GRADER_WARM=off): a warm server (grader/warm) would outlive the tests; the tests
# of the warm server start and stop their own. The kernel report's memory traffic (a profiled build per kernel,
# grader/cuda/profile.py) is off but where a test asks for it (GRADER_PROFILE).
TEST_ENV := env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX=$(CURDIR)/build/pycache GRADER_WARM=off \
	GRADER_PROFILE=off

test: $(STAMP) system-deps
	$(TEST_ENV) $(PY) -m pytest tests/self -n 2 --dist loadfile --no-loadscope-reorder -p no:cacheprovider $(ARGS)

# the nbgrader class end to end (real nbgrader and kernels; minutes): tests/self/test_class_nbgrader.py
test-corpus: $(STAMP) system-deps
	$(TEST_ENV) GRADER_CORPUS_TEST=1 $(PY) -m pytest tests/self/test_adversarial.py -p no:cacheprovider $(ARGS)

test-class: $(STAMP) system-deps browser-deps
	$(TEST_ENV) GRADER_CLASS_TEST=1 $(PY) -m pytest tests/self/test_class_nbgrader.py -p no:cacheprovider $(ARGS)

# the deployments end to end (a minute or more): the Gradescope image from setup.sh's prebuild on, in its stated
# memory (tests/self/test_gradescope_image.py), and a class graded on a Dask cluster (tests/self/test_dask.py)
test-deploy: $(STAMP) system-deps
	$(TEST_ENV) GRADER_DEPLOY_TEST=1 $(PY) -m pytest tests/self/test_gradescope_image.py tests/self/test_dask.py \
	  -n 2 --dist loadfile -p no:cacheprovider $(ARGS)

exercises: $(STAMP)
	$(PY) -m grader exercises

controls: $(STAMP)
	$(PY) -m grader controls

# ARGS="--only PART ..." runs those parts of `python -m grader bench` only (bench-batch is the whole run's last part)
bench: $(STAMP)
	@$(PY) -m grader bench $(ARGS); status=$$?; $(if $(ARGS),exit $$status,$(PY) -m grader bench-batch && exit $$status)

# NVIDIA's cuda-samples as the CPU runtime's yardstick (a checkout outside this repository, passed by path)
cuda-samples: $(STAMP) system-deps
	@test -n "$(SAMPLES)" || { echo "usage: make cuda-samples SAMPLES=/path/to/cuda-samples" >&2; exit 2; }
	$(PY) -m grader cuda-samples $(SAMPLES) $(ARGS)

# The checks that need an NVIDIA GPU, in one run (docs/gpu-check.md): here, without a GPU, the CPU side and
# the nvcc builds into build/gpu-check/; gpu-check-carry then packs what the device machine lacks into .gpucheck/
gpu-check: $(STAMP) system-deps
	$(PY) -m grader gpu-check $(if $(SAMPLES),--samples $(SAMPLES)) $(ARGS)

gpu-check-carry: $(STAMP)
	@test -n "$(SAMPLES)" || { echo "usage: make gpu-check-carry SAMPLES=/path/to/cuda-samples" >&2; exit 2; }
	$(PY) -m grader gpu-check-carry --samples $(SAMPLES) $(ARGS)

JOBS ?= $(shell nproc 2>/dev/null || echo 2)
COURSE ?= build/course

doctor: $(STAMP)
	@$(PY) -m grader doctor

# what an instructor's machine needs is checked first: a missing Boost is one clear line, not a failed build
needs: $(STAMP)
	@$(PY) -m grader doctor --quiet

release: $(STAMP) needs
	$(PY) -m grader release --course $(COURSE) $(if $(COURSE_LANG),--lang $(COURSE_LANG)) $(ARGS)

autograde: $(STAMP) needs
	$(PY) -m grader autograde --course $(COURSE) --jobs $(JOBS) $(ARGS)

gradescope: $(STAMP) needs
	$(PY) -m grader gradescope $(if $(COURSE_LANG),--lang $(COURSE_LANG)) $(ARGS)

messages: $(STAMP)
	$(PY) -m grader messages $(ARGS)

# the class report from an autograded course (COURSE), or from batch results (RESULTS=DIR: <student>/results.json)
RESULTS ?=
report: $(STAMP)
	$(PY) -m grader report $(if $(RESULTS),$(RESULTS),--course $(COURSE)) $(ARGS)

# The browser tests drive Debian's chromium with Playwright (its own browser download needs the network).
CHROMIUM := /usr/bin/chromium
browser-deps:
	@test -x $(CHROMIUM) || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium; \
	  else echo "chromium is missing: run 'sudo apt-get install chromium'" >&2; exit 1; fi; }

# the class report and the student's notebook in JupyterLab, headless (minutes): tests/self/test_browser_*.py
test-browser: $(STAMP) system-deps browser-deps
	$(TEST_ENV) GRADER_BROWSER_TEST=1 $(PY) -m pytest tests/self/test_browser_report.py tests/self/test_browser_notebook.py \
	  -p no:cacheprovider $(ARGS)

# A Dask cluster for `batch --scheduler` (docs/dask.md). The scheduler loads the grader's tasks and the workers run
# them, so both start from a checkout of this repository (PYTHONPATH), whose grader the instructor's batch compares
# with its own before sending anything. A worker machine runs WORKERS processes, one grading each.
PORT ?= 8786
WORKERS ?= $(JOBS)
dask-scheduler: $(STAMP)
	PYTHONPATH=$(CURDIR) $(VENV)/bin/dask scheduler --port $(PORT) $(ARGS)

dask-worker: $(STAMP) needs
	@test -n "$(SCHEDULER)" || { echo "usage: make dask-worker SCHEDULER=tcp://HOST:8786 [WORKERS=N]" >&2; exit 2; }
	PYTHONPATH=$(CURDIR) $(VENV)/bin/dask worker $(SCHEDULER) --nworkers $(WORKERS) --nthreads 1 $(ARGS)

clean:
	rm -rf $(VENV) build grade-report
