package main

import (
	"regexp"
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
	if err := writeLocalReport(&out, &sum, false); err != nil {
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
		if err := writeLocalReport(&out, &pipeline.Summary{Results: results}, false); err != nil {
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

// Issue 46 point 8: stopped in the middle, the report blamed the stop's
// own doing ("queued (rate_wait_timeout)", "queued (ledger_error)",
// "claim content 4462dc…: ... context canceled"). After a stop an upload
// it cut short says so; a wait of its own (out of credits) stays; a run
// that was not stopped keeps every recorded reason.
func TestStoppedRunNamesTheStop(t *testing.T) {
	queued := func(key, reason, detail string) pipeline.Result {
		return pipeline.Result{Upload: pipeline.Upload{Bucket: "b", Key: key}, Queued: true,
			Record: &ledger.Record{Bucket: "b", Key: key, Status: ledger.StatusWaiting, ErrorCode: reason, ErrorMessage: detail}}
	}
	sum := pipeline.Summary{Results: []pipeline.Result{
		queued("a.jpg", "rate_wait_timeout", "no call slot within the invocation"),
		queued("b.jpg", "ledger_error", "claim content 4462dc: operation error DynamoDB: UpdateItem, https response error StatusCode: 0, context canceled"),
		queued("c.jpg", "storage_error", "get object: context canceled"),
		queued("d.jpg", "out_of_credits", "the account has no credits left"),
		{Upload: pipeline.Upload{Bucket: "b", Key: "e.jpg"}, Queued: true},
	}}
	var out strings.Builder
	if err := writeLocalReport(&out, &sum, true); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, key := range []string{"a.jpg", "b.jpg", "c.jpg", "e.jpg"} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(key) + ` +queued \(stopped before it finished\) `).MatchString(got) {
			t.Errorf("%s does not name the stop:\n%s", key, got)
		}
	}
	for _, bad := range []string{"rate_wait_timeout", "ledger_error", "context canceled", "storage_error"} {
		if strings.Contains(got, bad) {
			t.Errorf("the report blames %q after a stop:\n%s", bad, got)
		}
	}
	if !strings.Contains(got, "queued (out_of_credits)") || !strings.Contains(got, "\nqueued d.jpg: the account has no credits left\n") {
		t.Errorf("a wait of its own is no longer said:\n%s", got)
	}

	out.Reset()
	if err := writeLocalReport(&out, &sum, false); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, "queued (rate_wait_timeout)") || strings.Contains(got, "stopped before") {
		t.Errorf("not stopped, yet the reasons changed:\n%s", got)
	}
}
