package jobs

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
)

// planRecords are n records as a reprocess job's selection reads them
// (ledger.Query: each unmarshalled from its item), of the size the bench
// measures for an upload's succeeded record (about 1.8 KB by DynamoDB's
// size rules: the answer's places, its predictions, the raw body kept).
func planRecords(tb testing.TB, n int) []ledger.Record {
	tb.Helper()
	f := func(v float64) *float64 { return &v }
	proto := ledger.Record{Bucket: "archive-bucket", Status: ledger.StatusSucceeded, ModelID: "geo-default", PredictionID: "pred_0123456789abcdef",
		CreditsConsumed: 1, ResultType: "prediction", Place: "Harbour Street", Admin1: "Kent", Admin2: "Folkestone", CountryCode: "GB",
		Latitude: f(51.08), Longitude: f(1.18), RadiusKM: f(2.5), Confidence: f(0.82),
		RawResult:    `{"prediction":{"type":"prediction","top":{"lat":51.08,"lon":1.18,"radius_km":2.5,"confidence":0.82,"name":"Harbour Street"}}}` + strings.Repeat(" ", 600),
		ProcessingMS: 180, RoundTripMS: 220, Source: "upload", UploadMetadata: "strip", SentBytes: 300000, SentWidth: 1600, SentHeight: 1200}
	for i := range 3 {
		proto.Predictions = append(proto.Predictions, ledger.Prediction{Rank: i + 1, Latitude: 51, Longitude: 1, Confidence: 0.3, Name: "Folkestone", Admin1: "Kent", CountryCode: "GB"})
	}
	out := make([]ledger.Record, n)
	for i := range out {
		r := proto
		r.Key = fmt.Sprintf("archive/2019/06/IMG_%07d.jpg", i)
		r.VersionID = fmt.Sprintf("3sL4kqtJlcpXroDTDmJ%013d", i)
		r.ETag = fmt.Sprintf("%032x", i)
		r.UpdatedAt = time.Date(2026, 11, 1, 0, 0, i%86400, 0, time.UTC)
		item, err := attributevalue.MarshalMap(r)
		if err != nil {
			tb.Fatal(err)
		}
		if err := attributevalue.UnmarshalMap(item, &out[i]); err != nil {
			tb.Fatal(err)
		}
	}
	return out
}

// BenchmarkPlanRunHeap is the heap a reprocess job's planning holds per
// record of its selection: the records as ledger.Query returns them and
// PlanRun's grouping and plan over them, the peak MaxPlanRecords is sized
// by (heap-bytes/record).
func BenchmarkPlanRunHeap(b *testing.B) {
	const n = 20000
	for range b.N {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		records := planRecords(b, n)
		plan := PlanRun(records, Selection{Status: ledger.StatusSucceeded}, "again")
		runtime.GC()
		runtime.ReadMemStats(&after)
		if len(plan.Todo) != n {
			b.Fatalf("planned %d of %d", len(plan.Todo), n)
		}
		// The live heap with the records and the plan both reachable, as
		// they are while the plan's chunks are written (the items each page
		// was unmarshalled from are garbage by then: at most a 1 MB page
		// of them is live at once).
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "heap-bytes/record")
		runtime.KeepAlive(records)
		runtime.KeepAlive(plan)
	}
}
