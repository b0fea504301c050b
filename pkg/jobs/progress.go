package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/geolocate-aws/geolocate/pkg/shared/tableschema"
)

// Outcome is how an object of a job ended, as the predictor counts it.
type Outcome int

const (
	OutcomeDone    Outcome = iota // recorded (succeeded: a call, or an answer reused)
	OutcomeFailed                 // recorded failed, or dead-lettered
	OutcomeSkipped                // nothing to do: already done in the run, rejected before a call
)

// attr is the counter Outcome adds to.
func (o Outcome) attr() string {
	switch o {
	case OutcomeFailed:
		return AttrFailed
	case OutcomeSkipped:
		return AttrSkipped
	}
	return AttrDone
}

// AddEnd counts one object of job id as ended with o, credits spent on it,
// at now: the predictor's ADD when an object ends (atomic, so concurrent
// instances never lose a count). A job that is gone (deleted by hand) is
// not recreated.
func (s *Store) AddEnd(ctx context.Context, id string, o Outcome, credits int, now time.Time) error {
	u := expression.Add(expression.Name(o.attr()), expression.Value(1)).
		Set(expression.Name(AttrLastProgress), expression.Value(now.UTC()))
	if credits > 0 {
		u = u.Add(expression.Name(AttrCreditsSpent), expression.Value(credits))
	}
	return s.counterUpdate(ctx, id, u)
}

// Drop records that the predictor dropped the message at pos (a
// jobmsg.Object's Pos) while job id was paused: the feeder sends it again
// once the job resumes.
func (s *Store) Drop(ctx context.Context, id, pos string) error {
	if _, _, err := parsePosition(pos); err != nil {
		return err
	}
	return s.counterUpdate(ctx, id, expression.Add(expression.Name(AttrDropped), expression.Value(&types.AttributeValueMemberSS{Value: []string{pos}})))
}

func (s *Store) counterUpdate(ctx context.Context, id string, u expression.UpdateBuilder) error {
	expr, err := expression.NewBuilder().WithCondition(expression.Name(tableschema.PartitionKey).AttributeExists()).WithUpdate(u).Build()
	if err != nil {
		return err
	}
	_, err = s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.table, Key: JobKey(id), ConditionExpression: expr.Condition(), UpdateExpression: expr.Update(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	var failed *types.ConditionalCheckFailedException
	if asErr(err, &failed) {
		return fmt.Errorf("job %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("count job %s's progress: %w", id, err)
	}
	return nil
}

// State reads job id's state alone (an eventually consistent read of one
// attribute: the predictor asks it of every job message, cached briefly).
func (s *Store) State(ctx context.Context, id string) (State, error) {
	expr, err := expression.NewBuilder().WithProjection(expression.NamesList(expression.Name(AttrState))).Build()
	if err != nil {
		return "", err
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: JobKey(id),
		ProjectionExpression: expr.Projection(), ExpressionAttributeNames: expr.Names(), ConsistentRead: aws.Bool(false)})
	if err != nil {
		return "", fmt.Errorf("read job %s: %w", id, err)
	}
	v, ok := out.Item[AttrState].(*types.AttributeValueMemberS)
	if !ok {
		return "", fmt.Errorf("job %s: %w", id, ErrNotFound)
	}
	return State(v.Value), nil
}
