package soak

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
)

// faultStep is one step of the soak's fault schedule. It runs once, when the
// run's progress reaches at, and may last a while (a storm, an outage):
// steps run one after the other, so their faults never overlap.
type faultStep struct {
	at   float64 // fraction of messages settled, 0..1
	name string
	run  func(ctx context.Context)
}

// faultSchedule runs steps as the run progresses and notes when each ran.
type faultSchedule struct {
	steps    []faultStep
	progress func() float64
	start    time.Time

	// rest, once closed, runs the steps still waiting at once: the queue
	// drained before the run's progress reached them (a fast run), and a
	// step left out would leave its faults untried.
	rest chan struct{}

	mu  sync.Mutex
	ran []string
}

// run fires the steps in order until they are all done or ctx ends.
func (s *faultSchedule) run(ctx context.Context) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for _, step := range s.steps {
	wait:
		for s.progress() < step.at {
			select {
			case <-ctx.Done():
				return
			case <-s.rest:
				break wait
			case <-tick.C:
			}
		}
		began := time.Since(s.start)
		step.run(ctx)
		s.mu.Lock()
		s.ran = append(s.ran, fmt.Sprintf("%-34s at %3.0f%% of messages, t=%5.1fs..%5.1fs",
			step.name, 100*step.at, began.Seconds(), time.Since(s.start).Seconds()))
		s.mu.Unlock()
	}
}

func (s *faultSchedule) done() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.ran...)
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// soakRun is one run of the soak: a bucket kind and the faults injected.
type soakRun struct {
	name        string
	unversioned bool // an existing bucket; else the stack's versioned one
	service     bool // the service's faults (5xx, drops, storms, slowness, credits)
	aws         bool // AWS's faults (throttling, 5xx, resets, lost answers)
}

// soakRuns are the runs of TestSoak. Every run also has the pipeline's own
// events: duplicates and out-of-order deliveries, deletions and re-uploads,
// a key rotation and crashes between the call and the write.
var soakRuns = []soakRun{
	{name: "service-faults/versioned", service: true},
	{name: "service-faults/unversioned", unversioned: true, service: true},
	{name: "aws-faults/versioned", aws: true},
	{name: "aws-and-service-faults/unversioned", unversioned: true, service: true, aws: true},
}

// soakSteps is the schedule of run: its events and faults by progress.
func soakSteps(r *rig, run soakRun, resend, reupload func()) []faultStep {
	steps := []faultStep{
		{at: 0.40, name: "key regenerated, secret updated", run: func(context.Context) { r.rotateKey() }},
		{at: 0.55, name: "duplicates re-sent out of order", run: func(context.Context) { resend() }},
		{at: 0.60, name: "deleted objects uploaded again", run: func(context.Context) { reupload() }},
	}
	if run.service {
		steps = append(steps, serviceFaults(r, soakAttemptTimeout)...)
	}
	if run.aws {
		steps = append(steps, awsFaults(r)...)
	}
	slices.SortStableFunc(steps, func(a, b faultStep) int { return cmp.Compare(a.at, b.at) })
	return steps
}

// serviceFaults are the service's faults: a constant background and, on
// top, one episode at a time.
func serviceFaults(r *rig, attemptTimeout time.Duration) []faultStep {
	base := geosim.Faults{
		ServerErrorRate: 0.03, // 500 JSON, 502/503 HTML; not charged
		DropRate:        0.02, // connection closed before any answer; not charged
		// Charged, then the connection is closed: the answer is lost.
		DropAfterChargeRate: 0.005,
		// Charged, then a gateway answers 502 or 504: maybe charged.
		GatewayErrorAfterChargeRate: 0.005,
		MalformedRate:               0.003, // 200 with a truncated body; charged
	}
	with := func(edit func(*geosim.Faults)) geosim.Faults {
		f := base
		edit(&f)
		return f
	}
	return []faultStep{
		{at: 0, name: "service background faults on", run: func(context.Context) { r.sim.SetFaults(base) }},
		{at: 0.10, name: "429 storm (1.5 s, retry after 150 ms)", run: func(ctx context.Context) {
			r.sim.SetFaults(with(func(f *geosim.Faults) {
				f.RateLimitStorm, f.StormRetryAfter = 1500*time.Millisecond, 150*time.Millisecond
			}))
			sleepCtx(ctx, 1500*time.Millisecond)
			r.sim.SetFaults(base)
		}},
		{at: 0.25, name: "slow service (2 s, ~half past timeout)", run: func(ctx context.Context) {
			r.sim.SetFaults(with(func(f *geosim.Faults) { f.LatencyJitter = 2 * attemptTimeout }))
			sleepCtx(ctx, 2*time.Second)
			r.sim.SetFaults(base)
		}},
		{at: 0.65, name: "credits exhausted (2 s), topped up", run: func(ctx context.Context) {
			r.sim.AddAccount(simOrg, 0, 0)
			sleepCtx(ctx, 2*time.Second)
			if err := r.sim.TopUp(simOrg, 1_000_000); err != nil {
				r.t.Errorf("top up: %v", err)
			}
		}},
	}
}
