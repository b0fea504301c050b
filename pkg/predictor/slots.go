package predictor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/pacer"
)

// Lambda bills an invocation for every millisecond it runs, sleeping
// included. So an invocation waits for a call slot only when the slot is at
// most MaxSlotWait away (and leaves MinCallTime before the call deadline);
// on the message's last allowed receive only, it waits as long as the
// deadline allows, rather than send it to the dead-letter queue.
// A slot further away is taken all the same, so the object keeps its place
// in the shared schedule, and held: the claim is given back with the slot
// on the record (ledger.Release) and the message goes back to the queue,
// hidden until HeldSlotLead before the slot (whole seconds, rounded down,
// so it becomes visible between the lead and the lead plus a second
// early). The delivery that claims it next finds the slot on the record
// and waits for it, up to MaxSlotWait plus the lead (further, it holds it
// again), and calls then, unless a 429's pause has since reached past it
// (Pacer.Valid) or it came back too late (lateAllowed), when it takes a
// new one. The lead is what keeps held calls on their slots: one made late
// leaves the next slot's call less than the spacing after it. An object
// normally costs two receives this way, however long the wait, far below
// the queue's maxReceiveCount.

// returnUntil stops an object's work in this invocation because its next
// call cannot be made within MaxSlotWait: its message goes back to the
// queue until at, holding slot (the call slot taken for it) when set.
type returnUntil struct {
	at   time.Time
	slot time.Time // zero: no slot held
}

func (e *returnUntil) Error() string {
	return fmt.Sprintf("the next call is due at %s, beyond this invocation's wait: returned to the queue until then",
		e.at.UTC().Format(time.RFC3339Nano))
}

// Unwrap makes a returnUntil a rate wait: nothing was charged.
func (e *returnUntil) Unwrap() error { return errRateWait }

// slotFor is the object's call slot: the one its record holds from an
// earlier delivery when it is still good (held true), else a new one, as
// far ahead as the message could be held for it.
func (inv *invocation) slotFor(ctx context.Context, obj *object, claim *ledger.Claim) (slot time.Time, held bool, err error) {
	if held := heldSlot(claim); !held.IsZero() {
		ok, err := inv.h.deps.Pacer.Valid(ctx, held)
		// Read after Valid, whose read of the schedule takes time too: the
		// call leaves no earlier than this.
		late, allowed := inv.now().Sub(held), inv.lateAllowed()
		switch {
		case err != nil:
			obj.logger.Warn("held call slot given up: the schedule could not be read", "error", err)
		case !ok:
			obj.logger.Info("held call slot given up: a pause the service asked for reaches past it")
		case late > allowed:
			// A call this late would crowd the next slot's.
			obj.logger.Info("held call slot given up: the message came back too late for it",
				"late_ms", late.Milliseconds(), "allowed_ms", allowed.Milliseconds())
		default:
			return held, true, nil
		}
	}
	slot, err = inv.reserveSlot(ctx, inv.holdHorizon())
	return slot, false, err
}

// lateAllowed is how late a held slot may still be called in:
// HeldSlotLateness, or less when the pacer tells that a call later than
// that would crowd the next slot's (a strict token bucket).
func (inv *invocation) lateAllowed() time.Duration {
	allowed := inv.h.opts.HeldSlotLateness
	if p, ok := inv.h.deps.Pacer.(lateAllowancer); ok {
		if a, ok := p.LateAllowance(); ok {
			allowed = min(allowed, a)
		}
	}
	return allowed
}

// heldSlot is the slot the claimed record holds, zero when none.
func heldSlot(claim *ledger.Claim) time.Time {
	if claim == nil || claim.Record == nil {
		return time.Time{}
	}
	return claim.Record.SlotAt
}

// holdHorizon is the furthest ahead a slot can be held for a message of
// this invocation: as long as SQS can still hide it (visibilityLeft).
func (inv *invocation) holdHorizon() time.Duration {
	return visibilityLeft(inv.now().Sub(inv.start))
}

// soonEnough reports whether obj's call at slot can be made in this
// invocation: at most slotWait away, and leaving MinCallTime before the
// call deadline.
func (inv *invocation) soonEnough(obj *object, slot time.Time, held bool) bool {
	if slot.Sub(inv.now()) > inv.slotWait(obj, held) {
		return false
	}
	dl, ok := inv.callDeadline()
	return !ok || !slot.Add(inv.h.opts.MinCallTime).After(dl)
}

// slotWait is the longest obj's invocation waits for its slot: maxWait,
// plus HeldSlotLead for a held slot, whose message was made visible that
// much early so that it is delivered in time.
func (inv *invocation) slotWait(obj *object, held bool) time.Duration {
	if held {
		return inv.maxWait(obj) + inv.h.opts.HeldSlotLead
	}
	return inv.maxWait(obj)
}

// maxWait is the longest obj's invocation waits for a slot or a retry:
// MaxSlotWait, except on its message's last allowed receive, where the
// invocation waits as long as its deadline allows: returned now, the
// message would go to the dead-letter queue instead of coming back.
func (inv *invocation) maxWait(obj *object) time.Duration {
	if inv.lastReceive(obj.msg) {
		return maxVisibility
	}
	return inv.h.opts.MaxSlotWait
}

// hold gives the claim back holding slot and returns the message to the
// queue until HeldSlotLead before it (heldFor).
func (inv *invocation) hold(ctx context.Context, obj *object, claim *ledger.Claim, slot time.Time) outcome {
	wait := max(slot.Sub(inv.now()), 0)
	obj.logger.Info("call slot beyond this invocation's wait: message returned until it, holding the slot",
		"wait_ms", wait.Milliseconds())
	detail := fmt.Sprintf("holds the call slot at %s: its message is back in the queue until then", slot.UTC().Format(time.RFC3339Nano))
	return inv.giveBack(ctx, obj, claim, inv.heldFor(retryRateWait, slot), retryRateWait, detail, slot)
}

// heldFor is the retry (for reason) of a message holding slot: hidden until
// HeldSlotLead before it, so that its next delivery comes before the slot.
// delayMessage rounds that down to whole seconds, as SQS counts them
// (ChangeMessageVisibility API reference: VisibilityTimeout, "The new value
// for the message's visibility timeout (in seconds)", an Integer): the
// message turns visible up to a second earlier still, never later.
func (inv *invocation) heldFor(reason string, slot time.Time) outcome {
	return retryLater(reason).after(slot.Sub(inv.now()) - inv.h.opts.HeldSlotLead)
}

// noSlot is the outcome of an object for which the pacer had no slot at
// all: the schedule is full beyond the horizon (a backlog of more than 12
// hours), or could not be written. The first comes back when the schedule
// has moved on by the horizon; the second after the queue's visibility
// timeout.
func (inv *invocation) noSlot(err error) outcome {
	o := retryLater(retryRateWait)
	if errors.Is(err, pacer.ErrNoSlot) {
		o = o.after(inv.holdHorizon())
	}
	return o
}

// paceRetry is the client's wait before a retry: the backoff it chose (the
// service's requested delay capped at MaxServerDelay), then a slot from the
// pacer. A retry after a 429 or a free 5xx is a request like any other:
// unpaced, the retries of several instances bunch up and draw more 429s.
// A backoff longer than MaxSlotWait is not waited for here: the object's
// message goes back to the queue until it is over (returnUntil), holding
// the first slot after it when the pacer grants one that late (after a
// 429 the shared schedule has moved past it). A retry that would not get
// MinCallTime before the call deadline is not started.
func (inv *invocation) paceRetry(ctx context.Context, obj *object, backoff time.Duration) error {
	backoff = min(backoff, inv.h.cfg.MaxServerDelay)
	if backoff > inv.maxWait(obj) {
		earliest := inv.now().Add(backoff)
		slot, err := inv.reserveSlot(ctx, inv.holdHorizon())
		if err != nil || slot.Before(earliest) {
			return &returnUntil{at: earliest}
		}
		return &returnUntil{at: slot, slot: slot}
	}
	if dl, ok := inv.callDeadline(); ok && dl.Sub(inv.now()) < backoff+inv.h.opts.MinCallTime {
		return errNoTimeToRetry
	}
	if err := inv.sleep(ctx, backoff); err != nil {
		return err
	}
	return inv.waitForRate(ctx, obj)
}

// waitForRate takes a call slot and waits for it, or returns the object's
// message until it (returnUntil) when it is not soon enough.
func (inv *invocation) waitForRate(ctx context.Context, obj *object) error {
	slot, err := inv.reserveSlot(ctx, inv.holdHorizon())
	if err != nil {
		return err
	}
	if !inv.soonEnough(obj, slot, false) {
		return &returnUntil{at: slot, slot: slot}
	}
	return inv.sleepUntil(ctx, slot)
}

// reserveSlot takes the next call slot from the pacer, at most within
// from now, and returns when it starts, on the handler's clock.
func (inv *invocation) reserveSlot(ctx context.Context, within time.Duration) (time.Time, error) {
	delay, err := inv.h.deps.Pacer.Reserve(ctx, within)
	if err != nil {
		return time.Time{}, errors.Join(errRateWait, err)
	}
	return inv.now().Add(delay), nil
}

// sleepUntil waits for t on the handler's clock.
func (inv *invocation) sleepUntil(ctx context.Context, t time.Time) error {
	if err := inv.sleep(ctx, t.Sub(inv.now())); err != nil {
		return errors.Join(errRateWait, err)
	}
	return nil
}
