//go:build linux

package main

import (
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAWSCommandsWithoutCredentials runs the built CLI as on a newcomer's
// machine: no AWS credentials, no profile, and an instance metadata
// service that refuses the IMDSv2 token (403) and has no role, as
// 169.254.169.254 answers on many machines that are not EC2 instances.
// Every AWS command says so in one line with what to do, prints nothing on
// stdout (a redirect gets no partial output) and writes no file; the SDK's
// "falling back to IMDSv1" warning is not shown.
func TestAWSCommandsWithoutCredentials(t *testing.T) {
	cli := buildCLI(t)
	imds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut { // the IMDSv2 token
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		http.NotFound(w, r) // no role
	}))
	t.Cleanup(imds.Close)
	home := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "AWS_REGION=us-east-1", "AWS_EC2_METADATA_SERVICE_ENDPOINT=" + imds.URL}
	page := filepath.Join(home, "week.html")
	for _, args := range [][]string{
		{"results", "--stack", "Geolocation", "--status", "succeeded", "--since", "24h", "--geojson"},
		{"results", "--stack", "Geolocation", "--since", "7d", "--map", page},
		{"backfill", "--stack", "Geolocation", "--bucket", "my-photos"},
		{"status", "--stack", "Geolocation"},
		{"doctor", "--stack", "Geolocation"},
	} {
		cmd := exec.Command(cli, args...)
		cmd.Env, cmd.Dir = env, home
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		_ = cmd.Run()
		want := "geolocate: " + args[0] + ": no AWS credentials found: set AWS_PROFILE"
		if code := cmd.ProcessState.ExitCode(); code != exitError || stdout.Len() != 0 ||
			strings.Count(stderr.String(), "\n") != 1 || !strings.HasPrefix(stderr.String(), want) {
			t.Errorf("%v: exit %d, stdout %q, stderr:\n%s\nwant exit 1, no stdout and one line starting %q", args, code, stdout.String(), stderr.String(), want)
		}
	}
	// results without AWS points at the local records.
	_, _, stderr := runBuiltCLI(t, cli, []string{"AWS_REGION=us-east-1", "AWS_EC2_METADATA_SERVICE_ENDPOINT=" + imds.URL},
		"results", "--since", "7d", "--map", page)
	if !strings.Contains(stderr, "geolocate local --serve") || !strings.Contains(stderr, "make run MAP=") {
		t.Errorf("results --map without AWS does not mention local --serve and make run MAP=: %q", stderr)
	}
	if _, err := os.Stat(page); !os.IsNotExist(err) {
		t.Errorf("results --map wrote %s although the command failed (%v)", page, err)
	}
}

// runBuiltCLI runs the built CLI with exactly env (no inherited AWS
// variables) in an empty home, returning its exit code, stdout and stderr.
func runBuiltCLI(t *testing.T, cli string, env []string, args ...string) (int, string, string) {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(cli, args...)
	cmd.Env, cmd.Dir = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}, env...), home
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	_ = cmd.Run()
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

// TestAWSChecksFirstLineLabelledWithTheCommandRun: make bootstrap and make
// destroy run doctor --aws-environment --as "make ...": no credentials, or
// credentials without a region (the SDK said "failed to resolve service
// endpoint, endpoint rule error, Invalid Configuration: Missing Region" at
// the first call), is one line labelled with the make command.
func TestAWSChecksFirstLineLabelledWithTheCommandRun(t *testing.T) {
	cli := buildCLI(t)
	noIMDS := "AWS_EC2_METADATA_DISABLED=true"
	for _, tt := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"bootstrap without credentials", []string{noIMDS, "AWS_REGION=eu-west-1"},
			[]string{"doctor", "--aws-environment", "--as", "make bootstrap"}, "make bootstrap: no AWS credentials found: set AWS_PROFILE"},
		{"destroy without a region", []string{noIMDS, "AWS_ACCESS_KEY_ID=AKIDEXAMPLEFAKE", "AWS_SECRET_ACCESS_KEY=fake"},
			[]string{"doctor", "--aws-environment", "--as", "make destroy"}, "make destroy: no AWS region: export AWS_REGION=<region>"},
		{"status without a region", []string{noIMDS, "AWS_ACCESS_KEY_ID=AKIDEXAMPLEFAKE", "AWS_SECRET_ACCESS_KEY=fake"},
			[]string{"status", "--stack", "Geolocation"}, "geolocate: status: no AWS region: export AWS_REGION=<region>"},
	} {
		code, stdout, stderr := runBuiltCLI(t, cli, tt.env, tt.args...)
		if code != exitError || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, tt.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 1 and one line starting %q", tt.name, code, stdout, stderr, tt.want)
		}
	}
}

// TestAWSCommandsInTheLocalRigShell: after pasting local --serve's export
// line, the AWS commands that need AWS say the shell holds the local rig's
// environment (doctor printed the same DNS failure 8 times), and results,
// which reads the local table, fails at once when that rig has stopped (it
// waited 5 s for a raw "connection refused").
func TestAWSCommandsInTheLocalRigShell(t *testing.T) {
	cli := buildCLI(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stale := "http://" + l.Addr().String()
	l.Close()
	rig := []string{"AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local", "AWS_REGION=us-east-1",
		"AWS_ENDPOINT_URL_DYNAMODB=" + stale, "AWS_ENDPOINT_URL_S3=" + stale, "TABLE_NAME=serve-1"}
	for _, args := range [][]string{
		{"status", "--stack", "Geolocation"},
		{"doctor", "--stack", "Geolocation"},
		{"backfill", "--stack", "Geolocation", "--bucket", "my-photos"},
	} {
		code, stdout, stderr := runBuiltCLI(t, cli, rig, args...)
		if code != exitError || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "this shell holds the local rig's environment") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want one line saying the shell holds the local rig's environment", args, code, stdout, stderr)
		}
	}
	began := time.Now()
	code, stdout, stderr := runBuiltCLI(t, cli, rig, "results", "--since", "1h")
	if took := time.Since(began); took > 3*time.Second {
		t.Errorf("results against a stopped rig took %s", took)
	}
	if code != exitError || stdout != "" || strings.Count(stderr, "\n") != 1 ||
		!strings.Contains(stderr, stale+" (AWS_ENDPOINT_URL_DYNAMODB, from local --serve's export line) does not answer") || !strings.Contains(stderr, "local --serve again") {
		t.Errorf("results with a stale export: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
