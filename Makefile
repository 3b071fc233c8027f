# The two set-up commands (README): `make demo` and `make test`. Both install what is missing.
BUILD ?= build
JOBS ?= $(shell nproc)
FIXTURE := tests/fixtures/seed_mlp_2x10

.PHONY: all deps build test demo fixtures clean format

all: build

deps:
	scripts/install_deps.sh

$(BUILD)/Makefile: CMakeLists.txt | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release

build: deps $(BUILD)/Makefile
	cmake --build $(BUILD) -j$(JOBS)

# The Python package is built in place (python/kerascpp/_kerascpp*.so) in the same build as the
# library, so that the library compiles once; `pip install .` builds it the same way for users.
test: deps
	scripts/install_deps.sh --python
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DKERASCPP_PYTHON=ON -DPython_EXECUTABLE=$(abspath .venv/bin/python)
	cmake --build $(BUILD) -j$(JOBS)
	scripts/check_file_size.sh
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)
	$(BUILD)/kerascpp verify tests/fixtures
	PYTHONPATH=$(abspath python) KERASCPP_BUILD=$(abspath $(BUILD)) .venv/bin/python -m pytest -q tests/python

# Loads 1,000 sample models (each form of the seed MLP) in one process and checks that the first
# and the last still predict what Keras predicted.
demo: build
	@for f in keras3/model.keras keras3/model.h5 tf_keras/model.h5 tf_keras/model.keras; do \
	  echo "== $(FIXTURE)/$$f"; \
	  $(BUILD)/kerascpp bench-load $(FIXTURE)/$$f --copies 1000 --check $(FIXTURE)/$$(dirname $$f) || exit 1; \
	done
	$(BUILD)/kerascpp info $(FIXTURE)/keras3/model.keras

# Rewrites tests/fixtures with real Keras (needs the Python environment).
fixtures:
	scripts/install_deps.sh --python
	.venv/bin/python scripts/make_fixtures.py

format:
	git ls-files '*.h' '*.cpp' | xargs clang-format -i

clean:
	rm -rf $(BUILD)
