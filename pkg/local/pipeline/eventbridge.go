package pipeline

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/uuid"

	"github.com/geolocate-aws/geolocate/pkg/local/pipes"
	"github.com/geolocate-aws/geolocate/pkg/shared/configrules"
	"github.com/geolocate-aws/geolocate/pkg/shared/s3event"
)

// How uploads reach the queue (Options.Notifications), as the stack's
// notifications setting deploys them.
const (
	NotificationsS3          = configrules.NotificationsS3
	NotificationsEventBridge = configrules.NotificationsEventBridge
)

// The wire shape of the detail of S3's EventBridge event for a new object
// (the envelope is aws-lambda-go's events.EventBridgeEvent), as an
// EventBridge rule's SQS target puts it on the queue: the whole event is the
// message body. Unlike an S3 notification, the key is not URL-encoded and
// the size, ETag and version id are named differently.
type (
	eventBridgeDetail struct {
		Version         string            `json:"version"`
		Bucket          s3BucketName      `json:"bucket"`
		Object          eventBridgeObject `json:"object"`
		RequestID       string            `json:"request-id"`
		Requester       string            `json:"requester"`
		SourceIPAddress string            `json:"source-ip-address"`
		Reason          string            `json:"reason"`
	}
	s3BucketName struct {
		Name string `json:"name"`
	}
	eventBridgeObject struct {
		Key       string `json:"key"`
		Size      int64  `json:"size"`
		ETag      string `json:"etag"`
		VersionID string `json:"version-id,omitempty"`
		Sequencer string `json:"sequencer"`
	}
)

// EventBridgeEventBody returns the JSON body an EventBridge rule's SQS
// target would put on the queue for obj: S3's "Object Created" event, with
// the key as stored, the real size (also 0), the ETag without quotes and
// the version id only for a versioned bucket.
func EventBridgeEventBody(obj s3event.ObjectCreated) (string, error) {
	if obj.Bucket == "" || obj.Key == "" {
		return "", fmt.Errorf("EventBridge event: bucket and key are required")
	}
	obj = obj.WithDefaults()
	region, at, sequencer := obj.Region, obj.Time, obj.Sequencer
	reason := "PutObject"
	if name, ok := strings.CutPrefix(obj.EventName, "ObjectCreated:"); ok && name != "Put" {
		reason = map[string]string{"Post": "POST Object", "Copy": "CopyObject", "CompleteMultipartUpload": "CompleteMultipartUpload"}[name]
	}
	detail, err := json.Marshal(eventBridgeDetail{
		Version: "0",
		Bucket:  s3BucketName{Name: obj.Bucket},
		Object: eventBridgeObject{
			Key:       obj.Key,
			Size:      obj.Size,
			ETag:      strings.Trim(obj.ETag, `"`),
			VersionID: obj.VersionID,
			Sequencer: sequencer,
		},
		RequestID:       "LOCAL",
		Requester:       pipes.LocalAccount,
		SourceIPAddress: "127.0.0.1",
		Reason:          reason,
	})
	if err != nil {
		return "", fmt.Errorf("EventBridge event for %s: %w", obj.Key, err)
	}
	body, err := json.Marshal(events.EventBridgeEvent{
		Version:    "0",
		ID:         uuid.NewString(),
		DetailType: "Object Created",
		Source:     "aws.s3",
		AccountID:  pipes.LocalAccount,
		Time:       at.UTC().Truncate(time.Second),
		Region:     region,
		Resources:  []string{"arn:aws:s3:::" + obj.Bucket},
		Detail:     detail,
	})
	if err != nil {
		return "", fmt.Errorf("EventBridge event for %s: %w", obj.Key, err)
	}
	return string(body), nil
}
