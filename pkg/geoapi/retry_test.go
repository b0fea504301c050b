package geoapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// failThenSucceed answers the first n requests with fail, then succeeds.
func failThenSucceed(n int, fail func(w http.ResponseWriter, r *http.Request)) func(int, http.ResponseWriter, *http.Request) {
	return func(i int, w http.ResponseWriter, r *http.Request) {
		if i <= n {
			fail(w, r)
			return
		}
		writeBody(w, http.StatusOK, coordinatesBody)
	}
}

func TestRetryRateLimitedDelaySources(t *testing.T) {
	tests := []struct {
		name   string
		header map[string]string
		body   string
		want   time.Duration
	}{
		{"Retry-After seconds", map[string]string{"Retry-After": "2"}, `{"message_code":"rate_limited"}`, 2 * time.Second},
		{"Retry-After date", map[string]string{"Retry-After": time.Now().Add(30 * time.Second).UTC().Format(http.TimeFormat)}, `{}`, 28 * time.Second},
		{"X-RateLimit-Retry-After", map[string]string{"X-RateLimit-Retry-After": "1.5"}, `{}`, 1500 * time.Millisecond},
		{"body retry_after", nil, `{"message_code":"rate_limited","retry_after":1.5}`, 1500 * time.Millisecond},
		{"body retry_after_ms", nil, `{"retry_after_ms":1200}`, 1200 * time.Millisecond},
		{"body data.retry_after", nil, `{"data":{"retry_after":3}}`, 3 * time.Second},
		{"simulator style, the precise X-RateLimit-Retry-After wins over the rounded Retry-After", map[string]string{"Retry-After": "2", "X-RateLimit-Retry-After": "1.5"},
			`{"message_code":"rate_limited","retry_after":1.5}`, 1500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &countingSource{data: fakeJPEG(30_000)}
			rec := newRecorder(t, failThenSucceed(1, func(w http.ResponseWriter, _ *http.Request) {
				for k, v := range tt.header {
					w.Header().Set(k, v)
				}
				writeBody(w, http.StatusTooManyRequests, tt.body)
			}))
			// Backoff alone would wait at most 1ms, so any longer wait is the server's.
			c, sleeps := rec.client(t, func(o *Options) { o.BaseBackoff, o.MaxBackoff = time.Millisecond, time.Millisecond })
			out, err := c.Predict(context.Background(), &PredictInput{Image: src.open})
			if err != nil {
				t.Fatalf("Predict: %v", err)
			}
			waits := sleeps.all()
			if len(waits) != 1 || waits[0] < tt.want || waits[0] > tt.want+3*time.Second {
				t.Errorf("waits = %v, want one wait of at least %v", waits, tt.want)
			}
			if out.Attempts != 2 || src.opens.Load() != 2 {
				t.Errorf("attempts = %d, opens = %d; want 2 and 2 (each retry reopens the source)", out.Attempts, src.opens.Load())
			}
			for i, r := range rec.requests() {
				if !bytes.Equal(r.File, src.data) {
					t.Errorf("attempt %d uploaded %d bytes, want the whole image", i+1, len(r.File))
				}
			}
		})
	}
}

func TestRateLimitedErrorCarriesDelay(t *testing.T) {
	rec := newRecorder(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "7")
		writeBody(w, http.StatusTooManyRequests, `{"message_code":"rate_limited"}`)
	})
	c, _ := rec.client(t, func(o *Options) { o.MaxAttempts = 1 })
	_, err := c.Credits(context.Background(), nil)
	var rl *RateLimitedError
	if !errors.As(err, &rl) || rl.RetryAfter != 7*time.Second || !Retryable(err) {
		t.Fatalf("err = %#v", err)
	}
	if !strings.Contains(err.Error(), "retry after 7s") || len(rec.requests()) != 1 {
		t.Errorf("message %q, requests %d", err, len(rec.requests()))
	}
}

func TestRetryServerErrorThenSuccess(t *testing.T) {
	// A 500 is free (see MaybeCharged) and so retried.
	rec := newRecorder(t, failThenSucceed(2, func(w http.ResponseWriter, _ *http.Request) {
		writeBody(w, http.StatusInternalServerError, `{"message_code":"internal_error","message":"try later"}`)
	}))
	c, sleeps := rec.client(t, func(o *Options) { o.BaseBackoff, o.MaxBackoff = 100*time.Millisecond, 150*time.Millisecond })
	out, err := c.Predict(context.Background(), &PredictInput{Image: BytesSource(fakeJPEG(1000))})
	if err != nil {
		t.Fatalf("Predict: %v", err)
	}
	if out.Attempts != 3 || len(rec.requests()) != 3 {
		t.Errorf("attempts = %d, requests = %d; want 3", out.Attempts, len(rec.requests()))
	}
	waits := sleeps.all()
	if len(waits) != 2 || waits[0] > 100*time.Millisecond || waits[1] > 150*time.Millisecond {
		t.Errorf("waits = %v; want 2 jittered waits capped at 100ms then 150ms", waits)
	}
}

func TestRetryExhaustedReturnsLastTypedError(t *testing.T) {
	// Models is free, so even a 502 is retried there.
	rec := newRecorder(t, respond(http.StatusBadGateway, `{"message_code":"bad_gateway","message":"upstream"}`))
	c, sleeps := rec.client(t, func(o *Options) { o.MaxAttempts = 3 })
	_, err := c.Models(context.Background(), nil)
	var se *ServerError
	if !errors.As(err, &se) || se.StatusCode != http.StatusBadGateway || se.MessageCode != "bad_gateway" {
		t.Fatalf("err = %#v, want *ServerError", err)
	}
	if len(rec.requests()) != 3 || len(sleeps.all()) != 2 || Attempts(err) != 3 {
		t.Errorf("requests = %d, sleeps = %d, Attempts = %d; want 3, 2, 3", len(rec.requests()), len(sleeps.all()), Attempts(err))
	}
	if !strings.Contains(err.Error(), "after 3 attempts") || !strings.Contains(err.Error(), "HTTP 502 bad_gateway: upstream") ||
		strings.Contains(err.Error(), "charged") {
		t.Errorf("message = %q", err)
	}
}

func TestMaxAttemptsOneDisablesRetries(t *testing.T) {
	rec := newRecorder(t, respond(http.StatusInternalServerError, `{}`))
	c, sleeps := rec.client(t, func(o *Options) { o.MaxAttempts = 1 })
	_, err := c.Models(context.Background(), nil)
	var se *ServerError
	if !errors.As(err, &se) || len(rec.requests()) != 1 || len(sleeps.all()) != 0 {
		t.Errorf("err = %v, requests = %d; want one request", err, len(rec.requests()))
	}
}

func TestDroppedConnectionAfterFullUploadIsNotRetried(t *testing.T) {
	// The whole request reached the service before the connection dropped:
	// it may have been charged, so a retry could pay twice.
	rec := newRecorder(t, failThenSucceed(1, func(w http.ResponseWriter, _ *http.Request) { dropConnection(t, w) }))
	c, sleeps := rec.client(t)
	src := &countingSource{data: fakeJPEG(20_000)}
	_, err := c.Predict(context.Background(), &PredictInput{Image: src.open})
	var te *TransportError
	if !errors.As(err, &te) || !te.RequestSent || Retryable(err) {
		t.Fatalf("err = %#v, want a non-retryable *TransportError with RequestSent", err)
	}
	if len(rec.requests()) != 1 || src.opens.Load() != 1 || len(sleeps.all()) != 0 {
		t.Errorf("requests = %d, opens = %d, sleeps = %d; want 1, 1, 0", len(rec.requests()), src.opens.Load(), len(sleeps.all()))
	}
	if !strings.Contains(err.Error(), "outcome unknown") {
		t.Errorf("message = %q", err)
	}
}

func TestDroppedConnectionOnFreeCallIsRetried(t *testing.T) {
	rec := newRecorder(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 1 {
			dropConnection(t, w)
			return
		}
		writeBody(w, http.StatusOK, `{"data":{"models":[{"id":"geo-global-v2","status":"ready"}]}}`)
	})
	c, _ := rec.client(t)
	out, err := c.Models(context.Background(), nil)
	if err != nil {
		t.Fatalf("Models: %v", err)
	}
	if out.Attempts != 2 {
		t.Errorf("attempts = %d, want 2", out.Attempts)
	}
}

func TestRetryConnectionRefused(t *testing.T) {
	rec := newRecorder(t, respond(http.StatusOK, coordinatesBody))
	url := rec.srv.URL
	rec.srv.Close() // nothing listens there any more
	c, err := New(url, func(o *Options) {
		o.APIKey = testKey
		o.MaxAttempts = 2
		o.Sleep = (&sleepLog{}).sleep
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Credits(context.Background(), nil)
	var te *TransportError
	if !errors.As(err, &te) || !Retryable(err) || Attempts(err) != 2 {
		t.Errorf("err = %v, want a *TransportError after 2 attempts", err)
	}
}

func TestPerAttemptTimeout(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	rec := newRecorder(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 || n == 3 { // the first attempt of each call
			select { // hang until the client gives up on this attempt
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		writeBody(w, http.StatusOK, `{"data":{"models":[{"id":"geo-global-v2","status":"ready"}]}}`)
	})
	c, _ := rec.client(t, func(o *Options) { o.AttemptTimeout = 100 * time.Millisecond })

	// A free call is simply tried again.
	out, err := c.Models(context.Background(), nil)
	if err != nil {
		t.Fatalf("Models: %v", err)
	}
	if out.Attempts != 2 {
		t.Errorf("attempts = %d, want 2", out.Attempts)
	}

	// A sent upload that timed out may still be processed and charged.
	_, err = c.Predict(context.Background(), &PredictInput{Image: BytesSource(fakeJPEG(100))})
	var te *TransportError
	if !errors.As(err, &te) || !te.RequestSent || Retryable(err) {
		t.Errorf("Predict err = %v, want an unretried *TransportError with RequestSent", err)
	}
}

func TestDeadlineShorterThanRetryAfterDoesNotSleep(t *testing.T) {
	rec := newRecorder(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "30")
		writeBody(w, http.StatusTooManyRequests, `{"message_code":"rate_limited"}`)
	})
	c, sleeps := rec.client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	_, err := c.Predict(ctx, &PredictInput{Image: BytesSource(fakeJPEG(100))})
	var rl *RateLimitedError
	if !errors.As(err, &rl) || rl.RetryAfter != 30*time.Second {
		t.Fatalf("err = %v, want *RateLimitedError", err)
	}
	if len(sleeps.all()) != 0 || len(rec.requests()) != 1 || time.Since(start) > time.Second {
		t.Errorf("sleeps = %v, requests = %d, took %v; want an immediate return", sleeps.all(), len(rec.requests()), time.Since(start))
	}
}

func TestCancelledContextStopsRetrying(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	rec := newRecorder(t, respond(http.StatusInternalServerError, `{"message_code":"internal_error"}`))
	// The caller gives up while the client waits to retry.
	c, _ := rec.client(t, func(o *Options) {
		o.Sleep = func(ctx context.Context, _ time.Duration) error { cancel(); return ctx.Err() }
	})
	_, err := c.Predict(ctx, &PredictInput{Image: BytesSource(fakeJPEG(100))})
	if !errors.Is(err, context.Canceled) || len(rec.requests()) != 1 {
		t.Errorf("err = %v, requests = %d; want context.Canceled after one request", err, len(rec.requests()))
	}
	var se *ServerError
	if !errors.As(err, &se) {
		t.Errorf("the last typed error should still be reachable: %v", err)
	}

	// Cancelled before the call: no request at all succeeds, none is retried.
	rec2 := newRecorder(t, respond(http.StatusOK, coordinatesBody))
	c2, sleeps := rec2.client(t)
	_, err = c2.Predict(ctx, &PredictInput{Image: BytesSource(fakeJPEG(100))})
	if !errors.Is(err, context.Canceled) || len(sleeps.all()) != 0 {
		t.Errorf("err = %v, sleeps = %v; want context.Canceled without retries", err, sleeps.all())
	}
}

func TestBackoffIsCappedExponentialWithFullJitter(t *testing.T) {
	o := Options{BaseBackoff: 250 * time.Millisecond, MaxBackoff: 2 * time.Second, jitter: func(d time.Duration) time.Duration { return d }}
	want := []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 2 * time.Second}
	for i, w := range want {
		if got := backoff(&o, i+2, 0); got != w {
			t.Errorf("ceiling before attempt %d = %v, want %v", i+2, got, w)
		}
	}
	if got := backoff(&o, 80, 0); got != 2*time.Second {
		t.Errorf("large attempt numbers must not overflow: %v", got)
	}
	if got := backoff(&o, 2, 5*time.Second); got != 5*time.Second {
		t.Errorf("server delay not honoured: %v", got)
	}
	for range 200 {
		if d := fullJitter(time.Second); d < 0 || d > time.Second {
			t.Fatalf("fullJitter = %v outside [0, 1s]", d)
		}
	}
}

func TestServerDelayForms(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	body := func(delay float64) errorBody { return errorBody{Delay: delay, DelayFound: true} }
	tests := []struct {
		name   string
		header http.Header
		body   errorBody
		want   time.Duration
		source string
	}{
		{"Retry-After seconds", http.Header{"Retry-After": {"3"}}, errorBody{}, 3 * time.Second, delayRetryAfter},
		{"Retry-After date", http.Header{"Retry-After": {now.Add(10 * time.Second).Format(http.TimeFormat)}}, errorBody{}, 10 * time.Second, delayRetryAfter},
		{"Retry-After date in the past", http.Header{"Retry-After": {now.Add(-time.Minute).Format(http.TimeFormat)}}, errorBody{}, 0, delayRetryAfter},
		{"garbage falls through", http.Header{"Retry-After": {"soon"}, "X-Ratelimit-Retry-After": {"0.25"}}, errorBody{}, 250 * time.Millisecond, delayRateLimitRetryAfter},
		{"X-RateLimit-Retry-After seconds (the backend)", http.Header{"X-Ratelimit-Retry-After": {"23"}, "X-Ratelimit-Reset": {"23"}}, body(23), 23 * time.Second, delayRateLimitRetryAfter},
		{"X-RateLimit-Retry-After as a Unix time", http.Header{"X-Ratelimit-Retry-After": {"1767323050"}}, errorBody{}, 5 * time.Second, delayRateLimitRetryAfter},
		{"body retry_after", http.Header{}, body(1.5), 1500 * time.Millisecond, delayBody},
		{"header wins over body", http.Header{"Retry-After": {"2"}}, body(9), 2 * time.Second, delayRetryAfter},
		{"X-RateLimit-Reset seconds", http.Header{"X-Ratelimit-Reset": {"40"}}, errorBody{}, 40 * time.Second, delayRateLimitReset},
		{"X-RateLimit-Reset as a Unix time", http.Header{"X-Ratelimit-Reset": {"1767323065"}}, errorBody{}, 20 * time.Second, delayRateLimitReset},
		{"a date centuries ahead stays representable", http.Header{"Retry-After": {"Fri, 31 Dec 9999 23:59:59 GMT"}}, errorBody{}, longestDelay, delayRetryAfter},
		{"a huge number of seconds", http.Header{"X-Ratelimit-Retry-After": {"1e300"}}, errorBody{}, longestDelay, delayRateLimitRetryAfter},
		{"NaN is no delay", http.Header{"X-Ratelimit-Retry-After": {"NaN"}}, errorBody{}, 0, ""},
		{"none", http.Header{}, errorBody{}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, source, found := serverDelay(tt.header, tt.body, now)
			if got != tt.want || source != tt.source || found != (tt.source != "") {
				t.Errorf("serverDelay() = %v, %q, %v; want %v, %q", got, source, found, tt.want, tt.source)
			}
		})
	}
}

// TestEveryDelayFormIsCapped answers 429 and 503 asking for a year in each
// form a server may use: the client waits at most MaxServerDelay (default 5
// minutes), a caller pacing on the error sees the cap, the request is kept,
// and each capped delay is logged.
func TestEveryDelayFormIsCapped(t *testing.T) {
	year := 365 * 24 * time.Hour
	inAYear := time.Now().Add(year)
	forms := []struct {
		name string
		set  func(w http.ResponseWriter) string // sets the delay, returns the body
	}{
		{"Retry-After seconds", func(w http.ResponseWriter) string {
			w.Header().Set("Retry-After", strconv.Itoa(int(year.Seconds())))
			return `{}`
		}},
		{"Retry-After HTTP date", func(w http.ResponseWriter) string {
			w.Header().Set("Retry-After", inAYear.UTC().Format(http.TimeFormat))
			return `{}`
		}},
		{"X-RateLimit-Retry-After seconds", func(w http.ResponseWriter) string {
			w.Header().Set("X-RateLimit-Retry-After", strconv.Itoa(int(year.Seconds())))
			return `{}`
		}},
		{"X-RateLimit-Retry-After Unix time", func(w http.ResponseWriter) string {
			w.Header().Set("X-RateLimit-Retry-After", strconv.FormatInt(inAYear.Unix(), 10))
			return `{}`
		}},
		{"body retry_after", func(http.ResponseWriter) string { return fmt.Sprintf(`{"retry_after":%d}`, int(year.Seconds())) }},
		{"body details.retry_after", func(http.ResponseWriter) string {
			return fmt.Sprintf(`{"message_code":"RATE_LIMIT_EXCEEDED","details":{"retry_after":%d}}`, int(year.Seconds()))
		}},
	}
	for _, status := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		for _, f := range forms {
			t.Run(fmt.Sprintf("%d %s", status, f.name), func(t *testing.T) {
				rec := newRecorder(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
					writeBody(w, status, f.set(w))
				})
				var logs bytes.Buffer
				var paced []time.Duration
				c, sleeps := rec.client(t, func(o *Options) {
					o.MaxAttempts = 2
					o.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
					o.OnRateLimited = func(_ context.Context, e *RateLimitedError) { paced = append(paced, e.RetryAfter) }
				})
				_, err := c.Models(context.Background(), nil)
				if err == nil {
					t.Fatal("no error")
				}
				if got := sleeps.all(); len(got) != 1 || got[0] != DefaultMaxServerDelay {
					t.Errorf("waited %v, want one wait of the cap %v", got, DefaultMaxServerDelay)
				}
				for _, d := range paced {
					if d != DefaultMaxServerDelay {
						t.Errorf("OnRateLimited saw %v, want the cap", d)
					}
				}
				requested := year - time.Hour
				var rl *RateLimitedError
				var se *ServerError
				switch {
				case errors.As(err, &rl):
					if rl.RetryAfter != DefaultMaxServerDelay || rl.RequestedRetryAfter < requested {
						t.Errorf("429: RetryAfter %v, requested %v", rl.RetryAfter, rl.RequestedRetryAfter)
					}
				case errors.As(err, &se):
					if se.RetryAfter != DefaultMaxServerDelay || se.RequestedRetryAfter < requested {
						t.Errorf("503: RetryAfter %v, requested %v", se.RetryAfter, se.RequestedRetryAfter)
					}
				default:
					t.Errorf("err = %T %v", err, err)
				}
				if n := strings.Count(logs.String(), "server-requested delay capped"); n != 2 {
					t.Errorf("%d log lines about the cap, want one per answer (2):\n%s", n, logs.String())
				}
			})
		}
	}

	// A smaller configured cap applies too; a delay under it is kept.
	rec := newRecorder(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("X-RateLimit-Retry-After", "90")
		writeBody(w, http.StatusTooManyRequests, `{}`)
	})
	c, sleeps := rec.client(t, func(o *Options) { o.MaxAttempts, o.MaxServerDelay = 2, time.Minute })
	_, _ = c.Models(context.Background(), nil)
	if got := sleeps.all(); len(got) != 1 || got[0] != time.Minute {
		t.Errorf("with MaxServerDelay 1m waited %v", got)
	}
	c, sleeps = rec.client(t, func(o *Options) { o.MaxAttempts, o.MaxServerDelay = 2, 2*time.Minute })
	_, _ = c.Models(context.Background(), nil)
	if got := sleeps.all(); len(got) != 1 || got[0] != 90*time.Second {
		t.Errorf("a delay under the cap: waited %v, want 90s", got)
	}
}

func TestOnRateLimitedSeesEvery429(t *testing.T) {
	// Two 429s, a 500, then success: the hook sees the two 429s with their
	// delays, and nothing else.
	rec := newRecorder(t, func(i int, w http.ResponseWriter, _ *http.Request) {
		switch i {
		case 1, 2:
			w.Header().Set("X-RateLimit-Retry-After", fmt.Sprintf("0.%d", i))
			writeBody(w, http.StatusTooManyRequests, `{"message_code":"rate_limited"}`)
		case 3:
			writeBody(w, http.StatusInternalServerError, `{}`)
		default:
			writeBody(w, http.StatusOK, coordinatesBody)
		}
	})
	var seen []time.Duration
	c, _ := rec.client(t, func(o *Options) {
		o.BaseBackoff, o.MaxBackoff = time.Millisecond, time.Millisecond
		o.OnRateLimited = func(_ context.Context, e *RateLimitedError) { seen = append(seen, e.RetryAfter) }
	})
	if _, err := c.Predict(context.Background(), &PredictInput{Image: BytesSource(fakeJPEG(1000))}); err != nil {
		t.Fatal(err)
	}
	if want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}; !slices.Equal(seen, want) {
		t.Errorf("OnRateLimited saw %v, want %v", seen, want)
	}
}

func TestOnAnswerSeesEveryAnswersDate(t *testing.T) {
	// A 429, a 500 without a Date, then success: the hook sees all three,
	// with each one's status and Date as sent, and a round trip no longer
	// than the call took.
	dates := map[int]string{1: "Thu, 02 Jan 2025 03:04:07 GMT", 3: "Thu, 02 Jan 2025 03:04:09 GMT"}
	rec := newRecorder(t, func(i int, w http.ResponseWriter, _ *http.Request) {
		if d, ok := dates[i]; ok {
			w.Header()["Date"] = []string{d}
		} else {
			w.Header()["Date"] = nil // net/http adds none
		}
		switch i {
		case 1:
			w.Header().Set("X-RateLimit-Retry-After", "0.001")
			writeBody(w, http.StatusTooManyRequests, `{"message_code":"rate_limited"}`)
		case 2:
			writeBody(w, http.StatusInternalServerError, `{}`)
		default:
			writeBody(w, http.StatusOK, coordinatesBody)
		}
	})
	var seen []Answer
	c, _ := rec.client(t, func(o *Options) {
		o.BaseBackoff, o.MaxBackoff = time.Millisecond, time.Millisecond
		o.OnAnswer = func(_ context.Context, a Answer) { seen = append(seen, a) }
	})
	start := time.Now()
	if _, err := c.Predict(context.Background(), &PredictInput{Image: BytesSource(fakeJPEG(1000))}); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	want := []Answer{{Status: 429, Date: dates[1]}, {Status: 500}, {Status: 200, Date: dates[3]}}
	if len(seen) != len(want) {
		t.Fatalf("OnAnswer saw %+v, want %+v", seen, want)
	}
	for i, a := range seen {
		if a.Status != want[i].Status || a.Date != want[i].Date || a.RoundTrip <= 0 || a.RoundTrip > took {
			t.Errorf("answer %d: %+v, want status %d, Date %q and a round trip within %v", i+1, a, want[i].Status, want[i].Date, took)
		}
	}
}
