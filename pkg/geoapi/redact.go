package geoapi

import (
	"bytes"
	"strings"
)

// redact removes every occurrence of the API key from s: an error body that
// echoes the key must not carry it into errors or logs.
func redact(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, redactedMark)
}

// redactedMark shows where the key was removed.
const redactedMark = "[REDACTED]"

// redactErr makes sure an error from the transport or a decoder cannot carry
// the key.
func redactErr(err error, key string) error {
	if key == "" || err == nil {
		return err
	}
	msg := err.Error()
	if redacted := redact(msg, key); redacted != msg {
		return &redactedError{msg: redacted, err: err}
	}
	return err
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// redactBody returns body without the key, or body itself when it holds none.
func redactBody(body []byte, key string) []byte {
	if key == "" || !bytes.Contains(body, []byte(key)) {
		return body
	}
	return bytes.ReplaceAll(body, []byte(key), []byte(redactedMark))
}
