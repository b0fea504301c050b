package geosim

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
)

// errorBody is the public backend's error layout (the contract shows none):
// {"message_code","message","details"}, codes in upper case.
type errorBody struct {
	MessageCode string         `json:"message_code"`
	Message     string         `json:"message"`
	Details     map[string]any `json:"details"`
}

// validationError is one item of details.validation_errors, FastAPI's
// shape, which the backend passes on.
type validationError struct {
	Type  string   `json:"type"`
	Loc   []string `json:"loc"`
	Msg   string   `json:"msg"`
	Input any      `json:"input,omitempty"`
}

// Message codes of the simulator's answers, the public backend's.
const (
	CodeSuccess             = "success" // the contract's; ProfileBackend answers CodeSuccessBackend
	CodeSuccessBackend      = "SUCCESS"
	CodeAuthRequired        = "AUTH_REQUIRED"
	CodeUnauthorized        = "UNAUTHORIZED"
	CodeInvalidKey          = "INVALID_API_KEY"
	CodeOutOfCredits        = "INSUFFICIENT_CREDITS"
	CodeInvalidInput        = "INVALID_INPUT"
	CodeTooLarge            = "FILE_TOO_LARGE"
	CodeInvalidFileType     = "INVALID_FILE_TYPE"
	CodeRateLimited         = "RATE_LIMIT_EXCEEDED"
	CodeExternalService     = "EXTERNAL_SERVICE_ERROR"
	CodePredictionFailed    = "PREDICTION_FAILED"
	CodeInternal            = "INTERNAL_ERROR"
	keysNotAllowedHereWords = "API keys not allowed for this endpoint. Use frontend application."
)

func marshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		// Only the simulator's own types are marshalled; this is a bug.
		panic("geosim: marshal response: " + err.Error())
	}
	return b
}

func writeRaw(w http.ResponseWriter, status int, contentType string, body []byte) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	writeRaw(w, status, "application/json", marshal(v))
}

// newError is an error body with details (nil: {}).
func newError(code, msg string, details map[string]any) errorBody {
	if details == nil {
		details = map[string]any{}
	}
	return errorBody{MessageCode: code, Message: msg, Details: details}
}

// drainBody discards what is left of the request body before an error is
// written, up to the upload limit plus form overhead: enough for any
// accepted upload, so a client still sending its image reads the error
// instead of a connection reset.
func (s *Server) drainBody(r *http.Request) {
	_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, s.cfg.MaxImageBytes+1<<20))
}
