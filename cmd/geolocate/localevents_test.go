package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/local/pipes"
)

// `geolocate local --events FILE` writes one JSON line per result event,
// and the run prints each event and their tally.
func TestLocalWritesTheResultEvents(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{imgJPEG, imgNotImage} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "events.jsonl")
	r := runCLI(t, map[string]string{}, nil, "local", "--images", dir, "--events", out)
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got []string
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		var e pipes.Event
		if err := json.Unmarshal(lines.Bytes(), &e); err != nil {
			t.Fatalf("line %q: %v", lines.Text(), err)
		}
		var d struct{ Key, Status string }
		if err := json.Unmarshal(e.Detail, &d); err != nil {
			t.Fatal(err)
		}
		got = append(got, e.Source+" "+e.DetailType+" "+d.Key+" "+d.Status)
	}
	sort.Strings(got)
	want := []string{
		"geolocate Photo Geolocated " + filepath.Base(imgJPEG) + " succeeded",
		"geolocate Photo Rejected " + filepath.Base(imgNotImage) + " rejected",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(r.stderr, "event     Photo Geolocated") || !strings.Contains(r.stdout, "result events: 1 Photo Geolocated, 1 Photo Rejected") {
		t.Errorf("the run does not show its events:\n%s\n%s", r.stderr, r.stdout)
	}
}

func TestLocalEventsRefusals(t *testing.T) {
	noPipe := filepath.Join(t.TempDir(), "template.json")
	if err := os.WriteFile(noPipe, []byte(`{"Resources":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"local", "--images", dir, "--serve", "--events", "x.jsonl"}, "--serve publishes them on its results bus"},
		{[]string{"local", "--images", dir, "--template", noPipe, "--events", "x.jsonl"}, "0 pipes"},
	} {
		r := runCLI(t, map[string]string{}, nil, tt.args...)
		if r.code == 0 || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tt.args, r.code, r.stderr, tt.want)
		}
	}
}
