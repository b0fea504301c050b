package geosim

import (
	"net/http"
	"sync"
	"testing"
)

// Parallel clients draining an account must spend exactly the allowance:
// no call is charged twice, none is served free.
func TestConcurrentChargesAreExact(t *testing.T) {
	const allowance, calls = 30, 60
	sim, base := newTestServer(t, func(c *Config) { c.Allowance = allowance })
	img := testJPEG(t, 1)
	var (
		mu       sync.Mutex
		statuses = map[int]int{}
		wg       sync.WaitGroup
	)
	for range calls {
		wg.Go(func() {
			resp := predict(t, base, testKey, nil, img)
			mu.Lock()
			statuses[resp.status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if statuses[http.StatusOK] != allowance || statuses[http.StatusPaymentRequired] != calls-allowance {
		t.Errorf("statuses %v, want %d x 200 and %d x 402", statuses, allowance, calls-allowance)
	}
	if sim.Charged(DefaultOrg) != allowance || sim.CallCount() != calls {
		t.Errorf("charged %d over %d calls", sim.Charged(DefaultOrg), sim.CallCount())
	}
	sum := 0
	for _, c := range sim.Calls() {
		sum += c.Charged
	}
	if sum != allowance {
		t.Errorf("recorded charges add up to %d, want %d", sum, allowance)
	}
	sim.ResetCalls()
	sim.ResetCharged()
	if sim.CallCount() != 0 || sim.Charged(DefaultOrg) != 0 {
		t.Error("reset did not clear")
	}
}
