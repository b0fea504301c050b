//go:build linux

package main

// The README smoke test runs the README's own commands, as a newcomer would
// type them, against the simulator. It reads them from the fenced blocks the
// README tags `readme-smoke`, so a command edited there is the command run
// here; a command this file does not know fails the test (teach it below),
// and so does a known command that disappeared from the README.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

// readmeSmokeTag marks a fenced block whose every command the smoke test
// runs (or lists as not runnable here, with the reason).
const readmeSmokeTag = "readme-smoke"

// readmeSmokeCommands extracts the commands of the README's tagged blocks,
// in order: one per line, without its trailing "# comment", blank and
// comment-only lines skipped.
func readmeSmokeCommands(t *testing.T, readme string) []string {
	t.Helper()
	f, err := os.Open(readme)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var commands []string
	inBlock, tagged := false, false
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		line := scanner.Text()
		if fence, ok := strings.CutPrefix(strings.TrimSpace(line), "```"); ok {
			if inBlock {
				inBlock, tagged = false, false
			} else {
				inBlock, tagged = true, slices.Contains(strings.Fields(fence), readmeSmokeTag)
			}
			continue
		}
		if !inBlock || !tagged {
			continue
		}
		if command := stripShellComment(line); command != "" {
			commands = append(commands, command)
		}
	}
	if err := scanner.Err(); err != nil {
		t.Fatal(err)
	}
	return commands
}

// stripShellComment removes a "#" comment that starts a line or follows a
// space, and surrounding spaces. The README's commands put no "#" inside
// their arguments.
func stripShellComment(line string) string {
	line = strings.TrimSpace(line)
	if strings.HasPrefix(line, "#") {
		return ""
	}
	if i := strings.Index(line, " #"); i >= 0 {
		line = line[:i]
	}
	return strings.TrimSpace(line)
}

// smokeShell is the newcomer's shell: the environment the README's export
// lines build up, the module root as working directory, and the processes
// left running in the background (local --serve, simulate).
type smokeShell struct {
	t          *testing.T
	root       string
	cli        string // the built CLI, standing for bin/geolocate
	predictor  string // the built functions, standing for `go run ./functions/...`
	monitor    string
	images     string // a small images folder for `make run`
	env        map[string]string
	background []*cliProcess
	ports      []string // every port a local part listened on
	simulator  struct{ url, key string }
	predictRun int // how many times the predictor ran: the first geolocates
}

// notRunHere are the README commands this test does not run, with why.
var notRunHere = map[string]string{
	"make test": "it is what runs this test",
	"bin/geolocate results --stack Geolocation --since 24h":                        "needs a deployed stack (its TableName output); the local results commands above run the same code, results_test.go covers --stack with fakes",
	"bin/geolocate backfill --stack Geolocation --bucket my-photos --prefix 2026/": "needs a deployed stack (its outputs, the SQS queue); backfill_test.go covers it with fakes",
	"bin/geolocate status --stack Geolocation":                                     "needs a deployed stack (CloudFormation outputs, SQS); status_test.go covers it with fakes",
	"bin/geolocate doctor --stack Geolocation":                                     "needs a deployed stack; doctor_test.go covers it with fakes",
}

// readmeSimulatorAddr is where the README's simulate listens (its default)
// and its export line points.
const readmeSimulatorAddr = "127.0.0.1:8080"

// smokeSteps runs each README command the test knows; the key is the
// command exactly as the README shows it, comment removed.
var smokeSteps = map[string]func(s *smokeShell, command string){
	"make run": func(s *smokeShell, _ string) {
		// make run is `bin/geolocate local --images testdata/images` after
		// building; a smaller folder keeps the test short.
		out, code := s.run(s.cli, "local", "--images", s.images)
		s.wantExit(code, 0, "make run", out)
		s.ports = append(s.ports, listenedPorts(out)...)
		s.wantMatch("make run", out,
			`(?m)^OBJECT +STATUS +PLACE`,
			`(?m)^2 upload\(s\): 2 succeeded`,
			`(?m)^monitor +healthy$`,
			// Two monitor readings (before and after the uploads), seconds
			// apart: too short a span for a forecast, said as such.
			`(?m)^forecast +not enough history yet: 2 readings over \d+s; a forecast needs them to span 5 minutes`)
		if strings.Contains(out, "left") {
			s.t.Errorf("make run: a forecast from readings seconds apart:\n%s", out)
		}
	},
	"make build-cli": func(s *smokeShell, _ string) {
		// Built once for the whole test, the same package into a temporary
		// directory instead of bin/ of the working tree.
		if info, err := os.Stat(s.cli); err != nil || info.Mode()&0o111 == 0 {
			s.t.Errorf("make build-cli: no executable CLI: %v", err)
		}
	},
	"bin/geolocate local --serve": func(s *smokeShell, _ string) {
		// "In a second shell": a new shell, without the first one's exports.
		p := s.startInNewShell(s.cli, "local", "--serve")
		p.waitFor(s.t, "serving ", 2*time.Minute)
		out := p.output.String()
		exportLine := regexp.MustCompile(`(?m)^export (.+)$`).FindStringSubmatch(out)
		if exportLine == nil {
			s.t.Fatalf("local --serve printed no export line:\n%s", out)
		}
		s.export(exportLine[1])
		for _, name := range []string{envvars.TableName, envvars.APIURL, "AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_S3"} {
			if s.env[name] == "" {
				s.t.Errorf("local --serve's export line lacks %s: %s", name, exportLine[0])
			}
		}
		s.ports = append(s.ports, listenedPorts(out)...)
	},
	"go run ./functions/predictor -event events/sqs-s3-put.json": func(s *smokeShell, command string) {
		s.predictRun++
		stdout, stderr, code := s.runSplit(s.predictor, "-event", "events/sqs-s3-put.json")
		s.wantExit(code, 0, command, stdout+stderr)
		if strings.TrimSpace(stdout) != `{"batchItemFailures":[]}` {
			s.t.Errorf("%s (run %d): response %q", command, s.predictRun, stdout)
		}
		s.wantJSONLines(command, stderr)
		want := "prediction recorded" // the first run geolocates
		if s.predictRun > 1 {
			want = "duplicate delivery: already recorded" // the redelivery is a no-op
		}
		if !strings.Contains(stderr, `"msg":"`+want+`"`) {
			s.t.Errorf("%s (run %d): no %q in its logs:\n%s", command, s.predictRun, want, stderr)
		}
	},
	"go run ./functions/monitor -event events/scheduled.json": func(s *smokeShell, command string) {
		stdout, stderr, code := s.runSplit(s.monitor, "-event", "events/scheduled.json")
		s.wantExit(code, 0, command, stdout+stderr)
		var report struct {
			Healthy bool            `json:"healthy"`
			Credits json.RawMessage `json:"credits"`
		}
		if err := json.Unmarshal([]byte(stdout), &report); err != nil || !report.Healthy || report.Credits == nil {
			s.t.Errorf("%s: report %q (%v), want a healthy one with credits", command, stdout, err)
		}
		s.wantJSONLines(command, stderr)
	},
	"bin/geolocate -h": func(s *smokeShell, command string) {
		out, code := s.run(s.cli, "-h")
		s.wantExit(code, 0, command, out)
		s.wantMatch(command, out, `simulate`, `predict`, `results`, `local`)
	},
	"bin/geolocate --version": func(s *smokeShell, command string) {
		out, code := s.run(s.cli, "--version")
		s.wantExit(code, 0, command, out)
		s.wantMatch(command, out, `^geolocate \S+ \(commit \S+, go1\.`)
	},
	"bin/geolocate simulate": func(s *smokeShell, command string) {
		// As written, on 127.0.0.1:8080, when that port is free here; on a
		// shared machine something else may hold it, and then the test
		// takes a free port and the export step below points at it.
		args := []string{"simulate"}
		if l, err := net.Listen("tcp", readmeSimulatorAddr); err == nil {
			l.Close()
		} else {
			s.t.Logf("%s is taken here (%v): the simulator takes a free port", readmeSimulatorAddr, err)
			args = append(args, "--addr", "127.0.0.1:0")
		}
		p := s.startInNewShell(s.cli, args...) // "in a second shell"
		p.waitFor(s.t, envvars.APIKey+"=", 30*time.Second)
		out := p.output.String()
		url := regexp.MustCompile(`(?m)^export ` + envvars.APIURL + `=(http://127\.0\.0\.1:\d+)$`).FindStringSubmatch(out)
		key := regexp.MustCompile(`(?m)^export ` + envvars.APIKey + `=(geo_sim_\w+)$`).FindStringSubmatch(out)
		if url == nil || key == nil {
			s.t.Fatalf("%s: no %s and %s in:\n%s", command, envvars.APIURL, envvars.APIKey, out)
		}
		s.simulator.url, s.simulator.key = url[1], key[1]
		s.ports = append(s.ports, listenedPorts(out)...)
	},
	"export GEO_API_URL=http://127.0.0.1:8080 GEO_API_KEY=geo_sim_demo": func(s *smokeShell, command string) {
		// Pasted as written: the README's values are what simulate
		// printed (the port aside, if 8080 was taken here).
		line := strings.TrimPrefix(command, "export ")
		if addr := strings.TrimPrefix(s.simulator.url, "http://"); addr != readmeSimulatorAddr {
			line = strings.ReplaceAll(line, readmeSimulatorAddr, addr)
		}
		s.export(line)
		if s.env[envvars.APIURL] != s.simulator.url || s.env[envvars.APIKey] != s.simulator.key {
			s.t.Errorf("%s: the README exports %s=%s %s=%s, simulate printed %s and %s", command,
				envvars.APIURL, s.env[envvars.APIURL], envvars.APIKey, s.env[envvars.APIKey], s.simulator.url, s.simulator.key)
		}
	},
	"bin/geolocate predict testdata/images/gradient-64x48.jpg": func(s *smokeShell, command string) {
		out, code := s.run(s.cli, "predict", "testdata/images/gradient-64x48.jpg")
		s.wantExit(code, 0, command, out)
		s.wantMatch(command, out, `(?m)^RANK +PLACE +ADMIN1 +COUNTRY +LAT +LON +RADIUS_KM$`, `(?m)^1 +\S`, `credits consumed: 1`)
	},
	"bin/geolocate models": func(s *smokeShell, command string) {
		out, code := s.run(s.cli, "models")
		s.wantExit(code, 0, command, out)
		s.wantMatch(command, out, `(?m)^ID +STATUS`, `(?m) ready `)
	},
	"bin/geolocate credits": func(s *smokeShell, command string) {
		out, code := s.run(s.cli, "credits")
		s.wantExit(code, 0, command, out)
		s.wantMatch(command, out, `(?m)^remaining +\d+$`)
	},
	"bin/geolocate results --since 1h": func(s *smokeShell, command string) {
		// Against local --serve's table (TABLE_NAME from its export line),
		// where the predictor recorded "harbour at dusk.jpg".
		stdout, stderr, code := s.runSplit(s.cli, "results", "--since", "1h")
		s.wantExit(code, 0, command, stdout+stderr)
		s.wantMatch(command, stdout, `(?m)^UPDATED +OBJECT +STATUS`, `(?m)harbour at dusk\.jpg +succeeded `)
	},
	"bin/geolocate results --status succeeded --geojson > today.geojson": func(s *smokeShell, command string) {
		stdout, stderr, code := s.runSplit(s.cli, "results", "--status", "succeeded", "--geojson")
		s.wantExit(code, 0, command, stdout+stderr)
		today := filepath.Join(s.t.TempDir(), "today.geojson") // the shell's redirect
		if err := os.WriteFile(today, []byte(stdout), 0o644); err != nil {
			s.t.Fatal(err)
		}
		var geo struct {
			Type     string            `json:"type"`
			Features []json.RawMessage `json:"features"`
		}
		if err := json.Unmarshal([]byte(stdout), &geo); err != nil || geo.Type != "FeatureCollection" || len(geo.Features) == 0 {
			s.t.Errorf("%s: %q (%v), want a FeatureCollection with the recorded photo", command, stdout, err)
		}
	},
	"bin/geolocate results --since 7d --map week.html": func(s *smokeShell, command string) {
		page := filepath.Join(s.t.TempDir(), "week.html")
		stdout, stderr, code := s.runSplit(s.cli, "results", "--since", "7d", "--map", page)
		s.wantExit(code, 0, command, stdout+stderr)
		if b, err := os.ReadFile(page); err != nil || !strings.Contains(string(b), "harbour at dusk.jpg") || !strings.Contains(string(b), "<svg") {
			s.t.Errorf("%s: no map page with the recorded photo (%v)", command, err)
		}
	},
}

// TestREADMESmoke runs the README's quick start, local invocations and
// operator CLI commands top to bottom against the simulator, checks each
// exits 0 with the output the README promises, and that nothing it started
// (local parts, DynamoDB Local, the simulator) is left running or listening.
func TestREADMESmoke(t *testing.T) {
	cli := buildCLI(t) // skips under -short
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	commands := readmeSmokeCommands(t, filepath.Join(root, "README.md"))
	// Children the test binary already has (the DynamoDB Local that
	// TestMain shares among this package's tests) are not this test's.
	before := childrenOf(t, os.Getpid())

	// The README and this test agree on the commands before anything runs.
	seen := map[string]bool{}
	for _, c := range commands {
		seen[c] = true
		if smokeSteps[c] == nil && notRunHere[c] == "" {
			t.Errorf("README smoke block command %q is unknown here: add it to smokeSteps (or notRunHere, with the reason)", c)
		}
	}
	for c := range smokeSteps {
		if !seen[c] {
			t.Errorf("smokeSteps runs %q, which the README's readme-smoke blocks no longer show", c)
		}
	}
	for c := range notRunHere {
		if !seen[c] {
			t.Errorf("notRunHere lists %q, which the README's readme-smoke blocks no longer show", c)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	s := &smokeShell{t: t, root: root, cli: cli, env: map[string]string{}, images: t.TempDir()}
	bin := t.TempDir()
	for name, target := range map[string]*string{"predictor": &s.predictor, "monitor": &s.monitor} {
		*target = filepath.Join(bin, name)
		if out, err := exec.Command("go", "build", "-o", *target, "../../functions/"+name).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", name, err, out)
		}
	}
	for _, image := range []string{"harbour at dusk.jpg", "gradient-64x48.jpg"} {
		b, err := os.ReadFile(filepath.Join(root, "testdata", "images", image))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(s.images, image), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	for _, c := range commands {
		if step := smokeSteps[c]; step != nil {
			began := time.Now()
			step(s, c)
			t.Logf("$ %s  (%s)", c, time.Since(began).Round(10*time.Millisecond))
		} else {
			t.Logf("not run: %s (%s)", c, notRunHere[c])
		}
	}

	s.makeRunAgain()

	// Ctrl-C what runs in the background, as the README says to: each stops
	// with status 0 and takes its children (DynamoDB Local) with it.
	var children []int
	for _, p := range s.background {
		children = append(children, childrenOf(t, p.cmd.Process.Pid)...)
		_ = p.cmd.Process.Signal(syscall.SIGINT)
	}
	for _, p := range s.background {
		if code := p.exitCode(t, 30*time.Second); code != 0 {
			t.Errorf("%v: exit %d after Ctrl-C, want 0:\n%s", p.cmd.Args, code, p.output.String())
		}
	}
	assertGone(t, children)
	for _, pid := range childrenOf(t, os.Getpid()) {
		if !slices.Contains(before, pid) {
			t.Errorf("process %d, started by the smoke test, still running", pid)
		}
	}
	assertPortsFree(t, s.ports)
}

// environ is the first shell's environment: a new shell's, plus what was
// exported in it.
func (s *smokeShell) environ() []string {
	env := s.newShellEnv()
	for name, value := range s.env {
		env = append(env, name+"="+value)
	}
	return env
}

// newShellEnv is a new shell's environment: the test's own without a
// service URL or key, a table name or AWS credentials (the README starts
// from none).
func (s *smokeShell) newShellEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case envvars.APIURL, envvars.APIKey, envvars.TableName, "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE":
			continue
		}
		if s.env[name] == "" {
			env = append(env, kv)
		}
	}
	return env
}

// export applies an export line's assignments (NAME=VALUE ...) as a shell
// would, $NAME in a value expanded from what the shell has.
func (s *smokeShell) export(assignments string) {
	for _, assignment := range strings.Fields(assignments) {
		name, value, ok := strings.Cut(assignment, "=")
		if !ok {
			s.t.Fatalf("export %q: not NAME=VALUE", assignment)
		}
		s.env[name] = os.Expand(value, func(v string) string {
			if got, ok := s.env[v]; ok {
				return got
			}
			return os.Getenv(v)
		})
	}
}

// run runs a command to its end in the module root, returning its combined
// output and exit code.
func (s *smokeShell) run(name string, args ...string) (string, int) {
	s.t.Helper()
	stdout, stderr, code := s.runSplit(name, args...)
	return stdout + stderr, code
}

func (s *smokeShell) runSplit(name string, args ...string) (string, string, int) {
	s.t.Helper()
	cmd := exec.CommandContext(s.t.Context(), name, args...)
	cmd.Dir, cmd.Env = s.root, s.environ()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil && cmd.ProcessState == nil {
		s.t.Fatalf("%s %v: %v", name, args, err)
	}
	return stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()
}

// startInNewShell starts a command in the background, as in a second
// terminal, whose shell has none of the first one's exports; the test stops
// it at the end.
func (s *smokeShell) startInNewShell(name string, args ...string) *cliProcess {
	s.t.Helper()
	p := &cliProcess{cmd: exec.Command(name, args...), done: make(chan struct{})}
	p.cmd.Dir, p.cmd.Env = s.root, s.newShellEnv()
	p.cmd.Stdout, p.cmd.Stderr = &p.output, &p.output
	if err := p.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	s.t.Cleanup(func() { // only if the test failed before stopping it
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Signal(syscall.SIGINT)
			select {
			case <-p.done:
			case <-time.After(20 * time.Second):
				_ = p.cmd.Process.Kill()
				<-p.done
			}
		}
	})
	s.background = append(s.background, p)
	return p
}

func (s *smokeShell) wantExit(got, want int, command, output string) {
	s.t.Helper()
	if got != want {
		s.t.Fatalf("%s: exit %d, want %d:\n%s", command, got, want, output)
	}
}

func (s *smokeShell) wantMatch(command, output string, patterns ...string) {
	s.t.Helper()
	for _, p := range patterns {
		if !regexp.MustCompile(p).MatchString(output) {
			s.t.Errorf("%s: output does not match %s:\n%s", command, p, output)
		}
	}
}

// wantJSONLines: the functions log only JSON lines (the AWS SDK's included).
func (s *smokeShell) wantJSONLines(command, stderr string) {
	s.t.Helper()
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if line != "" && !json.Valid([]byte(line)) {
			s.t.Errorf("%s: a log line that is not JSON: %q", command, line)
		}
	}
}

// makeRunAgain starts `make run` once more in the first shell, after the
// README's steps exported a service URL and key (simulate's, local
// --serve's): it must still use its own simulator and say the exported one
// is not called. A Ctrl-C while DynamoDB Local starts keeps the step cheap,
// and is a requested stop: status 0, no start timeout.
func (s *smokeShell) makeRunAgain() {
	s.t.Helper()
	exported := s.env[envvars.APIURL]
	if exported == "" {
		s.t.Fatalf("the README's steps exported no %s: this check has nothing to check", envvars.APIURL)
	}
	p := &cliProcess{cmd: exec.Command(s.cli, "local", "--images", s.images), done: make(chan struct{})}
	p.cmd.Dir, p.cmd.Env = s.root, s.environ()
	p.cmd.Stdout, p.cmd.Stderr = &p.output, &p.output
	p.start(s.t)
	p.waitFor(s.t, "starting  S3", time.Minute)
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		s.t.Fatal(err)
	}
	code := p.exitCode(s.t, time.Minute)
	out := p.output.String()
	s.wantExit(code, 0, "make run (again, Ctrl-C while it starts)", out)
	s.wantMatch("make run (again)", out,
		`(?m)^service +simulator at http://127\.0\.0\.1:\d+$`,
		`(?m)^note +`+envvars.APIURL+`=`+regexp.QuoteMeta(exported)+` in this shell is not called`)
	if strings.Contains(out, "service   simulator at "+exported+"\n") || strings.Contains(out, "did not answer") {
		s.t.Errorf("make run (again): the exported service used, or a start timeout:\n%s", out)
	}
}
