package geoapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"
)

// errorBody is what could be understood of an error response. The contract
// does not specify error bodies, so every field is optional. The public
// backend answers {"message_code","message","details":{...}} with codes in
// upper case; FastAPI's own {"detail": ...} and {"error": ...} are read too.
type errorBody struct {
	MessageCode string
	Message     string
	Detail      string // details.description, or the validation errors in one line
	ModelID     string // model_id or model, else a validation error's input

	// Delay is the delay the body asks for, in seconds (retry_after,
	// retry_after_ms, data.retry_after, details.retry_after), and
	// DelayFound whether it names one at all.
	Delay      float64
	DelayFound bool

	// CreditsRequired and CreditsAvailable are a 402's figures.
	CreditsRequired, CreditsAvailable *int

	// What the body says about a rejected model or image (see newAPIError).
	RetiredCode    bool   // a code says the model is retired, unknown, ...
	DetailModel    bool   // a validation error is located at model_id
	RetiredModelID string // retired_model or retired_model_id
	SizeCode       bool   // a code says the image is too large
	FileSizeDetail bool   // a validation error at file speaks of its size
	FileTypeCode   bool   // a code says the file type is refused
}

// parseErrorBody reads the common shapes: {"message_code","message",
// "details"}, FastAPI's {"detail": "..."} or {"detail": [{"loc":[...],
// "msg":"..."}]}, {"error": "..."} or {"error": {"code","message"}}, plus
// model_id / model and the delay fields. Unknown shapes give a zero
// errorBody; it never fails.
func parseErrorBody(body []byte) errorBody {
	var out errorBody
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil || m == nil {
		return out
	}
	var details map[string]json.RawMessage
	if json.Unmarshal(m["details"], &details) != nil {
		details = nil
	}
	// The validation errors: FastAPI's detail list, or the backend's
	// details.validation_errors (the same items under another name).
	validation := m["detail"]
	if len(detailItems(validation)) == 0 && details != nil {
		validation = details["validation_errors"]
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
	if details != nil {
		out.Detail = rawString(details["description"])
		if items := detailMessage(details["validation_errors"]); items != "" {
			out.Detail = strings.TrimPrefix(out.Detail+": "+items, ": ")
		}
		out.CreditsRequired = rawInt(details["credits_required"], details["required_credits"])
		out.CreditsAvailable = rawInt(details["available_credits"], details["credits_available"])
	}
	codes := []string{rawString(m["message_code"]), rawString(m["code"]), errorCode(m["error"])}
	out.RetiredCode = slices.ContainsFunc(codes, isRetiredModelCode)
	out.SizeCode = slices.ContainsFunc(codes, isTooLargeCode)
	out.FileTypeCode = slices.ContainsFunc(codes, isFileTypeCode)
	out.ModelID = rawString(m["model_id"])
	if out.ModelID == "" {
		out.ModelID = rawString(m["model"])
	}
	if out.ModelID == "" && details != nil {
		out.ModelID = rawString(details["model_id"])
	}
	detailModel, atModel := detailModelID(validation)
	out.DetailModel = atModel
	if out.ModelID == "" {
		out.ModelID = detailModel
	}
	out.RetiredModelID = rawString(m["retired_model_id"])
	if out.RetiredModelID == "" {
		out.RetiredModelID = rawString(m["retired_model"])
	}
	out.FileSizeDetail = detailFileSize(validation)
	out.Delay, out.DelayFound = bodyDelay(m, details)
	out.MessageCode = oneLine(out.MessageCode, 100)
	out.Message = oneLine(out.Message, 500)
	out.Detail = oneLine(out.Detail, 500)
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

// isTooLargeCode recognises codes such as payload_too_large,
// FILE_TOO_LARGE or file_size_exceeded.
func isTooLargeCode(code string) bool {
	c := strings.ToLower(code)
	return containsAny(c, "too_large", "size")
}

// isFileTypeCode recognises codes such as INVALID_FILE_TYPE,
// unsupported_media_type or unsupported_format: the file's type refused.
func isFileTypeCode(code string) bool {
	c := strings.ToLower(code)
	return containsAny(c, "file_type", "media_type", "unsupported_format", "invalid_format", "mime")
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

// bodyDelay reads the delay a body asks for, in seconds: retry_after,
// retry_after_ms, data.retry_after or details.retry_after (the public
// backend's 429), and whether it names one.
func bodyDelay(m, details map[string]json.RawMessage) (float64, bool) {
	if secs, ok := rawNumber(m["retry_after"]); ok {
		return secs, true
	}
	if ms, ok := rawNumber(m["retry_after_ms"]); ok {
		return ms / 1000, true
	}
	if secs, ok := rawNumber(details["retry_after"]); ok {
		return secs, true
	}
	var data map[string]json.RawMessage
	if json.Unmarshal(m["data"], &data) == nil {
		if secs, ok := rawNumber(data["retry_after"]); ok {
			return secs, true
		}
	}
	return 0, false
}

// rawInt returns the first of raws that holds a whole number, or nil.
func rawInt(raws ...json.RawMessage) *int {
	for _, raw := range raws {
		if f, ok := rawNumber(raw); ok && f == math.Trunc(f) && math.Abs(f) <= math.MaxInt32 {
			n := int(f)
			return &n
		}
	}
	return nil
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
// A delay the service asks for is set as requested; the caller caps it
// (Options.capDelay).
func newAPIError(op string, status int, header http.Header, body []byte, key, requestedModel string, now time.Time) error {
	// Invalid bytes are dropped before redacting, so that dropping them
	// later cannot join two halves of a key; parsed fields are redacted again
	// because JSON escapes can spell the key without it appearing raw.
	redacted := redact(strings.ToValidUTF8(string(body), ""), key)
	parsed := parseErrorBody([]byte(redacted))
	parsed.MessageCode = redact(parsed.MessageCode, key)
	parsed.Message = redact(parsed.Message, key)
	parsed.Detail = redact(parsed.Detail, key)
	parsed.ModelID = redact(parsed.ModelID, key)
	parsed.RetiredModelID = redact(parsed.RetiredModelID, key)
	base := APIError{
		StatusCode:  status,
		MessageCode: parsed.MessageCode,
		Message:     parsed.Message,
		Detail:      parsed.Detail,
		Body:        excerpt(redacted, maxErrorExcerpt),
		Operation:   op,
	}
	// Refusals of the file's content: 400 (the backend), 413/415, or a 422
	// whose code or file detail says so.
	content := status == http.StatusBadRequest || status == http.StatusUnprocessableEntity
	switch {
	case status == http.StatusUnauthorized:
		return &UnauthorizedError{base}
	case status == http.StatusPaymentRequired:
		return &OutOfCreditsError{APIError: base, CreditsRequired: parsed.CreditsRequired, CreditsAvailable: parsed.CreditsAvailable}
	case status == http.StatusRequestEntityTooLarge,
		content && (parsed.SizeCode || parsed.FileSizeDetail):
		return &TooLargeError{base}
	case status == http.StatusUnsupportedMediaType, content && parsed.FileTypeCode:
		return &UnsupportedFormatError{base}
	case status == http.StatusUnprocessableEntity:
		return &ValidationError{APIError: base, RetiredModelID: retiredModel(parsed, requestedModel)}
	case status == http.StatusTooManyRequests:
		d, source, _ := serverDelay(header, parsed, now)
		return &RateLimitedError{APIError: base, RetryAfter: d, RequestedRetryAfter: d, DelaySource: source}
	case status >= 500:
		d, source, given := serverDelay(header, parsed, now)
		return &ServerError{APIError: base, RetryAfter: d, RequestedRetryAfter: d, DelaySource: source, delayGiven: given}
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
