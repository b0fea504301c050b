package sqsqueue

import (
	"crypto/md5"
	"encoding/hex"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// Message is a message as the queue holds it, for inspection (dead letters).
type Message struct {
	ID     string
	Body   string
	SentAt time.Time
	// DeadLetteredAt is when the redrive policy moved the message to the
	// dead-letter queue; zero for a message that was not moved.
	DeadLetteredAt time.Time
	ReceiveCount   int
	// LastFailure is the last reason a consumer gave for not deleting the
	// message (see Queue.NoteFailure); empty when unknown.
	LastFailure string
}

// entry is one deliverable copy of a message. A duplicated message has two
// entries sharing the message id, each deleted by its own receipt handle.
type entry struct {
	seq          uint64
	id           string
	body         string
	md5          string
	sentAt       time.Time
	firstReceive time.Time
	// receivedAt is when the receive that produced receipt was requested:
	// SQS's 12-hour visibility limit counts from it.
	receivedAt   time.Time
	receiveCount int
	visibleAt    time.Time
	receipt      string // latest receipt handle; "" until first received
	lastFailure  string
	// visibilitySet records a ChangeVisibility since the last receive, so
	// the poller's retry delay never shortens a delay the handler chose.
	visibilitySet bool
	isCopy        bool
	deleted       bool
}

func newEntry(seq uint64, id, body string, now time.Time) *entry {
	sum := md5.Sum([]byte(body))
	return &entry{seq: seq, id: id, body: body, md5: hex.EncodeToString(sum[:]), sentAt: now, visibleAt: now}
}

func (e *entry) message() Message {
	return Message{ID: e.id, Body: e.body, SentAt: e.sentAt, ReceiveCount: e.receiveCount, LastFailure: e.lastFailure}
}

// sqsMessage is the record Lambda's SQS event source would hand the function.
func (e *entry) sqsMessage(arn, region string) events.SQSMessage {
	return events.SQSMessage{
		MessageId:     e.id,
		ReceiptHandle: e.receipt,
		Body:          e.body,
		Md5OfBody:     e.md5,
		Attributes: map[string]string{
			"ApproximateReceiveCount":          strconv.Itoa(e.receiveCount),
			"SentTimestamp":                    strconv.FormatInt(e.sentAt.UnixMilli(), 10),
			"SenderId":                         "LOCALSENDER",
			"ApproximateFirstReceiveTimestamp": strconv.FormatInt(e.firstReceive.UnixMilli(), 10),
		},
		MessageAttributes: map[string]events.SQSMessageAttribute{},
		EventSourceARN:    arn,
		EventSource:       "aws:sqs",
		AWSRegion:         region,
	}
}
