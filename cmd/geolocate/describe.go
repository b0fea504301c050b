package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
)

// describe turns a client error into the operator's wording, keeping the
// service's message: "out of credits (402): ...".
func describe(err error) error {
	var (
		unauthorized *geoapi.UnauthorizedError
		noCredits    *geoapi.OutOfCreditsError
		validation   *geoapi.ValidationError
		limited      *geoapi.RateLimitedError
		server       *geoapi.ServerError
		apiErr       *geoapi.APIError
		input        *geoapi.InputError
		transport    *geoapi.TransportError
		layout       *geoapi.LayoutError
		decode       *geoapi.DecodeError
	)
	switch {
	case errors.As(err, &unauthorized):
		return describeUnauthorized(unauthorized)
	case errors.As(err, &noCredits):
		return apiError("out of credits", &noCredits.APIError, "")
	case errors.As(err, &validation):
		if id := validation.RetiredModelID; id != "" {
			return modelRejected(id, &validation.APIError)
		}
		return apiError("rejected", &validation.APIError, "")
	case errors.As(err, &limited):
		hint := ""
		if limited.RetryAfter > 0 {
			hint = "retry after " + limited.RetryAfter.String()
		}
		return withAttempts(apiError("rate limited", &limited.APIError, hint), err)
	case errors.As(err, &server):
		return withAttempts(apiError("service error", &server.APIError, ""), err)
	case errors.As(err, &apiErr):
		return apiError("request failed", apiErr, "")
	case errors.As(err, &input):
		return inputError(input)
	case errors.As(err, &transport):
		return withAttempts(fmt.Errorf("cannot reach the service: %v", transport.Err), err)
	case errors.As(err, &layout):
		return errors.New(strings.TrimPrefix(layout.Error(), "geoapi: "))
	case errors.As(err, &decode):
		return fmt.Errorf("unreadable answer (HTTP %d; the call may have been charged): %v", decode.StatusCode, decode.Err)
	}
	return errors.New(strings.TrimPrefix(err.Error(), "geoapi: "))
}

// modelRejected words a 422 that refused the requested model. The service
// answers the same way (model_retired, "model X is retired") for a model it
// retired and for an id it never had, so the message claims neither: it
// says what is certain, that the id is not in the model list, and how to
// find one that is.
func modelRejected(id string, e *geoapi.APIError) error {
	return fmt.Errorf("model %q is not in the service's model list (%d); run geolocate models to see the models you can use, or leave --model out for the default model",
		id, e.StatusCode)
}

// inputError words input the client refused before the call. The text is
// geoapi.InputError's, written for people and free of the key; this adds
// what it cost.
func inputError(e *geoapi.InputError) error {
	msg := strings.TrimPrefix(e.Error(), "geoapi: ")
	if e.Sending {
		return fmt.Errorf("%s; the upload was stopped, nothing charged", msg)
	}
	if errors.Is(e.Err, geoapi.ErrImageTooLarge) {
		// predict sends files as they are; the pipeline does not refuse.
		return fmt.Errorf("%s; nothing sent, nothing charged (the pipeline re-encodes such a photo to fit: make run IMAGES=<its folder>, or a deployed stack with oversize=downscale, the default)", msg)
	}
	return fmt.Errorf("%s; nothing sent, nothing charged", msg)
}

// apiError formats "what (status): service message; hint".
func apiError(what string, e *geoapi.APIError, hint string) error {
	detail := e.Message
	switch {
	case detail == "":
		detail = e.MessageCode
	case e.Detail != "":
		detail += " (" + e.Detail + ")"
	}
	if detail == "" {
		detail = strings.Join(strings.Fields(e.Body), " ")
		if len(detail) > 120 {
			detail = detail[:120] + "..."
		}
	}
	msg := fmt.Sprintf("%s (%d)", what, e.StatusCode)
	if detail != "" {
		msg += ": " + detail
	}
	if hint != "" {
		msg += "; " + hint
	}
	return errors.New(msg)
}

func withAttempts(e, orig error) error {
	if n := geoapi.Attempts(orig); n > 1 {
		return fmt.Errorf("%w (after %d attempts)", e, n)
	}
	return e
}
