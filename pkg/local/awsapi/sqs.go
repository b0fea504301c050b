package awsapi

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
)

// SQS's limits the stand-in enforces besides sqsqueue's own (SQS API
// reference: SendMessageBatch, ReceiveMessage).
const (
	sqsMaxBatchEntries = 10
	sqsMaxBatchBytes   = 1 << 20 // the sum of a batch's bodies
	sqsMaxWait         = 20 * time.Second
)

// The SQS queue attributes GetQueueAttributes answers.
const (
	AttrMessages           = "ApproximateNumberOfMessages"
	AttrMessagesNotVisible = "ApproximateNumberOfMessagesNotVisible"
	AttrMessagesDelayed    = "ApproximateNumberOfMessagesDelayed"
	attrVisibilityTimeout  = "VisibilityTimeout"
	attrQueueArn           = "QueueArn"
	attrRedrivePolicy      = "RedrivePolicy"
	attrMaximumMessageSize = "MaximumMessageSize"
	attrAll                = "All"
)

// SQS serves queues of pkg/local/sqsqueue over SQS's awsJson1_0 protocol.
// A dead-letter queue is the source queue's own (sqsqueue keeps the
// messages its redrive policy moves): it has a name and a URL, answers
// GetQueueAttributes with the dead letters' count, and refuses receives,
// which the pipeline leaves to an operator on AWS too.
type SQS struct {
	opts SQSOptions

	mu     sync.Mutex
	queues map[string]*servedQueue // by name
}

// SQSOptions configure the SQS stand-in.
type SQSOptions struct {
	// Region and AccountID shape the queues' ARNs and URLs.
	Region, AccountID string
	// QueueOptions are applied to every queue CreateQueue makes, before the
	// request's attributes (tests pass a clock).
	QueueOptions []func(*sqsqueue.Options)
}

// servedQueue is one named queue: a queue of its own, or (dead set) the
// dead-letter queue of source.
type servedQueue struct {
	name  string
	queue *sqsqueue.Queue
	dead  bool
	// maxReceiveCount is the redrive policy's (0: none).
	maxReceiveCount int
	deadLetterName  string
}

// NewSQS returns an SQS stand-in with no queues.
func NewSQS(optFns ...func(*SQSOptions)) *SQS {
	o := SQSOptions{Region: sqsqueue.DefaultRegion, AccountID: sqsqueue.DefaultAccountID}
	for _, fn := range optFns {
		fn(&o)
	}
	return &SQS{opts: o, queues: map[string]*servedQueue{}}
}

// AddQueue serves q under name, and its dead letters under deadLetterName
// (none when empty), as a stack that created both would.
func (s *SQS) AddQueue(name string, q *sqsqueue.Queue, maxReceiveCount int, deadLetterName string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queues[name] = &servedQueue{name: name, queue: q, maxReceiveCount: maxReceiveCount, deadLetterName: deadLetterName}
	if deadLetterName != "" {
		s.queues[deadLetterName] = &servedQueue{name: deadLetterName, queue: q, dead: true}
	}
}

// QueueURL is the URL of the queue named name at endpoint (the server's).
func (s *SQS) QueueURL(endpoint, name string) string {
	return strings.TrimSuffix(endpoint, "/") + "/" + s.opts.AccountID + "/" + name
}

func (s *SQS) arn(name string) string {
	return "arn:aws:sqs:" + s.opts.Region + ":" + s.opts.AccountID + ":" + name
}

// Handler is the HTTP handler of the SQS API.
func (s *SQS) Handler() http.Handler {
	return awsJSON{target: "AmazonSQS", version: "1.0", ops: map[string]jsonOp{
		"CreateQueue":             s.createQueue,
		"GetQueueUrl":             s.getQueueURL,
		"GetQueueAttributes":      s.getQueueAttributes,
		"SendMessage":             s.sendMessage,
		"SendMessageBatch":        s.sendMessageBatch,
		"ReceiveMessage":          s.receiveMessage,
		"DeleteMessage":           s.deleteMessage,
		"DeleteMessageBatch":      s.deleteMessageBatch,
		"ChangeMessageVisibility": s.changeMessageVisibility,
		"SetQueueAttributes":      s.setQueueAttributes,
		"DeleteQueue":             s.deleteQueue,
	}}
}

func nonExistentQueue(what string) *apiError {
	e := senderError("QueueDoesNotExist", "The specified queue does not exist: %s", what)
	e.QueryCode = "AWS.SimpleQueueService.NonExistentQueue"
	return e
}

// sqsError is sqsqueue's refusal as SQS answers it.
func sqsError(err error) error {
	var qe *sqsqueue.Error
	if errors.As(err, &qe) {
		e := senderError(qe.Code, "%s", qe.Message)
		e.QueryCode = qe.Code
		return e
	}
	return err
}

func requestEndpoint(r *http.Request) string { return "http://" + r.Host }

// lookup finds the queue a QueueUrl names: by its last path segment, as
// SQS routes by account and name.
func (s *SQS) lookup(queueURL string) (*servedQueue, error) {
	name := queueURL[strings.LastIndex(queueURL, "/")+1:]
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queues[name]
	if q == nil {
		return nil, nonExistentQueue(queueURL)
	}
	return q, nil
}

// live is lookup for the operations a dead-letter view does not serve.
func (s *SQS) live(queueURL, op string) (*sqsqueue.Queue, error) {
	q, err := s.lookup(queueURL)
	if err != nil {
		return nil, err
	}
	if q.dead {
		return nil, senderError("UnsupportedOperation", "%s on %s: the local dead-letter queue is its source queue's store of dead letters; it serves GetQueueAttributes only", op, q.name)
	}
	return q.queue, nil
}

type redrivePolicy struct {
	DeadLetterTargetArn string `json:"deadLetterTargetArn"`
	MaxReceiveCount     any    `json:"maxReceiveCount"` // SQS takes "5" and 5
}

func (s *SQS) createQueue(_ context.Context, r *http.Request, body []byte) (any, error) {
	var in struct {
		QueueName  string
		Attributes map[string]string
	}
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	if in.QueueName == "" || strings.ContainsAny(in.QueueName, "/:") {
		return nil, senderError("InvalidParameterValue", "QueueName %q is not a queue name", in.QueueName)
	}
	opts := slices.Clone(s.opts.QueueOptions)
	opts = append(opts, func(o *sqsqueue.Options) {
		o.Name, o.Region, o.AccountID = in.QueueName, s.opts.Region, s.opts.AccountID
	})
	var maxReceive int
	var deadName string
	for name, v := range in.Attributes {
		switch name {
		case attrVisibilityTimeout, "MessageRetentionPeriod":
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, sqsError(&sqsqueue.Error{Code: sqsqueue.CodeInvalidAttributeValue, Message: fmt.Sprintf("Invalid value %s for the parameter %s", v, name)})
			}
			d := time.Duration(n) * time.Second
			if name == attrVisibilityTimeout {
				opts = append(opts, sqsqueue.WithVisibilityTimeout(d))
			} else {
				opts = append(opts, sqsqueue.WithMessageRetentionPeriod(d))
			}
		case attrMaximumMessageSize:
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, sqsError(&sqsqueue.Error{Code: sqsqueue.CodeInvalidAttributeValue, Message: "Invalid value " + v + " for the parameter " + name})
			}
			opts = append(opts, sqsqueue.WithMaximumMessageSize(n))
		case attrRedrivePolicy:
			var p redrivePolicy
			if err := json.Unmarshal([]byte(v), &p); err != nil {
				return nil, sqsError(&sqsqueue.Error{Code: sqsqueue.CodeInvalidAttributeValue, Message: "Invalid value for the parameter RedrivePolicy: " + err.Error()})
			}
			n, err := strconv.Atoi(strings.Trim(fmt.Sprint(p.MaxReceiveCount), `"`))
			if err != nil {
				return nil, sqsError(&sqsqueue.Error{Code: sqsqueue.CodeInvalidAttributeValue, Message: "Invalid value for the parameter RedrivePolicy: maxReceiveCount " + fmt.Sprint(p.MaxReceiveCount)})
			}
			maxReceive = n
			deadName = p.DeadLetterTargetArn[strings.LastIndex(p.DeadLetterTargetArn, ":")+1:]
			opts = append(opts, sqsqueue.WithMaxReceiveCount(n))
		default:
			// Other attributes (tags, encryption, delays) do not change
			// what the local queue does.
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.queues[in.QueueName]; ok {
		// SQS answers an existing queue's URL (attributes matching).
		return map[string]string{"QueueUrl": s.QueueURL(requestEndpoint(r), in.QueueName)}, nil
	}
	if deadName != "" {
		// As on AWS the dead-letter queue exists first; locally it becomes
		// the view of the new queue's dead letters, so it must be unused.
		dlq := s.queues[deadName]
		if dlq == nil {
			return nil, sqsError(&sqsqueue.Error{Code: sqsqueue.CodeInvalidParameterValue, Message: "Value " + deadName + " for parameter RedrivePolicy is invalid. Reason: Dead letter target does not exist."})
		}
		if !dlq.dead && dlq.queue.Len() > 0 {
			return nil, sqsError(&sqsqueue.Error{Code: sqsqueue.CodeInvalidParameterValue, Message: "Value " + deadName + " for parameter RedrivePolicy is invalid. Reason: locally a dead-letter queue must be empty when its source queue is created"})
		}
	}
	q, err := sqsqueue.Create(opts...)
	if err != nil {
		return nil, sqsError(err)
	}
	s.queues[in.QueueName] = &servedQueue{name: in.QueueName, queue: q, maxReceiveCount: maxReceive, deadLetterName: deadName}
	if deadName != "" {
		s.queues[deadName] = &servedQueue{name: deadName, queue: q, dead: true}
	}
	return map[string]string{"QueueUrl": s.QueueURL(requestEndpoint(r), in.QueueName)}, nil
}

func (s *SQS) getQueueURL(_ context.Context, r *http.Request, body []byte) (any, error) {
	var in struct{ QueueName string }
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	s.mu.Lock()
	_, ok := s.queues[in.QueueName]
	s.mu.Unlock()
	if !ok {
		return nil, nonExistentQueue(in.QueueName)
	}
	return map[string]string{"QueueUrl": s.QueueURL(requestEndpoint(r), in.QueueName)}, nil
}

func (s *SQS) getQueueAttributes(_ context.Context, _ *http.Request, body []byte) (any, error) {
	var in struct {
		QueueUrl       string
		AttributeNames []string
	}
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	q, err := s.lookup(in.QueueUrl)
	if err != nil {
		return nil, err
	}
	m := q.queue.Metrics()
	all := map[string]string{attrQueueArn: s.arn(q.name)}
	if q.dead {
		all[AttrMessages] = strconv.Itoa(m.DeadLetterVisible)
		all[AttrMessagesNotVisible] = "0"
		all[AttrMessagesDelayed] = "0"
	} else {
		all[AttrMessages] = strconv.Itoa(m.Visible)
		all[AttrMessagesNotVisible] = strconv.Itoa(m.NotVisible)
		all[AttrMessagesDelayed] = strconv.Itoa(m.Delayed)
		all[attrVisibilityTimeout] = strconv.Itoa(int(q.queue.VisibilityTimeout() / time.Second))
		all[attrMaximumMessageSize] = strconv.Itoa(q.queue.MaximumMessageSize())
		if q.deadLetterName != "" {
			p, _ := json.Marshal(map[string]any{"deadLetterTargetArn": s.arn(q.deadLetterName), "maxReceiveCount": q.maxReceiveCount})
			all[attrRedrivePolicy] = string(p)
		}
	}
	out := map[string]string{}
	for _, name := range in.AttributeNames {
		if name == attrAll {
			out = all
			break
		}
		if v, ok := all[name]; ok {
			out[name] = v
		}
	}
	return map[string]any{"Attributes": out}, nil
}

func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

type sendEntry struct {
	Id           string
	MessageBody  string
	DelaySeconds *int
}

func (e sendEntry) delay() time.Duration {
	if e.DelaySeconds == nil {
		return 0
	}
	return time.Duration(*e.DelaySeconds) * time.Second
}

func (s *SQS) sendMessage(_ context.Context, _ *http.Request, body []byte) (any, error) {
	var in struct {
		QueueUrl string
		sendEntry
	}
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	q, err := s.live(in.QueueUrl, "SendMessage")
	if err != nil {
		return nil, err
	}
	id, err := q.SendMessageDelayed(in.MessageBody, in.delay())
	if err != nil {
		return nil, sqsError(err)
	}
	return map[string]string{"MessageId": id, "MD5OfMessageBody": md5Hex(in.MessageBody)}, nil
}

type batchFailure struct {
	Id          string
	Code        string
	Message     string
	SenderFault bool
}

// checkBatch applies SQS's batch request limits, common to sends and deletes.
func checkBatch(ids []string) error {
	if len(ids) == 0 {
		return senderError("EmptyBatchRequest", "There should be at least one SendMessageBatchRequestEntry in the request.")
	}
	if len(ids) > sqsMaxBatchEntries {
		return senderError("TooManyEntriesInBatchRequest", "Maximum number of entries per request are %d. You have sent %d.", sqsMaxBatchEntries, len(ids))
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			return senderError("BatchEntryIdsNotDistinct", "Id %s repeated.", id)
		}
		seen[id] = true
	}
	return nil
}

func (s *SQS) sendMessageBatch(_ context.Context, _ *http.Request, body []byte) (any, error) {
	var in struct {
		QueueUrl string
		Entries  []sendEntry
	}
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	q, err := s.live(in.QueueUrl, "SendMessageBatch")
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(in.Entries))
	size := 0
	for i, e := range in.Entries {
		ids[i] = e.Id
		size += len(e.MessageBody)
	}
	if err := checkBatch(ids); err != nil {
		return nil, err
	}
	if size > sqsMaxBatchBytes {
		return nil, senderError("BatchRequestTooLong", "Batch requests cannot be longer than %d bytes. You have sent %d bytes.", sqsMaxBatchBytes, size)
	}
	type success struct{ Id, MessageId, MD5OfMessageBody string }
	out := struct {
		Successful []success
		Failed     []batchFailure
	}{Successful: []success{}, Failed: []batchFailure{}}
	for _, e := range in.Entries {
		id, err := q.SendMessageDelayed(e.MessageBody, e.delay())
		if err != nil {
			ae := asAPIError(sqsError(err))
			out.Failed = append(out.Failed, batchFailure{Id: e.Id, Code: ae.Code, Message: ae.Message, SenderFault: true})
			continue
		}
		out.Successful = append(out.Successful, success{Id: e.Id, MessageId: id, MD5OfMessageBody: md5Hex(e.MessageBody)})
	}
	return out, nil
}

func (s *SQS) receiveMessage(ctx context.Context, _ *http.Request, body []byte) (any, error) {
	var in struct {
		QueueUrl            string
		MaxNumberOfMessages int
		WaitTimeSeconds     int
		VisibilityTimeout   *int
	}
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	q, err := s.live(in.QueueUrl, "ReceiveMessage")
	if err != nil {
		return nil, err
	}
	if in.MaxNumberOfMessages == 0 {
		in.MaxNumberOfMessages = 1
	}
	if in.MaxNumberOfMessages < 1 || in.MaxNumberOfMessages > sqsMaxBatchEntries {
		return nil, sqsError(&sqsqueue.Error{Code: sqsqueue.CodeInvalidParameterValue, Message: fmt.Sprintf("Value %d for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.", in.MaxNumberOfMessages)})
	}
	wait := time.Duration(in.WaitTimeSeconds) * time.Second
	if wait < 0 || wait > sqsMaxWait {
		return nil, sqsError(&sqsqueue.Error{Code: sqsqueue.CodeInvalidParameterValue, Message: fmt.Sprintf("Value %d for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided.", in.WaitTimeSeconds)})
	}
	type message struct {
		MessageId, ReceiptHandle, MD5OfBody, Body string
		Attributes                                map[string]string
	}
	msgs := q.Receive(ctx, in.MaxNumberOfMessages, wait)
	out := make([]message, 0, len(msgs))
	for _, m := range msgs {
		if in.VisibilityTimeout != nil {
			if err := q.ChangeVisibility(m.ReceiptHandle, time.Duration(*in.VisibilityTimeout)*time.Second); err != nil {
				return nil, sqsError(err)
			}
		}
		out = append(out, message{MessageId: m.MessageId, ReceiptHandle: m.ReceiptHandle, MD5OfBody: m.Md5OfBody, Body: m.Body, Attributes: m.Attributes})
	}
	return map[string]any{"Messages": out}, nil
}

func (s *SQS) deleteMessage(_ context.Context, _ *http.Request, body []byte) (any, error) {
	var in struct{ QueueUrl, ReceiptHandle string }
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	q, err := s.live(in.QueueUrl, "DeleteMessage")
	if err != nil {
		return nil, err
	}
	// SQS answers a delete with a stale receipt handle with success (and
	// keeps the message, received again since): so does the stand-in.
	if err := q.Ack(in.ReceiptHandle); err != nil && !errors.Is(err, sqsqueue.ErrStaleReceipt) {
		return nil, sqsError(err)
	}
	return nil, nil
}

func (s *SQS) deleteMessageBatch(_ context.Context, _ *http.Request, body []byte) (any, error) {
	var in struct {
		QueueUrl string
		Entries  []struct{ Id, ReceiptHandle string }
	}
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	q, err := s.live(in.QueueUrl, "DeleteMessageBatch")
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(in.Entries))
	for i, e := range in.Entries {
		ids[i] = e.Id
	}
	if err := checkBatch(ids); err != nil {
		return nil, err
	}
	type success struct{ Id string }
	out := struct {
		Successful []success
		Failed     []batchFailure
	}{Successful: []success{}, Failed: []batchFailure{}}
	for _, e := range in.Entries {
		if err := q.Ack(e.ReceiptHandle); err != nil && !errors.Is(err, sqsqueue.ErrStaleReceipt) {
			ae := asAPIError(sqsError(err))
			out.Failed = append(out.Failed, batchFailure{Id: e.Id, Code: ae.Code, Message: ae.Message, SenderFault: true})
			continue
		}
		out.Successful = append(out.Successful, success{Id: e.Id})
	}
	return out, nil
}

func (s *SQS) changeMessageVisibility(_ context.Context, _ *http.Request, body []byte) (any, error) {
	var in struct {
		QueueUrl, ReceiptHandle string
		VisibilityTimeout       int
	}
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	q, err := s.live(in.QueueUrl, "ChangeMessageVisibility")
	if err != nil {
		return nil, err
	}
	if err := q.ChangeVisibility(in.ReceiptHandle, time.Duration(in.VisibilityTimeout)*time.Second); err != nil {
		if errors.Is(err, sqsqueue.ErrStaleReceipt) {
			// SQS's answer for a message deleted or received again since.
			e := senderError("MessageNotInflight", "Message does not exist or is not available for visibility timeout change.")
			e.QueryCode = "AWS.SimpleQueueService.MessageNotInflight"
			return nil, e
		}
		return nil, sqsError(err)
	}
	return nil, nil
}

// setQueueAttributes takes the attributes that do not change what the
// local queue does (Policy: there is no IAM here; encryption, tags) and
// refuses the ones that would, which the queue fixes at creation.
func (s *SQS) setQueueAttributes(_ context.Context, _ *http.Request, body []byte) (any, error) {
	var in struct {
		QueueUrl   string
		Attributes map[string]string
	}
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	if _, err := s.lookup(in.QueueUrl); err != nil {
		return nil, err
	}
	for name := range in.Attributes {
		switch name {
		case attrVisibilityTimeout, attrRedrivePolicy, attrMaximumMessageSize, "MessageRetentionPeriod":
			return nil, senderError("InvalidAttributeName", "locally %s is set by CreateQueue only", name)
		}
	}
	return nil, nil
}

// deleteQueue removes a queue, and the dead-letter view of its dead
// letters with it; deleting a dead-letter view leaves its source queue.
func (s *SQS) deleteQueue(_ context.Context, _ *http.Request, body []byte) (any, error) {
	var in struct{ QueueUrl string }
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	q, err := s.lookup(in.QueueUrl)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.queues, q.name)
	if q.deadLetterName != "" {
		delete(s.queues, q.deadLetterName)
	}
	return nil, nil
}
