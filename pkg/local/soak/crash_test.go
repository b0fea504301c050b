package soak

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/smithy-go"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/predictor"
)

// errSimulatedCrash is what a crashed invocation returns: to the queue it
// is an invocation error, so nothing of the batch is deleted.
var errSimulatedCrash = errors.New("simulated crash: the Lambda instance died between the paid call and the write")

// crashError is the failed write of a process that died: an error the
// predictor does not retry (a client fault), as a dead process retries
// nothing.
func crashError() error {
	return &smithy.GenericAPIError{Code: "SimulatedCrash", Message: errSimulatedCrash.Error(), Fault: smithy.FaultClient}
}

// crashSwitch is set when an invocation "crashes". It travels in the
// invocation's context, which the predictor hands to the ledger.
type crashSwitch struct{ crashed atomic.Bool }

type crashSwitchKey struct{}

// crashLedger drops the first Complete of each chosen object and marks the
// invocation crashed: the prediction was paid for, the record stays in
// progress, and the message comes back, exactly as after a Lambda crash
// right after the call.
type crashLedger struct {
	predictor.Ledger
	chosen  func(key string) bool
	crashed sync.Map // key -> struct{}: crashed once already
	count   atomic.Int64
}

func (l *crashLedger) Complete(ctx context.Context, claim *ledger.Claim, result ledger.Record) error {
	sw, _ := ctx.Value(crashSwitchKey{}).(*crashSwitch)
	if sw != nil && l.chosen(claim.Ref.Key) {
		if _, again := l.crashed.LoadOrStore(claim.Ref.Key, struct{}{}); !again {
			sw.crashed.Store(true)
			l.count.Add(1)
			return crashError()
		}
	}
	return l.Ledger.Complete(ctx, claim, result)
}

// crashed reports whether key's result write was dropped.
func (l *crashLedger) wasCrashed(key string) bool {
	_, ok := l.crashed.Load(key)
	return ok
}

// crashingHandler wraps the handler so an invocation whose write was
// dropped fails as a whole, like a runtime that died.
func crashingHandler(h *predictor.Handler) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	return func(ctx context.Context, batch events.SQSEvent) (events.SQSEventResponse, error) {
		sw := &crashSwitch{}
		out, err := h.Handle(context.WithValue(ctx, crashSwitchKey{}, sw), batch)
		if sw.crashed.Load() {
			return events.SQSEventResponse{}, errSimulatedCrash
		}
		return out, err
	}
}
