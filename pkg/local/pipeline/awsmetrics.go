package pipeline

import (
	"context"
	"sync"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/alarmeval"
	"github.com/geolocate-aws/geolocate/pkg/local/awsmetrics"
	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
	"github.com/geolocate-aws/geolocate/pkg/monitor"
)

// awsPublisher adds what SQS, Lambda and EventBridge would publish for the
// local resources to Options.Metrics, next to the functions' own metrics, so
// the dashboard page and the alarms see the queue and the invocations too.
// A nil *awsPublisher (no Options.Metrics) publishes nothing.
type awsPublisher struct {
	mu    sync.Mutex
	pub   *awsmetrics.Publisher
	queue *sqsqueue.Queue
}

// Local names of the resources; the template's alarms refer to them by
// reference, which the local evaluation matches by dimension name.
var localNames = awsmetrics.Names{
	Predictor: "geolocate-local-predictor", Monitor: "geolocate-local-monitor",
	Queue: sqsqueue.DefaultName, DeadLetterQueue: sqsqueue.DefaultName + "-dlq",
	MonitorRule: "geolocate-local-monitor-schedule",
}

func newAWSPublisher(store *alarmeval.Store, queue *sqsqueue.Queue) *awsPublisher {
	if store == nil {
		return nil
	}
	return &awsPublisher{pub: &awsmetrics.Publisher{Store: store, Names: localNames}, queue: queue}
}

// batch publishes one predictor invocation.
func (a *awsPublisher) batch(res sqsqueue.BatchResult) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pub.Invocation(time.Now(), localNames.Predictor, res.Duration, res.Err != nil, false)
}

// runMonitor runs the monitor as its schedule would, publishing the run.
func (a *awsPublisher) runMonitor(ctx context.Context, m *monitor.Monitor) (*monitor.Report, error) {
	start := time.Now()
	rep, err := runMonitor(ctx, m)
	if a != nil {
		a.mu.Lock()
		a.pub.RuleInvoked(start)
		a.pub.Invocation(start, localNames.Monitor, time.Since(start), err != nil, false)
		a.mu.Unlock()
	}
	return rep, err
}

// readQueue publishes the queues' metrics now.
func (a *awsPublisher) readQueue() {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	_ = a.pub.Queue(time.Now(), a.queue.Metrics()) // well-formed by construction
}

// readQueueEveryMinute publishes the queues' metrics once a minute, as SQS
// does, until ctx is done, and once more then.
func (a *awsPublisher) readQueueEveryMinute(ctx context.Context) {
	if a == nil {
		return
	}
	tick := time.NewTicker(time.Minute)
	defer tick.Stop()
	a.readQueue()
	for {
		select {
		case <-ctx.Done():
			a.readQueue()
			return
		case <-tick.C:
			a.readQueue()
		}
	}
}
