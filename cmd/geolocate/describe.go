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
		return apiError("unauthorized", &unauthorized.APIError, "check GEO_API_KEY or --secret-id")
	case errors.As(err, &noCredits):
		return apiError("out of credits", &noCredits.APIError, "")
	case errors.As(err, &validation):
		if validation.RetiredModelID != "" {
			return apiError("model rejected", &validation.APIError,
				fmt.Sprintf("%s is not served; see geolocate models, or omit --model", validation.RetiredModelID))
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
		return fmt.Errorf("%s: %s (nothing sent, nothing charged)", input.Field, input.Reason)
	case errors.As(err, &transport):
		return withAttempts(fmt.Errorf("cannot reach the service: %v", transport.Err), err)
	case errors.As(err, &layout):
		return errors.New(strings.TrimPrefix(layout.Error(), "geoapi: "))
	case errors.As(err, &decode):
		return fmt.Errorf("unreadable answer (HTTP %d; the call may have been charged): %v", decode.StatusCode, decode.Err)
	}
	return errors.New(strings.TrimPrefix(err.Error(), "geoapi: "))
}

// apiError formats "what (status): service message; hint".
func apiError(what string, e *geoapi.APIError, hint string) error {
	detail := e.Message
	if detail == "" {
		detail = e.MessageCode
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
