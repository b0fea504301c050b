package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/geolocate-aws/geolocate/pkg/shared/tableschema"
)

// Attribute names only the feeder writes.
const (
	attrChunks        = "chunks"
	attrListed        = "listed"
	attrSent          = "sent"
	attrListSkipped   = "list_skipped"
	attrListingDone   = "listing_done"
	attrCursorKey     = "cursor_key"
	attrCursorVersion = "cursor_version"
	attrCursorOffset  = "cursor_offset"
	attrFedChunk      = "fed_chunk"
	attrFedOffset     = "fed_offset"
	attrRetry         = "retry"
	attrFedAt         = "fed_at"
	attrFeedCarry     = "feed_carry"
	attrFeedRate      = "feed_rate"
	attrSentMarks     = "sent_marks"
	attrError         = "error"
)

// lease takes job id for a run (owner) until until, when no other run holds
// it (none, or its lease expired at now), and returns the item as leased.
// EventBridge may deliver a scheduled event twice and a slow run may
// overlap the next: the lease makes one run at a time work on a job.
func (s *Store) lease(ctx context.Context, id, owner string, now, until time.Time) (*item, error) {
	free := expression.Name(attrLeaseUntil).AttributeNotExists().Or(expression.Name(attrLeaseUntil).LessThan(expression.Value(now.UnixMilli())))
	cond := expression.Name(tableschema.PartitionKey).AttributeExists().And(free)
	update := expression.Set(expression.Name(attrLeaseUntil), expression.Value(until.UnixMilli())).
		Set(expression.Name(attrLeaseOwner), expression.Value(owner))
	out, err := s.updateItem(ctx, id, cond, update, types.ReturnValueAllNew)
	if err != nil {
		return nil, err
	}
	var it item
	if err := attributevalue.UnmarshalMap(out.Attributes, &it); err != nil {
		return nil, fmt.Errorf("decode job %s: %w", id, err)
	}
	return &it, nil
}

// release ends owner's lease on job id. A lease lost meanwhile is the
// other run's to end.
func (s *Store) release(ctx context.Context, id, owner string) {
	cond := expression.Name(attrLeaseOwner).Equal(expression.Value(owner))
	_, _ = s.updateItem(ctx, id, cond, expression.Remove(expression.Name(attrLeaseUntil)).Remove(expression.Name(attrLeaseOwner)), types.ReturnValueNone)
}

// update changes job id when owner holds its lease (and cond holds, when
// given); errLeaseLost otherwise.
func (s *Store) update(ctx context.Context, id, owner string, cond *expression.ConditionBuilder, update expression.UpdateBuilder) error {
	c := expression.Name(attrLeaseOwner).Equal(expression.Value(owner))
	if cond != nil {
		c = c.And(*cond)
	}
	_, err := s.updateItem(ctx, id, c, update, types.ReturnValueNone)
	return err
}

// updateItem runs one conditional update of job id's item; a failed
// condition is errLeaseLost.
func (s *Store) updateItem(ctx context.Context, id string, cond expression.ConditionBuilder, update expression.UpdateBuilder,
	ret types.ReturnValue) (*dynamodb.UpdateItemOutput, error) {
	expr, err := expression.NewBuilder().WithCondition(cond).WithUpdate(update).Build()
	if err != nil {
		return nil, err
	}
	out, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.table, Key: JobKey(id), ConditionExpression: expr.Condition(), UpdateExpression: expr.Update(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(), ReturnValues: ret,
	})
	var failed *types.ConditionalCheckFailedException
	if errors.As(err, &failed) {
		return nil, errLeaseLost
	}
	if err != nil {
		return nil, fmt.Errorf("update job %s: %w", id, err)
	}
	return out, nil
}

// setError stores the run's error on the job ("" clears it).
func (s *Store) setError(ctx context.Context, id, owner string, runErr error) error {
	u := expression.Remove(expression.Name(attrError))
	if runErr != nil {
		u = expression.Set(expression.Name(attrError), expression.Value(runErr.Error()))
	}
	return s.update(ctx, id, owner, nil, u)
}

// setHeld records why feeding waits.
func (s *Store) setHeld(ctx context.Context, id, owner, why string) error {
	return s.update(ctx, id, owner, nil, setOrRemove(expression.UpdateBuilder{}, attrHeld, why))
}

// finish marks job id done, unless it was paused or cancelled meanwhile.
func (s *Store) finish(ctx context.Context, id, owner string, now time.Time) error {
	cond := expression.Name(AttrState).In(expression.Value(StateListing), expression.Value(StateRunning))
	return s.update(ctx, id, owner, &cond, expression.Set(expression.Name(AttrState), expression.Value(StateDone)).
		Set(expression.Name(AttrUpdated), expression.Value(now)).Remove(expression.Name(attrHeld)))
}

// recordBatch records one sent batch on the job, conditioned on the feeding
// position the batch started from (so that no position is counted twice),
// and updates it to match: the position moves past the batch's new
// entries, refused entries join the retry list, resent ones leave theirs.
func (s *Store) recordBatch(ctx context.Context, it *item, owner string, now time.Time, batch []pending, failed map[int]bool, rep *Report) error {
	retry := map[string]bool{}
	for _, p := range it.Retry {
		retry[p] = true
	}
	var sent int64
	var undropped []string
	chunk, offset := it.FedChunk, it.FedOffset
	for i, p := range batch {
		if !p.resend {
			chunk, offset = p.nextChunk, p.nextOffset
		}
		if failed[i] {
			retry[p.pos] = true
			continue
		}
		// A dropped message was counted sent when first fed (and in
		// flight no more while dropped): sent again, it is in flight
		// again, not one more sent.
		switch {
		case retry[p.pos]:
			delete(retry, p.pos)
			sent++
		case p.resend:
			undropped = append(undropped, p.pos)
		default:
			sent++
		}
	}
	retryList := make([]string, 0, len(retry))
	for _, p := range it.Retry { // keep the list's order, new ones last
		if retry[p] {
			retryList = append(retryList, p)
			delete(retry, p)
		}
	}
	for _, p := range batch {
		if retry[p.pos] {
			retryList = append(retryList, p.pos)
			delete(retry, p.pos)
		}
	}
	cond := expression.Name(attrFedChunk).Equal(expression.Value(it.FedChunk)).
		And(expression.Name(attrFedOffset).Equal(expression.Value(it.FedOffset)))
	u := expression.Set(expression.Name(attrFedChunk), expression.Value(chunk)).
		Set(expression.Name(attrFedOffset), expression.Value(offset)).
		Add(expression.Name(attrSent), expression.Value(sent)).
		Set(expression.Name(AttrUpdated), expression.Value(now))
	if len(retryList) > 0 {
		u = u.Set(expression.Name(attrRetry), expression.Value(retryList))
	} else {
		u = u.Remove(expression.Name(attrRetry))
	}
	if len(undropped) > 0 {
		u = u.Delete(expression.Name(AttrDropped), expression.Value(&types.AttributeValueMemberSS{Value: undropped}))
	}
	if err := s.update(ctx, it.ID, owner, &cond, u); err != nil {
		return err
	}
	it.FedChunk, it.FedOffset, it.Sent, it.Retry = chunk, offset, it.Sent+sent, retryList
	it.Dropped = without(it.Dropped, undropped)
	rep.Sent += sent
	return nil
}

func without(list, drop []string) []string {
	if len(drop) == 0 {
		return list
	}
	gone := map[string]bool{}
	for _, d := range drop {
		gone[d] = true
	}
	var out []string
	for _, p := range list {
		if !gone[p] {
			out = append(out, p)
		}
	}
	return out
}

// fed records the end of a run's feeding: when it fed, at what rate (the
// ETA's), the fraction of a
// message it owes the next run, the sent mark settling reads (one per
// markEvery at most; those older than the newest one past every horizon
// are dropped) and no hold.
func (s *Store) fed(ctx context.Context, it *item, owner string, now time.Time, rate, carry float64, horizon time.Duration) error {
	marks := it.SentMarks
	if n := len(marks); n == 0 || now.Unix()-marks[n-1].At >= int64(markEvery/time.Second) {
		marks = append(marks, sentMark{At: now.Unix(), Sent: it.Sent})
	}
	cutoff := now.Add(-horizon).Unix()
	first := 0
	for i, m := range marks {
		if m.At <= cutoff {
			first = i
		}
	}
	marks = marks[first:]
	av, err := attributevalue.Marshal(marks)
	if err != nil {
		return err
	}
	u := expression.Set(expression.Name(attrFedAt), expression.Value(now)).
		Set(expression.Name(attrFeedCarry), expression.Value(carry)).
		Set(expression.Name(attrFeedRate), expression.Value(rate)).
		Set(expression.Name(attrSentMarks), expression.Value(av)).
		Remove(expression.Name(attrHeld))
	if err := s.update(ctx, it.ID, owner, nil, u); err != nil {
		return err
	}
	it.FedAt, it.FeedCarry, it.FeedRate, it.SentMarks, it.Held = now, carry, rate, marks, ""
	return nil
}

// asErr is errors.As, for the conditional-check failures every update
// tells apart.
func asErr[T error](err error, target *T) bool { return err != nil && errors.As(err, target) }
