package geoapi

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/photo/imageformat"
)

func TestPredictCoordinates(t *testing.T) {
	rec := newRecorder(t, respond(http.StatusOK, coordinatesBody))
	c, _ := rec.client(t)
	img := fakeJPEG(50_000)

	out, err := c.Predict(context.Background(), &PredictInput{Image: BytesSource(img)})
	if err != nil {
		t.Fatalf("Predict: %v", err)
	}
	reqs := rec.requests()
	if len(reqs) != 1 {
		t.Fatalf("server saw %d requests, want 1", len(reqs))
	}
	got := reqs[0]
	if got.Method != http.MethodPost || got.Path != "/v1/prediction/predict" {
		t.Errorf("request = %s %s", got.Method, got.Path)
	}
	if len(got.Query) != 0 {
		t.Errorf("query = %v, want none when TopN and ModelID are unset", got.Query)
	}
	if got.Key != testKey {
		t.Errorf("key header = %q", got.Key)
	}
	if got.Parts != 1 || got.FieldName != "file" || got.Filename != "image.jpg" || got.PartType != "image/jpeg" {
		t.Errorf("multipart: parts=%d field=%q filename=%q type=%q", got.Parts, got.FieldName, got.Filename, got.PartType)
	}
	if !bytes.Equal(got.File, img) {
		t.Errorf("server received %d bytes that differ from the %d byte image", len(got.File), len(img))
	}
	if got.Chunked || got.ContentLength <= int64(len(img)) {
		t.Errorf("Content-Length = %d chunked=%v; want an exact length for a known size", got.ContentLength, got.Chunked)
	}

	if out.PredictionID.String() != testPredictionID || out.ModelID != "geo-global-v2" ||
		out.CreditsConsumed != 1 || out.MessageCode != "success" || out.Attempts != 1 || out.RoundTrip <= 0 {
		t.Errorf("output = %+v", out)
	}
	r := out.Result
	if r.Type != ResultTypeCoordinates || len(r.Clusters) != 2 || r.ProcessingTimeMS != 412 || len(r.Raw) == 0 {
		t.Fatalf("result = %+v", r)
	}
	if c0 := r.Clusters[0]; c0.Center.Latitude != 48.8566 || c0.Location.Name != "Paris" ||
		c0.Location.CountryCode != "FR" || c0.RadiusKM != 12.5 {
		t.Errorf("first cluster = %+v", c0)
	}
	top, ok := r.Top()
	if !ok || top.Name != "Paris" || top.Admin1 != "Ile-de-France" || top.RadiusKM == nil || *top.RadiusKM != 12.5 ||
		top.Confidence != nil || top.Longitude != 2.3522 {
		t.Errorf("Top() = %+v, %v", top, ok)
	}
}

func TestPredictAccuracy(t *testing.T) {
	rec := newRecorder(t, respond(http.StatusOK, accuracyBody))
	c, _ := rec.client(t)
	out, err := c.Predict(context.Background(), &PredictInput{Image: BytesSource(fakePNG(4096)), ModelID: "geo-accuracy-eu-v1"})
	if err != nil {
		t.Fatalf("Predict: %v", err)
	}
	if got := rec.requests()[0]; got.Filename != "image.png" || got.PartType != "image/png" {
		t.Errorf("filename %q type %q, want image.png image/png", got.Filename, got.PartType)
	}
	r := out.Result
	if r.Type != ResultTypeAccuracy || len(r.Clusters) != 0 || len(r.Predictions) != 2 || r.TopPrediction == nil {
		t.Fatalf("result = %+v", r)
	}
	p := r.Predictions[0]
	if p.Rank != 1 || p.Confidence != 0.91 || p.Location.Admin2 != "New York County" || p.HeadingDeg == nil || *p.HeadingDeg != 270.5 {
		t.Errorf("first prediction = %+v", p)
	}
	if r.Predictions[1].HeadingDeg != nil {
		t.Errorf("absent heading_deg should be nil")
	}
	if out.CreditsConsumed != 3 {
		t.Errorf("credits = %d, want 3", out.CreditsConsumed)
	}
	top, ok := r.Top()
	if !ok || top.Name != "New York" || top.Confidence == nil || *top.Confidence != 0.91 || top.RadiusKM != nil {
		t.Errorf("Top() = %+v, %v", top, ok)
	}
	// Without top_prediction, Top falls back to the first prediction.
	r.TopPrediction = nil
	r.Predictions[0].Location.Name = "Manhattan"
	if top, ok := r.Top(); !ok || top.Name != "Manhattan" {
		t.Errorf("Top() without top_prediction = %+v, %v", top, ok)
	}
	if _, ok := (Result{Type: "vehicle"}).Top(); ok {
		t.Error("Top() of an empty result should report false")
	}
}

func TestPredictUnknownResultTypeKeepsRaw(t *testing.T) {
	body := `{"message_code":"success","data":{"prediction":{"result_type":"vehicle","plate":"AB-123","clusters":"not a list"},
"prediction_id":"` + testPredictionID + `","model_id":"geo-vehicle-v1","credits_consumed":2}}`
	rec := newRecorder(t, respond(http.StatusOK, body))
	c, _ := rec.client(t)
	out, err := c.Predict(context.Background(), &PredictInput{Image: BytesSource(fakeJPEG(100))})
	if err != nil {
		t.Fatalf("Predict: %v", err)
	}
	if out.Result.Type != "vehicle" || !strings.Contains(string(out.Result.Raw), `"plate":"AB-123"`) || out.CreditsConsumed != 2 {
		t.Errorf("result = %+v raw=%s", out.Result, out.Result.Raw)
	}
}

func TestPredictQueryParameters(t *testing.T) {
	tests := []struct {
		name  string
		in    PredictInput
		query map[string]string
	}{
		{"none", PredictInput{}, map[string]string{}},
		{"top_n only", PredictInput{TopN: 3}, map[string]string{"top_n": "3"}},
		{"model only", PredictInput{ModelID: "geo-global-v1"}, map[string]string{"model_id": "geo-global-v1"}},
		{"both at the bounds", PredictInput{TopN: 15, ModelID: "geo accuracy/eu"}, map[string]string{"top_n": "15", "model_id": "geo accuracy/eu"}},
		{"top_n lower bound", PredictInput{TopN: 1}, map[string]string{"top_n": "1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newRecorder(t, respond(http.StatusOK, coordinatesBody))
			c, _ := rec.client(t)
			in := tt.in
			in.Image = BytesSource(fakeJPEG(64))
			if _, err := c.Predict(context.Background(), &in); err != nil {
				t.Fatalf("Predict: %v", err)
			}
			got := rec.requests()[0].Query
			if len(got) != len(tt.query) {
				t.Fatalf("query = %v, want %v", got, tt.query)
			}
			for k, v := range tt.query {
				if len(got[k]) != 1 || got[k][0] != v {
					t.Errorf("query %s = %v, want %q", k, got[k], v)
				}
			}
		})
	}
}

func TestPredictOverrides(t *testing.T) {
	rec := newRecorder(t, respond(http.StatusOK, coordinatesBody))
	c, _ := rec.client(t)
	_, err := c.Predict(context.Background(), &PredictInput{
		APIKey: otherKey, Image: BytesSource(fakeJPEG(64)), Filename: `holiday "best".jpeg`, ContentType: "image/x-custom",
	})
	if err != nil {
		t.Fatalf("Predict: %v", err)
	}
	got := rec.requests()[0]
	if got.Key != otherKey || got.Filename != `holiday "best".jpeg` || got.PartType != "image/x-custom" {
		t.Errorf("key=%q filename=%q type=%q", got.Key, got.Filename, got.PartType)
	}
}

func TestPredictFileSource(t *testing.T) {
	img := fakePNG(200_000)
	path := filepath.Join(t.TempDir(), "photo.png")
	if err := os.WriteFile(path, img, 0o600); err != nil {
		t.Fatal(err)
	}
	rec := newRecorder(t, respond(http.StatusOK, coordinatesBody))
	c, _ := rec.client(t)
	if _, err := c.Predict(context.Background(), &PredictInput{Image: FileSource(path)}); err != nil {
		t.Fatalf("Predict: %v", err)
	}
	got := rec.requests()[0]
	if !bytes.Equal(got.File, img) || got.Chunked {
		t.Errorf("file mismatch (%d bytes) or chunked=%v; a file's size should give a Content-Length", len(got.File), got.Chunked)
	}

	_, err := c.Predict(context.Background(), &PredictInput{Image: FileSource(filepath.Join(t.TempDir(), "missing.jpg"))})
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v, want os.ErrNotExist", err)
	}
}

func TestPredictStreamsUnknownSize(t *testing.T) {
	rec := newRecorder(t, respond(http.StatusOK, coordinatesBody))
	c, _ := rec.client(t)
	src := &countingSource{data: fakeJPEG(70_000)}
	if _, err := c.Predict(context.Background(), &PredictInput{Image: src.open}); err != nil {
		t.Fatalf("Predict: %v", err)
	}
	got := rec.requests()[0]
	if !bytes.Equal(got.File, src.data) || !got.Chunked {
		t.Errorf("file equal=%v chunked=%v; unknown size should stream chunked", bytes.Equal(got.File, src.data), got.Chunked)
	}
	if n := src.opens.Load(); n != 1 {
		t.Errorf("source opened %d times, want 1", n)
	}
}

func TestPredictRejectsBeforeAnyCall(t *testing.T) {
	big := &countingSource{data: fakeJPEG(maxImage + 1)}
	tests := []struct {
		name     string
		key      string
		in       *PredictInput
		sentinel error
	}{
		{"missing key", "", &PredictInput{Image: BytesSource(fakeJPEG(64))}, ErrInvalidKey},
		{"key without geo_ prefix", "", &PredictInput{APIKey: "sk_test_fake_key_1", Image: BytesSource(fakeJPEG(64))}, ErrInvalidKey},
		{"bare prefix", "", &PredictInput{APIKey: "geo_", Image: BytesSource(fakeJPEG(64))}, ErrInvalidKey},
		{"key with newline", "", &PredictInput{APIKey: "geo_test_fake\nX-Evil: 1", Image: BytesSource(fakeJPEG(64))}, ErrInvalidKey},
		{"announced size too large", testKey, &PredictInput{Image: BytesSource(fakeJPEG(64)), Size: imageformat.DefaultMaxImageBytes + 1}, ErrImageTooLarge},
		{"byte slice one byte too large", testKey, &PredictInput{Image: BytesSource(big.data)}, ErrImageTooLarge},
		{"text file", testKey, &PredictInput{Image: BytesSource([]byte(strings.Repeat("just some text ", 10)))}, ErrNotImage},
		{"empty", testKey, &PredictInput{Image: BytesSource(nil)}, ErrNotImage},
		{"truncated header", testKey, &PredictInput{Image: BytesSource([]byte{0xFF, 0xD8, 0xFF, 0xE0})}, ErrNotImage},
		{"no source", testKey, &PredictInput{}, ErrNotImage},
		{"top_n 16", testKey, &PredictInput{Image: BytesSource(fakeJPEG(64)), TopN: 16}, ErrInvalidTopN},
		{"top_n negative", testKey, &PredictInput{Image: BytesSource(fakeJPEG(64)), TopN: -1}, ErrInvalidTopN},
		{"negative size", testKey, &PredictInput{Image: BytesSource(fakeJPEG(64)), Size: -5}, ErrInvalidInput},
		{"nil input", testKey, nil, ErrInvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newRecorder(t, respond(http.StatusOK, coordinatesBody))
			c, _ := rec.client(t, func(o *Options) { o.APIKey = tt.key })
			_, err := c.Predict(context.Background(), tt.in)
			if !errors.Is(err, tt.sentinel) {
				t.Fatalf("err = %v, want %v", err, tt.sentinel)
			}
			var ie *InputError
			if !errors.As(err, &ie) || ie.Field == "" || ie.Reason == "" {
				t.Errorf("err %#v is not a complete *InputError", err)
			}
			if n := len(rec.requests()); n != 0 {
				t.Errorf("server saw %d requests, want none", n)
			}
			if Attempts(err) != 0 {
				t.Errorf("Attempts(err) = %d, want 0", Attempts(err))
			}
			if tt.in != nil && strings.Contains(err.Error(), "fake") {
				t.Errorf("error %q contains the key", err)
			}
		})
	}
}

func TestPredictAllowsExactlyTheLimit(t *testing.T) {
	rec := newRecorder(t, respond(http.StatusOK, coordinatesBody))
	c, _ := rec.client(t)
	img := fakeJPEG(maxImage)
	if _, err := c.Predict(context.Background(), &PredictInput{Image: BytesSource(img), Size: int64(len(img))}); err != nil {
		t.Fatalf("Predict of exactly %d bytes: %v", len(img), err)
	}
	if got := rec.requests()[0]; len(got.File) != maxImage {
		t.Errorf("server received %d bytes", len(got.File))
	}
}

func TestPredictAbortsStreamPastLimit(t *testing.T) {
	rec := newRecorder(t, respond(http.StatusOK, coordinatesBody))
	c, sleeps := rec.client(t)
	src := &countingSource{data: fakeJPEG(maxImage + 1)}
	_, err := c.Predict(context.Background(), &PredictInput{Image: src.open})
	if !errors.Is(err, ErrImageTooLarge) {
		t.Fatalf("err = %v, want ErrImageTooLarge", err)
	}
	for _, r := range rec.requests() {
		if len(r.File) > maxImage {
			t.Errorf("server received a complete %d byte upload", len(r.File))
		}
	}
	if src.opens.Load() != 1 || len(sleeps.all()) != 0 {
		t.Errorf("opens=%d sleeps=%v: an oversize image must not be retried", src.opens.Load(), sleeps.all())
	}
}

func TestPredictSizeMismatchIsNotRetried(t *testing.T) {
	rec := newRecorder(t, respond(http.StatusOK, coordinatesBody))
	c, sleeps := rec.client(t)
	src := &countingSource{data: fakeJPEG(1000)}
	for _, size := range []int64{999, 2000} {
		_, err := c.Predict(context.Background(), &PredictInput{Image: src.open, Size: size})
		if !errors.Is(err, ErrSizeMismatch) {
			t.Errorf("Size %d: err = %v, want ErrSizeMismatch", size, err)
		}
	}
	if len(sleeps.all()) != 0 {
		t.Errorf("size mismatch was retried: %v", sleeps.all())
	}
}

func TestPredictDecodeErrors(t *testing.T) {
	tests := []struct {
		name string
		body string
	}{
		{"not json", `<html>gateway</html>`},
		{"no data", `{"message_code":"success"}`},
		{"no prediction", `{"message_code":"success","data":{"prediction_id":"` + testPredictionID + `"}}`},
		{"prediction id not a uuid", `{"message_code":"success","data":{"prediction":{"result_type":"coordinates","clusters":[]},"prediction_id":"pred-42"}}`},
		{"missing prediction id", `{"message_code":"success","data":{"prediction":{"result_type":"coordinates","clusters":[]}}}`},
		{"clusters of the wrong type", `{"data":{"prediction":{"result_type":"coordinates","clusters":{"a":1}},"prediction_id":"` + testPredictionID + `"}}`},
		{"missing credits_consumed: a paid call is never read as free", `{"message_code":"success","data":{"prediction":{"result_type":"coordinates","clusters":[]},"prediction_id":"` + testPredictionID + `","model_id":"geo-global-v2"}}`},
		{"null credits_consumed", `{"data":{"prediction":{"result_type":"coordinates"},"prediction_id":"` + testPredictionID + `","credits_consumed":null}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newRecorder(t, respond(http.StatusOK, tt.body))
			c, sleeps := rec.client(t)
			_, err := c.Predict(context.Background(), &PredictInput{Image: BytesSource(fakeJPEG(64))})
			var de *DecodeError
			if !errors.As(err, &de) || de.StatusCode != http.StatusOK || de.Body != tt.body || de.Operation != "Predict" {
				t.Fatalf("err = %#v, want *DecodeError keeping the body", err)
			}
			if Retryable(err) || len(rec.requests()) != 1 || len(sleeps.all()) != 0 {
				t.Errorf("a 2xx that cannot be decoded may be charged and must not be retried (requests=%d)", len(rec.requests()))
			}
		})
	}
}

func TestPredictOversizeSuccessBody(t *testing.T) {
	huge := `{"data":{"prediction":{"result_type":"coordinates","pad":"` + strings.Repeat("x", maxSuccessBody) + `"}}}`
	rec := newRecorder(t, respond(http.StatusOK, huge))
	c, _ := rec.client(t)
	_, err := c.Predict(context.Background(), &PredictInput{Image: BytesSource(fakeJPEG(64))})
	var de *DecodeError
	if !errors.As(err, &de) || len(de.Body) > maxErrorExcerpt {
		t.Fatalf("err = %v, want *DecodeError with a bounded excerpt", err)
	}
}

func TestPredictDefaultLimitIsTenMillionBytes(t *testing.T) {
	rec := newRecorder(t, respond(http.StatusOK, coordinatesBody))
	c, _ := rec.client(t)
	if got := c.Options().MaxImageBytes; got != 10_000_000 {
		t.Errorf("default MaxImageBytes = %d, want 10000000", got)
	}
	// 10 MiB is over the contract's 10 MB.
	_, err := c.Predict(context.Background(), &PredictInput{Image: BytesSource(fakeJPEG(10 << 20))})
	if !errors.Is(err, ErrImageTooLarge) || len(rec.requests()) != 0 {
		t.Errorf("10 MiB: err = %v after %d requests; want ErrImageTooLarge before any call", err, len(rec.requests()))
	}
	if !strings.Contains(err.Error(), "the service accepts at most 10,000,000 bytes") {
		t.Errorf("message %q should name the limit", err)
	}
}

func TestPredictMaxImageBytesOption(t *testing.T) {
	const limit = 1000
	tests := []struct {
		name string
		in   func() *PredictInput
		ok   bool
	}{
		{"exactly the limit", func() *PredictInput { return &PredictInput{Image: BytesSource(fakeJPEG(limit))} }, true},
		{"announced one byte over", func() *PredictInput {
			return &PredictInput{Image: BytesSource(fakeJPEG(64)), Size: limit + 1}
		}, false},
		{"byte slice one byte over", func() *PredictInput { return &PredictInput{Image: BytesSource(fakeJPEG(limit + 1))} }, false},
		{"stream of unknown size one byte over", func() *PredictInput {
			return &PredictInput{Image: (&countingSource{data: fakeJPEG(limit + 1)}).open}
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newRecorder(t, respond(http.StatusOK, coordinatesBody))
			c, _ := rec.client(t)
			_, err := c.Predict(context.Background(), tt.in(), func(o *Options) { o.MaxImageBytes = limit })
			if tt.ok {
				if err != nil {
					t.Fatalf("Predict: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrImageTooLarge) {
				t.Fatalf("err = %v, want ErrImageTooLarge", err)
			}
			for _, r := range rec.requests() {
				if len(r.File) > limit {
					t.Errorf("server received %d bytes, past the %d byte limit", len(r.File), limit)
				}
			}
		})
	}
}

// TestPredictPartContentType: the file part carries the photo's real type,
// or application/octet-stream; a type the service refuses is never sent.
func TestPredictPartContentType(t *testing.T) {
	heic := append([]byte("\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic"), make([]byte, 64)...)
	tests := []struct {
		name  string
		image []byte
		given string
		want  string
	}{
		{"jpeg detected", fakeJPEG(64), "", "image/jpeg"},
		{"png detected", fakePNG(64), "", "image/png"},
		{"heic detected", heic, "", "image/heic"},
		{"an image type given", fakeJPEG(64), "image/jpeg", "image/jpeg"},
		{"octet-stream given", fakeJPEG(64), "application/octet-stream", "application/octet-stream"},
		{"S3's default binary/octet-stream is replaced", fakeJPEG(64), "binary/octet-stream", "image/jpeg"},
		{"text/plain is replaced", fakePNG(64), "text/plain; charset=utf-8", "image/png"},
		{"a malformed type is replaced", fakeJPEG(64), "image/", "image/jpeg"},
		{"parameters are dropped", fakeJPEG(64), "image/jpeg; q=1", "image/jpeg"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newRecorder(t, respond(http.StatusOK, coordinatesBody))
			c, _ := rec.client(t)
			if _, err := c.Predict(context.Background(), &PredictInput{Image: BytesSource(tt.image), ContentType: tt.given}); err != nil {
				t.Fatalf("Predict: %v", err)
			}
			if got := rec.requests()[0].PartType; got != tt.want {
				t.Errorf("part Content-Type = %q, want %q", got, tt.want)
			}
		})
	}
}
