package predictor

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/simclock"
)

// answerKind is what the service answers one paid call with, in the
// property test below. Every kind charges the model's price but the last
// two: the service really charged what the figure says when it is above the
// reservation, and nothing for a free failure.
type answerKind int

const (
	answerHonest       answerKind = iota // credits_consumed = price
	answerNegative                       // -1 .. -5
	answerFractional                     // 1.5
	answerNotANumber                     // "1"
	answerAbsurd                         // 1e9
	answerMaybeCharged                   // no usable answer: outcome_unknown, reservation kept
	answerAbove                          // price + 1 .. 3, and charged so
	answerFree                           // a refusal before any work (429, 5xx): nothing charged
	answerKinds
)

// TestBudgetAndRunCapNeverAllowMoreCallsThanCapOverPrice is a property test
// of the reservation code (reserveBudget, counted, settle) on the real
// ledger and DynamoDB Local, where the interleaving of concurrent
// conditional writes matters: for seeded random sequences of answers,
// concurrent workers reserve a call's price on a daily budget and a run's
// cap, get a random answer, count and settle it. Whatever the figures,
// the calls the service charged never outnumber budget / price or cap /
// price, and both counters end exactly at the credits counted.
func TestBudgetAndRunCapNeverAllowMoreCallsThanCapOverPrice(t *testing.T) {
	sequences := 24
	if testing.Short() {
		sequences = 6
	}
	e := newTestEnv(t, nil)
	day0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	began := time.Now()
	defer func() { t.Logf("%d sequences in %v", sequences, time.Since(began).Round(time.Millisecond)) }()
	for seq := range sequences {
		seed := uint64(20260501 + seq)
		rng := rand.New(rand.NewPCG(seed, 44))
		price := 1 + rng.IntN(3)
		budget := price + rng.IntN(10)
		runCap := price + rng.IntN(10)
		workers := 2 + rng.IntN(5)
		run := fmt.Sprintf("prop-%d", seq)
		if _, _, err := e.store.StartRun(context.Background(), ledger.Run{Name: run, Cap: runCap, Price: price}); err != nil {
			t.Fatal(err)
		}
		// A day of its own for each sequence's counter.
		e.clock = &fakeClock{Clock: simclock.New(day0.AddDate(0, 0, seq))}
		cfg := e.cfg
		cfg.DailyBudget = budget
		inv := e.newHandler(cfg).newInvocation(context.Background())

		// Answers are drawn in advance, one per possible call, so a seed
		// gives the same sequence whatever the interleaving.
		answers := make([]answerKind, 3*(budget+runCap))
		for i := range answers {
			answers[i] = answerKind(rng.IntN(int(answerKinds)))
		}
		var (
			mu            sync.Mutex
			next, charges int // the service's real charges
			paid, counted int
			wg            sync.WaitGroup
		)
		for range workers {
			wg.Go(func() {
				for {
					obj := &object{upload: upload{Bucket: "b", Key: "k", Run: run, Price: price}, logger: slog.New(slog.DiscardHandler)}
					r, _, ok := inv.reserveBudget(context.Background(), obj)
					if !ok {
						return
					}
					mu.Lock()
					kind := answers[next%len(answers)]
					next++
					mu.Unlock()
					time.Sleep(time.Duration(rand.IntN(3)) * time.Millisecond) // the call
					charged, really := settleAnswer(inv, obj, r, price, kind)
					mu.Lock()
					counted += charged
					charges += really
					if really > 0 {
						paid++
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()

		used, err := e.store.CreditsReserved(context.Background(), ledger.Day(e.clock.Now()))
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.store.GetRun(context.Background(), run)
		if err != nil {
			t.Fatal(err)
		}
		limit := min(budget/price, runCap/price)
		if paid > limit || used != counted || got.Spent != counted || got.Remaining != runCap-counted || counted < charges {
			t.Errorf("seed %d (price %d, budget %d, cap %d, %d workers, answers %v): %d paid calls (at most %d allowed), "+
				"%d credits charged, %d counted; daily counter %d, run spent %d remaining %d",
				seed, price, budget, runCap, workers, answers[:next], paid, limit, charges, counted, used, got.Spent, got.Remaining)
		}
	}
}

// settleAnswer counts and settles one call answered as kind, the way
// predict does, and returns the credits counted and those the service
// really charged.
func settleAnswer(inv *invocation, obj *object, r *reservation, price int, kind answerKind) (int, int) {
	out := &geoapi.PredictOutput{CreditsConsumed: price}
	really := price
	switch kind {
	case answerNegative:
		out.CreditsConsumed, out.CreditsInvalid, out.CreditsReported = 0, geoapi.CreditsNegative, fmt.Sprint(-1-rand.IntN(5))
	case answerFractional:
		out.CreditsConsumed, out.CreditsInvalid, out.CreditsReported = 0, geoapi.CreditsFractional, "1.5"
	case answerNotANumber:
		out.CreditsConsumed, out.CreditsInvalid, out.CreditsReported = 0, geoapi.CreditsNotANumber, `"1"`
	case answerAbsurd:
		out.CreditsConsumed, out.CreditsInvalid, out.CreditsReported = 0, geoapi.CreditsTooLarge, "1e9"
	case answerAbove:
		out.CreditsConsumed = price + 1 + rand.IntN(3)
		really = out.CreditsConsumed
	case answerMaybeCharged:
		// What predict keeps for a call that may have charged: the
		// reservation.
		r.settle(context.Background(), r.reserved())
		return r.reserved(), price
	case answerFree:
		r.settle(context.Background(), 0)
		return 0, 0
	}
	charged := inv.counted(obj, r, out)
	r.settle(context.Background(), charged)
	return charged, really
}
