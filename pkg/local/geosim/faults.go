package geosim

import (
	"context"
	"math/rand/v2"
	"net/http"
	"time"
)

// Faults are failures injected into predict calls (and into every endpoint
// when AllEndpoints is set). Rates are fractions 0..1 drawn from the
// server's seeded random source, so a run is reproducible for a given seed
// and call order. The zero value injects nothing.
type Faults struct {
	// Latency is added to every call; LatencyJitter adds a uniform random
	// extra in [0, LatencyJitter).
	Latency       time.Duration
	LatencyJitter time.Duration
	// ServerErrorRate answers 500 (the service's PREDICTION_FAILED), 502
	// (a gateway's HTML) or 503 before the prediction runs. Nothing is
	// charged. The 503 is a gateway's with Retry-After (ProfileContract) or
	// the service's EXTERNAL_SERVICE_ERROR (ProfileBackend): either tells a
	// client it may retry; a client that sent the whole upload cannot tell a
	// 502 from one after a charge (GatewayErrorAfterChargeRate) and must not
	// retry it.
	ServerErrorRate float64
	// DropRate closes the connection without any response before the
	// prediction runs. Nothing is charged.
	DropRate float64
	// DropAfterChargeRate charges the prediction, then closes the connection
	// without a response: the service did the work but the answer is lost,
	// the case a retrying client must expect to pay twice for.
	DropAfterChargeRate float64
	// MalformedRate answers 200 with a truncated JSON body instead of the
	// prediction. It is charged (a service that answered 200 did the work)
	// unless MalformedNoCharge is set.
	MalformedRate     float64
	MalformedNoCharge bool
	// GatewayErrorAfterChargeRate runs and charges the prediction, then
	// answers 502 or 504 with a gateway's HTML page instead of the result:
	// the answer was lost between the service and the client.
	GatewayErrorAfterChargeRate float64
	// RateLimitStorm makes every call answer 429 for this long from the
	// moment SetFaults is called, with StormRetryAfter (default 1s) as the
	// advertised delay.
	RateLimitStorm  time.Duration
	StormRetryAfter time.Duration
	// AllEndpoints applies the faults to the model list and credit summary
	// too (those never charge).
	AllEndpoints bool
}

// SetFaults replaces the injected faults.
func (s *Server) SetFaults(f Faults) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.StormRetryAfter <= 0 {
		f.StormRetryAfter = time.Second
	}
	s.faults = f
	s.stormUntil = time.Time{}
	if f.RateLimitStorm > 0 {
		s.stormUntil = s.cfg.Now().Add(f.RateLimitStorm)
	}
}

// ResetFaults removes every injected fault.
func (s *Server) ResetFaults() { s.SetFaults(Faults{}) }

// Reseed restarts the fault random source from seed.
func (s *Server) Reseed(seed uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rng = newRand(seed)
}

func newRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// faultPlan is what happens to one call, decided up front in a fixed order
// of draws so the sequence only depends on the seed and the call order.
type faultPlan struct {
	latency         time.Duration
	storm           time.Duration // > 0: answer 429 with this delay
	serverError     int           // 0, 500, 502 or 503
	drop            bool
	dropAfterCharge bool
	malformed       bool
	malformedFree   bool
	// gatewayAfterCharge is 0, 502 or 504.
	gatewayAfterCharge int
}

func (s *Server) planFaults(endpoint string) faultPlan {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.faults
	var p faultPlan
	if endpoint != PathPredict && !f.AllEndpoints {
		return p
	}
	if !s.stormUntil.IsZero() && s.cfg.Now().Before(s.stormUntil) {
		p.storm = f.StormRetryAfter
	}
	p.latency = f.Latency
	if f.LatencyJitter > 0 {
		p.latency += time.Duration(s.rng.Int64N(int64(f.LatencyJitter)))
	}
	if s.hit(f.ServerErrorRate) {
		p.serverError = []int{500, 502, 503}[s.rng.IntN(3)]
	}
	p.drop = s.hit(f.DropRate)
	p.dropAfterCharge = s.hit(f.DropAfterChargeRate)
	p.malformed = s.hit(f.MalformedRate)
	p.malformedFree = f.MalformedNoCharge
	// Drawn last, so seeds keep giving the same faults for the older fields.
	if s.hit(f.GatewayErrorAfterChargeRate) {
		p.gatewayAfterCharge = []int{http.StatusBadGateway, http.StatusGatewayTimeout}[s.rng.IntN(2)]
	}
	return p
}

// hit draws once per non-zero rate, so disabled faults use no draws.
func (s *Server) hit(rate float64) bool {
	return rate > 0 && s.rng.Float64() < rate
}

// serverErrorRetryAfter is the delay a gateway's 503 asks for: short, so a
// retrying client waits about as long as its own backoff would.
const serverErrorRetryAfter = 250 * time.Millisecond

// writeServerError answers like a failing service or the gateway in front of
// it. The service itself answers 500 PREDICTION_FAILED (inference failed)
// and, in ProfileBackend, 503 EXTERNAL_SERVICE_ERROR (the inference server
// is down), both in its JSON envelope and before any charge; a gateway
// answers 502, 504, and in ProfileContract 503 with a Retry-After, as HTML.
func (s *Server) writeServerError(w http.ResponseWriter, status int) {
	switch {
	case status == http.StatusInternalServerError:
		writeJSON(w, status, newError(CodePredictionFailed, "Prediction failed",
			map[string]any{"description": "Prediction failed due to an internal error"}))
		return
	case status == http.StatusServiceUnavailable && s.cfg.backend():
		writeJSON(w, status, newError(CodeExternalService, "External service error",
			map[string]any{"description": "Prediction service temporarily unavailable"}))
		return
	}
	switch status {
	case http.StatusBadGateway:
		writeRaw(w, status, "text/html; charset=utf-8",
			[]byte("<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>\n"))
	case http.StatusServiceUnavailable:
		setRetryAfter(w, serverErrorRetryAfter)
		writeRaw(w, status, "text/html; charset=utf-8",
			[]byte("<html><head><title>503 Service Temporarily Unavailable</title></head><body><h1>503 Service Temporarily Unavailable</h1></body></html>\n"))
	case http.StatusGatewayTimeout:
		writeRaw(w, status, "text/html; charset=utf-8",
			[]byte("<html><head><title>504 Gateway Time-out</title></head><body><h1>504 Gateway Time-out</h1></body></html>\n"))
	default:
		writeJSON(w, status, newError(CodeInternal, "Internal server error", nil))
	}
}

// dropConnection closes the client's connection without writing anything.
func dropConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	// HTTP/2 or a recorder: aborting the handler resets the stream.
	panic(http.ErrAbortHandler)
}

// sleep waits d or until ctx is done; it reports whether the wait completed.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
