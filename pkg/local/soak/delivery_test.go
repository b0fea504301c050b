package soak

import (
	"sync"

	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
)

// deliveryTracker counts what the queue handed to invocations: every
// delivery, the duplicate copies (a message id delivered again with a
// receive count already seen: a copy, not a retry) and, per upload, whether
// it was delivered by more than one message or copy.
type deliveryTracker struct {
	mu         sync.Mutex
	deliveries int
	copies     int
	seen       map[string]bool           // message id + receive count
	sources    map[string]map[string]int // upload key -> message id -> copies seen
}

func newDeliveryTracker() *deliveryTracker {
	return &deliveryTracker{seen: map[string]bool{}, sources: map[string]map[string]int{}}
}

// observe is the poller's OnBatch hook.
func (d *deliveryTracker) observe(res sqsqueue.BatchResult) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, m := range res.Messages {
		d.deliveries++
		id := m.MessageId + "#" + m.Attributes["ApproximateReceiveCount"]
		copied := d.seen[id]
		d.seen[id] = true
		if copied {
			d.copies++
		}
		key, ok := eventKey(m.Body)
		if !ok {
			continue
		}
		if d.sources[key] == nil {
			d.sources[key] = map[string]int{}
		}
		if copied || d.sources[key][m.MessageId] == 0 {
			d.sources[key][m.MessageId]++
		}
	}
}

// figures returns the deliveries, the duplicate copies and the number of
// uploads that were delivered twice or more other than by a retry.
func (d *deliveryTracker) figures() (deliveries, copies, duplicated int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, byMessage := range d.sources {
		n := 0
		for _, c := range byMessage {
			n += c
		}
		if n > 1 {
			duplicated++
		}
	}
	return d.deliveries, d.copies, duplicated
}
