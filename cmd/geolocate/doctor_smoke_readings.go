package main

import (
	"fmt"
	"strings"

	"github.com/geolocate-aws/geolocate/pkg/shared/s3keyfilter"
)

// The open readings: what AWS's documentation leaves to two readings and
// the docs list as open (docs/local-rig.md, docs/events.md,
// docs/waiting.md), each with what the smoke check's run says of it. A
// reading is "settled" only by evidence seen on AWS; the local rig only
// plays its assumption (rig), so there every line says "assumed by the
// rig". The docs quote each id: `doctor --smoke` prints `<id> settled ...`.

// Reading outcomes.
const (
	readingSettled = "settled"
	readingOpen    = "still open"
)

// openReading is one open reading and how a run judges it.
type openReading struct {
	id string
	// rig is what the local stand-in plays in its place.
	rig   string
	judge func(r *smokeRun) (status, evidence string)
}

var openReadings = []openReading{
	{"s3-filter-encoding", "the rig does not filter keys: S3's notification filter is AWS's alone",
		func(r *smokeRun) (string, string) {
			if r.mode != "s3" {
				return readingOpen, "notifications=eventbridge: the bucket's notification filter is not used"
			}
			if s3keyfilter.Encode(r.prefix+r.suffix) == r.prefix+r.suffix {
				return readingOpen, fmt.Sprintf("uploadPrefix %q and uploadSuffix %q hold no character S3 encodes, so the encoded filter was not put to the test", r.prefix, r.suffix)
			}
			if u := r.encoded; u != nil && u.record != nil {
				return readingSettled, fmt.Sprintf("the encoded filter (prefix %q, suffix %q as S3 holds them) let %q through: record written %s after the upload", s3keyfilter.Encode(r.prefix), s3keyfilter.Encode(r.suffix), u.key, r.latency(u))
			}
			return readingOpen, "the encoded key's upload got no record (see its step): the filter may not match"
		}},
	{"eventbridge-key-encoding", "both: the predictor's resolveKey tries the key as given, then decoded (TestEventBridgeKeyEncodedOrNot)",
		func(r *smokeRun) (string, string) {
			switch {
			case r.mode != "eventbridge":
				return readingOpen, "notifications=s3: the bucket sends no events to EventBridge"
			case r.s3Key == "":
				return readingOpen, "S3's Object Created event of the encoded key did not reach the temporary rule in time"
			case r.s3Key == r.encoded.key:
				return readingSettled, fmt.Sprintf("S3's EventBridge event carries the key as stored: %q", r.s3Key)
			}
			return readingSettled, fmt.Sprintf("S3's EventBridge event carries the key URL-encoded: %q for %q", r.s3Key, r.encoded.key)
		}},
	{"pipe-escaping", "both: Escaped and Verbatim (pipes.Pipe.Substitution); the stack substitutes no record text",
		func(r *smokeRun) (string, string) {
			if u := r.encoded; u != nil && u.event != nil {
				return readingSettled, fmt.Sprintf("for the stack's template: the event of %q is valid JSON naming the key exactly (a key with \" or \\ was not tried)", u.key)
			}
			return readingOpen, "no result event of the encoded key arrived"
		}},
	{"exists-false-no-old-image", "exists:false matches a field whose parent is absent (eventpattern)",
		func(r *smokeRun) (string, string) {
			for _, u := range r.uploads {
				if !u.paid && u.record != nil && u.event != nil {
					return readingSettled, fmt.Sprintf("the rejection of %q, written final with no earlier image, published %q", u.key, u.event.detailType)
				}
				if !u.paid && u.record != nil && u.record.Final() {
					return readingOpen, fmt.Sprintf("the rejection of %q got no event in time (a no would look like this: rerun with a longer --timeout)", u.key)
				}
			}
			return readingOpen, "the text file got no final record"
		}},
	{"dynamic-detail-type", "must resolve alike from the record and from the enrichment's output (pipes.Pipe.dynamic)",
		func(r *smokeRun) (string, string) {
			for _, u := range r.uploads {
				if u.paid && u.event != nil && u.record != nil {
					return readingSettled, fmt.Sprintf("the event of %q has detail-type %q for a %s record", u.key, u.event.detailType, u.record.Status)
				}
			}
			return readingOpen, "no photo's result event arrived"
		}},
	{"triggered-rules", "only the dashboard reads it; the rig publishes no AWS/Events metric",
		func(r *smokeRun) (string, string) {
			if r.quietRule == "" {
				return readingOpen, "no rule without a target was created"
			}
			if r.triggered > 0 {
				return readingSettled, fmt.Sprintf("rule %s, without a target, counted TriggeredRules %g", r.quietRule, r.triggered)
			}
			return readingOpen, fmt.Sprintf("rule %s counted no TriggeredRules yet (AWS/Events metrics can take minutes; zero is no proof of absence)", r.quietRule)
		}},
	{"mapping-receives-count", "every receive counts towards maxReceiveCount (sqsqueue)",
		func(*smokeRun) (string, string) {
			return readingOpen, "the smoke check throttles nothing; docs/waiting.md's test settles it"
		}},
	{"service-date-header", "a fresh Date on every answer (geosim)",
		func(*smokeRun) (string, string) {
			return readingOpen, "the check does not see the predictor's calls; docs/local-rig.md's 60-call test settles it"
		}},
	{"visible-message-delivery", "the local queue's delivery time",
		func(r *smokeRun) (string, string) {
			var times []string
			for _, u := range r.uploads {
				if u.record != nil && u.record.Final() {
					times = append(times, r.latency(u))
				}
			}
			if len(times) == 0 {
				return readingOpen, "no upload reached its record"
			}
			return readingSettled, "for an idle queue: upload to record " + strings.Join(times, ", ") + " (S3's notification, SQS and the poller together)"
		}},
	{"kms-cloudwatch-publish", "the rig has no KMS: alarm notifications are not encrypted locally",
		func(r *smokeRun) (string, string) {
			switch {
			case r.failed > 0:
				return readingSettled, fmt.Sprintf("NOT as the stack assumes: %g notification(s) failed after SetAlarmState on %s", r.failed, r.alarm)
			case r.delivered > 0:
				return readingSettled, fmt.Sprintf("the encrypted topic took CloudWatch's publish under the key's aws:SourceArn/aws:SourceAccount conditions: %g delivered after SetAlarmState on %s", r.delivered, r.alarm)
			}
			return readingOpen, "the topic counted no delivery in time (no confirmed subscription delivers nothing)"
		}},
}
