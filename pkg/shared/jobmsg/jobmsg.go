// Package jobmsg is the SQS message body a job's feeder (pkg/jobs) sends to
// a stack's upload queue, one object version each. The predictor reads it
// beside S3's and EventBridge's notifications, so a job's objects go
// through the same pacing, budget, dead-letter queue and ledger claim as
// uploads: exactly once per (object version, run).
//
//	{"geolocate_job": {"job": "j-20261202-abcdef", "kind": "reprocess",
//	  "run": "global-v0.3", "model_id": "global_v0.3", "credits_per_call": 1,
//	  "replaces": "", "bucket": "photos", "key": "a/b.jpg",
//	  "version_id": "3HL4kqtJ...", "etag": "9b2cf535...", "size": 183203}}
//
// Kind backfill is an upload notification of that version (Run empty: the
// original upload's record); kind reprocess asks for Run's record. model_id
// empty (or absent) asks the service's current default model.
// events/sqs-job.json is a sample SQS batch holding one.
//
// It replaces the reprocess run's own message (geolocate_reprocess): jobs
// are the one mechanism that sends work to the queue.
package jobmsg

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Field is the top-level member that marks a body as a job's message.
const Field = "geolocate_job"

// The kinds of work a job sends (pkg/jobs' Kind values).
const (
	KindBackfill  = "backfill"
	KindReprocess = "reprocess"
)

// Object is one object version of a job.
type Object struct {
	// Job is the job's id: the predictor reads the job's state (paused,
	// cancelled) and adds to its counters by it.
	Job  string `json:"job"`
	Kind string `json:"kind"`
	// Pos is the object's place in the job's manifest ("<chunk>/<offset>"):
	// a message dropped while the job is paused is sent again from it.
	Pos string `json:"pos,omitempty"`
	// Run is the reprocess run; "" for a backfill (the upload's record).
	Run string `json:"run,omitempty"`
	// ModelID is the model to ask; empty asks the default model.
	ModelID string `json:"model_id,omitempty"`
	// CreditsPerCall is the model's price when the job started: what one
	// call reserves from the run's cap and the daily budget (0: the
	// predictor's own estimate).
	CreditsPerCall int `json:"credits_per_call,omitempty"`
	// Replaces is the run whose result this run's answer replaces (the
	// object version's latest when the job listed it): "" for the
	// original upload.
	Replaces  string `json:"replaces,omitempty"`
	Bucket    string `json:"bucket"`
	Key       string `json:"key"`
	VersionID string `json:"version_id,omitempty"`
	ETag      string `json:"etag,omitempty"`
	Size      int64  `json:"size"`
}

// Message is the whole body.
type Message struct {
	Job *Object `json:"geolocate_job"`
}

// Check reports what makes o unsendable, in one line.
func (o Object) Check() error {
	switch {
	case o.Job == "":
		return errors.New("job message: job is required")
	case o.Bucket == "" || o.Key == "":
		return errors.New("job message: bucket and key are required")
	case o.CreditsPerCall < 0:
		return fmt.Errorf("job message: credits_per_call %d is negative", o.CreditsPerCall)
	}
	switch o.Kind {
	case KindBackfill:
		if o.Run != "" {
			return errors.New("job message: a backfill names no run")
		}
	case KindReprocess:
		if o.Run == "" {
			return errors.New("job message: a reprocess names its run")
		}
	default:
		return fmt.Errorf("job message: kind %q, want %s or %s", o.Kind, KindBackfill, KindReprocess)
	}
	return nil
}

// Body encodes o as a message body.
func Body(o Object) (string, error) {
	if err := o.Check(); err != nil {
		return "", err
	}
	b, err := json.Marshal(Message{Job: &o})
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// Parse decodes a body. ok is false when body is not a job's message at
// all (another notification); err says why a job's message is unusable.
func Parse(body []byte) (o Object, ok bool, err error) {
	var m Message
	if err := json.Unmarshal(body, &m); err != nil || m.Job == nil {
		return Object{}, false, nil
	}
	if err := m.Job.Check(); err != nil {
		return *m.Job, true, err
	}
	return *m.Job, true, nil
}
