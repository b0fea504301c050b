// Package s3event builds the S3 event notification (message format 2.1)
// S3 puts on the uploads queue for a new object. Both the operator's
// backfill, which sends it to the real queue, and the local rig, which
// stands in for S3, build it here: the shipped CLI must not import the rig
// (functions/boundary_test.go), and one builder keeps the two identical.
package s3event

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/shared/s3keyfilter"
)

// ObjectCreated describes an object as S3 reports it in an ObjectCreated
// notification.
type ObjectCreated struct {
	Bucket    string
	Key       string // the object key as stored (not encoded)
	Size      int64
	ETag      string // with or without quotes
	VersionID string // as PutObject reported it; empty (and then omitted, as S3 omits it) for an unversioned bucket
	Region    string // default us-east-1
	EventName string // default "ObjectCreated:Put"
	Time      time.Time
	Sequencer string
}

// The wire shape of an S3 event notification (message format 2.1). Our own
// types rather than aws-lambda-go's: those add a urlDecodedKey field and
// drop a zero size, which S3 never does.
type (
	s3Notification struct {
		Records []s3NotificationRecord `json:"Records"`
	}
	s3NotificationRecord struct {
		EventVersion      string            `json:"eventVersion"`
		EventSource       string            `json:"eventSource"`
		AWSRegion         string            `json:"awsRegion"`
		EventTime         string            `json:"eventTime"`
		EventName         string            `json:"eventName"`
		UserIdentity      principal         `json:"userIdentity"`
		RequestParameters map[string]string `json:"requestParameters"`
		ResponseElements  map[string]string `json:"responseElements"`
		S3                s3Entity          `json:"s3"`
	}
	principal struct {
		PrincipalID string `json:"principalId"`
	}
	s3Entity struct {
		SchemaVersion   string   `json:"s3SchemaVersion"`
		ConfigurationID string   `json:"configurationId"`
		Bucket          s3Bucket `json:"bucket"`
		Object          s3Object `json:"object"`
	}
	s3Bucket struct {
		Name          string    `json:"name"`
		OwnerIdentity principal `json:"ownerIdentity"`
		ARN           string    `json:"arn"`
	}
	s3Object struct {
		Key       string `json:"key"`
		Size      int64  `json:"size"`
		ETag      string `json:"eTag"`
		VersionID string `json:"versionId,omitempty"`
		Sequencer string `json:"sequencer"`
	}
)

// Body returns the JSON body S3 would put on the queue for obj: a
// one-record event notification with the key URL-encoded the way S3
// encodes it (a space becomes "+", other reserved characters %XX, "/"
// kept), the real size (also 0), the ETag without quotes, a sequencer,
// and the versionId only for a versioned bucket: S3 leaves the field out
// for a bucket that never had versioning enabled.
func Body(obj ObjectCreated) (string, error) {
	if obj.Bucket == "" || obj.Key == "" {
		return "", fmt.Errorf("S3 event: bucket and key are required")
	}
	obj = obj.WithDefaults()
	region, name, at, sequencer := obj.Region, obj.EventName, obj.Time, obj.Sequencer
	body, err := json.Marshal(s3Notification{Records: []s3NotificationRecord{{
		EventVersion:      "2.1",
		EventSource:       "aws:s3",
		AWSRegion:         region,
		EventTime:         at.UTC().Format("2006-01-02T15:04:05.000Z"),
		EventName:         name,
		UserIdentity:      principal{PrincipalID: "AWS:LOCAL"},
		RequestParameters: map[string]string{"sourceIPAddress": "127.0.0.1"},
		ResponseElements:  map[string]string{"x-amz-request-id": "LOCAL", "x-amz-id-2": "LOCAL"},
		S3: s3Entity{
			SchemaVersion:   "1.0",
			ConfigurationID: "geolocate-uploads",
			Bucket:          s3Bucket{Name: obj.Bucket, OwnerIdentity: principal{PrincipalID: "LOCAL"}, ARN: "arn:aws:s3:::" + obj.Bucket},
			Object: s3Object{
				Key:       s3keyfilter.Encode(obj.Key),
				Size:      obj.Size,
				ETag:      strings.Trim(obj.ETag, `"`),
				VersionID: obj.VersionID,
				Sequencer: sequencer,
			},
		},
	}}})
	if err != nil {
		return "", fmt.Errorf("S3 event for %s: %w", obj.Key, err)
	}
	return string(body), nil
}

// WithDefaults fills what obj leaves empty as S3 would for an upload now:
// region us-east-1, event ObjectCreated:Put, the current time, and a
// sequencer from that time. Both notification forms (this package's and
// the rig's EventBridge one) start from it.
func (obj ObjectCreated) WithDefaults() ObjectCreated {
	if obj.Region == "" {
		obj.Region = "us-east-1"
	}
	if obj.EventName == "" {
		obj.EventName = "ObjectCreated:Put"
	}
	if obj.Time.IsZero() {
		obj.Time = time.Now()
	}
	if obj.Sequencer == "" {
		obj.Sequencer = fmt.Sprintf("%016X", obj.Time.UnixNano())
	}
	return obj
}
