# The two set-up commands (README): `make demo` and `make test`. Both install what is missing.
BUILD ?= build
JOBS ?= $(shell nproc)
FIXTURE := tests/fixtures/seed_mlp_2x10
APPS ?= $(BUILD)/applications
SMALL_APPS := MobileNetV3Small MobileNet EfficientNetB0

# The one configure line of the builds that include the Python module (test, bench...).
CONFIGURE_PY = cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DKERASCPP_PYTHON=ON \
               -DPython_EXECUTABLE=$(abspath .venv/bin/python)

.PHONY: test-asan test-asan-readers test-tsan fuzz bench-reliability bench-facenet bench-portable bench-sequences bench-training bench-distribute all deps build test bench bench-applications parity demo fixtures clean format

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
	$(CONFIGURE_PY)
	cmake --build $(BUILD) -j$(JOBS)
	scripts/check_file_size.sh
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)
	PYTHONPATH=$(abspath python) KERASCPP_BUILD=$(abspath $(BUILD)) .venv/bin/python -m pytest -q tests/python
	.venv/bin/python scripts/make_applications_fixtures.py $(APPS) --small
	for m in $(SMALL_APPS); do $(BUILD)/kerascpp verify $(APPS)/$$m --tol 1e-4 --relative-to output || exit 1; done
	for m in $(SMALL_APPS); do KERASCPP_MAX_ISA=baseline ONEDNN_MAX_CPU_ISA=SSE41 \
	  $(BUILD)/kerascpp verify $(APPS)/$$m --tol 1e-4 --relative-to output || exit 1; done

# Every keras.applications model of issue 5, written by real Keras 3 (weights=None, 10-550 MB each,
# kept in $(APPS) between runs), against Keras's predictions to 1e-4 of each output's scale. `make test`
# checks the small ones.
parity: build
	scripts/install_deps.sh --python
	.venv/bin/python scripts/make_applications_fixtures.py $(APPS)
	$(BUILD)/kerascpp verify $(APPS) --tol 1e-4 --relative-to output

# Image models against Keras 3 on TensorFlow and ONNX Runtime (issues 5, 20): load vs reading the bytes,
# predict at batch 1 and 32, one thread per side, for the files `make parity` wrote (about 20 minutes
# on 2 cores); the table goes into docs/benchmarks.md's `applications` section.
bench-applications: parity
	$(CONFIGURE_PY)
	cmake --build $(BUILD) -j$(JOBS) --target _kerascpp
	.venv/bin/python bench/applications.py $(APPS) --models ResNet50 MobileNetV2 InceptionResNetV2 --threads 1 \
	    --out $(BUILD)/applications_bench.md --doc docs/benchmarks.md

# Side-by-side benchmarks against real Keras (issue 7): writes docs/benchmarks.md and docs/bench_*.png
# (about 10 minutes on 2 cores; BENCH_ARGS=--quick for a smoke run with tiny counts), then the small
# models against ONNX Runtime (issue 20, bench/small_models.py: its section of the page, 3 minutes).
bench: deps
	scripts/install_deps.sh --python
	$(CONFIGURE_PY)
	cmake --build $(BUILD) -j$(JOBS) --target bench_native _kerascpp
	.venv/bin/python bench/run_all.py --build $(abspath $(BUILD)) $(BENCH_ARGS)
	.venv/bin/python bench/small_models.py --build $(abspath $(BUILD)) $(BENCH_ARGS)

# Training (issues 6, 21): epoch time of fit against Keras 3 on TensorFlow (an MLP on MNIST-sized random
# data, a small CNN, a 2-layer LSTM and ResNet50's train_on_batch, two rounds; writes its section of
# docs/benchmarks.md; about 5 minutes on 2 cores), then the soak run: 1,000 epochs with get_weights in
# every batch callback, time and RSS of the first and last 10% of epochs.
bench-training: deps
	scripts/install_deps.sh --python
	$(CONFIGURE_PY)
	cmake --build $(BUILD) -j$(JOBS) --target bench_train_soak _kerascpp
	PYTHONPATH=$(abspath python) .venv/bin/python bench/training.py --doc docs/benchmarks.md
	$(BUILD)/bench_train_soak tests/fixtures/training/mlp_adam 1000

# Data-parallel training (issue 22): fit's samples per second on 1 and 2 worker processes (Gloo over TCP
# on this machine) and the all-reduce cost per megabyte, into docs/benchmarks.md; about a minute.
bench-distribute: deps
	scripts/install_deps.sh --python
	$(CONFIGURE_PY)
	cmake --build $(BUILD) -j$(JOBS) --target _kerascpp
	PYTHONPATH=$(abspath python) .venv/bin/python bench/distribute.py --doc docs/benchmarks.md

# The FaceNet that Keras users load (issue 17): keras-facenet's 92 MB Inception-ResNet-v1 with its
# Lambda layers, load time against tf_keras; writes its section of docs/benchmarks.md (about 2 minutes).
bench-facenet: deps
	scripts/install_deps.sh --python
	$(CONFIGURE_PY)
	cmake --build $(BUILD) -j$(JOBS) --target _kerascpp
	.venv/bin/python bench/facenet.py

# Sequence models (issue 15): LSTM predict at batch 1 and per step, and training epochs of a
# Bidirectional LSTM classifier and a GRU regressor, against Keras 3 on TensorFlow; writes its section
# of docs/benchmarks.md.
bench-sequences: deps
	scripts/install_deps.sh --python
	$(CONFIGURE_PY)
	cmake --build $(BUILD) -j$(JOBS) --target _kerascpp bench_native
	.venv/bin/python bench/sequences.py --build $(BUILD)

# The portable build against a -march=native one (issue 13): seed MLP and ResNet50 predict, an MLP
# training epoch; writes its section of docs/benchmarks.md (the native build goes to build-native).
bench-portable: build
	scripts/install_deps.sh --python
	cmake --build $(BUILD) -j$(JOBS) --target bench_native
	.venv/bin/python bench/portable.py --portable $(abspath $(BUILD)) --native $(abspath build-native) --rounds 11

# Loads 1,000 sample models (each form of the seed MLP) in one process and checks that the first
# and the last still predict what Keras predicted.
demo: build
	@for f in keras3/model.keras keras3/model.h5 tf_keras/model.h5 tf_keras/model.keras; do \
	  echo "== $(FIXTURE)/$$f"; \
	  $(BUILD)/kerascpp bench-load $(FIXTURE)/$$f --copies 1000 --check $(FIXTURE)/$$(dirname $$f) || exit 1; \
	done
	$(BUILD)/kerascpp info $(FIXTURE)/keras3/model.keras

# Hostile input and threads (issue 19; docs/reliability.md). Each sanitizer build has a folder of its own.
# test-asan: every C++ test and the fuzz regressions under AddressSanitizer + UndefinedBehaviorSanitizer.
# test-asan-readers: the readers alone (HDF5, zip, .npy: their tests, the fuzz regressions and every
# fixture file through each), the part of test-asan that CI runs. test-tsan: the concurrency tests under
# ThreadSanitizer. fuzz: each libFuzzer harness of fuzz/ for FUZZ_SECONDS (clang; FUZZ_RUNS=N to count
# executions instead), seeded from the fixtures.
SAN_ENV := ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1 LSAN_OPTIONS=suppressions=$(abspath tests/lsan.supp) \
           UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
SAN_CONFIGURE = cmake -S . -B build-$(1) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKERASCPP_SANITIZE=$(2)
FUZZ_SECONDS ?= 60
test-asan: deps
	$(call SAN_CONFIGURE,asan,address)
	cmake --build build-asan -j$(JOBS)
	cd build-asan && $(SAN_ENV) ctest --output-on-failure -j$(JOBS) -E "install_and_build_example|cli_is_portable|isa_symbols"

test-asan-readers: deps
	$(call SAN_CONFIGURE,asan,address)
	cmake --build build-asan -j$(JOBS) --target test_containers fuzz_replay_hdf5 fuzz_replay_zip fuzz_replay_npy
	$(SAN_ENV) build-asan/test_containers --gtest_brief=1
	for f in hdf5 zip npy; do log=build-asan/replay_$$f.log; \
	  $(SAN_ENV) build-asan/fuzz_replay_$$f fuzz/regressions/$$f tests/fixtures 2> $$log || { tail -40 $$log; exit 1; }; \
	  echo "fuzz_replay_$$f: $$(tail -1 $$log)"; done

test-tsan: deps
	$(call SAN_CONFIGURE,tsan,thread)
	cmake --build build-tsan -j$(JOBS) --target test_models
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$(abspath tests/tsan.supp)" \
	  KCPP_CONCURRENCY_PREDICTS=$${KCPP_CONCURRENCY_PREDICTS:-100000} build-tsan/test_models --gtest_filter='Concurrency.*'

# Leaks (100,000 load/free cycles per form and 1,000,000 predicts: RSS growth under 1 MB) and crash
# safety (1,000 SIGKILLs at random points of save() per file form: the old file or the new one, whole),
# then the peak memory of loading keras.applications files against their size, beside Keras 3.
bench-reliability: deps
	scripts/install_deps.sh --python
	$(CONFIGURE_PY)
	cmake --build $(BUILD) -j$(JOBS) --target bench_leaks bench_save_kill _kerascpp
	$(BUILD)/bench_leaks tests/fixtures/seed_mlp_2x10/keras3 100000 1000000
	$(BUILD)/bench_save_kill tests/fixtures/all_layers_conv2d/keras3 1000 $(BUILD)/save_kill
	.venv/bin/python bench/load_memory.py --out $(BUILD)/load_memory.md

fuzz: deps
	scripts/install_deps.sh --fuzz
	scripts/fuzz.sh $(FUZZ_SECONDS) $(FUZZ_RUNS)

# Rewrites tests/fixtures with real Keras (needs the Python environment).
fixtures:
	scripts/install_deps.sh --python
	.venv/bin/python scripts/make_fixtures.py

format:
	git ls-files '*.h' '*.cpp' | xargs clang-format -i

clean:
	rm -rf $(BUILD) build-asan build-tsan build-fuzz
