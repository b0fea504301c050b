package monitor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
)

// maybeChargedCodes are the failure codes of records whose call may have
// been charged (geoapi.MaybeCharged): ledger.ErrorCodeOutcomeUnknown and the
// predictor's CodeMalformedResponse, named here so that the monitor does
// not link the predictor (monitor_test checks they agree).
var maybeChargedCodes = []string{ledger.ErrorCodeOutcomeUnknown, "malformed_response"}

// consumption is what the records show between two moments.
type consumption struct {
	credits   int // credits_consumed of the succeeded records
	uncertain int // calls that may have charged, of unknown cost
}

// consumedBetween reads the records finalised in (from, to] through the
// results table's by-status index. A record is final when written, so a
// record is counted in exactly one such interval.
func (h *History) consumedBetween(ctx context.Context, from, to time.Time) (consumption, error) {
	// The ledger queries one index partition per day, back from its clock's
	// day to from's.
	store := ledger.New(h.client, h.table, func(o *ledger.Options) { o.Clock = func() time.Time { return to } })
	in := func(r ledger.Record) bool { return r.UpdatedAt.After(from) && !r.UpdatedAt.After(to) }
	var c consumption
	succeeded, err := store.Query(ctx, ledger.QueryInput{Status: ledger.StatusSucceeded, Since: from})
	if err != nil {
		return c, fmt.Errorf("read the records succeeded since %s: %w", from.UTC().Format(time.RFC3339), err)
	}
	for _, r := range succeeded {
		if in(r) {
			c.credits += r.CreditsConsumed
		}
	}
	failed, err := store.Query(ctx, ledger.QueryInput{Status: ledger.StatusFailed, Since: from})
	if err != nil {
		return c, fmt.Errorf("read the records failed since %s: %w", from.UTC().Format(time.RFC3339), err)
	}
	for _, r := range failed {
		if in(r) && slices.Contains(maybeChargedCodes, r.ErrorCode) {
			c.uncertain++
		}
	}
	return c, nil
}

// uncertainCost is what a call that may have charged is counted at: the
// cost of the model the pipeline calls, the dearest (3) when a model is
// pinned, since its type is not known here (the predictor's ExpectedCost).
func (m *Monitor) uncertainCost() int {
	if m.cfg.ModelID == "" {
		return 1
	}
	return 3
}

// estimateCredits estimates the balance while the credit summary takes no
// API keys: the newest anchor (the last balance read from the summary, or a
// declared one) minus the credits the records show consumed since, and the
// calls that may have charged at their cost. It returns a nil reading and a
// note when no balance is known at all.
func (m *Monitor) estimateCredits(ctx context.Context, now time.Time) (*CreditsReading, string, error) {
	declared, saved, err := m.history.anchors(ctx)
	if err != nil {
		return nil, "", err
	}
	tl := saved
	if declared != nil && (tl == nil || declared.At.After(tl.AnchorAt)) {
		tl = &tally{AnchorRemaining: declared.Remaining, AnchorAt: declared.At, AnchorSource: SourceDeclared, CountedThrough: declared.At}
	}
	if tl == nil {
		return nil, "the service does not let API keys read the credit summary, and no balance is known to estimate from: " +
			"declare the balance the service's web application shows (geolocate credits --declare N --stack NAME); " +
			"until then only OutOfCredits (the service's 402 answers) watches the credits", nil
	}
	// Records written in the last RecordSettle may not be in the index
	// yet; they are counted by the next run.
	upto := now.Add(-m.cfg.RecordSettle)
	if upto.After(tl.CountedThrough) {
		c, err := m.history.consumedBetween(ctx, tl.CountedThrough, upto)
		if err != nil {
			return nil, "", err
		}
		next := *tl
		next.Consumed += c.credits
		next.Uncertain += c.uncertain
		next.CountedThrough = upto
		if err := m.history.saveTally(ctx, next, saved, true); err != nil && !errors.Is(err, errTallyMoved) {
			return nil, "", err
		}
		// Moved by an overlapping run: it counted the same records, so the
		// figure is the same; the next run reads its tally.
		tl = &next
	}
	reading := &CreditsReading{
		Remaining:       tl.AnchorRemaining - float64(tl.Consumed) - float64(tl.Uncertain*m.uncertainCost()),
		RemainingPath:   "estimate",
		Source:          SourceEstimate,
		AnchorSource:    tl.AnchorSource,
		AnchorAt:        tl.AnchorAt,
		AnchorRemaining: &tl.AnchorRemaining,
		ConsumedSince:   &tl.Consumed,
		UncertainCalls:  &tl.Uncertain,
	}
	anchor := map[CreditSource]string{SourceSummary: "the last balance read from the summary", SourceDeclared: "the balance declared"}[tl.AnchorSource]
	note := fmt.Sprintf("the service does not let API keys read the credit summary (a known state, not a failure): "+
		"credits are estimated from %s at %s (%g) minus %d credits the pipeline's records show consumed since",
		anchor, tl.AnchorAt.UTC().Format(time.RFC3339), tl.AnchorRemaining, tl.Consumed)
	if tl.Uncertain > 0 {
		note += fmt.Sprintf(" and %d calls that may have charged, counted at %d each", tl.Uncertain, m.uncertainCost())
	}
	return reading, note, nil
}
