package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts"
	"github.com/geolocate-aws/geolocate/pkg/local/lambdaruntime"
	"github.com/geolocate-aws/geolocate/pkg/local/syncbuf"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

const predictorPackage = "github.com/geolocate-aws/geolocate/functions/predictor"

// TestInitErrorReachesTheInvoker: a configuration the function refuses at
// cold start is posted to the Runtime API's init/error endpoint before the
// process exits, so the invoke's answer names the missing variables, under
// the project's runtime and under AWS's emulator alike. Before, the process
// exited 1 with nothing posted, and the invoke answered only that the
// runtime exited.
func TestInitErrorReachesTheInvoker(t *testing.T) {
	bin := lambdaruntime.BuildForTest(t, predictorPackage)
	env := map[string]string{envvars.APIURL: "http://127.0.0.1:1", envvars.APIKey: "geo_test_fake_key_1"} // no TABLE_NAME

	t.Run("project runtime", func(t *testing.T) {
		rt, err := lambdaruntime.Start(lambdaruntime.Config{Binary: bin, Env: env, Timeout: 10 * time.Second,
			FunctionName: "predictor", Region: awsparts.Region})
		if err != nil {
			t.Fatal(err)
		}
		defer rt.Close()
		res, err := rt.Invoke(t.Context(), []byte(`{"Records":[]}`))
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != lambdaruntime.InitFailed || res.ErrorType != "InitError" || !strings.Contains(res.ErrorMessage, envvars.TableName+" is required") {
			t.Errorf("invoke: %s %q %q; want InitFailed, InitError, the missing variable named", res.Status, res.ErrorType, res.ErrorMessage)
		}
	})
	t.Run("AWS emulator", func(t *testing.T) {
		rie := lambdaruntime.RIEForTest(t)
		p, err := lambdaruntime.StartRIE(t.Context(), lambdaruntime.RIEConfig{RIE: rie, Bootstrap: bin, Env: env, Timeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		status, body, err := p.Invoke(t.Context(), []byte(`{"Records":[]}`))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Message string `json:"errorMessage"`
			Type    string `json:"errorType"`
		}
		_ = json.Unmarshal(body, &doc)
		if doc.Type != "InitError" || !strings.Contains(doc.Message, envvars.TableName+" is required") {
			t.Errorf("invoke: %d %s; want the init error with the missing variable named", status, body)
		}
	})
}

// TestSampleEventUnderAWSsEmulator runs the built bootstrap under AWS's
// Runtime Interface Emulator against the local parts: the sample SQS event
// geolocates the sample image, as under Lambda. (The project's runtime,
// which freezes the process between invocations as Lambda does, runs it in
// deadline_test.go.)
func TestSampleEventUnderAWSsEmulator(t *testing.T) {
	bin, rie := lambdaruntime.BuildForTest(t, predictorPackage), lambdaruntime.RIEForTest(t)
	parts := startLocalParts(t, sampleBucket, "geo_test_fake_key_1")
	put := parts.uploadSample(t)
	env := parts.env()
	env["AWS_REGION"] = awsparts.Region
	logs := &syncbuf.Buffer{}
	p, err := lambdaruntime.StartRIE(t.Context(), lambdaruntime.RIEConfig{RIE: rie, Bootstrap: bin, Env: env,
		Timeout: time.Minute, Stderr: logs})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	event, err := os.ReadFile(filepath.Join("..", "..", "events", "sqs-s3-put.json"))
	if err != nil {
		t.Fatal(err)
	}
	status, body, err := p.Invoke(t.Context(), event)
	if err != nil {
		t.Fatal(err)
	}
	if status != 200 || string(body) != `{"batchItemFailures":[]}` {
		t.Fatalf("invoke: %d %s\n%s", status, body, logs)
	}
	rec, err := ledger.New(parts.db.Client(), parts.table).Lookup(t.Context(), ledger.ObjectRef{
		Bucket: sampleBucket, Key: sampleKey, ETag: strings.Trim(aws.ToString(put.ETag), `"`)})
	if err != nil || rec == nil || rec.Status != ledger.StatusSucceeded {
		t.Errorf("record = %+v, %v", rec, err)
	}
}
