package geosim

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"golang.org/x/time/rate"
)

// rateLimiter admits or refuses one call. Guarded by Server.mu.
type rateLimiter interface {
	// take counts a call at now, or refuses it (and does not count it).
	take(now time.Time) *refusal
}

// refusal is a 429 to send.
type refusal struct {
	delay time.Duration
	// exact: delay is precise (token bucket, storm) and goes out as
	// fractional seconds plus Retry-After; otherwise whole seconds in the
	// backend's X-RateLimit-* headers only.
	exact                bool
	limit, window, count int // the sliding log's figures, for the body
}

// slidingLog is the public backend's limiter: a log of whole-second
// timestamps (a Redis sorted set there). Scores at or below now-window are
// dropped, the call is counted, and a refused call is removed again, so
// refusals do not count.
type slidingLog struct {
	limit  int
	window int64   // seconds
	scores []int64 // ascending
}

func (l *slidingLog) take(now time.Time) *refusal {
	cur := now.Unix() // int(time.time()): truncated to the second
	drop := 0
	for drop < len(l.scores) && l.scores[drop] <= cur-l.window {
		drop++
	}
	l.scores = l.scores[drop:]
	if len(l.scores) < l.limit {
		l.scores = append(l.scores, cur)
		return nil
	}
	// As the backend: window - (now - oldest), or the whole window when
	// that comes to 0.
	wait := max(l.window-(cur-l.scores[0]), 0)
	if wait == 0 {
		wait = l.window
	}
	return &refusal{delay: time.Duration(wait) * time.Second, limit: l.limit, window: int(l.window), count: len(l.scores)}
}

// tokenBucket is the token bucket option.
type tokenBucket struct{ lim *rate.Limiter }

func (b tokenBucket) take(now time.Time) *refusal {
	r := b.lim.ReserveN(now, 1)
	if !r.OK() {
		return &refusal{delay: time.Minute, exact: true}
	}
	delay := r.DelayFrom(now)
	if delay <= 0 {
		return nil
	}
	r.CancelAt(now) // a rejected call does not use up a token
	return &refusal{delay: delay, exact: true}
}

// SetRateLimit changes the token bucket limit at run time (0 disables it).
// Every key starts again with a full burst.
func (s *Server) SetRateLimit(perMinute float64, burst int) {
	s.setLimiter(LimiterTokenBucket, perMinute, burst)
}

// SetSlidingLog changes the sliding-log limit at run time (0 disables it).
// Every key starts again with an empty log.
func (s *Server) SetSlidingLog(perMinute float64) {
	s.setLimiter(LimiterSlidingLog, perMinute, 0)
}

func (s *Server) setLimiter(kind Limiter, perMinute float64, burst int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if perMinute > 0 && burst <= 0 {
		burst = 1
	}
	s.limiterKind, s.ratePerMinute, s.rateBurst = kind, perMinute, burst
	s.limiters = map[string]rateLimiter{}
}

func (s *Server) newLimiterLocked() rateLimiter {
	if s.ratePerMinute <= 0 {
		return nil
	}
	if s.limiterKind == LimiterTokenBucket {
		return tokenBucket{rate.NewLimiter(rate.Limit(s.ratePerMinute/60), s.rateBurst)}
	}
	return newSlidingLog(s.ratePerMinute)
}

// newSlidingLog allows floor(perMinute) calls (at least one) per window of
// whole seconds: 60 s for a whole rate, longer for a rate under 1 a minute.
func newSlidingLog(perMinute float64) *slidingLog {
	limit := max(int(perMinute), 1)
	window := max(int64(math.Round(float64(limit)*60/perMinute)), 1)
	return &slidingLog{limit: limit, window: window}
}

// rateKey is what the limit applies to: each key in ProfileBackend (the
// backend's rate_key), the account otherwise (the contract: a key inherits
// its account's rate limits).
func (s *Server) rateKey(k *apiKey) (key, clientType string) {
	if s.cfg.backend() {
		return "rate_limit:prediction:api_key:" + k.id, "api_key"
	}
	return "rate_limit:org:" + k.org, "organization"
}

// throttle counts a call of k, or returns the refusal to answer.
func (s *Server) throttle(k *apiKey) (*refusal, string, string) {
	key, clientType := s.rateKey(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	lim, ok := s.limiters[key]
	if !ok {
		lim = s.newLimiterLocked()
		s.limiters[key] = lim
	}
	if lim == nil {
		return nil, key, clientType
	}
	return lim.take(s.cfg.Now()), key, clientType
}

// writeRateLimited answers 429. A sliding-log refusal carries the
// backend's headers (whole seconds, no Retry-After) and details; an exact
// one (token bucket, storm) Retry-After in whole seconds, as RFC 9110
// wants, and the exact value in X-RateLimit-Retry-After and the body.
func writeRateLimited(w http.ResponseWriter, r *refusal, rateKey, clientType string) {
	details := map[string]any{"rate_key": rateKey, "client_type": clientType}
	if r.exact {
		details["retry_after"] = setRetryAfter(w, r.delay)
	} else {
		secs := strconv.Itoa(int(r.delay / time.Second))
		w.Header().Set("X-RateLimit-Limit", strconv.Itoa(r.limit))
		w.Header().Set("X-RateLimit-Reset", secs)
		w.Header().Set("X-RateLimit-Retry-After", secs)
		w.Header().Set("X-RateLimit-Window", strconv.Itoa(r.window))
		details["limit"], details["window_seconds"], details["current_count"] = r.limit, r.window, r.count
		details["retry_after"] = int(r.delay / time.Second)
	}
	writeJSON(w, http.StatusTooManyRequests, errorBody{MessageCode: CodeRateLimited, Message: "Rate limit exceeded", Details: details})
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

// RateLimiter is one key's limiter as the simulator applies it, for a
// model that drives it on a clock of its own (pkg/local/pacesim) rather
// than through HTTP. Not safe for concurrent use.
type RateLimiter struct{ lim rateLimiter }

// NewRateLimiter returns the limiter of kind at perMinute (burst for the
// token bucket, at least 1), as WithSlidingLog and WithRateLimit configure
// the server's.
func NewRateLimiter(kind Limiter, perMinute float64, burst int) *RateLimiter {
	if kind == LimiterTokenBucket {
		return &RateLimiter{tokenBucket{rate.NewLimiter(rate.Limit(perMinute/60), max(burst, 1))}}
	}
	return &RateLimiter{newSlidingLog(perMinute)}
}

// Take counts a call reaching the service at now (its clock), or refuses
// it (ok false) with the delay the 429 asks for; a refused call is not
// counted.
func (r *RateLimiter) Take(now time.Time) (ok bool, retryAfter time.Duration) {
	if ref := r.lim.take(now); ref != nil {
		return false, ref.delay
	}
	return true, 0
}
