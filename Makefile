# The two commands a newcomer needs (see README):
#   make run    build the plugin and start one Elasticsearch node with it on 127.0.0.1:9200
#   make test   every check and test: Rust, header drift, a bounded fuzz run, Java unit tests,
#               real-node integration (Java on every supported Elasticsearch version; integration on
#               the default one, and what differs between versions on the others)
#   make dist   the release in dist/, each file with its .sha512: a plugin zip per supported version
#               (native library for linux-x86_64 and linux-aarch64), the Python wheel, the Java
#               client and ShedLock jars (README "Install")
#
# Maven and Elasticsearch need a JDK 21+; scripts/find-jdk picks one (or set ES_JAVA_HOME).

SHELL := /bin/bash
JDK := $(shell scripts/find-jdk)
export JAVA_HOME := $(JDK)
MVN := mvn -B -q
PYTEST_ARGS ?=
# The supported Elasticsearch versions (docs/OPERATIONS.md "Versions"), both read from pom.xml: es.version (the
# default, 9.x) and es8.version. `make run` runs $(ES_VERSION): the default unless set.
pom_property = $(shell sed -n 's:.*<$(1)>\(.*\)</$(1)>.*:\1:p' pom.xml | head -1)
ES_DEFAULT := $(call pom_property,es.version)
ES_VERSIONS := $(ES_DEFAULT) $(call pom_property,es8.version)
ES_VERSION ?= $(ES_DEFAULT)
ES8 := $(call pom_property,es8.version)
PY_ES8 := build/py-es8/bin/python
# tooz 9.1.0 and its test suite's imports, with this client installed for its tooz.backends entry
# point (clients/python/tests/test_client_tooz.py runs tooz's own suite through it).
PY_TOOZ := build/py-tooz/bin/python
# What make checks for each venv: a file written once its packages are in. (The interpreter itself
# cannot be the target: it is a link to the system's, whose old time stamp made make build the
# venvs again at each target that needs them.)
VENVS := build/py-es8/.installed build/py-tooz/.installed
export ES_VERSION

.PHONY: run test quick-test build check fmt rust-test fuzz java-test integration-test client-test previous-plugin dist cross-toolchain clean

## Build the plugin zip (Rust release library + Java jar + zip) and run one node in the foreground
## (Elasticsearch $(ES_VERSION); `ES_VERSION=8.19.21 make run` runs the 8.19 flavour).
run:
	$(MVN) package -DskipTests -Des.version=$(ES_VERSION)
	python3 scripts/node.py run

## The test targets start their nodes with a C1-only JIT, without touching the whole heap at start
## and without verifying the bytecode of classes loaded from the class path (javac's output, read
## at every node start) (scripts/node.py, ESLM_NODE_JAVA_OPTS): a three-node cluster is ready in
## about half the time on two cores. `make run` and the benchmark's figures use Elasticsearch's
## own JVM options. Set ESLM_NODE_JAVA_OPTS= to test without them.
TEST_NODE_JAVA_OPTS := -XX:TieredStopAtLevel=1 -XX:-AlwaysPreTouch -XX:+UnlockDiagnosticVMOptions -XX:-BytecodeVerificationRemote
quick-test integration-test client-test: export ESLM_NODE_JAVA_OPTS ?= $(TEST_NODE_JAVA_OPTS)

## Everything CI runs. The fuzz run keeps one core busy for FUZZ_SECONDS: the plugin builds, the
## Java unit tests and the test venvs use the other meanwhile (each one's output printed when it ends).
test: check rust-test
	$(MAKE) --no-print-directory -j2 --output-sync=target fuzz java-test $(VENVS)
	$(MAKE) --no-print-directory integration-test

## Everything but the multi-node cluster tests (a quicker loop while developing), on $(ES_VERSION).
quick-test: check rust-test java-test
	python3 -m pytest tests clients/python/tests -v -m "not slow" $(PYTEST_ARGS)

## Plugin zip of each supported version in java/target/ (runs the Java unit tests on each), the
## release zip (-Pall-platforms: the library for linux-x86_64 and, cross-compiled, linux-aarch64),
## so the tests install what `make dist` releases; the jars also go to the local Maven repository,
## for plugins built against them (examples/guarded-job-plugin).
build: cross-toolchain
	for v in $(ES_VERSIONS); do $(MVN) install -Pall-platforms -Des.version=$$v || exit 1; done

## Formatting and lints (Rust: rustfmt + clippy; Java: palantir-java-format through Spotless).
check:
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets --locked -- -D warnings
	cargo clippy -p lock-jni -p lock-core --features lock-jni/fault-injection --all-targets --locked -- -D warnings
	$(MVN) spotless:check
	$(MVN) -f clients/pom.xml spotless:check

## Format everything `check` checks.
fmt:
	cargo fmt --all
	$(MVN) spotless:apply
	$(MVN) -f clients/pom.xml spotless:apply

## Rust unit, property and integration tests, including the C header drift check, in one build
## with the test-only faults (cargo feature `fault-injection`): the bridge's panic test and the
## ownership model's flawed variants need them; a release build never has them.
rust-test:
	cargo test --workspace --locked --features lock-jni/fault-injection

## The lock-core fuzz target, built with libFuzzer and run for a bounded time (FUZZ_SECONDS).
FUZZ_SECONDS ?= 60
fuzz:
	scripts/fuzz-core $(FUZZ_SECONDS)

## Java unit tests (JNI under -Xcheck:jni) and the plugin zip the integration tests install;
## then the test-only fault-injection zip (tests/integration/test_panic.py installs it).
# A cargo target folder $(1) that has no release build yet starts from a copy of this build's
# (a copy, since its libeslm.so gets replaced): cargo then compiles only what differs, not every
# dependency again.
seed_from_release = [ ! -d target/release/deps ] || [ -d $(1)/release ] || { mkdir -p $(1) && cp -a --reflink=auto target/release $(1)/; }

java-test: build
	# Only lock-core and lock-jni differ with the feature.
	$(call seed_from_release,target/fault-injection)
	for v in $(ES_VERSIONS); do \
	  $(MVN) package -Pfault-injection -DskipTests -Des.version=$$v \
	  && $(MVN) -f examples/guarded-job-plugin/pom.xml package -Des.version=$$v || exit 1; \
	done

## Real nodes from the integ-test-zip, plugin installed with elasticsearch-plugin, over HTTP, in
## lanes at once (scripts/lanes.py): on two cores the tests' CPU is what bounds the run, and lanes
## keep both cores busy to its end. The whole suite on the default version (but for LANE_TESTS)
## in lanes by module name, the first printed as it runs; the other clients' suites and the
## contract suite every client passes (CLIENT_TESTS) with the modules test_[h-l]*; on nodes of every
## other supported version the modules marked `every_version` (what differs between versions,
## pytest.ini), then the Python client's suites; the upgrade tests (from $(ES8) and from the
## previous plugin, tests/integration/test_upgrade.py), then the benchmark harness's smoke tests.
## The lanes end at about the same time (CONTRIBUTING.md "CI time"): a lane left alone at the end
## has only one core's worth of work.
CLIENT_TESTS := tests/integration/test_contract.py tests/integration/test_go_client.py \
  tests/integration/test_java_clients.py tests/integration/test_node_client.py
LANE_TESTS := tests/test_bench_smoke.py tests/integration/test_upgrade.py $(CLIENT_TESTS)
OTHER_VERSIONS := $(filter-out $(ES_DEFAULT),$(ES_VERSIONS))
PYTEST_DEFAULT = ES_VERSION=$(ES_DEFAULT) python3 -m pytest -v --durations=10 $(PYTEST_ARGS)
suite_part = $(filter-out $(LANE_TESTS),$(sort $(wildcard $(1))))
integration-test: $(VENVS)
	python3 scripts/lanes.py --timeout 3000 --follow suite-a-f \
	  "suite-a-f=$(PYTEST_DEFAULT) $(call suite_part,tests/integration/test_[a-f]*.py)" \
	  "suite-g-m-q=$(PYTEST_DEFAULT) $(call suite_part,tests/integration/test_[gm-q]*.py)" \
	  "suite-r-z=$(PYTEST_DEFAULT) $(call suite_part,tests/integration/test_[r-z]*.py tests/test_*.py)" \
	  "clients-h-l=$(PYTEST_DEFAULT) $(CLIENT_TESTS) $(call suite_part,tests/integration/test_[h-l]*.py)" \
	  "versions=$(foreach v,$(OTHER_VERSIONS),ES_VERSION=$(v) python3 -m pytest tests -v -m every_version --durations=10 $(LANE_TESTS:%=--ignore=%) $(PYTEST_ARGS) &&) $(MAKE) --no-print-directory client-test" \
	  "upgrade-bench=$(MAKE) --no-print-directory previous-plugin && ES_VERSION=$(ES_DEFAULT) python3 -m pytest tests/integration/test_upgrade.py tests/test_bench_smoke.py -v -s --durations=10 $(PYTEST_ARGS)"

## The Python client's whole suite twice, at the same time (both mostly wait on their nodes): with
## the official 9.x client (tests/requirements.txt) on $(ES_DEFAULT), and with the lowest 8.x it
## allows (clients/python/tests/requirements-es8.txt, in a venv under build/) on $(ES8); the
## second's output is printed after the first's. The first also runs tooz's own coordination suite
## through the tooz driver (clients/python/tests/test_client_tooz.py, in the venv $(PY_TOOZ)).
client-test: $(VENVS)
	@echo "=== the Python client's tests: elasticsearch-py 9 on $(ES_DEFAULT) and elasticsearch-py 8.0 on $(ES8)"
	ES_VERSION=$(ES8) $(PY_ES8) -m pytest clients/python/tests -v -p no:cacheprovider --durations=10 \
	  $(PYTEST_ARGS) > build/client-test-es8.log 2>&1 & eight=$$!; \
	ES_VERSION=$(ES_DEFAULT) python3 -m pytest clients/python/tests -v --durations=10 $(PYTEST_ARGS); nine=$$?; \
	wait $$eight; eight=$$?; \
	echo "=== the Python client's tests with elasticsearch-py 8.0 on Elasticsearch $(ES8)"; \
	cat build/client-test-es8.log; \
	[ $$nine -eq 0 ] && [ $$eight -eq 0 ]

build/py-es8/.installed: clients/python/tests/requirements-es8.txt
	python3 -m venv build/py-es8 && build/py-es8/bin/pip install -q -r $< && touch $@

build/py-tooz/.installed: clients/python/tests/requirements-tooz.txt clients/python/pyproject.toml
	rm -rf build/py-tooz && python3 -m venv build/py-tooz && build/py-tooz/bin/pip install -q -r $< && touch $@

# `make build/py-tooz/bin/python` (bench/tooz_locks.py) still makes the venv.
$(PY_ES8): build/py-es8/.installed ;
$(PY_TOOZ): build/py-tooz/.installed ;

## The plugin as released before the formats were versioned (issue 28), built from git for $(ES8):
## tests/integration/test_upgrade.py upgrades a cluster from it to this build. PREVIOUS_PLUGIN is
## that commit; its zip goes to build/previous/.
PREVIOUS_PLUGIN := d1df89a
previous-plugin: build/previous/$(PREVIOUS_PLUGIN)-es$(ES8).zip
build/previous/$(PREVIOUS_PLUGIN)-es$(ES8).zip:
	rm -rf build/previous && mkdir -p build/previous/src
	git cat-file -e $(PREVIOUS_PLUGIN)^{commit} 2>/dev/null || git fetch -q --unshallow || \
	  { echo "commit $(PREVIOUS_PLUGIN) is not in this clone: clone with history"; exit 1; }
	git archive $(PREVIOUS_PLUGIN) | tar -x -C build/previous/src
	# Its Cargo.lock and release profile are this build's (at d1df89a): only lock-core and lock-jni compile.
	$(call seed_from_release,build/previous/src/target)
	$(MVN) -f build/previous/src/pom.xml package -DskipTests -Des.version=$(ES8)
	cp build/previous/src/java/target/elasticsearch-lock-manager-*-es$(ES8).zip $@

## The release artifacts in dist/, each with its SHA-512 beside it (`sha512sum -c` checks it):
## the plugin zip of each supported version (README "Install": the library for linux-x86_64 and
## linux-aarch64, checked by scripts/native_zip.py), the Python client's wheel, and the jars of
## the Java client, the ShedLock provider, the Spring Integration LockRegistry and the Spring Boot starter. No tests run here: `make test` runs them.
CLIENTS_VERSION := $(shell sed -n 's:^  <version>\(.*\)</version>.*:\1:p' clients/pom.xml | head -1)
CLIENT_JARS := clients/java/target/lock-manager-client-$(CLIENTS_VERSION).jar \
  clients/shedlock/target/lock-manager-shedlock-$(CLIENTS_VERSION).jar \
  clients/spring-integration/target/lock-manager-spring-integration-$(CLIENTS_VERSION).jar \
  clients/spring-boot-starter/target/lock-manager-spring-boot-starter-$(CLIENTS_VERSION).jar
dist: cross-toolchain
	rm -rf dist && mkdir -p dist
	for v in $(ES_VERSIONS); do $(MVN) package -Pall-platforms -DskipTests -Des.version=$$v || exit 1; \
	  cp java/target/elasticsearch-lock-manager-*-es$$v.zip dist/ || exit 1; done
	python3 scripts/native_zip.py dist/*.zip
	$(MVN) -f clients/pom.xml package -DskipTests -pl java,shedlock,spring-integration,spring-boot-starter -am
	cp $(CLIENT_JARS) dist/
	python3 -m pip wheel -q --no-deps -w dist clients/python
	cd dist && for f in *.zip *.whl *.jar; do sha512sum "$$f" > "$$f.sha512"; done && ls -l

## What cross-compiling the linux-aarch64 library needs (.cargo/config.toml names the linker):
## rustup's aarch64-unknown-linux-gnu target and Debian's gcc-aarch64-linux-gnu, each installed
## only when missing.
CROSS_TARGET := aarch64-unknown-linux-gnu
cross-toolchain:
	rustup target list --installed | grep -qx $(CROSS_TARGET) || rustup target add $(CROSS_TARGET)
	command -v aarch64-linux-gnu-gcc >/dev/null \
	  || { apt-get update -qq && apt-get install -y -qq --no-install-recommends gcc-aarch64-linux-gnu libc6-dev-arm64-cross; }

clean:
	cargo clean
	rm -rf build dist java/target
