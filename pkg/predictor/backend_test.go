package predictor

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
)

// TestBackendAnswersMapToRecords: each answer of the public backend ends in
// the record it means, refusals of the file final and free, the service's
// own 5xx uncharged and retried later, a 402 with what it asked for.
func TestBackendAnswersMapToRecords(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		body      string
		wantState string
		wantCode  string
		wantCalls int32
		detail    string // in the record's error message
	}{
		{"400 FILE_TOO_LARGE", http.StatusBadRequest, `{"message_code":"FILE_TOO_LARGE","message":"File size too large","details":{}}`,
			ledger.StatusRejected, ReasonTooLarge, 1, ""},
		{"400 INVALID_FILE_TYPE", http.StatusBadRequest, `{"message_code":"INVALID_FILE_TYPE","message":"Invalid file type","details":{}}`,
			ledger.StatusRejected, ReasonUnsupportedFormat, 1, ""},
		{"503 EXTERNAL_SERVICE_ERROR", http.StatusServiceUnavailable, `{"message_code":"EXTERNAL_SERVICE_ERROR","message":"External service error","details":{"description":"Prediction service temporarily unavailable"}}`,
			ledger.StatusWaiting, CodeServerError, 2, ""},
		{"500 PREDICTION_FAILED", http.StatusInternalServerError, `{"message_code":"PREDICTION_FAILED","message":"Prediction failed","details":{}}`,
			ledger.StatusWaiting, CodeServerError, 2, ""},
		{"402 with credits_required", http.StatusPaymentRequired, `{"message_code":"INSUFFICIENT_CREDITS","message":"Insufficient credits","details":{"credits_required":3,"available_credits":1}}`,
			ledger.StatusWaiting, CodeOutOfCredits, 1, "credits_required=3 credits_available=1"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t, nil)
			calls := e.frontService(tt.status, tt.body)
			u := e.put("backend.jpg", testJPEG(t, 400+i))
			e.invokeSQS(sqsBatch(uploadMessage("m1", u)))
			rec := e.record(u)
			if rec.Status != tt.wantState || rec.ErrorCode != tt.wantCode {
				t.Fatalf("record %s (%s): %s, want %s (%s)", rec.Status, rec.ErrorCode, rec.ErrorMessage, tt.wantState, tt.wantCode)
			}
			if calls.Load() != tt.wantCalls {
				t.Errorf("%d calls, want %d (the client's two attempts for a free 5xx, one otherwise)", calls.Load(), tt.wantCalls)
			}
			if tt.detail != "" && !strings.Contains(rec.ErrorMessage, tt.detail) {
				t.Errorf("error message %q does not record %q", rec.ErrorMessage, tt.detail)
			}
		})
	}
}

// TestBackendResultsAreStoredTypedAndRaw runs the predictor against the
// simulator's backend profile: vehicle and property results are recorded
// typed and raw, paid once each.
func TestBackendResultsAreStoredTypedAndRaw(t *testing.T) {
	for _, tt := range []struct {
		model string
		check func(t *testing.T, rec *ledger.Record)
	}{
		{geosim.ModelVehicle, func(t *testing.T, rec *ledger.Record) {
			if len(rec.Vehicles) == 0 || rec.Vehicles[0].Make == "" || rec.Vehicles[0].ConfidencePercent <= 1 || rec.CreditsConsumed != 2 {
				t.Errorf("vehicles %+v, credits %d", rec.Vehicles, rec.CreditsConsumed)
			}
		}},
		{geosim.ModelPropertyWL, func(t *testing.T, rec *ledger.Record) {
			if len(rec.Properties) == 0 || rec.Properties[0].Name == "" || rec.Properties[0].Latitude == nil || rec.CreditsConsumed != 3 {
				t.Errorf("properties %+v, credits %d", rec.Properties, rec.CreditsConsumed)
			}
		}},
	} {
		t.Run(tt.model, func(t *testing.T) {
			e := newTestEnv(t, func(c *Config) { c.ModelID = tt.model },
				geosim.WithProfile(geosim.ProfileBackend), geosim.WithKeyHeader(geosim.KeyHeader))
			u := e.put("match.jpg", testJPEG(t, 420))
			e.invokeSQS(sqsBatch(uploadMessage("m1", u)))
			rec := e.record(u)
			if rec.Status != ledger.StatusSucceeded || rec.Latitude != nil || rec.Place != "" {
				t.Fatalf("record %+v: want succeeded without a flattened location", rec)
			}
			var raw map[string]any
			if err := json.Unmarshal([]byte(rec.RawResult), &raw); err != nil || raw["predictions"] == nil {
				t.Errorf("raw result %q not kept: %v", rec.RawResult, err)
			}
			tt.check(t, rec)
			if n := len(e.predictCalls()); n != 1 {
				t.Errorf("%d calls, want 1", n)
			}
		})
	}
}

// TestBackendRetiredModelFallsBack: the backend refuses a retired model_id
// with its validation error at model_id, which is a retirement.
func TestBackendRetiredModelFallsBack(t *testing.T) {
	e := newTestEnv(t, func(c *Config) { c.ModelID = geosim.ModelRetired },
		geosim.WithProfile(geosim.ProfileBackend), geosim.WithKeyHeader(geosim.KeyHeader))
	u := e.put("retired.jpg", testJPEG(t, 421))
	e.invokeSQS(sqsBatch(uploadMessage("m1", u)))
	rec := e.record(u)
	if rec.Status != ledger.StatusSucceeded || !rec.Fallback || rec.ModelID != geosim.ModelGlobalDefault {
		t.Fatalf("record %+v: want the default model after the backend's 422 at model_id", rec)
	}
	calls := e.predictCalls()
	if len(calls) != 2 || calls[0].ModelRequested != geosim.ModelRetired || calls[1].ModelRequested != "" {
		t.Errorf("calls %+v", calls)
	}
}
