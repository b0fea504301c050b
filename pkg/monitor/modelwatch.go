package monitor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/shared/resultevents"
	"github.com/geolocate-aws/geolocate/pkg/shared/tableschema"
)

// DetailTypeModelAvailable is the detail type of the event the monitor
// publishes when a model id appears in the service's list, or when the
// default model (the one that runs when a request names none) changes.
const DetailTypeModelAvailable = "Model Available"

// ModelAvailable is that event's detail.
type ModelAvailable struct {
	// Pipeline is the stack (the metrics' Pipeline dimension): tells this
	// stack's events from another's on a shared bus.
	Pipeline string `json:"pipeline"`
	// ModelID is the new model.
	ModelID string `json:"model_id"`
	// Default is true when ModelID became the default model.
	Default bool `json:"default"`
	// PreviousDefault is the default model before, "" when not known.
	PreviousDefault string `json:"previous_default,omitempty"`
	// Listed is true when ModelID is a new id of the model list.
	Listed bool `json:"listed"`
	// Status is the model's status in the list ("ready", ...), "" when the
	// list does not show it (the default model of a public-only list).
	Status string `json:"status,omitempty"`
}

// EventsAPI is the part of *eventbridge.Client the monitor uses.
type EventsAPI interface {
	PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, optFns ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error)
}

// Key of the item holding what the last run saw of the models, in the
// results table beside the credit history.
const (
	modelsPartitionPrefix = "MODELS#"
	modelsSortKey         = "SEEN"
)

// modelsSeen is what one run saw: the listed ids and the default model.
// It stays a small item whatever the list holds (DynamoDB's limit is 400
// KB: 30,000 ids, or one id of 1 MB, failed its write on every run, and
// the monitor was unhealthy every run): the whole list is kept as its count
// and digest, its ids only when there are at most MaxModelsPublished.
type modelsSeen struct {
	PK string `dynamodbav:"pk"`
	SK string `dynamodbav:"sk"`
	// IDs are the ids compared one by one with the next run's: the whole
	// list, sorted, or only the ones published when Partial.
	IDs     []string `dynamodbav:"ids"`
	Partial bool     `dynamodbav:"partial,omitempty"`
	// Count and Digest are the whole list's: its number of ids and the
	// SHA-256 of the sorted ids, each followed by a newline. An item of
	// an earlier version has neither, and its IDs are the whole list.
	Count  int    `dynamodbav:"count,omitempty"`
	Digest string `dynamodbav:"digest,omitempty"`
	// Default is the model the latest record made without a requested
	// model ran on (the service reports it; the list does not mark it).
	Default string `dynamodbav:"default_model,omitempty"`
	At      string `dynamodbav:"at"`
}

// listDigest is the digest of sorted ids (modelsSeen.Digest).
func listDigest(ids []string) string {
	h := sha256.New()
	for _, id := range ids {
		h.Write([]byte(id))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// digest is the whole list's digest as the item records it, computed for
// an item of an earlier version.
func (s modelsSeen) digest() string {
	if s.Digest == "" && !s.Partial {
		return listDigest(s.IDs)
	}
	return s.Digest
}

// defaultLookback bounds how far back the monitor looks for a record that
// shows the default model, and how many records it reads for it: the
// newest few records are enough, and a pipeline that pins a model has
// none to show.
const (
	defaultLookback = 24 * time.Hour
	defaultRecords  = 20
)

// recentModels is what the newest records show of the models in use: the
// default model (that of the newest record made without a requested
// model, "" when none shows it) and every model they ran, newest first.
type recentModels struct {
	Default string
	Ran     []string
}

// watchModels compares the model list and the default model with what the
// previous run saw, stores what this run saw, and returns the models that
// became available. The first run stores a baseline and announces nothing:
// every listed model would otherwise be "new" on the day of deployment.
// Listed ids are compared only when both lists were whole (at most
// MaxModelsPublished ids): a longer list is an anomaly whose churn is not
// news, and a run after one starts a new baseline of ids.
func (h *History) watchModels(ctx context.Context, reading *ModelsReading, list *modelList, recent recentModels, now time.Time) ([]ModelAvailable, error) {
	// A Query on the one item, not GetItem: the monitor's role reads the
	// table with Query and writes with PutItem only.
	got, err := h.client.Query(ctx, &dynamodb.QueryInput{
		TableName:              aws.String(h.table),
		KeyConditionExpression: aws.String("#pk = :pk AND #sk = :sk"),
		ExpressionAttributeNames: map[string]string{
			"#pk": tableschema.PartitionKey, "#sk": tableschema.SortKey,
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: modelsPartitionPrefix + h.pipeline},
			":sk": &types.AttributeValueMemberS{Value: modelsSortKey},
		},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("read the models seen by the last run: %w", err)
	}
	var prev modelsSeen
	first := len(got.Items) == 0
	if !first {
		if err := attributevalue.UnmarshalMap(got.Items[0], &prev); err != nil {
			return nil, fmt.Errorf("read the models seen by the last run: %w", err)
		}
	}
	current := modelsSeen{PK: modelsPartitionPrefix + h.pipeline, SK: modelsSortKey, At: now.UTC().Format(time.RFC3339),
		Count: len(list.ids), Digest: listDigest(list.ids), Partial: len(list.ids) > MaxModelsPublished, Default: recent.Default}
	if current.Partial {
		for _, m := range reading.Models {
			current.IDs = append(current.IDs, m.ID)
		}
		slices.Sort(current.IDs)
	} else {
		current.IDs = list.ids
	}
	if current.Default == "" {
		// No record shows it this time (none made, or all pinned): the
		// last known default stands.
		current.Default = prev.Default
	}

	var out []ModelAvailable
	if !first {
		if !prev.Partial && !current.Partial {
			for _, id := range current.IDs {
				if !slices.Contains(prev.IDs, id) {
					out = append(out, ModelAvailable{ModelID: id, Listed: true, Status: list.status[id]})
				}
			}
		}
		if current.Default != prev.Default && prev.Default != "" {
			i := slices.IndexFunc(out, func(a ModelAvailable) bool { return a.ModelID == current.Default })
			if i < 0 {
				out = append(out, ModelAvailable{ModelID: current.Default, Status: list.status[current.Default]})
				i = len(out) - 1
			}
			out[i].Default, out[i].PreviousDefault = true, prev.Default
		}
	}
	if first || current.Digest != prev.digest() || current.Default != prev.Default || !slices.Equal(current.IDs, prev.IDs) {
		item, err := attributevalue.MarshalMap(current)
		if err != nil {
			return nil, fmt.Errorf("marshal the models seen: %w", err)
		}
		if _, err := h.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(h.table), Item: item}); err != nil {
			return nil, fmt.Errorf("store the models seen: %w", err)
		}
	}
	return out, nil
}

// recentModels reads the newest succeeded records (at most defaultRecords,
// of the last defaultLookback) for the models in use.
func (h *History) recentModels(ctx context.Context, now time.Time) (recentModels, error) {
	store := ledger.New(h.client, h.table, func(o *ledger.Options) { o.Clock = func() time.Time { return now } })
	records, err := store.Query(ctx, ledger.QueryInput{Status: ledger.StatusSucceeded, Since: now.Add(-defaultLookback), Limit: defaultRecords})
	if err != nil {
		return recentModels{}, fmt.Errorf("read the latest records for the models in use: %w", err)
	}
	var r recentModels
	for _, rec := range records {
		if rec.ModelID == "" {
			continue
		}
		if r.Default == "" && rec.RequestedModelID == "" {
			r.Default = rec.ModelID
		}
		if !slices.Contains(r.Ran, rec.ModelID) {
			r.Ran = append(r.Ran, rec.ModelID)
		}
	}
	return r, nil
}

// announce puts one Model Available event per model on the bus. PutEvents
// reports a failed entry in its output, not as an error, so both are
// checked.
func (m *Monitor) announce(ctx context.Context, models []ModelAvailable, now time.Time) error {
	if m.events == nil || len(models) == 0 {
		return nil
	}
	entries := make([]ebtypes.PutEventsRequestEntry, 0, len(models))
	for _, a := range models {
		a.Pipeline = m.cfg.PipelineName
		detail, err := json.Marshal(a)
		if err != nil {
			return fmt.Errorf("marshal %s event: %w", DetailTypeModelAvailable, err)
		}
		entries = append(entries, ebtypes.PutEventsRequestEntry{
			EventBusName: aws.String(m.eventBus),
			Source:       aws.String(resultevents.Source),
			DetailType:   aws.String(DetailTypeModelAvailable),
			Detail:       aws.String(string(detail)),
			Time:         aws.Time(now),
		})
	}
	var errs []error
	// PutEvents takes at most 10 entries a call.
	for batch := range slices.Chunk(entries, 10) {
		out, err := m.events.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: batch})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for i, e := range out.Entries {
			if e.ErrorCode != nil {
				errs = append(errs, fmt.Errorf("entry %d: %s: %s", i, aws.ToString(e.ErrorCode), aws.ToString(e.ErrorMessage)))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("put %s events on bus %s: %w", DetailTypeModelAvailable, m.eventBus, err)
	}
	return nil
}
