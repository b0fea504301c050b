package ledger

import (
	"context"
	"crypto/rand"
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
	now := s.now()
	cond := expression.Name(creditsAttribute).AttributeNotExists().Or(
		expression.Name(creditsAttribute).LessThanEqual(expression.Value(budget - credits)))
	update := expression.Add(expression.Name(creditsAttribute), expression.Value(credits)).
		Set(expression.Name(tableschema.StatusIndexSortKey), expression.Value(formatTimestamp(now))).
		Set(expression.Name(tableschema.TTLAttribute), expression.Value(dayStart.Add(24*time.Hour+s.opts.BudgetTTL).Unix()))
	over, err := s.updateCounter(ctx, day, cond, update)
	if over {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reserve %d credits for %s: %w", credits, day, err)
	}
	return true, nil
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
	under, err := s.updateCounter(ctx, day, cond, update)
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
// once: it is sent as a one-item TransactWriteItems with a client request
// token, so when DynamoDB applied it but the answer was lost, the SDK's retry
// (same token, within DynamoDB's 10-minute idempotency window) is answered
// as the first try was instead of counting the credits again. An
// UpdateItem would count them twice. It reports whether cond failed.
func (s *Store) updateCounter(ctx context.Context, day string, cond expression.ConditionBuilder, update expression.UpdateBuilder) (bool, error) {
	expr, err := expression.NewBuilder().WithCondition(cond).WithUpdate(update).Build()
	if err != nil {
		return false, fmt.Errorf("build expression: %w", err)
	}
	_, err = s.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{
		ClientRequestToken: aws.String(rand.Text()),
		TransactItems: []types.TransactWriteItem{{Update: &types.Update{
			TableName:                 aws.String(s.table),
			Key:                       itemKey(budgetPrefix+day, budgetSortKey),
			ConditionExpression:       expr.Condition(),
			UpdateExpression:          expr.Update(),
			ExpressionAttributeNames:  expr.Names(),
			ExpressionAttributeValues: expr.Values(),
		}}},
	})
	var canceled *types.TransactionCanceledException
	if errors.As(err, &canceled) && len(canceled.CancellationReasons) == 1 &&
		aws.ToString(canceled.CancellationReasons[0].Code) == "ConditionalCheckFailed" {
		return true, nil
	}
	return false, err
}
