package geosim

import (
	"net/http"
	"net/url"
	"testing"
	"time"
)

func TestTokenBucket(t *testing.T) {
	clock := newFakeClock()
	// 40 a minute is one token every 1.5 s.
	sim, base := newTestServer(t, WithRateLimit(40, 2), WithClock(clock.Now))
	sim.AddAccount("acme", 10, 0)
	acmeKey := sim.IssueKey("acme", "ci")

	for i := range 2 {
		if resp := predict(t, base, testKey, nil, testJPEG(t, i)); resp.status != http.StatusOK {
			t.Fatalf("call %d within the burst: status %d", i, resp.status)
		}
	}
	resp := predict(t, base, testKey, nil, testJPEG(t, 3))
	if resp.status != http.StatusTooManyRequests {
		t.Fatalf("over the burst: status %d, want 429", resp.status)
	}
	if got := resp.header.Get("Retry-After"); got != "2" {
		t.Errorf("Retry-After %q, want whole seconds rounded up: 2", got)
	}
	if got := resp.header.Get("X-RateLimit-Retry-After"); got != "1.5" {
		t.Errorf("X-RateLimit-Retry-After %q, want 1.5", got)
	}
	body := resp.json(t)
	if body["message_code"] != CodeRateLimited || dig(t, body, "details", "retry_after") != 1.5 {
		t.Errorf("body %s", resp.body)
	}
	if sim.Charged(DefaultOrg) != 2 {
		t.Errorf("charged %d, want 2: a 429 is free", sim.Charged(DefaultOrg))
	}
	// Every authenticated endpoint counts; other accounts are not affected;
	// the anonymous model list is not limited.
	if resp := get(t, base, PathCredits, testKey); resp.status != http.StatusTooManyRequests {
		t.Errorf("credits while limited: status %d", resp.status)
	}
	if resp := get(t, base, PathCredits, acmeKey); resp.status != http.StatusOK {
		t.Errorf("other account: status %d", resp.status)
	}
	if resp := get(t, base, PathModels, ""); resp.status != http.StatusOK {
		t.Errorf("anonymous model list: status %d", resp.status)
	}

	clock.Advance(1500 * time.Millisecond)
	if resp := predict(t, base, testKey, nil, testJPEG(t, 4)); resp.status != http.StatusOK {
		t.Errorf("after waiting Retry-After: status %d", resp.status)
	}

	sim.SetRateLimit(0, 0)
	for i := range 5 {
		if resp := get(t, base, PathCredits, testKey); resp.status != http.StatusOK {
			t.Fatalf("limiter disabled, call %d: status %d", i, resp.status)
		}
	}
}

// TestSlidingLog checks the public backend's limiter, the default: a log of
// whole-second timestamps, 30 per 60 s, refusals not counted, and its 429.
func TestSlidingLog(t *testing.T) {
	clock := newFakeClock() // at 03:04:05.000
	clock.Advance(700 * time.Millisecond)
	_, base := newTestServer(t, WithSlidingLog(30), WithClock(clock.Now), func(c *Config) { c.Allowance = 1000 })

	// 30 calls within the first second: the log lets a whole window through.
	for i := range 30 {
		if resp := predict(t, base, testKey, nil, testJPEG(t, i)); resp.status != http.StatusOK {
			t.Fatalf("call %d: status %d", i, resp.status)
		}
	}
	clock.Advance(20 * time.Second) // 03:04:25.7
	resp := predict(t, base, testKey, nil, testJPEG(t, 31))
	if resp.status != http.StatusTooManyRequests {
		t.Fatalf("the 31st call: status %d, want 429", resp.status)
	}
	// window - (now - oldest) in whole seconds: 60 - (25 - 5) = 40.
	for h, want := range map[string]string{"X-RateLimit-Limit": "30", "X-RateLimit-Retry-After": "40",
		"X-RateLimit-Reset": "40", "X-RateLimit-Window": "60", "Retry-After": ""} {
		if got := resp.header.Get(h); got != want {
			t.Errorf("%s = %q, want %q", h, got, want)
		}
	}
	body := resp.json(t)
	if body["message_code"] != CodeRateLimited || dig(t, body, "details", "retry_after") != 40.0 ||
		dig(t, body, "details", "limit") != 30.0 || dig(t, body, "details", "window_seconds") != 60.0 ||
		dig(t, body, "details", "current_count") != 30.0 {
		t.Errorf("body %s", resp.body)
	}

	// Refusals do not count: many now, and the window still frees at
	// 03:05:05, when the first 30 (second 03:04:05) are dropped.
	for range 10 {
		predict(t, base, testKey, nil, testJPEG(t, 32))
	}
	clock.Advance(39 * time.Second) // 03:05:04.7: still within
	if resp := predict(t, base, testKey, nil, testJPEG(t, 33)); resp.status != http.StatusTooManyRequests {
		t.Errorf("a second early: status %d", resp.status)
	} else if got := resp.header.Get("X-RateLimit-Retry-After"); got != "1" {
		t.Errorf("a second early: retry after %q, want 1", got)
	}
	clock.Advance(300 * time.Millisecond) // 03:05:05.0: now-60 = 03:04:05, dropped
	if resp := predict(t, base, testKey, nil, testJPEG(t, 34)); resp.status != http.StatusOK {
		t.Errorf("after the window: status %d", resp.status)
	}
}

// TestSlidingLogTruncation: timestamps are whole seconds, so two calls
// 59.1 s apart can fall 60 whole seconds apart, and two calls 60.9 s apart
// only 60: the window a caller sees is up to a second off either way.
func TestSlidingLogTruncation(t *testing.T) {
	clock := newFakeClock() // 03:04:05.000
	_, base := newTestServer(t, WithSlidingLog(1), WithClock(clock.Now))
	clock.Advance(900 * time.Millisecond) // 05.9, score 5
	if resp := predict(t, base, testKey, nil, testJPEG(t, 1)); resp.status != http.StatusOK {
		t.Fatal(resp.status)
	}
	clock.Advance(59100 * time.Millisecond) // 05:05.0, score 65: 65-60 >= 5, dropped
	if resp := predict(t, base, testKey, nil, testJPEG(t, 2)); resp.status != http.StatusOK {
		t.Errorf("59.1 s later across a whole second: status %d, want 200", resp.status)
	}
	clock.Advance(59900 * time.Millisecond) // 06:04.9, score 124: 124-60 = 64 < 65
	if resp := predict(t, base, testKey, nil, testJPEG(t, 3)); resp.status != http.StatusTooManyRequests {
		t.Errorf("59.9 s later within the same second: status %d, want 429", resp.status)
	}
}

// TestBackendCountsValidPredictionsOnly: the backend's limiter sits behind
// its validation, per key, and only on predict.
func TestBackendCountsValidPredictionsOnly(t *testing.T) {
	clock := newFakeClock()
	sim, base := newTestServer(t, WithProfile(ProfileBackend), WithSlidingLog(2), WithClock(clock.Now),
		WithKeyHeader(KeyHeader))
	other := sim.IssueKey(DefaultOrg, "second key")
	for range 5 { // invalid requests: 422 each, none counted
		if resp := predict(t, base, testKey, url.Values{"top_n": {"0"}}, testJPEG(t, 1)); resp.status != http.StatusUnprocessableEntity {
			t.Fatalf("invalid: status %d", resp.status)
		}
	}
	for i := range 2 {
		if resp := predict(t, base, testKey, nil, testJPEG(t, i)); resp.status != http.StatusOK {
			t.Fatalf("valid call %d: status %d", i, resp.status)
		}
	}
	if resp := predict(t, base, testKey, nil, testJPEG(t, 3)); resp.status != http.StatusTooManyRequests {
		t.Errorf("third valid call: status %d, want 429", resp.status)
	}
	if resp := predict(t, base, other, nil, testJPEG(t, 3)); resp.status != http.StatusOK {
		t.Errorf("another key of the account: status %d, want 200 (the limit is per key)", resp.status)
	}
}

// A service whose clock is ahead of the caller's by 1.7 s: its Date header
// and its limiter's whole seconds both follow its own clock, so a call the
// caller makes at 03:04:05.5 lands in the service's second 03:04:07.
func TestClockOffsetMovesDateAndWholeSeconds(t *testing.T) {
	clock := newFakeClock() // 03:04:05.000 on the caller's clock
	sim, base := newTestServer(t, WithSlidingLog(2), WithClock(clock.Now), WithClockOffset(1700*time.Millisecond))
	clock.Advance(500 * time.Millisecond)
	resp := predict(t, base, testKey, nil, testJPEG(t, 1))
	if resp.status != http.StatusOK {
		t.Fatalf("first call: status %d", resp.status)
	}
	if got, want := resp.header.Get("Date"), "Thu, 02 Jan 2025 03:04:07 GMT"; got != want {
		t.Errorf("Date %q, want the service's own clock: %q", got, want)
	}
	if calls := sim.Calls(); len(calls) != 1 || !calls[0].Time.Equal(time.Date(2025, 1, 2, 3, 4, 7, 200_000_000, time.UTC)) {
		t.Errorf("call recorded at %v, want the service's 03:04:07.2", calls)
	}
	// Two calls a minute: the second one fills the window; 59 service
	// seconds later (the caller's 03:05:04.7, the service's 03:05:06.4) the
	// first is still in the window of whole seconds; one second later it
	// has left it.
	if resp := predict(t, base, testKey, nil, testJPEG(t, 2)); resp.status != http.StatusOK {
		t.Fatalf("second call: status %d", resp.status)
	}
	clock.Advance(59*time.Second + 200*time.Millisecond)
	resp = predict(t, base, testKey, nil, testJPEG(t, 3))
	if resp.status != http.StatusTooManyRequests || resp.header.Get("X-RateLimit-Reset") != "1" {
		t.Fatalf("third call in the same window: status %d, reset %q, want 429 and 1 s", resp.status, resp.header.Get("X-RateLimit-Reset"))
	}
	clock.Advance(time.Second)
	if resp := predict(t, base, testKey, nil, testJPEG(t, 4)); resp.status != http.StatusOK {
		t.Errorf("a whole second later: status %d", resp.status)
	}
}
