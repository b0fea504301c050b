package geosim

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/simclock"
)

const testKey = "geo_test_fake_key_1"

// newTestServer starts a simulator whose demo key is testKey.
func newTestServer(t *testing.T, optFns ...func(*Config)) (*Server, string) {
	t.Helper()
	optFns = append([]func(*Config){func(c *Config) { c.DemoKey = testKey }}, optFns...)
	sim := New(optFns...)
	ts := httptest.NewServer(sim)
	t.Cleanup(ts.Close)
	return sim, ts.URL
}

// newFakeClock is a settable clock for the rate limiter and storms.
func newFakeClock() *simclock.Clock { return simclock.New(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)) }

// testJPEG encodes a small gradient whose pixels depend on seed, so
// different seeds give different files.
func testJPEG(t testing.TB, seed int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 32, 24))
	for y := range 24 {
		for x := range 32 {
			img.Set(x, y, color.RGBA{uint8(x*8 + seed), uint8(y * 10), uint8(seed * 37), 255})
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func testPNG(t testing.TB) []byte {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, 8, 8))
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// multipartBody builds a form with the file under field.
func multipartBody(t testing.TB, field string, file []byte) (io.Reader, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if field != "" {
		fw, err := mw.CreateFormFile(field, "photo.jpg")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fw.Write(file); err != nil {
			t.Fatal(err)
		}
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf, mw.FormDataContentType()
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("decode body %q: %v", r.body, err)
	}
	return m
}

// predict posts file as the multipart field "file".
func predict(t testing.TB, base, key string, query url.Values, file []byte) response {
	t.Helper()
	body, ct := multipartBody(t, "file", file)
	return send(t, http.MethodPost, base+PathPredict+"?"+query.Encode(), key, ct, body)
}

func send(t testing.TB, method, target, key, contentType string, body io.Reader) response {
	t.Helper()
	req, err := http.NewRequest(method, target, body)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set(KeyHeader, key)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

func get(t testing.TB, base, path, key string) response {
	t.Helper()
	return send(t, http.MethodGet, base+path, key, "", nil)
}

func decodeAny(t testing.TB, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decode %q: %v", b, err)
	}
	return v
}

// dig walks a decoded JSON value by object keys and array indexes.
func dig(t testing.TB, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch p := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("at %q: not an object: %v", p, v)
			}
			v = m[p]
		case int:
			a, ok := v.([]any)
			if !ok || p >= len(a) {
				t.Fatalf("at [%d]: not an array long enough: %v", p, v)
			}
			v = a[p]
		}
	}
	return v
}
