package predictor

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/shared/jobmsg"
)

// Event sources of the records a Lambda invocation can carry.
const (
	sourceSQS = "aws:sqs"
	sourceS3  = "aws:s3"
)

// upload is one object-created notification, however S3 sent it to the
// queue (S3 event record, EventBridge event).
type upload struct {
	Bucket string
	Key    string // decoded: the object's real key
	// OtherKey is the key's URL-decoded form when the notification may or
	// may not have encoded it (S3's EventBridge events) and the two differ;
	// resolveKey settles which one the object has, then clears it.
	OtherKey  string
	VersionID string // empty when unknown; S3's "null" is kept (the ledger ignores it)
	ETag      string // without quotes
	Size      int64
	SizeKnown bool // the notification stated the size (0 included)

	// A job's object (jobmsg): Job names the job, JobPos the object's
	// place in its manifest. Empty for an upload.
	Job    string
	JobPos string
	// A reprocess job's object: Run names the run, Model the model it
	// asks (empty: the default model) and Price the credits a call
	// reserves (0: Config.ExpectedCost). Run is empty for an upload and a
	// backfill's object (the upload's own record).
	Run   string
	Model string
	Price int
	// Replaces is the run whose result a run's answer replaces ("" for
	// run 0's).
	Replaces string
}

// notification is the content of one SQS message body.
type notification struct {
	Uploads []upload
	// Ignored describes records that are valid but are not uploads
	// (ObjectRemoved:*, restores...): acknowledged and logged.
	Ignored []string
	// TestEvent is set for the s3:TestEvent S3 sends when notifications are
	// configured.
	TestEvent bool
}

// errMalformed marks a body that is not a notification at all. Its message
// fails alone and, after the queue's retries, reaches the dead-letter queue.
var errMalformed = errors.New("malformed notification")

// notificationProbe reads just enough of a body to tell its kind.
type notificationProbe struct {
	Records    json.RawMessage `json:"Records"`
	Event      string          `json:"Event"`       // s3:TestEvent
	DetailType string          `json:"detail-type"` // EventBridge
	Source     string          `json:"source"`      // EventBridge
	Detail     json.RawMessage `json:"detail"`
	// Job is a job's message (jobmsg): a backfill's or a reprocess's.
	Job *jobmsg.Object `json:"geolocate_job"`
}

// decodeNotification parses an S3 event notification (Records), an
// s3:TestEvent or an EventBridge S3 event. Valid JSON of any other shape is
// reported as ignored, not as an error: it is nothing to process.
func decodeNotification(body []byte) (notification, error) {
	var probe notificationProbe
	if err := json.Unmarshal(body, &probe); err != nil {
		return notification{}, fmt.Errorf("%w: %v", errMalformed, err)
	}
	switch {
	case len(probe.Records) > 0 && string(probe.Records) != "null":
		return decodeS3Records(body)
	case probe.Event == "s3:TestEvent":
		return notification{TestEvent: true}, nil
	case probe.Source == "aws.s3" && probe.DetailType != "":
		return decodeEventBridge(probe.DetailType, probe.Detail)
	case probe.Job != nil:
		return decodeJob(probe.Job)
	}
	return notification{Ignored: []string{"not an S3 notification"}}, nil
}

// s3SizeProbe tells a stated size of 0 from a missing size, which
// events.S3Object cannot.
type s3SizeProbe struct {
	Records []struct {
		S3 struct {
			Object struct {
				Size *int64 `json:"size"`
			} `json:"object"`
		} `json:"s3"`
	} `json:"Records"`
}

func decodeS3Records(body []byte) (notification, error) {
	var ev events.S3Event
	if err := json.Unmarshal(body, &ev); err != nil {
		// Includes a key that is not valid URL encoding.
		return notification{}, fmt.Errorf("%w: S3 event: %v", errMalformed, err)
	}
	var sizes s3SizeProbe
	_ = json.Unmarshal(body, &sizes) // the same bytes just decoded

	var n notification
	for i, rec := range ev.Records {
		if rec.EventSource != sourceS3 || !strings.HasPrefix(rec.EventName, "ObjectCreated:") {
			n.Ignored = append(n.Ignored, describeIgnored(rec.EventSource, rec.EventName))
			continue
		}
		obj := rec.S3.Object
		if rec.S3.Bucket.Name == "" || obj.URLDecodedKey == "" {
			return notification{}, fmt.Errorf("%w: S3 record %d has no bucket or key", errMalformed, i)
		}
		u := upload{
			Bucket:    rec.S3.Bucket.Name,
			Key:       obj.URLDecodedKey,
			VersionID: obj.VersionID,
			ETag:      strings.Trim(obj.ETag, `"`),
			Size:      obj.Size,
		}
		if i < len(sizes.Records) && sizes.Records[i].S3.Object.Size != nil {
			u.SizeKnown = true
		}
		n.Uploads = append(n.Uploads, u)
	}
	return n, nil
}

// eventBridgeDetail is the detail of an EventBridge "Object Created" S3
// event. Whether its key is URL-encoded is not documented: S3's
// notification page says the key of an S3 notification is ("The s3 key
// provided in the event notification is URL encoded"), its EventBridge page
// only shows "key": "example-key". So both readings are kept: the key as
// given, and its decoded form when that differs (a "+", or a "%" escape);
// resolveKey finds which one names the object, by the notification's own
// version id or ETag, so neither a wrong object nor a paid call for it can
// follow from the wrong guess.
type eventBridgeDetail struct {
	Bucket struct {
		Name string `json:"name"`
	} `json:"bucket"`
	Object struct {
		Key       string `json:"key"`
		Size      *int64 `json:"size"`
		ETag      string `json:"etag"`
		VersionID string `json:"version-id"`
	} `json:"object"`
}

func decodeEventBridge(detailType string, raw json.RawMessage) (notification, error) {
	if detailType != "Object Created" {
		return notification{Ignored: []string{describeIgnored("aws.s3", detailType)}}, nil
	}
	var d eventBridgeDetail
	if err := json.Unmarshal(raw, &d); err != nil {
		return notification{}, fmt.Errorf("%w: EventBridge detail: %v", errMalformed, err)
	}
	if d.Bucket.Name == "" || d.Object.Key == "" {
		return notification{}, fmt.Errorf("%w: EventBridge event has no bucket or key", errMalformed)
	}
	u := upload{
		Bucket:    d.Bucket.Name,
		Key:       d.Object.Key,
		VersionID: d.Object.VersionID,
		ETag:      strings.Trim(d.Object.ETag, `"`),
	}
	if d.Object.Size != nil {
		u.Size, u.SizeKnown = *d.Object.Size, true
	}
	// S3 encodes a key as a form value (a space as "+"); a key that is not
	// valid encoding was not encoded.
	if decoded, err := url.QueryUnescape(d.Object.Key); err == nil && decoded != d.Object.Key {
		u.OtherKey = decoded
	}
	return notification{Uploads: []upload{u}}, nil
}

// decodeJob reads a job's message: the object version as the job listed
// it (decoded key, version id, ETag and size) and, for a reprocess, the
// run. A backfill's object is an upload notification of that version.
func decodeJob(o *jobmsg.Object) (notification, error) {
	if err := o.Check(); err != nil {
		return notification{}, fmt.Errorf("%w: %v", errMalformed, err)
	}
	if o.Kind == jobmsg.KindReprocess {
		if err := ledger.ValidateRunName(o.Run); err != nil {
			return notification{}, fmt.Errorf("%w: job message: %v", errMalformed, err)
		}
	}
	if o.Replaces != "" {
		if err := ledger.ValidateRunName(o.Replaces); err != nil {
			return notification{}, fmt.Errorf("%w: job message: replaces: %v", errMalformed, err)
		}
	}
	u := upload{
		Bucket: o.Bucket, Key: o.Key, VersionID: o.VersionID, ETag: strings.Trim(o.ETag, `"`),
		Size: o.Size, SizeKnown: o.Size > 0, Job: o.Job, JobPos: o.Pos,
		Run: o.Run, Model: o.ModelID, Price: o.CreditsPerCall, Replaces: o.Replaces,
	}
	return notification{Uploads: []upload{u}}, nil
}

func describeIgnored(source, name string) string {
	if name == "" {
		name = "unnamed event"
	}
	if source == "" {
		return name
	}
	return source + " " + name
}
