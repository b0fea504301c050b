package geoapi

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

// TestPredictCreditFigures: a paid answer whose credits_consumed cannot be
// a charge is still a success, its result kept, never retried; the figure
// is refused with its reason and kept as sent (bounded, without the key),
// and logged once with the field's name. Whole numbers from 0 to
// MaxCreditsConsumed are read as sent.
func TestPredictCreditFigures(t *testing.T) {
	long := `"` + strings.Repeat("9", 5000) + `"`
	for _, tc := range []struct {
		figure  string
		credits int
		invalid string
	}{
		{"2", 2, ""},
		{"3.0", 3, ""},
		{"0", 0, ""},
		{"-0", 0, ""},
		{"1000", 1000, ""},
		{"-1", 0, CreditsNegative},
		{"-0.5", 0, CreditsNegative},
		{"1.5", 0, CreditsFractional},
		{"1e-400", 0, CreditsFractional},
		{"1001", 0, CreditsTooLarge},
		{"1e308", 0, CreditsTooLarge},
		{"1e400", 0, CreditsTooLarge},
		{`"1"`, 0, CreditsNotANumber},
		{`"  42 "`, 0, CreditsNotANumber},
		{"true", 0, CreditsNotANumber},
		{`{"credits":1}`, 0, CreditsNotANumber},
		{`[1]`, 0, CreditsNotANumber},
		{`"` + testKey + `"`, 0, CreditsNotANumber},
		{long, 0, CreditsNotANumber},
	} {
		t.Run(tc.figure[:min(len(tc.figure), 20)], func(t *testing.T) {
			body := `{"message_code":"success","data":{"prediction":{"result_type":"coordinates","clusters":[{"center":{"latitude":48.85,"longitude":2.35},"location":{"name":"Paris"},"radius_km":3}]},` +
				`"prediction_id":"` + testPredictionID + `","model_id":"geo-global-v2","credits_consumed":` + tc.figure + `}}`
			rec := newRecorder(t, respond(http.StatusOK, body))
			var logs bytes.Buffer
			c, sleeps := rec.client(t, func(o *Options) { o.Logger = slog.New(slog.NewJSONHandler(&logs, nil)) })
			out, err := c.Predict(context.Background(), &PredictInput{Image: BytesSource(fakeJPEG(64))})
			if err != nil {
				t.Fatalf("Predict: %v", err)
			}
			if out.CreditsConsumed != tc.credits || out.CreditsInvalid != tc.invalid {
				t.Errorf("credits %d invalid %q, want %d %q", out.CreditsConsumed, out.CreditsInvalid, tc.credits, tc.invalid)
			}
			if top, ok := out.Result.Top(); !ok || top.Name != "Paris" {
				t.Errorf("result not kept: %+v", out.Result)
			}
			if len(rec.requests()) != 1 || len(sleeps.all()) != 0 {
				t.Errorf("%d requests: a paid answer is never sent again", len(rec.requests()))
			}
			lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
			refused := 0
			for _, line := range lines {
				if strings.Contains(line, testKey) {
					t.Errorf("the key reached a log line: %.200s", line)
				}
				var l map[string]any
				if json.Unmarshal([]byte(line), &l) == nil && l["field"] == "data.credits_consumed" {
					refused++
					if v, _ := l["value"].(string); len(v) > maxFigureExcerpt || v != out.CreditsReported {
						t.Errorf("logged value %q (%d bytes), reported %q", v, len(v), out.CreditsReported)
					}
				}
			}
			switch {
			case tc.invalid == "" && (refused != 0 || out.CreditsReported != ""):
				t.Errorf("a valid figure logged %d refusals, reported %q", refused, out.CreditsReported)
			case tc.invalid != "" && refused != 1:
				t.Errorf("%d log lines name the refused field, want 1:\n%s", refused, logs.String())
			case tc.invalid != "" && (out.CreditsReported == "" || len(out.CreditsReported) > maxFigureExcerpt || strings.Contains(out.CreditsReported, testKey)):
				t.Errorf("reported figure %q: want the figure as sent, at most %d bytes, without the key", out.CreditsReported, maxFigureExcerpt)
			}
		})
	}
}
