package geoapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestErrorTypes(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		model  string
		check  func(t *testing.T, err error)
	}{
		{"401", http.StatusUnauthorized, `{"message_code":"unauthorized","message":"invalid API key"}`, "", func(t *testing.T, err error) {
			var e *UnauthorizedError
			if !errors.As(err, &e) || e.MessageCode != "unauthorized" || e.Message != "invalid API key" {
				t.Errorf("err = %#v", err)
			}
		}},
		{"402", http.StatusPaymentRequired, `{"message_code":"insufficient_credits","message":"no credits left"}`, "", func(t *testing.T, err error) {
			var e *OutOfCreditsError
			if !errors.As(err, &e) || e.MessageCode != "insufficient_credits" {
				t.Errorf("err = %#v", err)
			}
		}},
		{"422 retired model field", http.StatusUnprocessableEntity,
			`{"message_code":"model_retired","message":"model geo-global-v1 is retired","model_id":"geo-global-v1"}`, "geo-global-v1",
			func(t *testing.T, err error) {
				var e *ValidationError
				if !errors.As(err, &e) || e.RetiredModelID != "geo-global-v1" || e.MessageCode != "model_retired" {
					t.Errorf("err = %#v", err)
				}
			}},
		{"422 naming the model only in its message is not a retirement", http.StatusUnprocessableEntity,
			`{"detail":"Model 'geo-old-v0' has been retired"}`, "geo-old-v0",
			func(t *testing.T, err error) {
				var e *ValidationError
				if !errors.As(err, &e) || e.RetiredModelID != "" || e.Message != "Model 'geo-old-v0' has been retired" {
					t.Errorf("err = %#v", err)
				}
			}},
		{"422 fastapi model detail", http.StatusUnprocessableEntity,
			`{"detail":[{"loc":["query","model_id"],"msg":"unknown model","input":"geo-x"}]}`, "geo-x",
			func(t *testing.T, err error) {
				var e *ValidationError
				if !errors.As(err, &e) || e.RetiredModelID != "geo-x" || e.Message != "query.model_id: unknown model" {
					t.Errorf("err = %#v", err)
				}
			}},
		{"422 top_n", http.StatusUnprocessableEntity,
			`{"message_code":"validation_error","message":"top_n out of range","detail":[{"loc":["query","top_n"],"msg":"must be <= 15"}]}`, "",
			func(t *testing.T, err error) {
				var e *ValidationError
				if !errors.As(err, &e) || e.RetiredModelID != "" || e.MessageCode != "validation_error" {
					t.Errorf("err = %#v", err)
				}
			}},
		{"404 plain", http.StatusNotFound, `not found`, "", func(t *testing.T, err error) {
			var e *APIError
			if !errors.As(err, &e) || e.StatusCode != 404 || e.Body != "not found" || e.Operation != "Predict" {
				t.Errorf("err = %#v", err)
			}
			var v *ValidationError
			if errors.As(err, &v) {
				t.Errorf("404 must not be a ValidationError")
			}
			if !strings.Contains(err.Error(), `body "not found"`) {
				t.Errorf("message %q should quote an unparsed body", err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newRecorder(t, respond(tt.status, tt.body))
			c, sleeps := rec.client(t)
			_, err := c.Predict(context.Background(), &PredictInput{Image: BytesSource(fakeJPEG(64)), ModelID: tt.model})
			if err == nil {
				t.Fatal("Predict succeeded")
			}
			tt.check(t, err)
			var api *APIError
			if !errors.As(err, &api) || api.StatusCode != tt.status {
				t.Errorf("errors.As(*APIError) failed for %T", err)
			}
			if n := len(rec.requests()); n != 1 || len(sleeps.all()) != 0 || Retryable(err) {
				t.Errorf("status %d: %d requests, sleeps %v; must never be retried", tt.status, n, sleeps.all())
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") || !strings.Contains(msg, "Predict") || !strings.Contains(msg, "HTTP "+strconv.Itoa(tt.status)) {
				t.Errorf("message %q should be one line naming the operation and status", msg)
			}
		})
	}
}

func TestErrorMessageFormat(t *testing.T) {
	err := newAPIError("Predict", 422, nil,
		[]byte(`{"message_code":"model_retired","message":"model geo-global-v1\nis retired","model_id":"geo-global-v1"}`), testKey, "", time.Now())
	want := "geoapi: Predict: HTTP 422 model_retired: model geo-global-v1 is retired"
	if err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
}

func TestKeyNeverInErrors(t *testing.T) {
	// A careless server echoes the key in its error body, once raw and once
	// spelled with JSON escapes.
	echo := func(_ int, w http.ResponseWriter, r *http.Request) {
		k := r.Header.Get(KeyHeader)
		escaped := strings.ReplaceAll(k, "_", `\u005f`)
		writeBody(w, http.StatusUnauthorized, `{"message_code":"unauthorized","message":"key `+escaped+` is not valid","detail":"`+k+`"}`)
	}
	rec := newRecorder(t, echo)
	c, _ := rec.client(t)
	var errs []error
	_, err := c.Predict(context.Background(), &PredictInput{Image: BytesSource(fakeJPEG(64))})
	errs = append(errs, err)
	_, err = c.Models(context.Background(), nil)
	errs = append(errs, err)
	_, err = c.Credits(context.Background(), nil)
	errs = append(errs, err)
	for _, err := range errs {
		var e *UnauthorizedError
		if !errors.As(err, &e) {
			t.Fatalf("err = %v, want *UnauthorizedError", err)
		}
		for _, s := range []string{err.Error(), e.Message, e.Body} {
			if strings.Contains(s, testKey) {
				t.Errorf("key leaked into %q", s)
			}
		}
		if !strings.Contains(e.Message, "[REDACTED]") {
			t.Errorf("message %q should show where the key was removed", e.Message)
		}
	}
}

func TestParseErrorBody(t *testing.T) {
	tests := []struct {
		name string
		body string
		want errorBody
	}{
		{"contract style", `{"message_code":"unauthorized","message":"invalid API key"}`,
			errorBody{MessageCode: "unauthorized", Message: "invalid API key"}},
		{"detail string", `{"detail":"Not authenticated"}`, errorBody{Message: "Not authenticated"}},
		{"detail list", `{"detail":[{"loc":["query","top_n"],"msg":"too big"},{"loc":["body"],"msg":"bad"}]}`,
			errorBody{Message: "query.top_n: too big; body: bad"}},
		{"error string", `{"error":"rate limited"}`, errorBody{Message: "rate limited"}},
		{"error object", `{"error":{"code":"E42","message":"boom"}}`, errorBody{MessageCode: "E42", Message: "boom"}},
		{"model field", `{"message":"retired","model":"geo-a"}`, errorBody{Message: "retired", ModelID: "geo-a"}},
		{"retry_after", `{"message_code":"rate_limited","retry_after":1.5}`, errorBody{MessageCode: "rate_limited", Delay: 1.5, DelayFound: true}},
		{"retry_after string", `{"retry_after":"2"}`, errorBody{Delay: 2, DelayFound: true}},
		{"retry_after_ms", `{"retry_after_ms":250}`, errorBody{Delay: 0.25, DelayFound: true}},
		{"data.retry_after", `{"data":{"retry_after":3}}`, errorBody{Delay: 3, DelayFound: true}},
		{"negative retry", `{"retry_after":-3}`, errorBody{Delay: -3, DelayFound: true}},
		// The public backend's shapes: upper-case codes, details.
		{"backend 429", `{"message_code":"RATE_LIMIT_EXCEEDED","message":"Rate limit exceeded","details":{"limit":30,"window_seconds":60,"current_count":30,"retry_after":23,"rate_key":"rate_limit:prediction:api_key:k1","client_type":"api_key"}}`,
			errorBody{MessageCode: "RATE_LIMIT_EXCEEDED", Message: "Rate limit exceeded", Delay: 23, DelayFound: true}},
		{"backend 401 off predict", `{"message_code":"UNAUTHORIZED","message":"Authentication required","details":{"description":"API keys not allowed for this endpoint. Use frontend application."}}`,
			errorBody{MessageCode: "UNAUTHORIZED", Message: "Authentication required", Detail: "API keys not allowed for this endpoint. Use frontend application."}},
		{"backend 402", `{"message_code":"INSUFFICIENT_CREDITS","message":"Insufficient credits","details":{"credits_required":3,"available_credits":1}}`,
			errorBody{MessageCode: "INSUFFICIENT_CREDITS", Message: "Insufficient credits", CreditsRequired: intPtr(3), CreditsAvailable: intPtr(1)}},
		{"backend 402, other spelling", `{"message_code":"INSUFFICIENT_CREDITS","message":"Insufficient credits","details":{"required_credits":2}}`,
			errorBody{MessageCode: "INSUFFICIENT_CREDITS", Message: "Insufficient credits", CreditsRequired: intPtr(2)}},
		{"backend 400 size", `{"message_code":"FILE_TOO_LARGE","message":"File size too large","details":{}}`,
			errorBody{MessageCode: "FILE_TOO_LARGE", Message: "File size too large", SizeCode: true}},
		{"backend 400 type", `{"message_code":"INVALID_FILE_TYPE","message":"Invalid file type","details":{}}`,
			errorBody{MessageCode: "INVALID_FILE_TYPE", Message: "Invalid file type", FileTypeCode: true}},
		{"backend 422 at model_id", `{"message_code":"INVALID_INPUT","message":"Invalid input provided","details":{"description":"Request validation failed","validation_errors":[{"type":"enum","loc":["query","model_id"],"msg":"Input should be 'global_v0.1'","input":"global_v0.0"}]}}`,
			errorBody{MessageCode: "INVALID_INPUT", Message: "Invalid input provided", Detail: "Request validation failed: query.model_id: Input should be 'global_v0.1'",
				ModelID: "global_v0.0", DetailModel: true}},
		{"html", `<html><body>502 Bad Gateway</body></html>`, errorBody{}},
		{"array", `[1,2,3]`, errorBody{}},
		{"empty", ``, errorBody{}},
		{"wrong types", `{"message_code":5,"message":["a"],"detail":{"x":1}}`, errorBody{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseErrorBody([]byte(tt.body)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parseErrorBody() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestErrorBodyExcerptIsBounded(t *testing.T) {
	body := `{"message":"` + strings.Repeat("é", 5000) + `"}`
	err := newAPIError("Models", 500, nil, []byte(body), "", "", time.Now())
	var se *ServerError
	if !errors.As(err, &se) {
		t.Fatalf("err = %T", err)
	}
	if len(se.Body) > maxErrorExcerpt || !strings.HasPrefix(body, se.Body) {
		t.Errorf("excerpt of %d bytes is not a bounded prefix", len(se.Body))
	}
	if len(se.Message) > 600 {
		t.Errorf("message of %d bytes is not bounded", len(se.Message))
	}
}

func FuzzParseErrorBody(f *testing.F) {
	f.Add([]byte(`{"message_code":"rate_limited","retry_after":1.5}`))
	f.Add([]byte(`{"detail":[{"loc":["query","model_id"],"msg":"x","input":"geo-a"}]}`))
	f.Add([]byte(`{"error":{"code":1,"message":null}}`))
	f.Add([]byte(`{"retry_after_ms":1e308,"data":{"retry_after":"NaN"}}`))
	f.Add([]byte(`{"detail":[null,{"loc":[null,{}]}]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, body []byte) {
		parseErrorBody(body)
		err := newAPIError("Predict", 422, nil, body, testKey, "geo-a", time.Now())
		if msg := err.Error(); strings.Contains(msg, "\n") || strings.Contains(msg, testKey) {
			t.Fatalf("bad message %q", msg)
		}
		for _, status := range []int{429, 503} {
			err := newAPIError("Predict", status, nil, body, testKey, "geo-a", time.Now())
			if d := errorDelay(err); d < 0 || d > longestDelay {
				t.Fatalf("HTTP %d: delay %v out of range", status, d)
			}
		}
	})
}

func TestRetiredModelOnlyWhenTheServiceSaysSo(t *testing.T) {
	const requested = "geo-v2"
	tests := []struct {
		name string
		body string
		want string // RetiredModelID; "" for a 422 about something else
	}{
		{"top_n message naming the model", `{"message_code":"invalid_top_n","message":"top_n 0 is not allowed for model geo-v2"}`, ""},
		{"plain validation error naming the model", `{"message_code":"validation_error","message":"geo-v2: top_n must be 1 to 15","model_id":"geo-v2"}`, ""},
		{"detail message naming the model", `{"detail":"model geo-v2 is retired"}`, ""},
		{"model_retired without a model field", `{"message_code":"model_retired","message":"retired"}`, requested},
		{"model_retired naming another model", `{"message_code":"model_retired","model_id":"geo-v1"}`, "geo-v1"},
		{"code field", `{"code":"UNKNOWN_MODEL","message":"no such model"}`, requested},
		{"error.code", `{"error":{"code":"invalid_model_id","message":"bad"}}`, requested},
		{"code after message_code", `{"message_code":"error","code":"model_not_found"}`, requested},
		{"model_deprecated", `{"message_code":"model_deprecated"}`, requested},
		{"model_unavailable", `{"message_code":"model_unavailable"}`, requested},
		{"model_not_available (whitelist not granted)", `{"message_code":"model_not_available","model_id":"geo-v2"}`, requested},
		{"fastapi detail at model_id", `{"detail":[{"loc":["query","model_id"],"msg":"unknown","input":"geo-v2"}]}`, requested},
		{"backend validation error at model_id", `{"message_code":"INVALID_INPUT","message":"Invalid input provided","details":{"validation_errors":[{"loc":["query","model_id"],"msg":"Input should be 'global_v0.1'","input":"geo-v2"}]}}`, requested},
		{"backend validation error elsewhere", `{"message_code":"INVALID_INPUT","message":"Invalid input provided","details":{"validation_errors":[{"loc":["query","top_n"],"msg":"too big","input":"geo-v2"}]}}`, ""},
		{"retired_model field", `{"message_code":"validation_error","retired_model":"geo-v0"}`, "geo-v0"},
		{"retired_model_id field", `{"message":"gone","retired_model_id":"geo-v0"}`, "geo-v0"},
		{"model id without a retirement code", `{"message_code":"invalid_top_n","model_id":"geo-v2"}`, ""},
		{"code that is about something else", `{"message_code":"invalid_top_n"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := newAPIError("Predict", http.StatusUnprocessableEntity, nil, []byte(tt.body), testKey, requested, time.Now())
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("err = %#v, want *ValidationError", err)
			}
			if ve.RetiredModelID != tt.want {
				t.Errorf("RetiredModelID = %q, want %q", ve.RetiredModelID, tt.want)
			}
		})
	}
}

// TestUnsupportedFormatError: a refusal of the file's type is its own
// typed error, free and final, whatever status carries it.
func TestUnsupportedFormatError(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		want   bool
	}{
		{"400 INVALID_FILE_TYPE (the backend)", http.StatusBadRequest, `{"message_code":"INVALID_FILE_TYPE","message":"Invalid file type","details":{}}`, true},
		{"415", http.StatusUnsupportedMediaType, ``, true},
		{"422 unsupported_media_type", http.StatusUnprocessableEntity, `{"message_code":"unsupported_media_type"}`, true},
		{"400 FILE_TOO_LARGE", http.StatusBadRequest, `{"message_code":"FILE_TOO_LARGE"}`, false},
		{"422 top_n", http.StatusUnprocessableEntity, `{"message_code":"INVALID_INPUT"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newRecorder(t, respond(tt.status, tt.body))
			c, sleeps := rec.client(t)
			_, err := c.Predict(context.Background(), &PredictInput{Image: BytesSource(fakeJPEG(64))})
			var uf *UnsupportedFormatError
			if got := errors.As(err, &uf); got != tt.want {
				t.Fatalf("err = %#v; *UnsupportedFormatError %v, want %v", err, got, tt.want)
			}
			if tt.want && (Retryable(err) || MaybeCharged(err) || len(rec.requests()) != 1 || len(sleeps.all()) != 0) {
				t.Errorf("a type refusal is free and final: %d requests", len(rec.requests()))
			}
		})
	}
}

func TestTooLargeError(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		want   bool
	}{
		{"413 without a body", http.StatusRequestEntityTooLarge, ``, true},
		{"413 html", http.StatusRequestEntityTooLarge, `<html>413 Request Entity Too Large</html>`, true},
		{"422 code too_large", http.StatusUnprocessableEntity, `{"message_code":"file_too_large","message":"image exceeds 10 MB"}`, true},
		{"422 code naming the size", http.StatusUnprocessableEntity, `{"error":{"code":"IMAGE_SIZE_EXCEEDED"}}`, true},
		{"422 fastapi file size", http.StatusUnprocessableEntity, `{"detail":[{"loc":["body","file"],"msg":"File size exceeds the 10 MB limit"}]}`, true},
		{"422 fastapi file missing", http.StatusUnprocessableEntity, `{"detail":[{"loc":["body","file"],"msg":"Field required"}]}`, false},
		{"422 top_n", http.StatusUnprocessableEntity, `{"message_code":"invalid_top_n","message":"top_n too large"}`, false},
		// The public backend refuses the size with 400 FILE_TOO_LARGE.
		{"400 FILE_TOO_LARGE (the backend)", http.StatusBadRequest, `{"message_code":"FILE_TOO_LARGE","message":"File size too large","details":{}}`, true},
		{"400 about something else", http.StatusBadRequest, `{"message_code":"BAD_REQUEST","message":"Bad request"}`, false},
		{"400 INVALID_FILE_TYPE", http.StatusBadRequest, `{"message_code":"INVALID_FILE_TYPE","message":"Invalid file type","details":{}}`, false},
		{"500 naming the size", http.StatusInternalServerError, `{"message_code":"FILE_TOO_LARGE"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newRecorder(t, respond(tt.status, tt.body))
			c, sleeps := rec.client(t)
			_, err := c.Predict(context.Background(), &PredictInput{Image: BytesSource(fakeJPEG(64))})
			var tl *TooLargeError
			if got := errors.As(err, &tl); got != tt.want {
				t.Fatalf("err = %#v; *TooLargeError %v, want %v", err, got, tt.want)
			}
			if !tt.want {
				return
			}
			var api *APIError
			var ve *ValidationError
			if !errors.As(err, &api) || api.StatusCode != tt.status || errors.As(err, &ve) {
				t.Errorf("err = %#v: want the *APIError inside, and no *ValidationError", err)
			}
			if Retryable(err) || MaybeCharged(err) || len(rec.requests()) != 1 || len(sleeps.all()) != 0 {
				t.Errorf("a size refusal is free and final: %d requests", len(rec.requests()))
			}
		})
	}
}

// TestInputErrorSpeaksToPeople: the client's own refusals say what is
// wrong, with the figures involved and what to do, never the internal
// field names, and never the key; the fields programs use stay as they were.
func TestInputErrorSpeaksToPeople(t *testing.T) {
	streamed := func(n int) ImageSource { // a source of unknown size
		return func(context.Context) (io.ReadCloser, error) {
			return io.NopCloser(io.MultiReader(bytes.NewReader(fakeJPEG(64)), bytes.NewReader(make([]byte, n)))), nil
		}
	}
	tests := []struct {
		name     string
		key      string
		in       *PredictInput
		limit    int64
		sentinel error
		field    string
		want     string
		check    func(t *testing.T, e *InputError)
	}{
		{"key missing", "", &PredictInput{Image: BytesSource(fakeJPEG(64))}, 0, ErrInvalidKey, "APIKey",
			"geoapi: no API key was given (check GEO_API_KEY or the secret)", nil},
		{"key prefix", "abc_fake_key", &PredictInput{Image: BytesSource(fakeJPEG(64))}, 0, ErrInvalidKey, "APIKey",
			`geoapi: the API key does not start with "geo_" (check GEO_API_KEY or the secret)`, nil},
		{"key with a space", "geo_fake key", &PredictInput{Image: BytesSource(fakeJPEG(64))}, 0, ErrInvalidKey, "APIKey",
			"geoapi: the API key contains spaces, line breaks or non-ASCII characters (check GEO_API_KEY or the secret)", nil},
		{"empty", testKey, &PredictInput{Image: BytesSource(nil)}, 0, ErrNotImage, "Image",
			"geoapi: the image file is empty", nil},
		{"not an image", testKey, &PredictInput{Image: BytesSource([]byte("Dear diary"))}, 0, ErrNotImage, "Image",
			"geoapi: the file is not an image the service accepts (JPEG, PNG, WebP, HEIC/HEIF/AVIF, GIF, TIFF or BMP)", nil},
		{"too large", testKey, &PredictInput{Image: BytesSource(fakeJPEG(12_345_678))}, 0, ErrImageTooLarge, "Image",
			"geoapi: the image is 12,345,678 bytes; the service accepts at most 10,000,000 bytes",
			func(t *testing.T, e *InputError) {
				if e.Size != 12_345_678 || e.Limit != 10_000_000 || e.Sending {
					t.Errorf("Size %d Limit %d Sending %t", e.Size, e.Limit, e.Sending)
				}
			}},
		{"grew past the limit while sent", testKey, &PredictInput{Image: streamed(5000)}, 1000, ErrImageTooLarge, "Image",
			"geoapi: the image grew past 1,000 bytes while it was being sent; the service accepts at most 1,000 bytes",
			func(t *testing.T, e *InputError) {
				if !e.Sending || e.Limit != 1000 || e.Size <= 1000 {
					t.Errorf("Size %d Limit %d Sending %t", e.Size, e.Limit, e.Sending)
				}
			}},
		{"top_n", testKey, &PredictInput{Image: BytesSource(fakeJPEG(64)), TopN: 16}, 0, ErrInvalidTopN, "TopN",
			"geoapi: the number of locations asked for (top_n) is 16; it must be from 1 to 15",
			func(t *testing.T, e *InputError) {
				if e.TopN != 16 || e.Reason != "16 is outside 1 to 15" {
					t.Errorf("TopN %d Reason %q", e.TopN, e.Reason)
				}
			}},
		{"announced size wrong", testKey, &PredictInput{Image: BytesSource(fakeJPEG(64)), Size: 100}, 0, ErrSizeMismatch, "Size",
			"geoapi: the image changed while it was being read (64 bytes read, 100 announced); try again once the file is complete", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newRecorder(t, respond(http.StatusOK, coordinatesBody))
			c, _ := rec.client(t, func(o *Options) {
				o.APIKey = tt.key
				if tt.limit > 0 {
					o.MaxImageBytes = tt.limit
				}
			})
			_, err := c.Predict(context.Background(), tt.in)
			var e *InputError
			if !errors.As(err, &e) || !errors.Is(err, tt.sentinel) {
				t.Fatalf("err = %v, want an *InputError wrapping %v", err, tt.sentinel)
			}
			if e.Field != tt.field || e.Reason == "" {
				t.Errorf("Field %q Reason %q: want Field %q and a Reason for programs", e.Field, e.Reason, tt.field)
			}
			if e.Error() != tt.want {
				t.Errorf("text\n got %q\nwant %q", e.Error(), tt.want)
			}
			if strings.Contains(err.Error(), "fake") {
				t.Errorf("the key is in %q", err)
			}
			if tt.check != nil {
				tt.check(t, e)
			}
		})
	}
}

func TestGroupDigits(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 10_000_000: "10,000,000", 12_345_678: "12,345,678", -1234: "-1,234"} {
		if got := groupDigits(n); got != want {
			t.Errorf("groupDigits(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestUnauthorizedRefusal tells a key the service refuses from an endpoint
// that refuses every key, by the service's code and words.
func TestUnauthorizedRefusal(t *testing.T) {
	tests := []struct {
		name string
		body string
		want KeyRefusal
	}{
		{"backend: keys refused off predict", `{"message_code":"UNAUTHORIZED","message":"Authentication required","details":{"description":"API keys not allowed for this endpoint. Use frontend application."}}`, KeyNotAcceptedHere},
		{"backend: invalid key", `{"message_code":"INVALID_API_KEY","message":"Invalid or expired API key","details":{}}`, KeyInvalid},
		{"backend: no key", `{"message_code":"AUTH_REQUIRED","message":"Authentication required","details":{"description":"Provide either 'X-GeoInfer-Key' header or use the FE"}}`, KeyMissing},
		{"contract: a plain 401", `{"message_code":"unauthorized","message":"invalid API key"}`, KeyInvalid},
		{"no body", ``, KeyInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := newAPIError("Credits", http.StatusUnauthorized, nil, []byte(tt.body), testKey, "", time.Now())
			var ue *UnauthorizedError
			if !errors.As(err, &ue) {
				t.Fatalf("err = %#v", err)
			}
			if got := ue.Refusal(); got != tt.want {
				t.Errorf("Refusal() = %q, want %q", got, tt.want)
			}
			if KeyNotAccepted(fmt.Errorf("wrapped: %w", err)) != (tt.want == KeyNotAcceptedHere) {
				t.Errorf("KeyNotAccepted disagrees with Refusal")
			}
			if tt.want == KeyNotAcceptedHere && !strings.Contains(err.Error(), "not allowed for this endpoint") {
				t.Errorf("Error() = %q should carry the service's explanation", err)
			}
		})
	}
}
