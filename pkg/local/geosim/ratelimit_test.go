package geosim

import (
	"net/http"
	"testing"
	"time"
)

func TestRateLimit(t *testing.T) {
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
	if body["message_code"] != CodeRateLimited || body["retry_after"] != 1.5 {
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
