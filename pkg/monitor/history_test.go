package monitor

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
)

func TestHistoryPutAndSince(t *testing.T) {
	client, table := awspartstest.DynamoDB(t)
	ctx := context.Background()
	h := NewHistory(codeClient(client), table, "test", 14*24*time.Hour)
	other := NewHistory(codeClient(client), table, "other", 0)

	// Whole seconds and fractions mixed: the sort key must order them by time.
	at := []time.Time{
		t0.Add(-25 * time.Hour), // outside the window
		t0,
		t0.Add(500 * time.Millisecond),
		t0.Add(time.Second),
		t0.Add(time.Hour),
		t0.Add(2 * time.Hour), // after "to"
	}
	for i, a := range at {
		if err := h.Put(ctx, Reading{At: a, Remaining: float64(1000 - i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := other.Put(ctx, Reading{At: t0, Remaining: 7}); err != nil {
		t.Fatal(err)
	}

	to := t0.Add(time.Hour)
	got, err := h.Since(ctx, to.Add(-24*time.Hour), to)
	if err != nil {
		t.Fatal(err)
	}
	want := []Reading{{at[1], 999}, {at[2], 998}, {at[3], 997}, {at[4], 996}}
	if len(got) != len(want) {
		t.Fatalf("got %d readings %v, want %v", len(got), got, want)
	}
	for i := range want {
		if !got[i].At.Equal(want[i].At) || got[i].Remaining != want[i].Remaining {
			t.Errorf("reading %d = %v, want %v", i, got[i], want[i])
		}
	}

	// The stored item: key layout and TTL in Unix seconds.
	item, err := client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(table),
		Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "CREDITS#test"},
			"sk": &types.AttributeValueMemberS{Value: "T#2026-11-22T10:00:00.500000000Z"},
		},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		t.Fatal(err)
	}
	if item.Item == nil {
		t.Fatal("history item not found under the documented key")
	}
	exp, ok := item.Item["expires_at"].(*types.AttributeValueMemberN)
	wantExp := strconv.FormatInt(at[2].Add(14*24*time.Hour).Unix(), 10)
	if !ok || exp.Value != wantExp {
		t.Errorf("expires_at = %v, want %s", item.Item["expires_at"], wantExp)
	}
	if rem, ok := item.Item["remaining"].(*types.AttributeValueMemberN); !ok || rem.Value != "998" {
		t.Errorf("remaining = %v", item.Item["remaining"])
	}

	// No TTL: no expires_at attribute at all.
	item, err = client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(table),
		Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "CREDITS#other"},
			"sk": &types.AttributeValueMemberS{Value: historySortKey(t0)},
		},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, has := item.Item["expires_at"]; has {
		t.Errorf("item without TTL has expires_at: %v", item.Item)
	}
}

func TestHistorySkipsExpiredReadings(t *testing.T) {
	client, table := awspartstest.DynamoDB(t)
	ctx := context.Background()
	h := NewHistory(codeClient(client), table, "ttl", time.Hour)
	if err := h.Put(ctx, Reading{At: t0, Remaining: 10}); err != nil {
		t.Fatal(err)
	}
	if err := h.Put(ctx, Reading{At: t0.Add(90 * time.Minute), Remaining: 9}); err != nil {
		t.Fatal(err)
	}
	// DynamoDB deletes expired items lazily; the first one is past its TTL.
	got, err := h.Since(ctx, t0.Add(-time.Hour), t0.Add(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Remaining != 9 {
		t.Errorf("got %v, want only the unexpired reading", got)
	}
}

func TestHistoryErrorsNameTheTable(t *testing.T) {
	client, _ := awspartstest.DynamoDB(t)
	h := NewHistory(codeClient(client), "no-such-table", "p", time.Hour)
	err := h.Put(context.Background(), Reading{At: t0, Remaining: 1})
	if err == nil || !strings.Contains(err.Error(), "no-such-table") {
		t.Errorf("put error = %v", err)
	}
	_, err = h.Since(context.Background(), t0.Add(-time.Hour), t0)
	if err == nil || !strings.Contains(err.Error(), "no-such-table") {
		t.Errorf("query error = %v", err)
	}
}
