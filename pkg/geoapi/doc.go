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
// honouring any delay the service asks for.
//
// The API key is sent only in the X-Service-Key header and is never written
// to a log line or an error message.
package geoapi
