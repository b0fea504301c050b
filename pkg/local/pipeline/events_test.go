package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
	"github.com/geolocate-aws/geolocate/pkg/local/pipes"
	"github.com/geolocate-aws/geolocate/pkg/shared/resultevents"
)

// TestRunPublishesOneEventPerPhoto runs the pipeline with every message
// delivered twice and the results pipe played over the table's stream:
// each upload's final record is one event of its status's detail type,
// and the duplicates add none.
func TestRunPublishesOneEventPerPhoto(t *testing.T) {
	db := awspartstest.SharedDynamoDB(t)
	dir, want := imagesDir(t)
	pipe, err := pipes.ResultsPipe(nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var mu sync.Mutex
	var events []*pipes.Event
	sum, err := Run(ctx, Options{
		ImagesDir:     dir,
		Getenv:        noServiceEnv,
		DynamoDB:      db,
		Table:         "events-" + fmt.Sprint(time.Now().UnixNano()),
		DuplicateRate: 1,
		Progress:      testLog{t},
		Events:        pipe,
		OnEvent: func(e *pipes.Event) {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, e)
		},
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkResults(t, sum, want)
	byKey := map[string][]string{}
	for _, e := range events {
		var d struct{ Key string }
		if err := json.Unmarshal(e.Detail, &d); err != nil {
			t.Fatal(err)
		}
		byKey[d.Key] = append(byKey[d.Key], e.DetailType)
	}
	total := 0
	for _, r := range sum.Results {
		wantType := resultevents.DetailType(r.Status())
		if got := byKey[r.Upload.Key]; len(got) != 1 || got[0] != wantType {
			t.Errorf("%s (%s): events %v, want one %q", r.Upload.Key, r.Status(), got, wantType)
		}
		total++
	}
	if len(events) != total || len(sum.EventErrors) != 0 {
		t.Errorf("%d events for %d uploads; undelivered %v", len(events), total, sum.EventErrors)
	}
	counted := 0
	for _, n := range sum.Events {
		counted += n
	}
	if counted != len(events) {
		t.Errorf("summary counts %v, %d events passed on", sum.Events, len(events))
	}
}
