package predictor

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/shared/metricnames"
)

// lyingService answers every prediction with a 200 whose credits_consumed
// is figure, and counts the calls: each is a paid call, whatever the
// figure says.
func lyingService(t *testing.T, figure string) (string, *atomic.Int64) {
	t.Helper()
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"message_code":"success","data":{"prediction":{"result_type":"coordinates","clusters":[%s]},`+
			`"prediction_id":"6f1c2f2e-0000-4000-8000-%012d","model_id":"global-v3","credits_consumed":%s}}`,
			answerCluster(48.85, 3, "Paris"), n, figure)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &calls
}

// TestNegativeCreditsCannotBypassTheBudget: a 200 reporting -1 credits
// while the service charges 1 spends the daily budget as an honest answer
// does: a budget of 3 allows 3 paid calls, not one per photo.
func TestNegativeCreditsCannotBypassTheBudget(t *testing.T) {
	url, calls := lyingService(t, "-1")
	e := newTestEnv(t, func(c *Config) { c.APIURL = url; c.DailyBudget = 3 })
	var first upload
	for i := range 10 {
		u := e.put(fmt.Sprintf("photo-%d.jpg", i), testJPEG(t, i))
		if i == 0 {
			first = u
		}
		e.invokeSQS(sqsBatch(uploadMessage(fmt.Sprintf("m%d", i), u)))
	}
	if n := calls.Load(); n > 3 {
		t.Errorf("a daily budget of 3 credits allowed %d paid calls reporting -1 credits, want at most 3", n)
	}
	if used, err := e.store.CreditsReserved(context.Background(), ledger.Day(time.Now())); err != nil || used != int(calls.Load()) {
		t.Errorf("daily counter = %d, %v after %d paid calls; want one credit per call", used, err, calls.Load())
	}
	wantFlagged(t, e.record(first), "-1", geoapi.CreditsNegative, 1)
	if n := e.metricSum(metricnames.CreditFiguresInvalid); n != float64(calls.Load()) {
		t.Errorf("CreditFiguresInvalid = %v, want %d", n, calls.Load())
	}
}

// wantFlagged: a paid answer whose figure was refused is a success whose
// record counts the reservation and keeps the figure as sent, and why.
func wantFlagged(t *testing.T, rec *ledger.Record, reported, invalid string, counted int) {
	t.Helper()
	if rec.Status != ledger.StatusSucceeded || rec.Place != "Paris" || rec.CreditsConsumed != counted ||
		rec.CreditsReported != reported || rec.CreditsInvalid != invalid {
		t.Errorf("record %s place %q credits %d reported %q invalid %q; want succeeded, Paris, %d credits (the reservation), %q, %q",
			rec.Status, rec.Place, rec.CreditsConsumed, rec.CreditsReported, rec.CreditsInvalid, counted, reported, invalid)
	}
}

// TestInvalidCreditFiguresCountTheReservation: a fractional figure, one
// that is not a JSON number and one absurdly large each count what the
// call reserved: a budget of 2 makes 2 paid calls.
func TestInvalidCreditFiguresCountTheReservation(t *testing.T) {
	for _, tc := range []struct{ figure, invalid string }{
		{"1.5", geoapi.CreditsFractional},
		{`"1"`, geoapi.CreditsNotANumber},
		{"1e9", geoapi.CreditsTooLarge},
	} {
		t.Run(tc.figure, func(t *testing.T) {
			url, calls := lyingService(t, tc.figure)
			e := newTestEnv(t, func(c *Config) { c.APIURL = url; c.DailyBudget = 2 })
			var first upload
			for i := range 3 {
				u := e.put(fmt.Sprintf("photo-%d.jpg", i), testJPEG(t, 200+i))
				if i == 0 {
					first = u
				}
				e.invokeSQS(sqsBatch(uploadMessage(fmt.Sprintf("m%d", i), u)))
			}
			if n := calls.Load(); n != 2 {
				t.Errorf("a budget of 2 made %d paid calls answering %s, want 2", n, tc.figure)
			}
			wantFlagged(t, e.record(first), tc.figure, tc.invalid, 1)
		})
	}
}

// TestChargeAboveTheReservationIsCounted: a call reserving 1 credit whose
// answer says 3 counts 3 (the budget can only lose room) and says so in
// the log: a budget of 4 allows a second call (3 + 1 fit), not a third.
func TestChargeAboveTheReservationIsCounted(t *testing.T) {
	url, calls := lyingService(t, "3")
	e := newTestEnv(t, func(c *Config) { c.APIURL = url; c.DailyBudget = 4 })
	for i := range 3 {
		u := e.put(fmt.Sprintf("photo-%d.jpg", i), testJPEG(t, 300+i))
		e.invokeSQS(sqsBatch(uploadMessage(fmt.Sprintf("m%d", i), u)))
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("%d paid calls, want 2", n)
	}
	if used, err := e.store.CreditsReserved(context.Background(), ledger.Day(time.Now())); err != nil || used != 6 {
		t.Errorf("daily counter = %d, %v; want 6, every credit charged", used, err)
	}
	if n := len(e.logLines("the service charged more than the call reserved: counted as charged")); n != 2 {
		t.Errorf("%d overspend log lines, want 2", n)
	}
}

// TestNegativeCreditsCannotBypassARunsCap: a run capped at 5 credits over
// 20 photos whose answers report -1 makes 5 paid calls and ends with
// remaining 0 and spent 5.
func TestNegativeCreditsCannotBypassARunsCap(t *testing.T) {
	url, calls := lyingService(t, "-1")
	e := newTestEnv(t, func(c *Config) { c.APIURL = url })
	const run = "capped"
	if _, created, err := e.store.StartRun(context.Background(), ledger.Run{Name: run, Cap: 5, Price: 1}); err != nil || !created {
		t.Fatalf("StartRun: %t, %v", created, err)
	}
	var first upload
	for i := range 20 {
		u := e.put(fmt.Sprintf("photo-%d.jpg", i), testJPEG(t, 100+i))
		if i == 0 {
			first = u
		}
		e.invokeSQS(sqsBatch(e.runMessage(fmt.Sprintf("m%d", i), run, "", 1, u)))
	}
	got, err := e.store.GetRun(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 5 || got.Remaining != 0 || got.Spent != 5 {
		t.Errorf("run capped at 5 credits: %d paid calls, remaining=%d spent=%d; want 5 calls, remaining=0 spent=5", n, got.Remaining, got.Spent)
	}
	wantFlagged(t, e.runRecord(first, run), "-1", geoapi.CreditsNegative, 1)
}
