package soak

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/awsfault"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
)

// TestReservationsUnderCancelledTransactions: 20 concurrent calls each
// reserve 3 credits on the daily counter and on a run's cap, are charged
// 1, and release 2, through the shipped DynamoDB client and an awsfault
// proxy that cancels half of the TransactWriteItems (a quarter
// TransactionConflict, a quarter ThrottlingError, as DynamoDB answers
// them) and loses the answer of a tenth it applied (the SDK then sends
// the same token again). Every reservation and release lands exactly
// once: no error (0 lost), counters exact (0 double charges).
func TestReservationsUnderCancelledTransactions(t *testing.T) {
	const (
		pairs    = 20
		reserved = 3
		charged  = 1
		runCap   = 100
		run      = "cancelled-soak"
	)
	direct, table := awspartstest.DynamoDB(t, awsparts.WithoutStream)
	proxy := startProxy(t, awsfault.DynamoDB, aws.ToString(direct.Options().BaseEndpoint))
	clients := shippedClients(t, map[string]string{"AWS_ENDPOINT_URL_DYNAMODB": proxy.URL()})
	store := ledger.New(clients.DynamoDB, table)
	check := ledger.New(direct, table)
	ctx := context.Background()
	day := ledger.Day(time.Now())
	if _, _, err := check.StartRun(ctx, ledger.Run{Name: run, Cap: runCap, Price: reserved}); err != nil {
		t.Fatal(err)
	}
	proxy.SetRules(
		awsfault.At(0.25, awsfault.DynamoDBTransactionConflictCancel).On("TransactWriteItems"),
		awsfault.At(1.0/3, awsfault.DynamoDBThrottlingCancel).On("TransactWriteItems"),
		awsfault.At(0.2, awsfault.LostAnswer).On("TransactWriteItems"),
	)
	began := time.Now()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		lost []string
	)
	failed := func(what string, i int, err error) {
		mu.Lock()
		defer mu.Unlock()
		lost = append(lost, fmt.Sprintf("call %d: %s: %v", i, what, err))
	}
	for i := range pairs {
		wg.Go(func() {
			if ok, err := store.ReserveCredits(ctx, day, reserved, 10*pairs*reserved); err != nil || !ok {
				failed("reserve on the day", i, fmt.Errorf("granted %t: %w", ok, err))
				return
			}
			if ok, err := store.ReserveRunCredits(ctx, run, reserved); err != nil || !ok {
				failed("reserve on the run", i, fmt.Errorf("granted %t: %w", ok, err))
				return
			}
			if err := store.ReleaseCredits(ctx, day, reserved-charged); err != nil {
				failed("release on the day", i, err)
			}
			if err := store.ReleaseRunCredits(ctx, run, reserved-charged); err != nil {
				failed("release on the run", i, err)
			}
		})
	}
	wg.Wait()
	proxy.SetRules()
	elapsed := time.Since(began)

	stats := proxy.Stats()
	var faults []string
	for k, n := range stats.Injected {
		faults = append(faults, fmt.Sprintf("%s %d", k, n))
	}
	counter, err := check.CreditsReserved(ctx, day)
	if err != nil {
		t.Fatal(err)
	}
	got, err := check.GetRun(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(faults)
	t.Logf("%d reserve/release pairs in %v, %d TransactWriteItems requests, injected: %s; lost %d; daily counter %d, run spent %d remaining %d",
		pairs, elapsed.Round(time.Millisecond), stats.Requests["TransactWriteItems"], strings.Join(faults, ", "), len(lost), counter, got.Spent, got.Remaining)
	for _, l := range lost {
		t.Errorf("lost: %s", l)
	}
	if want := pairs * charged; counter != want || got.Spent != want || got.Remaining != runCap-want {
		t.Errorf("daily counter %d, run spent %d remaining %d; want %d, %d and %d: every reservation and release applied exactly once",
			counter, got.Spent, got.Remaining, want, want, runCap-want)
	}
	for _, f := range []awsfault.Fault{awsfault.DynamoDBTransactionConflictCancel, awsfault.DynamoDBThrottlingCancel, awsfault.LostAnswer} {
		if stats.Injected["TransactWriteItems: "+f.Name()] == 0 {
			t.Errorf("no %s injected: %v", f.Name(), stats.Injected)
		}
	}
}
