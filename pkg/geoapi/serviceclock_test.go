package geoapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// TestDelaysOnTheServiceClock: a point in time the service names (an HTTP
// date, a Unix time) is a delay measured on the service's clock, which the
// same answer's Date header shows: a service clock an hour ahead or behind
// ours still means "wait 2 s" when it names its Date plus 2 s.
func TestDelaysOnTheServiceClock(t *testing.T) {
	for _, skew := range []time.Duration{time.Hour, -time.Hour, 0} {
		for _, form := range []struct {
			name  string
			set   func(h http.Header, at time.Time)
			delay time.Duration
		}{
			{"Retry-After date", func(h http.Header, at time.Time) { h.Set("Retry-After", at.Format(http.TimeFormat)) }, 2 * time.Second},
			{"X-RateLimit-Reset Unix time", func(h http.Header, at time.Time) { h.Set("X-RateLimit-Reset", strconv.FormatInt(at.Unix(), 10)) }, 3 * time.Second},
			{"X-RateLimit-Retry-After Unix time", func(h http.Header, at time.Time) {
				h.Set("X-RateLimit-Retry-After", strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', 3, 64))
			}, 1500 * time.Millisecond},
		} {
			t.Run(form.name+" "+skew.String(), func(t *testing.T) {
				rec := newRecorder(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
					serviceNow := time.Now().Add(skew).UTC().Truncate(time.Second)
					w.Header().Set("Date", serviceNow.Format(http.TimeFormat))
					form.set(w.Header(), serviceNow.Add(form.delay))
					writeBody(w, http.StatusTooManyRequests, `{"message_code":"rate_limited"}`)
				})
				c, _ := rec.client(t, func(o *Options) { o.MaxAttempts = 1 })
				_, err := c.Predict(context.Background(), &PredictInput{Image: BytesSource(fakeJPEG(64))})
				var rl *RateLimitedError
				if !errors.As(err, &rl) {
					t.Fatalf("err = %v, want a RateLimitedError", err)
				}
				if rl.RetryAfter != form.delay {
					t.Errorf("service clock %v from ours, asked for its Date + %v: read a delay of %v", skew, form.delay, rl.RetryAfter)
				}
			})
		}
	}
}
