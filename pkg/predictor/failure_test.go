package predictor

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
)

func TestClassifyFailure(t *testing.T) {
	api := func(status int) geoapi.APIError { return geoapi.APIError{StatusCode: status, Operation: "Predict"} }
	tests := []struct {
		name string
		err  error
		want failure
	}{
		{"401", &geoapi.UnauthorizedError{APIError: api(401)}, failure{code: CodeUnauthorized, retryable: true}},
		{"402 wrapped", fmt.Errorf("call: %w", &geoapi.OutOfCreditsError{APIError: api(402)}), failure{code: CodeOutOfCredits, retryable: true}},
		{"422 retired", &geoapi.ValidationError{APIError: api(422), RetiredModelID: "m1"}, failure{code: CodeModelRetired}},
		{"422 top_n", &geoapi.ValidationError{APIError: api(422)}, failure{code: CodeValidation}},
		{"429", &geoapi.RateLimitedError{APIError: api(429)}, failure{code: CodeRateLimited, retryable: true}},
		{"503", &geoapi.ServerError{APIError: api(503)}, failure{code: CodeServerError, retryable: true}},
		{"transport", &geoapi.TransportError{Operation: "Predict", Err: errors.New("connection reset")}, failure{code: CodeTransport, retryable: true}},
		{"transport after the upload was sent: maybe charged, final", &geoapi.TransportError{Operation: "Predict", Err: errors.New("EOF"), RequestSent: true}, failure{code: CodeOutcomeUnknown, maybeCharged: true}},
		{"deadline", context.DeadlineExceeded, failure{code: CodeTransport, retryable: true}},
		{"2xx unreadable: maybe charged, final", &geoapi.DecodeError{StatusCode: 200}, failure{code: CodeMalformedResponse, maybeCharged: true}},
		{"S3 read before upload", fmt.Errorf("open image: %w", &sourceError{err: errors.New("throttled")}), failure{code: CodeStorage, retryable: true}},
		{"bad key value", &geoapi.InputError{Field: "APIKey", Err: geoapi.ErrInvalidKey}, failure{code: CodeInvalidKey, retryable: true}},
		{"image grew too large", &geoapi.InputError{Field: "Image", Err: geoapi.ErrImageTooLarge}, failure{code: CodeInvalidInput}},
		{"415", &geoapi.APIError{StatusCode: 415}, failure{code: CodeRejectedByService}},
		{"403 deployment problem", &geoapi.APIError{StatusCode: 403}, failure{code: CodeRejectedByService, retryable: true}},
		{"rate wait", errors.Join(errRateWait, errors.New("would exceed deadline")), failure{code: CodeRateWait, retryable: true}},
		{"unknown", errors.New("something else"), failure{code: CodeUnexpected, retryable: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := classifyFailure(tt.err); got != tt.want {
				t.Errorf("classifyFailure = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestRetiredModel(t *testing.T) {
	named := &geoapi.ValidationError{APIError: geoapi.APIError{StatusCode: 422}, RetiredModelID: "geo-global-v1"}
	if !retiredModel(named, "geo-global-v1") || retiredModel(named, "other") {
		t.Error("retired model id not matched exactly")
	}
	// Whether the service said "retired" is the client's call
	// (RetiredModelID); a 422 without it is about something else.
	unnamed := &geoapi.ValidationError{APIError: geoapi.APIError{StatusCode: 422, MessageCode: "invalid_top_n", Message: "top_n for x"}}
	if retiredModel(unnamed, "x") || retiredModel(&geoapi.ValidationError{}, "x") || retiredModel(errors.New("x"), "x") {
		t.Error("a 422 that does not name a retired model was taken for a retirement")
	}
}

func TestUntilNextDay(t *testing.T) {
	if d := untilNextDay(time.Date(2026, 11, 22, 23, 0, 0, 0, time.UTC)); d != time.Hour {
		t.Errorf("23:00 -> %v, want 1h", d)
	}
	if d := untilNextDay(time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)); d != 12*time.Hour {
		t.Errorf("01:00 -> %v, want the 12h cap", d)
	}
}
