package geosim

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"golang.org/x/time/rate"
)

// SetRateLimit changes the per-account limit at run time (0 disables it).
// Every account starts again with a full burst.
func (s *Server) SetRateLimit(perMinute float64, burst int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if perMinute > 0 && burst <= 0 {
		burst = 1
	}
	s.ratePerMinute, s.rateBurst = perMinute, burst
	for _, a := range s.accounts {
		a.limiter = s.newLimiterLocked()
	}
}

func (s *Server) newLimiterLocked() *rate.Limiter {
	if s.ratePerMinute <= 0 {
		return nil
	}
	return rate.NewLimiter(rate.Limit(s.ratePerMinute/60), s.rateBurst)
}

// throttle reports how long org must wait, or 0 when the call may proceed.
// Every authenticated call counts, as the contract says.
func (s *Server) throttle(org string) time.Duration {
	s.mu.Lock()
	a := s.accounts[org]
	var lim *rate.Limiter
	if a != nil {
		lim = a.limiter
	}
	s.mu.Unlock()
	if lim == nil {
		return 0
	}
	now := s.cfg.Now()
	r := lim.ReserveN(now, 1)
	if !r.OK() {
		return time.Minute
	}
	delay := r.DelayFrom(now)
	if delay > 0 {
		r.CancelAt(now) // a rejected call does not use up a token
	}
	return delay
}

// writeRateLimited answers 429 with the delay in both headers (whole seconds
// in Retry-After as RFC 9110 wants, the exact value in
// X-RateLimit-Retry-After) and in the body.
func writeRateLimited(w http.ResponseWriter, delay time.Duration) {
	secs := setRetryAfter(w, delay)
	writeJSON(w, http.StatusTooManyRequests, errorBody{
		MessageCode: CodeRateLimited,
		Message:     "rate limit exceeded; retry after " + strconv.FormatFloat(secs, 'f', -1, 64) + "s",
		RetryAfter:  &secs,
	})
}

// setRetryAfter sets both delay headers: whole seconds (at least 1) in
// Retry-After, the exact value in X-RateLimit-Retry-After. It returns the
// delay in seconds, rounded to the millisecond.
func setRetryAfter(w http.ResponseWriter, delay time.Duration) float64 {
	secs := math.Round(delay.Seconds()*1000) / 1000
	w.Header().Set("Retry-After", strconv.Itoa(max(int(math.Ceil(delay.Seconds())), 1)))
	w.Header().Set("X-RateLimit-Retry-After", strconv.FormatFloat(secs, 'f', -1, 64))
	return secs
}
