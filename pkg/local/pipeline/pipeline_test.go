package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/alarmeval"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
	"github.com/geolocate-aws/geolocate/pkg/local/syncbuf"
	"github.com/geolocate-aws/geolocate/pkg/predictor"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
	"github.com/geolocate-aws/geolocate/pkg/shared/tableschema"
)

// sampleImagesDir is the repository's sample images, used by `make run`.
const sampleImagesDir = "../../../testdata/images"

// wantOutcome is what the pipeline must make of one file.
type wantOutcome struct {
	status string
	reason string // error_code of a rejected record
	// heldSlot: a succeeded photo may take two claims, when its call slot
	// was more than MaxSlotWait away and its message went back to the
	// queue holding it (at the service's real rate, every photo after the
	// first of a burst). Otherwise a succeeded photo is claimed once.
	heldSlot bool
	// content names the photo the service would see (the file's SHA-256:
	// the samples stay distinct once stripped): with reuseResults=content,
	// the default, files holding the same photo are paid for once.
	content string
}

// imagesDir copies the sample images into a temporary directory and adds
// hostile files, returning the directory and the outcome each file must
// get. Sample files are classified by their own bytes, not by name.
func imagesDir(t *testing.T) (string, map[string]wantOutcome) {
	t.Helper()
	dir := t.TempDir()
	want := map[string]wantOutcome{}
	entries, err := os.ReadDir(sampleImagesDir)
	if err != nil {
		t.Fatalf("sample images: %v", err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(sampleImagesDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, dir, e.Name(), b)
		want[e.Name()] = outcomeOf(b)
	}
	if len(want) < 3 {
		t.Fatalf("expected at least 3 sample files in %s, found %d", sampleImagesDir, len(want))
	}

	png, err := os.ReadFile(filepath.Join(sampleImagesDir, "checker-32x32.png"))
	if err != nil {
		t.Fatal(err)
	}
	hostile := map[string][]byte{
		"holiday notes.jpg":     []byte("Dear diary, this is text pretending to be a JPEG.\n"),
		"empty.jpg":             {},
		"café + 100% sure.png":  png, // spaces, "+", "%" and non-ASCII in the key
		"truncated-header.jpeg": {0xFF, 0xD8},
	}
	for name, b := range hostile {
		writeFile(t, dir, name, b)
		want[name] = outcomeOf(b)
	}
	writeFile(t, dir, ".hidden.jpg", png) // hidden files are not uploaded
	if err := os.Mkdir(filepath.Join(dir, "subdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, want
}

// outcomeOf classifies content independently of the predictor: JPEG, PNG
// and HEIC/HEIF/AVIF (an ISO BMFF "ftyp" box first) signatures succeed,
// empty files and anything else are rejected.
func outcomeOf(b []byte) wantOutcome {
	switch {
	case len(b) == 0:
		return wantOutcome{status: ledger.StatusRejected, reason: "empty_object"}
	case len(b) >= 32 && bytes.HasPrefix(b, []byte{0xFF, 0xD8, 0xFF}),
		bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")),
		len(b) >= 12 && string(b[4:8]) == "ftyp":
		sum := sha256.Sum256(b)
		return wantOutcome{status: ledger.StatusSucceeded, content: hex.EncodeToString(sum[:])}
	default:
		return wantOutcome{status: ledger.StatusRejected, reason: "not_an_image"}
	}
}

func writeFile(t *testing.T, dir, name string, b []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// noServiceEnv makes Run use the simulator whatever the shell exports.
func noServiceEnv(string) string { return "" }

func checkResults(t *testing.T, sum *Summary, want map[string]wantOutcome) {
	t.Helper()
	if len(sum.Results) != len(want) {
		t.Errorf("%d results, want one per file (%d)", len(sum.Results), len(want))
	}
	if lost := sum.Lost(); len(lost) != 0 {
		t.Errorf("lost uploads: %+v", lost)
	}
	if len(sum.DeadLetters) != 0 {
		t.Errorf("dead letters: %+v", sum.DeadLetters)
	}
	seen := map[string]bool{}
	payers := map[string]int{} // content -> records that paid for it
	copies := map[string]int{} // content -> files holding it
	for _, w := range want {
		copies[w.content]++
	}
	for _, r := range sum.Results {
		name := filepath.Base(r.Upload.File)
		seen[name] = true
		w, ok := want[name]
		if !ok {
			t.Errorf("unexpected upload %q", name)
			continue
		}
		rec := r.Record
		if rec == nil {
			t.Errorf("%s: no record", name)
			continue
		}
		if rec.Key != r.Upload.Key || rec.Bucket != sum.Bucket {
			t.Errorf("%s: record is for s3://%s/%s", name, rec.Bucket, rec.Key)
		}
		if rec.Status != w.status {
			t.Errorf("%s: status %q (%s: %s), want %q", name, rec.Status, rec.ErrorCode, rec.ErrorMessage, w.status)
			continue
		}
		if rec.Size != r.Upload.Size {
			t.Errorf("%s: record size %d, uploaded %d", name, rec.Size, r.Upload.Size)
		}
		switch w.status {
		case ledger.StatusSucceeded:
			if rec.Place == "" || len(rec.CountryCode) != 2 || rec.Latitude == nil || rec.Longitude == nil {
				t.Errorf("%s: incomplete location %q %q %v %v", name, rec.Place, rec.CountryCode, rec.Latitude, rec.Longitude)
			}
			if rec.ReusedFrom == "" {
				payers[w.content]++
			}
			if credits := paidCredits(rec); rec.CreditsConsumed != credits || rec.ModelID == "" || rec.PredictionID == "" {
				t.Errorf("%s: credits %d (reused from %q) model %q prediction %q, want %d credit(s) from the default model",
					name, rec.CreditsConsumed, rec.ReusedFrom, rec.ModelID, rec.PredictionID, credits)
			}
			maxAttempts := 1
			if w.heldSlot {
				maxAttempts = 2
			}
			if copies[w.content] > 1 {
				// Returned while a copy held the photo (5 s, then 10 s):
				// each return is a claim.
				maxAttempts += 2
			}
			if rec.Attempts < 1 || rec.Attempts > maxAttempts {
				t.Errorf("%s: %d attempts, want 1 to %d", name, rec.Attempts, maxAttempts)
			}
		case ledger.StatusRejected:
			if rec.ErrorCode != w.reason {
				t.Errorf("%s: rejected for %q, want %q", name, rec.ErrorCode, w.reason)
			}
			if rec.CreditsConsumed != 0 {
				t.Errorf("%s: rejected but %d credits", name, rec.CreditsConsumed)
			}
		}
	}
	for name, w := range want {
		if !seen[name] {
			t.Errorf("%s was not uploaded", name)
		}
		if w.status == ledger.StatusSucceeded && payers[w.content] != 1 {
			t.Errorf("%s: %d records paid for its photo, want 1", name, payers[w.content])
		}
	}
}

// paidCredits is what a succeeded record must have been charged: 1 by the
// default model, 0 when its answer was reused from a copy's.
func paidCredits(rec *ledger.Record) int {
	if rec.ReusedFrom != "" {
		return 0
	}
	return 1
}

// succeededFiles is the number of files that succeed, copies included.
func succeededFiles(want map[string]wantOutcome) int {
	n := 0
	for _, w := range want {
		if w.status == ledger.StatusSucceeded {
			n++
		}
	}
	return n
}

// succeeded is the number of paid calls the files in want need: one per
// distinct photo that succeeds.
func succeeded(want map[string]wantOutcome) int {
	photos := map[string]bool{}
	for _, w := range want {
		if w.status == ledger.StatusSucceeded {
			photos[w.content] = true
		}
	}
	return len(photos)
}

func TestRunProcessesEveryUploadAndStopsEverything(t *testing.T) {
	dir, want := imagesDir(t)
	var progress bytes.Buffer
	var mu sync.Mutex
	var reported []string
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	metrics := alarmeval.NewStore()
	begin := time.Now()

	sum, err := Run(ctx, Options{
		ImagesDir: dir,
		KeyPrefix: "uploads/",
		Getenv:    noServiceEnv,
		Progress:  &progress,
		Metrics:   metrics,
		OnResult: func(r Result) {
			mu.Lock()
			reported = append(reported, r.Upload.Key)
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatalf("Run: %v\nprogress:\n%s", err, progress.String())
	}
	if !sum.Simulated {
		t.Errorf("service = %q, want the simulator", sum.Service)
	}
	checkResults(t, sum, want)

	// Every credit charged is on a record, and no call was wasted.
	wantCalls := succeeded(want)
	if sum.PredictCalls != wantCalls || sum.CreditsCharged != wantCalls || sum.CreditsRecorded() != wantCalls {
		t.Errorf("calls %d, charged %d, recorded %d; want %d each",
			sum.PredictCalls, sum.CreditsCharged, sum.CreditsRecorded(), wantCalls)
	}
	if len(reported) != len(want) {
		t.Errorf("OnResult called for %d uploads, want %d", len(reported), len(want))
	}
	for _, r := range sum.Results {
		if !strings.HasPrefix(r.Upload.Key, "uploads/") {
			t.Errorf("key %q lacks the prefix", r.Upload.Key)
		}
	}
	if !strings.Contains(progress.String(), "uploaded  uploads/café + 100% sure.png") {
		t.Errorf("progress lacks the upload lines:\n%s", progress.String())
	}

	if sum.Monitor == nil {
		t.Fatalf("monitor did not run: %s", sum.MonitorError)
	}
	if c := sum.Monitor.Credits; c == nil || int(c.Remaining) != geosim.DefaultAllowance-wantCalls {
		t.Errorf("monitor credits = %+v, want %d remaining", c, geosim.DefaultAllowance-wantCalls)
	}
	if m := sum.Monitor.Models; m == nil || m.Ready == 0 {
		t.Errorf("monitor models = %+v, want ready models", m)
	}
	// The monitor read the credits before the uploads and after them,
	// seconds apart: too short a span for a forecast (a burst is no daily
	// rate), which the report says rather than "5 minutes left".
	if f := sum.Monitor.Forecast; f == nil || f.Used != 2 || f.BurnPerDay != nil || f.DaysRemaining != nil || !strings.HasPrefix(f.Reason, "not enough history yet: 2 readings over") {
		t.Errorf("monitor forecast = %+v, want none from 2 readings seconds apart, said so", f)
	}

	// The store holds what CloudWatch would: the functions' metrics and
	// AWS's own for the queue, the invocations and the monitor's schedule.
	total := func(ns, name string, dims map[string]string) float64 {
		var dim []alarmeval.Dimension
		for k, v := range dims {
			dim = append(dim, alarmeval.Dimension{Name: k, Value: v})
		}
		points, err := metrics.StatSeries(alarmeval.MetricStat{
			Metric: alarmeval.Metric{Namespace: ns, MetricName: name, Dimensions: dim},
			Stat:   alarmeval.Sum, Period: time.Hour,
		}, begin.Add(-time.Hour), time.Now().Add(time.Hour), alarmeval.Options{})
		if err != nil {
			t.Fatal(err)
		}
		sum := 0.0
		for _, p := range points {
			sum += p.Value
		}
		return sum
	}
	for _, c := range []struct {
		ns, name string
		dims     map[string]string
		want     float64
	}{
		{"AWS/SQS", "NumberOfMessagesSent", map[string]string{"QueueName": sqsqueue.DefaultName}, float64(len(want))},
		{"AWS/SQS", "NumberOfMessagesDeleted", map[string]string{"QueueName": sqsqueue.DefaultName}, float64(len(want))},
		{"AWS/Lambda", "Invocations", map[string]string{"FunctionName": localNames.Predictor}, float64(sum.Queue.Invocations)},
		{"AWS/Lambda", "Errors", map[string]string{"FunctionName": localNames.Predictor}, 0},
		{"AWS/Events", "Invocations", map[string]string{"RuleName": localNames.MonitorRule}, 2},
		{"Geolocation", "ImagesSucceeded", map[string]string{"Pipeline": PipelineName}, float64(succeededFiles(want))},
		{"Geolocation", "ImagesReused", map[string]string{"Pipeline": PipelineName}, float64(succeededFiles(want) - wantCalls)},
	} {
		if got := total(c.ns, c.name, c.dims); got != c.want {
			t.Errorf("%s/%s%v = %v, want %v", c.ns, c.name, c.dims, got, c.want)
		}
	}

	// Everything Run started is stopped: nothing listens any more.
	for _, endpoint := range []string{sum.DynamoDBEndpoint, sum.S3Endpoint} {
		addr := strings.TrimPrefix(endpoint, "http://")
		if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			conn.Close()
			t.Errorf("%s still accepts connections after Run returned", endpoint)
		}
	}
}

func TestRunWithDuplicateDeliveriesChargesOnce(t *testing.T) {
	db := awspartstest.SharedDynamoDB(t)
	dir, want := imagesDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	sum, err := Run(ctx, Options{
		ImagesDir:     dir,
		Getenv:        noServiceEnv,
		DynamoDB:      db,
		Table:         "duplicates-" + fmt.Sprint(time.Now().UnixNano()),
		DuplicateRate: 1, // every message is delivered twice
		Progress:      testLog{t},
		Concurrency:   3,
		BatchSize:     2,
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkResults(t, sum, want)
	if sum.Queue.Acked < int64(2*len(want)) {
		t.Errorf("acked %d deliveries, want every message twice (%d)", sum.Queue.Acked, 2*len(want))
	}
	if n := succeeded(want); sum.PredictCalls != n || sum.CreditsCharged != n {
		t.Errorf("%d calls, %d credits charged; want %d each: a duplicate cost credits", sum.PredictCalls, sum.CreditsCharged, n)
	}
}

// TestRunOnEachKindOfBucket runs the pipeline on a versioned bucket (the
// stack's) and on an unversioned one (S3's default, as a user's existing
// bucket may be): every upload is processed either way, and its record is
// keyed by the version id or, without one, by the ETag.
func TestRunOnEachKindOfBucket(t *testing.T) {
	db := awspartstest.SharedDynamoDB(t)
	for _, mode := range []struct {
		unversioned   bool
		notifications string
	}{{false, NotificationsS3}, {true, NotificationsS3}, {true, NotificationsEventBridge}} {
		unversioned := mode.unversioned
		t.Run(bucketMode(Options{Unversioned: unversioned})+"/"+mode.notifications, func(t *testing.T) {
			dir, want := imagesDir(t)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			sum, err := Run(ctx, Options{
				ImagesDir:     dir,
				Getenv:        noServiceEnv,
				DynamoDB:      db,
				Table:         "buckets-" + fmt.Sprint(time.Now().UnixNano()),
				Unversioned:   unversioned,
				Notifications: mode.notifications,
				Progress:      testLog{t},
			})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if sum.Versioned == unversioned {
				t.Errorf("Summary.Versioned = %v with Unversioned %v", sum.Versioned, unversioned)
			}
			checkResults(t, sum, want)
			checkRecordKeys(t, db, sum)
			if n := succeeded(want); sum.PredictCalls != n || sum.CreditsCharged != n {
				t.Errorf("%d calls, %d credits charged; want %d each", sum.PredictCalls, sum.CreditsCharged, n)
			}
		})
	}
}

// checkRecordKeys reads the items of each uploaded key straight from the
// table and checks their sort keys: "V#<version id>" on a versioned bucket
// (every upload has one), "V#<ETag>" on an unversioned one (no upload has
// one). An overwritten key has one item per upload.
func checkRecordKeys(t *testing.T, db *awsparts.DynamoDB, sum *Summary) {
	t.Helper()
	wantSKs := map[string]map[string]bool{} // pk -> sort keys
	for _, r := range sum.Results {
		u := r.Upload
		var sk string
		switch {
		case sum.Versioned && u.VersionID == "":
			t.Errorf("%s: no version id from a versioned bucket", u.Key)
		case !sum.Versioned && u.VersionID != "":
			t.Errorf("%s: version id %q from an unversioned bucket", u.Key, u.VersionID)
		case sum.Versioned:
			sk = "V#" + u.VersionID
		default:
			sk = "V#" + u.ETag
		}
		if len(u.ETag) != 32 || strings.Contains(u.ETag, `"`) {
			t.Errorf("%s: ETag %q, want 32 hex digits without quotes", u.Key, u.ETag)
		}
		pk := u.Ref().PartitionKey()
		if wantSKs[pk] == nil {
			wantSKs[pk] = map[string]bool{}
		}
		wantSKs[pk][sk] = true
	}
	client := db.Client()
	for pk, want := range wantSKs {
		out, err := client.Query(context.Background(), &dynamodb.QueryInput{
			TableName:                 aws.String(sum.Table),
			KeyConditionExpression:    aws.String("#pk = :pk"),
			ExpressionAttributeNames:  map[string]string{"#pk": tableschema.PartitionKey},
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: pk}},
			ConsistentRead:            aws.Bool(true),
		})
		if err != nil {
			t.Fatalf("Query %s: %v", pk, err)
		}
		got := map[string]bool{}
		for _, item := range out.Items {
			if sk, ok := item[tableschema.SortKey].(*types.AttributeValueMemberS); ok {
				got[sk.Value] = true
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: sort keys %v, want %v", pk, got, want)
		}
	}
}

func TestRunUsesTheExternalServiceItIsGiven(t *testing.T) {
	db := awspartstest.SharedDynamoDB(t)
	// The external service: a simulator the pipeline does not start itself.
	remote := geosim.New(func(c *geosim.Config) { c.DemoKey = "geo_test_fake_key_1" })
	url, stop, err := remote.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()

	dir := t.TempDir()
	jpeg, err := os.ReadFile(filepath.Join(sampleImagesDir, "gradient-64x48.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "one.jpg", jpeg)
	var logs bytes.Buffer
	sum, err := Run(context.Background(), Options{
		ImagesDir:    dir,
		External:     &ExternalService{URL: url, Key: "geo_test_fake_key_1"},
		Getenv:       noServiceEnv,
		DynamoDB:     db,
		Table:        "real-" + fmt.Sprint(time.Now().UnixNano()),
		FunctionLogs: &logs,
		Progress:     testLog{t},
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if sum.Simulated || !strings.Contains(sum.Service, url) || !strings.Contains(sum.Service, "paid") {
		t.Errorf("service = %q, want the external one, said to be paid", sum.Service)
	}
	checkResults(t, sum, map[string]wantOutcome{"one.jpg": {status: ledger.StatusSucceeded}})
	if got := remote.Charged(geosim.DefaultOrg); got != 1 {
		t.Errorf("external service charged %d, want 1", got)
	}
	if logs.Len() == 0 {
		t.Error("no function logs captured")
	}
	if strings.Contains(logs.String(), "geo_test_fake_key_1") {
		t.Error("the API key appears in the functions' logs")
	}
}

// TestRunIgnoresTheServiceInTheEnvironment: a shell that exports an
// operator's URL and key (the README's CLI section does) leaves a run on
// the simulator, and the exported service is never called.
func TestRunIgnoresTheServiceInTheEnvironment(t *testing.T) {
	db := awspartstest.SharedDynamoDB(t)
	paid := geosim.New(func(c *geosim.Config) { c.DemoKey = "geo_test_fake_key_2" })
	url, stop, err := paid.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	env := map[string]string{envvars.APIURL: url, envvars.APIKey: "geo_test_fake_key_2"}

	dir := t.TempDir()
	jpeg, err := os.ReadFile(filepath.Join(sampleImagesDir, "gradient-64x48.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "one.jpg", jpeg)
	sum, err := Run(context.Background(), Options{
		ImagesDir: dir,
		Getenv:    func(k string) string { return env[k] },
		DynamoDB:  db,
		Table:     "envsvc-" + fmt.Sprint(time.Now().UnixNano()),
		Progress:  testLog{t},
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !sum.Simulated || strings.Contains(sum.Service, url) {
		t.Errorf("service = %q, want the built-in simulator", sum.Service)
	}
	checkResults(t, sum, map[string]wantOutcome{"one.jpg": {status: ledger.StatusSucceeded}})
	if got := paid.Charged(geosim.DefaultOrg); got != 0 {
		t.Errorf("the exported service charged %d credit(s), want 0", got)
	}
}

// TestRunChecksTheExternalServiceFirst: a service that does not answer is
// one line naming its URL and the cause, before anything starts.
func TestRunChecksTheExternalServiceFirst(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close() // a stale export: nothing listens there any more
	dir := t.TempDir()
	writeFile(t, dir, "one.jpg", []byte("not uploaded"))
	var progress bytes.Buffer
	sum, err := Run(context.Background(), Options{
		ImagesDir: dir,
		External:  &ExternalService{URL: url, Key: "geo_test_fake_key_3"},
		Getenv:    noServiceEnv,
		Progress:  &progress,
	})
	if err == nil || sum != nil {
		t.Fatalf("Run = %v, %v; want an error and no summary", sum, err)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.Contains(msg, url) || !strings.Contains(msg, "connection refused") || !strings.Contains(msg, "nothing uploaded") {
		t.Errorf("error %q: want one line with the URL, the cause and that nothing was uploaded", msg)
	}
	if progress.Len() != 0 {
		t.Errorf("progress before the check passed:\n%s", progress.String())
	}
}

// TestWatchProcessesFilesAsTheyArrive runs on both kinds of bucket: on an
// unversioned one the overwrite replaces the object, and only its new
// ETag identifies it.
func TestWatchProcessesFilesAsTheyArrive(t *testing.T) {
	for _, unversioned := range []bool{false, true} {
		t.Run(bucketMode(Options{Unversioned: unversioned}), func(t *testing.T) {
			testWatch(t, unversioned)
		})
	}
}

func testWatch(t *testing.T, unversioned bool) {
	db := awspartstest.SharedDynamoDB(t)
	dir := t.TempDir()
	jpeg, err := os.ReadFile(filepath.Join(sampleImagesDir, "gradient-64x48.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	png, err := os.ReadFile(filepath.Join(sampleImagesDir, "checker-32x32.png"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "first.jpg", jpeg)

	settled := make(chan Result, 10)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type outcome struct {
		sum *Summary
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		sum, err := Run(ctx, Options{
			ImagesDir:     dir,
			Getenv:        noServiceEnv,
			DynamoDB:      db,
			Table:         "watch-" + fmt.Sprint(time.Now().UnixNano()),
			Unversioned:   unversioned,
			Watch:         true,
			WatchInterval: 50 * time.Millisecond,
			OnResult:      func(r Result) { settled <- r },
			Progress:      testLog{t},
		})
		done <- outcome{sum, err}
	}()

	waitFor := func(key string) {
		t.Helper()
		select {
		case r := <-settled:
			if r.Upload.Key != key || r.Status() != ledger.StatusSucceeded {
				t.Fatalf("settled %s as %s, want %s succeeded", r.Upload.Key, r.Status(), key)
			}
		case o := <-done:
			t.Fatalf("Run ended early: %v", o.err)
		case <-time.After(60 * time.Second):
			t.Fatalf("%s not processed", key)
		}
	}
	waitFor("first.jpg")
	writeFile(t, dir, "second.png", png)
	waitFor("second.png")
	// A changed file is a new object version: processed again (its
	// photo is second.png's: recorded with that answer, no call).
	writeFile(t, dir, "first.jpg", png)
	waitFor("first.jpg")

	cancel()
	var o outcome
	select {
	case o = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("Run did not stop after cancel")
	}
	if o.err != nil {
		t.Fatalf("Run after Ctrl-C: %v (watch mode ends normally)", o.err)
	}
	if len(o.sum.Results) != 3 || len(o.sum.Lost()) != 0 || o.sum.PredictCalls != 2 {
		t.Errorf("results %d, lost %d, calls %d; want 3, 0, 2 (the overwrite is second.png's photo)", len(o.sum.Results), len(o.sum.Lost()), o.sum.PredictCalls)
	}
	if o.sum.Monitor == nil {
		t.Errorf("monitor did not run after Ctrl-C: %s", o.sum.MonitorError)
	}
	checkRecordKeys(t, db, o.sum) // first.jpg: one record per upload
}

// testLog shows a run's progress in the test log (seen on failure or -v).
type testLog struct{ t *testing.T }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Logf("%s", bytes.TrimRight(p, "\n"))
	return len(p), nil
}

// TestRunStopsWhenEveryCallFailsAlike: a key the service refuses fails
// every call the same way; each retry line says so, and the run stops
// early with that cause instead of retrying until the dead-letter queue.
func TestRunStopsWhenEveryCallFailsAlike(t *testing.T) {
	db := awspartstest.SharedDynamoDB(t)
	remote := geosim.New(func(c *geosim.Config) { c.DemoKey = "geo_test_fake_key_4" })
	url, stop, err := remote.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	jpeg, err := os.ReadFile(filepath.Join(sampleImagesDir, "gradient-64x48.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for i := range 2 * sameFailureLimit {
		writeFile(t, dir, fmt.Sprintf("p%02d.jpg", i), jpeg)
	}
	var progress syncbuf.Buffer
	began := time.Now()
	sum, err := Run(context.Background(), Options{
		ImagesDir: dir,
		External:  &ExternalService{URL: url, Key: "geo_test_revoked_key_5"},
		Getenv:    noServiceEnv,
		DynamoDB:  db,
		Table:     "alike-" + fmt.Sprint(time.Now().UnixNano()),
		Progress:  &progress,
	})
	out := progress.String()
	if err == nil || !strings.Contains(err.Error(), "stopped early") || !strings.Contains(err.Error(), predictor.CodeUnauthorized) {
		t.Fatalf("Run: %v, want an early stop naming %s:\n%s", err, predictor.CodeUnauthorized, out)
	}
	t.Logf("stopped after %s: %v", time.Since(began).Round(time.Millisecond), err)
	// Each retry line names its causes: the refused key, and the pacer's
	// waits for a call slot while it is refused.
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "retry ") && (!strings.Contains(line, "delivery: ") || strings.Contains(line, "cause not in")) {
			t.Errorf("a retry line without its cause: %q", line)
		}
	}
	if !regexp.MustCompile(`(?m)^retry .*delivery: .*` + predictor.CodeUnauthorized).MatchString(out) {
		t.Errorf("no retry line names %s:\n%s", predictor.CodeUnauthorized, out)
	}
	if sum == nil || len(sum.DeadLetters) != 0 || len(sum.Lost()) != 0 {
		t.Errorf("summary %+v: want the uploads left queued, none dead-lettered or lost", sum)
	}
}
