package pipeline

import (
	"context"
	"fmt"
	"mime"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
)

// Upload is one file put in the bucket and announced on the queue.
type Upload struct {
	File      string // local path
	Bucket    string
	Key       string
	VersionID string
	ETag      string // without quotes
	Size      int64
	MessageID string // the queue message carrying its notification
	At        time.Time
}

// Ref is the object version the upload's record belongs to.
func (u Upload) Ref() ledger.ObjectRef {
	return ledger.ObjectRef{Bucket: u.Bucket, Key: u.Key, VersionID: u.VersionID, ETag: u.ETag}
}

// putFile uploads path as key, the way a user's upload would, and returns
// the object's version id and ETag as S3 reports them.
func putFile(ctx context.Context, client *s3.Client, bucket, key, path string) (Upload, error) {
	f, err := os.Open(path)
	if err != nil {
		return Upload{}, fmt.Errorf("upload %s: %w", path, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return Upload{}, fmt.Errorf("upload %s: %w", path, err)
	}
	in := &s3.PutObjectInput{
		Bucket:        aws.String(bucket),
		Key:           aws.String(key),
		Body:          f,
		ContentLength: aws.Int64(info.Size()),
	}
	if ct := mime.TypeByExtension(filepath.Ext(path)); ct != "" {
		in.ContentType = aws.String(ct)
	}
	out, err := client.PutObject(ctx, in)
	if err != nil {
		return Upload{}, fmt.Errorf("upload %s to s3://%s/%s: %w", path, bucket, key, err)
	}
	return Upload{
		File:      path,
		Bucket:    bucket,
		Key:       key,
		VersionID: aws.ToString(out.VersionId),
		ETag:      strings.Trim(aws.ToString(out.ETag), `"`),
		Size:      info.Size(),
		At:        time.Now(),
	}, nil
}
