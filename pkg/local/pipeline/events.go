package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/awsparts"
	"github.com/geolocate-aws/geolocate/pkg/local/ddbstream"
	"github.com/geolocate-aws/geolocate/pkg/local/pipes"
)

// eventsPollInterval is how often the table's stream is read, as Pipes
// polls a shard several times a second.
const eventsPollInterval = 250 * time.Millisecond

// eventPlayer reads the table's stream while the run goes on and plays the
// results pipe over each record (Options.Events).
type eventPlayer struct {
	pipe    *pipes.Pipe
	reader  *ddbstream.Reader
	onEvent func(*pipes.Event)
	say     func(format string, args ...any)

	stop func()
	done chan error

	mu     sync.Mutex
	counts map[string]int
	errs   []string
}

// startEvents starts reading the stream of the run's table; nil without
// Options.Events.
func startEvents(ctx context.Context, opts Options, aws *localAWS, say func(string, ...any)) (*eventPlayer, error) {
	if opts.Events == nil {
		return nil, nil
	}
	arn, err := ddbstream.StreamArn(ctx, aws.ddb.Client(), opts.Table)
	if err != nil {
		return nil, fmt.Errorf("result events: %w", err)
	}
	e := &eventPlayer{
		pipe:    opts.Events,
		reader:  ddbstream.New(ddbstream.NewLocalClient(aws.ddb.Endpoint(), awsparts.Region), arn),
		onEvent: opts.OnEvent,
		say:     say,
		done:    make(chan error, 1),
		counts:  map[string]int{},
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	e.stop = cancel
	go func() { e.done <- e.reader.Run(runCtx, eventsPollInterval, e.play) }()
	say("events    playing the results pipe (%s) over the table's stream", e.pipe.LogicalID)
	return e, nil
}

// play runs one stream record through the pipe. A record the pipe cannot
// render is reported and skipped, as the deployed pipe would send its
// batch to the dead-letter queue and go on.
func (e *eventPlayer) play(record []byte) error {
	event, ok, err := e.pipe.Apply(record, time.Now())
	if err != nil {
		e.mu.Lock()
		e.errs = append(e.errs, err.Error())
		e.mu.Unlock()
		e.say("warning   result event not delivered: %v", err)
		return nil
	}
	if !ok {
		return nil
	}
	var d struct{ Bucket, Key string }
	_ = json.Unmarshal(event.Detail, &d)
	e.mu.Lock()
	e.counts[event.DetailType]++
	e.mu.Unlock()
	e.say("event     %-16s s3://%s/%s", event.DetailType, d.Bucket, d.Key)
	if e.onEvent != nil {
		e.onEvent(event)
	}
	return nil
}

// finish stops the background reading and reads the stream once more, so
// the last records' events are in; it returns the events by detail type
// and what could not be delivered.
func (e *eventPlayer) finish(ctx context.Context) (map[string]int, []string, error) {
	e.stop()
	err := <-e.done
	if err == nil {
		err = e.reader.Poll(ctx, e.play)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if err != nil {
		err = fmt.Errorf("result events: %w", err)
	}
	return e.counts, e.errs, err
}
