package ledger_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
)

// TestUnstorableResultIsRecordedReduced: a charged result DynamoDB Local
// refuses (the engine is the oracle: an item over 400 KB, a number beyond
// its range) is written again at once without its result, final, with its
// credits and prediction id; nothing is left in progress.
func TestUnstorableResultIsRecordedReduced(t *testing.T) {
	many := make([]ledger.Cluster, 4000)
	for i := range many {
		many[i] = ledger.Cluster{Latitude: 48.85, Longitude: 2.35, Name: strings.Repeat("Paris ", 20), RadiusKM: ptr(1)}
	}
	for name, result := range map[string]ledger.Record{
		"item over 400 KB":    {Place: strings.Repeat("x", 420<<10)},
		"4,000 clusters":      {Clusters: many},
		"number beyond 1e125": {Latitude: ptr(1), Longitude: ptr(2), RadiusKM: ptr(1e200)},
		"number below 1e-130": {Latitude: ptr(1), Longitude: ptr(2), Confidence: ptr(1e-200)},
	} {
		t.Run(name, func(t *testing.T) {
			s, _, _, _ := newStore(t)
			r := ref("big.jpg")
			c := mustClaim(t, s, r, ledger.ClaimAcquired)
			result.PredictionID, result.CreditsConsumed, result.ModelID = "6f1c2f2e-0000-4000-8000-000000000001", 3, "global-v3"
			result.ResultType, result.RawResult = "coordinates", `{"clusters":[...]}`
			err := s.Complete(context.Background(), c, result)
			if !errors.Is(err, ledger.ErrResultReduced) {
				t.Fatalf("Complete = %v, want ErrResultReduced", err)
			}
			got := mustLookup(t, s, r)
			if got.Status != ledger.StatusFailed || got.ErrorCode != ledger.ErrorCodeResultNotStorable ||
				!strings.Contains(got.ErrorMessage, "DynamoDB refused") {
				t.Errorf("record %s (%s: %s), want failed (%s)", got.Status, got.ErrorCode, got.ErrorMessage, ledger.ErrorCodeResultNotStorable)
			}
			if got.CreditsConsumed != 3 || got.PredictionID != result.PredictionID || got.ModelID != "global-v3" {
				t.Errorf("credits %d, prediction %q, model %q: the charge must be kept", got.CreditsConsumed, got.PredictionID, got.ModelID)
			}
			if got.Place != "" || got.Clusters != nil || got.RadiusKM != nil || got.Confidence != nil || got.RawResult != result.RawResult {
				t.Errorf("reduced record keeps the result: place %d bytes, %d clusters, radius %v, raw %q",
					len(got.Place), len(got.Clusters), got.RadiusKM, got.RawResult)
			}
			if got.EventType != "Photo Failed" {
				t.Errorf("event type %q", got.EventType)
			}
		})
	}
}

// TestFailChargedKeepsCredits: a charged answer the client could not use is
// final with its credits and raw body.
func TestFailChargedKeepsCredits(t *testing.T) {
	s, _, _, _ := newStore(t)
	r := ref("lat1000.jpg")
	c := mustClaim(t, s, r, ledger.ClaimAcquired)
	raw := `{"data":{"credits_consumed":2,"prediction":{"clusters":[{"center":{"latitude":1000}}]}}}`
	if err := s.FailCharged(context.Background(), c, "malformed_response", "latitude 1000", ledger.Record{
		CreditsConsumed: 2, RawResult: raw, Status: ledger.StatusSucceeded}); err != nil {
		t.Fatal(err)
	}
	got := mustLookup(t, s, r)
	if got.Status != ledger.StatusFailed || got.ErrorCode != "malformed_response" || got.CreditsConsumed != 2 || got.RawResult != raw {
		t.Errorf("record %s (%s), credits %d, raw %q; want failed (malformed_response), 2 credits, the raw body",
			got.Status, got.ErrorCode, got.CreditsConsumed, got.RawResult)
	}
	if got.EventType != "Photo Failed" {
		t.Errorf("event type %q", got.EventType)
	}
}
