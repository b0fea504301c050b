package geoapi

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
)

// Tests that the client and the simulator agree on what is charged, what is
// a retired model and what is too large.

func TestSimGatewayErrorAfterChargeIsMaybeCharged(t *testing.T) {
	sim, c := newSim(t)
	before, _ := sim.Balance(geosim.DefaultOrg)
	sim.SetFaults(geosim.Faults{GatewayErrorAfterChargeRate: 1})
	_, err := c.Predict(context.Background(), &PredictInput{Image: BytesSource(fakeJPEG(2000))})
	var se *ServerError
	if !errors.As(err, &se) || (se.StatusCode != http.StatusBadGateway && se.StatusCode != http.StatusGatewayTimeout) {
		t.Fatalf("err = %#v, want *ServerError 502 or 504", err)
	}
	if !MaybeCharged(err) || Retryable(err) {
		t.Errorf("MaybeCharged = %v, Retryable = %v; want true, false", MaybeCharged(err), Retryable(err))
	}
	after, _ := sim.Balance(geosim.DefaultOrg)
	cost := geosim.TypeGlobal.Cost()
	if before.Available-after.Available != cost {
		t.Errorf("balance went from %d to %d, want it reduced by %d", before.Available, after.Available, cost)
	}
	calls := sim.Calls()
	if len(calls) != 1 || calls[0].Charged != cost || calls[0].Fault != geosim.FaultGatewayAfterCharge || calls[0].Status != se.StatusCode {
		t.Errorf("calls = %+v, want exactly one, charged %d", calls, cost)
	}
}

func TestSimServerErrorsFollowTheChargingRule(t *testing.T) {
	sim, c := newSim(t, geosim.WithSeed(3))
	sim.SetFaults(geosim.Faults{ServerErrorRate: 1})
	seen := map[int]bool{}
	for range 30 {
		_, err := c.Predict(context.Background(), &PredictInput{Image: BytesSource(fakeJPEG(2000))},
			func(o *Options) { o.MaxAttempts = 1 })
		var se *ServerError
		if !errors.As(err, &se) {
			t.Fatalf("err = %v, want *ServerError", err)
		}
		seen[se.StatusCode] = true
		switch se.StatusCode {
		case http.StatusInternalServerError:
			if MaybeCharged(err) {
				t.Errorf("500: %v; a 500 is free", err)
			}
		case http.StatusServiceUnavailable:
			if MaybeCharged(err) || se.RetryAfter <= 0 {
				t.Errorf("503: %v, RetryAfter %v; the simulator's 503 declines the work and says when to return", err, se.RetryAfter)
			}
		case http.StatusBadGateway:
			// The simulator charged nothing, but a client that sent the
			// whole upload cannot tell this 502 from one after a charge.
			if !MaybeCharged(err) {
				t.Errorf("502 after the upload: %v; want maybe charged", err)
			}
		default:
			t.Errorf("unexpected status %d", se.StatusCode)
		}
	}
	if len(seen) != 3 {
		t.Errorf("statuses %v, want 500, 502 and 503", seen)
	}
	if got := sim.Charged(geosim.DefaultOrg); got != 0 {
		t.Errorf("server error faults charged %d", got)
	}
}

func TestSimModelDownIsRetried(t *testing.T) {
	sim, c := newSim(t)
	if err := sim.SetModelStatus(geosim.ModelHighAccuracy, geosim.StatusDown); err != nil {
		t.Fatal(err)
	}
	_, err := c.Predict(context.Background(), &PredictInput{Image: BytesSource(fakeJPEG(2000)), ModelID: geosim.ModelHighAccuracy},
		func(o *Options) { o.MaxAttempts = 2 })
	var se *ServerError
	if !errors.As(err, &se) || se.StatusCode != http.StatusServiceUnavailable || MaybeCharged(err) || Attempts(err) != 2 {
		t.Errorf("err = %v after %d attempts; a down model refuses for free and is retried", err, Attempts(err))
	}
	if sim.Charged(geosim.DefaultOrg) != 0 {
		t.Error("a down model charged")
	}
}

func TestSimRetirementAgreesWithClient(t *testing.T) {
	sim, c := newSim(t)
	sim.AddAccount("acme", 100, 0)
	acmeKey := sim.IssueKey("acme", "ci")
	tests := []struct {
		name  string
		key   string
		model string
	}{
		{"retired", testKey, geosim.ModelRetired},
		{"unknown", testKey, "geo-made-up-v9"},
		{"whitelist model not granted", acmeKey, geosim.ModelPropertyWL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Predict(context.Background(), &PredictInput{APIKey: tt.key, Image: BytesSource(fakeJPEG(100)), ModelID: tt.model})
			var ve *ValidationError
			if !errors.As(err, &ve) || ve.RetiredModelID != tt.model {
				t.Errorf("err = %v, want a retirement of %s", err, tt.model)
			}
		})
	}

	// The client refuses a bad top_n itself, so the simulator's 422s that
	// are not about the model are fetched directly and classified.
	base := c.Options().BaseURL
	for _, tt := range []struct {
		name  string
		query url.Values
		field string
	}{
		{"top_n out of range", url.Values{"top_n": {"0"}, "model_id": {geosim.ModelGlobalDefault}}, "file"},
		{"no file", url.Values{"model_id": {geosim.ModelGlobalDefault}}, "image"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, body := rawPredict(t, base, tt.query, tt.field)
			if status != http.StatusUnprocessableEntity {
				t.Fatalf("status %d: %s", status, body)
			}
			err := newAPIError("Predict", status, nil, body, testKey, geosim.ModelGlobalDefault, time.Now())
			var ve *ValidationError
			if !errors.As(err, &ve) || ve.RetiredModelID != "" {
				t.Errorf("err = %#v from %s; want a *ValidationError that is not a retirement", err, body)
			}
		})
	}
}

func TestSimTooLargeIsTooLargeError(t *testing.T) {
	sim, c := newSim(t, func(cfg *geosim.Config) { cfg.MaxImageBytes = 1000 })
	_, err := c.Predict(context.Background(), &PredictInput{Image: BytesSource(fakeJPEG(5000))})
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.StatusCode != http.StatusBadRequest || tl.MessageCode != geosim.CodeTooLarge {
		t.Fatalf("err = %#v, want *TooLargeError 400 FILE_TOO_LARGE", err)
	}
	if Retryable(err) || sim.CallCount() != 1 || sim.Charged(geosim.DefaultOrg) != 0 {
		t.Errorf("calls %d, charged %d; want one free call", sim.CallCount(), sim.Charged(geosim.DefaultOrg))
	}
}

// rawPredict posts a small JPEG under field, bypassing the client's checks.
func rawPredict(t *testing.T, base string, query url.Values, field string) (int, []byte) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, err := mw.CreateFormFile(field, "photo.jpg")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = fw.Write(fakeJPEG(100))
	_ = mw.Close()
	req, err := http.NewRequest(http.MethodPost, base+"/v1/prediction/predict?"+query.Encode(), &buf)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(KeyHeader, testKey)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}
