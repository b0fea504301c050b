package geoapi

import (
	"context"
	"errors"
	"net/http"
	"testing"
)

func TestCheckKey(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		body     string
		accepted bool
	}{
		{"backend: validation refused after the key passed", http.StatusUnprocessableEntity,
			`{"message_code":"INVALID_INPUT","message":"Invalid input provided","details":{"validation_errors":[{"loc":["body","file"],"msg":"Field required"}]}}`, true},
		{"a 400 about the content", http.StatusBadRequest, `{"message_code":"INVALID_FILE_TYPE"}`, true},
		{"no credits: the key is known", http.StatusPaymentRequired, `{"message_code":"INSUFFICIENT_CREDITS"}`, true},
		{"an invalid key", http.StatusUnauthorized, `{"message_code":"INVALID_API_KEY","message":"Invalid or expired API key"}`, false},
		{"forbidden", http.StatusForbidden, `{"message_code":"FORBIDDEN"}`, false},
		{"a gateway error", http.StatusBadGateway, `<html>502</html>`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newRecorder(t, respond(tt.status, tt.body))
			c, _ := rec.client(t, func(o *Options) { o.MaxAttempts = 1 })
			out, err := c.CheckKey(context.Background(), nil)
			if (err == nil) != tt.accepted || (out != nil) != tt.accepted {
				t.Fatalf("CheckKey = %+v, %v; accepted want %v", out, err, tt.accepted)
			}
			if tt.accepted && out.StatusCode != tt.status {
				t.Errorf("StatusCode = %d, want %d", out.StatusCode, tt.status)
			}
			if MaybeCharged(err) {
				t.Errorf("a probe without an image may never count as charged: %v", err)
			}
			req := rec.requests()[0]
			if req.Method != http.MethodPost || req.Path != pathPredict || req.Key != testKey || req.Parts != 0 ||
				len(req.Query["top_n"]) != 1 || req.Query["top_n"][0] != "0" || len(req.File) != 0 {
				t.Errorf("probe = %+v; want a POST to predict with the key, top_n=0 and no file", req)
			}
		})
	}
	var ue *UnauthorizedError
	rec := newRecorder(t, respond(http.StatusUnauthorized, `{"message_code":"INVALID_API_KEY"}`))
	c, _ := rec.client(t)
	if _, err := c.CheckKey(context.Background(), nil); !errors.As(err, &ue) || ue.Refusal() != KeyInvalid {
		t.Errorf("err = %v, want an invalid-key refusal", err)
	}
	if _, err := c.CheckKey(context.Background(), &CheckKeyInput{}, func(o *Options) { o.APIKey = "" }); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("without a key: err = %v", err)
	}
}

func TestModelsAnonymousSendsNoKey(t *testing.T) {
	rec := newRecorder(t, respond(http.StatusOK, `{"models":[]}`))
	c, _ := rec.client(t)
	if _, err := c.Models(context.Background(), &ModelsInput{Anonymous: true}); err != nil {
		t.Fatal(err)
	}
	if req := rec.requests()[0]; req.HasKey {
		t.Errorf("an anonymous model list sent the key")
	}
}
