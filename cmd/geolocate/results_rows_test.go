package main

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/pipeline"
	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
)

// TestLocalReportShowsWhyAPhotoWasRefused: an over-size BMP showed
// "rejected (cannot_downscale)" and its cause only in --verbose's JSON
// logs. The cause is now a line below the table; a dead letter's keeps its
// own line, once.
func TestLocalReportShowsWhyAPhotoWasRefused(t *testing.T) {
	const bmpCause = "25165878 bytes is more than the service's limit of 10485760 bytes and the photo cannot be downscaled: " +
		"BMP over the limit cannot be downscaled: only JPEG, PNG and WebP are downscaled"
	long := strings.Repeat("é", maxCauseBytes) // 2 bytes each: the cut must not split one
	sum := pipeline.Summary{Results: []pipeline.Result{
		{Upload: pipeline.Upload{Key: "scan.bmp"}, Record: &ledger.Record{Key: "scan.bmp", Status: ledger.StatusRejected,
			ErrorCode: "cannot_downscale", ErrorMessage: bmpCause}},
		{Upload: pipeline.Upload{Key: "odd.jpg"}, Record: &ledger.Record{Key: "odd.jpg", Status: ledger.StatusFailed,
			ErrorCode: "service_error", ErrorMessage: "line one\n  line two " + long}},
		{Upload: pipeline.Upload{Key: "ok.jpg"}, Record: &ledger.Record{Key: "ok.jpg", Status: ledger.StatusSucceeded, CreditsConsumed: 1}},
		{Upload: pipeline.Upload{Key: "poison.jpg"}, DeadLetter: &sqsqueue.Message{ID: "m1", ReceiveCount: 3, LastFailure: "lease lost"}},
	}, DeadLetters: []sqsqueue.Message{{ID: "m1", ReceiveCount: 3, LastFailure: "lease lost"}}}
	var out strings.Builder
	if err := writeLocalReport(&out, &sum); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.Contains(got, "rejected (cannot_downscale)") || !strings.Contains(got, "\nrejected scan.bmp: "+bmpCause+"\n") {
		t.Errorf("the BMP's cause is not below the table:\n%s", got)
	}
	i := strings.Index(got, "\nfailed odd.jpg: line one line two é")
	if i < 0 {
		t.Fatalf("the failure's cause is not one line below the table:\n%s", got)
	}
	line, _, _ := strings.Cut(got[i+1:], "\n")
	if !strings.HasSuffix(line, "… (--json prints all of it)") || !utf8.ValidString(line) || len(line) > len("failed odd.jpg: ")+maxCauseBytes+len("… (--json prints all of it)") {
		t.Errorf("long cause not cut on a character within %d bytes: %q", maxCauseBytes, line)
	}
	if strings.Contains(got, "ok.jpg:") {
		t.Errorf("a success has a cause line:\n%s", got)
	}
	if n := strings.Count(got, "lease lost"); n != 1 {
		t.Errorf("the dead letter's failure is printed %d times, want once:\n%s", n, got)
	}
}

// TestLocalReportTellsVersionsOfOneKeyApart: a touch under WATCH=1 is a
// new version, processed and charged again, and the table showed two
// identical rows. A VERSION column appears when a key has more than one
// version, and only then; it numbers the versions of a key oldest first
// (issue 46 point 10: cut to a prefix, two ids a second apart read
// "3HL4kqtJlcpXroDTDmJ+" and "3HL4kqtJlcpXroDTDmJ.", and an object with
// no version showed "-" or "null").
func TestLocalReportTellsVersionsOfOneKeyApart(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	row := func(key, version string, created time.Time) pipeline.Result {
		return pipeline.Result{Upload: pipeline.Upload{Bucket: "uploads", Key: key, VersionID: version},
			Record: &ledger.Record{Bucket: "uploads", Key: key, VersionID: version, Status: ledger.StatusSucceeded, CreditsConsumed: 1, CreatedAt: created}}
	}
	table := func(results ...pipeline.Result) string {
		var out strings.Builder
		if err := writeLocalReport(&out, &pipeline.Summary{Results: results}); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}

	// Listed newest first, numbered by age; ids that differ in their last
	// character only.
	got := table(row("cat.jpg", "3HL4kqtJlcpXroDTDmJ.", t0.Add(time.Second)), row("dog.jpg", "Zq9Yx8w7v6u5", t0),
		row("cat.jpg", "3HL4kqtJlcpXroDTDmJ+", t0), row("old.jpg", "null", t0), row("new.jpg", "", t0))
	for _, want := range []string{"OBJECT   VERSION      ", "\ncat.jpg  2 of 2       ", "\ncat.jpg  1 of 2       ", "\ndog.jpg  1 of 1       ",
		"\nold.jpg  unversioned  ", "\nnew.jpg  unversioned  "} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	for _, bad := range []string{"3HL4", "null"} {
		if strings.Contains(got, bad) {
			t.Errorf("table shows %q:\n%s", bad, got)
		}
	}

	got = table(row("cat.jpg", "3HL4kqtJlAAAAAAAAAAA", t0), row("dog.jpg", "Zq9Yx8w7v6u5", t0), row("old.jpg", "null", t0), row("old.jpg", "null", t0))
	if strings.Contains(got, "VERSION") {
		t.Errorf("one version per key, yet a VERSION column:\n%s", got)
	}
}

// Issue 46 point 9: REUSED FROM printed the source's bucket, key and whole
// version id, and the table was about 250 columns wide with copies.
func TestReusedFromIsTheKey(t *testing.T) {
	row := resultRow{Bucket: "uploads", Key: "trip/copy.jpg"}
	for _, c := range []struct{ from, want string }{
		{"s3://uploads/trip/IMG_0001.jpg (3HL4kqtJlcpXroDTDmJ+Qx7pLm0aZr9v)", "trip/IMG_0001.jpg"},
		{"s3://uploads/a (b).jpg (3HL4kqtJlcpXroDTDmJ+Qx7pLm0aZr9v) run try-v0.3", "a (b).jpg"},
		{"s3://uploads/trip/copy.jpg (3HL4kqtJlcpXroDTDmJ+Qx7pLm0aZr9v)", "an earlier version"},
		{"s3://other/IMG_0001.jpg (null)", "s3://other/IMG_0001.jpg"},
		{"", ""},
	} {
		row.ReusedFrom = c.from
		if got := reusedFromLabel(row); got != c.want {
			t.Errorf("reusedFromLabel(%q) = %q, want %q", c.from, got, c.want)
		}
	}
}
