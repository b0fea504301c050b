// Package geoapi is a client for the image geolocation service.
//
// It is shaped like an aws-sdk-go-v2 service client: New builds a Client
// from Options, each operation (Predict, Models, Credits) takes an input
// struct and optional per-call option functions and returns an output struct.
//
// Every prediction call costs credits, so the client checks everything it can
// before sending (key prefix, image size and type, top_n range), streams the
// image instead of buffering it, and never retries a response that may have
// been charged: a 2xx it cannot decode, or an upload that was sent in full
// before the connection failed or the attempt timed out (the service may have
// done the work; TransportError.RequestSent). Throttling (429), server errors
// (5xx) and other transport failures are retried with capped exponential
// backoff and full jitter, honouring any delay the service asks for.
//
// The API key is sent only in the X-Service-Key header and is never written
// to a log line or an error message.
package geoapi
