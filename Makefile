# The two commands a newcomer needs (see README):
#   make run    build the plugin and start one Elasticsearch node with it on 127.0.0.1:9200
#   make test   every check and test: Rust, header drift, a bounded fuzz run, Java unit tests,
#               real-node integration
#
# Maven and Elasticsearch need a JDK 21+; scripts/find-jdk picks one (or set ES_JAVA_HOME).

SHELL := /bin/bash
JDK := $(shell scripts/find-jdk)
export JAVA_HOME := $(JDK)
MVN := mvn -B -q
PYTEST_ARGS ?=

.PHONY: run test quick-test build check fmt rust-test fuzz java-test integration-test clean

## Build the plugin zip (Rust release library + Java jar + zip) and run one node in the foreground.
run:
	$(MVN) package -DskipTests
	python3 scripts/node.py run

## Everything CI runs.
test: check rust-test fuzz java-test integration-test

## Everything but the multi-node cluster tests (a quicker loop while developing).
quick-test: check rust-test java-test
	python3 -m pytest tests clients/python/tests -v -m "not slow" $(PYTEST_ARGS)

## Plugin zip in java/target/ (runs the Java unit tests too); the jar also goes to the local
## Maven repository, for plugins built against it (examples/guarded-job-plugin).
build:
	$(MVN) install

## Formatting and lints (Rust: rustfmt + clippy; Java: palantir-java-format through Spotless).
check:
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets --locked -- -D warnings
	cargo clippy -p lock-jni --features fault-injection --all-targets --locked -- -D warnings
	$(MVN) spotless:check
	$(MVN) -f clients/pom.xml spotless:check

## Format everything `check` checks.
fmt:
	cargo fmt --all
	$(MVN) spotless:apply
	$(MVN) -f clients/pom.xml spotless:apply

## Rust unit, property and integration tests, including the C header drift check; then the
## bridge's panic test, which needs the test-only fault (cargo feature `fault-injection`).
rust-test:
	cargo test --workspace --locked
	cargo test -p lock-jni --features fault-injection --locked --test core_panic

## The lock-core fuzz target, built with libFuzzer and run for a bounded time (FUZZ_SECONDS).
FUZZ_SECONDS ?= 60
fuzz:
	scripts/fuzz-core $(FUZZ_SECONDS)

## Java unit tests (JNI under -Xcheck:jni) and the plugin zip the integration tests install;
## then the test-only fault-injection zip (tests/integration/test_panic.py installs it).
java-test: build
	$(MVN) package -Pfault-injection -DskipTests
	$(MVN) -f examples/guarded-job-plugin/pom.xml package

## Real nodes from the integ-test-zip, plugin installed with elasticsearch-plugin, over HTTP.
integration-test:
	python3 -m pytest tests clients/python/tests -v $(PYTEST_ARGS)

clean:
	cargo clean
	rm -rf build java/target
