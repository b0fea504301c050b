package ledger_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
)

func TestBudgetNeverExceededUnderConcurrency(t *testing.T) {
	s, _, _, _ := newStore(t)
	ctx := context.Background()
	const (
		workers = 20
		cost    = 3
		budget  = 31 // room for 10 reservations, not 11
	)
	var granted atomic.Int32
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := s.ReserveCredits(ctx, "2026-03-14", cost, budget)
			if err != nil {
				t.Errorf("ReserveCredits: %v", err)
			}
			if ok {
				granted.Add(1)
			}
		}()
	}
	wg.Wait()
	if granted.Load() != 10 {
		t.Errorf("granted %d reservations of %d credits under a budget of %d, want 10", granted.Load(), cost, budget)
	}
	if used, err := s.CreditsReserved(ctx, "2026-03-14"); err != nil || used != 30 {
		t.Errorf("CreditsReserved = %d, %v; want 30", used, err)
	}
	if used, err := s.CreditsReserved(ctx, "2026-03-15"); err != nil || used != 0 {
		t.Errorf("another day's counter = %d, %v; want 0", used, err)
	}
}

func TestReserveAndRelease(t *testing.T) {
	s, _, _, _ := newStore(t)
	ctx := context.Background()
	day := "2026-03-14"
	steps := []struct {
		name    string
		do      func() (bool, error)
		wantOK  bool
		wantErr error
		used    int
	}{
		{"more than the whole budget", func() (bool, error) { return s.ReserveCredits(ctx, day, 6, 5) }, false, nil, 0},
		{"first", func() (bool, error) { return s.ReserveCredits(ctx, day, 3, 5) }, true, nil, 3},
		{"over budget", func() (bool, error) { return s.ReserveCredits(ctx, day, 3, 5) }, false, nil, 3},
		{"exactly to budget", func() (bool, error) { return s.ReserveCredits(ctx, day, 2, 5) }, true, nil, 5},
		{"release uncharged", func() (bool, error) { return true, s.ReleaseCredits(ctx, day, 3) }, true, nil, 2},
		{"fits again", func() (bool, error) { return s.ReserveCredits(ctx, day, 3, 5) }, true, nil, 5},
		{"release too much", func() (bool, error) { return false, s.ReleaseCredits(ctx, day, 6) }, false, ledger.ErrReleaseExceedsReserved, 5},
		{"release on an untouched day", func() (bool, error) { return false, s.ReleaseCredits(ctx, "2026-01-01", 1) }, false, ledger.ErrReleaseExceedsReserved, 5},
		{"overspend goes over the budget", func() (bool, error) { return true, s.RecordOverspend(ctx, day, 2) }, true, nil, 7},
		{"nothing fits after an overspend", func() (bool, error) { return s.ReserveCredits(ctx, day, 1, 5) }, false, nil, 7},
		{"overspend on an untouched day starts its counter", func() (bool, error) { return true, s.RecordOverspend(ctx, "2026-03-15", 1) }, true, nil, 7},
	}
	for _, step := range steps {
		ok, err := step.do()
		if !errors.Is(err, step.wantErr) || ok != step.wantOK {
			t.Fatalf("%s: ok=%t err=%v, want ok=%t err=%v", step.name, ok, err, step.wantOK, step.wantErr)
		}
		if used, err := s.CreditsReserved(ctx, day); err != nil || used != step.used {
			t.Fatalf("%s: counter = %d, %v; want %d", step.name, used, err, step.used)
		}
	}
	if _, err := s.ReserveCredits(ctx, "14/03/2026", 1, 5); err == nil {
		t.Error("ReserveCredits accepted a malformed day")
	}
	if _, err := s.ReserveCredits(ctx, day, 0, 5); err == nil {
		t.Error("ReserveCredits accepted zero credits")
	}
	if err := s.RecordOverspend(ctx, day, 0); err == nil {
		t.Error("RecordOverspend accepted zero credits")
	}
	if used, err := s.CreditsReserved(ctx, "2026-03-15"); err != nil || used != 1 {
		t.Errorf("the next day's counter after its overspend = %d, %v; want 1", used, err)
	}
}
