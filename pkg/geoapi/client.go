package geoapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/photo/imageformat"
	"github.com/geolocate-aws/geolocate/pkg/shared/keyheader"
)

// Defaults applied by New and per call when an Options field is zero.
const (
	DefaultAttemptTimeout = 60 * time.Second
	DefaultMaxAttempts    = 4
	DefaultBaseBackoff    = 250 * time.Millisecond
	DefaultMaxBackoff     = 20 * time.Second
	DefaultUserAgent      = "geolocate-geoapi/1.0"
	// DefaultMaxServerDelay caps any delay the service asks for (429, 503):
	// long enough for the public backend's whole window of 60 s, short
	// enough that a 429 asking for a year parks nothing for long.
	DefaultMaxServerDelay = 5 * time.Minute
)

// KeyHeader is the contract's request header for the API key, the default
// of Options.KeyHeader.
const KeyHeader = keyheader.Default

// Options configure a Client. A copy is taken by New; per-call option
// functions modify a further copy for that call only.
type Options struct {
	// BaseURL is the service address, for example http://127.0.0.1:8080.
	// It may include a path prefix.
	BaseURL string
	// APIKey is the default key; an input's APIKey overrides it.
	APIKey string
	// HTTPClient sends the requests. Default: a client with dial, TLS and
	// idle timeouts that does not follow redirects.
	HTTPClient *http.Client
	// AttemptTimeout bounds one HTTP attempt, including reading the body.
	AttemptTimeout time.Duration
	// MaxAttempts is the total number of attempts including the first;
	// 1 disables retries.
	MaxAttempts int
	// BaseBackoff and MaxBackoff shape the capped exponential backoff.
	BaseBackoff, MaxBackoff time.Duration
	// Logger receives structured logs. Default: discards everything.
	Logger *slog.Logger
	// UserAgent is sent as the User-Agent header.
	UserAgent string
	// Sleep waits between attempts. Default: a timer that honours ctx.
	Sleep func(ctx context.Context, d time.Duration) error
	// OnRateLimited, when set, is called for every attempt the service
	// answered 429, the last one included, before any retry: a caller
	// pacing several clients can move their shared schedule.
	OnRateLimited func(ctx context.Context, err *RateLimitedError)
	// OnAnswer, when set, is called for every answer the service sends,
	// whatever its status, as its headers arrive: a caller pacing against
	// the service's clock learns from its Date header where its seconds
	// begin.
	OnAnswer func(ctx context.Context, a Answer)
	// MaxImageBytes is the largest image Predict sends; a larger one is an
	// *InputError (ErrImageTooLarge) and nothing is sent. 0 means
	// imageformat.DefaultMaxImageBytes, the contract's 10 MB.
	MaxImageBytes int64
	// KeyHeader is the request header that carries the key. Default
	// KeyHeader (the contract's X-Service-Key); it must pass
	// keyheader.Check.
	KeyHeader string
	// MaxServerDelay caps every delay the service asks for, in any form
	// (Retry-After seconds or date, X-RateLimit-Retry-After seconds or Unix
	// time, a body's retry_after): the client waits at most this long, a
	// caller pacing on RateLimitedError.RetryAfter too, and a capped delay
	// is logged. 0 or less means DefaultMaxServerDelay.
	MaxServerDelay time.Duration

	// jitter returns a random duration in [0, d]; replaced in tests.
	jitter func(d time.Duration) time.Duration
}

// Answer is what Options.OnAnswer is told of one answer.
type Answer struct {
	Status int
	// Date is the answer's Date header as sent ("" when none): the
	// service's clock, in whole seconds, at some instant within RoundTrip.
	Date string
	// RoundTrip is the time from sending the request to receiving the
	// answer's headers, on the client's monotonic clock: the receiver
	// places it on its own clock, ending now.
	RoundTrip time.Duration
}

// Client calls the geolocation service. It is safe for concurrent use.
type Client struct {
	options Options
}

// New returns a Client for the service at baseURL, which must be an absolute
// http or https URL.
func New(baseURL string, optFns ...func(*Options)) (*Client, error) {
	o := Options{BaseURL: baseURL}
	for _, fn := range optFns {
		fn(&o)
	}
	if _, err := parseBaseURL(o.BaseURL); err != nil {
		return nil, err
	}
	o.setDefaults()
	if err := keyheader.Check(o.KeyHeader); err != nil {
		return nil, fmt.Errorf("geoapi: %w", err)
	}
	return &Client{options: o}, nil
}

// Options returns a copy of the client's options.
func (c *Client) Options() Options { return c.options }

// resolveOptions applies per-call option functions to a copy of the
// client's options.
func (c *Client) resolveOptions(optFns []func(*Options)) (Options, *url.URL, error) {
	o := c.options
	for _, fn := range optFns {
		fn(&o)
	}
	base, err := parseBaseURL(o.BaseURL)
	if err != nil {
		return o, nil, err
	}
	o.setDefaults()
	if err := keyheader.Check(o.KeyHeader); err != nil {
		return o, nil, fmt.Errorf("geoapi: %w", err)
	}
	return o, base, nil
}

// prepare resolves the per-call options and the key every operation sends:
// the input's own key, else the client's, validated before any call.
func (c *Client) prepare(optFns []func(*Options), inputKey string, keyRequired bool) (Options, *url.URL, string, error) {
	o, base, err := c.resolveOptions(optFns)
	if err != nil {
		return o, nil, "", err
	}
	key := inputKey
	if key == "" {
		key = o.APIKey
	}
	if err := validateKey(key, keyRequired); err != nil {
		return o, nil, "", err
	}
	return o, base, key, nil
}

func parseBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// *url.Error quotes the whole URL, which may hold a password.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("geoapi: invalid base URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("geoapi: invalid base URL %q: scheme must be http or https", redactURL(u))
	}
	if u.Host == "" {
		return nil, fmt.Errorf("geoapi: invalid base URL %q: no host", redactURL(u))
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("geoapi: invalid base URL %q: query and fragment are not allowed", redactURL(u))
	}
	return u, nil
}

// redactURL hides any user info so a password in a URL never reaches an error.
func redactURL(u *url.URL) string { return u.Redacted() }

func (o *Options) setDefaults() {
	if o.HTTPClient == nil {
		o.HTTPClient = defaultHTTPClient
	}
	if o.AttemptTimeout <= 0 {
		o.AttemptTimeout = DefaultAttemptTimeout
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	if o.BaseBackoff <= 0 {
		o.BaseBackoff = DefaultBaseBackoff
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	if o.MaxBackoff < o.BaseBackoff {
		o.MaxBackoff = o.BaseBackoff
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	if o.Sleep == nil {
		o.Sleep = sleepContext
	}
	if o.MaxImageBytes <= 0 {
		o.MaxImageBytes = imageformat.DefaultMaxImageBytes
	}
	if o.KeyHeader == "" {
		o.KeyHeader = KeyHeader
	}
	if o.MaxServerDelay <= 0 {
		o.MaxServerDelay = DefaultMaxServerDelay
	}
	if o.jitter == nil {
		o.jitter = fullJitter
	}
}

// defaultHTTPClient is shared so connections are reused across clients.
// Redirects are not followed: the service does not redirect, and following
// one would re-send (and re-charge) an upload or send the key elsewhere.
var defaultHTTPClient = &http.Client{
	Transport: &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: (&net.Dialer{
			Timeout:   10 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: 1 * time.Second,
	},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// endpoint joins the base URL's path with an operation path.
func endpoint(base *url.URL, path string, query url.Values) *url.URL {
	u := *base
	u.Path = strings.TrimRight(base.Path, "/") + path
	u.RawPath = ""
	u.RawQuery = query.Encode()
	return &u
}
