package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
)

// TestResultsShowWhereAnAnswerWasReusedFrom: a copy's row names the object
// whose call paid (by its key: the version is in --json), with 0 credits;
// a paid row shows "-" there.
func TestResultsShowWhereAnAnswerWasReusedFrom(t *testing.T) {
	lat, lon := 48.8566, 2.3522
	paid := &ledger.Record{Bucket: "b", Key: "a.jpg", Status: ledger.StatusSucceeded, Place: "Paris", CountryCode: "FR",
		Latitude: &lat, Longitude: &lon, CreditsConsumed: 1}
	copied := *paid
	copied.Key, copied.CreditsConsumed, copied.ReusedFrom = "albums/a copy.jpg", 0, "s3://b/a.jpg (v1)"
	var out bytes.Buffer
	if err := writeResultsTable(&out, []resultRow{rowFromRecord(paid), rowFromRecord(&copied)}, false); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "REUSED FROM") {
		t.Fatalf("table:\n%s", out.String())
	}
	if f := strings.Fields(lines[1]); !strings.Contains(lines[1], " 1  ") || f[len(f)-2] != "-" {
		t.Errorf("paid row: %q", lines[1])
	}
	if !strings.Contains(lines[2], " 0  ") || !strings.Contains(lines[2], "  a.jpg  ") || strings.Contains(lines[2], "(v1)") {
		t.Errorf("copy row: %q", lines[2])
	}
}
