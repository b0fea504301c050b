package predictor

import (
	"context"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
)

// addHistory gives a reprocess run's result the result it replaces
// (Record.Previous: the record of the run the message names, read by its
// key) and the earlier ones (Record.History), just before the record is
// written. A failed read costs the history, never the paid result: the
// record is written without it.
func (inv *invocation) addHistory(ctx context.Context, obj *object, rec *ledger.Record) {
	if obj.Run == "" {
		return
	}
	ref := obj.ref()
	ref.Run = obj.Replaces
	prev, err := inv.h.deps.Ledger.Lookup(ctx, ref)
	if err != nil {
		obj.logger.Warn("replaced result not read: the run's record has no history", "replaces", obj.Replaces, "error", err)
		return
	}
	if prev != nil && prev.Status == ledger.StatusSucceeded {
		ledger.WithHistory(rec, prev)
	}
}
