package monitor

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

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
	"github.com/geolocate-aws/geolocate/pkg/shared/tableschema"
)

// CreditSource says where a credit figure comes from, so that every report,
// log line and alarm can say what it rests on.
type CreditSource string

const (
	// SourceSummary: read from the service's credit summary with the key.
	SourceSummary CreditSource = "summary"
	// SourceDeclared: a balance the operator declared (geolocate credits
	// --declare), stored as an anchor.
	SourceDeclared CreditSource = "declared"
	// SourceEstimate: an anchor (the last balance read from the summary, or
	// the declared one) minus the credits the pipeline's records show
	// consumed since; used while the summary takes no API keys.
	SourceEstimate CreditSource = "estimate"
)

// Sort keys of the anchors, in the credit history's partition. "ANCHOR#"
// sorts apart from the readings ("T#..."), so one Query reads both anchors.
const (
	anchorPrefix    = "ANCHOR#"
	declaredSortKey = anchorPrefix + "DECLARED"
	tallySortKey    = anchorPrefix + "TALLY"
)

// Attribute names of the tally the save condition checks.
const (
	attrAt             = "at"
	attrCountedThrough = "counted_through"
)

// Declared is a balance an operator declared at a moment.
type Declared struct {
	Remaining float64
	At        time.Time
	// By says who or what declared it ("geolocate credits --declare").
	By string
}

// tally is the running estimate: the anchor, and what the records showed
// consumed from the anchor up to CountedThrough.
type tally struct {
	AnchorRemaining float64
	AnchorAt        time.Time
	AnchorSource    CreditSource // SourceSummary or SourceDeclared
	CountedThrough  time.Time
	Consumed        int // credits_consumed of the records succeeded since the anchor
	Uncertain       int // calls since the anchor that may have charged (outcome_unknown, malformed_response)
}

type declaredItem struct {
	PK         string  `dynamodbav:"pk"`
	SK         string  `dynamodbav:"sk"`
	Remaining  float64 `dynamodbav:"remaining"`
	At         string  `dynamodbav:"at"`
	DeclaredBy string  `dynamodbav:"declared_by,omitempty"`
}

type tallyItem struct {
	PK             string  `dynamodbav:"pk"`
	SK             string  `dynamodbav:"sk"`
	Remaining      float64 `dynamodbav:"remaining"`
	At             string  `dynamodbav:"at"`
	Source         string  `dynamodbav:"source"`
	CountedThrough string  `dynamodbav:"counted_through"`
	Consumed       int     `dynamodbav:"consumed"`
	Uncertain      int     `dynamodbav:"uncertain_calls"`
}

// Declare stores a balance the operator read elsewhere (the service's web
// application) as the anchor of the estimate, at the moment at. The next
// monitor run starts counting from it. It replaces an earlier declaration.
func (h *History) Declare(ctx context.Context, d Declared) error {
	if err := geoapi.CheckCreditFigure(d.Remaining); err != nil {
		return fmt.Errorf("declare credits: %w", err)
	}
	item := declaredItem{PK: h.partitionKey(), SK: declaredSortKey, Remaining: d.Remaining,
		At: d.At.UTC().Format(historyTimeLayout), DeclaredBy: d.By}
	av, err := attributevalue.MarshalMap(item)
	if err != nil {
		return fmt.Errorf("marshal declared balance: %w", err)
	}
	if _, err := h.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(h.table), Item: av}); err != nil {
		return fmt.Errorf("declare credits in table %s: %w", h.table, err)
	}
	return nil
}

// anchors reads the declared balance and the tally, each nil when absent.
func (h *History) anchors(ctx context.Context) (*Declared, *tally, error) {
	keyCond := expression.Key(tableschema.PartitionKey).Equal(expression.Value(h.partitionKey())).
		And(expression.Key(tableschema.SortKey).BeginsWith(anchorPrefix))
	expr, err := expression.NewBuilder().WithKeyCondition(keyCond).Build()
	if err != nil {
		return nil, nil, fmt.Errorf("build anchor query: %w", err)
	}
	out, err := h.client.Query(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(h.table),
		KeyConditionExpression:    expr.KeyCondition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
		ConsistentRead:            aws.Bool(true),
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read credit anchors of %s in table %s: %w", h.pipeline, h.table, err)
	}
	var (
		declared *Declared
		tl       *tally
	)
	for _, raw := range out.Items {
		switch sk, _ := raw[tableschema.SortKey].(*types.AttributeValueMemberS); {
		case sk == nil:
		case sk.Value == declaredSortKey:
			var it declaredItem
			if attributevalue.UnmarshalMap(raw, &it) != nil {
				continue
			}
			if at, err := time.Parse(historyTimeLayout, it.At); err == nil {
				declared = &Declared{Remaining: it.Remaining, At: at, By: it.DeclaredBy}
			}
		case sk.Value == tallySortKey:
			var it tallyItem
			if attributevalue.UnmarshalMap(raw, &it) != nil {
				continue
			}
			at, err1 := time.Parse(historyTimeLayout, it.At)
			through, err2 := time.Parse(historyTimeLayout, it.CountedThrough)
			if err1 == nil && err2 == nil {
				tl = &tally{AnchorRemaining: it.Remaining, AnchorAt: at, AnchorSource: CreditSource(it.Source),
					CountedThrough: through, Consumed: it.Consumed, Uncertain: it.Uncertain}
			}
		}
	}
	return declared, tl, nil
}

// errTallyMoved: another run saved the tally first; this run's counts
// would be counted twice.
var errTallyMoved = errors.New("the credit tally was moved by another run")

// resetTally starts the tally again from a balance read from the summary:
// the summary already counts every charge up to it.
func (h *History) resetTally(ctx context.Context, remaining float64, at time.Time) error {
	return h.saveTally(ctx, tally{AnchorRemaining: remaining, AnchorAt: at, AnchorSource: SourceSummary, CountedThrough: at}, nil, false)
}

// saveTally writes t. With conditional set, only if the stored tally is
// still prev (nil: none): two overlapping runs must not both add the same
// records.
func (h *History) saveTally(ctx context.Context, t tally, prev *tally, conditional bool) error {
	item := tallyItem{PK: h.partitionKey(), SK: tallySortKey, Remaining: t.AnchorRemaining,
		At: t.AnchorAt.UTC().Format(historyTimeLayout), Source: string(t.AnchorSource),
		CountedThrough: t.CountedThrough.UTC().Format(historyTimeLayout), Consumed: t.Consumed, Uncertain: t.Uncertain}
	av, err := attributevalue.MarshalMap(item)
	if err != nil {
		return fmt.Errorf("marshal credit tally: %w", err)
	}
	in := &dynamodb.PutItemInput{TableName: aws.String(h.table), Item: av}
	if conditional {
		cond := expression.Name(tableschema.PartitionKey).AttributeNotExists()
		if prev != nil {
			cond = expression.Name(attrCountedThrough).Equal(expression.Value(prev.CountedThrough.UTC().Format(historyTimeLayout))).
				And(expression.Name(attrAt).Equal(expression.Value(prev.AnchorAt.UTC().Format(historyTimeLayout))))
		}
		expr, err := expression.NewBuilder().WithCondition(cond).Build()
		if err != nil {
			return fmt.Errorf("build tally condition: %w", err)
		}
		in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues = expr.Condition(), expr.Names(), expr.Values()
	}
	_, err = h.client.PutItem(ctx, in)
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return errTallyMoved
	}
	if err != nil {
		return fmt.Errorf("save credit tally in table %s: %w", h.table, err)
	}
	return nil
}
