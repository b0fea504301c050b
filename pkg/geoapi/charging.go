package geoapi

import (
	"errors"
	"net/http"
	"slices"
	"strings"
)

// MaybeCharged reports whether the service may have charged for the call
// that returned err. It is the client's one charging rule: an error that may
// have been charged is never retried (see Retryable), since a retry could pay
// twice, and a caller must treat the outcome as unknown.
//
//	error                                              maybe charged  retried
//	-------------------------------------------------  -------------  -------
//	*TransportError, RequestSent (upload sent in full)  yes            no
//	*DecodeError (a 2xx that cannot be decoded)         yes            no
//	*ServerError 502, 504, other 5xx after the upload   yes            no
//	*ServerError 503 after the upload, no Retry-After   yes            no
//	*ServerError 503 with a retry delay (any form)      no             yes
//	*ServerError EXTERNAL_SERVICE_ERROR or              no             yes
//	  PREDICTION_FAILED (the service's own code)
//	*ServerError 500                                    no             yes
//	*ServerError before the upload was sent in full     no             yes
//	*TransportError before the upload was sent in full  no             yes
//	*RateLimitedError (429)                             no             yes
//	401, 402, 413, 422, other 4xx, *InputError          no             no
//	anything from Models, Credits or CheckKey           no             as above
//
// Why:
//   - The model needs the whole image, so nothing sent before the body was
//     complete can have been charged.
//   - A 503 with a retry delay is an explicit "come back later": the service
//     declined the work.
//   - The public backend answers 503 EXTERNAL_SERVICE_ERROR when its
//     inference server is down and 500 PREDICTION_FAILED when inference
//     failed; both are raised inside the prediction, and it takes credits
//     only after the prediction returned, so neither was charged.
//   - Any other 500 is the service's own application error, and the
//     contract reports charging only in the success envelope
//     (credits_consumed), so a 500 is taken as free. This is a decision,
//     not something the contract states.
//   - A gateway's 502 or 504, or any other 5xx after the upload, may come
//     after the model ran and charged: the answer was lost on the way.
//   - Models and Credits send no body, and CheckKey no image: none is ever
//     charged.
//
// A *DecodeError whose Operation is empty is counted as maybe charged, as
// the cautious reading.
func MaybeCharged(err error) bool {
	var (
		te *TransportError
		de *DecodeError
		se *ServerError
	)
	switch {
	case errors.As(err, &te):
		return te.RequestSent
	case errors.As(err, &de):
		return !freeOperation(de.Operation)
	case errors.As(err, &se):
		return se.maybeCharged()
	}
	return false
}

// maybeCharged applies the 5xx rows of the table in MaybeCharged.
func (e *ServerError) maybeCharged() bool {
	switch {
	case !e.RequestSent:
		return false
	case e.StatusCode == http.StatusInternalServerError:
		return false
	case e.StatusCode == http.StatusServiceUnavailable && (e.delayGiven || e.RetryAfter > 0):
		return false
	case slices.ContainsFunc(unchargedServerCodes, func(c string) bool { return strings.EqualFold(c, e.MessageCode) }):
		return false
	}
	return true
}

// unchargedServerCodes are the public backend's 5xx codes raised before it
// charges (see MaybeCharged). Only a body in the service's own envelope
// carries them: a gateway's page never does.
var unchargedServerCodes = []string{"EXTERNAL_SERVICE_ERROR", "PREDICTION_FAILED"}

// freeOperation reports whether op never costs credits.
func freeOperation(op string) bool {
	return op == opModels || op == opCredits || op == opCheckKey
}
