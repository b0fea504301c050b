package predictor

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
)

// Error codes of failed records.
const (
	CodeUnauthorized      = "unauthorized"
	CodeOutOfCredits      = "out_of_credits"
	CodeModelRetired      = "model_retired"
	CodeValidation        = "validation_error"
	CodeRateLimited       = "rate_limited"
	CodeServerError       = "server_error"
	CodeTransport         = "transport_error"
	CodeMalformedResponse = "malformed_response"
	CodeStorage           = "storage_error"
	CodeRateWait          = "rate_wait_timeout"
	CodeInvalidKey        = "invalid_key"
	CodeKeyUnavailable    = "key_unavailable" // the secret cannot be read or holds no geo_ key (the placeholder)
	CodeInvalidInput      = "invalid_input"
	CodeRejectedByService = "rejected_by_service"
	CodeUnexpected        = "unexpected_error"
	CodeOutcomeUnknown    = ledger.ErrorCodeOutcomeUnknown
)

// failure classifies an error of the paid call.
type failure struct {
	code string
	// retryable: the service certainly did not charge, so a later delivery
	// may claim and call again.
	retryable bool
	// maybeCharged: the service may have charged (geoapi.MaybeCharged), so
	// the reserved budget is kept and the object is never called again.
	maybeCharged bool
}

// errRateWait is returned when the pacer has no call slot free before the
// invocation's deadline.
var errRateWait = errors.New("no call slot free before the invocation deadline")

func classifyFailure(err error) failure {
	var (
		unauthorized *geoapi.UnauthorizedError
		outOfCredits *geoapi.OutOfCreditsError
		validation   *geoapi.ValidationError
		rateLimited  *geoapi.RateLimitedError
		server       *geoapi.ServerError
		transport    *geoapi.TransportError
		decode       *geoapi.DecodeError
		input        *geoapi.InputError
		source       *sourceError
		api          *geoapi.APIError
	)
	switch {
	case errors.As(err, &decode):
		// A 2xx the client could not read: the work was done and probably
		// charged. Never call again for this object version.
		return failure{code: CodeMalformedResponse, maybeCharged: true}
	case geoapi.MaybeCharged(err):
		// The upload reached the service in full and no usable answer came
		// back (no response, a gateway's 502 or 504): it may have been
		// processed and charged. At most one paid call per object version,
		// so this is final; an operator can requeue the object deliberately.
		return failure{code: CodeOutcomeUnknown, maybeCharged: true}
	case errors.As(err, &unauthorized):
		return failure{code: CodeUnauthorized, retryable: true}
	case errors.As(err, &outOfCredits):
		return failure{code: CodeOutOfCredits, retryable: true}
	case errors.As(err, &validation):
		if validation.MessageCode == CodeModelRetired || validation.RetiredModelID != "" {
			return failure{code: CodeModelRetired}
		}
		return failure{code: CodeValidation}
	case errors.As(err, &rateLimited):
		return failure{code: CodeRateLimited, retryable: true}
	case errors.As(err, &server):
		return failure{code: CodeServerError, retryable: true}
	case errors.As(err, &source):
		return failure{code: CodeStorage, retryable: true}
	case errors.As(err, &transport), errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return failure{code: CodeTransport, retryable: true}
	case errors.Is(err, errRateWait), errors.Is(err, errNoTimeToRetry):
		return failure{code: CodeRateWait, retryable: true}
	case errors.As(err, &input):
		if errors.Is(err, geoapi.ErrInvalidKey) {
			// A bad secret value: fixable without touching the object.
			return failure{code: CodeInvalidKey, retryable: true}
		}
		return failure{code: CodeInvalidInput}
	case errors.As(err, &api):
		switch api.StatusCode {
		case http.StatusForbidden, http.StatusNotFound:
			// A permission or address problem of the deployment, not of
			// the image: retried until fixed, then the dead-letter queue.
			return failure{code: CodeRejectedByService, retryable: true}
		}
		return failure{code: CodeRejectedByService}
	}
	return failure{code: CodeUnexpected, retryable: true}
}

// failureDetail is the error message recorded for a failure: what went
// wrong and, where the operator can act, what to do.
func failureDetail(f failure, err error) string {
	switch f.code {
	case CodeInvalidKey:
		return "the secret does not hold a geo_ key (still the placeholder written at deploy?): put the key in the secret; " + err.Error()
	case CodeOutcomeUnknown:
		return "the service may have charged and no usable answer came back, so it is not called again (requeue deliberately with geolocate backfill --requeue-unknown): " + err.Error()
	case CodeOutOfCredits:
		// The figures the service gave are kept in the record: how much to
		// top up at least.
		var oc *geoapi.OutOfCreditsError
		if errors.As(err, &oc) && oc.CreditsRequired != nil {
			detail := fmt.Sprintf("credits_required=%d", *oc.CreditsRequired)
			if oc.CreditsAvailable != nil {
				detail += fmt.Sprintf(" credits_available=%d", *oc.CreditsAvailable)
			}
			return detail + ": " + err.Error()
		}
	}
	return err.Error()
}

// retiredModel reports whether err is the 422 naming model as retired.
func retiredModel(err error, model string) bool {
	var v *geoapi.ValidationError
	if !errors.As(err, &v) {
		return false
	}
	return v.RetiredModelID == model
}

// chargedFailure is the result fields of a 2xx answer the client could not
// use (a malformed response) when it says what it charged: its credits and
// its raw body (bounded by the ledger), recorded by FailCharged so the paid
// call is never recorded as free. nil for any other failure.
func chargedFailure(obj *object, res callResult, f failure) *ledger.Record {
	var de *geoapi.DecodeError
	if f.code != CodeMalformedResponse || !errors.As(res.err, &de) || de.CreditsConsumed == nil {
		return nil
	}
	return &ledger.Record{
		Size:            obj.Size,
		ContentType:     obj.contentType,
		CreditsConsumed: *de.CreditsConsumed,
		RawResult:       de.Body,
		Source:          ledger.SourceService,
	}
}
