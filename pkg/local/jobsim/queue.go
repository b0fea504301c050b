package jobsim

import (
	"container/heap"
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// SQS's limits the simulated queue enforces on SendMessageBatch (the
// SendMessageBatch API reference): at most 10 entries, ids unique in the
// batch, DelaySeconds from 0 to 900, and the batch's bodies together at
// most the queue's MaximumMessageSize (the stack leaves SQS's default,
// 262,144 bytes).
const (
	maxBatchEntries  = 10
	maxDelaySeconds  = 900
	maxBatchPayload  = 262144
	sweepEvery       = 10 * time.Minute
	visibilityChange = time.Second // ChangeMessageVisibility counts whole seconds
)

// message is one message of the upload queue.
type message struct {
	id       int64
	body     string
	job      bool // sent by the job engine (else a live upload's notification)
	sent     time.Time
	visible  time.Time // when it can next be received
	gen      int       // bumps on every receive, visibility change and delete: older heap entries are stale
	counted  bool      // counted in the queue's visible messages
	receives int
	gone     bool // deleted, expired or dead-lettered
	// upload is when a live upload's object was written (its notification
	// is sent then).
	upload time.Time
}

// QueueStats are the queue's counters over a run.
type QueueStats struct {
	Sent, Received, Deleted int64
	// Expired messages were deleted by the retention period, silently (no
	// dead-letter queue sees them); DeadLettered were moved to the
	// dead-letter queue on a receive past maxReceiveCount.
	Expired, DeadLettered int64
	// MaxDepth is the most messages the queue held at once (visible,
	// delayed and in flight), MaxJobDepth the most of them the job sent.
	MaxDepth, MaxJobDepth int
}

// queue is the upload queue with the stack's attributes (infra/queue.go):
// retention, visibility timeout, a redrive policy to a dead-letter queue
// at maxReceiveCount, and per-message DelaySeconds. Messages are received
// in the order they turn visible (SQS's standard queue promises no order;
// this is the order that favours nobody).
type queue struct {
	l          *loop
	retention  time.Duration
	visibility time.Duration
	maxRecv    int
	next       int64
	byID       map[int64]*message
	ready      msgHeap // by visible
	jobDepth   int
	// visible is how many messages can be received now.
	visible   int
	onVisible func() // called when a message has turned visible
	batches   int64  // SendMessageBatch requests
	st        QueueStats
}

func newQueue(l *loop, retention, visibility time.Duration, maxReceiveCount int) *queue {
	q := &queue{l: l, retention: retention, visibility: visibility, maxRecv: maxReceiveCount, byID: map[int64]*message{}}
	var sweep func()
	sweep = func() {
		q.expire()
		l.after(sweepEvery, sweep)
	}
	l.after(sweepEvery, sweep)
	return q
}

// send adds a message visible after delay.
func (q *queue) send(body string, job bool, delay time.Duration) *message {
	q.next++
	m := &message{id: q.next, body: body, job: job, sent: q.l.now, visible: q.l.now.Add(delay)}
	q.byID[m.id] = m
	if job {
		q.jobDepth++
	}
	q.st.Sent++
	q.st.MaxDepth = max(q.st.MaxDepth, len(q.byID))
	q.st.MaxJobDepth = max(q.st.MaxJobDepth, q.jobDepth)
	q.schedule(m)
	return m
}

// schedule files m under its visibility and wakes a consumer then.
func (q *queue) schedule(m *message) {
	q.uncount(m)
	m.gen++
	gen := m.gen
	heap.Push(&q.ready, msgRef{m: m, at: m.visible, gen: gen})
	q.l.at(m.visible, func() {
		if m.gen == gen && !m.gone && !m.counted {
			m.counted = true
			q.visible++
			q.onVisible()
		}
	})
}

// uncount takes m out of the visible messages (received, hidden, gone).
func (q *queue) uncount(m *message) {
	if m.counted {
		m.counted = false
		q.visible--
	}
}

// receive returns up to n visible messages, each hidden for the visibility
// timeout; a message received maxReceiveCount times already moves to the
// dead-letter queue instead, one past its retention is deleted.
func (q *queue) receive(n int) []*message {
	var out []*message
	now := q.l.now
	for len(out) < n && q.ready.Len() > 0 && !q.ready[0].at.After(now) {
		r := heap.Pop(&q.ready).(msgRef)
		m := r.m
		if m.gone || r.gen != m.gen {
			continue
		}
		if !now.Before(m.sent.Add(q.retention)) {
			q.st.Expired++
			q.remove(m)
			continue
		}
		if q.maxRecv > 0 && m.receives >= q.maxRecv {
			q.st.DeadLettered++
			q.remove(m)
			continue
		}
		m.receives++
		q.st.Received++
		m.visible = now.Add(q.visibility)
		q.schedule(m)
		out = append(out, m)
	}
	return out
}

// hide is ChangeMessageVisibility: m turns visible d from now, in whole
// seconds rounded down as SQS counts them.
func (q *queue) hide(m *message, d time.Duration) {
	if m.gone {
		return
	}
	m.visible = q.l.now.Add(max(d, 0).Truncate(visibilityChange))
	q.schedule(m)
}

// remove deletes m: DeleteMessage, or expiry and the redrive.
func (q *queue) remove(m *message) {
	if m.gone {
		return
	}
	q.uncount(m)
	m.gone = true
	m.gen++
	delete(q.byID, m.id)
	if m.job {
		q.jobDepth--
	}
}

func (q *queue) delete(m *message) {
	if !m.gone {
		q.st.Deleted++
	}
	q.remove(m)
}

// expire deletes every message past its retention, as SQS does whether or
// not it is in flight.
func (q *queue) expire() {
	now := q.l.now
	for _, m := range q.byID {
		if !now.Before(m.sent.Add(q.retention)) {
			q.st.Expired++
			q.remove(m)
		}
	}
}

// depth is the messages the queue holds.
func (q *queue) depth() int { return len(q.byID) }

type msgRef struct {
	m   *message
	at  time.Time
	gen int
}

type msgHeap []msgRef

func (h msgHeap) Len() int { return len(h) }
func (h msgHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].m.id < h[j].m.id
}
func (h msgHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *msgHeap) Push(x any)   { *h = append(*h, x.(msgRef)) }
func (h *msgHeap) Pop() any {
	old := *h
	r := old[len(old)-1]
	old[len(old)-1] = msgRef{}
	*h = old[:len(old)-1]
	return r
}

// sender is the queue as the job engine's SQS client (its QueueSender):
// SendMessageBatch with SQS's checks.
type sender struct {
	q   *queue
	url string
}

func (s sender) SendMessageBatch(_ context.Context, in *sqs.SendMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	if aws.ToString(in.QueueUrl) != s.url {
		return nil, &types.QueueDoesNotExist{Message: aws.String("The specified queue does not exist.")}
	}
	if len(in.Entries) == 0 {
		return nil, &types.EmptyBatchRequest{Message: aws.String("There should be at least one SendMessageBatchRequestEntry in the request.")}
	}
	if len(in.Entries) > maxBatchEntries {
		return nil, &types.TooManyEntriesInBatchRequest{Message: aws.String(fmt.Sprintf("Maximum number of entries per request are %d. You have sent %d.", maxBatchEntries, len(in.Entries)))}
	}
	ids, size := map[string]bool{}, 0
	for _, e := range in.Entries {
		id := aws.ToString(e.Id)
		if ids[id] {
			return nil, &types.BatchEntryIdsNotDistinct{Message: aws.String("Id " + id + " repeated.")}
		}
		ids[id] = true
		size += len(aws.ToString(e.MessageBody))
		if e.DelaySeconds < 0 || e.DelaySeconds > maxDelaySeconds {
			return nil, fmt.Errorf("jobsim: InvalidParameterValue: DelaySeconds %d of entry %s: must be from 0 to %d", e.DelaySeconds, id, maxDelaySeconds)
		}
	}
	if size > maxBatchPayload {
		return nil, &types.BatchRequestTooLong{Message: aws.String(fmt.Sprintf("Batch requests cannot be longer than %d bytes. You have sent %d bytes.", maxBatchPayload, size))}
	}
	s.q.batches++
	out := &sqs.SendMessageBatchOutput{}
	for _, e := range in.Entries {
		m := s.q.send(aws.ToString(e.MessageBody), true, time.Duration(e.DelaySeconds)*time.Second)
		out.Successful = append(out.Successful, types.SendMessageBatchResultEntry{Id: e.Id,
			MessageId: aws.String(strconv.FormatInt(m.id, 10)), MD5OfMessageBody: aws.String("")})
	}
	return out, nil
}
