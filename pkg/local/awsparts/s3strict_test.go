package awsparts_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/geolocate-aws/geolocate/pkg/local/awsparts"
)

// These tests hold the local S3 to real S3's documented behaviour
// (Retaining multiple versions of objects; the GetObject, HeadObject and
// DeleteObject API references; conditional requests), through the real SDK
// client.

// bucketFixture starts a local S3 with one bucket, versioned or not.
func bucketFixture(t *testing.T, versioned bool) (*s3.Client, string) {
	t.Helper()
	srv, err := awsparts.StartS3()
	if err != nil {
		t.Fatalf("StartS3: %v", err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	create := srv.CreateBucket
	if versioned {
		create = srv.CreateVersionedBucket
	}
	if err := create(context.Background(), "bucket"); err != nil {
		t.Fatal(err)
	}
	return srv.Client(), "bucket"
}

func quotedMD5(body string) string {
	sum := md5.Sum([]byte(body))
	return `"` + hex.EncodeToString(sum[:]) + `"`
}

// failure returns the error code and HTTP status of a failed call.
func failure(t *testing.T, err error) (string, int) {
	t.Helper()
	if err == nil {
		return "", 200
	}
	var api smithy.APIError
	var resp *awshttp.ResponseError
	if !errors.As(err, &api) || !errors.As(err, &resp) {
		t.Fatalf("not an S3 error response: %v", err)
	}
	return api.ErrorCode(), resp.HTTPStatusCode()
}

func wantFailure(t *testing.T, what string, err error, code string, status int) {
	t.Helper()
	gotCode, gotStatus := failure(t, err)
	if gotStatus != status || (code != "" && gotCode != code) {
		t.Errorf("%s: %d %s (%v), want %d %s", what, gotStatus, gotCode, err, status, code)
	}
}

type s3Bucket struct {
	t      *testing.T
	client *s3.Client
	name   string
}

func (b s3Bucket) put(key, body string) *s3.PutObjectOutput {
	b.t.Helper()
	out, err := b.client.PutObject(context.Background(), &s3.PutObjectInput{
		Bucket: aws.String(b.name), Key: aws.String(key), Body: strings.NewReader(body)})
	if err != nil {
		b.t.Fatalf("PutObject %s: %v", key, err)
	}
	return out
}

// get returns the body of a GET, or its error.
func (b s3Bucket) get(in *s3.GetObjectInput) (string, *s3.GetObjectOutput, error) {
	b.t.Helper()
	in.Bucket = aws.String(b.name)
	out, err := b.client.GetObject(context.Background(), in)
	if err != nil {
		return "", nil, err
	}
	defer out.Body.Close()
	body, err := io.ReadAll(out.Body)
	return string(body), out, err
}

func (b s3Bucket) head(in *s3.HeadObjectInput) (*s3.HeadObjectOutput, error) {
	in.Bucket = aws.String(b.name)
	return b.client.HeadObject(context.Background(), in)
}

func TestUnversionedBucketBehavesLikeS3(t *testing.T) {
	client, name := bucketFixture(t, false)
	b := s3Bucket{t, client, name}
	const key = "photos/a b+c.jpg"

	v, err := client.GetBucketVersioning(context.Background(), &s3.GetBucketVersioningInput{Bucket: aws.String(name)})
	if err != nil || v.Status != "" {
		t.Errorf("GetBucketVersioning = %q, %v; want no status (never enabled)", v.Status, err)
	}

	// (a) No version id; the ETag is the quoted MD5 hex of the body.
	first := b.put(key, "first")
	if first.VersionId != nil {
		t.Errorf("PutObject version id = %q, want none", *first.VersionId)
	}
	if got := aws.ToString(first.ETag); got != quotedMD5("first") {
		t.Errorf("PutObject ETag = %s, want %s", got, quotedMD5("first"))
	}
	head, err := b.head(&s3.HeadObjectInput{Key: aws.String(key)})
	if err != nil {
		t.Fatalf("HeadObject: %v", err)
	}
	if head.VersionId != nil {
		t.Errorf("HeadObject version id = %q, want none", *head.VersionId)
	}
	if aws.ToString(head.ETag) != quotedMD5("first") || aws.ToInt64(head.ContentLength) != 5 {
		t.Errorf("HeadObject = %s %d bytes", aws.ToString(head.ETag), aws.ToInt64(head.ContentLength))
	}

	// (b) An overwrite replaces the object: the old ETag no longer matches.
	second := b.put(key, "second!")
	if second.VersionId != nil {
		t.Errorf("overwrite version id = %q, want none", *second.VersionId)
	}
	oldETag, newETag := aws.ToString(first.ETag), aws.ToString(second.ETag)
	if body, out, err := b.get(&s3.GetObjectInput{Key: aws.String(key)}); err != nil || body != "second!" || out.VersionId != nil {
		t.Errorf("GET after overwrite = %q, %v (version %v)", body, err, out)
	}
	_, _, err = b.get(&s3.GetObjectInput{Key: aws.String(key), IfMatch: aws.String(oldETag)})
	wantFailure(t, "GET If-Match old ETag", err, "PreconditionFailed", 412)
	_, err = b.head(&s3.HeadObjectInput{Key: aws.String(key), IfMatch: aws.String(oldETag)})
	wantFailure(t, "HEAD If-Match old ETag", err, "", 412)
	for _, etag := range []string{newETag, strings.Trim(newETag, `"`), "*", oldETag + ", " + newETag} {
		if body, _, err := b.get(&s3.GetObjectInput{Key: aws.String(key), IfMatch: aws.String(etag)}); err != nil || body != "second!" {
			t.Errorf("GET If-Match %s = %q, %v; want the object", etag, body, err)
		}
		if _, err := b.head(&s3.HeadObjectInput{Key: aws.String(key), IfMatch: aws.String(etag)}); err != nil {
			t.Errorf("HEAD If-Match %s: %v", etag, err)
		}
	}
	_, _, err = b.get(&s3.GetObjectInput{Key: aws.String(key), IfNoneMatch: aws.String(newETag)})
	wantFailure(t, "GET If-None-Match current ETag", err, "", 304)
	if body, _, err := b.get(&s3.GetObjectInput{Key: aws.String(key), IfNoneMatch: aws.String(oldETag)}); err != nil || body != "second!" {
		t.Errorf("GET If-None-Match old ETag = %q, %v; want the object", body, err)
	}
	past, future := time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	_, _, err = b.get(&s3.GetObjectInput{Key: aws.String(key), IfUnmodifiedSince: aws.Time(past)})
	wantFailure(t, "GET If-Unmodified-Since an hour ago", err, "PreconditionFailed", 412)
	// S3: If-Match true and If-Unmodified-Since false -> 200.
	if _, _, err := b.get(&s3.GetObjectInput{Key: aws.String(key), IfMatch: aws.String(newETag), IfUnmodifiedSince: aws.Time(past)}); err != nil {
		t.Errorf("GET If-Match current + If-Unmodified-Since past: %v, want 200", err)
	}
	_, _, err = b.get(&s3.GetObjectInput{Key: aws.String(key), IfModifiedSince: aws.Time(future)})
	wantFailure(t, "GET If-Modified-Since in an hour", err, "", 304)
	// S3: If-None-Match false and If-Modified-Since true -> 304; here
	// If-None-Match true wins over If-Modified-Since false -> 200.
	if _, _, err := b.get(&s3.GetObjectInput{Key: aws.String(key), IfNoneMatch: aws.String(oldETag), IfModifiedSince: aws.Time(future)}); err != nil {
		t.Errorf("GET If-None-Match old + If-Modified-Since future: %v, want 200", err)
	}
	_, _, err = b.get(&s3.GetObjectInput{Key: aws.String(key), IfNoneMatch: aws.String(newETag), IfModifiedSince: aws.Time(past)})
	wantFailure(t, "GET If-None-Match current + If-Modified-Since past", err, "", 304)

	// (d) Version ids: "null" names the object, anything else is invalid.
	for _, id := range []string{"3HL4kqtJlcpXroDTDmJ.rmSpXd3dIbrHY", "made-up"} {
		_, _, err = b.get(&s3.GetObjectInput{Key: aws.String(key), VersionId: aws.String(id)})
		wantFailure(t, "GET version "+id, err, "InvalidArgument", 400)
		_, err = b.head(&s3.HeadObjectInput{Key: aws.String(key), VersionId: aws.String(id)})
		wantFailure(t, "HEAD version "+id, err, "", 400)
	}
	if body, _, err := b.get(&s3.GetObjectInput{Key: aws.String(key), VersionId: aws.String("null")}); err != nil || body != "second!" {
		t.Errorf("GET version null = %q, %v; want the object", body, err)
	}
	if _, err := b.head(&s3.HeadObjectInput{Key: aws.String(key), VersionId: aws.String("null")}); err != nil {
		t.Errorf("HEAD version null: %v", err)
	}
	versions, err := client.ListObjectVersions(context.Background(), &s3.ListObjectVersionsInput{Bucket: aws.String(name)})
	if err != nil || len(versions.Versions) != 1 || aws.ToString(versions.Versions[0].VersionId) != "null" {
		t.Errorf("ListObjectVersions = %+v, %v; want one version \"null\"", versions, err)
	}

	// (c) A delete removes the object.
	if _, err := client.DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: aws.String(name), Key: aws.String(key)}); err != nil {
		t.Fatalf("DeleteObject: %v", err)
	}
	_, _, err = b.get(&s3.GetObjectInput{Key: aws.String(key)})
	var noKey *types.NoSuchKey
	if !errors.As(err, &noKey) {
		t.Errorf("GET after delete: %v, want NoSuchKey", err)
	}
	_, err = b.head(&s3.HeadObjectInput{Key: aws.String(key)})
	var notFound *types.NotFound
	if !errors.As(err, &notFound) {
		t.Errorf("HEAD after delete: %v, want NotFound", err)
	}
	_, _, err = b.get(&s3.GetObjectInput{Key: aws.String(key), IfMatch: aws.String(newETag)})
	wantFailure(t, "GET If-Match after delete", err, "NoSuchKey", 404)
}

func TestVersionedBucketBehavesLikeS3(t *testing.T) {
	client, name := bucketFixture(t, true)
	b := s3Bucket{t, client, name}
	const key = "k.jpg"

	v, err := client.GetBucketVersioning(context.Background(), &s3.GetBucketVersioningInput{Bucket: aws.String(name)})
	if err != nil || v.Status != types.BucketVersioningStatusEnabled {
		t.Errorf("GetBucketVersioning = %q, %v; want Enabled", v.Status, err)
	}
	first, second := b.put(key, "first"), b.put(key, "second!")
	v1, v2 := aws.ToString(first.VersionId), aws.ToString(second.VersionId)
	if v1 == "" || v2 == "" || v1 == v2 {
		t.Fatalf("version ids %q, %q; want two distinct ids", v1, v2)
	}
	if aws.ToString(second.ETag) != quotedMD5("second!") {
		t.Errorf("ETag = %s, want %s", aws.ToString(second.ETag), quotedMD5("second!"))
	}

	// The old version stays readable by id, on GET and HEAD.
	if body, out, err := b.get(&s3.GetObjectInput{Key: aws.String(key), VersionId: aws.String(v1)}); err != nil || body != "first" || aws.ToString(out.VersionId) != v1 {
		t.Errorf("GET version %s = %q, %v", v1, body, err)
	}
	head, err := b.head(&s3.HeadObjectInput{Key: aws.String(key), VersionId: aws.String(v1)})
	if err != nil || aws.ToString(head.VersionId) != v1 || aws.ToString(head.ETag) != quotedMD5("first") || aws.ToInt64(head.ContentLength) != 5 {
		t.Errorf("HEAD version %s = %+v, %v; want the first version", v1, head, err)
	}
	if body, out, err := b.get(&s3.GetObjectInput{Key: aws.String(key)}); err != nil || body != "second!" || aws.ToString(out.VersionId) != v2 {
		t.Errorf("GET current = %q, %v", body, err)
	}
	// Conditions apply to the version asked for.
	if _, _, err := b.get(&s3.GetObjectInput{Key: aws.String(key), VersionId: aws.String(v1), IfMatch: first.ETag}); err != nil {
		t.Errorf("GET version %s If-Match its ETag: %v", v1, err)
	}
	_, _, err = b.get(&s3.GetObjectInput{Key: aws.String(key), VersionId: aws.String(v1), IfMatch: second.ETag})
	wantFailure(t, "GET old version If-Match current ETag", err, "PreconditionFailed", 412)
	_, _, err = b.get(&s3.GetObjectInput{Key: aws.String(key), IfMatch: first.ETag})
	wantFailure(t, "GET current If-Match old ETag", err, "PreconditionFailed", 412)

	// A version that never existed; "null" (no object was written before
	// versioning was enabled).
	for _, id := range []string{"3HL4kqtJlcpXroDTDmJ.rmSpXd3dIbrHY", "null"} {
		_, _, err = b.get(&s3.GetObjectInput{Key: aws.String(key), VersionId: aws.String(id)})
		wantFailure(t, "GET version "+id, err, "NoSuchVersion", 404)
		_, err = b.head(&s3.HeadObjectInput{Key: aws.String(key), VersionId: aws.String(id)})
		wantFailure(t, "HEAD version "+id, err, "", 404)
	}

	// A delete adds a delete marker: the key is gone, its versions are not.
	del, err := client.DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: aws.String(name), Key: aws.String(key)})
	if err != nil || !aws.ToBool(del.DeleteMarker) || aws.ToString(del.VersionId) == "" {
		t.Fatalf("DeleteObject = %+v, %v; want a delete marker", del, err)
	}
	_, _, err = b.get(&s3.GetObjectInput{Key: aws.String(key)})
	wantFailure(t, "GET after delete", err, "NoSuchKey", 404)
	_, err = b.head(&s3.HeadObjectInput{Key: aws.String(key)})
	wantFailure(t, "HEAD after delete", err, "NotFound", 404)
	if body, _, err := b.get(&s3.GetObjectInput{Key: aws.String(key), VersionId: aws.String(v2)}); err != nil || body != "second!" {
		t.Errorf("GET version %s after delete = %q, %v", v2, body, err)
	}
	_, _, err = b.get(&s3.GetObjectInput{Key: aws.String(key), VersionId: del.VersionId})
	wantFailure(t, "GET the delete marker's version", err, "MethodNotAllowed", 405)
	_, err = b.head(&s3.HeadObjectInput{Key: aws.String(key), VersionId: del.VersionId})
	wantFailure(t, "HEAD the delete marker's version", err, "", 405)

	// DELETE of the (absent) null version changes nothing.
	if _, err := client.DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: aws.String(name), Key: aws.String(key), VersionId: aws.String("null")}); err != nil {
		t.Errorf("DELETE version null: %v", err)
	}
	versions, err := client.ListObjectVersions(context.Background(), &s3.ListObjectVersionsInput{Bucket: aws.String(name)})
	if err != nil || len(versions.Versions) != 2 || len(versions.DeleteMarkers) != 1 {
		t.Errorf("ListObjectVersions = %d versions, %d markers, %v; want 2 and 1", len(versions.Versions), len(versions.DeleteMarkers), err)
	}
}
