package geoapi

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Retryable reports whether err is worth retrying later: throttling (429),
// a 5xx or a transport failure, unless the call may have been charged
// (MaybeCharged), which a retry could pay for twice. Errors a retry cannot
// fix (401, 402, 413, 422, other 4xx, input errors) are not retryable.
func Retryable(err error) bool {
	if MaybeCharged(err) {
		return false
	}
	var (
		rl *RateLimitedError
		se *ServerError
		te *TransportError
	)
	return errors.As(err, &rl) || errors.As(err, &se) || errors.As(err, &te)
}

// backoff returns the wait before attempt number next (2 for the first
// retry): full jitter over a capped exponential, but never less than the
// delay the service asked for.
func backoff(o *Options, next int, serverDelay time.Duration) time.Duration {
	ceiling := o.MaxBackoff
	if shift := next - 2; shift < 32 {
		if d := o.BaseBackoff << shift; d > 0 && d < ceiling {
			ceiling = d
		}
	}
	return max(o.jitter(ceiling), serverDelay)
}

func fullJitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return rand.N(d + 1)
}

// serverDelay returns the delay a retryable error asked for, if any.
func serverDelay(err error) time.Duration {
	var (
		rl *RateLimitedError
		se *ServerError
	)
	switch {
	case errors.As(err, &rl):
		return rl.RetryAfter
	case errors.As(err, &se):
		return se.RetryAfter
	}
	return 0
}

// exceedsDeadline reports whether waiting d would pass ctx's deadline, in
// which case the caller returns the last error at once instead of sleeping.
func exceedsDeadline(ctx context.Context, d time.Duration) bool {
	deadline, ok := ctx.Deadline()
	return ok && time.Now().Add(d).After(deadline)
}

func sleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// headerRetryAfter reads X-RateLimit-Retry-After (seconds, possibly
// fractional, or a Unix time) and then Retry-After (whole seconds or an HTTP
// date). The precise header goes first: Retry-After is rounded up to whole
// seconds, and waiting a second where a tenth would do costs throughput under
// a tight rate limit. The first header holding a usable value wins.
func headerRetryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if v := strings.TrimSpace(h.Get("X-RateLimit-Retry-After")); v != "" {
		if secs, err := strconv.ParseFloat(v, 64); err == nil {
			// Values this large are a point in time, not a delay.
			if secs > 1e9 {
				sec, frac := math.Modf(min(secs, 1e15))
				return max(time.Unix(int64(sec), int64(frac*1e9)).Sub(now), 0), true
			}
			return secondsToDuration(secs), true
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if secs, err := strconv.ParseFloat(v, 64); err == nil {
			return secondsToDuration(secs), true
		}
		if t, err := http.ParseTime(v); err == nil {
			return max(t.Sub(now), 0), true
		}
	}
	return 0, false
}

// maxServerDelay bounds a server-requested delay so a silly value cannot
// overflow; the context deadline rule normally applies long before it.
const maxServerDelay = 24 * time.Hour

func secondsToDuration(secs float64) time.Duration {
	if math.IsNaN(secs) || secs <= 0 {
		return 0
	}
	if secs >= maxServerDelay.Seconds() {
		return maxServerDelay
	}
	return time.Duration(secs * float64(time.Second))
}
