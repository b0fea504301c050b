package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/lambdarun"
	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/monitor"
)

const fakeKey = "geo_test_fake_key_1"

// TestScheduledEventLocally wires the function from its environment, as the
// Lambda does, and runs it on the sample scheduled event against the
// simulator, without AWS (no secret, no table).
func TestScheduledEventLocally(t *testing.T) {
	sim := geosim.New(func(c *geosim.Config) { c.DemoKey = fakeKey })
	srv := httptest.NewServer(sim)
	defer srv.Close()
	env := map[string]string{
		"GEO_API_URL":   srv.URL,
		"GEO_API_KEY":   fakeKey,
		"PIPELINE_NAME": "local-test",
	}
	var metrics, logs bytes.Buffer
	mon, err := build(context.Background(), func(k string) string { return env[k] }, &logs, &metrics)
	if err != nil {
		t.Fatal(err)
	}
	event, err := os.ReadFile("../../events/scheduled.json")
	if err != nil {
		t.Fatal(err)
	}
	out, err := lambdarun.Invoke(context.Background(), mon.Handle, event, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	var rep monitor.Report
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("response %s: %v", out, err)
	}
	if !rep.Healthy || rep.Credits == nil || rep.Credits.Remaining != geosim.DefaultAllowance || rep.Models == nil {
		t.Errorf("report = %s", out)
	}
	if !strings.Contains(metrics.String(), `"MonitorHealthy":[1]`) || !strings.Contains(metrics.String(), `"Pipeline":"local-test"`) {
		t.Errorf("metrics = %s", metrics.String())
	}
	if !strings.Contains(logs.String(), "credit history disabled") {
		t.Errorf("no warning about the disabled history: %s", logs.String())
	}
	if strings.Contains(logs.String()+metrics.String()+string(out), fakeKey) {
		t.Error("the key appears in the output")
	}
}

func TestBuildRejectsBadConfig(t *testing.T) {
	env := map[string]string{"GEO_API_URL": "http://127.0.0.1:1"}
	_, err := build(context.Background(), func(k string) string { return env[k] }, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "GEO_API_KEY") {
		t.Errorf("err = %v", err)
	}
}
