//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// makeIn runs make in the module root with args, without make's own deps
// and CLI build (make test ran them), and returns its stdout, stderr and
// error.
func makeIn(t *testing.T, env []string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make on PATH")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("make", append([]string{"--no-print-directory", "-o", "deps-cdk", "-o", "build-cli"}, args...)...)
	cmd.Dir = root
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MAKEFLAGS=") && !strings.HasPrefix(kv, "AWS_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

// Issue 46 points 3 and 4: make deploy made AWS calls before the checks
// that need no account (a typo, a missing apiUrl ended at "account
// concurrency could not check: ... no such host"), and CDK_ARGS without
// apiUrl made it required for make synth. The order is now: the URL, every
// setting (the CDK app, by synthesizing), then the AWS reads, then cdk
// deploy of that assembly; synth and destroy stand a placeholder in for a
// URL CDK_ARGS does not name.
func TestMakeDeployChecksOfflineFirst(t *testing.T) {
	out, _, err := makeIn(t, nil, "-n", "deploy", "CDK_ARGS=-c apiUrl=https://geo.test.invalid -c alarmEmail=me@example.com")
	if err != nil {
		t.Fatalf("make -n deploy: %v\n%s", err, out)
	}
	steps := []string{`make deploy: set the service URL`, `cdk synth --quiet "${args[@]}"`, `bin/geolocate doctor --predeploy --as "make deploy"`, `cdk deploy --app cdk.out`}
	at := -1
	for _, step := range steps {
		i := strings.Index(out, step)
		if i < at {
			t.Errorf("make deploy: %q is missing or not after the step before it:\n%s", step, out)
		}
		at = i
	}
	for target, want := range map[string]string{
		"synth CDK_ARGS=-c alarmEmail=me@example.com":       "cdk synth --quiet -c apiUrl=https://geolocation.invalid -c alarmEmail=me@example.com",
		"synth CDK_ARGS=-c apiUrl=https://geo.test.invalid": "cdk synth --quiet  -c apiUrl=https://geo.test.invalid",
		"destroy": "cdk destroy -c apiUrl=https://geolocation.invalid",
	} {
		out, _, err := makeIn(t, nil, append([]string{"-n"}, strings.SplitN(target, " ", 2)...)...)
		if err != nil || !strings.Contains(out, want) {
			t.Errorf("make -n %s: %v, want %q in\n%s", target, err, want, out)
		}
	}
}

// The real thing, with credentials set and AWS unreachable: a typo is the
// one line the CDK app gives, without go run's and cdk's lines after it and
// before any AWS call; no URL at all is one line before anything runs.
func TestMakeDeployRefusesABadSettingBeforeAnyAWSCall(t *testing.T) {
	if testing.Short() {
		t.Skip("synthesizes the app (about 20 s)")
	}
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	if _, err := os.Stat(filepath.Join(root, "node_modules", ".bin", "cdk")); err != nil {
		t.Skip("the CDK CLI is not installed (make deps-cdk)")
	}
	unreachable := []string{"AWS_ACCESS_KEY_ID=AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY=example", "AWS_REGION=eu-west-1", "AWS_ENDPOINT_URL=http://127.0.0.1:1"}

	stdout, stderr, err := makeIn(t, unreachable, "deploy")
	if err == nil || !strings.HasPrefix(stderr, `make deploy: set the service URL: make deploy CDK_ARGS="-c apiUrl=https://..."`) || strings.Count(stderr, "\n") != 2 {
		t.Errorf("bare make deploy: %v, stderr\n%s\nwant the URL line (and make's)", err, stderr)
	}

	stdout, stderr, err = makeIn(t, unreachable, "deploy", "CDK_ARGS=-c apiUrl=https://x.example -c alarmEmial=me@example.com")
	if err == nil || !strings.Contains(stderr, "unknown setting alarmEmial; did you mean alarmEmail?") {
		t.Fatalf("make deploy with a typo: %v, stderr\n%s", err, stderr)
	}
	for _, noise := range []string{"exit status 1", "Subprocess exited", "could not check", "127.0.0.1:1", "cdk deploy"} {
		if strings.Contains(stdout+stderr, noise) {
			t.Errorf("make deploy with a typo says %q:\n%s%s", noise, stdout, stderr)
		}
	}
}

// Issue 46 point 14: make reprocess-demo was a go test -v printout that
// never showed the commands it stands for. It prints the README's block
// (read from the README, so it follows whatever commands the README shows).
func TestReprocessDemoPrintsTheREADMECommands(t *testing.T) {
	out, _, err := makeIn(t, nil, "-s", "reprocess-demo-commands")
	if err != nil {
		t.Fatalf("make reprocess-demo-commands: %v\n%s", err, out)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "make reprocess-demo")
	_, block, ok2 := strings.Cut(after, "```sh\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("the README has no command block after its mention of make reprocess-demo")
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := strings.Split(strings.TrimRight(block, "\n"), "\n")
	if len(lines) != len(want)+1 || !strings.Contains(lines[0], "what these commands do on a deployed stack") {
		t.Fatalf("output:\n%s\nwant a heading and the README's %d commands", out, len(want))
	}
	for i, w := range want {
		if lines[i+1] != "  "+w {
			t.Errorf("line %d = %q, want %q", i+1, lines[i+1], "  "+w)
		}
	}
}
