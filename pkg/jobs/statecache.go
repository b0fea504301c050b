package jobs

import (
	"context"
	"errors"
	"sync"
	"time"
)

// DefaultStateTTL is how long a StateCache keeps a job's state: a pause or a
// cancel reaches every predictor instance within it, well inside the minute
// issue 47 allows, for one read per job per instance per TTL.
const DefaultStateTTL = 30 * time.Second

// StateReader reads a job's state (*Store).
type StateReader interface {
	State(ctx context.Context, id string) (State, error)
}

// StateCache remembers job states briefly, for the predictor: every job
// message asks whether its job is paused or cancelled. A job that is gone
// reads as cancelled (nothing more of it is wanted). Safe for concurrent use.
type StateCache struct {
	reader StateReader
	ttl    time.Duration
	now    func() time.Time

	mu     sync.Mutex
	states map[string]cachedState
}

type cachedState struct {
	state State
	at    time.Time
}

// NewStateCache caches reader's states for ttl (DefaultStateTTL when <= 0)
// on the clock now (time.Now when nil).
func NewStateCache(reader StateReader, ttl time.Duration, now func() time.Time) *StateCache {
	if ttl <= 0 {
		ttl = DefaultStateTTL
	}
	if now == nil {
		now = time.Now
	}
	return &StateCache{reader: reader, ttl: ttl, now: now, states: map[string]cachedState{}}
}

// State is job id's state, read at most once per TTL.
func (c *StateCache) State(ctx context.Context, id string) (State, error) {
	now := c.now()
	c.mu.Lock()
	cs, ok := c.states[id]
	c.mu.Unlock()
	if ok && now.Sub(cs.at) < c.ttl {
		return cs.state, nil
	}
	st, err := c.reader.State(ctx, id)
	if errors.Is(err, ErrNotFound) {
		st, err = StateCancelled, nil
	}
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	c.states[id] = cachedState{state: st, at: now}
	c.mu.Unlock()
	return st, nil
}
