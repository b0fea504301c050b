package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/geolocate-aws/geolocate/pkg/shared/tableschema"
)

// The daily credit counter is one item per UTC day: pk "BUDGET#<day>",
// sk "DAY", holding the credits reserved so far in creditsAttribute.
const (
	budgetPrefix     = "BUDGET#"
	budgetSortKey    = "DAY"
	creditsAttribute = "credits"
)

// ReserveCredits atomically adds credits to day's counter (day as from Day:
// YYYY-MM-DD) if the total stays within budget, and reports whether it did.
// Reserve before a paid call with the model's cost; give back what was not
// charged with ReleaseCredits.
func (s *Store) ReserveCredits(ctx context.Context, day string, credits, budget int) (bool, error) {
	dayStart, err := parseDay(day)
	if err != nil {
		return false, fmt.Errorf("reserve credits: %w", err)
	}
	if credits <= 0 {
		return false, fmt.Errorf("reserve credits for %s: credits must be positive, got %d", day, credits)
	}
	if credits > budget {
		return false, nil
	}
	cond := expression.Name(creditsAttribute).AttributeNotExists().Or(
		expression.Name(creditsAttribute).LessThanEqual(expression.Value(budget - credits)))
	over, err := s.updateCounter(ctx, day, &cond, s.addCredits(dayStart, credits))
	if over {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reserve %d credits for %s: %w", credits, day, err)
	}
	return true, nil
}

// RecordOverspend adds to day's counter credits a call charged beyond what
// was reserved for it (a model dearer than expected), whatever the budget:
// they are spent, and the counter must say so for later reservations to
// see them. It is the only write that may take the counter over the budget.
func (s *Store) RecordOverspend(ctx context.Context, day string, credits int) error {
	dayStart, err := parseDay(day)
	if err != nil {
		return fmt.Errorf("record overspend: %w", err)
	}
	if credits <= 0 {
		return fmt.Errorf("record overspend for %s: credits must be positive, got %d", day, credits)
	}
	if _, err := s.updateCounter(ctx, day, nil, s.addCredits(dayStart, credits)); err != nil {
		return fmt.Errorf("record %d credits overspent on %s: %w", credits, day, err)
	}
	return nil
}

// addCredits is the update that adds credits to the counter of the day
// starting at dayStart, and keeps it BudgetTTL after the day.
func (s *Store) addCredits(dayStart time.Time, credits int) expression.UpdateBuilder {
	return expression.Add(expression.Name(creditsAttribute), expression.Value(credits)).
		Set(expression.Name(tableschema.StatusIndexSortKey), expression.Value(formatTimestamp(s.now()))).
		Set(expression.Name(tableschema.TTLAttribute), expression.Value(dayStart.Add(24*time.Hour+s.opts.BudgetTTL).Unix()))
}

// ReleaseCredits gives back credits reserved on day that were not charged
// (the call failed before charging, or charged less than reserved). It never
// takes the counter below zero: asking for more than it holds returns
// ErrReleaseExceedsReserved and changes nothing.
func (s *Store) ReleaseCredits(ctx context.Context, day string, credits int) error {
	if _, err := parseDay(day); err != nil {
		return fmt.Errorf("release credits: %w", err)
	}
	if credits <= 0 {
		return fmt.Errorf("release credits for %s: credits must be positive, got %d", day, credits)
	}
	cond := expression.Name(creditsAttribute).GreaterThanEqual(expression.Value(credits))
	update := expression.Add(expression.Name(creditsAttribute), expression.Value(-credits)).
		Set(expression.Name(tableschema.StatusIndexSortKey), expression.Value(formatTimestamp(s.now())))
	under, err := s.updateCounter(ctx, day, &cond, update)
	if under {
		return fmt.Errorf("release %d credits for %s: %w", credits, day, ErrReleaseExceedsReserved)
	}
	if err != nil {
		return fmt.Errorf("release %d credits for %s: %w", credits, day, err)
	}
	return nil
}

// CreditsReserved returns day's counter (consistent read); 0 when nothing
// was reserved.
func (s *Store) CreditsReserved(ctx context.Context, day string) (int, error) {
	if _, err := parseDay(day); err != nil {
		return 0, fmt.Errorf("credits reserved: %w", err)
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.table),
		Key:            itemKey(budgetPrefix+day, budgetSortKey),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return 0, fmt.Errorf("credits reserved for %s: %w", day, err)
	}
	var counter struct {
		Credits int `dynamodbav:"credits"`
	}
	if err := attributevalue.UnmarshalMap(out.Item, &counter); err != nil {
		return 0, fmt.Errorf("credits reserved for %s: decode: %w", day, err)
	}
	return counter.Credits, nil
}

func parseDay(day string) (time.Time, error) {
	t, err := time.Parse(dayLayout, day)
	if err != nil {
		return time.Time{}, errors.New("day must be YYYY-MM-DD, got " + fmt.Sprintf("%q", day))
	}
	return t, nil
}

// updateCounter applies one conditional update to day's counter, at most
// once (see updateOnce). It reports whether cond (none when nil) failed.
func (s *Store) updateCounter(ctx context.Context, day string, cond *expression.ConditionBuilder, update expression.UpdateBuilder) (bool, error) {
	return s.updateOnce(ctx, itemKey(budgetPrefix+day, budgetSortKey), cond, update)
}

// updateOnce applies one conditional update to the item at key, at most
// once: it is sent as a one-item TransactWriteItems with a client request
// token, so when DynamoDB applied it but the answer was lost, the SDK's retry
// (same token, within DynamoDB's 10-minute idempotency window) is answered
// as the first try was instead of counting the credits again. An
// UpdateItem would count them twice. A cancelled transaction is sent
// again when its cancellation says another transaction or throttling was
// in the way (transactWrite). It reports whether cond (none when nil)
// failed.
func (s *Store) updateOnce(ctx context.Context, key map[string]types.AttributeValue, cond *expression.ConditionBuilder, update expression.UpdateBuilder) (bool, error) {
	b := expression.NewBuilder().WithUpdate(update)
	if cond != nil {
		b = b.WithCondition(*cond)
	}
	expr, err := b.Build()
	if err != nil {
		return false, fmt.Errorf("build expression: %w", err)
	}
	return s.transactWrite(ctx, types.TransactWriteItem{Update: &types.Update{
		TableName:                 aws.String(s.table),
		Key:                       key,
		ConditionExpression:       expr.Condition(),
		UpdateExpression:          expr.Update(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
	}})
}
