# The two commands a person needs on a fresh Debian 12 machine:
#   make demo   – installs what is missing, builds, runs the demo
#   make test   – installs what is missing, builds once, runs every test suite
SHELL := /bin/bash
export PATH := /opt/swift/usr/bin:$(PATH)

SWIFT ?= swift
BUILD_FLAGS ?=

.PHONY: all deps build test demo bench clean

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

clean:
	rm -rf .build Benchmarks/.build
