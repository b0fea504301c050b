package geoapi

import (
	"context"
	"errors"
	"log/slog"
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

// errorDelay returns the delay a retryable error asked for, capped, if any.
func errorDelay(err error) time.Duration {
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

// Forms of a server-requested delay, as named in logs and errors.
const (
	delayRateLimitRetryAfter = "X-RateLimit-Retry-After"
	delayRetryAfter          = "Retry-After"
	delayBody                = "body retry_after"
	delayRateLimitReset      = "X-RateLimit-Reset"
)

// serverDelay reads the delay a response asks for, as asked (capping is
// Options.capDelay's), the form it came in, and whether any form named
// one. In order: X-RateLimit-Retry-After (seconds, possibly fractional, or
// a Unix time), Retry-After (whole seconds or an HTTP date), the body's
// retry_after (parsed into p), then X-RateLimit-Reset (seconds or a Unix
// time; the public backend sends the same seconds as its retry-after). The
// precise header goes first: Retry-After is rounded up to whole seconds,
// and waiting a second where a tenth would do costs throughput under a
// tight rate limit. The first form holding a usable value wins. now is
// the service's clock (serviceNow), against which a point in time counts.
func serverDelay(h http.Header, p errorBody, now time.Time) (time.Duration, string, bool) {
	if d, ok := secondsOrUnixTime(h.Get(delayRateLimitRetryAfter), now); ok {
		return d, delayRateLimitRetryAfter, true
	}
	if v := strings.TrimSpace(h.Get(delayRetryAfter)); v != "" {
		if secs, err := strconv.ParseFloat(v, 64); err == nil {
			return secondsToDuration(secs), delayRetryAfter, true
		}
		if t, err := http.ParseTime(v); err == nil {
			return untilTime(t, now), delayRetryAfter, true
		}
	}
	if p.DelayFound {
		return secondsToDuration(p.Delay), delayBody, true
	}
	if d, ok := secondsOrUnixTime(h.Get(delayRateLimitReset), now); ok {
		return d, delayRateLimitReset, true
	}
	return 0, "", false
}

// serviceNow is the service's clock when it answered: the answer's own
// Date header when it holds a valid HTTP date (RFC 9110, section 6.6.1:
// "the date and time at which the message was originated"), else local,
// the local clock. A point in time the same answer names (a Retry-After
// date, a Unix time) is measured against it, so a service whose clock is
// an hour off ours still means the delay it asks for: read on our clock,
// "its Date plus 2 s" was an hour's wait (capped at MaxServerDelay) when
// its clock ran ahead, and none when it ran behind. The Date has whole
// seconds, as has a Retry-After date, so the difference of the two is the
// delay exactly.
func serviceNow(h http.Header, local time.Time) time.Time {
	if t, err := http.ParseTime(h.Get("Date")); err == nil {
		return t
	}
	return local
}

// unixTimeThreshold tells a point in time from a delay: no service asks to
// wait 30 years, and no Unix time of this century is smaller.
const unixTimeThreshold = 1e9

// secondsOrUnixTime reads a header of seconds, or of a Unix time when the
// value is that large.
func secondsOrUnixTime(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	secs, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(secs) {
		return 0, false
	}
	if secs > unixTimeThreshold {
		sec, frac := math.Modf(min(secs, 1e15))
		return untilTime(time.Unix(int64(sec), int64(frac*1e9)), now), true
	}
	return secondsToDuration(secs), true
}

// longestDelay bounds a parsed delay before the configured cap applies, so
// that no value, however large, overflows a time.Duration.
const longestDelay = 100 * 365 * 24 * time.Hour

func untilTime(t, now time.Time) time.Duration {
	if t.After(now.Add(longestDelay)) {
		return longestDelay
	}
	return max(t.Sub(now), 0)
}

func secondsToDuration(secs float64) time.Duration {
	if math.IsNaN(secs) || secs <= 0 {
		return 0
	}
	if secs >= longestDelay.Seconds() {
		return longestDelay
	}
	return time.Duration(secs * float64(time.Second))
}

// capDelay bounds the delay err asks for at MaxServerDelay, keeping the
// requested one in RequestedRetryAfter, and logs a capped delay: a 429
// asking for a year would otherwise park every instance's schedule there.
func (o *Options) capDelay(err error) {
	var (
		rl   *RateLimitedError
		se   *ServerError
		d    *time.Duration
		from string
	)
	switch {
	case errors.As(err, &rl):
		d, from = &rl.RetryAfter, rl.DelaySource
	case errors.As(err, &se):
		d, from = &se.RetryAfter, se.DelaySource
	default:
		return
	}
	if *d <= o.MaxServerDelay {
		return
	}
	o.Logger.Warn("geoapi: server-requested delay capped", slog.String("form", from),
		slog.Duration("requested", *d), slog.Duration("cap", o.MaxServerDelay))
	*d = o.MaxServerDelay
}
