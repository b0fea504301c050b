package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/pipeline"
	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
)

func TestLocalRunsThePipelineOnADirectory(t *testing.T) {
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
	// No GEO_API_URL/GEO_API_KEY: the built-in simulator.
	r := runCLI(t, map[string]string{}, nil, "local", "--images", dir, "--json")
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var rep localJSONReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, r.stdout)
	}
	if len(rep.Results) != 2 || len(rep.Lost) != 0 || rep.Monitor == nil || rep.CreditsCharged == nil || *rep.CreditsCharged != 1 {
		t.Fatalf("report = %+v", rep)
	}
	byKey := map[string]resultRow{}
	for _, row := range rep.Results {
		byKey[row.Key] = row
	}
	if got := byKey[filepath.Base(imgJPEG)]; got.Status != "succeeded" || got.Place == "" || got.Latitude == nil || got.Credits != 1 {
		t.Errorf("image row = %+v", got)
	}
	if got := byKey[filepath.Base(imgNotImage)]; got.Status != "rejected" || got.Reason != "not_an_image" || got.Credits != 0 {
		t.Errorf("text file row = %+v", got)
	}
	if !strings.Contains(r.stderr, "uploaded") || !strings.Contains(r.stderr, "done") {
		t.Errorf("no progress on stderr:\n%s", r.stderr)
	}
}

func TestLocalVerdict(t *testing.T) {
	final := func(status string) *ledger.Record { return &ledger.Record{Status: status} }
	tests := []struct {
		name    string
		results []pipeline.Result
		wantErr string
	}{
		{"all succeeded or rejected", []pipeline.Result{
			{Record: final(ledger.StatusSucceeded)}, {Record: final(ledger.StatusRejected)},
		}, ""},
		{"lost: acked without a final record", []pipeline.Result{
			{Upload: pipeline.Upload{Key: "a.jpg"}, Record: &ledger.Record{Status: ledger.StatusFailed, Retryable: true}},
		}, "1 upload(s) LOST"},
		{"lost: no record at all", []pipeline.Result{
			{Upload: pipeline.Upload{Key: "b.jpg"}},
		}, "LOST (no final record, no dead letter): b.jpg"},
		{"failed for good", []pipeline.Result{
			{Record: final(ledger.StatusSucceeded)}, {Record: final(ledger.StatusFailed)},
		}, "1 image(s) not geolocated"},
		{"dead-lettered", []pipeline.Result{
			{DeadLetter: &sqsqueue.Message{ID: "m"}},
		}, "1 image(s) not geolocated"},
		{"still queued at Ctrl-C is not lost", []pipeline.Result{
			{Queued: true},
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := localVerdict(&pipeline.Summary{Results: tt.results})
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("err = %v, want none", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// TestLocalReportsAMissingFolderOnceBeforeStarting: one line, at once,
// nothing started (no progress line).
func TestLocalReportsAMissingFolderOnceBeforeStarting(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "trip")
	for _, args := range [][]string{
		{"local", "--images", missing},
		{"local", "--images", missing, "--watch"},
		{"local", "--images", missing, "--serve"},
	} {
		begin := time.Now()
		r := runCLI(t, map[string]string{}, nil, args...)
		assertOneLineError(t, r, "local: images folder "+missing+" does not exist: give an existing folder with --images")
		if r.code != exitError || r.stdout != "" {
			t.Errorf("%v: exit %d, stdout %q", args, r.code, r.stdout)
		}
		if d := time.Since(begin); d > 2*time.Second {
			t.Errorf("%v: took %s, want the check before anything starts", args, d)
		}
	}
}

// TestLocalWatchRefusesTheRepositorysSampleImages: files dropped into a
// watched testdata/images stayed there, untracked, and later runs uploaded
// them and tests read them. Watching it is refused before anything starts.
func TestLocalWatchRefusesTheRepositorysSampleImages(t *testing.T) {
	for _, dir := range []string{"../../testdata/images", "../../testdata/images/"} {
		r := runCLI(t, map[string]string{}, nil, "local", "--watch", "--images", dir)
		if r.code != exitUsage || !strings.Contains(r.stderr, "--watch on "+dir+" would leave the files dropped there in the repository") {
			t.Errorf("--watch --images %s: exit %d, stderr %q", dir, r.code, r.stderr)
		}
	}
}

// TestLocalReportSaysWhatInterruptedCallsDid: a call cut off after the
// photo was sent leaves a record that says outcome_unknown; the report
// says plainly whether it was charged (the simulator's count against the
// records': "3 credit(s) recorded, 4 charged" was all it said).
func TestLocalReportSaysWhatInterruptedCallsDid(t *testing.T) {
	unknown := &ledger.Record{Status: ledger.StatusFailed, ErrorCode: ledger.ErrorCodeOutcomeUnknown}
	paid := &ledger.Record{Status: ledger.StatusSucceeded, CreditsConsumed: 1}
	for _, tt := range []struct {
		name string
		sum  pipeline.Summary
		want string
	}{
		{"charged by the simulator", pipeline.Summary{Simulated: true, CreditsCharged: 2,
			Results: []pipeline.Result{{Record: paid}, {Record: unknown}}},
			"interrupted: 1 credit(s) charged for calls whose answer never came (cut off after the photo was sent: 1 record(s) say outcome_unknown)"},
		{"not charged by the simulator", pipeline.Summary{Simulated: true, CreditsCharged: 1,
			Results: []pipeline.Result{{Record: paid}, {Record: unknown}}},
			"interrupted: 1 call(s) cut off before the service charged them"},
		{"a real service", pipeline.Summary{Results: []pipeline.Result{{Record: unknown}}},
			"interrupted: 1 call(s) cut off after the photo was sent (records say outcome_unknown): the service may have charged them"},
		{"nothing interrupted", pipeline.Summary{Simulated: true, CreditsCharged: 1, Results: []pipeline.Result{{Record: paid}}}, ""},
	} {
		var out strings.Builder
		if err := writeLocalReport(&out, &tt.sum, false); err != nil {
			t.Fatal(err)
		}
		if got := out.String(); (tt.want == "") == strings.Contains(got, "interrupted:") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: report\n%s\nwant %q", tt.name, got, tt.want)
		}
	}
}

func TestServeStoppedSaysWhatRan(t *testing.T) {
	got := serveStopped(754*time.Second+400*time.Millisecond, true)
	for _, want := range []string{"stopped   after 12m34s: the simulator, S3 and DynamoDB Local stopped", "export line now points at nothing"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	if got := serveStopped(time.Minute, false); strings.Contains(got, "simulator") {
		t.Errorf("a real service is not the simulator: %q", got)
	}
}
