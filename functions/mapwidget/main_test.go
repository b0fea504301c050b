package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/lambdarun"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

func TestMain(m *testing.M) { awspartstest.Main(m) }

var discard = slog.New(slog.NewJSONHandler(io.Discard, nil))

func TestBuildRefusesABadEnvironment(t *testing.T) {
	for name, c := range map[string]struct {
		env  map[string]string
		want string
	}{
		"no table":          {map[string]string{}, envvars.TableName + " is not set"},
		"max records: word": {map[string]string{envvars.TableName: "t", envvars.MapMaxRecords: "many"}, envvars.MapMaxRecords + `="many"`},
		"max records: zero": {map[string]string{envvars.TableName: "t", envvars.MapMaxRecords: "0"}, "at least 1"},
	} {
		_, err := build(context.Background(), func(k string) string { return c.env[k] }, discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", name, err, c.want)
		}
	}
}

// TestSampleEventDrawsTheTable wires the function as Lambda starts it,
// from the environment, against DynamoDB Local, and answers the sample
// event in events/ through the runtime's own handler adapter.
func TestSampleEventDrawsTheTable(t *testing.T) {
	db := awspartstest.SharedDynamoDB(t)
	table := fmt.Sprintf("mapwidget-test-%d", time.Now().UnixNano())
	if err := db.CreateTable(t.Context(), table); err != nil {
		t.Fatal(err)
	}
	store := ledger.New(db.Client(), table)
	claim, _, err := store.Claim(t.Context(), ledger.ObjectRef{Bucket: "b", Key: "harbour.jpg", VersionID: "v1"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	lat, lon, radius := 59.91, 10.75, 25.0
	if err := store.Complete(t.Context(), claim, ledger.Record{Latitude: &lat, Longitude: &lon, RadiusKM: &radius}); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{envvars.TableName: table, envvars.MapMaxRecords: "50"}
	for k, v := range map[string]string{"AWS_ENDPOINT_URL_DYNAMODB": db.Endpoint(), "AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local", "AWS_REGION": "us-east-1"} {
		t.Setenv(k, v)
	}
	w, err := build(t.Context(), func(k string) string { return env[k] }, discard)
	if err != nil {
		t.Fatal(err)
	}
	out, err := lambdarun.InvokeFile(t.Context(), w.Handle, "../../events/custom-widget.json", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	var page string
	if err := json.Unmarshal(out, &page); err != nil {
		t.Fatalf("answer %s", out)
	}
	if !strings.Contains(page, `data-points="1"`) || !strings.Contains(page, "harbour.jpg") || !strings.Contains(page, `width="1088"`) {
		t.Errorf("the sample event's map lacks the record:\n%.600s", page)
	}
}
