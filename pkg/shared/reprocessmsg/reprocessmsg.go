// Package reprocessmsg is the SQS message body geolocate reprocess sends to
// a stack's upload queue, one object version of a reprocess run each. The
// predictor reads it beside S3's and EventBridge's notifications, so a
// run's objects go through the same pacing, budget, dead-letter queue and
// ledger claim as uploads: exactly once per (object version, run).
//
//	{"geolocate_reprocess": {"run": "global-v0.3", "model_id": "global_v0.3",
//	  "credits_per_call": 1, "replaces": "", "bucket": "photos", "key": "a/b.jpg",
//	  "version_id": "3HL4kqtJ...", "etag": "9b2cf535...", "size": 183203}}
//
// model_id empty (or absent) asks the service's current default model.
// events/sqs-reprocess.json is a sample SQS batch holding one.
package reprocessmsg

import (
	"encoding/json"
	"errors"
)

// Field is the top-level member that marks a body as a reprocess message.
const Field = "geolocate_reprocess"

// Object is one object version to process again in a run.
type Object struct {
	Run string `json:"run"`
	// ModelID is the model to ask; empty asks the default model.
	ModelID string `json:"model_id,omitempty"`
	// CreditsPerCall is the model's price when the run started: what one
	// call reserves from the run's cap and the daily budget (0: the
	// predictor's own estimate).
	CreditsPerCall int `json:"credits_per_call,omitempty"`
	// Replaces is the run whose result this run's answer replaces (the
	// object version's latest when the run was planned): "" for the
	// original upload. The predictor reads that record by its key for the
	// answer's history, with no query.
	Replaces  string `json:"replaces,omitempty"`
	Bucket    string `json:"bucket"`
	Key       string `json:"key"`
	VersionID string `json:"version_id,omitempty"`
	ETag      string `json:"etag,omitempty"`
	Size      int64  `json:"size"`
}

// Message is the whole body.
type Message struct {
	Reprocess *Object `json:"geolocate_reprocess"`
}

// Body encodes o as a message body.
func Body(o Object) (string, error) {
	if o.Run == "" || o.Bucket == "" || o.Key == "" {
		return "", errors.New("reprocess message: run, bucket and key are required")
	}
	b, err := json.Marshal(Message{Reprocess: &o})
	if err != nil {
		return "", err
	}
	return string(b), nil
}
