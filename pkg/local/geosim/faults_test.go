package geosim

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// tryPredict posts an image and returns the transport error, if any.
func tryPredict(t *testing.T, client *http.Client, base string) (*response, error) {
	t.Helper()
	body, ct := multipartBody(t, "file", testJPEG(t, 1))
	req, err := http.NewRequest(http.MethodPost, base+PathPredict, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(KeyHeader, testKey)
	req.Header.Set("Content-Type", ct)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

func TestFaultServerErrors(t *testing.T) {
	sim, base := newTestServer(t, WithSeed(7))
	sim.SetFaults(Faults{ServerErrorRate: 1})
	seen := map[int]bool{}
	html := false
	for range 30 {
		resp := predict(t, base, testKey, nil, testJPEG(t, 1))
		if resp.status != 500 && resp.status != 502 && resp.status != 503 {
			t.Fatalf("status %d, want a 5xx", resp.status)
		}
		seen[resp.status] = true
		html = html || strings.HasPrefix(resp.header.Get("Content-Type"), "text/html")
	}
	if len(seen) != 3 || !html {
		t.Errorf("statuses %v html %v: want 500, 502 and 503, some as HTML", seen, html)
	}
	if sim.Charged(DefaultOrg) != 0 {
		t.Errorf("5xx answers charged %d", sim.Charged(DefaultOrg))
	}
	if c := sim.Calls()[0]; c.Fault != FaultServerError || c.Status < 500 {
		t.Errorf("call record %+v", c)
	}
	// Only predict is affected unless AllEndpoints is set.
	if resp := get(t, base, PathModels, ""); resp.status != 200 {
		t.Errorf("models: status %d", resp.status)
	}
	sim.SetFaults(Faults{ServerErrorRate: 1, AllEndpoints: true})
	if resp := get(t, base, PathCredits, testKey); resp.status < 500 {
		t.Errorf("credits with AllEndpoints: status %d", resp.status)
	}
}

func TestFaultsAreReproducible(t *testing.T) {
	statuses := func() []int {
		sim, base := newTestServer(t, WithSeed(42))
		sim.SetFaults(Faults{ServerErrorRate: 0.5})
		var out []int
		for range 20 {
			out = append(out, predict(t, base, testKey, nil, testJPEG(t, 1)).status)
		}
		return out
	}
	a, b := statuses(), statuses()
	ok200 := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed, different faults: %v vs %v", a, b)
		}
		if a[i] == 200 {
			ok200++
		}
	}
	if ok200 == 0 || ok200 == len(a) {
		t.Errorf("rate 0.5 gave %d successes of %d", ok200, len(a))
	}
}

func TestFaultDroppedConnections(t *testing.T) {
	tests := []struct {
		name    string
		faults  Faults
		fault   string
		charged int
	}{
		{"before the work", Faults{DropRate: 1}, FaultDrop, 0},
		{"after charging", Faults{DropAfterChargeRate: 1}, FaultDropAfterCharge, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sim, base := newTestServer(t)
			sim.SetFaults(tt.faults)
			if resp, err := tryPredict(t, http.DefaultClient, base); err == nil {
				t.Fatalf("got a response (status %d), want a dropped connection", resp.status)
			}
			c := sim.Calls()[0]
			if c.Status != StatusDropped || c.Fault != tt.fault || c.Charged != tt.charged || sim.Charged(DefaultOrg) != tt.charged {
				t.Errorf("call %+v, account charged %d; want fault %s charged %d", c, sim.Charged(DefaultOrg), tt.fault, tt.charged)
			}
		})
	}
}

func TestFaultMalformedBody(t *testing.T) {
	for _, free := range []bool{false, true} {
		sim, base := newTestServer(t)
		sim.SetFaults(Faults{MalformedRate: 1, MalformedNoCharge: free})
		resp := predict(t, base, testKey, nil, testJPEG(t, 1))
		if resp.status != http.StatusOK {
			t.Fatalf("status %d, want 200", resp.status)
		}
		if json.Valid(resp.body) || !strings.HasPrefix(string(resp.body), `{"message_code":"success"`) {
			t.Errorf("body %q: want truncated JSON", resp.body)
		}
		want := 1
		if free {
			want = 0
		}
		if sim.Charged(DefaultOrg) != want || sim.Calls()[0].Fault != FaultMalformed {
			t.Errorf("no-charge=%v: charged %d, want %d (call %+v)", free, sim.Charged(DefaultOrg), want, sim.Calls()[0])
		}
	}
}

func TestFaultRateLimitStorm(t *testing.T) {
	clock := newFakeClock()
	sim, base := newTestServer(t, WithClock(clock.Now))
	sim.SetFaults(Faults{RateLimitStorm: 10 * time.Second, StormRetryAfter: 2500 * time.Millisecond})
	for range 3 {
		resp := predict(t, base, testKey, nil, testJPEG(t, 1))
		if resp.status != http.StatusTooManyRequests || resp.header.Get("Retry-After") != "3" || resp.header.Get("X-RateLimit-Retry-After") != "2.5" {
			t.Fatalf("during storm: status %d headers %v", resp.status, resp.header)
		}
	}
	clock.Advance(10 * time.Second)
	if resp := predict(t, base, testKey, nil, testJPEG(t, 1)); resp.status != http.StatusOK {
		t.Errorf("after the storm: status %d", resp.status)
	}
	if sim.Charged(DefaultOrg) != 1 || sim.Calls()[0].Fault != FaultStorm {
		t.Errorf("charged %d, first call %+v", sim.Charged(DefaultOrg), sim.Calls()[0])
	}
}

func TestClientThatGivesUpIsNotCharged(t *testing.T) {
	sim, base := newTestServer(t)
	sim.SetFaults(Faults{Latency: 3 * time.Second})
	client := &http.Client{Timeout: 150 * time.Millisecond}
	start := time.Now()
	_, err := tryPredict(t, client, base)
	if err == nil {
		t.Fatal("the call succeeded, want a client timeout")
	}
	var urlErr interface{ Timeout() bool }
	if !errors.As(err, &urlErr) || !urlErr.Timeout() {
		t.Fatalf("error %v, want a timeout", err)
	}
	// The handler notices the closed connection and records the call.
	deadline := time.Now().Add(2 * time.Second)
	for sim.CallCount() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if time.Since(start) > 2*time.Second {
		t.Error("the handler kept sleeping after the client left")
	}
	if sim.CallCount() != 1 {
		t.Fatal("no call recorded")
	}
	if c := sim.Calls()[0]; c.Status != StatusClientClosedRequest || c.Charged != 0 || sim.Charged(DefaultOrg) != 0 {
		t.Errorf("call %+v, charged %d: want 499 and nothing charged", c, sim.Charged(DefaultOrg))
	}
}

func TestSettleChecksContext(t *testing.T) {
	sim := New()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if charged, outcome := sim.settle(ctx, DefaultOrg, 1, true); outcome != settleClientGone || charged != 0 {
		t.Errorf("cancelled context: charged %d outcome %d", charged, outcome)
	}
	if b, _ := sim.Balance(DefaultOrg); b.SubscriptionUsed != 0 {
		t.Errorf("balance changed: %+v", b)
	}
}

func TestFaultLatency(t *testing.T) {
	sim, base := newTestServer(t, WithLatency(30*time.Millisecond))
	sim.SetFaults(Faults{Latency: 30 * time.Millisecond, LatencyJitter: 10 * time.Millisecond})
	start := time.Now()
	if resp := predict(t, base, testKey, nil, testJPEG(t, 1)); resp.status != 200 {
		t.Fatalf("status %d", resp.status)
	}
	if el := time.Since(start); el < 60*time.Millisecond {
		t.Errorf("answered in %v, want at least the 60ms of latency", el)
	}
	if c := sim.Calls()[0]; c.Fault != FaultLatency || c.Charged != 1 {
		t.Errorf("call %+v", c)
	}
}

func TestFaultGatewayErrorAfterCharge(t *testing.T) {
	sim, base := newTestServer(t, WithSeed(11))
	sim.SetFaults(Faults{GatewayErrorAfterChargeRate: 1})
	seen := map[int]bool{}
	const n = 20
	for range n {
		resp := predict(t, base, testKey, nil, testJPEG(t, 1))
		if resp.status != http.StatusBadGateway && resp.status != http.StatusGatewayTimeout {
			t.Fatalf("status %d, want 502 or 504", resp.status)
		}
		if !strings.HasPrefix(resp.header.Get("Content-Type"), "text/html") || resp.header.Get("Retry-After") != "" {
			t.Errorf("headers %v: want a gateway's HTML page without Retry-After", resp.header)
		}
		seen[resp.status] = true
	}
	if len(seen) != 2 {
		t.Errorf("statuses %v, want both 502 and 504", seen)
	}
	if got := sim.Charged(DefaultOrg); got != n {
		t.Errorf("charged %d, want %d: the prediction ran before the gateway failed", got, n)
	}
	for _, c := range sim.Calls() {
		if c.Fault != FaultGatewayAfterCharge || c.Charged != 1 || c.ModelRun != ModelGlobalDefault || c.Status < 500 {
			t.Errorf("call %+v", c)
		}
	}
}

func TestFaultServerErrorsComeBeforeTheModelRuns(t *testing.T) {
	sim, base := newTestServer(t, WithSeed(7), WithLatency(2*time.Second))
	sim.SetFaults(Faults{ServerErrorRate: 1})
	seen503 := false
	for range 12 {
		start := time.Now()
		resp := predict(t, base, testKey, nil, testJPEG(t, 1))
		if el := time.Since(start); el > time.Second {
			t.Fatalf("a %d took %v: it waited for the model's processing time", resp.status, el)
		}
		if resp.status == http.StatusServiceUnavailable {
			seen503 = true
			if resp.header.Get("Retry-After") == "" {
				t.Errorf("503 without Retry-After: %v", resp.header)
			}
		}
	}
	if !seen503 || sim.Charged(DefaultOrg) != 0 {
		t.Errorf("seen a 503: %v, charged %d; want a 503 and nothing charged", seen503, sim.Charged(DefaultOrg))
	}
}

func TestGatewayFaultDrawnAfterTheOthers(t *testing.T) {
	old := Faults{LatencyJitter: time.Second, ServerErrorRate: 0.3, DropRate: 0.3, DropAfterChargeRate: 0.3, MalformedRate: 0.3}
	withNew := old
	withNew.GatewayErrorAfterChargeRate = 0.3
	for seed := range uint64(20) {
		a, b := New(WithSeed(seed)), New(WithSeed(seed))
		a.SetFaults(old)
		b.SetFaults(withNew)
		pa, pb := a.planFaults(PathPredict), b.planFaults(PathPredict)
		pb.gatewayAfterCharge = 0
		if pa != pb {
			t.Fatalf("seed %d: older faults changed: %+v vs %+v", seed, pa, pb)
		}
	}
}
