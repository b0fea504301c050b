package bench

import (
	"math"
	"testing"
)

func TestPer1000(t *testing.T) {
	p := Prices{LambdaGBSecondARM: 2, LambdaRequest: 3, DynamoDBWriteUnit: 5, DynamoDBReadUnit: 7,
		S3GetRequest: 11, SQSRequest: 13, SecretsManagerCall: 17, LogsIngestionGB: 19,
		StreamsReadRequest: 23, PipesRequest: 29, EventBridgeEvent: 31}
	u := PerImage{Credits: 1, BilledSeconds: 0.5, MemoryMB: 256, Invocations: 0.2,
		DynamoDBWriteUnits: 2, DynamoDBReadUnits: 1, S3Gets: 2, SQSRequests: 1.4, SecretsCalls: 0.01, LogBytes: 1 << 20,
		StreamReads: 0.5, ResultEvents: 1, EnrichInvocations: 0.4, EnrichBilledSeconds: 0.0004, EnrichMemoryMB: 128, EnrichLogBytes: 1 << 19}
	lines, total := p.Per1000(u)
	want := map[string]float64{
		"Service credits":                                     0,                     // credits have no dollar price here
		"Lambda compute (arm64)":                              1000 * 0.5 * 0.25 * 2, // 125 GB-s
		"Lambda requests":                                     200 * 3,
		"DynamoDB writes (on-demand)":                         2000 * 5,
		"DynamoDB reads (on-demand)":                          1000 * 7,
		"S3 GET/HEAD":                                         2000 * 11,
		"SQS requests":                                        1400 * 13,
		"Secrets Manager API calls":                           10 * 17,
		"CloudWatch Logs ingestion":                           1000.0 / 1024 * 19,
		"DynamoDB Streams reads (results pipe)":               500 * 23,
		"EventBridge Pipes requests":                          1000 * 29,
		"EventBridge custom events":                           1000 * 31,
		"Lambda requests (results pipe enrichment)":           400 * 3,
		"Lambda compute (results pipe enrichment, arm64)":     1000 * 0.0004 * 0.125 * 2, // 0.05 GB-s
		"CloudWatch Logs ingestion (results pipe enrichment)": 500.0 / 1024 * 19,
	}
	var sum float64
	for _, l := range lines {
		w, ok := want[l.Item]
		if !ok {
			t.Errorf("unexpected line %q", l.Item)
			continue
		}
		if math.Abs(l.USD-w) > 1e-9 {
			t.Errorf("%s = %v USD, want %v", l.Item, l.USD, w)
		}
		sum += w
		delete(want, l.Item)
	}
	if len(want) != 0 {
		t.Errorf("missing lines: %v", want)
	}
	if math.Abs(total-sum) > 1e-9 {
		t.Errorf("total = %v, want %v", total, sum)
	}
	if lines[0].Quantity != 1000 {
		t.Errorf("credits per 1,000 images = %v, want 1000", lines[0].Quantity)
	}
}

func TestBilledSecondsRoundsUpToTheMillisecond(t *testing.T) {
	for _, tt := range []struct{ in, want float64 }{{0.0101, 0.011}, {0.011, 0.011}, {1.2344, 1.235}, {0, 0}} {
		if got := BilledSeconds(tt.in); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("BilledSeconds(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestListPricesArePositive(t *testing.T) {
	lines, total := ListPrices.Per1000(PerImage{Credits: 1, BilledSeconds: 0.1, MemoryMB: 128, Invocations: 1,
		DynamoDBWriteUnits: 1, DynamoDBReadUnits: 1, S3Gets: 1, SQSRequests: 1, SecretsCalls: 1, LogBytes: 1,
		StreamReads: 1, ResultEvents: 1, EnrichInvocations: 1, EnrichBilledSeconds: 0.001, EnrichMemoryMB: 128, EnrichLogBytes: 1})
	for _, l := range lines[1:] {
		if l.UnitPrice <= 0 || l.USD <= 0 {
			t.Errorf("%s has no price", l.Item)
		}
	}
	if total <= 0 || ListPrices.Date == "" || ListPrices.Region == "" {
		t.Errorf("list prices incomplete: total %v, date %q, region %q", total, ListPrices.Date, ListPrices.Region)
	}
}
