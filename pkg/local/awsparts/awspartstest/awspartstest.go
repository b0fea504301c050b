// Package awspartstest gives tests real local AWS services: one DynamoDB
// Local shared by the whole test binary, with a fresh table per call, and
// an in-memory S3 per call, with a versioned bucket (S3) or an
// unversioned one (S3Unversioned).
//
// A package whose tests call DynamoDB must stop the shared instance from
// its TestMain:
//
//	func TestMain(m *testing.M) { awspartstest.Main(m) }
//
// A TestMain with more to do after the tests calls Run instead, which
// returns the exit code.
//
// Tests that need DynamoDB fail (they do not skip) when it cannot start.
package awspartstest

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/geolocate-aws/geolocate/pkg/local/awsparts"
)

var (
	mainInstalled atomic.Bool

	sharedMu  sync.Mutex
	sharedDB  *awsparts.DynamoDB
	sharedErr error

	names atomic.Int64
)

// Main runs the tests and then stops the shared DynamoDB Local. Call it
// from TestMain.
func Main(m *testing.M) { os.Exit(Run(m)) }

// Run is Main for a TestMain with more to do after the tests: it runs them,
// stops the shared DynamoDB Local and returns m.Run's exit code.
func Run(m *testing.M) int {
	mainInstalled.Store(true)
	code := m.Run()
	sharedMu.Lock()
	if sharedDB != nil {
		sharedDB.Stop()
		sharedDB = nil
	}
	sharedMu.Unlock()
	return code
}

// SharedDynamoDB returns the test binary's DynamoDB Local, starting it on
// first use. It fails t when DynamoDB Local cannot start, or when the
// package's TestMain does not call Main (the instance would never be
// stopped).
func SharedDynamoDB(t testing.TB) *awsparts.DynamoDB {
	t.Helper()
	if !mainInstalled.Load() {
		t.Fatal("awspartstest: add `func TestMain(m *testing.M) { awspartstest.Main(m) }` to this package's tests")
	}
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if sharedDB == nil && sharedErr == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		sharedDB, sharedErr = awsparts.StartDynamoDB(ctx)
	}
	if sharedErr != nil {
		t.Fatalf("start DynamoDB Local: %v", sharedErr)
	}
	return sharedDB
}

// DynamoDB returns a client of the shared DynamoDB Local and the name of a
// new, empty results table (tableschema layout) made for this test. optFns
// adjust the table (awsparts.WithoutStream for a test that writes a lot).
func DynamoDB(t testing.TB, optFns ...func(*awsparts.TableOptions)) (*dynamodb.Client, string) {
	t.Helper()
	db := SharedDynamoDB(t)
	client := db.Client()
	table := uniqueName(t, "results")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := awsparts.CreateTable(ctx, client, table, optFns...); err != nil {
		t.Fatalf("awspartstest: %v", err)
	}
	return client, table
}

// S3 starts an in-memory S3 for this test (closed at its end) and returns a
// client and a new, VERSIONED bucket, like the stack's upload bucket:
// every PutObject reports a version id. Tests of code that must also work
// on a user's existing, possibly unversioned bucket should run against
// S3Unversioned as well.
func S3(t testing.TB) (*s3.Client, string) {
	t.Helper()
	return startS3(t, true)
}

// S3Unversioned starts an in-memory S3 for this test (closed at its end)
// and returns a client and a new bucket with versioning never enabled, S3's
// default: PutObject reports no version id, an overwrite replaces the
// object (its old ETag then fails If-Match with 412), a delete removes it,
// and a request naming a version id other than "null" fails with 400
// InvalidArgument.
func S3Unversioned(t testing.TB) (*s3.Client, string) {
	t.Helper()
	return startS3(t, false)
}

func startS3(t testing.TB, versioned bool) (*s3.Client, string) {
	t.Helper()
	srv, err := awsparts.StartS3()
	if err != nil {
		t.Fatalf("awspartstest: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("awspartstest: %v", err)
		}
	})
	bucket := uniqueName(t, "bucket")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	create := srv.CreateBucket
	if versioned {
		create = srv.CreateVersionedBucket
	}
	if err := create(ctx, bucket); err != nil {
		t.Fatalf("awspartstest: %v", err)
	}
	return srv.Client(), bucket
}

var unsafeChars = regexp.MustCompile(`[^a-z0-9]+`)

// uniqueName builds a name valid as both a table and a bucket name
// (lowercase letters, digits and dashes, at most 63 characters) from the
// test's name and a per-binary counter.
func uniqueName(t testing.TB, kind string) string {
	base := strings.Trim(unsafeChars.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	suffix := fmt.Sprintf("%s-%d", kind, names.Add(1))
	if max := 63 - len(suffix) - 3; len(base) > max {
		base = strings.TrimRight(base[:max], "-")
	}
	return "t-" + base + "-" + suffix
}
