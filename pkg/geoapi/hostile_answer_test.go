package geoapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// hostileBody is a charged coordinates answer with the given clusters.
func hostileBody(clusters string) string {
	return `{"message_code":"SUCCESS","data":{"prediction":{"result_type":"coordinates","clusters":[` + clusters +
		`]},"prediction_id":"` + testPredictionID + `","model_id":"global-v3","credits_consumed":2}}`
}

func cluster(lat, lon, radius float64, name string) string {
	return fmt.Sprintf(`{"center":{"latitude":%g,"longitude":%g},"location":{"name":%q,"country_code":"FR"},"radius_km":%g}`,
		lat, lon, name, radius)
}

// TestPredictRefusesImpossibleLocations: a 200 whose locations no map holds
// is a DecodeError (malformed, maybe charged) carrying the charge and the
// body, never a result.
func TestPredictRefusesImpossibleLocations(t *testing.T) {
	for name, body := range map[string]string{
		"latitude 1000":         hostileBody(cluster(1000, 4000, 1, "Nowhere")),
		"latitude 1e308":        hostileBody(cluster(1e308, 2, 1, "Nowhere")),
		"longitude -180.5":      hostileBody(cluster(1, -180.5, 1, "Nowhere")),
		"negative radius":       hostileBody(cluster(1, 2, -1, "Nowhere")),
		"second cluster":        hostileBody(cluster(1, 2, 1, "Paris") + "," + cluster(91, 2, 1, "Nowhere")),
		"negative confidence":   hostileBody(`{"center":{"latitude":1,"longitude":2},"radius_km":1,"confidence":-0.5}`),
		"point out of range":    hostileBody(`{"center":{"latitude":1,"longitude":2},"radius_km":1,"points":[{"latitude":-90.01,"longitude":0}]}`),
		"accuracy top latitude": `{"data":{"prediction":{"result_type":"accuracy","predictions":[],"top_prediction":{"latitude":-95,"longitude":0,"confidence":0.5}},"prediction_id":"` + testPredictionID + `","credits_consumed":2}}`,
		"accuracy confidence":   `{"data":{"prediction":{"result_type":"accuracy","predictions":[{"latitude":5,"longitude":0,"confidence":-1}]},"prediction_id":"` + testPredictionID + `","credits_consumed":2}}`,
	} {
		t.Run(name, func(t *testing.T) {
			rec := newRecorder(t, respond(http.StatusOK, body))
			c, _ := rec.client(t)
			out, err := c.Predict(context.Background(), &PredictInput{Image: BytesSource(fakeJPEG(1000))})
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("Predict = %+v, %v; want a DecodeError", out, err)
			}
			if de.CreditsConsumed == nil || *de.CreditsConsumed != 2 {
				t.Errorf("credits %v, want 2: the charge of the 200 must be kept", de.CreditsConsumed)
			}
			if de.Body != body || !MaybeCharged(err) {
				t.Errorf("body kept %d bytes of %d, maybe charged %v", len(de.Body), len(body), MaybeCharged(err))
			}
		})
	}
}

// TestPredictBoundsEveryStringAndList: the largest answers the client
// accepts come back with every string and list cut, and the cut marked;
// the raw result is kept whole (the ledger bounds it).
func TestPredictBoundsEveryStringAndList(t *testing.T) {
	forged := strings.Repeat("\n\"level\":\"ERROR\",\"msg\":\"forged\",", 96<<10/32)
	many := make([]string, 4000)
	for i := range many {
		many[i] = cluster(48.85, 2.35, 1, "Paris")
	}
	for name, tc := range map[string]struct {
		body string
		cut  string
	}{
		"420 KB place name": {hostileBody(cluster(1, 2, 3, strings.Repeat("P", 420<<10))), "clusters[0].location.name: 430080 bytes cut to 200"},
		"4,000 clusters":    {hostileBody(strings.Join(many, ",")), "clusters: 4000 items cut to 20"},
		"forged log fields": {hostileBody(cluster(1, 2, 3, forged)), "clusters[0].location.name: "},
		"long model id": {strings.Replace(hostileBody(cluster(1, 2, 3, "Paris")), `"global-v3"`,
			`"`+strings.Repeat("m", 10000)+`"`, 1), "model_id: 10000 bytes cut to 200"},
	} {
		t.Run(name, func(t *testing.T) {
			rec := newRecorder(t, respond(http.StatusOK, tc.body))
			c, _ := rec.client(t)
			out, err := c.Predict(context.Background(), &PredictInput{Image: BytesSource(fakeJPEG(1000))})
			if err != nil {
				t.Fatal(err)
			}
			r := out.Result
			if !strings.Contains(r.Truncated, tc.cut) {
				t.Errorf("Truncated = %q, want it to say %q", r.Truncated, tc.cut)
			}
			if len(out.ModelID) > MaxResultText || len(r.Clusters) > MaxResultItems {
				t.Errorf("model id %d bytes, %d clusters kept", len(out.ModelID), len(r.Clusters))
			}
			for _, c := range r.Clusters {
				if len(c.Location.Name) > MaxResultText {
					t.Errorf("name of %d bytes kept", len(c.Location.Name))
				}
			}
			if top, _ := r.Top(); len(top.Name) > MaxResultText || (len(tc.body) > 200_000 && len(r.Truncated) > 1000) {
				t.Errorf("top name %d bytes, cut note %d bytes", len(top.Name), len(r.Truncated))
			}
			if !strings.Contains(tc.body, string(r.Raw)) {
				t.Error("raw result not kept whole")
			}
		})
	}
}

// TestPredictKeepsAnswerWithinBounds: an ordinary answer is not marked.
func TestPredictKeepsAnswerWithinBounds(t *testing.T) {
	out, err := decodePredictBody([]byte(backendCoordinatesBody))
	if err != nil {
		t.Fatal(err)
	}
	if out.Result.Truncated != "" {
		t.Errorf("Truncated = %q for an ordinary answer", out.Result.Truncated)
	}
}

// TestPredictTrickledBodyEndsAtDeadline: a service that sends its 200's
// headers and then one byte at a time is cut off at the caller's deadline,
// as a DecodeError (a 2xx: maybe charged) that says why.
func TestPredictTrickledBodyEndsAtDeadline(t *testing.T) {
	rec := newRecorder(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		for i := 0; ; i++ {
			if _, err := w.Write([]byte(" ")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
	c, _ := rec.client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := c.Predict(ctx, &PredictInput{Image: BytesSource(fakeJPEG(1000))})
	var de *DecodeError
	if !errors.As(err, &de) || !errors.Is(err, context.DeadlineExceeded) || !MaybeCharged(err) {
		t.Fatalf("Predict = %v, want a DecodeError for the deadline, maybe charged", err)
	}
}

// TestPredictDeeplyNestedJSON: 1,000,000 nested arrays are an error
// (encoding/json stops at depth 10,000), not a crash.
func TestPredictDeeplyNestedJSON(t *testing.T) {
	const depth = 1_000_000
	body := hostileBody(`{"center":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}`)
	rec := newRecorder(t, respond(http.StatusOK, body))
	c, _ := rec.client(t)
	_, err := c.Predict(context.Background(), &PredictInput{Image: BytesSource(fakeJPEG(1000))})
	var de *DecodeError
	if !errors.As(err, &de) || len(de.Error()) > 4096 {
		t.Fatalf("Predict = %.300v, want a short DecodeError", err)
	}
}

// TestErrorBodyEchoingKeyRedacted: a 4xx or 5xx body that repeats the
// request's key keeps it out of the error's text and of its stored body.
func TestErrorBodyEchoingKeyRedacted(t *testing.T) {
	for _, status := range []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusUnprocessableEntity, http.StatusBadGateway} {
		rec := newRecorder(t, func(_ int, w http.ResponseWriter, r *http.Request) {
			key := r.Header.Get(KeyHeader)
			writeBody(w, status, `{"message_code":"bad","message":"key `+key+` refused","details":{"description":"`+key+`"}}`)
		})
		c, _ := rec.client(t, func(o *Options) { o.MaxAttempts = 1 })
		_, err := c.Predict(context.Background(), &PredictInput{Image: BytesSource(fakeJPEG(1000))})
		var api *APIError
		if err == nil || !errors.As(err, &api) {
			t.Fatalf("%d: %v, want an APIError", status, err)
		}
		if strings.Contains(err.Error(), testKey) || strings.Contains(api.Body, testKey) ||
			strings.Contains(api.Message, testKey) || strings.Contains(api.Detail, testKey) {
			t.Errorf("%d: the key is in the error: %v", status, err)
		}
	}
}
