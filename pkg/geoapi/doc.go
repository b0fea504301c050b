// Package geoapi is a client for the image geolocation service.
//
// It is shaped like an aws-sdk-go-v2 service client: New builds a Client
// from Options, each operation (Predict, Models, Credits) takes an input
// struct and optional per-call option functions and returns an output struct.
//
// Every prediction call costs credits, so the client checks everything it can
// before sending (key prefix, image size and type, top_n range), streams the
// image instead of buffering it, and never retries an error that may have
// been charged. MaybeCharged holds that rule in one place: an upload sent in
// full before the connection failed, a 2xx it cannot decode, or a 502, 504 or
// other unexplained 5xx after the upload. Throttling (429), a 500, a 503 with
// a retry delay, any 5xx before the upload was complete and other transport
// failures are retried with capped exponential backoff and full jitter,
// honouring any delay the service asks for, in whichever form it asks
// (Retry-After, X-RateLimit-Retry-After, a body's retry_after), capped at
// Options.MaxServerDelay.
//
// The client reads the contract's shapes and those of the service's public
// backend (upper-case codes in {"message_code","message","details"}, 400 for
// a file's size or type, keys refused off the prediction endpoint, vehicle
// and property results): see docs/service-assumptions.md. CheckKey tells
// whether the prediction endpoint accepts a key without a prediction.
//
// The API key is sent only in the configured header (Options.KeyHeader,
// the contract's X-Service-Key by default) and is never written to a log
// line or an error message.
package geoapi
