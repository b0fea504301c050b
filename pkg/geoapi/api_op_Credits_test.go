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
		{"flat credits_* under data", `{"data":{"credits_remaining":75,"credits_used":25,"credits_total":100}}`, "", ptr(75), "data.credits_remaining",
			func(t *testing.T, o *CreditsOutput) {
				if !eqPtr(o.Used, ptr(25)) || !eqPtr(o.Total, ptr(100)) {
					t.Errorf("used %v total %v", o.Used, o.Total)
				}
			}},
		{"data.remaining", `{"data":{"remaining":12.5}}`, "", ptr(12.5), "data.remaining", nil},
		{"data.balance", `{"data":{"balance":8}}`, "", ptr(8), "data.balance", nil},
		{"no wrapper", `{"credits_remaining":3}`, "", ptr(3), "credits_remaining", nil},
		{"subscription remaining plus top-up", `{"data":{"subscription":{"remaining":90},"top_up":{"balance":10}}}`, "",
			ptr(100), "data.subscription.remaining + data.top_up.balance", nil},
		{"derived from allowance", `{"subscription":{"credits":500,"used":120},"topup":{"remaining":5}}`, "",
			ptr(385), "subscription.credits - subscription.used + topup.remaining", nil},
		{"explicit path wins", simulatorCredits, "data.subscription.remaining", ptr(990), "data.subscription.remaining", nil},
		{"explicit path into an array", `{"items":[{"left":4},{"left":6}]}`, "items.1.left", ptr(6), "items.1.left", nil},
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

// TestParseCreditsRefusesFigures: a figure found where a credit figure is
// looked for is read only when it is a JSON number from 0 (or 10^-6) to
// 10^15, inside both CloudWatch's and DynamoDB's number ranges; a remaining
// figure refused is a *FigureError naming where it was, what it held and
// why, never a number; another figure refused is left out and listed.
func TestParseCreditsRefusesFigures(t *testing.T) {
	for _, tt := range []struct {
		name, body, path string
		refusal          FigureRefusal
	}{
		{"beyond DynamoDB's range", `{"credits_remaining":1e308}`, "", FigureRefusal{"credits_remaining", "1e308", "above 10^15"}},
		{"beyond float64", `{"data":{"remaining":1e400}}`, "", FigureRefusal{"data.remaining", "1e400", "above 10^15"}},
		{"negative", `{"credits_remaining":-5}`, "", FigureRefusal{"credits_remaining", "-5", "negative"}},
		{"too small", `{"credits_remaining":1e-200}`, "", FigureRefusal{"credits_remaining", "1e-200", "below 10^-6"}},
		{"a string", `{"data":{"credits_remaining":"1000"}}`, "", FigureRefusal{"data.credits_remaining", `"1000"`, "a JSON string, not a number"}},
		{"a padded string", `{"data":{"balance":"  42 "}}`, "", FigureRefusal{"data.balance", `"  42 "`, "a JSON string, not a number"}},
		{"NaN string", `{"data":{"remaining":"NaN"}}`, "", FigureRefusal{"data.remaining", `"NaN"`, "a JSON string, not a number"}},
		{"configured path holds an object", simulatorCredits, "data.subscription", FigureRefusal{"data.subscription", `{"allowance":1000,"remaining":990,"used":10}`, "not a JSON number"}},
		{"configured path holds a string", `{"left":"6"}`, "left", FigureRefusal{"left", `"6"`, "a JSON string, not a number"}},
		{"a derived figure past the range", `{"subscription":{"remaining":9e14},"topup":{"balance":9e14}}`, "",
			FigureRefusal{"subscription.remaining + topup.balance", "1.8e+15", "above 10^15"}},
		{"a long string, cut", `{"credits_remaining":"` + strings.Repeat("7", 1000) + `"}`, "",
			FigureRefusal{"credits_remaining", `"` + strings.Repeat("7", 179) + "… (1002 bytes)", "a JSON string, not a number"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, err := parseCredits([]byte(tt.body), tt.path)
			var fe *FigureError
			if !errors.As(err, &fe) {
				t.Fatalf("got %+v, %v; want *FigureError", out, err)
			}
			if fe.Refusal != tt.refusal || len(fe.Refusal.Value) > maxFigureExcerpt {
				t.Errorf("refusal %+v, want %+v", fe.Refusal, tt.refusal)
			}
		})
	}
	out, err := parseCredits([]byte(`{"credits_remaining":500,"subscription":{"remaining":1e308},"topup":{"balance":-5},"credits_used":"9"}`), "")
	if err != nil || !eqPtr(out.Remaining, ptr(500)) || out.SubscriptionRemaining != nil || out.TopUpBalance != nil || out.Used != nil {
		t.Fatalf("got %+v, %v; want 500 and the refused figures left out", out, err)
	}
	want := []FigureRefusal{{"subscription.remaining", "1e308", "above 10^15"}, {"topup.balance", "-5", "negative"}, {"credits_used", `"9"`, "a JSON string, not a number"}}
	if len(out.Refused) != len(want) {
		t.Fatalf("refused %v, want %v", out.Refused, want)
	}
	for i := range want {
		if out.Refused[i] != want[i] {
			t.Errorf("refused[%d] = %+v, want %+v", i, out.Refused[i], want[i])
		}
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
