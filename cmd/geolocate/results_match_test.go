package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
)

// TestResultsShowsVehicleAndPropertyMatches: a vehicle or property result
// has no place; results shows its best match in words, and every match in
// --json.
func TestResultsShowsVehicleAndPropertyMatches(t *testing.T) {
	client, table := awspartstest.DynamoDB(t)
	useAWS(t, &awsClients{tables: client})
	store := ledger.New(client, table)
	ctx := context.Background()
	for key, rec := range map[string]ledger.Record{
		"car.jpg": {ResultType: "vehicle", CreditsConsumed: 2, RawResult: `{"result_type":"vehicle"}`,
			Vehicles: []ledger.Vehicle{{Make: "Mercedes-Benz", Model: "S-Class", Year: "2020-2023", ConfidencePercent: 87.5, Variant: "S 580"}, {Make: "BMW", Model: "7 Series"}}},
		"hotel.jpg": {ResultType: "property", CreditsConsumed: 3, RawResult: `{"result_type":"property"}`,
			Properties: []ledger.Property{{Name: "Grand Hyatt Tokyo", Location: "Roppongi Hills, Tokyo", Country: "Japan", ConfidencePercent: 91,
				Latitude: f64(35.66), Longitude: f64(139.73), Category: "hotel"}}},
	} {
		claim, _, err := store.Claim(ctx, ledger.ObjectRef{Bucket: "uploads", Key: key, VersionID: "v1"}, time.Minute)
		if err != nil || !claim.Acquired() {
			t.Fatal(err)
		}
		if err := store.Complete(ctx, claim, rec); err != nil {
			t.Fatal(err)
		}
	}
	r := runCLI(t, nil, nil, "results", "--table", table, "--status", "succeeded")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"vehicle Mercedes-Benz S-Class S 580 2020-2023, 87.5%", "property Grand Hyatt Tokyo (Roppongi Hills, Tokyo, Japan), 91%"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, r.stdout)
		}
	}
	r = runCLI(t, nil, nil, "results", "--table", table, "--status", "succeeded", "--json")
	var rows []resultRow
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		switch row.Key {
		case "car.jpg":
			if len(row.Vehicles) != 2 || row.ResultType != "vehicle" {
				t.Errorf("car row %+v", row)
			}
		case "hotel.jpg":
			if len(row.Properties) != 1 || row.Properties[0].Latitude == nil {
				t.Errorf("hotel row %+v", row)
			}
		}
	}
}
