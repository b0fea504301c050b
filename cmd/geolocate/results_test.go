package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"

	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

func TestMain(m *testing.M) { awspartstest.Main(m) }

// useAWS makes the commands use clients instead of real AWS.
func useAWS(t *testing.T, clients *awsClients) {
	t.Helper()
	saved := loadAWS
	loadAWS = func(context.Context) (*awsClients, error) { return clients, nil }
	t.Cleanup(func() { loadAWS = saved })
}

// fakeStacks answers DescribeStacks with fixed outputs.
type fakeStacks struct {
	name    string
	outputs map[string]string
}

func (f fakeStacks) DescribeStacks(_ context.Context, in *cloudformation.DescribeStacksInput, _ ...func(*cloudformation.Options)) (*cloudformation.DescribeStacksOutput, error) {
	if aws.ToString(in.StackName) != f.name {
		return nil, &cfntypes.StackNotFoundException{Message: aws.String("Stack with id " + aws.ToString(in.StackName) + " does not exist")}
	}
	var outs []cfntypes.Output
	for k, v := range f.outputs {
		outs = append(outs, cfntypes.Output{OutputKey: aws.String(k), OutputValue: aws.String(v)})
	}
	return &cloudformation.DescribeStacksOutput{Stacks: []cfntypes.Stack{{StackName: in.StackName, Outputs: outs}}}, nil
}

func f64(v float64) *float64 { return &v }

// seedRecords writes two succeeded records and one rejected into table.
func seedRecords(t *testing.T, store *ledger.Store) {
	t.Helper()
	ctx := context.Background()
	results := []ledger.Record{
		{Place: "Paris", Admin1: "Île-de-France", CountryCode: "FR", Latitude: f64(48.8566), Longitude: f64(2.3522), RadiusKM: f64(12.5), CreditsConsumed: 1, ModelID: "global-v1"},
		{Place: "Nairobi", Admin2: "Westlands", Admin1: "Nairobi County", CountryCode: "KE", Latitude: f64(-1.2921), Longitude: f64(36.8219),
			Confidence: f64(0.87), HeadingDeg: f64(135), CreditsConsumed: 3, ModelID: "accuracy-v1"},
	}
	for i, res := range results {
		ref := ledger.ObjectRef{Bucket: "uploads", Key: []string{"paris.jpg", "dir/nairobi café.jpg"}[i], VersionID: "v1"}
		claim, outcome, err := store.Claim(ctx, ref, time.Minute)
		if err != nil || !claim.Acquired() {
			t.Fatalf("claim %s: %v %v", ref.Key, outcome, err)
		}
		if err := store.Complete(ctx, claim, res); err != nil {
			t.Fatalf("complete %s: %v", ref.Key, err)
		}
	}
	err := store.Reject(ctx, ledger.ObjectRef{Bucket: "uploads", Key: "notes.jpg", ETag: "abc"}, "not_an_image", "text", ledger.ObjectInfo{Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	// An object whose message went to the dead-letter queue while the
	// account was out of credits.
	err = store.MarkWaiting(ctx, ledger.ObjectRef{Bucket: "uploads", Key: "broke.jpg", VersionID: "v1"}, "out_of_credits", "out of credits on the last receive", true)
	if err != nil {
		t.Fatal(err)
	}
}

func TestResultsReadsTheTable(t *testing.T) {
	client, table := awspartstest.DynamoDB(t)
	seedRecords(t, ledger.New(client, table))
	useAWS(t, &awsClients{tables: client, stacks: fakeStacks{name: "Geo", outputs: map[string]string{outputTableName: table}}})

	t.Run("geojson", func(t *testing.T) {
		r := runCLI(t, nil, nil, "results", "--table", table, "--geojson")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		var fc struct {
			Type     string `json:"type"`
			Features []struct {
				Type     string `json:"type"`
				Geometry struct {
					Type        string    `json:"type"`
					Coordinates []float64 `json:"coordinates"`
				} `json:"geometry"`
				Properties map[string]any `json:"properties"`
			} `json:"features"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &fc); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, r.stdout)
		}
		if fc.Type != "FeatureCollection" || len(fc.Features) != 2 {
			t.Fatalf("got %s with %d features, want a FeatureCollection of the 2 succeeded records", fc.Type, len(fc.Features))
		}
		byPlace := map[string][]float64{}
		for _, f := range fc.Features {
			if f.Type != "Feature" || f.Geometry.Type != "Point" {
				t.Errorf("feature %+v", f)
			}
			byPlace[f.Properties["place"].(string)] = f.Geometry.Coordinates
		}
		// GeoJSON orders coordinates longitude first.
		if got := byPlace["Paris"]; len(got) != 2 || got[0] != 2.3522 || got[1] != 48.8566 {
			t.Errorf("Paris at %v, want [2.3522 48.8566]", got)
		}
		if got := byPlace["Nairobi"]; len(got) != 2 || got[0] != 36.8219 || got[1] != -1.2921 {
			t.Errorf("Nairobi at %v", got)
		}
		for _, f := range fc.Features {
			if f.Properties["place"] == "Nairobi" && (f.Properties["confidence"] != 0.87 || f.Properties["object"] != "s3://uploads/dir/nairobi café.jpg" ||
				f.Properties["admin2"] != "Westlands" || f.Properties["heading_deg"] != 135.0) {
				t.Errorf("Nairobi properties %v", f.Properties)
			}
		}
	})

	t.Run("json filtered by status", func(t *testing.T) {
		r := runCLI(t, nil, nil, "results", "--table", table, "--status", "rejected", "--json")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		var rows []resultRow
		if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 || rows[0].Key != "notes.jpg" || rows[0].Reason != "not_an_image" || rows[0].Status != "rejected" {
			t.Errorf("rows = %+v", rows)
		}
	})

	t.Run("waiting, in the dead-letter queue", func(t *testing.T) {
		r := runCLI(t, nil, nil, "results", "--table", table, "--status", "waiting")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		if !strings.Contains(r.stdout, "broke.jpg") || !strings.Contains(r.stdout, "waiting (out_of_credits, in the dead-letter queue)") {
			t.Errorf("table:\n%s", r.stdout)
		}
	})

	t.Run("table from the stack outputs", func(t *testing.T) {
		r := runCLI(t, nil, nil, "results", "--stack", "Geo", "--limit", "2")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		// The rows are the lines that start with a time; the causes of
		// refusals follow them, one line each.
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		rows := 0
		for _, l := range lines {
			if _, err := time.Parse(time.DateTime, l[:min(len(time.DateTime), len(l))]); err == nil {
				rows++
			}
		}
		if rows != 2 || !strings.HasPrefix(lines[0], "UPDATED") {
			t.Fatalf("want a header and 2 rows (--limit 2):\n%s", r.stdout)
		}
	})

	t.Run("table from TABLE_NAME", func(t *testing.T) {
		r := runCLI(t, map[string]string{envvars.TableName: table}, nil, "results", "--status", "succeeded")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		for _, want := range []string{"paris.jpg", "Paris, Île-de-France", "FR", "48.8566", "12.5 km", "conf 0.87, heading 135°",
			"Nairobi, Westlands, Nairobi County"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("table lacks %q:\n%s", want, r.stdout)
			}
		}
		if strings.Contains(r.stdout, "notes.jpg") {
			t.Errorf("rejected record listed under --status succeeded:\n%s", r.stdout)
		}
	})

	t.Run("unknown stack", func(t *testing.T) {
		r := runCLI(t, nil, nil, "results", "--stack", "Nope")
		if r.code == 0 || !strings.Contains(r.stderr, "describe stack Nope") {
			t.Errorf("exit %d, stderr %q", r.code, r.stderr)
		}
	})
}

func TestResultsRejectsBadFlags(t *testing.T) {
	useAWS(t, &awsClients{})
	for _, args := range [][]string{
		{"results", "--json", "--geojson"},
		{"results", "--status", "done"},
		{"results", "--since", "yesterday"},
		{"results", "--limit", "-1"},
	} {
		if r := runCLI(t, nil, nil, args...); r.code != exitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, r.code, exitUsage, r.stderr)
		}
	}
}

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Time
	}{
		{"90m", now.Add(-90 * time.Minute)},
		{"7d", now.Add(-7 * 24 * time.Hour)},
		{"2026-11-01", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)},
		{"2026-11-21T08:30:00Z", time.Date(2026, 11, 21, 8, 30, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		got, err := jobs.ParseSince(tt.in, now)
		if err != nil || !got.Equal(tt.want) {
			t.Errorf("jobs.ParseSince(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "soon", "-5m", "3x"} {
		if _, err := jobs.ParseSince(bad, now); err == nil {
			t.Errorf("jobs.ParseSince(%q) accepted", bad)
		}
	}
}
