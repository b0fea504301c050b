package geoapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// errorBody is what could be understood of an error response. The contract
// does not specify error bodies, so every field is optional.
type errorBody struct {
	MessageCode string
	Message     string
	ModelID     string        // model_id or model, else a detail item's input
	RetryAfter  time.Duration // 0 when the body names no delay

	// What the body says about a rejected model or image (see newAPIError).
	RetiredCode    bool   // a code says the model is retired, unknown, ...
	DetailModel    bool   // a FastAPI detail item is located at model_id
	RetiredModelID string // retired_model or retired_model_id
	SizeCode       bool   // a code says the image is too large
	FileSizeDetail bool   // a FastAPI detail item at file speaks of its size
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
	codes := []string{rawString(m["message_code"]), rawString(m["code"]), errorCode(m["error"])}
	out.RetiredCode = slices.ContainsFunc(codes, isRetiredModelCode)
	out.SizeCode = slices.ContainsFunc(codes, isTooLargeCode)
	out.ModelID = rawString(m["model_id"])
	if out.ModelID == "" {
		out.ModelID = rawString(m["model"])
	}
	detailModel, atModel := detailModelID(m["detail"])
	out.DetailModel = atModel
	if out.ModelID == "" {
		out.ModelID = detailModel
	}
	out.RetiredModelID = rawString(m["retired_model_id"])
	if out.RetiredModelID == "" {
		out.RetiredModelID = rawString(m["retired_model"])
	}
	out.FileSizeDetail = detailFileSize(m["detail"])
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
// model_id, which names the rejected model, and whether there is such an item.
func detailModelID(raw json.RawMessage) (string, bool) {
	for _, it := range detailItems(raw) {
		if lastLoc(it.Loc) == "model_id" {
			return rawString(it.Input), true
		}
	}
	return "", false
}

// detailFileSize reports a FastAPI detail item located at the file whose
// message is about its size.
func detailFileSize(raw json.RawMessage) bool {
	for _, it := range detailItems(raw) {
		if lastLoc(it.Loc) == "file" && containsAny(strings.ToLower(it.Msg), "size", "large", "exceed", "bytes", "limit") {
			return true
		}
	}
	return false
}

func detailItems(raw json.RawMessage) []detailItem {
	var items []detailItem
	if len(raw) == 0 || json.Unmarshal(raw, &items) != nil {
		return nil
	}
	return items
}

func lastLoc(loc []any) string {
	if len(loc) == 0 {
		return ""
	}
	return fmt.Sprint(loc[len(loc)-1])
}

// errorCode returns error.code of {"error":{"code":...}}.
func errorCode(raw json.RawMessage) string {
	var obj map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &obj) != nil {
		return ""
	}
	return rawString(obj["code"])
}

// isRetiredModelCode recognises codes such as model_retired, unknown_model,
// invalid_model_id or model_not_available: the service saying that the model
// itself is refused, which a message merely naming the model does not.
func isRetiredModelCode(code string) bool {
	c := strings.ToLower(code)
	return strings.Contains(c, "model") && containsAny(c,
		"retired", "unknown", "not_found", "notfound", "invalid", "unavailable", "not_available", "deprecated")
}

// isTooLargeCode recognises codes such as payload_too_large or
// file_size_exceeded.
func isTooLargeCode(code string) bool {
	c := strings.ToLower(code)
	return containsAny(c, "too_large", "size")
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
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
// from everything taken from the body; requestedModel is the model_id sent,
// named in a retired-model 422 whose body does not name the model itself.
func newAPIError(op string, status int, header http.Header, body []byte, key, requestedModel string) error {
	// Invalid bytes are dropped before redacting, so that dropping them
	// later cannot join two halves of a key; parsed fields are redacted again
	// because JSON escapes can spell the key without it appearing raw.
	redacted := redact(strings.ToValidUTF8(string(body), ""), key)
	parsed := parseErrorBody([]byte(redacted))
	parsed.MessageCode = redact(parsed.MessageCode, key)
	parsed.Message = redact(parsed.Message, key)
	parsed.ModelID = redact(parsed.ModelID, key)
	parsed.RetiredModelID = redact(parsed.RetiredModelID, key)
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
	case status == http.StatusRequestEntityTooLarge,
		status == http.StatusUnprocessableEntity && (parsed.SizeCode || parsed.FileSizeDetail):
		return &TooLargeError{base}
	case status == http.StatusUnprocessableEntity:
		return &ValidationError{APIError: base, RetiredModelID: retiredModel(parsed, requestedModel)}
	case status == http.StatusTooManyRequests:
		delay, ok := headerRetryAfter(header, time.Now())
		if !ok {
			delay = parsed.RetryAfter
		}
		return &RateLimitedError{APIError: base, RetryAfter: delay}
	case status >= 500:
		delay, ok := headerRetryAfter(header, time.Now())
		return &ServerError{APIError: base, RetryAfter: delay, retryAfterHeader: ok}
	}
	return &base
}

// retiredModel returns the model a 422 rejects as retired, or "" when the
// 422 is about something else. Only the service's own words count: a code
// saying so, a detail item at model_id, or a retired_model field. A message
// that merely contains the model id (say, about top_n) is not a retirement.
func retiredModel(p errorBody, requestedModel string) string {
	switch {
	case p.RetiredModelID != "":
		return p.RetiredModelID
	case p.RetiredCode && p.ModelID != "":
		return p.ModelID
	case p.RetiredCode, p.DetailModel:
		if requestedModel != "" {
			return requestedModel
		}
		return p.ModelID
	}
	return ""
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
