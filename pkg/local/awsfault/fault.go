package awsfault

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Kind is what a fault does to a request.
type Kind int

const (
	// Error answers with Fault.Status and an error body naming Fault.Code;
	// the backend never sees the request.
	Error Kind = iota + 1
	// Delay waits Fault.Delay, then forwards the request normally.
	Delay
	// ResetBefore closes the connection before the request is forwarded:
	// nothing was applied.
	ResetBefore
	// AnswerLost forwards the request (the backend applies it) and closes
	// the connection instead of answering.
	AnswerLost
	// ResetMidBody forwards the request and closes the connection after
	// half of the response body. Without a body it acts as AnswerLost.
	ResetMidBody
)

func (k Kind) String() string {
	switch k {
	case Error:
		return "error"
	case Delay:
		return "delay"
	case ResetBefore:
		return "reset before the backend"
	case AnswerLost:
		return "answer lost"
	case ResetMidBody:
		return "reset mid-body"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Fault is one injected failure.
type Fault struct {
	Kind    Kind
	Status  int    // Error: the HTTP status
	Code    string // Error: the AWS error code, e.g. ThrottlingException
	Message string // Error: the message
	// Reasons, for DynamoDB's TransactionCanceledException, are the
	// cancellation reason codes, one per item of the transaction, sent in
	// CancellationReasons and in the message, as DynamoDB sends them.
	Reasons []string
	Delay   time.Duration
}

// Name identifies the fault in counts: the error code, or the kind.
func (f Fault) Name() string {
	switch {
	case f.Kind == Error && len(f.Reasons) > 0:
		return f.Code + " [" + strings.Join(f.Reasons, ", ") + "]"
	case f.Kind == Error:
		return f.Code
	case f.Kind == Delay:
		return fmt.Sprintf("delay %s", f.Delay)
	}
	return f.Kind.String()
}

// Rule injects Fault into a share (Rate, 0 to 1) of the requests for the
// named operations (all operations when Operations is empty).
type Rule struct {
	Operations []string
	Rate       float64
	Fault      Fault
	// Limit caps the faults the rule injects (0: no cap), e.g. 1 to fail
	// only the first attempt and let the SDK's retry through.
	Limit int
}

func (r Rule) matches(op string) bool {
	return len(r.Operations) == 0 || slices.Contains(r.Operations, op)
}

// On returns rule r restricted to the operations ops.
func (r Rule) On(ops ...string) Rule {
	r.Operations = ops
	return r
}

// Times returns rule r capped at n injections.
func (r Rule) Times(n int) Rule {
	r.Limit = n
	return r
}

// At returns a rule injecting f into a share rate of all requests.
func At(rate float64, f Fault) Rule { return Rule{Rate: rate, Fault: f} }

// The errors AWS documents for the services the pipeline calls, with the
// statuses and messages the services send.
var (
	// DynamoDBThrottling is on-demand or hot-partition throttling.
	DynamoDBThrottling = Fault{Kind: Error, Status: http.StatusBadRequest, Code: "ThrottlingException",
		Message: "Throughput exceeds the current capacity for one or more global secondary indexes. DynamoDB is automatically scaling your index so please try again shortly."}
	// DynamoDBThroughputExceeded is a hot partition's provisioned limit,
	// which on-demand tables hit as well.
	DynamoDBThroughputExceeded = Fault{Kind: Error, Status: http.StatusBadRequest, Code: "ProvisionedThroughputExceededException",
		Message: "The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API."}
	// DynamoDBInternalError is DynamoDB's 500.
	DynamoDBInternalError = Fault{Kind: Error, Status: http.StatusInternalServerError, Code: "InternalServerError",
		Message: "Internal server error"}
	// DynamoDBTransactionConflict is a single-item write refused because a
	// transaction holds the item.
	DynamoDBTransactionConflict = Fault{Kind: Error, Status: http.StatusBadRequest, Code: "TransactionConflictException",
		Message: "Transaction is ongoing for the item"}
	// DynamoDBTransactionConflictCancel is a TransactWriteItems cancelled
	// because another transaction holds its item.
	DynamoDBTransactionConflictCancel = DynamoDBTransactionCanceled(ReasonTransactionConflict)
	// DynamoDBThrottlingCancel is a TransactWriteItems cancelled because its
	// item's table or partition is throttled (an on-demand table scaling).
	DynamoDBThrottlingCancel = DynamoDBTransactionCanceled(ReasonThrottlingError)
	// S3SlowDown is S3's request-rate pushback.
	S3SlowDown = Fault{Kind: Error, Status: http.StatusServiceUnavailable, Code: "SlowDown",
		Message: "Please reduce your request rate."}
	// S3InternalError is S3's 500.
	S3InternalError = Fault{Kind: Error, Status: http.StatusInternalServerError, Code: "InternalError",
		Message: "We encountered an internal error. Please try again."}
	// SecretsManagerThrottling is Secrets Manager's rate limit.
	SecretsManagerThrottling = Fault{Kind: Error, Status: http.StatusBadRequest, Code: "ThrottlingException",
		Message: "Rate exceeded"}
	// SecretsManagerInternalError is Secrets Manager's 500.
	SecretsManagerInternalError = Fault{Kind: Error, Status: http.StatusInternalServerError, Code: "InternalServiceError",
		Message: "An error occurred on the server side."}

	ResetBeforeBackend = Fault{Kind: ResetBefore}
	LostAnswer         = Fault{Kind: AnswerLost}
	MidBodyReset       = Fault{Kind: ResetMidBody}
)

// Latency is a Delay fault of d.
func Latency(d time.Duration) Fault { return Fault{Kind: Delay, Delay: d} }

// Cancellation reason codes of DynamoDB's TransactionCanceledException,
// with the messages the API Reference lists for them.
const (
	ReasonTransactionConflict           = "TransactionConflict"
	ReasonThrottlingError               = "ThrottlingError"
	ReasonProvisionedThroughputExceeded = "ProvisionedThroughputExceeded"
	ReasonConditionalCheckFailed        = "ConditionalCheckFailed"
	ReasonNone                          = "None"
)

var reasonMessages = map[string]string{
	ReasonTransactionConflict:           "Transaction is ongoing for the item",
	ReasonThrottlingError:               "Throughput exceeds the current capacity of your table or index. DynamoDB is automatically scaling your table or index so please try again shortly. If exceptions persist, check if you have a hot key: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html.",
	ReasonProvisionedThroughputExceeded: "The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API.",
	ReasonConditionalCheckFailed:        "The conditional request failed",
}

// DynamoDBTransactionCanceled is a TransactWriteItems cancelled as a whole
// (nothing applied) with one reason per item, answered as DynamoDB answers
// it: 400, TransactionCanceledException, the reasons in
// CancellationReasons and listed at the end of the message.
func DynamoDBTransactionCanceled(reasons ...string) Fault {
	return Fault{Kind: Error, Status: http.StatusBadRequest, Code: "TransactionCanceledException",
		Message: "Transaction cancelled, please refer cancellation reasons for specific reasons [" + strings.Join(reasons, ", ") + "]",
		Reasons: slices.Clone(reasons)}
}
