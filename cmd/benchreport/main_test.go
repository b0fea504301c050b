package main

import (
	"context"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/geolocate-aws/geolocate/pkg/local/bench"
	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
	"github.com/geolocate-aws/geolocate/pkg/photo/imageformat"
	"github.com/geolocate-aws/geolocate/pkg/photo/metastrip"
	"github.com/geolocate-aws/geolocate/pkg/predictor"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
	"github.com/geolocate-aws/geolocate/pkg/shared/s3event"
)

// The stack's configuration is read from the real cdk.json.
func TestReadStack(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	st, err := readStack(root)
	if err != nil {
		t.Fatal(err)
	}
	if st.MemoryMB < 128 || st.BatchSize < 1 || st.BatchSize > 10 || st.Timeout < 30*time.Second || st.MonitorMinutes < 1 {
		t.Errorf("implausible stack configuration from cdk.json: %+v", st)
	}
}

// The environment given to the measured handlers must be one the
// predictor accepts, with the rate shared among the instances.
func TestFunctionEnvIsAValidPredictorConfig(t *testing.T) {
	st := stack{MemoryMB: 256, BatchSize: 5, Timeout: 2 * time.Minute}
	vars := functionEnv(st, "http://127.0.0.1:9", 600, 4)
	cfg, err := predictor.LoadConfig(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.PerInstanceRate() != 150 || cfg.ClaimLease != 3*time.Minute || cfg.BucketName != bucketName {
		t.Errorf("config = %+v", cfg)
	}
	if !strings.HasPrefix(vars[envvars.APIKey], "geo_") || !strings.Contains(vars[envvars.APIKey], "fake") {
		t.Errorf("the key must be an obviously fake geo_ key")
	}
	// The overhead, memory and cold-start stages run one unpaced instance
	// at the 512 MB the stack deploys: the stack's rules must accept that
	// too (a rate of a million a minute once stopped all three).
	st.MemoryMB = 512
	unpaced := functionEnv(st, "http://127.0.0.1:9", unpacedRate, 1)
	if _, err := predictor.LoadConfig(func(k string) string { return unpaced[k] }); err != nil {
		t.Errorf("the unpaced stages' environment: %v", err)
	}
}

func TestSQSEventCarriesTheUpload(t *testing.T) {
	obj := s3event.ObjectCreated{Bucket: bucketName, Key: "a b/ü.jpg", Size: 42, ETag: `"abc"`, Time: time.Now()}
	payload, msgs, err := sqsEvent(context.Background(), sqsqueue.New(), obj)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || msgs[0].EventSource != "aws:sqs" {
		t.Fatalf("messages = %+v", msgs)
	}
	body, _ := s3event.Body(obj)
	if msgs[0].Body != body || !strings.Contains(string(payload), `a+b/%C3%BC.jpg`) {
		t.Errorf("event does not carry the S3 notification: %s", payload)
	}
	failures, err := batchFailures([]byte(`{"batchItemFailures":[{"itemIdentifier":"m1"}]}`))
	if err != nil || len(failures) != 1 || failures[0] != (events.SQSBatchItemFailure{ItemIdentifier: "m1"}) {
		t.Errorf("batchFailures = %v, %v", failures, err)
	}
}

func TestFakeJPEGIsAnImageAndDistinct(t *testing.T) {
	a, b := fakeJPEG(1000, 1), fakeJPEG(1000, 2)
	if f, ok := imageformat.Detect(a); !ok || f.Name != "jpeg" {
		t.Errorf("Detect = %v, %v; want jpeg", f, ok)
	}
	if len(a) != 1000 || string(a) == string(b) || string(a) != string(fakeJPEG(1000, 1)) {
		t.Errorf("fakeJPEG must have the asked size, differ by seed and repeat for a seed")
	}
	// The predictor strips it as a photo: a well-formed JPEG with an EXIF
	// block, its scan streamed to the end.
	big := fakeJPEG(300<<10, 3)
	rep, err := metastrip.Check(big, int64(len(big)))
	if err != nil || rep.Truncated || rep.ByKind()[metastrip.KindEXIF] == 0 || rep.ByKind()[metastrip.KindJunk] != 0 {
		t.Errorf("fakeJPEG does not strip as a photo: %v %+v", err, rep)
	}
}

func TestLauncherFigures(t *testing.T) {
	out := "some child output\n" + rssLauncherPrefix + "maxrss=15000000 hwm=14000000 wall_ns=250000000 cpu_ns=50000000\n"
	maxRSS, hwm, wall, cpu, err := launcherFigures(out)
	if err != nil || maxRSS != 15e6 || hwm != 14e6 || wall != 250*time.Millisecond || cpu != 50*time.Millisecond {
		t.Errorf("launcherFigures = %d %d %v %v %v", maxRSS, hwm, wall, cpu, err)
	}
	if _, _, _, _, err := launcherFigures("no report"); err == nil {
		t.Error("a missing report must be an error")
	}
}

func TestHighWaterMarkOfThisProcess(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc")
	}
	if hwm := highWaterMark("/proc/self/status"); hwm < 1<<20 {
		t.Errorf("VmHWM of the test process = %d bytes", hwm)
	}
	if hwm := highWaterMark("/proc/0/does-not-exist"); hwm != 0 {
		t.Errorf("missing file gave %d", hwm)
	}
}

// The cost section sets the real rate beside the high rate, judges the real
// rate's billed time against issue 28's target and its cost against issue
// 38's $0.010, says what the target would take when missed, and where the
// write units go by item.
func TestCostAtTheRealRateBesideTheHighRate(t *testing.T) {
	run := func(rate float64, billed float64, invocations int) *throughputResult {
		return &throughputResult{Config: throughputConfig{RatePerMinute: rate, Latency: 200 * time.Millisecond, Instances: 2},
			Uploads: 60, Succeeded: 60, Charged: 60, Invocations: invocations, BilledSeconds: billed, AchievedPerMinute: rate,
			LogBytes: 60 * 1200, Usage: bench.Usage{WriteUnits: 60 * 1, Requests: map[string]int{"S3.GetObject": 60},
				Items: map[string]bench.ItemUsage{"OBJ#": {Writes: 120, TableUnits: 30, IndexUnits: 30}, "X#": {Writes: 6, Failed: 6}}}}
	}
	r := &results{Stack: stack{MemoryMB: 512, BatchSize: 5, Timeout: 2 * time.Minute, MonitorMinutes: 5},
		RealRate: run(30, 60*0.3, 62), Throughput: run(600, 60*0.35, 30)}
	md := string(r.markdown())
	for _, want := range []string{
		"| Billed Lambda time per image at the real rate (R=30/min, L=200ms) | 300 ms | <= 700 ms (L + 500ms) | PASS |",
		"| Cost per 1,000 images at 30/min |", "<= $0.010 AWS | PASS |",
		"| Cost per 1,000 images at 600/min |",
		"At 30/min: quantity | USD | At 600/min: quantity | USD |",
		"is within $0.010",
		"| `OBJ#` object record: the claim (UpdateItem, not in the by-status index), the record (PutItem), a release or failure | 2.00 | 0.50 | 0.50 | 0.00 | 1.00 | 7.00 |",
		"| `X#` | 0.10 | 0.00 | 0.00 | 0.10 | 0.10 | - |",
		"| The same with result events off (`events: false`: no stream polling, pipe or bus events) | $",
		"Against the run before issue 38's cost work (b02fa80, same flags): 1.0 write units per image, before 10.5;",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	r.RealRate = run(30, 60*1.2, 120)
	r.RealRate.Usage.WriteUnits = 60 * 20
	md = string(r.markdown())
	for _, want := range []string{"| 1200 ms | <= 700 ms (L + 500ms) | MISS |", "What $0.010 at 30/min would take:", "DynamoDB writes (on-demand) $", "with `events: false` the total is $"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}

// With events off, the cost drops by exactly the three result-event lines.
func TestWithoutResultEventsDropsTheirLines(t *testing.T) {
	u := bench.PerImage{BilledSeconds: 0.3, MemoryMB: 512, Invocations: 1, DynamoDBWriteUnits: 7, S3Gets: 1, SQSRequests: 3, StreamReads: 8, ResultEvents: 1}
	lines, total := bench.ListPrices.Per1000(u)
	_, quiet := bench.ListPrices.Per1000(withoutResultEvents(u))
	var events float64
	for _, l := range lines {
		switch l.Item {
		case "DynamoDB Streams reads (results pipe)", "EventBridge Pipes requests", "EventBridge custom events":
			events += l.USD
		}
	}
	if events == 0 || math.Abs(total-events-quiet) > 1e-12 {
		t.Errorf("events off: $%.6f, want $%.6f - $%.6f", quiet, total, events)
	}
}
