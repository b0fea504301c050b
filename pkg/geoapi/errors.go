package geoapi

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Sentinels for input rejected before any request is sent. They are wrapped
// in an *InputError; test with errors.Is.
var (
	// ErrInvalidKey: the API key is missing or does not start with "geo_".
	ErrInvalidKey = errors.New("invalid API key")
	// ErrImageTooLarge: the image is larger than Options.MaxImageBytes. A
	// service that refuses the size itself gives a *TooLargeError instead.
	ErrImageTooLarge = errors.New("image too large")
	// ErrNotImage: the image source is missing, empty or not a known image format.
	ErrNotImage = errors.New("not an image")
	// ErrInvalidTopN: top_n is outside 1 to 15.
	ErrInvalidTopN = errors.New("invalid top_n")
	// ErrSizeMismatch: the image source produced a different number of
	// bytes than PredictInput.Size (or its file size) announced.
	ErrSizeMismatch = errors.New("image size mismatch")
	// ErrInvalidInput: any other invalid input, such as a nil input.
	ErrInvalidInput = errors.New("invalid input")
)

// InputError reports input that was rejected by the client itself. Except
// for an image that grows past the limit while it is being streamed, no
// request has been sent.
//
// Field, Reason and Err are for programs (logs, records, errors.Is); Error
// is for people, worded from the figures below so that nobody has to parse
// Reason to tell a user what they typed.
type InputError struct {
	Field  string
	Reason string
	Err    error // one of the sentinels above

	// Size is the image's size in bytes when it matters: the size found
	// for ErrImageTooLarge (bytes sent so far when Sending), the bytes read
	// for ErrSizeMismatch. 0 when unknown.
	Size int64
	// Limit is the bound Size was measured against: Options.MaxImageBytes
	// for ErrImageTooLarge, the announced size for ErrSizeMismatch.
	Limit int64
	// Sending is true when the limit was crossed while the image was being
	// streamed: the upload was cut short before the service could answer.
	Sending bool
	// TopN is the top_n given, for ErrInvalidTopN.
	TopN int
}

// Error says what is wrong and what to do, in words a user of any of the
// project's tools understands. It never holds the key, only where it came
// from.
func (e *InputError) Error() string {
	return "geoapi: " + e.describe()
}

// keyHint says where the key comes from in this project's tools.
const keyHint = "(check GEO_API_KEY or the secret)"

func (e *InputError) describe() string {
	switch {
	case errors.Is(e.Err, ErrInvalidKey):
		switch e.Reason {
		case reasonKeyMissing:
			return "no API key was given " + keyHint
		case reasonKeyPrefix:
			return `the API key does not start with "geo_" ` + keyHint
		case reasonKeyCharacters:
			return "the API key contains spaces, line breaks or non-ASCII characters " + keyHint
		}
		return "the API key is not valid " + keyHint
	case errors.Is(e.Err, ErrImageTooLarge):
		switch {
		case e.Sending:
			return fmt.Sprintf("the image grew past %s bytes while it was being sent; the service accepts at most %s bytes",
				groupDigits(e.Limit), groupDigits(e.Limit))
		case e.Size > 0 && e.Limit > 0:
			return fmt.Sprintf("the image is %s bytes; the service accepts at most %s bytes", groupDigits(e.Size), groupDigits(e.Limit))
		}
		return "the image is too large: " + e.Reason
	case errors.Is(e.Err, ErrNotImage):
		switch e.Reason {
		case reasonEmpty:
			return "the image file is empty"
		case reasonNotImage:
			return "the file is not an image the service accepts (JPEG, PNG, WebP, HEIC/HEIF/AVIF, GIF, TIFF or BMP)"
		case reasonNoSource:
			return "no image was given"
		case reasonNoReader:
			return "the image could not be opened (its source returned nothing)"
		}
		return "the file is not an image: " + e.Reason
	case errors.Is(e.Err, ErrInvalidTopN):
		return fmt.Sprintf("the number of locations asked for (top_n) is %d; it must be from %d to %d", e.TopN, MinTopN, MaxTopN)
	case errors.Is(e.Err, ErrSizeMismatch):
		return fmt.Sprintf("the image changed while it was being read (%s bytes read, %s announced); try again once the file is complete",
			groupDigits(e.Size), groupDigits(e.Limit))
	}
	return fmt.Sprintf("invalid %s: %s", e.Field, e.Reason)
}

// Reasons of InputError that Error words for people.
const (
	reasonKeyMissing    = "missing"
	reasonKeyPrefix     = `does not start with "geo_"`
	reasonKeyCharacters = "contains whitespace or non-ASCII characters"
	reasonEmpty         = "empty"
	reasonNotImage      = "not a recognised image format"
	reasonNoSource      = "no image source"
	reasonNoReader      = "source returned no reader"
)

// groupDigits writes n with thousands separators (12,345,678), the way the
// README and the contract write the limit.
func groupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	sign := ""
	if n < 0 {
		sign, s = "-", s[1:]
	}
	var b strings.Builder
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(s[i])
	}
	return sign + b.String()
}

// Unwrap returns the sentinel.
func (e *InputError) Unwrap() error { return e.Err }

// maxErrorExcerpt bounds the body excerpt kept in errors.
const maxErrorExcerpt = 2 << 10

// APIError is a non-2xx response from the service. The typed errors below
// embed it; a status without a more specific type is returned as *APIError.
type APIError struct {
	StatusCode  int
	MessageCode string
	Message     string
	// Detail is what the body adds to Message: the public backend's
	// details.description, or its validation errors (details.validation_errors,
	// FastAPI's detail list) in one line. Empty when the body has neither.
	Detail    string
	Body      string // excerpt of the response body, at most 2 KiB
	Operation string
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "geoapi: %s: HTTP %d", e.Operation, e.StatusCode)
	if e.MessageCode != "" {
		fmt.Fprintf(&b, " %s", e.MessageCode)
	}
	switch {
	case e.Message != "" && e.Detail != "":
		fmt.Fprintf(&b, ": %s (%s)", e.Message, e.Detail)
	case e.Message != "" || e.Detail != "":
		fmt.Fprintf(&b, ": %s", e.Message+e.Detail)
	case e.MessageCode == "" && e.Body != "":
		fmt.Fprintf(&b, ": body %q", oneLine(e.Body, 200))
	}
	return b.String()
}

// UnauthorizedError is a 401: the key is missing, invalid or revoked, or
// the endpoint takes no API keys at all (Refusal tells which).
type UnauthorizedError struct{ APIError }

// Unwrap lets errors.As find the embedded *APIError.
func (e *UnauthorizedError) Unwrap() error { return &e.APIError }

// KeyRefusal is why a 401 refused the call.
type KeyRefusal string

// Reasons of a 401, read from the body's code and words.
const (
	// KeyInvalid: the key is unknown, revoked or expired (INVALID_API_KEY),
	// or the body does not say (the contract's plain 401 is read this way).
	KeyInvalid KeyRefusal = "invalid_key"
	// KeyMissing: no key reached the service (AUTH_REQUIRED).
	KeyMissing KeyRefusal = "missing_key"
	// KeyNotAcceptedHere: the endpoint takes no API keys, whatever the key
	// (the public backend accepts keys only on predict: "API keys not
	// allowed for this endpoint"). The key itself was not judged.
	KeyNotAcceptedHere KeyRefusal = "endpoint_refuses_api_keys"
)

// Refusal says why the service refused the call, from its code and words.
func (e *UnauthorizedError) Refusal() KeyRefusal {
	code := strings.ToUpper(e.MessageCode)
	words := strings.ToLower(e.Message + " " + e.Detail)
	switch {
	case strings.Contains(words, "not allowed for this endpoint"),
		strings.Contains(words, "keys not allowed"),
		strings.Contains(words, "use frontend"):
		return KeyNotAcceptedHere
	case code == "AUTH_REQUIRED":
		return KeyMissing
	}
	return KeyInvalid
}

// KeyNotAccepted reports whether err is a 401 saying the endpoint takes no
// API keys: a refusal of the endpoint, not of the key.
func KeyNotAccepted(err error) bool {
	var ue *UnauthorizedError
	return errors.As(err, &ue) && ue.Refusal() == KeyNotAcceptedHere
}

// OutOfCreditsError is a 402: the account has no remaining credits. The
// public backend also answers 402 after a prediction whose charge failed;
// it charged nothing then either.
type OutOfCreditsError struct {
	APIError
	// CreditsRequired and CreditsAvailable are the figures the body gives
	// (details.credits_required or required_credits, available_credits);
	// nil when it gives none.
	CreditsRequired  *int
	CreditsAvailable *int
}

// Unwrap lets errors.As find the embedded *APIError.
func (e *OutOfCreditsError) Unwrap() error { return &e.APIError }

// ValidationError is a 422: top_n out of range or a retired model_id.
type ValidationError struct {
	APIError
	// RetiredModelID is the model the service named as retired, if any.
	RetiredModelID string
}

func (e *ValidationError) Error() string {
	s := e.APIError.Error()
	if e.RetiredModelID != "" && !strings.Contains(e.Message, e.RetiredModelID) {
		s += fmt.Sprintf(" (model %s)", e.RetiredModelID)
	}
	return s
}

// Unwrap lets errors.As find the embedded *APIError.
func (e *ValidationError) Unwrap() error { return &e.APIError }

// RateLimitedError is a 429.
type RateLimitedError struct {
	APIError
	// RetryAfter is the delay the client honours: the one the service asked
	// for, capped at Options.MaxServerDelay; 0 when it gave none.
	RetryAfter time.Duration
	// RequestedRetryAfter is the delay as the service asked for it, before
	// the cap, and DelaySource the form it came in (see serverDelay).
	RequestedRetryAfter time.Duration
	DelaySource         string
}

func (e *RateLimitedError) Error() string {
	s := e.APIError.Error()
	if e.RetryAfter > 0 {
		s += fmt.Sprintf(" (retry after %s)", e.RetryAfter)
	}
	return s
}

// Unwrap lets errors.As find the embedded *APIError.
func (e *RateLimitedError) Unwrap() error { return &e.APIError }

// TooLargeError is the service refusing the image for its size: a 413, or a
// 400 or 422 whose code or file detail names the size (the public backend
// answers 400 FILE_TOO_LARGE). It is free and not retried.
type TooLargeError struct{ APIError }

// Unwrap lets errors.As find the embedded *APIError.
func (e *TooLargeError) Unwrap() error { return &e.APIError }

// UnsupportedFormatError is the service refusing the file's type: a 415, or
// a 400 or 422 whose code names the file type (the public backend answers
// 400 INVALID_FILE_TYPE). The same bytes would be refused again: it is free
// and not retried.
type UnsupportedFormatError struct{ APIError }

// Unwrap lets errors.As find the embedded *APIError.
func (e *UnsupportedFormatError) Unwrap() error { return &e.APIError }

// ServerError is a 5xx. Whether it may have been charged, and so whether it
// is retried, depends on the status, RetryAfter and RequestSent; see
// MaybeCharged.
type ServerError struct {
	APIError
	// RequestSent is true when a paid request (Predict) had been sent in
	// full before the answer came. Always false for free operations.
	RequestSent bool
	// RetryAfter is the delay asked for (any form serverDelay reads), capped
	// at Options.MaxServerDelay; 0 when none was given. RequestedRetryAfter
	// and DelaySource are as for RateLimitedError.
	RetryAfter          time.Duration
	RequestedRetryAfter time.Duration
	DelaySource         string
	// delayGiven records that a delay was named, even a zero one: a 503
	// carrying one declined the work.
	delayGiven bool
}

func (e *ServerError) Error() string {
	s := e.APIError.Error()
	if e.RetryAfter > 0 {
		s += fmt.Sprintf(" (retry after %s)", e.RetryAfter)
	}
	if MaybeCharged(e) {
		s += " (may have been charged: not retried)"
	}
	return s
}

// Unwrap lets errors.As find the embedded *APIError.
func (e *ServerError) Unwrap() error { return &e.APIError }

// DecodeError is a 2xx response whose body could not be understood. It is
// never retried: a Predict call may already have been charged.
type DecodeError struct {
	Operation  string
	StatusCode int
	// Body holds the response body as read (bounded by the read limit), so
	// that a charged result is not lost even when it cannot be decoded.
	Body string
	// CreditsConsumed is the body's data.credits_consumed when it could be
	// read although the rest could not be used, so the charge is recorded;
	// nil when the body does not say.
	CreditsConsumed *int
	Err             error
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("geoapi: %s: cannot decode HTTP %d response: %v (body %q)",
		e.Operation, e.StatusCode, e.Err, oneLine(e.Body, 200))
}

func (e *DecodeError) Unwrap() error { return e.Err }

// LayoutError is a 2xx response whose layout was not recognised: it is
// valid JSON but the expected figure or list was not found.
type LayoutError struct {
	Operation string
	// Missing names what could not be found.
	Missing string
	// Keys lists the keys seen (top-level, and dotted paths below them), so a
	// user can tell where the figure is and configure a path.
	Keys []string
}

func (e *LayoutError) Error() string {
	return fmt.Sprintf("geoapi: %s: unrecognised response layout: no %s (keys seen: %s)",
		e.Operation, e.Missing, strings.Join(e.Keys, ", "))
}

// FigureError is a credit summary whose remaining figure was found and
// refused (see FigureRefusal): not a JSON number, or outside the range of
// MinCreditFigure to MaxCreditFigure.
type FigureError struct {
	Operation string
	Refusal   FigureRefusal
}

func (e *FigureError) Error() string {
	return fmt.Sprintf("geoapi: %s: remaining credits refused: %s", e.Operation, e.Refusal)
}

// TransportError is a failure to send the request or read its response
// headers: connection refused or reset, EOF, or a per-attempt timeout.
type TransportError struct {
	Operation string
	Err       error
	// RequestSent is true when a paid request (Predict) had been sent in
	// full before the failure: the service may have processed and charged
	// it, so it is not retried (see MaybeCharged).
	RequestSent bool
}

func (e *TransportError) Error() string {
	if e.RequestSent {
		return fmt.Sprintf("geoapi: %s: transport, after the request was sent (outcome unknown): %v", e.Operation, e.Err)
	}
	return fmt.Sprintf("geoapi: %s: transport: %v", e.Operation, e.Err)
}

func (e *TransportError) Unwrap() error { return e.Err }

// oneLine flattens s to a single line of at most n bytes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = excerpt(s, n) + "..."
	}
	return s
}
