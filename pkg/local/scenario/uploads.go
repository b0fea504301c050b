package scenario

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/uuid"

	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
	"github.com/geolocate-aws/geolocate/pkg/photo/photoexif/exiftest"
	"github.com/geolocate-aws/geolocate/pkg/shared/s3event"
)

// Upload puts n new photos into the bucket; S3 notifies the queue of each,
// as the bucket's notification configuration does.
func (r *Rig) Upload(ctx context.Context, n int) error {
	for range n {
		r.uploads++
		key := fmt.Sprintf("uploads/%s/photo-%06d.jpg", r.Now().Format("2006-01-02"), r.uploads)
		body := photo(r.uploads, r.opts.GPSEvery > 0 && r.uploads%r.opts.GPSEvery == 0)
		out, err := r.opts.S3.PutObject(ctx, &s3.PutObjectInput{
			Bucket: aws.String(r.opts.Bucket), Key: aws.String(key), Body: bytes.NewReader(body),
			ContentType: aws.String("image/jpeg"),
		})
		if err != nil {
			return fmt.Errorf("put object %s: %w", key, err)
		}
		msg, err := s3event.Body(s3event.ObjectCreated{
			Bucket: r.opts.Bucket, Key: key, Size: int64(len(body)),
			ETag: aws.ToString(out.ETag), VersionID: aws.ToString(out.VersionId), Time: r.Now(),
		})
		if err != nil {
			return fmt.Errorf("notification for %s: %w", key, err)
		}
		if _, err := r.queue.SendMessage(msg); err != nil {
			return fmt.Errorf("send notification for %s: %w", key, err)
		}
	}
	return nil
}

// SendPoison puts a message on the upload queue that no handler can read
// (not JSON), as a misconfigured producer sharing the queue would.
func (r *Rig) SendPoison() error {
	_, err := r.queue.SendMessage("{not an S3 notification")
	return err
}

// Uploads is the number of photos uploaded so far.
func (r *Rig) Uploads() int { return r.uploads }

// photo is a small JPEG, different for every n so that each upload is a new
// image to the service; withGPS adds the EXIF a phone writes, with the
// position of one of gpsPlaces.
func photo(n int, withGPS bool) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 32, 24))
	for y := range 24 {
		for x := range 32 {
			img.Set(x, y, color.RGBA{R: uint8(n), G: uint8(n >> 8), B: uint8(x*8 + y), A: 255})
		}
	}
	if withGPS {
		place := gpsPlaces[n%len(gpsPlaces)]
		exif := exiftest.Photo{Make: "Demo", Model: "Phone", GPS: &exiftest.GPS{Lat: place[0], Lon: place[1]}}
		return exiftest.JPEG(exif.Bytes(), img, 0)
	}
	var buf bytes.Buffer
	_ = jpeg.Encode(&buf, img, &jpeg.Options{Quality: 80}) // cannot fail on an in-memory RGBA
	return buf.Bytes()
}

// gpsPlaces are where the photos with a GPS position were taken.
var gpsPlaces = [][2]float64{{48.8566, 2.3522}, {35.6762, 139.6503}, {47.6062, -122.3321}, {-33.8688, 151.2093}, {53.5511, 9.9937}, {-1.2921, 36.8219}}

// scheduledEvent is the event EventBridge sends a scheduled rule's target.
func scheduledEvent(at time.Time) []byte {
	payload, _ := json.Marshal(events.EventBridgeEvent{
		Version: "0", ID: uuid.NewString(), DetailType: "Scheduled Event", Source: "aws.events",
		AccountID: sqsqueue.DefaultAccountID, Time: at.UTC(), Region: sqsqueue.DefaultRegion,
		Resources: []string{"arn:aws:events:" + sqsqueue.DefaultRegion + ":" + sqsqueue.DefaultAccountID + ":rule/monitor-schedule"},
		Detail:    json.RawMessage(`{}`),
	})
	return payload
}
