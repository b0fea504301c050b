package predictor

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
	"github.com/geolocate-aws/geolocate/pkg/photo/photoexif"
)

// The S3 reads below always name the object version the notification was
// about: its version id when the bucket is versioned, else its ETag as an
// If-Match condition, so an object overwritten since is never read (or paid
// for) in place of the one uploaded.

// s3Version is the version id to send to S3: S3's "null" does not identify
// one version (the ETag does; see ledger.ObjectRef.SortKey).
func (u upload) s3Version() *string {
	if u.VersionID == "" || u.VersionID == "null" {
		return nil
	}
	return aws.String(u.VersionID)
}

// s3IfMatch is the If-Match condition when no version id is usable.
func (u upload) s3IfMatch() *string {
	if u.s3Version() != nil || u.ETag == "" {
		return nil
	}
	return aws.String(`"` + u.ETag + `"`)
}

// headObject completes an upload whose notification lacked its size or
// identity (version id and ETag).
func headObject(ctx context.Context, store ObjectStore, u *upload) error {
	out, err := store.HeadObject(ctx, &s3.HeadObjectInput{
		Bucket:    aws.String(u.Bucket),
		Key:       aws.String(u.Key),
		VersionId: u.s3Version(),
		IfMatch:   u.s3IfMatch(),
	})
	if err != nil {
		return fmt.Errorf("head object: %w", err)
	}
	u.Size, u.SizeKnown = aws.ToInt64(out.ContentLength), true
	if u.ETag == "" {
		u.ETag = trimETag(aws.ToString(out.ETag))
	}
	if u.VersionID == "" {
		u.VersionID = aws.ToString(out.VersionId)
	}
	return nil
}

// resolveKey settles the name of an object whose notification's key may
// or may not be URL-encoded (upload.OtherKey): a HEAD of the key as given,
// and only when S3 says it is not there, a HEAD of the other form. Both
// name the notification's version (version id, else If-Match on its ETag),
// so an unrelated object under the other name is never taken for it. When
// neither exists the error is the first HEAD's, so the record says the
// object is gone under the key the notification gave.
func resolveKey(ctx context.Context, store ObjectStore, u *upload) error {
	other := *u
	other.Key, other.OtherKey = u.OtherKey, ""
	u.OtherKey = ""
	err := headObject(ctx, store, u)
	if err == nil || !objectGone(err) {
		return err
	}
	if oerr := headObject(ctx, store, &other); oerr != nil {
		if objectGone(oerr) {
			return err
		}
		return oerr
	}
	*u = other
	return nil
}

// openedObject is the object's body, opened with one GET, whose first bytes
// were peeked to recognise the format and read EXIF. The same stream is then
// uploaded, so the object is read from S3 once.
type openedObject struct {
	buffered *bufio.Reader // holds head, then the rest of body
	body     io.Closer
	head     []byte // up to headBytes, still unread
	closed   atomic.Bool
}

func (o *openedObject) Read(p []byte) (int, error) { return o.buffered.Read(p) }

// closeIfOpened closes o when there is one: the downscaled path has none.
func (o *openedObject) closeIfOpened() {
	if o != nil {
		o.Close()
	}
}

// Close closes the S3 stream; later calls do nothing, so the caller can
// close it whether or not the upload consumed it.
func (o *openedObject) Close() error {
	if o.closed.Swap(true) {
		return nil
	}
	return o.body.Close()
}

// headBytes is how much of the object is peeked before anything is sent:
// enough for the format and for the EXIF block cameras and phones write near
// the start (photoexif.DefaultCaptureLimit, 256 KiB). It is the one buffer
// per object of the streaming path, so memory stays flat whatever the size.
const headBytes = photoexif.DefaultCaptureLimit

// openObject opens the object version with one streaming GET and peeks its
// first bytes, without downloading the rest.
func openObject(ctx context.Context, store ObjectStore, u upload) (*openedObject, error) {
	out, err := getObject(ctx, store, u)
	if err != nil {
		return nil, fmt.Errorf("get object: %w", err)
	}
	br := bufio.NewReaderSize(out.Body, headBytes)
	head, err := br.Peek(headBytes)
	if err != nil && !errors.Is(err, io.EOF) {
		out.Body.Close()
		return nil, fmt.Errorf("read object head: %w", err)
	}
	return &openedObject{buffered: br, body: out.Body, head: head}, nil
}

func getObject(ctx context.Context, store ObjectStore, u upload) (*s3.GetObjectOutput, error) {
	return store.GetObject(ctx, &s3.GetObjectInput{
		Bucket:    aws.String(u.Bucket),
		Key:       aws.String(u.Key),
		VersionId: u.s3Version(),
		IfMatch:   u.s3IfMatch(),
	})
}

// imageSource streams the object to the service and is never buffered
// whole, so a 10 MB image costs little memory. Its first call returns
// first, the stream already opened to sniff the format; any later call (an
// HTTP retry, a call after a key refresh or a model fallback) opens the
// object again. So the object is read once per attempt.
func imageSource(store ObjectStore, u upload, first *openedObject) geoapi.ImageSource {
	var firstTaken atomic.Bool
	return func(ctx context.Context) (io.ReadCloser, error) {
		if first != nil && !firstTaken.Swap(true) {
			return first, nil
		}
		out, err := getObject(ctx, store, u)
		if err != nil {
			return nil, &sourceError{err: err}
		}
		return out.Body, nil
	}
}

// sourceError is a failure to open the object for upload: nothing was sent,
// so nothing was charged.
type sourceError struct{ err error }

func (e *sourceError) Error() string { return "open object for upload: " + e.err.Error() }
func (e *sourceError) Unwrap() error { return e.err }

// objectGone reports whether S3 says the object (version) no longer exists,
// or was replaced since the notification (If-Match failed). A version id
// that names a delete marker answers 405 MethodNotAllowed.
func objectGone(err error) bool {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode() {
		case "NoSuchKey", "NotFound", "NoSuchVersion", "PreconditionFailed", "MethodNotAllowed":
			return true
		}
	}
	var respErr *awshttp.ResponseError
	if errors.As(err, &respErr) {
		switch respErr.HTTPStatusCode() {
		case http.StatusNotFound, http.StatusPreconditionFailed, http.StatusMethodNotAllowed:
			return true
		}
	}
	return false
}

func trimETag(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return s[1 : len(s)-1]
	}
	return s
}
