package geosim

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
)

// errorBody is the simulator's error layout (the contract does not show one;
// this follows the success envelope's message_code).
type errorBody struct {
	MessageCode string        `json:"message_code"`
	Message     string        `json:"message"`
	ModelID     string        `json:"model_id,omitempty"`
	Detail      []fieldDetail `json:"detail,omitempty"`
	RetryAfter  *float64      `json:"retry_after,omitempty"`
}

// fieldDetail is a FastAPI-style validation detail.
type fieldDetail struct {
	Loc  []string `json:"loc"`
	Msg  string   `json:"msg"`
	Type string   `json:"type,omitempty"`
}

// Message codes of the simulator's error bodies.
const (
	CodeSuccess          = "success"
	CodeUnauthorized     = "unauthorized"
	CodeOutOfCredits     = "insufficient_credits"
	CodeValidation       = "validation_error"
	CodeModelRetired     = "model_retired"
	CodeModelNotGranted  = "model_not_available"
	CodeModelDown        = "model_unavailable"
	CodeTooLarge         = "payload_too_large"
	CodeUnsupportedMedia = "unsupported_media_type"
	CodeRateLimited      = "rate_limited"
	CodeInternal         = "internal_error"
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

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, errorBody{MessageCode: code, Message: msg})
}

// drainBody discards what is left of the request body before an error is
// written, up to the upload limit plus form overhead: enough for any
// accepted upload, so a client still sending its image reads the error
// instead of a connection reset.
func (s *Server) drainBody(r *http.Request) {
	_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, s.cfg.MaxImageBytes+1<<20))
}
