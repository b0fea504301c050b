package geoapi

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
)

func ptr(f float64) *float64 { return &f }

func eqPtr(a, b *float64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

const simulatorCredits = `{"message_code":"success","data":{"subscription":{"allowance":1000,"used":10,"remaining":990},"topups":{"balance":50},"summary":{"total_available":1040}}}`

func TestParseCredits(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		path      string
		remaining *float64
		from      string
		check     func(t *testing.T, out *CreditsOutput)
	}{
		{"simulator default", simulatorCredits, "", ptr(1040), "data.summary.total_available", func(t *testing.T, o *CreditsOutput) {
			if !eqPtr(o.SubscriptionAllowance, ptr(1000)) || !eqPtr(o.SubscriptionUsed, ptr(10)) ||
				!eqPtr(o.SubscriptionRemaining, ptr(990)) || !eqPtr(o.TopUpBalance, ptr(50)) || !eqPtr(o.Used, ptr(10)) {
				t.Errorf("figures = %+v", o)
			}
		}},
		{"flat credits_* under data", `{"data":{"credits_remaining":"75","credits_used":25,"credits_total":100}}`, "", ptr(75), "data.credits_remaining",
			func(t *testing.T, o *CreditsOutput) {
				if !eqPtr(o.Used, ptr(25)) || !eqPtr(o.Total, ptr(100)) {
					t.Errorf("used %v total %v", o.Used, o.Total)
				}
			}},
		{"data.remaining", `{"data":{"remaining":12.5}}`, "", ptr(12.5), "data.remaining", nil},
		{"data.balance", `{"data":{"balance":"8"}}`, "", ptr(8), "data.balance", nil},
		{"no wrapper", `{"credits_remaining":3}`, "", ptr(3), "credits_remaining", nil},
		{"subscription remaining plus top-up", `{"data":{"subscription":{"remaining":90},"top_up":{"balance":"10"}}}`, "",
			ptr(100), "data.subscription.remaining + data.top_up.balance", nil},
		{"derived from allowance", `{"subscription":{"credits":500,"used":"120"},"topup":{"remaining":5}}`, "",
			ptr(385), "subscription.credits - subscription.used + topup.remaining", nil},
		{"explicit path wins", simulatorCredits, "data.subscription.remaining", ptr(990), "data.subscription.remaining", nil},
		{"explicit path into an array", `{"items":[{"left":4},{"left":"6"}]}`, "items.1.left", ptr(6), "items.1.left", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := parseCredits([]byte(tt.body), tt.path)
			if err != nil {
				t.Fatalf("parseCredits: %v", err)
			}
			if !eqPtr(out.Remaining, tt.remaining) || out.RemainingPath != tt.from {
				t.Errorf("remaining = %v from %q; want %v from %q", deref(out.Remaining), out.RemainingPath, *tt.remaining, tt.from)
			}
			if string(out.Raw) != tt.body {
				t.Errorf("raw body not kept")
			}
			if tt.check != nil {
				tt.check(t, out)
			}
		})
	}
}

func deref(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

func TestParseCreditsNeverInventsANumber(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		path    string
		missing string
		keys    []string
	}{
		{"unknown names", `{"message_code":"success","data":{"plan":{"name":"pro"},"left":"many"}}`, "", "remaining credits",
			[]string{"data", "data.left", "data.plan", "data.plan.name", "message_code"}},
		{"subscription without top-up", `{"data":{"subscription":{"remaining":90}}}`, "", "remaining credits", nil},
		{"allowance without used", `{"data":{"subscription":{"allowance":90},"topups":{"balance":1}}}`, "", "remaining credits", nil},
		{"configured path missing", simulatorCredits, "data.summary.available", `"data.summary.available"`, nil},
		{"configured path not a number", simulatorCredits, "data.subscription", `number at configured path "data.subscription"`, nil},
		{"NaN string", `{"data":{"remaining":"NaN"}}`, "", "remaining credits", nil},
		{"array body", `[1,2]`, "", "remaining credits", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := parseCredits([]byte(tt.body), tt.path)
			var le *LayoutError
			if !errors.As(err, &le) {
				t.Fatalf("got %+v, %v; want *LayoutError", out, err)
			}
			if !strings.Contains(le.Missing, tt.missing) {
				t.Errorf("Missing = %q, want it to mention %q", le.Missing, tt.missing)
			}
			if tt.keys != nil && strings.Join(le.Keys, ",") != strings.Join(tt.keys, ",") {
				t.Errorf("Keys = %v, want %v", le.Keys, tt.keys)
			}
		})
	}
}

func TestCredits(t *testing.T) {
	rec := newRecorder(t, respond(http.StatusOK, simulatorCredits))
	c, _ := rec.client(t)
	out, err := c.Credits(context.Background(), &CreditsInput{})
	if err != nil {
		t.Fatalf("Credits: %v", err)
	}
	got := rec.requests()[0]
	if got.Method != http.MethodGet || got.Path != "/v1/credits/summary" || got.Key != testKey {
		t.Errorf("request %s %s key %q", got.Method, got.Path, got.Key)
	}
	if !eqPtr(out.Remaining, ptr(1040)) || out.Attempts != 1 {
		t.Errorf("output = %+v", out)
	}

	_, err = c.Credits(context.Background(), &CreditsInput{RemainingPath: "data.nope"})
	var le *LayoutError
	if !errors.As(err, &le) || le.Operation != "Credits" || !strings.Contains(err.Error(), "data.nope") ||
		!strings.Contains(err.Error(), "data.summary.total_available") {
		t.Errorf("err = %v; want a layout error naming the path and listing the keys", err)
	}

	noKey, _ := rec.client(t, func(o *Options) { o.APIKey = "" })
	before := len(rec.requests())
	if _, err := noKey.Credits(context.Background(), nil); !errors.Is(err, ErrInvalidKey) || len(rec.requests()) != before {
		t.Errorf("err = %v; a missing key must be rejected before the call", err)
	}
}

func FuzzParseCredits(f *testing.F) {
	f.Add([]byte(simulatorCredits), "")
	f.Add([]byte(`{"data":{"credits_remaining":"1e400"}}`), "")
	f.Add([]byte(`{"subscription":{"allowance":1,"used":2},"topups":{"balance":3}}`), "")
	f.Add([]byte(`{"items":[{"x":1}]}`), "items.0.x")
	f.Add([]byte(`{"a":[1]}`), "a.-1")
	f.Add([]byte(`null`), "..")
	f.Fuzz(func(t *testing.T, body []byte, path string) {
		out, err := parseCredits(body, path)
		if err != nil {
			return
		}
		if out.Remaining == nil || out.RemainingPath == "" {
			t.Fatalf("success without a remaining figure: %+v", out)
		}
	})
}
