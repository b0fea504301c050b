package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/syncbuf"

	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

const testKey = "geo_test_fake_key_1"

var (
	imgJPEG     = filepath.Join("..", "..", "testdata", "images", "gradient-64x48.jpg")
	imgPNG      = filepath.Join("..", "..", "testdata", "images", "checker-32x32.png")
	imgNotImage = filepath.Join("..", "..", "testdata", "images", "not-an-image.jpg")
)

// startSim serves a simulator whose demo key is testKey.
func startSim(t *testing.T, optFns ...func(*geosim.Config)) (*geosim.Server, string) {
	t.Helper()
	optFns = append([]func(*geosim.Config){func(c *geosim.Config) { c.DemoKey = testKey }}, optFns...)
	sim := geosim.New(optFns...)
	ts := httptest.NewServer(sim)
	t.Cleanup(ts.Close)
	return sim, ts.URL
}

type result struct {
	code           int
	stdout, stderr string
}

// runCLITimeout is how long runCLI lets one command run.
const runCLITimeout = 3 * time.Minute

// runCLI runs the program with env as its whole environment.
func runCLI(t *testing.T, env map[string]string, secrets secretSource, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	c := &cli{stdout: &stdout, stderr: &stderr, getenv: func(k string) string { return env[k] }, secrets: secrets}
	if secrets == nil {
		c.secrets = fakeSecrets{err: errors.New("no secrets in this test")}
	}
	// A bound for a hung command, not a speed target: the local runs
	// (DynamoDB Local's start, a whole pipeline) take 10-20 s alone and
	// several times that on CI's 2 cores beside other packages' tests.
	ctx, cancel := context.WithTimeout(context.Background(), runCLITimeout)
	defer cancel()
	code := c.main(ctx, args)
	return result{code, stdout.String(), stderr.String()}
}

func simEnv(url, key string) map[string]string {
	return map[string]string{envvars.APIURL: url, envvars.APIKey: key}
}

type fakeSecrets struct {
	value string
	err   error
}

func (f fakeSecrets) SecretString(_ context.Context, id string) (string, error) {
	if f.err != nil {
		return "", f.err
	}
	return f.value, nil
}

// assertOneLineError checks the error output is one "geolocate: " line
// starting with prefix and holding no key.
func assertOneLineError(t *testing.T, r result, prefix string) {
	t.Helper()
	if r.code == 0 {
		t.Errorf("exit 0, want failure")
	}
	if !strings.HasPrefix(r.stderr, "geolocate: "+prefix) || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("stderr %q: want one line starting %q", r.stderr, "geolocate: "+prefix)
	}
	assertNoKey(t, r)
}

func assertNoKey(t *testing.T, r result) {
	t.Helper()
	if strings.Contains(r.stdout+r.stderr, "fake_key") {
		t.Errorf("a key was printed: stdout %q stderr %q", r.stdout, r.stderr)
	}
}

func TestUsage(t *testing.T) {
	// Mistakes: exit 2, the problem and the usage on stderr, nothing on stdout.
	for _, args := range [][]string{
		nil,
		{"bogus"},
		{"predict"},
		{"predict", "--nope", "x.jpg"},
		{"models", "extra"},
		{"local", "--bogus"},
	} {
		r := runCLI(t, nil, nil, args...)
		if r.code != exitUsage {
			t.Errorf("%v: exit %d, want %d (stderr %q)", args, r.code, exitUsage, r.stderr)
		}
		if r.stderr == "" || r.stdout != "" {
			t.Errorf("%v: stdout %q, stderr %q: want the problem on stderr only", args, r.stdout, r.stderr)
		}
	}
}

// TestHelpSaysWhatEachCommandNeeds: the command list is grouped by what a
// command needs (nothing, the service, AWS credentials), and each
// command's -h says what it does and needs, before its flags.
func TestHelpSaysWhatEachCommandNeeds(t *testing.T) {
	r := runCLI(t, nil, nil, "-h")
	if strings.Contains(r.stdout, "(required)") {
		t.Errorf("help says a variable is required for every command:\n%s", r.stdout)
	}
	sections := strings.Split(r.stdout, "\n\n")
	for name, cmd := range commands {
		var in []string
		for _, sec := range sections {
			if regexp.MustCompile(`(?m)^  ` + name + ` `).MatchString(sec) {
				in = append(in, sec)
			}
		}
		want := map[requirement]string{needsLocal: "no AWS account, no key", needsService: "GEO_API_URL", needsAWS: "your AWS credentials", needsNothing: "other:"}[cmd.needs]
		if len(in) != 1 || !strings.Contains(in[0], want) {
			t.Errorf("%s is listed in %q, want once in the section that says %q", name, in, want)
		}
		h := runCLI(t, nil, nil, name, "-h")
		summary := strings.ToUpper(cmd.summary[:1]) + cmd.summary[1:] + "."
		if name != "doctor" && (!strings.Contains(h.stdout, "\n\n"+summary+"\n") || !strings.Contains(h.stdout, needsLine(cmd.needs)) || !strings.Contains(h.stdout, "\nflags:\n")) {
			t.Errorf("%s -h does not say what it does and needs before its flags:\n%s", name, h.stdout)
		}
	}
}

// TestHelpIsAnAnswer: help asked for is the program's output (stdout, exit
// 0) for the program and every command, whichever way it is asked.
func TestHelpIsAnAnswer(t *testing.T) {
	cases := [][]string{{"help"}, {"-h"}, {"--help"}}
	for name := range commands {
		cases = append(cases, []string{name, "-h"}, []string{name, "--help"})
	}
	cases = append(cases, []string{"predict", "a.jpg", "-h"}) // after a file too
	for _, args := range cases {
		r := runCLI(t, nil, nil, args...)
		if r.code != exitOK {
			t.Errorf("%v: exit %d, want 0 (stderr %q)", args, r.code, r.stderr)
		}
		want := "usage: geolocate "
		if len(args) > 1 {
			want += args[0]
		}
		if !strings.HasPrefix(r.stdout, want) || r.stderr != "" {
			t.Errorf("%v: stdout %q, stderr %q: want the usage on stdout only", args, r.stdout, r.stderr)
		}
	}
}

func TestVersion(t *testing.T) {
	for _, tt := range []struct {
		name string
		info *debug.BuildInfo
		want string
	}{
		{"built in a checkout", &debug.BuildInfo{
			GoVersion: "go1.26.8",
			Main:      debug.Module{Path: "github.com/geolocate-aws/geolocate", Version: "v0.0.0-20261124183116-1064e0f58d9c"},
			Settings: []debug.BuildSetting{
				{Key: "vcs.revision", Value: "1064e0f58d9cca6f684a7b8b0820d6afffd81edd"},
				{Key: "vcs.time", Value: "2026-11-24T18:31:16Z"},
				{Key: "vcs.modified", Value: "true"},
			},
		}, "geolocate v0.0.0-20261124183116-1064e0f58d9c (commit 1064e0f58d9cca6f684a7b8b0820d6afffd81edd, modified, 2026-11-24T18:31:16Z, go1.26.8)\n"},
		{"go run, no VCS", &debug.BuildInfo{GoVersion: "go1.26.8"}, "geolocate (devel) (commit unknown, go1.26.8)\n"},
		{"no build info", nil, "geolocate (devel) (commit unknown)\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			saved := buildInfo
			t.Cleanup(func() { buildInfo = saved })
			buildInfo = func() (*debug.BuildInfo, bool) { return tt.info, tt.info != nil }
			for _, args := range [][]string{{"--version"}, {"-version"}, {"version"}} {
				r := runCLI(t, nil, nil, args...)
				if r.code != exitOK || r.stdout != tt.want || r.stderr != "" {
					t.Errorf("%v: exit %d, stdout %q, stderr %q; want %q", args, r.code, r.stdout, r.stderr, tt.want)
				}
			}
		})
	}
}

func TestPredictJSON(t *testing.T) {
	sim, url := startSim(t)
	// Flags after the file are accepted.
	r := runCLI(t, simEnv(url, testKey), nil, "predict", imgJPEG, "--json", "--top-n", "2")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var out struct {
		File            string `json:"file"`
		ModelID         string `json:"model_id"`
		CreditsConsumed int    `json:"credits_consumed"`
		Top             struct{ Name string }
		Prediction      struct {
			ResultType string           `json:"result_type"`
			Clusters   []map[string]any `json:"clusters"`
		} `json:"prediction"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("stdout %q: %v", r.stdout, err)
	}
	if out.File != imgJPEG || out.ModelID != geosim.ModelGlobalDefault || out.CreditsConsumed != 1 ||
		out.Prediction.ResultType != "coordinates" || len(out.Prediction.Clusters) != 2 || out.Top.Name == "" {
		t.Errorf("output %+v", out)
	}
	if c := sim.Calls()[0]; c.TopN != 2 || c.ModelRequested != "" {
		t.Errorf("the service saw top_n %d model %q", c.TopN, c.ModelRequested)
	}
}

func TestPredictTables(t *testing.T) {
	tests := []struct {
		model  string
		header string
	}{
		{"", "RADIUS_KM"},
		{geosim.ModelHighAccuracy, "CONFIDENCE"},
		{geosim.ModelVehicle, `result type "vehicle" has no table`},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			sim, url := startSim(t)
			env := simEnv(url, testKey)
			args := []string{"predict", "--model", tt.model}
			js := runCLI(t, env, nil, append(args, "--json", imgPNG)...)
			var top struct{ Top *struct{ Name string } }
			if err := json.Unmarshal([]byte(js.stdout), &top); err != nil {
				t.Fatalf("json run: %v (%s)", err, js.stderr)
			}
			r := runCLI(t, env, nil, append(args, imgPNG)...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if !strings.Contains(r.stdout, tt.header) {
				t.Errorf("stdout lacks %q:\n%s", tt.header, r.stdout)
			}
			if top.Top != nil {
				lines := strings.Split(r.stdout, "\n")
				if len(lines) < 3 || !strings.HasPrefix(lines[2], "1 ") || !strings.Contains(lines[2], top.Top.Name) {
					t.Errorf("first row does not show %s:\n%s", top.Top.Name, r.stdout)
				}
			}
			cost := sim.Charged(geosim.DefaultOrg) / 2
			if want := "credits consumed: " + strconv.Itoa(cost); !strings.Contains(r.stdout, want) {
				t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
			}
		})
	}
}

func TestPredictErrors(t *testing.T) {
	dir := t.TempDir()
	empty, large := emptyFile(t, dir), largeJPEG(t, dir)
	tests := []struct {
		name   string
		opts   func(*geosim.Config)
		env    func(url string) map[string]string
		args   []string
		prefix string
		calls  int
	}{
		{"no url", nil, func(string) map[string]string { return map[string]string{envvars.APIKey: testKey} },
			[]string{imgJPEG}, "predict: GEO_API_URL is not set", 0},
		{"no key", nil, func(u string) map[string]string { return simEnv(u, "") },
			[]string{imgJPEG}, "predict: no API key", 0},
		{"wrong key", nil, func(u string) map[string]string { return simEnv(u, "geo_test_fake_key_wrong") },
			[]string{imgJPEG}, "predict " + imgJPEG + ": the service refused this key (401)", 1},
		{"out of credits", func(c *geosim.Config) { c.NoCredits = true }, nil,
			[]string{imgJPEG, imgPNG}, "predict " + imgJPEG + ": out of credits (402)", 1},
		{"not an image", nil, nil, []string{imgNotImage}, "predict " + imgNotImage + ":", 0},
		{"missing file", nil, nil, []string{"no-such-file.jpg"}, "predict no-such-file.jpg: stat no-such-file.jpg: no such file", 0},
		{"key without geo_", nil, func(u string) map[string]string { return simEnv(u, "abc_fake_key") },
			[]string{imgJPEG}, "predict " + imgJPEG + `: the API key does not start with "geo_" (check GEO_API_KEY or the secret); nothing sent, nothing charged`, 0},
		{"empty image", nil, nil, []string{empty}, "predict " + empty + ": the image file is empty; nothing sent, nothing charged", 0},
		{"too large", nil, nil, []string{large},
			"predict " + large + ": the image is 12,345,678 bytes; the service accepts at most 10,000,000 bytes; nothing sent, nothing charged (the pipeline re-encodes such a photo to fit: make run IMAGES=", 0},
		{"a folder", nil, nil, []string{dir}, "predict " + dir + ": a folder: predict takes photo files (predict " + dir + "/*.jpg); make run IMAGES=" + dir, 0},
		{"retired model", nil, nil, []string{"--model", geosim.ModelRetired, imgJPEG, imgPNG},
			"predict " + imgJPEG + `: model "` + geosim.ModelRetired + `" is not in the service's model list (422); run geolocate models`, 1},
		{"model that never existed", nil, nil, []string{"--model", "no-such-model", imgJPEG},
			`predict ` + imgJPEG + `: model "no-such-model" is not in the service's model list (422); run geolocate models to see the models you can use, or leave --model out for the default model`, 1},
		{"top-n out of range", nil, nil, []string{"--top-n", "16", imgJPEG}, "predict: --top-n 16 is outside 1 to 15", 0},
		{"top-n zero", nil, nil, []string{"--top-n", "0", imgJPEG}, "predict: --top-n 0 is outside 1 to 15: give how many locations you want, or leave --top-n out", 0},
		{"top-n negative after the file", nil, nil, []string{imgJPEG, "--top-n=-3"}, "predict: --top-n -3 is outside 1 to 15", 0},
		{"top-n 99", nil, nil, []string{"--top-n", "99", imgJPEG}, "predict: --top-n 99 is outside 1 to 15", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []func(*geosim.Config)
			if tt.opts != nil {
				opts = append(opts, tt.opts)
			}
			sim, url := startSim(t, opts...)
			env := simEnv(url, testKey)
			if tt.env != nil {
				env = tt.env(url)
			}
			r := runCLI(t, env, nil, append([]string{"predict"}, tt.args...)...)
			assertOneLineError(t, r, tt.prefix)
			if sim.CallCount() != tt.calls {
				t.Errorf("%d calls reached the service, want %d", sim.CallCount(), tt.calls)
			}
			if sim.Charged(geosim.DefaultOrg) != 0 {
				t.Error("a failed predict was charged")
			}
		})
	}
}

// emptyFile writes a zero-byte .jpg in dir.
func emptyFile(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "empty.jpg")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// largeJPEG writes a JPEG of 12,345,678 bytes in dir (sparse: its header,
// then zeros).
func largeJPEG(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "large.jpg")
	if err := os.WriteFile(path, []byte{0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10, 'J', 'F', 'I', 'F', 0}, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 12_345_678); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestPredictTopNLeftOutIsNotSent(t *testing.T) {
	sim, _ := startSim(t)
	var queries []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		queries = append(queries, r.URL.RawQuery)
		sim.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	r := runCLI(t, simEnv(ts.URL, testKey), nil, "predict", imgJPEG)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if len(queries) != 1 || strings.Contains(queries[0], "top_n") {
		t.Errorf("queries %q: want one call without top_n", queries)
	}
}

func TestPredictBatchContinuesPastABadFile(t *testing.T) {
	sim, url := startSim(t)
	r := runCLI(t, simEnv(url, testKey), nil, "predict", imgNotImage, imgJPEG)
	assertOneLineError(t, r, "predict "+imgNotImage)
	if !strings.Contains(r.stdout, imgJPEG+": model") || !strings.Contains(r.stdout, "credits consumed: 1") {
		t.Errorf("the good file was not predicted:\n%s", r.stdout)
	}
	if sim.Charged(geosim.DefaultOrg) != 1 {
		t.Errorf("charged %d, want 1", sim.Charged(geosim.DefaultOrg))
	}
}

func TestSecretID(t *testing.T) {
	_, url := startSim(t)
	env := map[string]string{envvars.APIURL: url}
	for _, value := range []string{testKey, ` {"api_key": "` + testKey + `"} `} {
		r := runCLI(t, env, fakeSecrets{value: value}, "credits", "--secret-id", "geo/test")
		if r.code != 0 || !strings.Contains(r.stdout, "remaining") {
			t.Errorf("secret %q: exit %d stdout %q stderr %q", value, r.code, r.stdout, r.stderr)
		}
		assertNoKey(t, r)
	}
	r := runCLI(t, env, fakeSecrets{err: errors.New("AccessDeniedException")}, "credits", "--secret-id", "geo/test")
	assertOneLineError(t, r, "credits: read secret geo/test: AccessDeniedException")
	r = runCLI(t, env, fakeSecrets{value: `{"password":"geo_test_fake_key_1"}`}, "credits", "--secret-id", "geo/test")
	assertOneLineError(t, r, "credits: secret geo/test: secret does not hold a geo_ API key")
}

func TestModels(t *testing.T) {
	_, url := startSim(t)
	r := runCLI(t, map[string]string{envvars.APIURL: url}, nil, "models")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, id := range []string{geosim.ModelGlobalDefault, geosim.ModelHighAccuracy, geosim.ModelVehicle} {
		if !strings.Contains(r.stdout, id) {
			t.Errorf("no-key list lacks %s:\n%s", id, r.stdout)
		}
	}
	if strings.Contains(r.stdout, geosim.ModelPropertyWL) {
		t.Error("no-key list shows a whitelist model")
	}
	// A shorter list must not pass for models gone.
	if !strings.Contains(r.stderr, "no API key, so public models only: the whitelist models granted to your organisation are listed with GEO_API_KEY") {
		t.Errorf("no-key list does not say what it leaves out: stderr %q", r.stderr)
	}
	r = runCLI(t, simEnv(url, testKey), nil, "models", "--json")
	if r.stderr != "" {
		t.Errorf("keyed list: stderr %q", r.stderr)
	}
	var list []struct{ ID, Status, Access string }
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatalf("stdout %q: %v", r.stdout, err)
	}
	found := false
	for _, m := range list {
		found = found || (m.ID == geosim.ModelPropertyWL && m.Access == "whitelist" && m.Status == "ready")
	}
	if len(list) != 4 || !found {
		t.Errorf("keyed list %+v", list)
	}
	r = runCLI(t, simEnv(url, "geo_test_fake_key_wrong"), nil, "models")
	assertOneLineError(t, r, "models: the service refused this key (401)")
}

func TestCredits(t *testing.T) {
	sim, url := startSim(t, func(c *geosim.Config) { c.Allowance = 50; c.TopUp = 7 })
	env := simEnv(url, testKey)
	r := runCLI(t, env, nil, "credits", "--json")
	var out map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("stdout %q (%s): %v", r.stdout, r.stderr, err)
	}
	if out["remaining"] != 57.0 || out["topup_balance"] != 7.0 {
		t.Errorf("credits %v", out)
	}

	sim.SetCreditsLayout(geosim.CreditsLayoutUnrecognised)
	r = runCLI(t, env, nil, "credits")
	assertOneLineError(t, r, "credits: ")
	if !strings.Contains(r.stderr, "left_units") {
		t.Errorf("the error does not list the keys seen: %s", r.stderr)
	}
	r = runCLI(t, env, nil, "credits", "--remaining-path", "result.quota.left_units")
	if r.code != 0 || !strings.Contains(r.stdout, "57") {
		t.Errorf("with a path: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	env[envvars.CreditsPath] = "result.quota.left_units"
	if r = runCLI(t, env, nil, "credits"); r.code != 0 {
		t.Errorf("path from %s: exit %d %s", envvars.CreditsPath, r.code, r.stderr)
	}
}

func TestSimulate(t *testing.T) {
	var stdout, stderr syncbuf.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"simulate", "--addr", "127.0.0.1:0", "--credits", "5", "--rate-per-minute", "600", "--burst", "10"},
			&stdout, &stderr, func(string) string { return "" })
	}()
	env := map[string]string{}
	deadline := time.Now().Add(5 * time.Second)
	for len(env) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		for _, line := range strings.Split(stdout.String(), "\n") {
			if k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "="); ok {
				env[k] = v
			}
		}
	}
	// The key is the same every time, so the README's export line pastes.
	if !strings.HasPrefix(env[envvars.APIURL], "http://127.0.0.1:") || env[envvars.APIKey] != "geo_sim_demo" {
		t.Fatalf("simulate printed %q", stdout.String())
	}
	r := runCLI(t, env, nil, "credits", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"remaining":5`) {
		t.Errorf("credits against the simulator: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("simulate exit %d: %s", code, stderr.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("simulate did not stop on cancel")
	}
	if !strings.Contains(stderr.String(), `"endpoint":"/v1/credits/summary"`) {
		t.Errorf("no call log on stderr: %q", stderr.String())
	}
	if !regexp.MustCompile(`(?m)^stopped after \S+, 1 call, 0 credits charged$`).MatchString(stdout.String()) {
		t.Errorf("closing line: %q", stdout.String())
	}
}

func TestSimulateKeyIsASimulatorKey(t *testing.T) {
	for _, key := range []string{"geo_realkey", "geo_sim_", "demo"} {
		r := runCLI(t, map[string]string{}, nil, "simulate", "--addr", "127.0.0.1:0", "--key", key)
		if r.code != exitUsage || !strings.Contains(r.stderr, "a simulator key starts with geo_sim_") {
			t.Errorf("--key %q: exit %d, stderr %q", key, r.code, r.stderr)
		}
	}
}
