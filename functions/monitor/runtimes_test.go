package main

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/awsparts"
	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/local/lambdaruntime"
	"github.com/geolocate-aws/geolocate/pkg/local/syncbuf"
	"github.com/geolocate-aws/geolocate/pkg/monitor"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

type errorDocument struct {
	Message string `json:"errorMessage"`
	Type    string `json:"errorType"`
}

// TestInitErrorReachesTheInvoker: a refused configuration is posted to the
// Runtime API's init/error endpoint, so the invoke's answer says what is
// missing, under the project's runtime and under AWS's emulator.
func TestInitErrorReachesTheInvoker(t *testing.T) {
	bin := lambdaruntime.BuildForTest(t, "github.com/geolocate-aws/geolocate/functions/monitor")
	env := map[string]string{envvars.APIURL: "http://127.0.0.1:1"} // no key source

	rt, err := lambdaruntime.Start(lambdaruntime.Config{Binary: bin, Env: env, Timeout: 10 * time.Second,
		FunctionName: "monitor", Region: awsparts.Region})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	res, err := rt.Invoke(t.Context(), []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != lambdaruntime.InitFailed || res.ErrorType != "InitError" || !strings.Contains(res.ErrorMessage, envvars.APIKey) {
		t.Errorf("project runtime: %s %q %q; want InitFailed, InitError, the missing key source named", res.Status, res.ErrorType, res.ErrorMessage)
	}

	p, err := lambdaruntime.StartRIE(t.Context(), lambdaruntime.RIEConfig{RIE: lambdaruntime.RIEForTest(t), Bootstrap: bin, Env: env, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	status, body, err := p.Invoke(t.Context(), []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	var doc errorDocument
	_ = json.Unmarshal(body, &doc)
	if doc.Type != "InitError" || !strings.Contains(doc.Message, envvars.APIKey) {
		t.Errorf("AWS emulator: %d %s; want the init error naming the missing key source", status, body)
	}
}

// TestScheduledEventUnderAWSsEmulator runs the built bootstrap under AWS's
// Runtime Interface Emulator on the sample scheduled event, against the
// simulator: the report is healthy, as under Lambda.
func TestScheduledEventUnderAWSsEmulator(t *testing.T) {
	bin, rie := lambdaruntime.BuildForTest(t, "github.com/geolocate-aws/geolocate/functions/monitor"), lambdaruntime.RIEForTest(t)
	sim := geosim.New(func(c *geosim.Config) { c.DemoKey = fakeKey })
	srv := httptest.NewServer(sim)
	defer srv.Close()
	logs := &syncbuf.Buffer{}
	p, err := lambdaruntime.StartRIE(t.Context(), lambdaruntime.RIEConfig{RIE: rie, Bootstrap: bin, Timeout: time.Minute, Stderr: logs,
		Env: map[string]string{envvars.APIURL: srv.URL, envvars.APIKey: fakeKey, envvars.PipelineName: "rie-test"}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	event, err := os.ReadFile("../../events/scheduled.json")
	if err != nil {
		t.Fatal(err)
	}
	status, body, err := p.Invoke(t.Context(), event)
	if err != nil {
		t.Fatal(err)
	}
	var rep monitor.Report
	if status != 200 || json.Unmarshal(body, &rep) != nil || !rep.Healthy {
		t.Fatalf("invoke: %d %s\n%s", status, body, logs)
	}
	if strings.Contains(logs.String()+string(body), fakeKey) {
		t.Error("the key appears in the output")
	}
}
