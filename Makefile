# The two commands a person needs on a fresh Debian 12 machine:
#   make demo   – installs what is missing, builds, runs the demo
#   make test   – installs what is missing, builds once, runs every test suite
SHELL := /bin/bash
export PATH := /opt/swift/usr/bin:$(PATH)

SWIFT ?= swift
BUILD_FLAGS ?=

.PHONY: all deps build test demo bench bench-pacing clean

all: build

deps:
	@Scripts/install-deps

build: deps
	$(SWIFT) build $(BUILD_FLAGS)

test: deps
	Protocols/generate --check
	$(SWIFT) build --build-tests $(BUILD_FLAGS)
	$(SWIFT) test --skip-build --disable-xctest $(BUILD_FLAGS)

demo: build
	$(SWIFT) run --skip-build displaylink-demo mock --frames 12

bench: deps
	cd Benchmarks && $(SWIFT) package --disable-sandbox benchmark --format markdown --no-progress

# Pacing: weston-simple-egl vs the demo on one private headless weston, same size and time.
PACING_SECONDS ?= 10
PACING_SCENE ?= quad
bench-pacing: deps
	$(SWIFT) build -c release --product displaylink-demo
	cd Benchmarks && $(SWIFT) build -c release --product PacingBenchmark
	Benchmarks/.build/release/PacingBenchmark --demo .build/release/displaylink-demo --scene $(PACING_SCENE) --seconds $(PACING_SECONDS)

clean:
	rm -rf .build Benchmarks/.build
