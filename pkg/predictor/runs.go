package predictor

import (
	"context"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
)

// addHistory gives a reprocess run's result the result it replaces as the
// object version's latest (Record.Previous) and the earlier ones
// (Record.History), read just before the record is written. A failed read
// costs the history, never the paid result: the record is written without
// it.
func (inv *invocation) addHistory(ctx context.Context, obj *object, rec *ledger.Record) {
	if obj.Run == "" {
		return
	}
	prev, err := inv.h.deps.Ledger.LatestResult(ctx, obj.ref())
	if err != nil {
		obj.logger.Warn("earlier result not read: the run's record has no history", "run", obj.Run, "error", err)
		return
	}
	ledger.WithHistory(rec, prev)
}
