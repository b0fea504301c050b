package sqsqueue

import (
	"fmt"
	"time"
)

// SQS's limits, enforced by the local queue so that code exercised against
// it meets the errors SQS would answer.
//
// Sources (AWS documentation):
//   - ChangeMessageVisibility API reference, VisibilityTimeout: "Values
//     range: 0 to 43200. Maximum: 12 hours"; "If you try to extend the
//     visibility timeout beyond the maximum, your request is rejected."
//   - SQS Developer Guide, Visibility timeout (sqs-visibility-timeout):
//     "The maximum visibility timeout is 12 hours from the time that Amazon
//     SQS receives the ReceiveMessage request. Extending the visibility
//     timeout does not reset the 12 hour maximum." SQS rejects such a change
//     with InvalidParameterValue: "Value N for parameter VisibilityTimeout is
//     invalid. Reason: Total VisibilityTimeout for the message is beyond the
//     limit [43200 seconds]" (reported in aws/aws-sdk-net#794 and
//     localstack/localstack#3956).
//   - CreateQueue / SetQueueAttributes API reference: VisibilityTimeout "An
//     integer from 0 to 43,200 (12 hours). Default: 30";
//     MessageRetentionPeriod "from 60 seconds (1 minute) to 1,209,600
//     seconds (14 days). Default: 345,600 (4 days)"; MaximumMessageSize
//     "from 1,024 bytes (1 KiB)", default 262,144 (256 KiB). The current
//     SendMessage reference gives 1 MiB (1,048,576 bytes) as the largest
//     body a queue can be configured to take; 256 KiB remains the default.
//   - SQS Developer Guide, Setting-up dead-letter queue retention: "For
//     standard queues, the expiration of a message is always based on its
//     original enqueue timestamp. When a message is moved to a dead-letter
//     queue, the enqueue timestamp is unchanged."
//   - Redrive policy: maxReceiveCount must be from 1 to 1,000 (the stack's
//     own check, infra/config.go, uses the same range).
//   - Lambda, "Lambda parameters for Amazon SQS event source mappings" and
//     the CreateEventSourceMapping reference: BatchSize default 10; "For
//     streams and Amazon SQS event sources, when you set BatchSize to a
//     value greater than 10, you must set MaximumBatchingWindowInSeconds to
//     at least 1". The Poller has no batching window, so 1..10.
const (
	// MaxVisibilityTimeout is both the largest visibility timeout and the
	// longest a message may stay invisible after the receive that produced
	// its receipt handle (43,200 s).
	MaxVisibilityTimeout = 12 * time.Hour

	MinMessageRetentionPeriod     = time.Minute         // 60 s
	MaxMessageRetentionPeriod     = 14 * 24 * time.Hour // 1,209,600 s
	DefaultMessageRetentionPeriod = 4 * 24 * time.Hour  // 345,600 s

	MinMaximumMessageSize     = 1024    // 1 KiB
	MaxMaximumMessageSize     = 1 << 20 // 1 MiB, 1,048,576 bytes
	DefaultMaximumMessageSize = 262144  // 256 KiB

	MinMaxReceiveCount = 1
	MaxMaxReceiveCount = 1000

	// MaxDelay is the longest DelaySeconds a message may be sent with:
	// SendMessage reference, DelaySeconds "Valid values: 0 to 900.
	// Maximum: 15 minutes".
	MaxDelay = 15 * time.Minute

	// MaxBatchSize is the largest batch of the event source without a
	// batching window (and the most one ReceiveMessage returns).
	MaxBatchSize = 10
)

// Error codes, as SQS names them.
const (
	CodeInvalidParameterValue = "InvalidParameterValue"
	CodeInvalidAttributeValue = "InvalidAttributeValue"
)

// Error is a request SQS would refuse, carrying SQS's error code. It
// matches, for errors.Is, any *Error with the same code and no message,
// such as ErrInvalidParameterValue.
type Error struct {
	Code    string
	Message string
}

// Sentinels for errors.Is.
var (
	ErrInvalidParameterValue = &Error{Code: CodeInvalidParameterValue}
	ErrInvalidAttributeValue = &Error{Code: CodeInvalidAttributeValue}
)

func (e *Error) Error() string { return "sqsqueue: " + e.Code + ": " + e.Message }

// ErrorCode and ErrorMessage are those of the AWS SDK's API errors.
func (e *Error) ErrorCode() string    { return e.Code }
func (e *Error) ErrorMessage() string { return e.Message }

// Is matches a sentinel with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Code == e.Code
}

func invalidParameter(name string, value any, reason string) error {
	return &Error{Code: CodeInvalidParameterValue,
		Message: fmt.Sprintf("Value %v for parameter %s is invalid. Reason: %s", value, name, reason)}
}

func invalidAttribute(name string, value any, reason string) error {
	return &Error{Code: CodeInvalidAttributeValue,
		Message: fmt.Sprintf("Invalid value %v for the parameter %s. Reason: %s", value, name, reason)}
}

// seconds renders a duration as SQS's integer seconds when whole.
func seconds(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprint(int64(d / time.Second))
	}
	return fmt.Sprintf("%gs", d.Seconds())
}
