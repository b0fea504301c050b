package geoapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"time"
)

// Read limits for response bodies.
const (
	// maxSuccessBody bounds a 2xx body; a larger one is a DecodeError.
	maxSuccessBody = 8 << 20
	// maxErrorBody bounds how much of an error body is read for parsing;
	// only an excerpt of maxErrorExcerpt is kept.
	maxErrorBody = 64 << 10
	// maxDrain bounds how much of an unread remainder is discarded so the
	// connection can be reused.
	maxDrain = 64 << 10
)

// Operation names, as reported in errors.
const (
	opPredict  = "Predict"
	opModels   = "Models"
	opCredits  = "Credits"
	opCheckKey = "CheckKey"
)

// pathPredict is the prediction endpoint, which Predict and CheckKey call.
const pathPredict = "/v1/prediction/predict"

// operation describes one HTTP call for invoke.
type operation struct {
	name   string // "Predict", "Models", "Credits"
	method string
	path   string
	query  url.Values
	apiKey string // "" sends no key header
	// requestedModel is the model_id sent, used to recognise a retired-model 422.
	requestedModel string
	// newBody opens the request body for attempt n (1-based); nil for no body.
	newBody func(ctx context.Context, attempt int) (*uploadBody, error)
}

// paidSent reports whether a paid request went out in full: from then on
// the service may have done, and charged for, the work.
func (op *operation) paidSent(body *uploadBody) bool {
	return body != nil && body.sent.Load() && !freeOperation(op.name)
}

// response is a 2xx response read in full.
type response struct {
	status    int
	body      []byte
	attempts  int
	roundTrip time.Duration
}

// invoke runs op with retries and returns the 2xx response or the last typed
// error. Only 429, 5xx and transport failures are retried, and never one
// that may have been charged (see MaybeCharged).
func (c *Client) invoke(ctx context.Context, o *Options, base *url.URL, op *operation) (*response, error) {
	target := endpoint(base, op.path, op.query).String()
	log := o.Logger.With(slog.String("operation", op.name))
	var lastErr error
	for attempt := 1; ; attempt++ {
		resp, err := c.attempt(ctx, o, op, target, attempt)
		if err == nil {
			resp.attempts = attempt
			log.Debug("geoapi call succeeded", slog.Int("attempt", attempt),
				slog.Int("status", resp.status), slog.Duration("round_trip", resp.roundTrip))
			return resp, nil
		}
		lastErr = err
		if rl := (*RateLimitedError)(nil); o.OnRateLimited != nil && errors.As(err, &rl) {
			o.OnRateLimited(ctx, rl)
		}
		if !Retryable(err) || ctx.Err() != nil {
			// A cancelled caller's context shows through the transport
			// error it caused (errors.Is(err, context.Canceled)).
			return nil, withAttempts(err, attempt)
		}
		if attempt >= o.MaxAttempts {
			log.Warn("geoapi call failed, no attempts left", slog.Int("attempt", attempt), slog.String("error", err.Error()))
			return nil, withAttempts(err, attempt)
		}
		wait := backoff(o, attempt+1, errorDelay(err))
		if exceedsDeadline(ctx, wait) {
			log.Warn("geoapi retry would pass the deadline, giving up", slog.Int("attempt", attempt),
				slog.Duration("wait", wait), slog.String("error", err.Error()))
			return nil, withAttempts(err, attempt)
		}
		log.Info("geoapi call failed, retrying", slog.Int("attempt", attempt),
			slog.Duration("wait", wait), slog.String("error", err.Error()))
		if err := o.Sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("geoapi: %s: waiting to retry: %w (last error: %w)", op.name, err, withAttempts(lastErr, attempt))
		}
	}
}

// attemptsError records how many attempts were made; it unwraps to the last
// typed error so errors.As keeps working.
type attemptsError struct {
	err      error
	attempts int
}

func (e *attemptsError) Error() string {
	if e.attempts <= 1 {
		return e.err.Error()
	}
	return fmt.Sprintf("%v (after %d attempts)", e.err, e.attempts)
}

func (e *attemptsError) Unwrap() error { return e.err }

func withAttempts(err error, attempts int) error {
	var ie *InputError
	if errors.As(err, &ie) && attempts == 1 && !errors.Is(err, ErrImageTooLarge) && !errors.Is(err, ErrSizeMismatch) {
		// An input error on the first attempt means nothing was sent.
		return err
	}
	return &attemptsError{err: err, attempts: attempts}
}

// Attempts returns how many HTTP attempts were made before err was
// returned; 0 when the client rejected the call before sending anything.
func Attempts(err error) int {
	var ae *attemptsError
	if errors.As(err, &ae) {
		return ae.attempts
	}
	return 0
}

// attempt sends one request. The per-attempt timeout covers sending the
// body, waiting for the headers and reading the response body.
func (c *Client) attempt(ctx context.Context, o *Options, op *operation, target string, n int) (*response, error) {
	actx, cancel := context.WithTimeout(ctx, o.AttemptTimeout)
	defer cancel()

	var body *uploadBody
	if op.newBody != nil {
		var err error
		if body, err = op.newBody(actx, n); err != nil {
			return nil, err
		}
		// The transport closes the body too, possibly later from another
		// goroutine; uploadBody.Close is idempotent.
		defer body.Close()
	}
	req, err := http.NewRequestWithContext(actx, op.method, target, nil)
	if err != nil {
		return nil, fmt.Errorf("geoapi: %s: build request: %w", op.name, err)
	}
	if body != nil {
		req.Body = body
		req.ContentLength = body.contentLength
		req.Header.Set("Content-Type", body.contentType)
		// No GetBody: net/http must never replay an upload by itself.
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", o.UserAgent)
	if op.apiKey != "" {
		req.Header.Set(o.KeyHeader, op.apiKey)
	}

	start := time.Now()
	resp, err := o.HTTPClient.Do(req)
	if err != nil {
		if body != nil {
			if berr := body.failure(); berr != nil {
				return nil, berr
			}
		}
		te := &TransportError{Operation: op.name, Err: redactErr(err, op.apiKey)}
		// An upload that reached the service in full may have been
		// processed and charged even though no answer came back.
		te.RequestSent = op.paidSent(body)
		return nil, te
	}
	defer func() {
		_, _ = io.CopyN(io.Discard, resp.Body, maxDrain)
		resp.Body.Close()
	}()
	if o.OnAnswer != nil {
		o.OnAnswer(ctx, Answer{Status: resp.StatusCode, Date: resp.Header.Get("Date"), RoundTrip: time.Since(start)})
	}

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		apiErr := newAPIError(op.name, resp.StatusCode, resp.Header, raw, op.apiKey, op.requestedModel, serviceNow(resp.Header, time.Now()))
		o.capDelay(apiErr)
		var se *ServerError
		if errors.As(apiErr, &se) {
			// Whether the whole upload had gone out when the 5xx came tells a
			// refusal (free) from a lost answer (maybe charged).
			se.RequestSent = op.paidSent(body)
		}
		o.Logger.Debug("geoapi error response", slog.String("operation", op.name),
			slog.Int("attempt", n), slog.Int("status", resp.StatusCode), slog.Duration("round_trip", time.Since(start)))
		return nil, apiErr
	}

	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxSuccessBody+1))
	roundTrip := time.Since(start)
	if err != nil {
		// The service answered 2xx, so the call may have been charged:
		// report it as undecodable rather than retrying.
		return nil, &DecodeError{Operation: op.name, StatusCode: resp.StatusCode,
			Body: redact(string(raw), op.apiKey), Err: fmt.Errorf("read body: %w", redactErr(err, op.apiKey))}
	}
	if len(raw) > maxSuccessBody {
		return nil, &DecodeError{Operation: op.name, StatusCode: resp.StatusCode,
			Body: excerpt(redact(string(raw), op.apiKey), maxErrorExcerpt),
			Err:  fmt.Errorf("body larger than %d bytes", maxSuccessBody)}
	}
	return &response{status: resp.StatusCode, body: raw, roundTrip: roundTrip}, nil
}
