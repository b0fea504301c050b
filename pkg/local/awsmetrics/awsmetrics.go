// Package awsmetrics publishes, into a local metric store, the metrics AWS
// publishes itself for the pipeline's resources: SQS's for the upload queue
// and its dead-letter queue, Lambda's for the functions, EventBridge's for
// the monitor's schedule and for the result events' pipe and counting rules. With the functions' own Embedded Metric Format
// metrics they are everything the stack's alarms and dashboard read. It is
// test tooling, never in a Lambda.
package awsmetrics

import (
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/alarmeval"
	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
)

// AWS namespaces of the metrics the services publish.
const (
	NamespaceSQS    = "AWS/SQS"
	NamespaceLambda = "AWS/Lambda"
	NamespaceEvents = "AWS/Events"
	NamespacePipes  = "AWS/EventBridge/Pipes"
)

// Names are the dimension values the resources are published under: those
// the template's alarms use ("Ref:<id>" for a FunctionName or RuleName,
// "GetAtt:<id>.QueueName" for a QueueName), or local names when the
// evaluator matches unresolved references by key.
type Names struct {
	Predictor, Monitor, Queue, DeadLetterQueue, MonitorRule string
	// ResultsPipe is the results pipe's PipeName and ResultEventRules the
	// counting rules' RuleName by the detail type they match; both empty
	// without result events (events=false).
	ResultsPipe      string
	ResultEventRules map[string]string
}

// Publisher adds the metrics to Store. Its methods are not safe for
// concurrent use with each other's queue readings (Queue keeps the last
// reading to count a minute's messages).
type Publisher struct {
	Store *alarmeval.Store
	Names Names

	last sqsqueue.Metrics
}

func (p *Publisher) add(ns, name, dim, value string, at time.Time, v float64) {
	// The store refuses only malformed datapoints, which these are not.
	_ = p.Store.Add(alarmeval.Datapoint{Namespace: ns, MetricName: name, Dimensions: map[string]string{dim: value}, Timestamp: at, Value: v})
}

// Invocation publishes one invocation of function: Lambda counts a
// throttled request in Throttles only, and an invocation that failed as a
// whole (error, crash, timeout, init failure) in Errors.
func (p *Publisher) Invocation(at time.Time, function string, d time.Duration, failed, throttled bool) {
	if throttled {
		p.add(NamespaceLambda, "Throttles", "FunctionName", function, at, 1)
		return
	}
	failures := 0.0
	if failed {
		failures = 1
	}
	p.add(NamespaceLambda, "Invocations", "FunctionName", function, at, 1)
	p.add(NamespaceLambda, "Errors", "FunctionName", function, at, failures)
	p.add(NamespaceLambda, "Duration", "FunctionName", function, at, float64(d.Microseconds())/1000)
}

// RuleInvoked publishes a run of the monitor's schedule: EventBridge counts
// the rule (TriggeredRules) and the invocation of its target (Invocations),
// failed or not.
func (p *Publisher) RuleInvoked(at time.Time) {
	p.add(NamespaceEvents, "TriggeredRules", "RuleName", p.Names.MonitorRule, at, 1)
	p.add(NamespaceEvents, "Invocations", "RuleName", p.Names.MonitorRule, at, 1)
}

// ResultEvent publishes one result event of detailType put on the bus by
// the results pipe: the pipe counts the record it carried (EventCount) and
// the counting rule of that type the event it matched (TriggeredRules, by
// RuleName, on the default bus as the dashboard reads it). Without the pipe
// in the template nothing is published.
func (p *Publisher) ResultEvent(at time.Time, detailType string) {
	if p.Names.ResultsPipe == "" {
		return
	}
	p.add(NamespacePipes, "EventCount", "PipeName", p.Names.ResultsPipe, at, 1)
	if rule, ok := p.Names.ResultEventRules[detailType]; ok {
		p.add(NamespaceEvents, "TriggeredRules", "RuleName", rule, at, 1)
	}
}

// Queue publishes the queues' one-minute metrics from a reading, as SQS does
// for an active queue: gauges as read, counts since the previous reading.
func (p *Publisher) Queue(at time.Time, m sqsqueue.Metrics) error {
	last := p.last
	p.last = m
	var dps []alarmeval.Datapoint
	gauge := func(queue, name string, v float64) {
		dps = append(dps, alarmeval.Datapoint{Namespace: NamespaceSQS, MetricName: name,
			Dimensions: map[string]string{"QueueName": queue}, Timestamp: at, Value: v})
	}
	if m.Active {
		q := p.Names.Queue
		gauge(q, sqsqueue.MetricMessagesVisible, float64(m.Visible))
		gauge(q, sqsqueue.MetricMessagesNotVisible, float64(m.NotVisible))
		if m.HasAge {
			gauge(q, sqsqueue.MetricAgeOfOldestMessage, m.AgeOfOldest.Seconds())
		}
		gauge(q, sqsqueue.MetricMessagesSent, float64(m.Sent-last.Sent))
		gauge(q, sqsqueue.MetricMessagesReceived, float64(m.Received-last.Received))
		gauge(q, sqsqueue.MetricMessagesDeleted, float64(m.Deleted-last.Deleted))
	}
	if m.DeadLetterActive {
		q := p.Names.DeadLetterQueue
		gauge(q, sqsqueue.MetricMessagesVisible, float64(m.DeadLetterVisible))
		gauge(q, sqsqueue.MetricMessagesNotVisible, 0)
		if m.DeadLetterHasAge {
			gauge(q, sqsqueue.MetricAgeOfOldestMessage, m.DeadLetterAge.Seconds())
		}
		// Redriven messages are not sends: NumberOfMessagesSent stays 0.
		gauge(q, sqsqueue.MetricMessagesSent, 0)
	}
	return p.Store.AddAll(dps...)
}
