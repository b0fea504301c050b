package widget

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
)

// BenchmarkWidgetLedger10k is the measurement the function's memory and
// timeout are sized by (infra/mapwidget.go, docs/map.md): one drawing of
// the widget's cap, 10,000 records, read from the table's index on
// DynamoDB Local and drawn. The records are full size: each carries a raw
// service answer of about 1.5 KB, as real ones do. It reports the heap the
// drawing needs (peak-heap-MB, sampled after the read and after the
// drawing) besides time and allocations.
func BenchmarkWidgetLedger10k(b *testing.B) {
	client, table := awspartstest.DynamoDB(b)
	at := time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC)
	seedFullRecords(b, client, table, 10000, at)
	now := at.Add(4 * time.Hour)
	w := New(ledger.New(client, table, func(o *ledger.Options) { o.Clock = func() time.Time { return now } }),
		func(o *Options) { o.Clock = func() time.Time { return now } })
	ev := Event{WidgetContext: &WidgetContext{TimeRange: TimeRange{Start: at.Add(-time.Hour).UnixMilli(), End: now.UnixMilli()}, Width: 1200, Height: 560}}
	var peak uint64
	b.ReportAllocs()
	for b.Loop() {
		runtime.GC()
		stop := samplePeakHeap(&peak)
		out, err := w.Handle(context.Background(), ev)
		stop()
		if err != nil {
			b.Fatal(err)
		}
		if !strings.Contains(out.(string), `data-points="10000"`) {
			b.Fatalf("drew %.300s", out)
		}
	}
	b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
}

// samplePeakHeap records the largest heap in use (live and not yet
// collected objects, runtime/metrics) every millisecond until stopped.
func samplePeakHeap(peak *uint64) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	go func() {
		defer close(finished)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			*peak = max(*peak, sample[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}

// seedFullRecords writes n succeeded records a second apart from at, with
// BatchWriteItem (the ledger's own writes would take minutes).
func seedFullRecords(b *testing.B, client *dynamodb.Client, table string, n int, at time.Time) {
	b.Helper()
	rng := rand.New(rand.NewPCG(27, 1))
	raw := `{"predictions":[` + strings.Repeat(`{"latitude":48.8566,"longitude":2.3522,"name":"Paris","country_code":"FR","radius_km":12.5},`, 14) + `{}]}`
	var batch []types.WriteRequest
	flush := func() {
		for len(batch) > 0 {
			out, err := client.BatchWriteItem(context.Background(), &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{table: batch}})
			if err != nil {
				b.Fatal(err)
			}
			batch = out.UnprocessedItems[table]
		}
	}
	for i := range n {
		t := at.Add(time.Duration(i) * time.Second)
		lat, lon := rng.Float64()*120-55, rng.Float64()*360-180
		rec := ledger.Record{
			PK: fmt.Sprintf("OBJ#bench#photos/%05d.jpg", i), SK: "V#v1", Bucket: "bench", Key: fmt.Sprintf("photos/%05d.jpg", i), VersionID: "v1",
			Status: ledger.StatusSucceeded, Source: ledger.SourceService, ModelID: "global-v2", CreditsConsumed: 1,
			Place: "Somewhere", Admin1: "Region", CountryCode: "XX", Latitude: aws.Float64(lat), Longitude: aws.Float64(lon), RadiusKM: aws.Float64(rng.Float64() * 800),
			ExifLatitude: aws.Float64(lat + 0.5), ExifLongitude: aws.Float64(lon + 0.5), ErrorKm: aws.Float64(70),
			RawResult: raw, CreatedAt: t, UpdatedAt: t, StatusDay: ledger.StatusSucceeded + "#" + ledger.Day(t),
		}
		item, err := attributevalue.MarshalMap(rec)
		if err != nil {
			b.Fatal(err)
		}
		// The index's sort key as the ledger writes it: fixed-width UTC.
		item["updated_at"] = &types.AttributeValueMemberS{Value: t.UTC().Format("2006-01-02T15:04:05.000000000Z")}
		batch = append(batch, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
		if len(batch) == 25 {
			flush()
		}
	}
	flush()
}
