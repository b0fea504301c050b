package pipes_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
	"github.com/geolocate-aws/geolocate/pkg/local/ddbstream"
	"github.com/geolocate-aws/geolocate/pkg/local/eventpattern"
	"github.com/geolocate-aws/geolocate/pkg/local/pipes"
	"github.com/geolocate-aws/geolocate/pkg/local/simclock"
	"github.com/geolocate-aws/geolocate/pkg/shared/resultevents"
)

func TestMain(m *testing.M) { awspartstest.Main(m) }

// schemaDir holds the published JSON Schemas of the details.
const schemaDir = "../../../events/schema"

// schemas compiles the JSON Schema of each detail type.
func schemas(t *testing.T) map[string]*jsonschema.Schema {
	t.Helper()
	out := map[string]*jsonschema.Schema{}
	for _, status := range resultevents.FinalStatuses {
		detailType := resultevents.DetailType(status)
		file := filepath.Join(schemaDir, strings.ToLower(strings.ReplaceAll(detailType, " ", "-"))+".json")
		s, err := jsonschema.NewCompiler().Compile(file)
		if err != nil {
			t.Fatalf("schema of %s: %v", detailType, err)
		}
		out[detailType] = s
	}
	return out
}

func validate(t *testing.T, schemas map[string]*jsonschema.Schema, e *pipes.Event) {
	t.Helper()
	s, ok := schemas[e.DetailType]
	if !ok {
		t.Errorf("event of unknown detail type %q", e.DetailType)
		return
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(e.Detail))
	if err != nil {
		t.Fatalf("detail is not JSON: %v\n%s", err, e.Detail)
	}
	if err := s.Validate(inst); err != nil {
		t.Errorf("%s detail does not validate against its schema: %v\n%s", e.DetailType, err, e.Detail)
	}
}

// detail is the part of a detail the assertions read.
type detail struct {
	Key, Status, Reason string
	ModelID             string `json:"model_id"`
	CreditsCharged      string `json:"credits_charged"`
	EventID             string `json:"event_id"`
	Place               struct {
		Name, Latitude string
		CountryCode    string `json:"country_code"`
	}
	Exif struct {
		ErrorKm      string `json:"error_km"`
		PositionSent string `json:"position_sent"`
	}
}

// TestOneEventPerFinalRecord writes, through the ledger itself on DynamoDB
// Local (the table as tableschema creates it, with its stream), every path
// a record takes, with the redeliveries and duplicate writes SQS and the SDK
// cause, then plays the results pipe from the embedded copy of the
// synthesized one over the table's stream: exactly one event per record
// that became final, none for claims, waits, pacer or budget items, none for
// a rewrite of a final record, and each detail valid against its schema.
func TestOneEventPerFinalRecord(t *testing.T) {
	ctx := context.Background()
	client, table := awspartstest.DynamoDB(t)
	clk := simclock.New(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	store := ledger.New(client, table, func(o *ledger.Options) { o.Clock = clk.Now })
	ref := func(key string) ledger.ObjectRef {
		return ledger.ObjectRef{Bucket: "uploads", Key: key, VersionID: "v-" + key, ETag: `"e-` + key + `"`}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	claim := func(r ledger.ObjectRef, want ledger.ClaimOutcome) *ledger.Claim {
		t.Helper()
		c, outcome, err := store.Claim(ctx, r, time.Minute)
		must(err)
		if outcome != want {
			t.Fatalf("claim %s: %s, want %s", r, outcome, want)
		}
		return c
	}
	lat, lon, km := 48.8566, 2.3522, 3.2
	paris := ledger.Record{ModelID: "global-v3", CreditsConsumed: 1, Place: "Paris", CountryCode: "FR",
		Latitude: &lat, Longitude: &lon, Source: ledger.SourceService, ErrorKm: &km, PredictionID: "p1"}

	// A success, its write retried by the SDK, then a redelivery.
	ok := ref("paris.jpg")
	c := claim(ok, ledger.ClaimAcquired)
	must(store.Complete(ctx, c, paris))
	must(store.Complete(ctx, c, paris))
	claim(ok, ledger.ClaimDone)

	// A 429 (waiting), then success on the next delivery.
	retried := ref("retried.jpg")
	c = claim(retried, ledger.ClaimAcquired)
	must(store.Fail(ctx, c, "rate_limited", "429", true))
	c = claim(retried, ledger.ClaimAcquired)
	must(store.Complete(ctx, c, ledger.Record{ModelID: "global-v3", CreditsConsumed: 1, Place: "Lyon", CountryCode: "FR", Latitude: &lat, Longitude: &lon, PositionSent: true}))

	// A rejection without a claim (the item's first write), delivered twice.
	notes := ref("notes.txt")
	must(store.Reject(ctx, notes, "not_an_image", "text/plain", ledger.ObjectInfo{Size: 10}))
	must(store.Reject(ctx, notes, "not_an_image", "text/plain", ledger.ObjectInfo{Size: 10}))

	// Found unfit after the claim.
	unfit := ref("unfit.jpg")
	c = claim(unfit, ledger.ClaimAcquired)
	must(store.RejectClaimed(ctx, c, "not_an_image", "pdf", ledger.ObjectInfo{}))

	// A final failure, its write retried.
	bad := ref("bad.jpg")
	c = claim(bad, ledger.ClaimAcquired)
	must(store.Fail(ctx, c, "unprocessable", "422", false))
	must(store.Fail(ctx, c, "unprocessable", "422", false))
	claim(bad, ledger.ClaimDone)

	// An attempt vanishes after claiming (outcome_unknown), then its late
	// result lands: the record's outcome changes, and says so.
	lost := ref("lost.jpg")
	c = claim(lost, ledger.ClaimAcquired)
	clk.Advance(2 * time.Minute)
	expired := claim(lost, ledger.ClaimExpired)
	must(store.MarkOutcomeUnknown(ctx, expired.Record))
	claim(lost, ledger.ClaimDone)
	must(store.Complete(ctx, c, paris))

	// Unversioned bucket: deleted before processing (a claimable rejection),
	// the same rejection redelivered, then the same bytes uploaded again.
	gone := ledger.ObjectRef{Bucket: "uploads", Key: "gone.jpg", ETag: `"e-gone"`}
	must(store.Reject(ctx, gone, ledger.ReasonObjectNotFound, "404", ledger.ObjectInfo{}))
	must(store.Reject(ctx, gone, ledger.ReasonObjectNotFound, "404", ledger.ObjectInfo{}))
	c = claim(gone, ledger.ClaimAcquired)
	must(store.Complete(ctx, c, paris))

	// Only waiting: nothing final, nothing published.
	must(store.MarkWaiting(ctx, ref("waiting.jpg"), "key_unreadable", "", false))
	must(store.MarkWaiting(ctx, ref("waiting.jpg"), "key_unreadable", "", true))
	// A claim still in progress.
	claim(ref("busy.jpg"), ledger.ClaimAcquired)
	// The budget counter, and an item of another family that happens to
	// carry a final status: neither is a record.
	_, err := store.ReserveCredits(ctx, ledger.Day(clk.Now()), 1, 100)
	must(err)
	_, err = client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "PACE#default"}, "sk": &types.AttributeValueMemberS{Value: "SCHEDULE"},
		"status": &types.AttributeValueMemberS{Value: "succeeded"}, "event_type": &types.AttributeValueMemberS{Value: "Photo Geolocated"},
	}})
	must(err)

	// Under both readings of how a pipe substitutes a string.
	for _, mode := range substitutions {
		t.Run(mode.name, func(t *testing.T) {
			checkOneEventPerFinalRecord(t, client, table, mode.mode)
		})
	}
}

// substitutions are the two readings of a template's string substitution.
var substitutions = []struct {
	name string
	mode pipes.Substitution
}{{"escaped", pipes.Escaped}, {"verbatim", pipes.Verbatim}}

func checkOneEventPerFinalRecord(t *testing.T, client *dynamodb.Client, table string, mode pipes.Substitution) {
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	pipe, err := pipes.ResultsPipe(nil)
	must(err)
	pipe.Substitution = mode
	events := readEvents(t, client, table, pipe)

	got := map[string][]string{}
	schemas := schemas(t)
	ids := map[string]bool{}
	for _, e := range events {
		validate(t, schemas, e)
		var d detail
		must(json.Unmarshal(e.Detail, &d))
		got[d.Key] = append(got[d.Key], e.DetailType)
		if e.Source != resultevents.Source || !slices.Equal(e.Resources, []string{"GetAtt:" + pipe.SourceTable + ".Arn"}) {
			t.Errorf("event source %q, resources %v", e.Source, e.Resources)
		}
		if ids[d.EventID] || d.EventID == "" {
			t.Errorf("event id %q repeated or empty", d.EventID)
		}
		ids[d.EventID] = true
		if d.Key == "paris.jpg" {
			if d.Status != "succeeded" || d.Place.Name != "Paris" || d.Place.CountryCode != "FR" || d.Place.Latitude != "48.8566" ||
				d.CreditsCharged != "1" || d.ModelID != "global-v3" || d.Exif.ErrorKm != "3.2" || d.Reason != "" {
				t.Errorf("paris.jpg detail: %s", e.Detail)
			}
		}
		if d.Key == "retried.jpg" && (d.Exif.ErrorKm != "" || d.Exif.PositionSent != "true") {
			t.Errorf("retried.jpg (position sent): %s", e.Detail)
		}
		if d.Key == "notes.txt" && (d.Reason != "not_an_image" || d.Place.Name != "" || d.CreditsCharged != "") {
			t.Errorf("notes.txt detail: %s", e.Detail)
		}
	}
	want := map[string][]string{
		"paris.jpg":   {resultevents.DetailTypeGeolocated},
		"retried.jpg": {resultevents.DetailTypeGeolocated},
		"notes.txt":   {resultevents.DetailTypeRejected},
		"unfit.jpg":   {resultevents.DetailTypeRejected},
		"bad.jpg":     {resultevents.DetailTypeFailed},
		"lost.jpg":    {resultevents.DetailTypeFailed, resultevents.DetailTypeGeolocated},
		"gone.jpg":    {resultevents.DetailTypeRejected, resultevents.DetailTypeGeolocated},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events by key:\n got %v\nwant %v", got, want)
	}
}

// readEvents plays the pipe over everything the table's stream holds.
func readEvents(t *testing.T, client *dynamodb.Client, table string, pipe *pipes.Pipe) []*pipes.Event {
	t.Helper()
	return readEventsOf(t, client, table, pipe, 20)
}

// readEventsOf is readEvents for a stream of at least minRecords records;
// a record the pipe cannot deliver fails the test.
func readEventsOf(t *testing.T, client *dynamodb.Client, table string, pipe *pipes.Pipe, minRecords int) []*pipes.Event {
	t.Helper()
	ctx := context.Background()
	arn, err := ddbstream.StreamArn(ctx, client, table)
	if err != nil {
		t.Fatal(err)
	}
	reader := ddbstream.New(ddbstream.NewLocalClient(awspartstest.SharedDynamoDB(t).Endpoint(), awsparts.Region), arn)
	var events []*pipes.Event
	records := 0
	err = reader.Poll(ctx, func(record []byte) error {
		records++
		e, ok, err := pipe.Apply(record, time.Now())
		if ok {
			events = append(events, e)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if records < minRecords {
		t.Fatalf("read %d stream records, fewer than the writes made", records)
	}
	t.Logf("%d stream records, %d events", records, len(events))
	return events
}

// TestSampleEvents checks the sample event of each type in events/: a
// whole EventBridge event whose detail validates against its schema.
func TestSampleEvents(t *testing.T) {
	schemas := schemas(t)
	for _, status := range resultevents.FinalStatuses {
		detailType := resultevents.DetailType(status)
		file := filepath.Join("../../../events", strings.ToLower(strings.ReplaceAll(detailType, " ", "-"))+".json")
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var e pipes.Event
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if e.DetailType != detailType || e.Source != resultevents.Source || len(e.Resources) != 1 {
			t.Errorf("%s: detail-type %q, source %q, resources %v", file, e.DetailType, e.Source, e.Resources)
		}
		validate(t, schemas, &e)
		// The README's consumer rule (French photos to a queue) picks the
		// Photo Geolocated sample, placed in France, and nothing else.
		matched, err := readmeRule.MatchJSON(raw)
		if err != nil {
			t.Fatal(err)
		}
		if matched != (detailType == resultevents.DetailTypeGeolocated) {
			t.Errorf("%s: the README's rule matches it: %t", file, matched)
		}
	}
}

// readmeRule is the README's example rule pattern (Result events).
var readmeRule = eventpattern.MustCompile(`{"source":["geolocate"],"detail-type":["Photo Geolocated"],"detail":{"place":{"country_code":["FR"]}}}`)

// TestHostileValues: keys and place names with quotes, backslashes,
// newlines, tabs, other control characters, non-ASCII and a key near S3's
// 1,024-byte limit come out of the pipe as valid JSON with every value
// exact, whether the pipe escapes substituted strings or not; and a record
// without a place renders each absent value as "", under both readings.
func TestHostileValues(t *testing.T) {
	ctx := context.Background()
	client, table := awspartstest.DynamoDB(t)
	clk := simclock.New(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	store := ledger.New(client, table, func(o *ledger.Options) { o.Clock = clk.Now })
	hostile := []string{
		`say "cheese".jpg`,
		`back\slash\.jpg`,
		"new\nline\r\n.jpg",
		"tab\there.jpg",
		"bell\x07nul\x01us\x1f del\x7f.jpg",
		"Zürich/漢字/🙂 \u2028\u2029.jpg",
		`<$.dynamodb.NewImage.key.S>"},"x":{"y":"`,
		strings.Repeat(`ab"\`, 250) + ".jpg", // 1,004 bytes
	}
	place := "Saint-\"Q\"\\Ville\n\tÉtat\x02"
	lat, lon := 48.8566, 2.3522
	for i, key := range hostile {
		r := ledger.ObjectRef{Bucket: "uploads", Key: key, VersionID: fmt.Sprintf("v%d", i), ETag: `"e` + fmt.Sprint(i) + `"`}
		c, outcome, err := store.Claim(ctx, r, time.Minute)
		if err != nil || outcome != ledger.ClaimAcquired {
			t.Fatalf("claim %q: %v %v", key, outcome, err)
		}
		rec := ledger.Record{ModelID: `model "x"\1`, CreditsConsumed: 1, Place: place, Admin1: key, CountryCode: "FR",
			Latitude: &lat, Longitude: &lon, Source: ledger.SourceService}
		if i%2 == 1 {
			// No place at all: every absent value renders as "".
			rec = ledger.Record{ModelID: `model "x"\1`, CreditsConsumed: 1}
		}
		if err := store.Complete(ctx, c, rec); err != nil {
			t.Fatal(err)
		}
	}
	for _, mode := range substitutions {
		t.Run(mode.name, func(t *testing.T) {
			pipe, err := pipes.ResultsPipe(nil)
			if err != nil {
				t.Fatal(err)
			}
			pipe.Substitution = mode.mode
			schemas := schemas(t)
			var keys []string
			for _, e := range readEventsOf(t, client, table, pipe, len(hostile)) {
				validate(t, schemas, e)
				var d struct {
					detail
					ETag  string `json:"etag"`
					Place struct {
						Name, Admin1, Admin2, Latitude string
					}
				}
				if err := json.Unmarshal(e.Detail, &d); err != nil {
					t.Fatalf("detail is not JSON: %v\n%s", err, e.Detail)
				}
				i := slices.Index(hostile, d.Key)
				if i < 0 {
					t.Errorf("key %q is none of the keys written", d.Key)
					continue
				}
				keys = append(keys, d.Key)
				wantPlace, wantAdmin1, wantLat := place, d.Key, "48.8566"
				if i%2 == 1 {
					wantPlace, wantAdmin1, wantLat = "", "", ""
				}
				if d.ModelID != `model "x"\1` || d.ETag != `"e`+fmt.Sprint(i)+`"` || d.Place.Name != wantPlace ||
					d.Place.Admin1 != wantAdmin1 || d.Place.Admin2 != "" || d.Place.Latitude != wantLat {
					t.Errorf("key %q: detail %s", d.Key, e.Detail)
				}
			}
			if len(keys) != len(hostile) {
				t.Errorf("%d events for %d records", len(keys), len(hostile))
			}
		})
	}
}
