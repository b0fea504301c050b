package geoapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// errorBody is what could be understood of an error response. The contract
// does not specify error bodies, so every field is optional.
type errorBody struct {
	MessageCode string
	Message     string
	ModelID     string
	RetryAfter  time.Duration // 0 when the body names no delay
}

// parseErrorBody reads the common shapes: {"message_code","message"},
// FastAPI's {"detail": "..."} or {"detail": [{"loc":[...],"msg":"..."}]},
// {"error": "..."} or {"error": {"code","message"}}, plus model_id / model and
// retry_after / retry_after_ms / data.retry_after. Unknown shapes give a zero
// errorBody; it never fails.
func parseErrorBody(body []byte) errorBody {
	var out errorBody
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil || m == nil {
		return out
	}
	out.MessageCode = rawString(m["message_code"])
	if out.MessageCode == "" {
		out.MessageCode = rawString(m["code"])
	}
	out.Message = rawString(m["message"])
	if detail, ok := m["detail"]; ok && out.Message == "" {
		out.Message = detailMessage(detail)
	}
	if e, ok := m["error"]; ok {
		var obj map[string]json.RawMessage
		if json.Unmarshal(e, &obj) == nil && obj != nil {
			if out.MessageCode == "" {
				out.MessageCode = rawString(obj["code"])
			}
			if out.Message == "" {
				out.Message = rawString(obj["message"])
			}
		} else if out.Message == "" {
			out.Message = rawString(e)
		}
	}
	out.ModelID = rawString(m["model_id"])
	if out.ModelID == "" {
		out.ModelID = rawString(m["model"])
	}
	if out.ModelID == "" {
		out.ModelID = detailModelID(m["detail"])
	}
	out.RetryAfter = bodyRetryAfter(m)
	out.MessageCode = oneLine(out.MessageCode, 100)
	out.Message = oneLine(out.Message, 500)
	return out
}

type detailItem struct {
	Loc   []any           `json:"loc"`
	Msg   string          `json:"msg"`
	Input json.RawMessage `json:"input"`
}

// detailMessage renders FastAPI's detail, a string or a list of items.
func detailMessage(raw json.RawMessage) string {
	if s := rawString(raw); s != "" {
		return s
	}
	var items []detailItem
	if json.Unmarshal(raw, &items) != nil {
		return ""
	}
	parts := make([]string, 0, len(items))
	for _, it := range items {
		if it.Msg == "" {
			continue
		}
		if loc := joinLoc(it.Loc); loc != "" {
			parts = append(parts, loc+": "+it.Msg)
		} else {
			parts = append(parts, it.Msg)
		}
	}
	return strings.Join(parts, "; ")
}

// detailModelID returns the input of a FastAPI detail item located at
// model_id, which names the rejected model.
func detailModelID(raw json.RawMessage) string {
	var items []detailItem
	if len(raw) == 0 || json.Unmarshal(raw, &items) != nil {
		return ""
	}
	for _, it := range items {
		if len(it.Loc) > 0 && fmt.Sprint(it.Loc[len(it.Loc)-1]) == "model_id" {
			return rawString(it.Input)
		}
	}
	return ""
}

func joinLoc(loc []any) string {
	parts := make([]string, 0, len(loc))
	for _, l := range loc {
		parts = append(parts, fmt.Sprint(l))
	}
	return strings.Join(parts, ".")
}

// rawString returns a JSON string's value, or "" for anything else.
func rawString(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// bodyRetryAfter reads retry_after (seconds), retry_after_ms, or
// data.retry_after (seconds).
func bodyRetryAfter(m map[string]json.RawMessage) time.Duration {
	if secs, ok := rawNumber(m["retry_after"]); ok {
		return secondsToDuration(secs)
	}
	if ms, ok := rawNumber(m["retry_after_ms"]); ok {
		return secondsToDuration(ms / 1000)
	}
	var data map[string]json.RawMessage
	if json.Unmarshal(m["data"], &data) == nil {
		if secs, ok := rawNumber(data["retry_after"]); ok {
			return secondsToDuration(secs)
		}
	}
	return 0
}

// rawNumber accepts a JSON number or a numeric string.
func rawNumber(raw json.RawMessage) (float64, bool) {
	if len(raw) == 0 {
		return 0, false
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return 0, false
	}
	return toNumber(v)
}

// newAPIError builds the typed error for a non-2xx response. key is removed
// from everything taken from the body; requestedModel helps recognise a
// retired-model 422 whose body names the model only in its message.
func newAPIError(op string, status int, header http.Header, body []byte, key, requestedModel string) error {
	// Invalid bytes are dropped before redacting, so that dropping them
	// later cannot join two halves of a key; parsed fields are redacted again
	// because JSON escapes can spell the key without it appearing raw.
	redacted := redact(strings.ToValidUTF8(string(body), ""), key)
	parsed := parseErrorBody([]byte(redacted))
	parsed.MessageCode = redact(parsed.MessageCode, key)
	parsed.Message = redact(parsed.Message, key)
	parsed.ModelID = redact(parsed.ModelID, key)
	base := APIError{
		StatusCode:  status,
		MessageCode: parsed.MessageCode,
		Message:     parsed.Message,
		Body:        excerpt(redacted, maxErrorExcerpt),
		Operation:   op,
	}
	switch {
	case status == http.StatusUnauthorized:
		return &UnauthorizedError{base}
	case status == http.StatusPaymentRequired:
		return &OutOfCreditsError{base}
	case status == http.StatusUnprocessableEntity:
		model := parsed.ModelID
		if model == "" && requestedModel != "" && strings.Contains(parsed.Message, requestedModel) {
			model = requestedModel
		}
		return &ValidationError{APIError: base, RetiredModelID: model}
	case status == http.StatusTooManyRequests:
		delay, ok := headerRetryAfter(header, time.Now())
		if !ok {
			delay = parsed.RetryAfter
		}
		return &RateLimitedError{APIError: base, RetryAfter: delay}
	case status >= 500:
		return &ServerError{base}
	}
	return &base
}

// excerpt cuts s to at most n bytes.
func excerpt(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// A cut in the middle of a multi-byte sequence leaves invalid bytes at
	// the end; dropping invalid bytes keeps the excerpt printable.
	return strings.ToValidUTF8(s[:n], "")
}
