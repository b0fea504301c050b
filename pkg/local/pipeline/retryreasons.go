package pipeline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/geolocate-aws/geolocate/pkg/predictor"
)

// Attributes of the predictor's JSON log lines that retryReasons reads.
const (
	logAttrMessageID = "message_id"
	logAttrMsg       = "msg"
	logAttrCode      = "code"
	logAttrError     = "error"
)

// logMsgRecorded is the predictor's line for a call that got its answer.
const logMsgRecorded = "prediction recorded"

// sameFailureLimit is how many calls in a row may fail with one cause, no
// prediction recorded in between, before a run stops: a stale URL, a
// revoked key or an empty balance fails every call alike, and retrying
// each message until the dead-letter queue took minutes and said nothing.
const sameFailureLimit = 5

// giveUpCodes are the call failures that, repeated, mean every call will
// fail: not the pacing's waits (rate_limited, rate_wait_timeout), which
// are the normal flow of a busy run.
var giveUpCodes = map[string]bool{
	predictor.CodeTransport:      true,
	predictor.CodeUnauthorized:   true,
	predictor.CodeInvalidKey:     true,
	predictor.CodeOutOfCredits:   true,
	predictor.CodeServerError:    true,
	predictor.CodeKeyUnavailable: true,
}

// retryReasons reads the functions' JSON log lines (an io.Writer beside
// Options.FunctionLogs) and keeps, per SQS message id, the cause of the
// last line that returned it or failed its call, so that each "retry" line
// says why. The predictor writes a batch's lines before its invocation
// returns, so they are here when the poller reports the batch.
type retryReasons struct {
	mu      sync.Mutex
	partial []byte
	cause   map[string]string // message id -> cause in a few words
	// streak counts the calls failed in a row with streakCause, no
	// prediction recorded since.
	streak      int
	streakCause string
}

func newRetryReasons() *retryReasons {
	return &retryReasons{cause: map[string]string{}}
}

func (r *retryReasons) Write(b []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.partial = append(r.partial, b...)
	for {
		i := bytes.IndexByte(r.partial, '\n')
		if i < 0 {
			break
		}
		r.line(r.partial[:i])
		r.partial = r.partial[i+1:]
	}
	return len(b), nil
}

// line notes one log line; anything that is not a JSON object of the
// predictor (metrics, the monitor's lines) is ignored.
func (r *retryReasons) line(b []byte) {
	var attrs map[string]any
	if json.Unmarshal(b, &attrs) != nil {
		return
	}
	msg, _ := attrs[logAttrMsg].(string)
	if msg == logMsgRecorded {
		r.streak, r.streakCause = 0, ""
		return
	}
	id, _ := attrs[logAttrMessageID].(string)
	code, _ := attrs[logAttrCode].(string)
	errText, _ := attrs[logAttrError].(string)
	if id == "" || (code == "" && !strings.Contains(msg, "returned")) {
		return
	}
	cause := code
	if cause == "" {
		// "no call slot: message returned for retry" -> "no call slot"
		cause, _, _ = strings.Cut(msg, ":")
	}
	if errText != "" {
		cause += ": " + lastClause(errText)
	}
	r.cause[id] = cause
	if giveUpCodes[code] {
		if cause != r.streakCause {
			r.streak, r.streakCause = 0, cause
		}
		r.streak++
	}
}

// lastClause is the innermost part of a wrapped error's text, the part
// after its last ": " ("dial tcp 127.0.0.1:8080: connect: connection
// refused" -> "connection refused").
func lastClause(s string) string {
	if i := strings.LastIndex(s, ": "); i >= 0 && i+2 < len(s) {
		return s[i+2:]
	}
	return s
}

// take returns the causes of the given returned messages, as "cause" or
// "cause (n); other cause (m)", and forgets them.
func (r *retryReasons) take(ids []string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	counts := map[string]int{}
	for _, id := range ids {
		cause := r.cause[id]
		if cause == "" {
			cause = "cause not in the functions' logs at their GEO_LOG_LEVEL"
		}
		counts[cause]++
		delete(r.cause, id)
	}
	if len(counts) == 1 {
		for cause := range counts {
			return cause
		}
	}
	causes := make([]string, 0, len(counts))
	for cause, n := range counts {
		causes = append(causes, fmt.Sprintf("%s (%d)", cause, n))
	}
	sort.Strings(causes)
	return strings.Join(causes, "; ")
}

// hopeless reports the cause when the last sameFailureLimit calls all
// failed with it and nothing was recorded since.
func (r *retryReasons) hopeless() (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.streakCause, r.streak >= sameFailureLimit
}
