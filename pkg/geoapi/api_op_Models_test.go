package geoapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func TestParseModelsLayouts(t *testing.T) {
	type brief struct {
		ID, Status, StatusRaw, Access, Type string
	}
	simulator := []brief{
		{"geo-global-v2", "ready", "ready", "public", "global"},
		{"geo-accuracy-eu-v1", "down", "down", "whitelist", "accuracy"},
	}
	tests := []struct {
		name string
		body string
		want []brief
	}{
		{"simulator default", `{"message_code":"success","data":{"models":[
{"id":"geo-global-v2","status":"ready","access":"public","type":"global","credits_per_call":1},
{"id":"geo-accuracy-eu-v1","status":"down","access":"whitelist","type":"accuracy","credits_per_call":3}]}}`, simulator},
		{"bare array", `[{"id":"geo-global-v2","status":"ready","access":"public","type":"global"},
{"model_id":"geo-accuracy-eu-v1","status":"DOWN","access_class":"whitelist","model_type":"accuracy"}]`,
			[]brief{simulator[0], {"geo-accuracy-eu-v1", "down", "DOWN", "whitelist", "accuracy"}}},
		{"data array", `{"data":[{"name":"geo-a","status":"maintenance","class":"public"}]}`,
			[]brief{{"geo-a", "unknown", "maintenance", "public", ""}}},
		{"models array", `{"models":[{"id":"geo-a","visibility":"whitelist"}]}`,
			[]brief{{"geo-a", "unknown", "", "whitelist", ""}}},
		{"keyed by id", `{"data":{"geo-b":{"status":"ready"},"geo-a":{"status":"unknown","access":"public"}}}`,
			[]brief{{"geo-a", "unknown", "unknown", "public", ""}, {"geo-b", "ready", "ready", "", ""}}},
		{"list of ids", `{"models":["geo-a","geo-b"]}`,
			[]brief{{"geo-a", "unknown", "", "", ""}, {"geo-b", "unknown", "", "", ""}}},
		{"empty list", `{"data":{"models":[]}}`, []brief{}},
		// The public backend's layouts: dotted ids, access_level, and a
		// catalogue with an enabled flag instead of a status.
		{"backend: model_id, access_level", `{"message_code":"SUCCESS","data":[
{"model_id":"global_v0.1","model_type":"global","credits_per_use":1,"access_level":"public","status":"ready"},
{"model_id":"madrid_v0.1","model_type":"accuracy","credits_per_use":3,"access_level":"whitelist","status":"unknown"}]}`,
			[]brief{{"global_v0.1", "ready", "ready", "public", "global"}, {"madrid_v0.1", "unknown", "unknown", "whitelist", "accuracy"}}},
		{"backend: enabled flag", `{"message_code":"SUCCESS","data":{"models":[
{"id":"global_v0.1","type":"global","name":"Global","version":"0.1","enabled":true},
{"id":"cars_v0.1","type":"cars","name":"Vehicle ID","version":"0.1","enabled":false}]}}`,
			[]brief{{"global_v0.1", "ready", "enabled", "", "global"}, {"cars_v0.1", "down", "disabled", "", "cars"}}},
		{"a status wins over the enabled flag", `[{"id":"a","status":"down","enabled":true}]`, []brief{{"a", "down", "down", "", ""}}},
		{"an enabled flag that is not a boolean is ignored", `[{"id":"a","enabled":"yes"}]`, []brief{{"a", "unknown", "", "", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list, err := parseModels([]byte(tt.body))
			if err != nil {
				t.Fatalf("parseModels: %v", err)
			}
			models := list.models
			got := make([]brief, 0, len(models))
			for _, m := range models {
				got = append(got, brief{m.ID, string(m.Status), m.StatusRaw, m.AccessClass, m.Type})
				if len(m.Raw) == 0 {
					t.Errorf("model %s lost its raw record", m.ID)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseModelsBackendFields(t *testing.T) {
	list, err := parseModels([]byte(`{"data":[{"model_id":"global_v0.1","credits_per_use":1,"status":"ready"},
{"id":"cars_v0.1","name":"Vehicle ID","version":"0.1","enabled":true},{"name":"only-a-name"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	models := list.models
	if m := models[0]; m.CreditsPerUse == nil || *m.CreditsPerUse != 1 {
		t.Errorf("credits_per_use not read: %+v", m)
	}
	if m := models[1]; m.Name != "Vehicle ID" || m.Version != "0.1" || m.CreditsPerUse != nil {
		t.Errorf("name/version not read: %+v", m)
	}
	if m := models[2]; m.ID != "only-a-name" || m.Name != "" {
		t.Errorf("a name standing for the id: %+v", m)
	}
}

func TestParseModelsLayoutErrors(t *testing.T) {
	tests := []struct {
		name string
		body string
		keys []string
	}{
		{"no list", `{"message_code":"success","data":{"count":2}}`, []string{"data", "message_code"}},
		{"record without id", `{"data":{"models":[{"status":"ready"}]}}`, []string{"data"}},
		{"scalar", `42`, []string{}},
		{"null data", `{"data":null}`, []string{"data"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseModels([]byte(tt.body))
			var le *LayoutError
			if !errors.As(err, &le) || le.Missing == "" {
				t.Fatalf("err = %v, want *LayoutError", err)
			}
			if len(le.Keys) != len(tt.keys) || (len(tt.keys) > 0 && !reflect.DeepEqual(le.Keys, tt.keys)) {
				t.Errorf("keys = %v, want %v", le.Keys, tt.keys)
			}
		})
	}
	if _, err := parseModels([]byte(`{not json`)); err == nil {
		t.Error("invalid JSON should fail")
	}
}

// TestModelListEntriesRefused: an id longer than MaxModelIDBytes or a
// record without an id is left out and counted, the rest of the list read;
// the refusal is one log line naming the field, with a bounded excerpt; a
// list with no readable entry at all is still a *LayoutError.
func TestModelListEntriesRefused(t *testing.T) {
	huge := strings.Repeat("x", 1<<20)
	body := `{"models":[{"id":"global-v1","status":"ready"},{"id":"` + huge + `","status":"ready"},{"status":"down"},` +
		`{"id":"` + strings.Repeat("y", MaxModelIDBytes) + `"},{"id":"` + strings.Repeat("z", MaxModelIDBytes+1) + `"}]}`
	rec := newRecorder(t, respond(http.StatusOK, body))
	var logs bytes.Buffer
	c, _ := rec.client(t, func(o *Options) { o.Logger = slog.New(slog.NewJSONHandler(&logs, nil)) })
	out, err := c.Models(context.Background(), nil)
	if err != nil {
		t.Fatalf("Models: %v", err)
	}
	if len(out.Models) != 2 || out.Models[0].ID != "global-v1" || len(out.Models[1].ID) != MaxModelIDBytes || out.Refused != 3 {
		t.Fatalf("%d models, %d refused; want global-v1 and the id of exactly %d bytes, 3 refused", len(out.Models), out.Refused, MaxModelIDBytes)
	}
	if len(out.RefusedExamples) != 3 || !strings.Contains(out.RefusedExamples[0], "1048576 bytes") {
		t.Errorf("examples %q", out.RefusedExamples)
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	var refusals int
	for _, line := range lines {
		if len(line) > 1024 {
			t.Errorf("log line of %d bytes", len(line))
		}
		var l map[string]any
		if json.Unmarshal([]byte(line), &l) == nil && l["field"] == "id" {
			refusals++
			if v, _ := l["value"].(string); len(v) > maxFigureExcerpt {
				t.Errorf("logged value of %d bytes", len(v))
			}
		}
	}
	if refusals != 1 {
		t.Errorf("%d refusal lines, want 1:\n%s", refusals, logs.String())
	}
}

func TestModels(t *testing.T) {
	body := `{"message_code":"success","data":{"models":[
{"id":"geo-global-v2","status":"ready","access":"public","type":"global"},
{"id":"geo-accuracy-eu-v1","status":"down","access":"whitelist","type":"accuracy"},
{"id":"geo-vehicle-v1","status":"warming","access":"public","type":"vehicle"}]}}`
	rec := newRecorder(t, respond(http.StatusOK, body))
	c, _ := rec.client(t, func(o *Options) { o.APIKey = "" })

	out, err := c.Models(context.Background(), nil)
	if err != nil {
		t.Fatalf("Models: %v", err)
	}
	if got := rec.requests()[0]; got.Method != http.MethodGet || got.Path != "/v1/prediction/models" || got.HasKey {
		t.Errorf("request %s %s with key header %v; want no key header without a key", got.Method, got.Path, got.HasKey)
	}
	if len(out.Models) != 3 || string(out.Raw) != body || out.Attempts != 1 {
		t.Fatalf("output = %+v", out)
	}
	m, ok := out.Find("geo-accuracy-eu-v1")
	if !ok || m.Status != StatusDown || m.AccessClass != "whitelist" {
		t.Errorf("Find = %+v, %v", m, ok)
	}
	if _, ok := out.Find("geo-global-v1"); ok {
		t.Error("Find of a retired id should fail")
	}
	want := map[ModelStatus]int{StatusReady: 1, StatusDown: 1, StatusUnknown: 1}
	if got := out.CountByStatus(); !reflect.DeepEqual(got, want) {
		t.Errorf("CountByStatus = %v, want %v", got, want)
	}

	if _, err := c.Models(context.Background(), &ModelsInput{APIKey: testKey}); err != nil {
		t.Fatalf("Models with key: %v", err)
	}
	if got := rec.requests()[1]; got.Key != testKey {
		t.Errorf("key header = %q, want the input's key", got.Key)
	}

	_, err = c.Models(context.Background(), &ModelsInput{APIKey: "not_a_geo_key"})
	if !errors.Is(err, ErrInvalidKey) || len(rec.requests()) != 2 {
		t.Errorf("err = %v, requests = %d; a malformed key must be rejected before the call", err, len(rec.requests()))
	}
}

func TestModelsLayoutErrorNamesOperation(t *testing.T) {
	rec := newRecorder(t, respond(http.StatusOK, `{"message_code":"success","items":{"x":1}}`))
	c, _ := rec.client(t)
	_, err := c.Models(context.Background(), nil)
	var le *LayoutError
	if !errors.As(err, &le) || le.Operation != "Models" || !reflect.DeepEqual(le.Keys, []string{"items", "message_code"}) {
		t.Fatalf("err = %v", err)
	}
	if Retryable(err) || len(rec.requests()) != 1 {
		t.Errorf("a layout error must not be retried")
	}
}

func FuzzParseModels(f *testing.F) {
	f.Add([]byte(`{"message_code":"success","data":{"models":[{"id":"a","status":"ready"}]}}`))
	f.Add([]byte(`[{"model_id":"a"},"b",null,1]`))
	f.Add([]byte(`{"data":{"a":{"status":"down"},"b":{}}}`))
	f.Add([]byte(`{"models":{"models":{"models":{"models":[]}}}}`))
	f.Add([]byte(`{"data":[[[]]]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		list, err := parseModels(body)
		if err != nil {
			return
		}
		for _, m := range list.models {
			if len(m.ID) > MaxModelIDBytes {
				t.Fatalf("id of %d bytes kept", len(m.ID))
			}
			if m.ID == "" {
				t.Fatalf("model without id: %+v", m)
			}
			switch m.Status {
			case StatusReady, StatusDown, StatusUnknown:
			default:
				t.Fatalf("status %q outside the defined set", m.Status)
			}
		}
	})
}
