//go:build linux

package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
	if _, err := os.Stat(page); !os.IsNotExist(err) {
		t.Errorf("results --map wrote %s although the command failed (%v)", page, err)
	}
}
